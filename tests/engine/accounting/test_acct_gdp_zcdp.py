"""Gaussian DP and zero-concentrated DP: exact compositions, δ(ε) against the analytic
Gaussian (an independent implementation of the same function), and conversions."""

import math

import numpy as np
import pytest

from dpstudio.engine.accounting import (
    PLD,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_gaussian,
    rdp_epsilon,
    rdp_gaussian,
    zcdp_compose,
    zcdp_from_pure,
    zcdp_gaussian,
    zcdp_to_epsilon,
)
from dpstudio.engine.calibration import analytic_gaussian_delta
from dpstudio.engine.errors import ParameterError


def test_gdp_composition_is_exactly_root_sum_of_squares():
    assert gdp_compose(3.0, 4.0) == 5.0
    for mu, k in [(0.5, 4), (0.1, 100), (0.3, 10_000)]:
        assert gdp_compose(*[mu] * k) == pytest.approx(mu * math.sqrt(k), rel=1e-13)
    assert gdp_gaussian(2.0, sensitivity=3.0) == 1.5


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0, 8.0])
def test_gdp_delta_is_the_analytic_gaussian_at_sigma_delta_over_mu(mu):
    sens = 2.0
    for eps in (0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0):
        ref = analytic_gaussian_delta(sens / mu, sens, eps)
        assert gdp_delta(mu, eps) == pytest.approx(ref, rel=1e-12, abs=1e-300)
    eps = np.linspace(0, 5, 11)
    assert gdp_delta(mu, eps).shape == (11,)


@pytest.mark.parametrize("mu,delta", [(0.5, 1e-5), (1.0, 1e-6), (3.0, 1e-3), (10.0, 1e-9)])
def test_gdp_epsilon_is_the_exact_inverse_on_the_private_side(mu, delta):
    eps = gdp_epsilon(mu, delta)
    assert gdp_delta(mu, eps) <= delta
    assert gdp_delta(mu, eps * (1 - 1e-10)) > delta


def test_gaussian_pld_and_composed_gdp_agree():
    sigma, k, delta = 4.0, 25, 1e-6
    exact = gdp_epsilon(gdp_compose(*[gdp_gaussian(sigma)] * k), delta)
    pld = PLD.gaussian(sigma).self_compose(k).epsilon(delta)
    assert exact <= pld <= exact * (1 + 1e-4)


def test_zcdp_basics():
    assert zcdp_gaussian(2.0, 1.0) == 0.125
    assert zcdp_from_pure(0.5) == 0.125
    assert zcdp_compose(0.1, 0.2, 0.3) == pytest.approx(0.6, rel=1e-15)
    rho, delta = 0.125, 1e-6
    assert zcdp_to_epsilon(rho, delta, "simple") == rho + 2 * math.sqrt(rho * math.log(1e6))


@pytest.mark.parametrize("rho,delta", [(0.01, 1e-5), (0.125, 1e-6), (1.0, 1e-9), (5.0, 1e-3)])
def test_zcdp_conversion_is_tighter_than_simple_and_no_better_than_exact(rho, delta):
    cks = zcdp_to_epsilon(rho, delta)
    assert cks <= zcdp_to_epsilon(rho, delta, "simple")
    # For the Gaussian with this ρ the exact ε is known; no conversion can go below it.
    assert cks >= gdp_epsilon(math.sqrt(2 * rho), delta)
    # The same conversion over a grid of orders (RDP αρ) can only be looser.
    sigma = 1 / math.sqrt(2 * rho)
    assert cks <= rdp_epsilon(rdp_gaussian(sigma), delta) + 1e-12


@pytest.mark.parametrize("call", [
    lambda: gdp_compose(),
    lambda: gdp_compose(1.0, -1.0),
    lambda: gdp_delta(0.0, 1.0),
    lambda: gdp_delta(1.0, float("nan")),
    lambda: gdp_epsilon(1.0, 0.0),
    lambda: gdp_gaussian(0.0),
    lambda: zcdp_gaussian(-1.0),
    lambda: zcdp_from_pure(0.0),
    lambda: zcdp_compose(-0.1),
    lambda: zcdp_to_epsilon(0.1, 1.0),
    lambda: zcdp_to_epsilon(0.1, 1e-5, method="best"),
])
def test_bad_parameters_raise_one_line_errors(call):
    with pytest.raises(ParameterError) as err:
        call()
    assert "\n" not in str(err.value)
