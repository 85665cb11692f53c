"""Grouped counts, sums and means over declared keys (dpstudio.engine.queries.grouped)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.queries.grouped import (
    grouped_cells,
    grouped_noises,
    grouped_release,
    simulate_grouped,
)
from dpstudio.engine.queries.sums import _sum_noise
from dpstudio.engine.rng import SecureSource, SimulationSource

KEYS = (("north", "south", "east"),)  # "east" is declared and absent from the data


def _data(undeclared: bool):
    g = np.random.default_rng(1)
    values = g.uniform(20, 60, 600)
    region = np.array(["north", "south"] * 300, dtype=object)
    if not undeclared:
        return values, region
    # Rows under an undeclared key ("west", a secret enclave) and a missing key.
    extra = g.uniform(20, 60, 40)
    return (np.r_[values, extra, [55.0]],
            np.r_[region, np.array(["west"] * 40 + [None], dtype=object)])


def _spec(query: str, relation: str = "add-remove", eps: float = 1.0) -> QuerySpec:
    return QuerySpec(query, "laplace", eps, bounds=(0.0, 100.0), relation=relation,
                     column="age")


@pytest.mark.parametrize("query", ["count", "sum", "mean"])
def test_absent_declared_key_appears_with_noise(query):
    values, region = _data(False)
    spec = _spec(query)
    out = grouped_release(values, [region], KEYS, spec, SecureSource(), by=("region",))
    public = out.public()
    assert list(public["value"]) == ["north", "south", "east"]
    draws = simulate_grouped(values, [region], KEYS, spec, 400, SimulationSource(3))
    assert draws.shape == (400, 3)
    assert np.std(draws[:, 2]) > 0  # "east": noise only, and it varies
    if query == "count":  # unbiased around 0, with the Laplace(1/ε) spread
        assert abs(draws[:, 2].mean()) < 4 * math.sqrt(2) / math.sqrt(400)


@pytest.mark.parametrize("query", ["count", "sum", "mean"])
def test_undeclared_key_is_never_revealed(query):
    # The release with the undeclared rows is the release without them, draw for draw:
    # those rows reach no cell and consume no randomness.
    spec = _spec(query)
    a_values, a_region = _data(False)
    b_values, b_region = _data(True)
    a = grouped_release(a_values, [a_region], KEYS, spec, SimulationSource(9))
    b = grouped_release(b_values, [b_region], KEYS, spec, SimulationSource(9))
    assert b.labels() == ["north", "south", "east"]
    assert "west" not in str(b.public())
    np.testing.assert_array_equal(a.value, b.value)


def test_noise_is_the_ungrouped_one_under_add_remove_and_two_cells_under_replace():
    for query in ("count", "sum"):
        add = grouped_noises(_spec(query, "add-remove"))[query]
        grid, ungrouped = _sum_noise(*((0.0, 1.0) if query == "count" else (0.0, 100.0)), 1,
                                     _family_of(), _spec(query, "add-remove"))
        assert add.noise_scale == pytest.approx(ungrouped.noise_scale, rel=1e-9)
        rep = grouped_noises(_spec(query, "replace"))[query]
        # A record moving between groups changes two cells: ℓ₁ twice the per-cell one.
        assert rep.sensitivity_value == pytest.approx(2 * add.sensitivity_value, rel=1e-9)
        assert rep.noise_scale == pytest.approx(2 * add.noise_scale, rel=1e-9)
    mean = grouped_noises(_spec("mean"))
    assert set(mean) == {"sum", "count"} and mean["sum"].epsilon == 0.5


def _family_of():
    from dpstudio.engine.queries.sums import _family

    return _family(_spec("sum"))


def test_grouped_sum_spread_matches_the_noise():
    values, region = _data(False)
    spec = _spec("sum", eps=0.5)
    draws = simulate_grouped(values, [region], KEYS, spec, 4000, SimulationSource(4))
    truth = np.array([values[region == "north"].sum(), values[region == "south"].sum(), 0.0])
    noise = grouped_noises(spec)["sum"]
    sd = math.sqrt(noise.variance)
    # Mean within 4 standard errors; variance within 4 standard errors of a Laplace's
    # sample variance (kurtosis 6: sd of s² ≈ σ²·√(5/n)).
    assert np.all(np.abs(draws.mean(0) - truth) < 4 * sd / math.sqrt(4000))
    assert np.all(np.abs(draws.var(0) / sd**2 - 1) < 4 * math.sqrt(5 / 4000))
    # Power: a noise of 1.2× the scale would be rejected by the same check.
    assert np.all(np.abs(1.2**2 - 1) > 4 * math.sqrt(5 / 4000))


@pytest.mark.parametrize("query", ["count", "sum", "mean"])
def test_grouped_answers_are_centred_on_each_group(query):
    values, region = _data(True)
    spec = _spec(query, eps=2.0)
    draws = simulate_grouped(values, [region], KEYS, spec, 2000, SimulationSource(8))
    groups = [values[region == k] for k in ("north", "south")]
    stat = {"count": len, "sum": np.sum, "mean": np.mean}[query]
    truth = np.array([stat(x) for x in groups])
    # Within 5 standard errors of the simulated spread (the mean's ratio bias is
    # O(1/n²) here, far below that).
    se = draws[:, :2].std(0) / math.sqrt(2000)
    assert np.all(np.abs(draws[:, :2].mean(0) - truth) < 5 * se + 1e-9), (draws.mean(0),
                                                                          truth)
    # Power: a count or sum off by one noise scale would be rejected.
    assert np.all(5 * se < draws[:, :2].std(0))


def test_two_key_columns_make_product_cells():
    g = np.random.default_rng(2)
    values = g.uniform(0, 10, 300)
    a = np.array(["x", "y", "q"] * 100, dtype=object)  # "q" undeclared
    b = np.array(["1", "2"] * 150, dtype=object)
    keys = (("x", "y"), ("1", "2", "3"))
    out = grouped_release(values, [a, b], keys, _spec("count"), SecureSource(),
                          by=("a", "b"))
    assert out.labels() == ["x / 1", "x / 2", "x / 3", "y / 1", "y / 2", "y / 3"]
    assert len(grouped_cells(keys)) == 6


def test_grouped_mean_intervals_and_loss():
    values, region = _data(False)
    out = grouped_release(values, [region], KEYS, _spec("mean", eps=2.0), SecureSource())
    assert np.all(out.ci_low <= out.value) and np.all(out.value <= out.ci_high)
    assert np.all((0 <= out.ci_low) & (out.ci_high <= 100))
    loss = out.loss_description()
    assert loss.mechanism == "composed" and loss.epsilon == pytest.approx(2.0)


def test_bad_input_is_one_sentence():
    values, region = _data(False)
    with pytest.raises(QueryError, match="cannot be grouped"):
        grouped_release(values, [region], KEYS, QuerySpec("histogram", "laplace", 1.0,
                                                          categories=("a",)),
                        SecureSource())
    with pytest.raises(QueryError, match="one or two"):
        grouped_cells((("a",), ("b",), ("c",)))
    with pytest.raises(QueryError, match="differ in length"):
        grouped_release(values, [region[:10]], KEYS, _spec("count"), SecureSource())


def test_vectorized_on_a_million_rows():
    g = np.random.default_rng(0)
    values = g.uniform(0, 100, 1_000_000)
    region = g.choice(np.array(["north", "south", "east"], dtype=object), 1_000_000)
    start = time.perf_counter()
    grouped_release(values, [region], KEYS, _spec("mean"), SecureSource())
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize("query", ["count", "sum"])
def test_worst_pair_privacy_loss_is_epsilon_under_replace(query):
    # The worst neighbours under replace: one record moves from one group to another,
    # carrying the value that changes its cells most (for a sum, the bound of largest
    # size). The exact privacy loss of the two cells' integer noise, from its pmf, is the
    # sum of the two cells' log-ratios: ε exactly, and 2ε with the add-remove calibration
    # (the power check).
    eps = 0.7
    noise = grouped_noises(_spec(query, "replace", eps))[query]
    weak = grouped_noises(_spec(query, "add-remove", eps))[query]
    shift = noise.sensitivity  # per cell, in grid steps (one row's largest move)

    def loss(n, shift):
        k = np.arange(-40 * int(n.scale) - 4 * shift, 40 * int(n.scale) + 4 * shift)
        one = np.max(np.abs(np.log(n.pmf(k)) - np.log(n.pmf(k - shift))))
        return 2 * one  # two cells change, independently noised

    assert loss(noise, shift) == pytest.approx(eps, rel=1e-9)
    assert loss(weak, weak.sensitivity) == pytest.approx(2 * eps, rel=1e-9)
