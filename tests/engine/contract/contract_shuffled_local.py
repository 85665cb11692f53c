"""Contract adapter of the local frequency oracles run shuffled (a histogram in the shuffle
model, :mod:`dpstudio.engine.shuffle.shuffled_local`).

The entry's ε is the central target; each user runs the oracle at the ε₀ that FMT21's
amplification allows. Calibration re-derives FMT21's δ(ε) here by its definition (a sum
over the clone count of hockey-stick divergences, with scipy's binomial laws); the
distribution checks each release's support count of a value against Bin(n, p(ε₀)); the
audit looks at the multiset of the reports' support patterns over a worst pair.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from contract_common import (
    ACCEPT,
    AUDIT_DELTA,
    AUDIT_EPS,
    REJECT,
    WRONG,
    Adapter,
    binned_chi2,
    eps_lower,
    refused,
)

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import SimulationSource


def fmt21_delta_here(eps: float, eps0: float, n: int) -> float:
    """FMT21 (Thm 3.2's reduction) δ(ε) for n shuffled ε₀-LDP reports, from its definition:
    C ~ Bin(n−1, e^{−ε₀}), A ~ Bin(C, ½), Δ ~ Bern(e^{ε₀}/(e^{ε₀}+1)); P = A + Δ and
    Q = A + 1 − Δ given C; δ = Σ_c P[C = c]·Σ_a (P_c(a) − e^ε Q_c(a))₊ (every c)."""
    from scipy import stats

    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    c = np.arange(n)
    pc = stats.binom.pmf(c, n - 1, math.exp(-eps0))
    total = 0.0
    for cc, w in zip(c, pc, strict=True):
        if w < 1e-300:
            continue
        a = stats.binom.pmf(np.arange(cc + 1), cc, 0.5)
        p = np.zeros(cc + 2)
        q = np.zeros(cc + 2)
        p[:-1] += a * (1 - alpha)
        p[1:] += a * alpha
        q[:-1] += a * alpha
        q[1:] += a * (1 - alpha)
        total += w * float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)))
    return total


def _oracle(info, eps0: float, cells: int = 4):
    return info.build(**info.resolve({"epsilon": eps0}), k=cells)


class ShuffledLocalAdapter(Adapter):
    """A local frequency oracle shuffled: central (ε, δ) by FMT21 at each user's ε₀."""

    def calibration(self, info):
        from dpstudio.engine.shuffle.shuffled_local import (
            plan_shuffled_local,
            shuffled_local_epsilon,
        )

        for eps, n, delta in ((1.0, 200, 1e-6), (0.5, 400, 1e-5)):
            eps0, central = shuffled_local_epsilon(eps, n, delta)
            assert eps < eps0 and central <= eps
            # The central ε holds at ε₀ (independently), and 2% more ε₀ would not.
            assert fmt21_delta_here(central, eps0, n) <= delta * (1 + 1e-6)
            assert fmt21_delta_here(eps, 1.02 * eps0, n) > delta
            plan = plan_shuffled_local(n, info.name, eps, delta, cells=4)
            assert (plan.epsilon, plan.delta, plan.epsilon_local) == (central, delta, eps0)
            # Var* of the oracle at ε₀ (Wang et al.), through its p and q.
            o = _oracle(info, eps0)
            assert plan.stderr == pytest.approx(
                math.sqrt(n * o.q * (1 - o.q)) / (o.p - o.q), rel=1e-9)

    def distribution(self, info):
        from dpstudio.engine.shuffle.shuffled_local import run_shuffled_local

        n, runs, src = 60, 1_500, SimulationSource(37)
        labels = ["a", "b", "c"]
        values = np.array(["a"] * n, dtype=object)
        out = [run_shuffled_local(values, info.name, 1.0, 1e-6, categories=labels,
                                  source=src) for _ in range(runs)]
        eps0 = out[0].epsilon_local
        o = _oracle(info, eps0)
        # Debiasing undone: the support count of "b", held by no one, is Bin(n, q) at the
        # claimed ε₀ (q depends on ε₀ for every oracle; OUE's p = 1/2 does not).
        support = np.rint(np.array([r.unbiased["b"] for r in out]) * (o.p - o.q)
                          + n * o.q).astype(np.int64)
        from scipy import stats

        def law(e):
            w = _oracle(info, e)
            k = np.arange(n + 1)
            return k, stats.binom.pmf(k, n, w.q)

        assert binned_chi2(support, *law(eps0), bins=10) > ACCEPT
        for factor in WRONG:
            assert binned_chi2(support, *law(eps0 * factor), bins=10) < REJECT, factor

    def audit(self, info):
        from dpstudio.engine.shuffle.shuffled_local import shuffled_local_epsilon

        # n users, all at 0 but the first, at 0 (D) or 1 (D'); the analyzer's multiset,
        # reduced to how many reports show each support pattern over {0, 1}.
        n, runs, src = 10, 100_000, SimulationSource(41)

        def view(eps0, first):
            o = _oracle(info, eps0)
            x = np.zeros((runs, n), dtype=np.int64)
            x[:, 0] = first
            keys = np.asarray(o.report_keys(o.randomize(x.ravel(), src), (0, 1)),
                              dtype=np.int64).reshape(runs, n)
            counts = np.stack([(keys == b).sum(1) for b in range(4)], axis=1)
            return counts @ np.array([1, n + 1, (n + 1) ** 2, (n + 1) ** 3])

        eps0, _ = shuffled_local_epsilon(AUDIT_EPS, n, AUDIT_DELTA)
        assert eps_lower(view(eps0, 0), view(eps0, 1), AUDIT_DELTA,
                         categorical=True) <= AUDIT_EPS
        # Power: users at the ε₀ that 10,000 users would allow, claimed for these 10.
        big, _ = shuffled_local_epsilon(AUDIT_EPS, 10_000, AUDIT_DELTA)
        assert eps_lower(view(big, 0), view(big, 1), AUDIT_DELTA,
                         categorical=True) > AUDIT_EPS

    def bad_input(self, info):
        from dpstudio.engine.shuffle.shuffled_local import (
            plan_shuffled_local,
            run_shuffled_local,
        )

        src = SimulationSource(0)
        v = np.array(["a", "b"] * 50, dtype=object)
        refused(run_shuffled_local, v, info.name, 1.0, 0.0, categories=["a", "b"],
                source=src, error=ParameterError)
        refused(run_shuffled_local, v, info.name, 0.0, 1e-6, categories=["a", "b"],
                source=src, error=ParameterError)
        refused(run_shuffled_local, v, info.name, 1.0, 1e-6, categories=None, source=src,
                error=QueryError)
        refused(run_shuffled_local, v[:1], info.name, 1.0, 1e-6, categories=["a", "b"],
                source=src, error=QueryError)
        refused(plan_shuffled_local, 100, "laplace", 1.0, 1e-6, cells=3, error=QueryError)
