"""Bounded contributions per person (issue 14): the random bounding of each person's rows
and the empirical audit of a user-level count on the worst neighbouring pair."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpstudio.engine.contribution import (
    bound_contributions,
    person_relation,
    release_user_level,
    run_user_level,
    user_sensitivity,
)
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec, run_query
from dpstudio.engine.rng import InsecureSourceError, SecureSource, SimulationSource


def test_every_person_keeps_at_most_k_rows_and_the_few_keep_all():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 500, 20_000).astype(object)
    ids[rng.random(ids.size) < 0.01] = None  # rows without an identifier: left out
    keep = bound_contributions(ids, 3, SimulationSource(2))
    present = np.array([i is not None for i in ids])
    assert not keep[~present].any()
    kept = np.bincount(ids[keep].astype(int), minlength=500)
    had = np.bincount(ids[present].astype(int), minlength=500)
    assert kept.max() <= 3
    np.testing.assert_array_equal(kept, np.minimum(had, 3))  # no one loses rows below k


def test_strings_and_numbers_as_identifiers():
    ids = np.array(["a", "b", "a", "a", "c", "b", "a"], dtype=object)
    keep = bound_contributions(ids, 2, SimulationSource(0))
    assert sorted(ids[keep].tolist()) == ["a", "a", "b", "b", "c"]
    keep = bound_contributions(np.array([7.0, np.nan, 7.0, 7.0]), 1, SimulationSource(0))
    assert keep.sum() == 1 and not keep[1]


def _kept_subsets(keep, m, k):
    """Index (0 … C(m,k)−1) of the subset of positions each person kept."""
    subsets = {s: i for i, s in enumerate(itertools.combinations(range(m), k))}
    per = keep.reshape(-1, m)
    assert (per.sum(1) == k).all()
    positions = np.nonzero(per)[1].reshape(-1, k)
    return np.array([subsets[tuple(p)] for p in positions])


def _chi2_pvalue(subset_index, cells):
    observed = np.bincount(subset_index, minlength=cells)
    return stats.chisquare(observed).pvalue


def test_drops_are_uniform_among_a_persons_rows():
    # 6,000 people with 6 rows each, k = 2: each of the 15 pairs kept equally often.
    m, k, people = 6, 2, 6_000
    # Rows in file order, person by person: a rule keeping the first k rows fails.
    ids = np.repeat(np.arange(people), m)
    keep = bound_contributions(ids, k, SimulationSource(4))
    cells = math.comb(m, k)
    assert _chi2_pvalue(_kept_subsets(keep, m, k), cells) > 1e-3
    # Power: a rule that favours a person's earlier rows (two of the first four) is
    # rejected by the same test.
    biased = np.zeros((people, m), dtype=bool)
    rng = np.random.default_rng(5)
    first = np.argsort(rng.random((people, 4)), axis=1)[:, :k]
    np.put_along_axis(biased, first, True, axis=1)
    assert _chi2_pvalue(_kept_subsets(biased.ravel(), m, k), cells) < 1e-6


def test_sensitivities_scale_with_k():
    count = QuerySpec("count", "laplace", 1.0)
    assert user_sensitivity(count, 4) == {"count": 4.0}
    s = QuerySpec("sum", "laplace", 1.0, bounds=(-30.0, 10.0))
    assert user_sensitivity(s, 4) == {"sum": 120.0}  # k · max(|lo|, |hi|)
    mean = QuerySpec("mean", "laplace", 1.0, bounds=(0.0, 10.0))
    assert user_sensitivity(mean, 3) == {"sum": 30.0, "count": 3.0}
    hist = QuerySpec("histogram", "laplace", 1.0, categories=("a", "b"))
    # Add or remove one person: ≤ k rows, all possibly in one cell: ℓ₁ = ℓ₂ = k.
    assert user_sensitivity(hist, 5) == {"histogram": 5.0}
    assert person_relation(3) == "add or remove one person (up to 3 rows)"


def test_released_noise_follows_k():
    ids = np.repeat(np.arange(50), 4).astype(object)
    values = np.linspace(0, 10, ids.size)
    mean = QuerySpec("mean", "laplace", 1.0, bounds=(0.0, 10.0))
    r = run_user_level(values, ids, mean, 3, SimulationSource(1))
    assert r.relation == "add or remove one person (up to 3 rows)"
    assert r.sensitivities == {"sum": 30.0, "count": 3.0}
    # Each of the two sums has ε/2: Laplace scale 2·k·Δ/ε.
    scales = {c["statistic"]: c["noise_scale"] for c in r.components}
    assert scales["count"] == pytest.approx(6.0) and scales["sum"] == pytest.approx(60.0)
    g = QuerySpec("histogram", "gaussian", 1.0, delta=1e-6, categories=("a", "b"))
    labels = np.where(np.arange(ids.size) % 2 == 0, "a", "b").astype(object)
    one = run_query(labels, g, SimulationSource(2))
    five = run_user_level(labels, ids, g, 5, SimulationSource(2))
    assert five.noise_scale == pytest.approx(5 * one.noise_scale, rel=0.02)


def test_refusals_in_one_line():
    ids, values = np.array(["a", "b"], dtype=object), np.array([1.0, 2.0])
    with pytest.raises(QueryError, match="add-remove"):
        run_user_level(values, ids, QuerySpec("count", "laplace", 1.0, relation="replace"),
                       2, SimulationSource(0))
    with pytest.raises(QueryError, match="not a median"):
        run_user_level(values, ids, QuerySpec("median", "exponential", 1.0, bounds=(0, 5)),
                       2, SimulationSource(0))
    with pytest.raises(QueryError, match="max_rows"):
        bound_contributions(ids, 0, SimulationSource(0))
    with pytest.raises(QueryError, match="max_rows"):
        bound_contributions(ids, 2.5, SimulationSource(0))
    with pytest.raises(QueryError, match="rows but"):
        run_user_level(values, ids[:1], QuerySpec("count", "laplace", 1.0), 2,
                       SimulationSource(0))
    with pytest.raises(InsecureSourceError):
        release_user_level(values, ids, QuerySpec("count", "laplace", 1.0), 2,
                           SimulationSource(0))
    out = release_user_level(values, ids, QuerySpec("count", "laplace", 1.0), 2,
                             SecureSource())
    assert out.simulated is False


def _worst_event_log_ratio(on_d, on_d2, threshold):
    """log P[out ≥ t | D'] / P[out ≥ t | D] and its standard error (the worst event of
    a count shifted up by k under Laplace noise)."""
    a, b = np.mean(on_d2 >= threshold), np.mean(on_d >= threshold)
    se = math.sqrt((1 - a) / (a * on_d2.size) + (1 - b) / (max(b, 1e-9) * on_d.size))
    return math.log(a / max(b, 1e-9)), se


def test_audit_worst_pair_count_is_calibrated_to_k():
    # D: 20 people with 1–3 rows; D′: D plus one person with 2k rows (k kept after
    # bounding). The released count moves by k: the worst event {out ≥ count(D) + k}.
    k, eps, draws = 4, 1.0, 4_000
    rng = np.random.default_rng(7)
    ids = np.repeat(np.arange(20), rng.integers(1, 4, 20)).astype(object)
    ids2 = np.concatenate([ids, np.full(2 * k, 999, dtype=object)])
    spec = QuerySpec("count", "laplace", eps)
    source = SimulationSource(8)

    def outputs(who, user_level):
        values = np.ones(who.size)
        if user_level:
            return np.array([run_user_level(values, who, spec, k, source).value
                             for _ in range(draws)])
        return np.array([run_query(values, spec, source).value for _ in range(draws)])

    base = ids.size
    on_d, on_d2 = outputs(ids, True), outputs(ids2, True)
    loss, se = _worst_event_log_ratio(on_d, on_d2, base + k)
    assert loss <= eps + 4 * se, (loss, se)
    assert loss >= eps - 4 * se  # tight: the event attains e^ε
    # Power: a noise calibrated to one row (the record-level release) on the same pair
    # (here the added person brings 2k rows, unbounded) is rejected by the same audit.
    wrong_d, wrong_d2 = outputs(ids, False), outputs(ids2, False)
    wrong, wrong_se = _worst_event_log_ratio(wrong_d, wrong_d2, base + k)
    assert wrong > eps + 4 * wrong_se + 1.0, (wrong, wrong_se)
