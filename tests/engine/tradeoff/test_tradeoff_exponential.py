"""The exponential mechanism's curve f(α) = (1 − α)/(1 + (e^ε − 1)α): the envelope of the
bounded-range pairs, attained by two candidates of the engine's own mechanism, and above
the pure ε-DP bound."""

import math

import numpy as np
import pytest

from dpstudio.engine.selection import ExponentialMechanism
from dpstudio.engine.tradeoff import (
    alpha_grid,
    discrete_tradeoff,
    epsilon_delta_tradeoff,
    exponential_mechanism_tradeoff,
)

A = alpha_grid(401)


def grr_curve(eps, t):
    """Generalized randomized response: two outputs with losses t and t − ε."""
    p = (math.exp(-t) - math.exp(-eps)) / (1 - math.exp(-eps))
    return discrete_tradeoff([p, 1 - p], [p * math.exp(t), (1 - p) * math.exp(t - eps)], A).beta


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_envelope_of_bounded_range_pairs(eps):
    f = exponential_mechanism_tradeoff(eps, A).beta
    curves = np.array([grr_curve(eps, t) for t in np.linspace(0, eps, 2001)[1:-1]])
    assert np.all(curves >= f - 1e-12)  # every pair lies above f
    # ... and their lower envelope is f (up to the t grid).
    np.testing.assert_allclose(curves.min(axis=0), f, atol=2e-4 * eps)


def test_two_candidates_of_the_engine_touch_the_curve():
    eps = 1.0
    f = exponential_mechanism_tradeoff(eps)
    em = ExponentialMechanism(eps, sensitivity=1.0)
    for gap in (-3.0, -1.0, 0.0, 2.5):
        p = em.probabilities(np.array([0.0, gap]))
        q = em.probabilities(np.array([-1.0, gap + 1.0]))  # each score moves by Δu = 1
        pair = discrete_tradeoff(p, q, A)
        assert np.all(pair.beta >= f.at(A) - 1e-12)
        corner_a, corner_b = pair.knots[0][1], pair.knots[1][1]
        assert float(f.at(corner_a)[0]) == pytest.approx(corner_b, abs=1e-12)


def test_monotone_scores_reach_it_too():
    eps = 2.0
    f = exponential_mechanism_tradeoff(eps)
    em = ExponentialMechanism(eps, sensitivity=1.0, monotonic=True)
    p = em.probabilities(np.array([0.0, 0.7]))
    q = em.probabilities(np.array([0.0, 1.7]))
    pair = discrete_tradeoff(p, q, A)
    assert np.all(pair.beta >= f.at(A) - 1e-12)
    assert float(f.at(pair.knots[0][1])[0]) == pytest.approx(pair.knots[1][1], abs=1e-12)


def test_properties_and_power():
    for eps in (0.5, 2.0, 50.0):
        f = exponential_mechanism_tradeoff(eps, A).beta
        pure = epsilon_delta_tradeoff(eps, 0.0, A).beta
        assert f[0] == 1.0 and f[-1] == 0.0
        slopes = np.diff(f) / np.diff(A)
        assert np.all(slopes <= 0) and np.all(np.diff(slopes) >= -1e-9)  # convex
        assert np.all(f >= pure - 1e-15)
        assert np.max(f - pure) > (1e-3 if eps <= 2 else 1e-20)  # strictly above inside
        assert np.all(f <= 1 - A + 1e-15)
        inv = np.interp(A, f[::-1], A[::-1])  # symmetric
        np.testing.assert_allclose(inv, f, atol=1e-3)
    base = exponential_mechanism_tradeoff(1.0, A).beta
    assert np.max(np.abs(exponential_mechanism_tradeoff(1.05, A).beta - base)) > 5e-3
