"""Release plans: the split by weights and by accuracy targets (issue 14).

The accuracy test simulates each statistic with the engine's own release distribution
(``simulate_query``: the same grid, integer noise and post-processing as a release) at the
ε the plan computed, and reads the half-width off the simulations: the smallest h with
|answer − truth| ≤ h in the plan's confidence of them. With 2,000 draws the 95% quantile
of |Laplace| has a relative standard error of √(0.95·0.05/2000)/(0.05·ln 20) ≈ 3.3%, of
|Gaussian| ≈ 2.1%: the 5% tolerance the issue asks for is 1.5–2.4 standard errors, and a
split 15% off (the power check) is rejected.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstudio.analysis.plan import PlanError, PlanStatistic, ReleasePlan
from dpstudio.analysis.plan_resolve import plan_from_rows
from dpstudio.analysis.plan_split import half_width, split_weights
from dpstudio.engine.queries import QuerySpec, simulate_query
from dpstudio.engine.rng import SimulationSource

N = 2000
SIMS = 2000


def _column() -> np.ndarray:
    # Whole numbers inside the bounds: no clamping bias, the error is the noise alone.
    return np.random.default_rng(7).integers(0, 11, N).astype(np.float64)


def _plan(relation: str = "replace") -> ReleasePlan:
    stats = (
        PlanStatistic("score", "count", target=4.0),
        PlanStatistic("score", "sum", bounds=(0.0, 10.0), target=80.0, mechanism="gaussian",
                      missing="impute"),
        PlanStatistic("score", "mean", bounds=(0.0, 10.0), target=0.04, missing="impute"),
    )
    return ReleasePlan(stats, epsilon=4.0, delta=1e-6, method="accuracy", confidence=0.95,
                       relation=relation, rows=N)


def _empirical_half_width(plan: ReleasePlan, i: int, values: np.ndarray, seed: int,
                          scale: float = 1.0) -> float:
    eps, delta = plan.shares()[i]
    spec = plan.query_spec(i, eps * scale, delta)
    draws = simulate_query(values, spec, SIMS, SimulationSource(seed))
    truth = {"count": values.size, "sum": values.sum(), "mean": values.mean()}[spec.query]
    return float(np.quantile(np.abs(draws - truth), plan.confidence))


def test_accuracy_targets_met_in_simulation():
    plan = _plan()
    values = _column()
    assert plan.refusal() is None
    for i, s in enumerate(plan.statistics):
        got = _empirical_half_width(plan, i, values, seed=100 + i)
        assert got == pytest.approx(s.target, rel=0.05), (s.label, got, s.target)


def test_accuracy_power_a_wrong_epsilon_is_rejected():
    # The same check with each ε 15% too large: every statistic misses its target.
    plan = _plan()
    values = _column()
    for i, s in enumerate(plan.statistics):
        got = _empirical_half_width(plan, i, values, seed=200 + i, scale=1.15)
        assert abs(got / s.target - 1.0) > 0.05, (s.label, got)


def test_mean_over_noisy_count_is_planned_at_the_worst_mean():
    # Under add-remove the count is noisy: the plan assumes the worst mean |m| = 10, so a
    # column near the bound meets the target (at 9.8 its half-width is 1.5% smaller, and
    # the clip at 10 lies four targets away) and a column in the middle does better.
    stat = PlanStatistic("score", "mean", bounds=(0.0, 10.0), target=0.05)
    plan = ReleasePlan((stat,), epsilon=2.0, method="accuracy", relation="add-remove",
                       rows=N)
    worst = np.full(N, 9.8)
    got = _empirical_half_width(plan, 0, worst, seed=5)
    assert got == pytest.approx(0.05, rel=0.05)
    typical = _column()  # mean 5: the count's noise counts a quarter as much
    assert _empirical_half_width(plan, 0, typical, seed=6) < 0.05


def test_two_laplace_tail_against_simulation():
    spec = QuerySpec("mean", "laplace", 1.0, bounds=(-4.0, 10.0), relation="add-remove",
                     confidence=0.9)
    h = half_width(spec, rows=500)
    # Independent: the error (Z_sum − 10·Z_count)/500 with Z ~ Laplace(2Δ/ε), by sampling.
    g = np.random.default_rng(3)
    z = (g.laplace(0, 20.0, 400_000) - 10.0 * g.laplace(0, 2.0, 400_000)) / 500
    assert h == pytest.approx(np.quantile(np.abs(z), 0.9), rel=0.01)


def test_weights_split_sums_to_the_total():
    plan = _plan().with_weights([1.0, 2.0, 5.0])
    shares = plan.shares()
    assert math.fsum(e for e, _ in shares) == pytest.approx(4.0, rel=1e-12)
    assert [e for e, _ in shares] == pytest.approx([0.5, 1.0, 2.5])
    # δ goes to the one statistic whose mechanism takes it (the Gaussian sum).
    assert [d for _, d in shares] == [0.0, 1e-6, 0.0]
    assert plan.total() == (4.0, 1e-6)
    assert split_weights([1, 1], 1.0, 0.0, [False, False]) == [(0.5, 0.0), (0.5, 0.0)]
    pure = plan_from_rows([{"column": "a", "query": "count"}] * 2, 1.0, delta=1e-6)
    assert pure.total() == (1.0, 0.0)  # no mechanism takes δ: none is spent


def test_expected_errors_follow_the_split():
    plan = _plan().with_weights([1.0, 1.0, 1.0])
    before = plan.expected_errors()
    after = plan.with_weights([1.0, 1.0, 4.0]).expected_errors()
    assert after[2].expected < before[2].expected  # more ε for the mean
    assert after[0].expected > before[0].expected  # less for the count
    # Laplace: the error scales as 1/ε exactly.
    assert before[0].expected / after[0].expected == pytest.approx(
        after[0].epsilon / before[0].epsilon)
    assert before[0].half_width == pytest.approx(math.log(20) / before[0].epsilon)


def test_expected_errors_on_data_match_the_analysis_layer():
    from dpstudio.analysis.bias import release_bias
    from dpstudio.analysis.choices import Choices
    from dpstudio.engine.utility import analytic_curve

    values = np.r_[_column(), [25.0] * 50]  # clamped values: a bias
    plan = plan_from_rows([{"column": "score", "query": "mean", "bounds": [0, 10]}], 1.0,
                          public_rows=N)
    row = plan.expected_errors({"score": values})[0]
    spec = plan.query_spec(0)
    noise = analytic_curve(spec, np.array([1.0]), "rmse", values).error[0]
    bias = release_bias(Choices("score", "numeric", ("numeric",), "central", "mean",
                                "laplace", bounds=(0.0, 10.0)), values)
    assert bias < 0
    assert row.expected == pytest.approx(math.hypot(noise, bias))


def test_refusals_are_one_sentence():
    over = _plan()
    over = ReleasePlan(over.statistics, epsilon=0.5, delta=1e-6, method="accuracy",
                       relation="replace", rows=N)
    msg = over.refusal()
    assert msg.startswith("the targets need ε = ") and "more than the plan's ε = 0.5" in msg
    with pytest.raises(PlanError):
        over.shares()
    no_rows = ReleasePlan(over.statistics, epsilon=9.0, delta=1e-6, method="accuracy",
                          relation="replace")
    assert "needs a public number of rows" in no_rows.refusal()
    untargeted = plan_from_rows([{"column": "a", "query": "count"}], 1.0, method="accuracy")
    assert "has no target" in untargeted.refusal()
    assert "weights must be positive" in _plan().with_weights([1, 0, 1]).refusal()
    grouped = plan_from_rows([{"column": "a", "query": "count", "by": ["region"]}], 1.0)
    assert "keys of 'region' are not declared" in grouped.refusal()


def test_the_table_shows_what_targets_need_even_when_refused():
    over = ReleasePlan(_plan().statistics, epsilon=0.5, delta=1e-6, method="accuracy",
                       relation="replace", rows=N)
    table = over.table()
    assert table.refusal.startswith("the targets need ε = ")
    assert [r.half_width for r in table.rows] == pytest.approx([4.0, 80.0, 0.04])
    assert table.total[0] > 0.5
    fine = _plan().table()
    assert fine.refusal is None and fine.total[0] == pytest.approx(
        sum(e for e, _ in _plan().shares()))
