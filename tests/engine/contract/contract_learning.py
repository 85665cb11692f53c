"""Contract adapters of the learners beyond output perturbation: objective perturbation
and DP-SGD (kind ``"model"``, central).

Each model entry builds a different object (output perturbation's ``LogisticERM``,
``ObjectiveERM``, ``DPSGDTrainer``); :class:`ModelAdapters` picks the adapter by that
object's type, so a new model entry without an adapter fails the suite.
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
    gaussian_delta,
    lattice_pmf,
    refused,
)
from scipy import stats

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import InsecureSourceError, SimulationSource


def _task(n: int, p: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows with ‖x‖ ≤ 1 (intercept last) and ±1 labels of a logistic truth."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(-1, 1, (n, p - 1)), np.ones(n)]) / math.sqrt(p)
    y = np.where(X[:, 0] * 6 - X[:, 1] * 3 + rng.logistic(size=n) > 0, 1.0, -1.0)
    return X, y


def _build(info, **given):
    return info.build(**info.resolve(given))


# ------------------------------------------------------------------ objective perturbation

class ObjectiveAdapter(Adapter):
    """Objective perturbation (:mod:`dpstudio.engine.learning.objective_perturbation`)."""

    P = 3

    def calibration(self, info):
        c = 0.25  # ℓ″ ≤ 1/4 for the logistic loss
        for n, lam, eps, delta in ((1000, 0.01, 1.0, 0.0), (10, 0.01, 0.2, 0.0),
                                   (800, 0.01, 1.0, 1e-5), (50, 0.1, 0.3, 1e-6)):
            plan = _build(info, epsilon=eps, delta=delta, **{"lambda": lam}).calibrate(
                self.P, n)
            e2 = eps / 200  # the share covering the solver's tolerance, spent twice
            e1 = eps - 2 * e2
            assert plan.epsilon == eps and plan.delta == delta
            assert plan.epsilon_objective == pytest.approx(e1, rel=1e-14)
            if delta == 0:  # Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2
                ep = e1 - math.log(1 + 2 * c / (n * lam) + c**2 / (n * lam) ** 2)
                big = 0.0 if ep > 0 else c / (n * (math.exp(e1 / 4) - 1)) - lam
                ep = ep if ep > 0 else e1 / 2
                assert plan.beta == pytest.approx(ep / 2, rel=1e-12)
                assert plan.extra_regularization == pytest.approx(big, rel=1e-12, abs=0)
            else:  # Kifer, Smith & Thakurta 2012, Algorithm 1 (ζ = 1)
                d1 = delta * math.exp(-e2)
                assert plan.delta_objective == pytest.approx(d1, rel=1e-14)
                assert plan.regularization_added == pytest.approx(2 * c / e1 / n, rel=1e-12)
                assert plan.sigma_b == pytest.approx(
                    math.sqrt(8 * math.log(2 / d1) + 4 * e1) / e1, rel=1e-12)
            # The lattice noise spends ε₂ on the certified tolerance: scale S/ε₂.
            assert plan.output_noise.epsilon == pytest.approx(e2, rel=1e-14)
            assert plan.output_noise.scale == pytest.approx(
                plan.output_noise.sensitivity / e2, rel=1e-12)

    def distribution(self, info):
        from dpstudio.engine.learning.objective_perturbation import draw_linear_term

        for delta in (0.0, 1e-5):
            plan = _build(info, epsilon=1.0, delta=delta).calibrate(self.P, 1000)
            b = draw_linear_term(plan, SimulationSource(3), 20_000)
            if delta == 0:  # ‖b‖ ~ Gamma(p, 1/β), the density ∝ e^{−β‖b‖} on ℝᵖ
                norms = np.linalg.norm(b, axis=1)
                assert stats.kstest(norms, stats.gamma(self.P, scale=1 / plan.beta).cdf
                                    ).pvalue > ACCEPT
                for factor in WRONG:
                    law = stats.gamma(self.P, scale=factor / plan.beta)
                    assert stats.kstest(norms, law.cdf).pvalue < REJECT, factor
            else:
                z = b.ravel()
                assert stats.kstest(z / plan.sigma_b, "norm").pvalue > ACCEPT
                for factor in WRONG:
                    assert stats.kstest(z / (plan.sigma_b * factor), "norm").pvalue < REJECT
        # The release lands on its lattice.
        X, y = _task(200)
        out = _build(info, epsilon=1.0).simulate(X, y, SimulationSource(4))
        steps = out.theta / out.plan.output_noise.grid
        assert np.array_equal(steps, np.rint(steps))

    def audit(self, info):
        """Membership audit on a worst-ish canary (replace-one), and its power: the same
        training with a linear term 1000× too small is caught claiming the ε."""
        from dpstudio.engine.learning.membership import audit_membership, corner_canary
        from dpstudio.engine.learning.objective_perturbation import (
            _minimize,
            draw_linear_term,
        )

        X, y = _task(100, seed=5)
        eps, lam = 0.5, 0.1
        canary = corner_canary(self.P)
        mech = _build(info, epsilon=eps, **{"lambda": lam})

        def honest(Xs, ys, src):
            return mech.simulate(Xs, ys, src).theta

        def weak(Xs, ys, src):
            plan = mech.calibrate(self.P, ys.size)
            b = draw_linear_term(dataclasses.replace(plan, beta=plan.beta * 1e3), src)[0]
            return _minimize(Xs, ys, lam + plan.regularization_added, b)

        def score(theta, x, yy):
            return float(np.logaddexp(0.0, -yy * float(theta @ x)))

        for train, caught in ((honest, False), (weak, True)):
            res = audit_membership(train, score, X, y, canary, 200, SimulationSource(8),
                                   relation="replace")
            assert (res.epsilon_lower > eps) is caught, (train.__name__, res.epsilon_lower)

    def bad_input(self, info):
        refused(info.resolve, {"lambda": 0}, error=ParameterError)
        mech = _build(info)
        refused(mech.calibrate, self.P, 100, "squared", error=QueryError)
        X, y = _task(30)
        src = SimulationSource(0)
        refused(mech.simulate, X * 2, y, src, error=QueryError)  # rows outside the ball
        refused(mech.simulate, X, np.arange(30.0), src, error=QueryError)  # labels not ±1
        refused(mech.simulate, X, y[:-1], src, error=QueryError)
        refused(mech.release, X, y, src, error=InsecureSourceError)


# ---------------------------------------------------------------------------- DP-SGD

class DPSGDAdapter(Adapter):
    """DP-SGD (:mod:`dpstudio.engine.learning.dpsgd`): σ from the accountant."""

    def calibration(self, info):
        from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon

        # Full batches (q = 1): T Gaussian steps compose to one Gaussian of σ/√T, whose
        # exact δ(ε) is written out in contract_common (Balle & Wang 2018).
        for eps, delta, epochs in ((1.0, 1e-5, 4), (3.0, 1e-6, 1)):
            plan = _build(info, epsilon=eps, delta=delta, batch_rate=1.0,
                          epochs=epochs).calibrate(4)
            assert plan.steps == epochs and plan.sample_rate == 1.0
            sigma = plan.noise_multiplier / math.sqrt(plan.steps)
            assert plan.epsilon <= eps
            assert gaussian_delta(sigma, 1.0, plan.epsilon) <= delta * 1.01
            assert gaussian_delta(sigma, 1.0, eps * 0.98) > delta  # tight: σ not too large
            assert plan.noise_std == pytest.approx(
                plan.noise_multiplier * (plan.clip + math.sqrt(4) * plan.grid / 2))
        # Poisson sampling: the reported ε is the accountant's for the (q, σ, T) that runs,
        # and no more than the looser RDP bound's.
        plan = _build(info, epsilon=2.0, delta=1e-5, batch_rate=0.05, epochs=2).calibrate(5)
        assert plan.steps == 40
        pld = dpsgd_epsilon(plan.noise_multiplier, 0.05, 40, 1e-5, "pld").epsilon
        rdp = dpsgd_epsilon(plan.noise_multiplier, 0.05, 40, 1e-5, "rdp").epsilon
        assert plan.epsilon == pld <= 2.0 and pld <= rdp * (1 + 1e-9)

    @staticmethod
    def _step_noise(plan, count: int, seed: int, shift: float = 0.0) -> np.ndarray:
        """The noisy sum a release adds to one step, per coordinate, in value units; with
        ``shift``, every coordinate's sum holds one clipped gradient of that size (each
        coordinate a one-dimensional worst pair)."""
        from dpstudio.engine.learning.dpsgd import _noisy_sum_lattice

        wide = dataclasses.replace(plan, dimension=count)
        grads = np.full((1, count), shift) if shift else np.zeros((0, count))
        return _noisy_sum_lattice(grads, wide, SimulationSource(seed))

    def distribution(self, info):
        plan = _build(info, epsilon=1.0, delta=1e-5, batch_rate=1.0, epochs=1).calibrate(3)
        steps = np.rint(self._step_noise(plan, 100_000, 9) / plan.grid).astype(np.int64)
        scale = plan.noise_std / plan.grid
        k, pmf = lattice_pmf("gaussian", scale, half=int(8 * scale))
        assert binned_chi2(steps, k, pmf) > ACCEPT
        for factor in WRONG:
            k, pmf = lattice_pmf("gaussian", scale * factor, half=int(8 * scale * factor))
            assert binned_chi2(steps, k, pmf) < REJECT, factor

    def audit(self, info):
        plan = _build(info, epsilon=AUDIT_EPS, delta=AUDIT_DELTA, batch_rate=1.0,
                      epochs=1).calibrate(1)
        halved = dataclasses.replace(plan, noise_std=plan.noise_std / 2)
        for p, verdict in ((plan, False), (halved, True)):
            a = self._step_noise(p, AUDIT_N, 13)
            b = self._step_noise(p, AUDIT_N, 14, shift=p.clip)
            assert (eps_lower(a, b, AUDIT_DELTA) > AUDIT_EPS) is verdict, verdict

    def bad_input(self, info):
        from dpstudio.engine.learning.dpsgd import simulate_dpsgd
        from dpstudio.engine.learning.models import LogisticModel

        for given in ({"delta": 0}, {"batch_rate": 0}, {"batch_rate": 1.5}, {"clip": 0},
                      {"epochs": 0}, {"learning_rate": -1}, {"lambda": -1}):
            refused(info.resolve, given, error=ParameterError)
        X, y = _task(50)
        plan = _build(info, epsilon=1.0, delta=1e-5, epochs=1).calibrate(3)
        src = SimulationSource(0)
        refused(simulate_dpsgd, LogisticModel(3, 0.0), X * 2, y, plan, src, error=QueryError)
        refused(simulate_dpsgd, LogisticModel(4, 0.0), X, y, plan, src,
                error=ParameterError)  # a plan made for another model
        from dpstudio.engine.learning.dpsgd import release_dpsgd

        refused(release_dpsgd, LogisticModel(3, 0.0), X, y, plan, src,
                error=InsecureSourceError)


# ------------------------------------------------------------------ dispatch by object

class ModelAdapters(Adapter):
    """The model entries' adapters, chosen by the type of object the entry builds."""

    def __init__(self, **by_type: Adapter) -> None:
        self.by_type = by_type

    def _pick(self, info) -> Adapter:
        built = type(info.build(**info.resolve({}))).__name__
        adapter = self.by_type.get(built)
        if adapter is None:
            pytest.fail(f"no contract adapter for model entry {info.name!r} (it builds a "
                        f"{built}): add one to tests/engine/contract/contract_learning.py")
        return adapter

    def calibration(self, info):
        self._pick(info).calibration(info)

    def distribution(self, info):
        self._pick(info).distribution(info)

    def audit(self, info):
        self._pick(info).audit(info)

    def bad_input(self, info):
        self._pick(info).bad_input(info)
