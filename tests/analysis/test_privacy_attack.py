"""The trade-off view's simulated attack on a release of several Laplace statistics is the
engine's (:func:`dpstudio.engine.attack.simulate_laplace_parts_attack`), on the parts the
engine's release curve names, and its boxes sit on that curve."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dpstudio.analysis.choices import Choices
from dpstudio.analysis.privacy import tradeoff
from dpstudio.engine.attack import simulate_laplace_parts_attack
from dpstudio.engine.rng import SimulationSource


def _mean(epsilon: float) -> Choices:
    return Choices(column="age", column_type="numeric", value_types=("numeric",),
                   trust_model="central", query="mean", mechanism="laplace",
                   epsilon=epsilon, bounds=(0.0, 100.0), confidence=0.95)


def test_a_laplace_mean_is_attacked_as_its_two_noisy_sums():
    r = tradeoff(_mean(1.2), draws=20_000, seed=4)
    expected = simulate_laplace_parts_attack(0.6, 2, 20_000, SimulationSource(4))
    np.testing.assert_array_equal(r.attack.alpha, expected.alpha)
    np.testing.assert_array_equal(r.attack.beta_high, expected.beta_high)
    # The likelihood-ratio test is the Neyman–Pearson one: its boxes meet the exact curve
    # of the two sums composed (all but a few of 21 at 95% each) ...
    on = np.interp(r.attack.alpha_high, r.mechanism.alpha, r.mechanism.beta)
    under = np.interp(r.attack.alpha_low, r.mechanism.alpha, r.mechanism.beta)
    meets = (on <= r.attack.beta_high) & (under >= r.attack.beta_low)
    assert meets.mean() > 0.8
    # ... and not the curve of one sum at the whole ε, which an attacker on one sum could
    # get below: two sums at ε/2 each are more private than that (power of the check).
    one = tradeoff(replace(_mean(1.2), query="sum"), draws=20_000)
    single = np.interp(r.attack.alpha_low, one.mechanism.alpha, one.mechanism.beta)
    assert np.any(single < r.attack.beta_low)
