"""A local frequency oracle shuffled (issue 14): K-RR and its kin in the shuffle model.

The claimed central (ε, δ) is checked on the exact law of what the analyzer sees — the
counts of n shuffled K-RR reports, a sum of multinomials computed here cell by cell — on
neighbouring datasets differing in one user; the same computation catches a release that
claims an ε₀ chosen for many more users. The counts are unbiased within the tolerance of
their exact variance, and a wrong debiasing is rejected by the same test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.shuffle.amplification import shuffle_epsilon
from dpstudio.engine.shuffle.shuffled_local import (
    SHUFFLED_RANDOMIZERS,
    plan_shuffled_local,
    run_shuffled_local,
    shuffled_local_epsilon,
)

N, DELTA = 50, 1e-3
CELLS = 3  # two declared categories and "other or missing"


def _krr_probs(eps0: float, k: int) -> tuple[float, float]:
    e = math.exp(eps0)
    return e / (e + k - 1), 1.0 / (e + k - 1)


def _counts_pmf(eps0: float, others: tuple[int, int, int], own: int) -> np.ndarray:
    """Exact pmf of the 3-cell counts of shuffled K-RR reports: users holding cell j
    (``others[j]`` of them) plus one user holding ``own``; a (n+1)² array over
    (count of cell 0, count of cell 1), cell 2 the rest."""
    p, q = _krr_probs(eps0, CELLS)
    n = sum(others) + 1
    pmf = np.zeros((n + 1, n + 1))
    pmf[0, 0] = 1.0
    holders = list(others)
    holders[own] += 1
    for cell, m in enumerate(holders):
        if m == 0:
            continue
        probs = [q] * CELLS
        probs[cell] = p
        # m users of this cell: a multinomial over the three cells, as a 2-d pmf.
        a, b = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
        ok = a + b <= m
        g = np.zeros((m + 1, m + 1))
        g[ok] = stats.multinomial.pmf(np.stack([a[ok], b[ok], m - a[ok] - b[ok]], 1), m,
                                      probs)
        from scipy.signal import fftconvolve

        pmf = np.clip(fftconvolve(pmf, g)[: n + 1, : n + 1], 0.0, None)
    return pmf / pmf.sum()


def _delta(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """Exact δ(ε) between two laws, the worse direction."""
    return max(float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0))),
               float(np.sum(np.maximum(q - math.exp(eps) * p, 0.0))))


def _pairs(eps0: float):
    # Worst candidates: the others all in one cell (in the changed user's old cell, new
    # cell, or a third one), or spread.
    for others in ((N - 1, 0, 0), (0, N - 1, 0), (0, 0, N - 1), (17, 16, 16)):
        yield _counts_pmf(eps0, others, 0), _counts_pmf(eps0, others, 1)


def test_the_exact_law_of_the_shuffled_counts_meets_the_claimed_epsilon():
    eps0, central = shuffled_local_epsilon(1.0, N, DELTA)
    assert eps0 > 1.3 and central <= 1.0  # amplified: ε₀ ≈ 1.43 for a central 1
    for p, q in _pairs(eps0):
        assert _delta(p, q, central) <= DELTA
    # Power: users at the ε₀ FMT21 allows for 5,000 users, claimed for 50, is caught.
    big, _ = shuffled_local_epsilon(1.0, 5_000, DELTA)
    assert big > 4.5
    assert max(_delta(p, q, 1.0) for p, q in _pairs(big)) > 10 * DELTA


def test_the_engine_run_is_the_krr_whose_law_was_checked():
    """The counts a run releases are K-RR's at the ε₀ it states: each cell's support count
    (debiasing undone) is Bin(n, p) for its holders' cell and Bin(n, q) for the others, and
    the same χ² rejects the law at 1.5× ε₀."""
    labels = ["a", "b"]
    values = np.array(["a"] * N, dtype=object)
    src = SimulationSource(3)
    runs = [run_shuffled_local(values, "krr", 1.0, DELTA, categories=labels, source=src)
            for _ in range(2_000)]
    eps0 = runs[0].epsilon_local
    p, q = _krr_probs(eps0, CELLS)
    a = np.rint(np.array([r.unbiased["a"] for r in runs]) * (p - q) + N * q).astype(int)
    for e, ok in ((eps0, True), (1.5 * eps0, False), (eps0 / 1.5, False)):
        pe = _krr_probs(e, CELLS)[0]
        observed = np.bincount(a, minlength=N + 1)
        expected = stats.binom.pmf(np.arange(N + 1), N, pe) * len(runs)
        keep = expected > 5
        chi = float(np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep]))
        pval = stats.chi2.sf(chi, int(keep.sum()) - 1)
        assert bool(pval > 1e-4) is ok, (e, pval)


@pytest.mark.parametrize("name", SHUFFLED_RANDOMIZERS)
def test_the_counts_are_unbiased_and_a_wrong_debiasing_is_rejected(name):
    labels = ["a", "b", "c"]
    values = np.array(["a"] * 150 + ["b"] * 90 + [None] * 60, dtype=object)
    truth = np.array([150.0, 90.0, 0.0, 60.0])  # "other or missing" last
    src, runs = SimulationSource(11), 300
    out = [run_shuffled_local(values, name, 1.0, 1e-6, categories=labels, source=src)
           for _ in range(runs)]
    cells = list(out[0].unbiased)
    est = np.array([[r.unbiased[c] for c in cells] for r in out])
    info, eps0 = REGISTRY.get(name), out[0].epsilon_local
    oracle = info.build(**info.resolve({"epsilon": eps0}), k=4)
    se = np.sqrt(oracle.variance(values.size, truth) / runs)
    assert np.all(np.abs(est.mean(0) - truth) < 4 * se)
    # Debiased with the q of 1.25 ε₀ instead: biased by n(q − q')/(p' − q'), caught.
    wrong = info.build(**info.resolve({"epsilon": 1.25 * eps0}), k=4)
    support = est * (oracle.p - oracle.q) + values.size * oracle.q
    bad = (support - values.size * wrong.q) / (wrong.p - wrong.q)
    assert np.any(np.abs(bad.mean(0) - truth) > 4 * se)


def test_the_result_states_both_epsilons_and_keeps_no_report():
    values = np.array(["x", "y", "z"] * 1_000, dtype=object)
    r = run_shuffled_local(values, "krr", 0.5, 1e-6, categories=["x", "y", "z"],
                           source=SimulationSource(5))
    assert r.n == 3_000 and r.trust_model == "shuffle" and r.delta == 1e-6
    # FMT21 at the stated ε₀ is the stated central ε, at most the target.
    assert shuffle_epsilon(r.epsilon_local, 3_000, 1e-6)[0] == r.epsilon <= 0.5
    assert r.epsilon_local > 1.5  # each user at ε₀ ≈ 1.8 for a central 0.5
    assert r.details["epsilon_local"] == r.epsilon_local
    loss = r.loss_description()
    assert (loss.mechanism, loss.epsilon, loss.delta) == ("approx", r.epsilon, 1e-6)
    assert "reports" not in r.to_dict() and "oracle" not in r.to_dict()
    assert r.notes[0].startswith(f"each user's local ε₀ = {r.epsilon_local:.4g}")
    plan = plan_shuffled_local(3_000, "krr", 0.5, 1e-6, cells=4)
    assert (plan.epsilon, plan.epsilon_local) == (r.epsilon, r.epsilon_local)


def test_the_registry_lists_exactly_the_randomizers_that_run_shuffled():
    shuffled = {i.name for i in REGISTRY if "shuffle" in i.trust_models
                and "local" in i.trust_models}
    assert shuffled == set(SHUFFLED_RANDOMIZERS)
    assert all("histogram" in REGISTRY.get(n).queries for n in shuffled)


def test_bad_input_is_refused_in_one_line():
    v = np.array(["a", "b"] * 10, dtype=object)
    src = SimulationSource(0)
    for call, err in (
            (lambda: run_shuffled_local(v, "hadamard", 1.0, 1e-6, categories=["a", "b"],
                                        source=src), QueryError),
            (lambda: run_shuffled_local(v, "krr", 1.0, 0.0, categories=["a", "b"],
                                        source=src), ParameterError),
            (lambda: run_shuffled_local(v, "krr", 1.0, 1e-6, categories=None, source=src),
             QueryError),
            (lambda: plan_shuffled_local(1, "krr", 1.0, 1e-6, cells=3), QueryError)):
        with pytest.raises(err) as info:
            call()
        assert "\n" not in str(info.value)


# ------------------------------------------- the blanket charged the smaller of two bounds


def _blanket_count_laws(n: int, gamma: float, ones: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact laws of the count of 1-messages of the k = 1 blanket (the multiset's whole
    content) when ``ones`` of the other n − 1 users hold 1 and the rest 0, and the
    differing user holds 0 (first) or 1 (second)."""
    low, high = gamma / 2, 1 - gamma / 2  # P(message = 1) for a value 0 or 1
    others = np.convolve(stats.binom.pmf(np.arange(ones + 1), ones, high),
                         stats.binom.pmf(np.arange(n - ones), n - 1 - ones, low))
    return (np.convolve(others, [1 - low, low]), np.convolve(others, [1 - high, high]))


@pytest.mark.parametrize(("n", "eps", "delta"), [(300, 1.0, 1e-6), (2_000, 0.5, 1e-6),
                                                 (1_000, 1.0, 1e-4)])
def test_the_blanket_is_charged_the_smaller_bound_and_its_exact_law_meets_it(n, eps, delta):
    from dpstudio.engine.shuffle.blanket import blanket_local_epsilon
    from dpstudio.engine.shuffle.summation import BlanketProtocol

    proto = BlanketProtocol(eps, delta, precision=1)
    prm, plan = proto.parameters(n), proto.plan(n)
    eps0 = math.log((1 - prm.gamma / 2) / (prm.gamma / 2))  # binary RR with blanket γ
    assert blanket_local_epsilon(1, prm.gamma) == pytest.approx(eps0, rel=1e-12)
    fmt21 = shuffle_epsilon(eps0, n, delta)[0]
    assert plan.epsilon == min(eps, fmt21) < eps and plan.details["bound"] == "fmt21"
    assert plan.delta == delta
    # The exact δ of the count at the charged ε, for several splits of the others.
    for ones in (0, n // 2, n - 1):
        p, q = _blanket_count_laws(n, prm.gamma, ones)
        assert _delta(p, q, plan.epsilon) <= delta
    # Power: FMT21 for 100 times the users would claim an ε the exact law refutes.
    loose = shuffle_epsilon(eps0, 100 * n, delta)[0]
    p, q = _blanket_count_laws(n, prm.gamma, 0)
    assert _delta(p, q, loose) > delta


def test_the_blanket_noise_is_still_calibrated_for_the_bbgn_epsilon():
    """Only the claim falls: γ (what is drawn) is BBGN19 Thm 3.1's for the ε asked for."""
    from dpstudio.engine.shuffle.summation import BlanketProtocol

    n, eps, delta = 3_000, 0.5, 1e-6
    proto = BlanketProtocol(eps, delta)
    prm, plan = proto.parameters(n), proto.plan(n)
    g = max(14 * prm.k * math.log(2 / delta) / ((n - 1) * eps**2),
            27 * prm.k / ((n - 1) * eps))
    assert g <= prm.gamma < g + 2.0**-32
    assert plan.details["calibrated_epsilon"] == eps
    assert 0.25 < plan.epsilon < 0.27  # FMT21 at ε₀ ≈ 1.85 (the brief's example: 0.262)
