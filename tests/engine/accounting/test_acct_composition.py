"""Composition theorems and amplification by subsampling, against hand-computed values
and an independent high-precision evaluation of Kairouz, Oh & Viswanath's Theorem 3.3."""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest

from dpstudio.engine.accounting import (
    PLD,
    advanced_composition,
    amplify_poisson,
    amplify_without_replacement,
    basic_composition,
    optimal_composition,
    optimal_composition_delta,
)
from dpstudio.engine.calibration import analytic_gaussian_delta
from dpstudio.engine.errors import ParameterError


def test_basic_composition_sums_as_typed_and_rounds_up():
    assert basic_composition([0.1] * 10, [1e-6] * 10) == (1.0, 1e-5)
    assert basic_composition([0.5, 0.25]) == (0.75, 0.0)
    # 0.1 + 0.2 is exactly the decimal 0.3, which lies above the float 0.3: rounded up.
    eps, _ = basic_composition([0.1, 0.2])
    assert eps == math.nextafter(0.3, 1.0) and Decimal(eps) >= Decimal("0.3")


def test_advanced_composition_hand_value():
    # ε′ = 0.1·√(200·ln 10⁵) + 100·0.1·(e^0.1 − 1) = 4.7985259122 + 1.0517091808 = 5.8502350929
    eps, delta = advanced_composition(0.1, 1e-7, 100, 1e-5)
    assert eps == pytest.approx(5.8502350929445575, rel=1e-11)  # rounded up by 2⁻⁴⁰
    assert eps >= 5.8502350929445575
    assert delta == pytest.approx(100 * 1e-7 + 1e-5, rel=1e-15)
    assert delta >= 2e-5


def _kov_theorem_3_3(eps, delta, k, i, digits=60):
    """δ_i of KOV Theorem 3.3 at ε_g = (k − 2i)ε, in 60-digit decimal arithmetic:
    1 − (1−δ)^k + (1−δ)^k Σ_{l<i} C(k,l)(e^{(k−l)ε} − e^{(k−2i+l)ε}) / (1 + e^ε)^k."""
    getcontext().prec = digits
    e, d = Decimal(eps), Decimal(delta)
    w = (1 - d) ** k
    s = sum(math.comb(k, l) * ((k - l) * e).exp() - math.comb(k, l) * ((k - 2 * i + l) * e).exp()
            for l in range(i))
    return float(1 - w + w * Decimal(s) / (1 + e.exp()) ** k)


@pytest.mark.parametrize("eps,delta,k", [(0.5, 1e-6, 10), (0.1, 0.0, 40), (1.0, 1e-4, 7)])
def test_optimal_composition_matches_theorem_3_3_evaluated_independently(eps, delta, k):
    for i in range(0, (k + 1) // 2):
        ours = optimal_composition_delta(eps, delta, k, (k - 2 * i) * eps)
        ref = _kov_theorem_3_3(eps, delta, k, i)
        assert ref <= ours <= ref * (1 + 1e-11) + 1e-300


def test_optimal_composition_hand_values_k2():
    # k = 2, ε = 1, δ = 0: losses 2, 0, −2 w.p. e², 2e, 1 over (1 + e)².
    assert optimal_composition_delta(1.0, 0.0, 2, 0.0) == pytest.approx(
        0.46211715726000974, rel=1e-14)  # (e − 1)/(e + 1)
    assert optimal_composition_delta(1.0, 0.0, 2, 1.0) == pytest.approx(
        0.3378347121470412, rel=1e-14)  # e²(1 − e^{−1})/(1 + e)²
    assert optimal_composition_delta(1.0, 0.0, 2, 2.0) == 0.0


@pytest.mark.parametrize("eps,delta", [(0.3, 1e-6), (1.0, 0.0), (2.5, 1e-3)])
def test_optimal_composition_of_one_is_the_mechanism_itself(eps, delta):
    e1, d1 = optimal_composition(eps, delta, 1, delta)
    assert d1 == delta
    assert eps <= e1 <= eps * (1 + 1e-12)
    assert optimal_composition_delta(eps, delta, 1, eps) == pytest.approx(delta, abs=1e-15)


@pytest.mark.parametrize("eps,delta,k,slack", [(0.1, 1e-7, 100, 1e-5), (0.05, 0.0, 1000, 1e-6),
                                               (0.02, 1e-9, 5000, 1e-6)])
def test_optimal_is_at_most_advanced_is_at_most_basic(eps, delta, k, slack):
    basic, _ = basic_composition([eps] * k, [delta] * k)
    adv, adv_delta = advanced_composition(eps, delta, k, slack)
    opt, _ = optimal_composition(eps, delta, k, adv_delta)
    assert opt <= adv <= basic
    # The optimal ε is attained: at a slightly smaller ε the δ would be exceeded.
    assert optimal_composition_delta(eps, delta, k, opt) <= adv_delta
    assert optimal_composition_delta(eps, delta, k, opt * (1 - 1e-9)) > adv_delta


def test_optimal_composition_equals_the_pld_of_the_worst_pair():
    eps, delta, k = 0.25, 1e-6, 30
    pld = PLD.from_epsilon_delta(eps, delta).self_compose(k)
    for eg in (0.0, 0.7, 1.3, 2.9):
        exact = optimal_composition_delta(eps, delta, k, eg)
        assert exact <= pld.delta(eg) <= exact * (1 + 1e-6)


def test_amplification_hand_values():
    # ln(1 + 0.1(e − 1)) = 0.1585650787404291
    eps, delta = amplify_poisson(1.0, 1e-6, 0.1)
    assert eps == pytest.approx(0.1585650787404291, rel=1e-13) and eps >= 0.1585650787404291
    assert delta == pytest.approx(1e-7, rel=1e-12) and delta >= 1e-7
    assert amplify_poisson(2.0, 1e-5, 1.0) == (2.0, 1e-5)
    assert amplify_without_replacement(1.0, 1e-6, 10, 100) == amplify_poisson(1.0, 1e-6, 0.1)
    big, _ = amplify_poisson(800.0, 0.0, 0.5)  # no overflow: ε + ln(q + (1 − q)e^{−ε})
    assert big == pytest.approx(800 + math.log(0.5), rel=1e-12)


@pytest.mark.parametrize("sigma,q,eps", [(1.0, 0.2, 2.0), (0.8, 0.01, 3.0), (2.0, 0.5, 0.5)])
def test_amplification_is_tight_for_the_remove_direction_of_the_subsampled_gaussian(
        sigma, q, eps):
    # H_{e^ε′}((1−q)N₀ + qN₁ ‖ N₀) = q·H_{e^ε}(N₁ ‖ N₀) when e^ε′ = 1 + q(e^ε − 1): the
    # amplified bound is exact there, an independent check of the subsampled PLD.
    eps_amp, delta_amp = amplify_poisson(eps, analytic_gaussian_delta(sigma, 1.0, eps), q)
    pld = PLD.subsampled_gaussian(sigma, q).delta(eps_amp, direction="remove")
    assert delta_amp * (1 - 1e-11) <= pld <= delta_amp * (1 + 1e-6)


@pytest.mark.parametrize("call", [
    lambda: basic_composition([]),
    lambda: basic_composition([-0.1]),
    lambda: basic_composition([0.1], [1.5]),
    lambda: basic_composition([0.1, 0.2], [0.0]),
    lambda: advanced_composition(0.1, 0.0, 0, 1e-5),
    lambda: advanced_composition(0.1, 0.0, 10, 0.0),
    lambda: optimal_composition(0.1, 1e-3, 10, 1e-3),  # below 1 − (1 − δ)^k
    lambda: optimal_composition(float("inf"), 0.0, 2, 1e-3),
    lambda: amplify_poisson(1.0, 0.0, 0.0),
    lambda: amplify_without_replacement(1.0, 0.0, 11, 10),
    lambda: amplify_without_replacement(1.0, 0.0, 0, 10),
])
def test_bad_parameters_raise_one_line_errors(call):
    with pytest.raises(ParameterError) as err:
        call()
    assert "\n" not in str(err.value)


def test_vector_inputs_are_not_needed_but_numpy_scalars_work():
    assert optimal_composition_delta(np.float64(0.5), np.float64(0.0), np.int64(3), 0.5) > 0
