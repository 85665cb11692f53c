"""Contract adapters of the sum protocols: the shuffle model's and secure aggregation's.

Releases are sums of users' values in [0, 1]; the inputs used are on the protocols'
grids, so a release's error is exactly the noise the protocol claims.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from contract_common import (
    ACCEPT,
    AUDIT_DELTA,
    AUDIT_EPS,
    AUDIT_N,
    REJECT,
    WRONG,
    Adapter,
    binned_chi2,
    eps_lower,
    exact_delta,
    lattice_pmf,
    refused,
    skellam_law,
    zcdp_epsilon,
)

from dpstudio.engine.calibration import analytic_gaussian_sigma
from dpstudio.engine.errors import EngineError, ParameterError, QueryError
from dpstudio.engine.rng import SimulationSource


def shuffle_protocol(info, **given):
    return info.build(**info.resolve(given), confidence=0.95)


def _blanket_sum_pmf(n: int, k: int, gamma: float) -> np.ndarray:
    """pmf of Σ messages of n users whose values round to 0: each sends 0, or with
    probability γ a uniform level of {0, …, k} (BBGN19's randomizer), by convolution."""
    one = np.full(k + 1, gamma / (k + 1))
    one[0] += 1 - gamma
    out, power = np.ones(1), one
    while n:
        if n & 1:
            out = np.convolve(out, power)
        power, n = np.convolve(power, power), n >> 1
    return out


def share_sum_law(noise, clients: int, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Support and pmf of the sum of ``clients`` shares of ``noise``, its standard
    deviation times ``scale``: Skellam shares sum to a Skellam (scipy's pmf); discrete
    Gaussian shares of σ_c ≥ 1 to N_Z(0, Σσ_c²) up to a relative e^{−2π²σ_c²}."""
    var = clients * noise.client_variance() * scale**2
    if noise.family == "skellam":
        return skellam_law(var)
    sigma = math.sqrt(var)
    return lattice_pmf("gaussian", sigma, int(12 * sigma) + 2)


def halved(noise):
    """The same shares with half the standard deviation."""
    per_client = noise.per_client / 4 if noise.family == "skellam" else noise.per_client / 2
    return dataclasses.replace(noise, per_client=per_client)


def _blanket_count_delta(n: int, gamma: float, eps: float) -> float:
    """Exact δ(ε) of the count of ones sent by n users of the k = 1 blanket when one
    user's value is 0 or 1 (the others' 0): what the shuffled messages reveal."""
    others = _blanket_sum_pmf(n - 1, 1, gamma)
    d = np.convolve(others, [1 - gamma / 2, gamma / 2])
    d2 = np.convolve(others, [gamma / 2, 1 - gamma / 2])
    return exact_delta(d, d2, eps)


class ShuffleSumAdapter(Adapter):
    """Sums by multi-message (cloak) or single-message (blanket) shuffle protocols.

    Releases are sums of users' values in [0, 1]; the inputs used are on the protocols'
    grids, so the release's error is exactly the noise the protocol claims.
    """

    def calibration(self, info):
        from dpstudio.engine.shuffle import cloak
        from dpstudio.engine.shuffle.summation import BlanketProtocol, CloakProtocol

        eps, delta = 1.0, 1e-6
        proto = shuffle_protocol(info, epsilon=eps, delta=delta)
        if isinstance(proto, CloakProtocol):
            # 2^6 levels keep scipy's Skellam pmf (slow) to a few thousand points.
            proto = shuffle_protocol(info, epsilon=eps, delta=delta, precision_bits=6)
            for n in (20, 5_000):
                params, noise = proto.parameters(n)
                plan = proto.plan(n)
                assert plan.epsilon == eps and plan.delta <= delta
                assert params.tv <= cloak.TV_SHARE * delta / (1 + math.exp(eps))
                # The shares of all n users sum to Skellam(n·v): its exact δ (scipy's
                # pmf) meets the noise's share of δ, and 1% less variance does not.
                k, pmf = skellam_law(n * noise.per_client)
                sens = proto.precision
                budget = (1 - cloak.TV_SHARE) * delta
                assert exact_delta(pmf[sens:], pmf[:-sens], eps) <= budget
                k, pmf = skellam_law(0.99 * n * noise.per_client)
                assert exact_delta(pmf[sens:], pmf[:-sens], eps) > budget
        elif isinstance(proto, BlanketProtocol):
            for n, k in ((2_000, 0), (300, 1)):
                proto = shuffle_protocol(info, epsilon=eps, delta=delta, precision=k)
                prm = proto.parameters(n)
                # BBGN19 Thm 3.1: γ = max(14k ln(2/δ)/((n−1)ε²), 27k/((n−1)ε)), rounded up
                # to a multiple of 2^-32.
                g = max(14 * prm.k * math.log(2 / delta) / ((n - 1) * eps**2),
                        27 * prm.k / ((n - 1) * eps))
                assert g <= prm.gamma < g + 2.0**-32
                if prm.k == 1:  # the exact privacy of the released count of ones
                    assert _blanket_count_delta(n, prm.gamma, eps) <= delta
        else:
            pytest.fail(f"no calibration check for shuffle protocol {info.name}")

    def distribution(self, info):
        from dpstudio.engine.shuffle.summation import BlanketProtocol, CloakProtocol

        src = SimulationSource(19)
        proto = shuffle_protocol(info, epsilon=1.0, delta=1e-3)
        if isinstance(proto, CloakProtocol):
            proto = shuffle_protocol(info, epsilon=1.0, delta=1e-3, precision_bits=4)
            n, runs = 4, 300
            errors = np.array([proto.run(np.zeros(n), (0, 1), src).value for _ in range(runs)])
            steps = np.rint(errors * proto.precision).astype(np.int64)
            noise = proto.parameters(n)[1]

            def law(scale):
                return share_sum_law(noise, n, scale)
        elif isinstance(proto, BlanketProtocol):
            n, runs = 300, 1_500
            prm = proto.parameters(n)
            values = np.array([proto.run(np.zeros(n), (0, 1), src).value for _ in range(runs)])
            # Debiasing undone: Σ messages = k·(value·(1 − γ) + γn/2).
            steps = np.rint(prm.k * (values * (1 - prm.gamma) + prm.gamma * n / 2)).astype(
                np.int64)

            def law(scale):  # the blanket's scale is its probability γ
                pmf = _blanket_sum_pmf(n, prm.k, min(prm.gamma * scale, 1.0))
                return np.arange(pmf.size), pmf
        else:
            pytest.fail(f"no distribution law for shuffle protocol {info.name}")
        assert binned_chi2(steps, *law(1.0), bins=10) > ACCEPT
        for factor in WRONG:
            assert binned_chi2(steps, *law(factor), bins=10) < REJECT, factor

    def audit(self, info):
        from dpstudio.engine.shuffle import blanket
        from dpstudio.engine.shuffle.summation import BlanketProtocol, CloakProtocol

        src = SimulationSource(23)
        proto = shuffle_protocol(info, epsilon=AUDIT_EPS, delta=AUDIT_DELTA)
        if isinstance(proto, CloakProtocol):
            # The analyzer's view sums to Σ values + Σ shares (exactly: the encoding is
            # a sum mod q, tested with the cloak); one user's value 0 or 1 (p steps).
            proto = shuffle_protocol(info, epsilon=AUDIT_EPS, delta=AUDIT_DELTA,
                                     precision_bits=4)
            n = 3
            noise = proto.parameters(n)[1]

            def view(shares, shift):
                return shift + shares.shares(n * AUDIT_N, src).reshape(AUDIT_N, n).sum(1)

            for shares, caught in ((noise, False), (halved(noise), True)):
                lower = eps_lower(view(shares, 0), view(shares, proto.precision), AUDIT_DELTA)
                assert (lower > AUDIT_EPS) is caught, caught
        elif isinstance(proto, BlanketProtocol):
            # The shuffled messages of k = 1 are their count of ones. BBGN19's bound is
            # loose: the exact ε of that count at the built γ is ~0.2 (claimed 1), and at
            # half the blanket still ~0.4, so no valid audit could catch half; the power
            # check takes a tenth, whose exact ε is ~3.8 (both checked here first).
            n, runs = 300, 20_000
            prm = shuffle_protocol(info, epsilon=AUDIT_EPS, delta=AUDIT_DELTA,
                                   precision=1).parameters(n)
            assert _blanket_count_delta(n, prm.gamma / 2, AUDIT_EPS) <= AUDIT_DELTA
            assert _blanket_count_delta(n, prm.gamma / 10, 3.0) > AUDIT_DELTA

            def view(p, first):
                u = np.zeros((runs, n))
                u[:, 0] = first
                return blanket.blanket_randomize(u.ravel(), p, src).reshape(runs, n).sum(1)

            for p, caught in ((prm, False), (dataclasses.replace(prm, gamma=prm.gamma / 10),
                                             True)):
                lower = eps_lower(view(p, 0.0), view(p, 1.0), AUDIT_DELTA)
                assert (lower > AUDIT_EPS) is caught, caught
        else:
            pytest.fail(f"no audit for shuffle protocol {info.name}")

    def bad_input(self, info):
        from dpstudio.engine.shuffle.summation import plan_shuffle_sum, run_shuffle_sum

        src = SimulationSource(0)
        proto = shuffle_protocol(info)
        refused(proto.run, np.ones(5_000), (1, 0), src, error=QueryError)
        refused(proto.run, np.ones(5_000), None, src, error=QueryError)
        refused(proto.plan, 1, error=EngineError)
        refused(run_shuffle_sum, np.ones(5_000), (0, 1), info.name, 1.0, 1e-6, src,
                query="median", error=QueryError)
        refused(plan_shuffle_sum, 5_000, (0, 1), info.name, 1.0, 0.0, error=ParameterError)
        refused(plan_shuffle_sum, 5_000, (0, 1), info.name, 1.0, 1e-6, confidence=1.0,
                error=ParameterError)
        refused(info.build, **info.resolve({}) | {"epsilon": 0.0}, error=ParameterError)


# ------------------------------------------------------------ secure-aggregation sum protocols


def secure_sum(info, **given):
    return info.build(**info.resolve(given), confidence=0.95)


def kls21_epsilon(sigma: float, clients: int, sens: int, delta: float) -> float:
    """KLS21 Thm 1 for the sum of ``clients`` shares N_Z(0, σ²), then zCDP → (ε, δ),
    written out again here."""
    k = np.arange(1, clients)
    tau = 10 * float(np.sum(np.exp(-2 * math.pi**2 * sigma**2 * k / (k + 1))))
    eps_t = min(math.sqrt(sens**2 / (clients * sigma**2) + tau / 2),
                sens / (math.sqrt(clients) * sigma) + tau)
    return zcdp_epsilon(eps_t**2 / 2, delta)


class SecureSumAdapter(Adapter):
    """Sums by secure aggregation with distributed noise (:mod:`~dpstudio.engine.distributed`).

    The guarantee is against a server colluding with ⌊γn⌋ clients: the shares of the
    honest clients sure to survive carry (ε, δ) alone, so the audits use those only.
    """

    def calibration(self, info):
        eps, delta = 1.0, 1e-6
        # 2^6 levels keep scipy's Skellam pmf (slow) to a few thousand points.
        mech = secure_sum(info, epsilon=eps, delta=delta, max_dropouts=2, precision_bits=6)
        for n in (10, 1_000):
            plan = mech.plan_noise(n)
            assert plan.corrupt >= mech.corrupt_fraction * n
            assert plan.honest == n - plan.corrupt - 2
            assert mech.plan(n).epsilon == pytest.approx(eps, rel=1e-9)
            assert mech.plan(n).delta <= delta
            noise, sens = plan.noise, mech.precision
            # No sum of shares needs less variance than the central Gaussian (Balle & Wang;
            # a lattice law this wide differs from it by far less than 1e-4).
            central = analytic_gaussian_sigma(sens, eps, delta)
            assert noise.total_variance(plan.honest) >= central**2 * (1 - 1e-4)
            if noise.family == "skellam":
                # The honest shares sum to Skellam(H·v): exact δ by scipy's pmf, tight.
                k, pmf = skellam_law(plan.honest * noise.per_client)
                assert exact_delta(pmf[sens:], pmf[:-sens], eps) <= delta
                k, pmf = skellam_law(0.99 * plan.honest * noise.per_client)
                assert exact_delta(pmf[sens:], pmf[:-sens], eps) > delta
            elif noise.family == "gaussian":
                assert kls21_epsilon(noise.per_client, plan.honest, sens, delta) <= eps * (
                    1 + 1e-6)
                assert kls21_epsilon(0.99 * noise.per_client, plan.honest, sens, delta) > eps
            else:
                pytest.fail(f"no calibration check for {noise.family} shares")

    def distribution(self, info):
        mech = secure_sum(info, epsilon=1.0, delta=1e-3, precision_bits=4)
        n, runs = 4, 300
        src = SimulationSource(29)
        values = np.array([mech.run(np.zeros(n), (0, 1), src).value for _ in range(runs)])
        steps = np.rint(values * mech.precision).astype(np.int64)
        noise = mech.plan_noise(n).noise
        # Every survivor's share reaches the sum (the colluders' too: only the server
        # subtracts them).
        assert binned_chi2(steps, *share_sum_law(noise, n), bins=10) > ACCEPT
        for factor in WRONG:
            assert binned_chi2(steps, *share_sum_law(noise, n, factor), bins=10) < REJECT

    def audit(self, info):
        mech = secure_sum(info, epsilon=AUDIT_EPS, delta=AUDIT_DELTA, precision_bits=4)
        plan = mech.plan_noise(10)
        h, src = plan.honest, SimulationSource(31)

        def view(noise, shift):
            # What the colluding server is left with: a value plus the honest shares.
            return shift + noise.shares(h * AUDIT_N, src).reshape(AUDIT_N, h).sum(1)

        for noise, caught in ((plan.noise, False), (halved(plan.noise), True)):
            lower = eps_lower(view(noise, 0), view(noise, mech.precision), AUDIT_DELTA)
            assert (lower > AUDIT_EPS) is caught, caught

    def bad_input(self, info):
        from dpstudio.engine.distributed.secure_sum import plan_secure_sum, run_secure_sum

        src = SimulationSource(0)
        run = run_secure_sum
        refused(run, np.ones(10), (2, 1), info.name, 1.0, 1e-6, src, error=QueryError)
        refused(run, np.ones(1), (0, 1), info.name, 1.0, 1e-6, src, error=QueryError)
        refused(run, np.ones(10), (0, 1), info.name, 1.0, 1e-6, src, query="median",
                error=QueryError)
        refused(run, np.ones(10), (0, 1), info.name, 1.0, 1e-6, src, max_dropouts=6,
                error=ParameterError)
        refused(run, np.ones(10), (0, 1), info.name, 1.0, 1e-6, src, prf="rc4",
                error=ParameterError)
        refused(plan_secure_sum, 10, (0, 1), info.name, 1.0, 0.0, error=ParameterError)
        refused(info.resolve, {"corrupt_fraction": 0.5}, error=ParameterError)
