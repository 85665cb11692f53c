"""Empirical trade-off points: simulated likelihood-ratio attacks against the theory."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpstudio.engine.attack import empirical_tradeoff, simulate_attack
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.tradeoff import (
    discrete_laplace_tradeoff,
    gaussian_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
    randomized_response_tradeoff,
)

N = 20_000


@pytest.mark.parametrize("mechanism,params,curve", [
    ("laplace", {"scale": 1.0}, laplace_tradeoff(1.0)),
    ("laplace", {"scale": 2.0, "sensitivity": 3.0}, laplace_tradeoff(1.5)),
    ("gaussian", {"sigma": 1.0}, gaussian_tradeoff(1.0)),
    ("gaussian", {"sigma": 0.5, "sensitivity": 2.0}, gaussian_tradeoff(4.0)),
    ("discrete_laplace", {"scale": 2.0, "sensitivity": 3}, discrete_laplace_tradeoff(2.0, 3)),
    ("rr", {"epsilon": 1.0}, randomized_response_tradeoff(1.0)),
    ("krr", {"epsilon": 1.5, "k": 5}, krr_tradeoff(1.5, 5)),
])
def test_intervals_cover_the_theoretical_curve(mechanism, params, curve):
    """The likelihood-ratio tests are Neyman–Pearson, so their true errors lie on the curve:
    with simultaneous 99% intervals every box should meet it (fixed seed; a new seed or
    sampler fails with probability ≤ 1%), with per-point 95% ones most boxes."""
    pointwise = simulate_attack(mechanism, params, N, SimulationSource(11))
    assert np.mean(pointwise.covers(curve)) >= 0.6
    joint = simulate_attack(mechanism, params, N, SimulationSource(12), confidence=0.99,
                            simultaneous=True)
    assert np.all(joint.covers(curve))
    assert not np.any(joint.below(curve))
    assert np.all((joint.alpha_low <= joint.alpha) & (joint.alpha <= joint.alpha_high))
    assert np.all((joint.beta_low <= joint.beta) & (joint.beta <= joint.beta_high))


def test_points_estimate_the_threshold_tests():
    """Gaussian: the test LLR > t rejects x > t/μ + μ/2 (σ = Δ = 1 here), so its errors are
    α = Φ(−t/μ − μ/2) and β = Φ(t/μ − μ/2)."""
    mu = 1.0
    t = np.linspace(-2, 2, 9)
    res = simulate_attack("gaussian", {"sigma": 1.0}, 100_000, SimulationSource(3), t)
    np.testing.assert_allclose(res.alpha, norm.cdf(-t / mu - mu / 2), atol=0.006)
    np.testing.assert_allclose(res.beta, norm.cdf(t / mu - mu / 2), atol=0.006)


@pytest.mark.parametrize("mechanism,claimed,actual", [
    ("laplace", {"scale": 1.0}, {"scale": 0.5}),
    ("gaussian", {"sigma": 1.0}, {"sigma": 0.5}),
])
def test_miscalibrated_noise_falls_below_the_claimed_curve(mechanism, claimed, actual):
    """Scale halved: the attack beats the claimed curve, certified by whole boxes below it."""
    claim = (laplace_tradeoff(1.0 / claimed["scale"]) if mechanism == "laplace"
             else gaussian_tradeoff(1.0 / claimed["sigma"]))
    res = simulate_attack(mechanism, actual, N, SimulationSource(5), simultaneous=True)
    assert np.mean(res.below(claim)) >= 0.5
    honest = simulate_attack(mechanism, claimed, N, SimulationSource(5), simultaneous=True)
    assert not np.any(honest.below(claim))


def test_randomized_response_points_are_the_corners():
    eps, k = 1.0, 4
    res = simulate_attack("krr", {"epsilon": eps, "k": k}, 200_000, SimulationSource(8))
    z = math.exp(eps) + k - 1
    np.testing.assert_allclose(res.alpha, [(k - 1) / z, 1 / z], atol=0.005)
    np.testing.assert_allclose(res.beta, [1 / z, (k - 1) / z], atol=0.005)


def test_simulations_are_reproducible_and_labelled():
    a = simulate_attack("laplace", {"scale": 1.0}, 1000, SimulationSource(4))
    b = simulate_attack("laplace", {"scale": 1.0}, 1000, SimulationSource(4))
    c = simulate_attack("laplace", {"scale": 1.0}, 1000, SimulationSource(5))
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert not np.array_equal(a.alpha, c.alpha)
    d = a.to_dict()
    assert {"alpha", "beta", "alpha_low", "beta_high", "thresholds", "confidence"} <= set(d)
    assert "SimulationSource(seed=4)" in d["label"]


def test_empirical_tradeoff_on_given_log_likelihood_ratios():
    res = empirical_tradeoff([-1.0, 0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0], None, [0.5, 1.5])
    np.testing.assert_array_equal(res.alpha, [0.5, 0.25])  # D's LLRs above t
    np.testing.assert_array_equal(res.beta, [0.25, 0.5])  # D′'s LLRs at or below t
    assert res.n_d == 4 and res.n_d2 == 4 and res.confidence == 0.95


@pytest.mark.parametrize("call", [
    lambda: empirical_tradeoff([], [1.0], None, [0.0]),
    lambda: empirical_tradeoff([1.0], [1.0], None, []),
    lambda: empirical_tradeoff([1.0], [1.0], None, [0.0], confidence=1.0),
    lambda: simulate_attack("exponential", {}, 10, SimulationSource(0)),
    lambda: simulate_attack("laplace", {"scale": -1.0}, 10, SimulationSource(0)),
    lambda: simulate_attack("gaussian", {}, 10, SimulationSource(0)),
    lambda: simulate_attack("krr", {"epsilon": 1.0, "k": 1}, 10, SimulationSource(0)),
    lambda: simulate_attack("rr", {"epsilon": 1.0}, 0, SimulationSource(0)),
    lambda: simulate_attack("discrete_laplace", {"scale": 1.0, "sensitivity": 0.5}, 10,
                            SimulationSource(0)),
])
def test_bad_arguments_raise_parameter_error(call):
    with pytest.raises(ParameterError):
        call()
