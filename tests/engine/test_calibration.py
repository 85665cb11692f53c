"""Calibration against closed forms and independent numerical solutions."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from dpstudio.engine.calibration import (
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
    laplace_scale,
)
from dpstudio.engine.errors import ParameterError

TABLE = [(1.0, 0.1, 1e-5), (1.0, 0.5, 1e-6), (2.0, 0.9, 1e-8), (100.0, 0.3, 1e-3)]


@pytest.mark.parametrize("sens,eps,delta", TABLE)
def test_laplace_and_classical_gaussian_closed_forms(sens, eps, delta):
    assert laplace_scale(sens, eps) == sens / eps
    expected = sens * math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert classical_gaussian_sigma(sens, eps, delta) == pytest.approx(expected, rel=1e-15)


def _balle_wang_root(sens, eps, delta):
    """Independent solution of Balle & Wang's condition with scipy's norm.cdf and brentq."""

    def gap(sigma):
        a, b = sens / (2 * sigma), eps * sigma / sens
        return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b) - delta

    return brentq(gap, 1e-6 * sens, 1e6 * sens, xtol=1e-14, rtol=1e-14)


@pytest.mark.parametrize("sens,eps,delta",
                         TABLE + [(1.0, 1.0, 1e-5), (1.0, 4.0, 1e-6), (3.0, 10.0, 1e-9)])
def test_analytic_gaussian_matches_independent_root_to_1e6(sens, eps, delta):
    ours = analytic_gaussian_sigma(sens, eps, delta)
    ref = _balle_wang_root(sens, eps, delta)
    assert ours == pytest.approx(ref, rel=1e-6)
    # On the private side: our σ meets δ, and it is the smallest such σ to 1e-9.
    assert analytic_gaussian_delta(ours, sens, eps) <= delta
    assert analytic_gaussian_delta(ours * (1 - 1e-9), sens, eps) > delta * (1 - 1e-6)


@pytest.mark.parametrize("sens,eps,delta", TABLE)
def test_analytic_beats_classical_below_one(sens, eps, delta):
    assert analytic_gaussian_sigma(sens, eps, delta) < classical_gaussian_sigma(sens, eps, delta)


def _brute_delta(sigma, sens, eps, coordinates):
    """δ = Σ max(0, P(y) − e^ε Q(y)) over the whole output lattice, written out directly."""
    half = int(14 * sigma) + 3 * sens
    k = np.arange(-half, half + 1)
    p = np.exp(-k.astype(float) ** 2 / (2 * sigma**2))
    p /= p.sum()

    def shifted(d):
        return np.exp(-(k - d).astype(float) ** 2 / (2 * sigma**2)) / np.exp(
            -k.astype(float) ** 2 / (2 * sigma**2)).sum()

    if coordinates == 1:
        return float(np.maximum(p - math.exp(eps) * shifted(sens), 0).sum())
    joint_p = np.outer(p, p)
    joint_q = np.outer(shifted(sens), shifted(-sens))
    return float(np.maximum(joint_p - math.exp(eps) * joint_q, 0).sum())


@pytest.mark.parametrize("sigma,sens,eps,coords",
                         [(0.8, 1, 1.0, 1), (3.0, 1, 0.5, 1), (5.0, 2, 1.0, 2), (2.0, 1, 0.3, 2)])
def test_discrete_gaussian_delta_against_brute_force(sigma, sens, eps, coords):
    assert discrete_gaussian_delta(sigma, sens, eps, coords) == pytest.approx(
        _brute_delta(sigma, sens, eps, coords), rel=1e-9, abs=1e-15)


def test_discrete_gaussian_delta_close_to_continuous_for_wide_noise():
    sigma, sens, eps = 3000.0, 700, 1.0
    cont = analytic_gaussian_delta(sigma, sens, eps)
    assert discrete_gaussian_delta(sigma, sens, eps) == pytest.approx(cont, rel=1e-3)
    # Two coordinates at Δ each behave like one at Δ√2 (ℓ₂ sensitivity).
    cont2 = analytic_gaussian_delta(sigma, sens * math.sqrt(2), eps)
    assert discrete_gaussian_delta(sigma, sens, eps, 2) == pytest.approx(cont2, rel=1e-3)


def test_discrete_gaussian_sigma_meets_target_and_is_tight():
    sigma = discrete_gaussian_sigma(1, 1.0, 1e-6)
    assert discrete_gaussian_delta(sigma, 1, 1.0) <= 1e-6
    assert discrete_gaussian_delta(sigma * 0.999, 1, 1.0) > 1e-6
    # A floor that already suffices is returned as is.
    assert discrete_gaussian_sigma(1, 1.0, 1e-6, at_least=2 * sigma) == 2 * sigma


@pytest.mark.parametrize("call", [
    lambda: laplace_scale(1, 0), lambda: laplace_scale(1, -1), lambda: laplace_scale(0, 1),
    lambda: laplace_scale(1, float("nan")), lambda: laplace_scale(float("inf"), 1),
    lambda: analytic_gaussian_sigma(1, 1, 0), lambda: analytic_gaussian_sigma(1, 1, 1),
    lambda: analytic_gaussian_sigma(1, 1, -0.1), lambda: classical_gaussian_sigma(1, 1.5, 1e-5),
    lambda: laplace_scale(1, "abc"),
])
def test_bad_parameters_are_refused_with_a_message(call):
    with pytest.raises(ParameterError) as err:
        call()
    assert "\n" not in str(err.value) and len(str(err.value)) > 10
