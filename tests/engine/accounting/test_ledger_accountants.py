"""The four ledger accountants (basic, advanced, zcdp, pld) on loss descriptions, each
checked against an independent computation: the exact composition of Gaussians (one
Gaussian of μ = √k Δ/σ, Balle & Wang's δ(ε) written out here with scipy.stats), the
closed form of Kairouz, Oh & Viswanath's Theorem 3.3, the exact hockey-stick divergence
of composed worst-case pairs by enumeration, and the CKS20 conversion minimized on a grid.
"""

import math
from decimal import Decimal

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from dpstudio.engine.accounting.ledger import (
    ACCOUNTANTS,
    fits,
    remaining,
    spent,
    spent_by_all,
)
from dpstudio.engine.accounting.loss import LossDescription as L
from dpstudio.engine.accounting.rdp import rdp_epsilon, rdp_subsampled_gaussian
from dpstudio.engine.additive import NoiseFamily
from dpstudio.engine.calibration import analytic_gaussian_sigma, discrete_gaussian_delta
from dpstudio.engine.errors import ParameterError

# The pld accountant's ε is pessimistic and within the 1e-3 of the exact ε (the
# contract, PLD_TOLERANCE); at the default grid step 1e-4 the measured gaps are far
# smaller (1.3e-7 for the twenty Gaussians, 6e-8 for seven, ~1e-10 for one discrete
# Gaussian), so the twenty-Gaussian check also holds it to PLD_MEASURED.
PLD_TOLERANCE = 1e-3
PLD_MEASURED = 1e-5


def exact_gaussian_delta(mu: float, eps: float) -> float:
    # Balle & Wang 2018, Thm 8, for a Gaussian of Δ/σ = μ (written independently of the
    # engine's calibration and gdp modules).
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def exact_gaussian_epsilon(mu: float, delta: float) -> float:
    return brentq(lambda e: exact_gaussian_delta(mu, e) - delta, 0.0, 50.0, xtol=1e-14)


def twenty_gaussians():
    sigma = analytic_gaussian_sigma(1.0, 0.5, 1e-6)
    return sigma, [L("gaussian", 0.5, 1e-6, scale=sigma, sensitivity=1.0)] * 20


def test_twenty_gaussians_pld_below_zcdp_below_basic_all_pessimistic():
    sigma, releases = twenty_gaussians()
    got = spent_by_all(releases)
    assert got["basic"].epsilon == 10.0 and got["basic"].delta == 2e-5
    for r in got.values():
        assert r.delta == 2e-5 and r.releases == 20
    exact = exact_gaussian_epsilon(math.sqrt(20) / sigma, 2e-5)
    pld, zc, adv = got["pld"].epsilon, got["zcdp"].epsilon, got["advanced"].epsilon
    assert exact <= pld <= exact + PLD_MEASURED
    assert pld < zc < 10.0
    assert exact <= zc and exact <= adv <= 10.0
    # What tight accounting buys here: basic 10, zCDP ≈ 2.34, PLD ≈ 2.15 (exact ≈ 2.146).
    assert zc == pytest.approx(2.3413, abs=1e-3) and exact == pytest.approx(2.1464, abs=1e-3)


def test_pld_gaussian_tight_at_another_delta_and_scale():
    # A wrong noise scale (σ 2% smaller) must move the exact ε by more than the tolerance.
    rel = [L("gaussian", 1.0, 1e-5, scale=5.0, sensitivity=1.0)] * 7
    got = spent(rel, "pld", delta=1e-6)
    exact = exact_gaussian_epsilon(math.sqrt(7) / 5.0, 1e-6)
    assert exact <= got.epsilon <= exact + PLD_TOLERANCE and got.delta == 1e-6
    assert exact_gaussian_epsilon(math.sqrt(7) / 4.9, 1e-6) > exact + 10 * PLD_TOLERANCE


def kov_theorem_33(eps0, del0, k, i):
    # Kairouz, Oh & Viswanath 2015, Thm 3.3: (k − 2i)ε₀ at δ_i.
    s = sum(math.comb(k, ell) * (math.exp((k - ell) * eps0) - math.exp((k - 2 * i + ell) * eps0))
            for ell in range(i))
    return (k - 2 * i) * eps0, 1 - (1 - del0) ** k * (1 - s / (1 + math.exp(eps0)) ** k)


@pytest.mark.parametrize("i", [1, 3, 5])
def test_advanced_is_kov_optimal_on_a_homogeneous_case(i):
    k, eps0, del0 = 12, 0.4, 1e-6
    eps_i, delta_i = kov_theorem_33(eps0, del0, k, i)
    got = spent([L("approx", eps0, del0)] * k, "advanced", delta=delta_i)
    assert "Kairouz" in got.method and got.delta == delta_i
    assert got.epsilon == pytest.approx(eps_i, rel=1e-9)
    assert got.epsilon <= spent([L("approx", eps0, del0)] * k).epsilon


def exact_two_level_delta(a, e1, b, e2, eps):
    # Worst-case pairs of pure ε-DP (loss ±ε with odds e^ε : 1), a of ε₁ and b of ε₂,
    # composed exactly: the loss is ε₁(2i − a) + ε₂(2j − b) with binomial weights.
    p1, p2 = math.exp(e1) / (1 + math.exp(e1)), math.exp(e2) / (1 + math.exp(e2))
    total = 0.0
    for i in range(a + 1):
        for j in range(b + 1):
            loss = e1 * (2 * i - a) + e2 * (2 * j - b)
            prob = (math.comb(a, i) * p1**i * (1 - p1) ** (a - i)
                    * math.comb(b, j) * p2**j * (1 - p2) ** (b - j))
            total += prob * max(0.0, -math.expm1(eps - loss))
    return total


def test_advanced_heterogeneous_is_valid_and_never_above_basic():
    a, e1, b, e2 = 30, 0.05, 20, 0.08
    rel = [L("pure", e1)] * a + [L("pure", e2)] * b
    basic = a * e1 + b * e2
    got = spent(rel, "advanced", delta=1e-3)
    assert got.epsilon < basic
    assert exact_two_level_delta(a, e1, b, e2, got.epsilon) <= 1e-3
    # KOV Thm 3.5 by hand (δ̃ = 1e-3, no δᵢ): the smaller of its two square-root terms.
    e = np.array([e1] * a + [e2] * b)
    drift, sq = float(np.sum(e * np.expm1(e) / (np.exp(e) + 1))), float(np.sum(e**2))
    hand = drift + math.sqrt(2 * sq * min(math.log(math.e + math.sqrt(sq) / 1e-3),
                                          math.log(1e3)))
    assert "Thm 3.5" in got.method and got.epsilon == pytest.approx(hand, rel=1e-8)
    # The PLD of the same worst pairs is valid and tighter.
    pld = spent(rel, "pld", delta=1e-3).epsilon
    assert exact_two_level_delta(a, e1, b, e2, pld) <= 1e-3 and pld < got.epsilon
    # Large ε: basic is smaller and reported, with a note.
    big = spent([L("pure", 2.0), L("pure", 3.0)], "advanced", delta=1e-6)
    assert big.epsilon == 5.0 and big.method == "basic composition" and big.notes


def test_zcdp_of_pure_releases_is_half_epsilon_squared_converted_by_cks():
    rel = [L("laplace", 0.1, scale=10.0, sensitivity=1.0)] * 40
    got = spent(rel, "zcdp", delta=1e-6)
    rho = 40 * 0.1**2 / 2
    alphas = 1 + np.exp(np.linspace(-8, 8, 400_001))
    cks = np.min(alphas * rho + (math.log(1e6) + (alphas - 1) * np.log1p(-1 / alphas)
                                 - np.log(alphas)) / (alphas - 1))
    # The grid's minimum is within ~1e-9 above the infimum.
    assert cks - 1e-8 <= got.epsilon <= cks + 1e-6
    assert got.epsilon < rho + 2 * math.sqrt(rho * math.log(1e6)) < 4.0
    # At δ = 0 (all pure, no δ given) zCDP has no ε: basic, with a note.
    flat = spent(rel, "zcdp")
    assert flat.epsilon == pytest.approx(4.0) and flat.delta == 0 and flat.notes


def test_zcdp_adds_approx_releases_by_basic_and_says_so():
    sigma = analytic_gaussian_sigma(1.0, 0.5, 1e-6)
    gauss = [L("gaussian", 0.5, 1e-6, scale=sigma, sensitivity=1.0)] * 20
    alone = spent(gauss, "zcdp", delta=1e-5)
    mixed = spent(gauss + [L("approx", 0.3, 2e-6)], "zcdp", delta=1e-5)
    assert any("cannot enter zCDP" in n for n in mixed.notes)
    # ε of the Gaussians at δ − 2e-6, plus 0.3.
    assert mixed.epsilon == pytest.approx(spent(gauss, "zcdp", delta=8e-6).epsilon + 0.3,
                                          rel=1e-9)
    assert mixed.epsilon > alone.epsilon + 0.3


@pytest.mark.parametrize("coordinates,sigma", [(1, 3.0), (2, 4.0), (1, 0.7)])
def test_pld_of_discrete_gaussian_against_its_exact_delta(coordinates, sigma):
    d = L("discrete_gaussian", 30.0, 1e-6, scale=sigma, sensitivity=1, coordinates=coordinates)
    got = spent([d], "pld", delta=1e-6).epsilon
    exact = brentq(lambda e: discrete_gaussian_delta(sigma, 1, e, coordinates) - 1e-6,
                   0.0, 50.0, xtol=1e-13)
    assert exact <= got <= exact + PLD_TOLERANCE
    assert discrete_gaussian_delta(sigma, 1, got, coordinates) <= 1e-6


def test_pld_of_dpsgd_is_below_rdp_and_other_families_compose():
    d = L("subsampled_gaussian", 3.0, 1e-5, scale=1.1, sensitivity=1.0, sample_rate=0.01,
          steps=500)
    pld = spent([d], "pld", delta=1e-5).epsilon
    assert pld <= rdp_epsilon(rdp_subsampled_gaussian(1.1, 0.01) * 500, 1e-5)
    mix = [d, L("randomized_response", 1.0, k=4),
           L("discrete_laplace", 0.5, scale=2.0, sensitivity=1),
           L("laplace", 1.0, scale=2.0, sensitivity=1.0, coordinates=2)]
    got = spent(mix, "pld", delta=2e-5)
    assert pld < got.epsilon <= spent(mix).epsilon and not got.notes


def test_engine_integer_noise_is_described_exactly():
    # A replace-one histogram (2 coordinates) with the engine's own calibrations; the
    # PLD's ε at the claimed δ is valid against the exact δ and at most the claim.
    gauss = NoiseFamily("discrete_gaussian", "gaussian", integer_grid=True).calibrate(
        1, 1.0, 0.8, 1e-6, 2)
    lap = NoiseFamily("laplace", "laplace", integer_grid=True).calibrate(1, 1.0, 0.8, 1e-6, 2)
    for noise in (gauss, lap):
        d = L.from_integer_noise(noise)
        assert d.coordinates == 2 and L.from_dict(d.to_dict()) == d
        got = spent([d], "pld", delta=1e-6).epsilon
        assert got <= 0.8 + PLD_TOLERANCE
        if noise is gauss:
            assert discrete_gaussian_delta(noise.scale, 1, got, 2) <= 1e-6 < \
                discrete_gaussian_delta(noise.scale, 1, got - PLD_TOLERANCE, 2)
        else:
            # Two discrete Laplaces of loss ±1/t: the sum is 2/t w.p. 1/(1 + r)², r = e^{−1/t}.
            t = noise.scale
            top = (1 / (1 + math.exp(-1 / t))) ** 2
            assert top * -math.expm1(got - 2 / t) <= 1e-6 < \
                top * -math.expm1(got - PLD_TOLERANCE - 2 / t)
    # Two coordinates of Laplace are two Laplaces: the PLD is their composition, and
    # below the pure ε = 2Δ/b at δ > 0.
    two = spent([L("laplace", 1.0, scale=2.0, sensitivity=1.0, coordinates=2)], "pld",
                delta=1e-3).epsilon
    pair = spent([L("laplace", 0.5, scale=2.0, sensitivity=1.0)] * 2, "pld", delta=1e-3)
    assert two == pair.epsilon < 1.0


ORDER = [
    L("gaussian", 0.5, 1e-6, scale=analytic_gaussian_sigma(1.0, 0.5, 1e-6), sensitivity=1.0),
    L("laplace", 0.2, scale=5.0, sensitivity=1.0),
    L("gaussian", 0.5, 1e-6, scale=analytic_gaussian_sigma(1.0, 0.5, 1e-6), sensitivity=1.0),
    L("approx", 0.3, 1e-6),
    L("randomized_response", 0.4, k=3),
    L("composed", parts=(L("pure", 0.1), L("laplace", 0.5, scale=2.0, sensitivity=1.0))),
    L("gaussian", 1.0, 1e-6, scale=analytic_gaussian_sigma(1.0, 1.0, 1e-6), sensitivity=1.0),
]


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
def test_adding_a_release_never_decreases_spent_epsilon(accountant):
    previous = 0.0
    for n in range(1, len(ORDER) + 1):
        got = spent(ORDER[:n], accountant, delta=None if accountant == "basic" else 1e-5)
        assert got.epsilon >= previous, (n, got)
        assert got.epsilon <= spent(ORDER[:n]).epsilon  # never above basic
        previous = got.epsilon


def test_remaining_and_fits_follow_the_accountant():
    sigma, releases = twenty_gaussians()
    basic = spent(releases)
    eps_left, delta_left = remaining(12, 1e-4, basic)
    assert eps_left == Decimal("2.0") and delta_left == Decimal("0.00008")
    assert not fits(9, 1e-4, releases, "basic") and fits(9, 1e-4, releases, "pld")
    assert remaining(3, 1e-4, spent(releases, "pld"))[0] > 0
    assert spent([], "pld").epsilon == 0.0
    # Basic sums the claims exactly as typed: ten 0.1s spend exactly 1.
    assert spent([L("pure", 0.1)] * 10).epsilon == 1.0


FAMILY_EXAMPLES = [
    L("laplace", 1.0, scale=1.0, sensitivity=1.0),
    L("discrete_laplace", 0.5, scale=2.0, sensitivity=1, coordinates=1),
    L("gaussian", 0.5, 1e-6, scale=analytic_gaussian_sigma(2.0, 0.5, 1e-6), sensitivity=2.0),
    L("discrete_gaussian", 1.0, 1e-4, scale=5.0, sensitivity=1, coordinates=2),
    L("randomized_response", 1.0, k=5),
    L("subsampled_gaussian", 2.0, 1e-5, scale=1.0, sensitivity=1.0, sample_rate=0.01, steps=10),
    L("pure", 0.3),
    L("approx", 0.3, 1e-7),
    L("composed", parts=(L("pure", 0.3), L("approx", 0.3, 1e-7))),
]


@pytest.mark.parametrize("desc", FAMILY_EXAMPLES, ids=lambda d: d.mechanism)
def test_description_round_trips_through_json(desc):
    import json

    data = json.loads(json.dumps(desc.to_dict()))
    assert data["schema_version"] == 1 and data["mechanism"] == desc.mechanism
    assert L.from_dict(data) == desc


@pytest.mark.parametrize("data,message", [
    ({"mechanism": "pure", "epsilon": 1.0, "colour": "red"}, "unknown field"),
    ({"schema_version": 3, "mechanism": "pure", "epsilon": 1.0}, "newer"),
    ({"mechanism": "cauchy", "epsilon": 1.0}, "unknown mechanism"),
    ({"mechanism": "laplace", "epsilon": 0.5, "scale": 1.0, "sensitivity": 1.0}, "noise gives"),
    ({"mechanism": "gaussian", "epsilon": 0.5, "delta": 1e-6, "scale": 5.0, "sensitivity": 1.0},
     "noise gives"),
    ({"mechanism": "gaussian", "epsilon": 0.5, "delta": 1e-6, "scale": 9.0, "sensitivity": 1.0,
      "norm": "l1"}, "L2"),
    ({"mechanism": "pure", "epsilon": 1.0, "delta": 1e-6}, "approx"),
    ({"mechanism": "approx", "epsilon": 1.0}, "δ > 0"),
    ({"mechanism": "pure", "epsilon": 1.0, "scale": 2.0}, "no field"),
    ({"mechanism": "composed", "parts": []}, "nonempty"),
    ({"mechanism": "subsampled_gaussian", "epsilon": 1.0, "delta": 1e-5, "scale": 1.0,
      "sensitivity": 1.0, "sample_rate": 0.1}, "steps"),
    ({"mechanism": "discrete_gaussian", "epsilon": 1.0, "delta": 1e-5, "scale": 3.0,
      "sensitivity": 1.5}, "integer"),
    (["pure", 1.0], "JSON object"),
])
def test_description_refusals_are_one_sentence(data, message):
    with pytest.raises(ParameterError, match=message) as info:
        L.from_dict(data)
    assert "\n" not in str(info.value)


def test_spent_refuses_bad_input():
    with pytest.raises(ParameterError, match="accountant"):
        spent([L("pure", 1.0)], "rdp")
    with pytest.raises(ParameterError, match="LossDescription"):
        spent([{"mechanism": "pure", "epsilon": 1.0}], "basic")


class _CancelAfter:
    def __init__(self, calls):
        self.calls, self.fractions = calls, []

    def progress(self, fraction, message=""):
        self.fractions.append(fraction)

    def cancelled(self):
        self.calls -= 1
        return self.calls < 0


def test_pld_reports_progress_and_can_be_cancelled_and_order_does_not_matter():
    from dpstudio.jobs import Cancelled

    rel = [L("laplace", e, scale=1 / e, sensitivity=1.0) for e in (0.1, 0.2, 0.3, 0.4, 0.5)]
    state = _CancelAfter(100)
    forward = spent(rel, "pld", delta=1e-6, state=state)
    assert state.fractions and state.fractions[-1] == 1.0
    assert state.fractions == sorted(state.fractions)
    backward = spent(rel[::-1], "pld", delta=1e-6)
    assert backward.epsilon == pytest.approx(forward.epsilon, abs=1e-6)
    with pytest.raises(Cancelled):
        spent(rel, "pld", delta=1e-6, state=_CancelAfter(3))
