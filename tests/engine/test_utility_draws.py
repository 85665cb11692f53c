"""The Monte-Carlo utility curve reads the column once and draws exactly a release's
distribution (issue 12, item 18); the analytic curve of the integer mechanisms uses their
exact noise."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from dpstudio.engine.queries import QuerySpec, simulate_query
from dpstudio.engine.release_draws import ReleaseDraws
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.utility import analytic_curve, monte_carlo_curve

RNG = np.random.default_rng(12)
#: Two-decimal values (distinct fractional parts on every grid), some outside the bounds,
#: some missing.
DECIMALS = np.round(RNG.normal(30.0, 9.0, 3000), 2)
DECIMALS[RNG.random(3000) < 0.03] = np.nan
WHOLE = np.round(RNG.normal(40.0, 12.0, 3000))
CATEGORIES = np.array(["a", "b", "c", None] * 500, dtype=object)

SPECS = [
    ("sum", QuerySpec("sum", "laplace", 1.0, bounds=(18.0, 60.0))),
    ("mean", QuerySpec("mean", "laplace", 1.0, bounds=(18.0, 60.0))),
    ("mean-gauss-replace", QuerySpec("mean", "gaussian", 1.0, delta=1e-6, bounds=(18.0, 60.0),
                                     relation="replace")),
    ("mean-imputed", QuerySpec("mean", "laplace", 1.0, bounds=(18.0, 60.0),
                               relation="replace", missing="impute")),
    ("variance", QuerySpec("variance", "laplace", 1.0, bounds=(18.0, 60.0))),
    ("count", QuerySpec("count", "gaussian", 1.0, delta=1e-6)),
    ("sum-discrete", QuerySpec("sum", "discrete_laplace", 1.0, bounds=(0.0, 100.0))),
    ("histogram", QuerySpec("histogram", "laplace", 1.0, bounds=(0.0, 100.0), bins=7)),
    ("median", QuerySpec("median", "exponential", 1.0, bounds=(0.0, 100.0))),
]


@pytest.mark.parametrize("name,spec", SPECS, ids=[n for n, _ in SPECS])
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 30.0])
def test_draws_are_the_releases_own_numbers(name, spec, epsilon):
    """Same source, same numbers as the engine's bulk simulation of the release: the same
    plan, grid, rounding and noise, only read off the data once."""
    values = WHOLE if "discrete" in name else DECIMALS
    draws = ReleaseDraws(values, spec).draw(epsilon, 300, SimulationSource(7))
    direct = simulate_query(values, replace(spec, epsilon=epsilon), 300, SimulationSource(7))
    np.testing.assert_array_equal(draws, direct)


def test_categorical_histogram_draws_are_the_releases_own_numbers():
    spec = QuerySpec("histogram", "discrete_gaussian", 2.0, delta=1e-6,
                     categories=("a", "b", "c"), relation="replace")
    np.testing.assert_array_equal(ReleaseDraws(CATEGORIES, spec).draw(2.0, 200,
                                                                      SimulationSource(3)),
                                  simulate_query(CATEGORIES, spec, 200, SimulationSource(3)))


def test_many_distinct_values_take_the_engines_normal_rounding():
    """Beyond 2^24 binomial draws the engine approximates the count rounded up by a normal
    law; the draws do the same (the sums' order differs, so equal up to one step)."""
    values = np.random.default_rng(2).uniform(0.0, 100.0, 200_000)
    spec = QuerySpec("sum", "laplace", 1.0, bounds=(0.0, 100.0))
    draws = ReleaseDraws(values, spec).draw(1.0, 100, SimulationSource(5))
    direct = simulate_query(values, spec, 100, SimulationSource(5))
    grid = 2.0 ** (math.frexp(100.0)[1] - 1 - 15)
    np.testing.assert_allclose(draws, direct, atol=1.01 * grid, rtol=0)


class _CountingColumn:
    """A column that counts how often it is read as an array."""

    def __init__(self, values: np.ndarray) -> None:
        self.values, self.reads = values, 0

    def __array__(self, dtype=None, copy=None):
        self.reads += 1
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self) -> int:
        return len(self.values)


@pytest.mark.parametrize("query", ["mean", "variance", "histogram"])
def test_the_monte_carlo_curve_reads_the_rows_once_whatever_the_number_of_epsilons(query):
    """Each ε costs noise draws, not another pass over every row (before: one pass per ε,
    so 21 ε read the column 21 times)."""
    spec = QuerySpec(query, "laplace", 1.0, bounds=(18.0, 60.0),
                     bins=5 if query == "histogram" else None)
    reads = []
    for eps in (np.array([1.0]), np.geomspace(0.01, 100.0, 21)):
        column = _CountingColumn(DECIMALS)
        monte_carlo_curve(column, spec, eps, 50, SimulationSource(1))
        reads.append(column.reads)
    assert reads[0] == reads[1] <= 3


def test_the_curve_costs_the_same_for_a_larger_column_of_the_same_values():
    """Ten times the rows with the same distinct values: the same draws per ε (the
    statistics scale, the randomness does not grow with n)."""
    spec = QuerySpec("sum", "laplace", 1.0, bounds=(18.0, 60.0), relation="replace",
                     missing="impute")
    small = ReleaseDraws(WHOLE, spec)
    large = ReleaseDraws(np.tile(WHOLE, 10), spec)
    assert [p.values.size for p in small._parts] == [p.values.size for p in large._parts]
    assert [p.size for p in large._parts] == [10 * p.size for p in small._parts]


def test_the_analytic_curve_of_a_discrete_mechanism_is_its_exact_noise():
    """At ε = 12 the discrete Laplace of scale 2/ε on a replace-one histogram is mostly 0:
    its standard deviation is √(2r)/(1 − r) with r = e^{-6}, ≈ 0.071, not the continuous
    twin's 2√2/12 ≈ 0.24 (before); the simulation agrees."""
    spec = QuerySpec("histogram", "discrete_laplace", 12.0, categories=("a", "b", "c"),
                     relation="replace")
    eps = np.array([12.0])
    ana = analytic_curve(spec, eps, values=CATEGORIES)
    r = math.exp(-12.0 / 2.0)
    exact = math.sqrt(2.0 * r) / (1.0 - r)
    assert ana.error[0] == pytest.approx(exact, rel=1e-9)
    assert ana.error[0] < 0.5 * 2 * math.sqrt(2) / 12
    sim = monte_carlo_curve(CATEGORIES, spec, eps, 100_000, SimulationSource(4))
    assert sim.low[0] <= ana.error[0] <= sim.high[0]
    tv = analytic_curve(spec, eps, metric="tv", values=CATEGORIES)
    sim_tv = monte_carlo_curve(CATEGORIES, spec, eps, 100_000, SimulationSource(4),
                               metric="tv")
    assert sim_tv.low[0] <= tv.error[0] <= sim_tv.high[0]
