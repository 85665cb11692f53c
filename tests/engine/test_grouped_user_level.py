"""User-level grouped statistics (issue 14): one person's up to k rows may fall into
several groups, and the noise covers k × a row's change over all groups' cells (ℓ₁ and
ℓ₂ — all k rows in one group is the worst case for ℓ₂)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.queries.grouped import (
    grouped_noises,
    grouped_sensitivities,
    simulate_grouped,
)
from dpstudio.engine.rng import SimulationSource

KEYS = (("north", "south", "east"),)
K = 4


def _spec(query: str, mechanism: str = "laplace", eps: float = 0.5,
          relation: str = "add-remove") -> QuerySpec:
    return QuerySpec(query, mechanism, eps, delta=1e-6 if mechanism == "gaussian" else 0.0,
                     bounds=(0.0, 10.0), relation=relation, column="amount")


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("query", ["count", "sum", "mean"])
def test_every_noise_is_k_times_the_row_level_one(query, mechanism):
    spec = _spec(query, mechanism).validated()
    row, person = grouped_noises(spec), grouped_noises(spec, K)
    assert row.keys() == person.keys()
    for name in row:
        # Same coordinates (one cell, the worst case for ℓ₂), k × the sensitivity.
        assert person[name].coordinates == row[name].coordinates == 1
        assert person[name].sensitivity_value == pytest.approx(
            K * row[name].sensitivity_value, rel=1e-12)
        # The integer grid may differ; the value-unit scale is k × the row's to the grid.
        assert person[name].noise_scale == pytest.approx(K * row[name].noise_scale,
                                                         rel=2e-4)
    sens = {n: s for n, s, _ in grouped_sensitivities(spec, K)}
    assert sens == {n: K * s for n, s, _ in grouped_sensitivities(spec)}


def test_the_cell_change_of_one_person_is_within_k_rows_in_l1_and_l2():
    # Every placement of one person's k rows over the groups: the change of the counts
    # vector has ℓ₁ = k and ℓ₂ ≤ k (= k only when all fall in one group); of the sums with
    # values in [0, B], both ≤ k·B. The calibrated sensitivity (one coordinate) is k·Δ.
    g = np.random.default_rng(5)
    B = 10.0
    for _ in range(200):
        cells = g.integers(0, 3, K)
        vals = g.uniform(0, B, K)
        count = np.bincount(cells, minlength=3).astype(float)
        sums = np.bincount(cells, weights=vals, minlength=3)
        assert np.abs(count).sum() == K and np.linalg.norm(count) <= K
        assert np.abs(sums).sum() <= K * B and np.linalg.norm(sums) <= K * B + 1e-9
    one_group = np.array([K, 0, 0], dtype=float)
    assert np.linalg.norm(one_group) == K  # the ℓ₂ worst case is attained
    assert dict((n, s) for n, s, _ in grouped_sensitivities(_spec("sum"), K)) == {
        "sum": K * B}


def test_k_above_one_needs_add_remove():
    with pytest.raises(QueryError, match="add-remove"):
        grouped_noises(_spec("count", relation="replace").validated(), K)


def _tail_ratio(k_noise: int) -> tuple[float, float]:
    """P[cell ≥ c + k | D′] / P[cell ≥ c + k | D] for the worst neighbouring pair:
    D′ adds one person whose k rows all fall in "north" (counts by group)."""
    rng = np.random.default_rng(11)
    base = rng.uniform(0, 10, 300)
    region = np.array(["north", "south", "east"] * 100, dtype=object)
    d2_values = np.r_[base, np.full(K, 5.0)]
    d2_region = np.r_[region, np.array(["north"] * K, dtype=object)]
    spec = _spec("count")
    n = 40_000
    a = simulate_grouped(base, [region], KEYS, spec, n, SimulationSource(21), k_noise)[:, 0]
    b = simulate_grouped(d2_values, [d2_region], KEYS, spec, n, SimulationSource(22),
                         k_noise)[:, 0]
    t = 100 + K  # "north" holds 100 rows in D, 100 + k in D′
    p_d, p_d2 = np.mean(a >= t), np.mean(b >= t)
    return p_d2 / p_d, p_d


def test_worst_pair_audit_accepts_k_scaled_noise_and_rejects_the_row_level_scale():
    eps = 0.5
    ratio, p = _tail_ratio(K)
    # The Laplace tail ratio is e^(k/b) = e^ε at b = k/ε; tolerance 5 standard errors of
    # the ratio's log (binomial: √((1 − p)/(n p)) each side).
    se = math.sqrt((1 - p) / (40_000 * p)) + math.sqrt(0.5 / 40_000)
    assert math.log(ratio) <= eps + 5 * se
    assert math.log(ratio) >= eps - 5 * se  # and not vacuously: the loss is attained
    # Power: at the row-level scale b = 1/ε the same pair shows a loss of kε = 2 ≫ ε.
    wrong, p_w = _tail_ratio(1)
    se_w = math.sqrt((1 - p_w) / (40_000 * p_w)) + math.sqrt(0.5 / 40_000)
    assert math.log(wrong) > eps + 5 * se_w
    assert math.log(wrong) == pytest.approx(K * eps, abs=5 * se_w + 0.05)
