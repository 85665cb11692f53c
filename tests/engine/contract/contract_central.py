"""Contract adapters of the central model: additive noise, selection, and models."""

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
    gaussian_delta,
    lattice_pmf,
    refused,
    zcdp_epsilon,
)
from scipy import stats

from dpstudio.engine.calibration import analytic_gaussian_sigma, classical_gaussian_sigma
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import InsecureSourceError, SimulationSource


def additive_noise(info, sens=1.0, eps=1.0, delta=1e-6, coords=1, **params):
    """The entry's noise for a statistic of sensitivity ``sens`` (as a query calibrates it)."""
    given = {"epsilon": eps, **params} | ({"delta": delta} if info.needs_delta else {})
    fam = info.build(**info.resolve(given))
    grid = fam.grid(sens, eps, delta, coords)
    return fam.calibrate(round(sens / grid), grid, eps, delta, coords)


class AdditiveAdapter(Adapter):
    """Integer noise added to an integer statistic (:mod:`dpstudio.engine.additive`)."""

    # (Δ, ε, δ): whole-number sensitivities, so every grid represents them exactly.
    TABLE = ((1.0, 1.0, 1e-6), (4.0, 0.5, 1e-5), (100.0, 0.1, 1e-8), (2.0, 3.0, 1e-7))

    def calibration(self, info):
        for sens, eps, delta in self.TABLE:
            noise = additive_noise(info, sens, eps, delta)
            assert noise.sensitivity_value == sens and noise.epsilon == eps
            if noise.family == "laplace":
                assert noise.noise_scale == pytest.approx(sens / eps, rel=1e-12)
            else:
                ref = analytic_gaussian_sigma(sens, eps, delta)
                # The exact discrete δ may ask for a hair more noise, never less.
                assert ref * (1 - 1e-9) <= noise.noise_scale <= ref * (
                    1.02 if noise.grid >= 1 else 1.001)
                # Independent check: the continuous Gaussian at this σ meets (ε, δ).
                assert gaussian_delta(noise.noise_scale, sens, eps) <= delta * (1 + 1e-6)
        if info.needs_delta:
            noise = additive_noise(info, 4.0, 0.5, 1e-5, calibration="classical")
            ref = classical_gaussian_sigma(4.0, 0.5, 1e-5)
            assert ref * (1 - 1e-9) <= noise.noise_scale <= ref * 1.02
            refused(additive_noise, info, 1.0, 2.0, 1e-5, calibration="classical",
                    error=ParameterError)

    def distribution(self, info):
        for eps in (0.5, 2.0):
            noise = additive_noise(info, 1.0, eps)
            samples = noise.sample(200_000, SimulationSource(7))
            assert samples.dtype == np.int64
            k, pmf = lattice_pmf(noise.family, noise.scale)
            assert binned_chi2(samples, k, pmf) > ACCEPT
            for factor in (*WRONG, 1.3, 0.7):  # 2·10^5 draws see 30% off too
                k, pmf = lattice_pmf(noise.family, noise.scale * factor)
                assert binned_chi2(samples, k, pmf) < REJECT, factor
            # The variance the release reports is the sample's (5 standard errors).
            var_steps = noise.variance / noise.grid**2
            se = var_steps * math.sqrt(2.0 / samples.size) * 2  # kurtosis ≤ 6 here
            assert abs(samples.astype(float).var() - var_steps) < 5 * se

    def audit(self, info):
        delta = AUDIT_DELTA if info.needs_delta else 0.0
        noise = additive_noise(info, 1.0, AUDIT_EPS, delta or 1e-6)
        src = SimulationSource(11)
        d = noise.sample(AUDIT_N, src)
        assert eps_lower(d, noise.sensitivity + noise.sample(AUDIT_N, src), delta) <= AUDIT_EPS
        weak = dataclasses.replace(noise, scale=noise.scale / 2)
        d = weak.sample(AUDIT_N, src)
        assert eps_lower(d, weak.sensitivity + weak.sample(AUDIT_N, src), delta) > AUDIT_EPS

    def bad_input(self, info):
        fam = info.build(**info.resolve({}))
        refused(fam.calibrate, 0, 1.0, 1.0, 1e-6, error=ParameterError)
        refused(fam.calibrate, 1, 1.0, float("nan"), 1e-6, error=ParameterError)
        if info.needs_delta:
            for delta in (0.0, 1.0, -1e-9, 1.5):
                refused(fam.calibrate, 1, 1.0, 1.0, delta)


# --------------------------------------------------------------- selection (central model)

SCORES = np.array([0.0, -1.0, -2.0, -0.5, -3.0])


def selector(info, eps=1.0, sens=1.0):
    return info.build(**info.resolve({"epsilon": eps}), sensitivity=sens)


class SelectionAdapter(Adapter):
    """One candidate picked by a noisy score (:mod:`dpstudio.engine.selection`)."""

    def calibration(self, info):
        from dpstudio.engine.selection import ExponentialMechanism, PermuteAndFlip

        mech = selector(info, eps=1.2)
        probs = mech.probabilities(SCORES)
        assert probs.sum() == pytest.approx(1.0, abs=1e-12)
        if isinstance(mech, ExponentialMechanism):
            w = np.exp(1.2 * SCORES / 2)
            np.testing.assert_allclose(probs, w / w.sum(), rtol=1e-12)
        elif isinstance(mech, PermuteAndFlip):
            # Two candidates with gap 1: the worse wins only when drawn first and accepted.
            two = mech.probabilities(np.array([0.0, -1.0]))
            assert two[1] == pytest.approx(math.exp(-1.2 / 2) / 2, rel=1e-12)
        else:
            pytest.fail(f"no closed form for selection mechanism {info.name}: add one to "
                        "the selection adapter")

    def distribution(self, info):
        mech = selector(info, eps=1.0)
        picks = mech.select(SCORES, SimulationSource(3), size=200_000)
        observed = np.bincount(picks, minlength=SCORES.size)
        assert stats.chisquare(observed, mech.probabilities(SCORES) * picks.size
                               ).pvalue > ACCEPT
        for factor in WRONG:  # the score's scale 2Δu/ε, 1.5× off
            wrong = selector(info, eps=1.0 / factor).probabilities(SCORES) * picks.size
            assert stats.chisquare(observed, wrong).pvalue < REJECT, factor

    def audit(self, info):
        # Worst pair: one record lowers the best score by Δu and raises every other by Δu.
        neighbour = SCORES + 1.0
        neighbour[0] -= 2.0
        src = SimulationSource(5)

        def lower_bound(mech):
            a = mech.select(SCORES, src, size=AUDIT_N)
            b = mech.select(neighbour, src, size=AUDIT_N)
            return eps_lower(a, b, categorical=True)

        assert lower_bound(selector(info, eps=AUDIT_EPS)) <= AUDIT_EPS
        # Half the noise: the scores' scale halved, i.e. 2ε spent while ε is claimed.
        assert lower_bound(selector(info, eps=2 * AUDIT_EPS)) > AUDIT_EPS

    def bad_input(self, info):
        mech = selector(info)
        for scores in (np.array([]), np.array([0.0, np.nan]), np.ones((2, 2))):
            refused(mech.select, scores, SimulationSource(0), error=ParameterError)
        refused(info.build, epsilon=1.0, candidates=10, sensitivity=0.0, error=ParameterError)


# ------------------------------------------------------------------- model (central model)

MODEL_BOUNDS = {"a": (0.0, 10.0), "b": (-5.0, 5.0)}


def model_data(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0, 10, n), rng.uniform(-5, 5, n)
    score = (a - 5) + b + 2.0 * rng.normal(size=n)
    return {"a": a, "b": b, "y": np.where(score > 0, 1, -1)}


def model_fit(columns, lam):
    from dpstudio.engine.learning import design_matrix, fit_logistic

    X = design_matrix(columns, ["a", "b"], MODEL_BOUNDS)
    return fit_logistic(X, columns["y"].astype(float), lam).theta


class ModelAdapter(Adapter):
    """A fitted model released with lattice noise (:mod:`dpstudio.engine.learning`).

    The built object (:class:`~dpstudio.engine.learning.erm.LogisticERM`) calibrates an
    :class:`~dpstudio.engine.learning.erm.OutputPerturbation` for a dimension and n.
    """

    P = 3  # two features and the intercept

    def _plan(self, info, n, lam, eps, delta):
        return info.build(**info.resolve({"epsilon": eps, "delta": delta, "lambda": lam})
                          ).calibrate(self.P, n)

    def calibration(self, info):
        for n, lam, eps, delta in ((40, 0.05, 1.0, 0.0), (200, 0.01, 0.5, 0.0),
                                   (40, 0.05, 1.0, 1e-6), (500, 0.1, 2.0, 1e-5)):
            plan = self._plan(info, n, lam, eps, delta)
            # Δ₂ = 2L/(nλ) (Chaudhuri et al. 2011, L = 1) plus the solver's certified
            # 2·g_tol/λ with g_tol = max(min(1e-9, 1e-4/n), 1e-12).
            g_tol = max(min(1e-9, 1e-4 / n), 1e-12)
            d2 = 2 / (n * lam) + 2 * g_tol / lam
            assert plan.sensitivity_l2 == pytest.approx(d2, rel=1e-9)
            assert plan.sensitivity_l1 == pytest.approx(math.sqrt(self.P) * d2, rel=1e-9)
            assert plan.epsilon == eps and plan.delta == delta
            # Snapping to the lattice costs at most (p + 1)·2^-15 of the noise.
            slack = 1 + (self.P + 1) * 2.0**-15 + 1e-9
            if delta == 0:
                assert plan.family == "laplace"
                ref = plan.sensitivity_l1 / eps
                assert ref <= plan.noise_scale <= ref * slack
            else:
                assert plan.family == "gaussian"
                rho = plan.noise.sensitivity**2 / (2 * plan.noise.scale**2)
                assert zcdp_epsilon(rho, delta) <= eps * (1 + 1e-9)
                assert zcdp_epsilon(rho * 1.01, delta) > eps  # tight: no more noise than needed
                assert plan.noise.sensitivity * plan.grid >= plan.sensitivity_l2
        # The sensitivity holds on a real worst-looking neighbour: a corner, label flipped.
        n, lam = 40, 0.05
        cols = model_data(n, seed=n)
        theta = model_fit(cols, lam)
        for i in range(4):
            other = {k: v.copy() for k, v in cols.items()}
            other["a"][i], other["b"][i] = (0.0, -5.0) if cols["y"][i] > 0 else (10.0, 5.0)
            other["y"][i] = -cols["y"][i]
            shift = float(np.linalg.norm(model_fit(other, lam) - theta))
            assert 0 < shift <= self._plan(info, n, lam, 1.0, 0.0).sensitivity_l2

    def _released_noise(self, plan, count: int, seed: int) -> np.ndarray:
        """The noise the release adds, in grid steps: released θ on a lattice, minus θ."""
        from dpstudio.engine.learning.output_perturbation import perturb, snap

        theta = np.tile(model_fit(model_data(200, seed=1), 0.01), count // self.P + 1)
        out = perturb(theta, plan, SimulationSource(seed))
        steps = out / plan.grid
        assert np.array_equal(steps, np.rint(steps))  # on the lattice
        return np.rint(steps).astype(np.int64) - snap(theta, plan.grid)

    def distribution(self, info):
        for delta in (0.0, 1e-6):
            plan = self._plan(info, 200, 0.01, 1.0, delta)
            noise = self._released_noise(plan, 120_000, seed=9)
            k, pmf = lattice_pmf(plan.family, plan.noise.scale)
            assert binned_chi2(noise, k, pmf) > ACCEPT
            for factor in WRONG:
                k, pmf = lattice_pmf(plan.family, plan.noise.scale * factor)
                assert binned_chi2(noise, k, pmf) < REJECT, factor

    def audit(self, info):
        from dpstudio.engine.learning.output_perturbation import perturb

        for delta in (0.0, AUDIT_DELTA):
            plan = self._plan(info, 200, 0.01, AUDIT_EPS, delta)
            # Worst pair on the lattice: the whole sensitivity S on the first coordinate
            # (ℓ₁ for Laplace, ℓ₂ for Gaussian), as two neighbours' minimizers may differ.
            theta = np.zeros(AUDIT_N)
            shifted = theta + plan.noise.sensitivity * plan.grid
            src = SimulationSource(13)
            for weak, verdict in ((plan, False), (self._halved(plan), True)):
                a, b = perturb(theta, weak, src), perturb(shifted, weak, src)
                assert (eps_lower(a, b, delta) > AUDIT_EPS) is verdict, (delta, verdict)

    @staticmethod
    def _halved(plan):
        return dataclasses.replace(plan, noise=dataclasses.replace(
            plan.noise, scale=plan.noise.scale / 2))

    def bad_input(self, info):
        mech = info.build(**info.resolve({}))
        cols = model_data(30)
        src = SimulationSource(0)
        refused(info.resolve, {"lambda": 0}, error=ParameterError)
        refused(mech.simulate, cols | {"y": np.arange(30)}, "y", ["a", "b"], MODEL_BOUNDS, src,
                error=QueryError)
        refused(mech.simulate, cols, "y", ["a", "b"], {"a": (0, 10)}, src, error=QueryError)
        refused(mech.simulate, cols, "y", ["y"], MODEL_BOUNDS | {"y": (-1, 1)}, src,
                error=QueryError)
        refused(mech.simulate, cols, "nope", ["a"], MODEL_BOUNDS, src, error=QueryError)
        # A release needs the OS CSPRNG: a seeded source is refused before any fit.
        refused(mech.release, cols, "y", ["a", "b"], MODEL_BOUNDS, src,
                error=InsecureSourceError)
