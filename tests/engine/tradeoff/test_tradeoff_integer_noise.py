"""Discrete Gaussian, sums of discrete Gaussian shares and Skellam noise: the trade-off
curves against independent computations (direct sums with scipy, Neyman–Pearson on
likelihood ratios, the engine's own δ computations), power checks at a wrong σ or
variance, and the pessimism of the cut support."""

import math

import numpy as np
import pytest
from scipy import special, stats

from dpstudio.engine.calibration import discrete_gaussian_delta
from dpstudio.engine.distributed.skellam import skellam_delta
from dpstudio.engine.tradeoff import (
    alpha_grid,
    discrete_gaussian_law,
    discrete_tradeoff,
    gaussian_tradeoff,
    integer_noise_pld,
    integer_noise_tradeoff,
    knots_epsilon,
    skellam_law,
    sum_of_shares,
    tradeoff_to_profile,
)

A = alpha_grid(501)


def direct_pair(logpmf, support, shift):
    """P and Q = P shifted, on support ∪ (support + Δ), normalized with logsumexp."""
    x = np.arange(support[0], support[1] + shift + 1)
    lp, lq = logpmf(x), logpmf(x - shift)
    return np.exp(lp - special.logsumexp(lp)), np.exp(lq - special.logsumexp(lq))


def test_discrete_gaussian_against_a_direct_sum():
    sigma, shift = 3.0, 2
    p, q = direct_pair(lambda x: -(x * x) / (2 * sigma**2), (-80, 80), shift)
    direct = discrete_tradeoff(p, q, A).beta  # Neyman–Pearson on the likelihood ratios
    ours = integer_noise_tradeoff(discrete_gaussian_law(sigma), shift, 1, A)
    assert ours.exact
    np.testing.assert_allclose(ours.beta, direct, atol=2e-12)
    assert np.all(ours.beta <= direct + 1e-15)  # the cut is pessimistic
    wrong = integer_noise_tradeoff(discrete_gaussian_law(1.03 * sigma), shift, 1, A).beta
    assert np.max(np.abs(wrong - ours.beta)) > 1e-3  # power: a 3% wrong σ is rejected


def test_discrete_gaussian_profile_is_the_engines_delta():
    # The engine's exact discrete Gaussian δ(ε) (calibration) is the curve's conjugate.
    sigma, shift = 2.5, 1
    curve = integer_noise_tradeoff(discrete_gaussian_law(sigma), shift, 1, A)
    for eps in (0.1, 0.5, 1.0):
        ours = float(tradeoff_to_profile(curve, eps))
        theirs = discrete_gaussian_delta(sigma, shift, eps)
        assert ours == pytest.approx(theirs, rel=1e-8, abs=1e-13)


def test_wide_discrete_gaussian_tends_to_the_continuous_curve():
    sigma, shift = 400.0, 300
    ours = integer_noise_tradeoff(discrete_gaussian_law(sigma), shift, 1, A).beta
    np.testing.assert_allclose(ours, gaussian_tradeoff(shift / sigma, A).beta, atol=1e-5)


def test_composition_is_the_sum_shifted_by_k_delta():
    # Independent: the 2-fold product law enumerated on a grid, Neyman–Pearson on it.
    sigma, shift = 1.5, 1
    law = discrete_gaussian_law(sigma)
    x = np.arange(law.probs.size) + law.offset
    p1 = np.concatenate([law.probs, [0.0]])
    q1 = np.concatenate([[0.0], law.probs])  # shifted by one on x ∪ {max + 1}
    assert x.size + 1 == p1.size
    product = discrete_tradeoff(np.outer(p1, p1).ravel(), np.outer(q1, q1).ravel(), A).beta
    ours = integer_noise_tradeoff(law, shift, 2, A)
    assert ours.exact
    np.testing.assert_allclose(ours.beta, product, atol=1e-11)
    # ... and the PLD of one release composed twice lies below it (pessimistic), closely.
    pld_eps = integer_noise_pld(law, shift, 2).epsilon(1e-6)
    assert knots_epsilon(ours, 1e-6) <= pld_eps * (1 + 1e-8)
    assert knots_epsilon(ours, 1e-6) == pytest.approx(pld_eps, rel=2e-2)


def test_sum_of_shares_against_direct_convolution():
    share = discrete_gaussian_law(0.8)
    summed = sum_of_shares(share, 5)
    direct = share.probs
    for _ in range(4):
        direct = np.convolve(direct, share.probs)
    # The sum's window is ±(10 sd + one share's reach); the direct sum is wider, with
    # nothing above 1e-20 outside that window.
    x_direct = np.arange(direct.size) + 5 * share.offset
    x_sum = np.arange(summed.probs.size) + summed.offset
    inside = (x_direct >= x_sum[0]) & (x_direct <= x_sum[-1])
    assert direct[~inside].sum() < 1e-20
    np.testing.assert_allclose(summed.probs, direct[inside], atol=1e-15)
    assert summed.variance == pytest.approx(5 * share.variance, rel=1e-12)
    # The sum is more private than one share; close to N_Z of the summed variance.
    one = integer_noise_tradeoff(share, 1, 1, A).beta
    five = integer_noise_tradeoff(summed, 1, 1, A).beta
    assert np.all(five >= one - 1e-12) and np.max(five - one) > 0.05
    central = integer_noise_tradeoff(discrete_gaussian_law(0.8 * math.sqrt(5)), 1, 1, A).beta
    np.testing.assert_allclose(five, central, atol=5e-3)


def test_skellam_against_scipy():
    var, shift = 20.0, 3
    law = skellam_law(var)
    x = np.arange(law.probs.size) + law.offset
    np.testing.assert_allclose(law.probs, stats.skellam.pmf(x, var / 2, var / 2),
                               rtol=1e-9, atol=1e-300)
    p, q = direct_pair(lambda t: stats.skellam.logpmf(t, var / 2, var / 2), (-150, 150), shift)
    direct = discrete_tradeoff(p, q, A).beta
    ours = integer_noise_tradeoff(law, shift, 1, A).beta
    np.testing.assert_allclose(ours, direct, atol=2e-12)
    assert np.max(np.abs(integer_noise_tradeoff(skellam_law(1.05 * var), shift, 1, A).beta
                         - ours)) > 1e-3


def test_skellam_profile_is_the_engines_delta():
    var, shift = 50.0, 2
    curve = integer_noise_tradeoff(skellam_law(var), shift, 1, A)
    for eps in (0.2, 0.8):
        ours = float(tradeoff_to_profile(curve, eps))
        assert ours == pytest.approx(skellam_delta(var, shift, eps), rel=1e-8, abs=2e-12)


def test_composed_skellam_is_pessimistic_and_marked():
    law = skellam_law(10.0)
    one = integer_noise_tradeoff(law, 1, 1, A)
    three = integer_noise_tradeoff(law, 1, 3, A)
    assert one.exact and not three.exact
    assert np.all(three.beta <= one.beta + 1e-12)


def test_bad_noise_says_one_thing():
    from dpstudio.engine.errors import ParameterError

    with pytest.raises(ParameterError, match="σ"):
        discrete_gaussian_law(0.0)
    with pytest.raises(ParameterError, match="variance"):
        skellam_law(-1.0)
    with pytest.raises(ParameterError, match="sensitivity"):
        integer_noise_tradeoff(discrete_gaussian_law(1.0), 0)


@pytest.mark.parametrize("shifts", [1, 3])
def test_large_sensitivity_keeps_the_tails(shifts):
    # Δ ≫ σ: the noise is evaluated where P is 1e-100, not cut to 0 (which would put a
    # jump at α = 0 and no finite ε at small δ); the sum of shares is widened alike.
    sigma, shift = 3.0, 25
    p, q = direct_pair(lambda x: -(x * x) / (2 * sigma**2), (-300, 300), shift)
    direct = discrete_tradeoff(p, q, A).beta
    ours = integer_noise_tradeoff(discrete_gaussian_law(sigma), shift, 1, A)
    np.testing.assert_allclose(ours.beta, direct, atol=1e-12)
    assert ours.beta[0] == pytest.approx(1.0, abs=1e-12)
    assert math.isfinite(knots_epsilon(ours, 1e-6))
    # An FFT sum reads 0 where its pmf is below the rounding (~1e-17): pessimistic, and
    # only at α = 0 (what Q puts there is tiny).
    summed = sum_of_shares(discrete_gaussian_law(1.0), 9, reach=shift * shifts)
    curve = integer_noise_tradeoff(summed, shift * shifts, 1, A)
    assert 1 - 1e-6 < curve.beta[0] <= 1.0
    direct9 = integer_noise_tradeoff(discrete_gaussian_law(3.0), shift * shifts, 1, A).beta
    np.testing.assert_allclose(curve.beta[1:], direct9[1:], atol=1e-3)
