"""A local mean's simulated estimates drawn from the law of its sum, not record by record.

``sample_estimates`` must give the same distribution as ``estimate(randomize(values))``:
two-sample Kolmogorov–Smirnov tests at fixed seeds, moments against the known variance,
and a power check (a sampler 20% too wide is rejected).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstudio.engine.local.mean import DuchiMean, LocalGaussian, LocalLaplace
from dpstudio.engine.local.tally import bernoulli_totals, tally_values
from dpstudio.engine.rng import SimulationSource

REPS = 3000
BOUNDS = (0.0, 10.0)


def _oracles():
    return [LocalLaplace(1.0, BOUNDS), LocalGaussian(1.0, BOUNDS, 1e-5),
            DuchiMean(1.0, BOUNDS), DuchiMean(3.0, BOUNDS)]


def _values(kind: str) -> np.ndarray:
    rng = np.random.default_rng(5)
    if kind == "few distinct":  # integers, some outside the bounds (clamped)
        return rng.integers(-2, 14, 240).astype(float)
    return rng.normal(5.0, 4.0, 240)  # every value distinct: one entry per record


def _per_record(obj, values: np.ndarray) -> np.ndarray:
    source = SimulationSource(11)
    return np.array([obj.estimate(obj.randomize(values, source), values.size)
                     for _ in range(REPS)])


@pytest.mark.parametrize("kind", ["few distinct", "all distinct"])
@pytest.mark.parametrize("index", range(4))
def test_sampled_estimates_have_the_per_record_law(kind: str, index: int) -> None:
    obj = _oracles()[index]
    values = _values(kind)
    tally = tally_values(values)
    assert tally.grouped == (kind == "few distinct")
    old = _per_record(obj, values)
    new = obj.sample_estimates(tally, REPS, SimulationSource(12))
    assert new.shape == (REPS,)
    assert stats.ks_2samp(old, new).pvalue > 1e-3
    # Moments: unbiased for the clamped mean, with the oracle's variance.
    clamped = np.clip(values, *BOUNDS)
    x = 2.0 * (clamped - BOUNDS[0]) / (BOUNDS[1] - BOUNDS[0]) - 1.0
    var = obj.variance(values.size, float(np.mean(x * x)))
    assert abs(new.mean() - clamped.mean()) < 4.0 * math.sqrt(var / REPS)
    assert new.var(ddof=1) == pytest.approx(var, rel=4.0 * math.sqrt(2.0 / REPS))
    # Power: the same test rejects a sampler 20% too wide.
    wide = new.mean() + 1.2 * (new - new.mean())
    assert stats.ks_2samp(old, wide).pvalue < 1e-3


def test_a_wrong_epsilon_is_rejected() -> None:
    values = _values("few distinct")
    old = _per_record(LocalLaplace(1.0, BOUNDS), values)
    new = LocalLaplace(1.4, BOUNDS).sample_estimates(tally_values(values), REPS,
                                                     SimulationSource(12))
    assert stats.ks_2samp(old, new).pvalue < 1e-3


def test_sampled_estimates_are_reproducible_and_cost_distinct_values_not_rows() -> None:
    values = np.random.default_rng(1).integers(18, 91, 5_000_000).astype(float)
    tally = tally_values(values)
    assert tally.values.size == 73 and tally.n == values.size
    obj = LocalLaplace(1.0, (18.0, 90.0))
    a = obj.sample_estimates(tally, 200, SimulationSource(3))
    b = obj.sample_estimates(tally, 200, SimulationSource(3))
    np.testing.assert_array_equal(a, b)
    assert np.std(a) == pytest.approx(math.sqrt(obj.variance(values.size)), rel=0.15)


def test_bernoulli_totals_match_their_binomial_moments() -> None:
    gen = np.random.default_rng(2)
    probs, counts = np.array([0.1, 0.5, 0.9]), np.array([100, 40, 10])
    draws = bernoulli_totals(probs, counts, 20_000, gen)
    mean = float(np.dot(probs, counts))
    var = float(np.dot(probs * (1 - probs), counts))
    assert draws.mean() == pytest.approx(mean, abs=4 * math.sqrt(var / 20_000))
    assert draws.var() == pytest.approx(var, rel=0.05)


def test_tally_groups_integers_and_floats() -> None:
    t = tally_values(np.array([3.0, 1.0, 3.0, 3.0, 1.0, 2.5, 2.5, 2.5]))
    assert t.grouped and t.n == 8
    assert dict(zip(t.values.tolist(), t.counts.tolist(), strict=True)) == {
        1.0: 2, 2.5: 3, 3.0: 3}
    t = tally_values(np.array([4.0, 4.0, 7.0, 4.0]))
    assert dict(zip(t.values.tolist(), t.counts.tolist(), strict=True)) == {4.0: 3, 7.0: 1}
