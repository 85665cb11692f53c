"""The membership audit's power on output perturbation (issue 13): at ε = 4 it certifies
more than ε/2 on a small dataset where the bound should be tight, and never more than ε.

Why this design
---------------
Output perturbation adds discrete Laplace noise of scale b = Δ₁/ε per coordinate, with
Δ₁ = √p·2/(nλ). A replace-one pair whose minimizers are Δ apart in ℓ₁ has privacy loss
at most Δ/b = ε·Δ/Δ₁, so the audit can only reach ε/2 on a pair that moves the minimizer
more than half of Δ₁. At a fixed θ the pair changes n·∇F by −u·σ(−θᵀu) + v·σ(−θᵀv),
u and v the two records' y·x (‖·‖ ≤ 1). In one dimension that is at most about 1, so
the minimizer moves at most about 1/(nλ) = Δ₁/2 (a grid search of 1-D designs found
0.49 of Δ₁ at best): no 1-D design can pass. In two dimensions (no intercept column):

- n − 1 records at z = (cos 135°, sin 135°), label +1: they hold θ̂ along z, the only
  direction in which the data curve F;
- the replaced record at v = (cos −105°, sin −105°) and the canary at u = (cos 15°,
  sin 15°), both labelled +1: u = −z/2 + (√3/2)·e and v = −z/2 − (√3/2)·e with
  e = (1, 1)/√2 ⊥ z. Both are misclassified by θ̂ (margin ≈ −1.7), so each pulls with
  σ(1.7) ≈ 0.85 of its full gradient; the difference ≈ 0.85·(u − v) = 0.85·√3·e is
  orthogonal to the data's curvature, so the minimizer moves ≈ 0.85·√3/(nλ) along e:
  ℓ₁ ≈ 0.85·√3·√2/(nλ), 0.73 of Δ₁ = 2√2/(nλ). (u and v at 45° and −135° would make
  ‖u − v‖ = 2 but leave no margin; 0° and −90° give 0.66.)

With n = 500 and λ = 0.003 the pair's exact ε at a claimed 4 is 2.94 (asserted first, a
closed form). The white-box attack scores a model by the likelihood ratio of the two
noise distributions (the best test, Neyman–Pearson); reaching 2 with Clopper–Pearson at
95% needs thousands of models per dataset, cheap because output perturbation fits each
dataset once and redraws only the noise (:func:`fit_once`).
"""

import math

import numpy as np
import pytest
from scipy.optimize import root

from dpstudio.engine.learning import calibrate_output_perturbation, fit_logistic
from dpstudio.engine.learning.membership import (
    _neighbours,
    audit_membership,
    canary_logistic_loss,
    fit_once,
)
from dpstudio.engine.learning.output_perturbation import perturb, snap
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.special import expit

N, LAM, EPS = 500, 0.003, 4.0


def _unit(degrees):
    r = math.radians(degrees)
    return np.array([math.cos(r), math.sin(r)])


def _design(canary_deg=15.0, replaced_deg=-105.0):
    """D (the replaced record last) and the canary that replaces it in D′."""
    X = np.tile(_unit(135.0), (N, 1))
    X[-1] = _unit(replaced_deg)
    return X, np.ones(N), (_unit(canary_deg), 1.0)


def _plan(epsilon):
    return calibrate_output_perturbation(2, N, LAM, epsilon, 0.0)


def _fit(X, y):
    return fit_logistic(X, y, LAM).theta


def _learner(epsilon):
    """Output perturbation with noise for ``epsilon``: one fit per dataset."""
    plan = _plan(epsilon)
    return fit_once(_fit, lambda theta, source: perturb(theta, plan, source))


def _minimizers(design):
    X0, y0, X1, y1 = _neighbours(*design, "replace", -1)
    return _fit(X0, y0), _fit(X1, y1)


def _pair_epsilon(design, epsilon):
    """The pair's exact ε under the calibrated noise: ℓ₁ lattice distance over the scale."""
    t0, t1 = _minimizers(design)
    plan = _plan(epsilon)
    return float(np.abs(snap(t0, plan.grid) - snap(t1, plan.grid)).sum() / plan.noise.scale)


def _likelihood_ratio(design, epsilon):
    """The white-box score: ln P(θ | D′)/P(θ | D) times the noise scale, in lattice steps
    (an integer, so equal ratios tie exactly)."""
    t0, t1 = _minimizers(design)
    g = _plan(epsilon).grid
    k0, k1 = snap(t0, g), snap(t1, g)

    def score(theta, x, y):
        k = np.rint(np.asarray(theta) / g).astype(np.int64)
        return float(np.sum(np.abs(k - k0) - np.abs(k - k1)))

    return score


def test_the_pair_moves_the_minimizer_most_of_its_sensitivity():
    design = _design()
    t0, t1 = _minimizers(design)
    # Independent computation: the stationary point of F by scipy's root finder.
    X0, y0, X1, y1 = _neighbours(*design, "replace", -1)
    for X, t in ((X0, t0), (X1, t1)):
        def grad(th, X=X):
            return -(X.T @ expit(-(X @ th))) / N + LAM * th
        ref = root(grad, np.zeros(2)).x
        assert np.linalg.norm(grad(ref)) < 1e-12 and t == pytest.approx(ref, abs=1e-8)
    # The design is symmetric about the line of z: the minimizers are mirror images and
    # the move is along e = (1, 1)/√2, orthogonal to the data's curvature.
    move = t1 - t0
    assert move[0] == pytest.approx(move[1], rel=1e-9)
    assert t0 == pytest.approx(-t1[::-1], rel=1e-9)
    assert _unit(15.0) @ t1 < -1.5 and _unit(-105.0) @ t0 < -1.5  # both misclassified
    ratio = np.abs(move).sum() / (2 * math.sqrt(2) / (N * LAM))
    assert 0.72 < ratio < math.sqrt(3) / 2  # σ(1.7)·√3/2 ≈ 0.73; u − v caps it at √3/2
    # The pair's exact ε under the calibrated discrete Laplace noise, checked against the
    # noise's own pmf at a point beyond both minimizers, where the privacy loss peaks.
    eps_pair = _pair_epsilon(design, EPS)
    assert 0.7 * EPS < eps_pair < EPS
    plan = _plan(EPS)
    k0, k1 = snap(t0, plan.grid), snap(t1, plan.grid)
    far = k1 + np.sign(k1 - k0) * 3
    loss = np.log(plan.noise.pmf(far - k1)).sum() - np.log(plan.noise.pmf(far - k0)).sum()
    assert loss == pytest.approx(eps_pair, rel=1e-9)
    # The lead's first design (0° and −90°) is tight enough too, but less so.
    assert 0.5 * EPS < _pair_epsilon(_design(0.0, -90.0), EPS) < 0.68 * EPS


def test_audit_certifies_more_than_half_of_epsilon_on_output_perturbation():
    design = _design()
    a = audit_membership(_learner(EPS), _likelihood_ratio(design, EPS), *design, 10000,
                         SimulationSource(0), relation="replace")
    eps_pair = _pair_epsilon(design, EPS)
    assert a.max_certifiable > eps_pair  # the runs do not cap the bound below the truth
    # Power: more than ε/2 (2.39 with this seed; 2.1–2.9 over 40 seeds); validity: not
    # above the pair's exact ε (which holds with probability ≥ 95% for any seed).
    assert 0.5 * EPS < a.epsilon_lower <= eps_pair


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_audit_never_exceeds_epsilon_on_the_tight_design(seed):
    design = _design()
    for score in (_likelihood_ratio(design, EPS), canary_logistic_loss):
        a = audit_membership(_learner(EPS), score, *design, 4000, SimulationSource(seed),
                             relation="replace")
        assert a.epsilon_lower <= EPS


def test_noise_for_epsilon_20_claimed_as_4_is_caught():
    design = _design()
    a = audit_membership(_learner(20.0), _likelihood_ratio(design, 20.0), *design, 4000,
                         SimulationSource(4), relation="replace")
    assert a.epsilon_lower > EPS


def test_fit_once_fits_each_dataset_once_and_redraws_the_noise():
    design = _design()
    X0, y0, X1, y1 = _neighbours(*design, "replace", -1)
    fits = []

    def fit(X, y):
        fits.append(1)
        return _fit(X, y)

    plan = _plan(EPS)
    train = fit_once(fit, lambda theta, source: perturb(theta, plan, source))
    s, ref = SimulationSource(9), SimulationSource(9)
    t0, t1 = _fit(X0, y0), _fit(X1, y1)
    for _ in range(3):
        for X, y, t in ((X0, y0, t0), (X1, y1, t1)):
            # Exactly retraining: the same draws as fitting afresh each time.
            assert np.array_equal(train(X.copy(), y, s), perturb(t, plan, ref))
    assert len(fits) == 2
    one = fit_once(fit, lambda theta, source: theta, keep=1)
    fits.clear()
    for X, y in ((X0, y0), (X0, y0), (X1, y1), (X0, y0)):
        one(X, y, s)
    assert len(fits) == 3  # keep=1: D refitted after D′
