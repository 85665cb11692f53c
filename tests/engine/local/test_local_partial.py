"""Local, shuffle and secure-aggregation protocols from partitions' aggregates.

One partition run with the same source is ``run_local`` / ``run_shuffle_sum`` exactly;
several partitions give the estimator of their concatenated reports bit for bit; the
estimates' spread over independent runs is the protocol's exact variance, and the
variance of a wrong ε is rejected.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstudio.engine.distributed.partial import (
    SumPartial,
    add_sum_partials,
    finish_secure,
    plan_secure_partial,
    secure_partial,
    split_dropouts,
)
from dpstudio.engine.errors import QueryError
from dpstudio.engine.local import OLHReports, run_local
from dpstudio.engine.local.partial import (
    LocalPartial,
    add_local_partials,
    estimate_local,
    local_partial,
    plan_local,
)
from dpstudio.engine.local.respond import histogram_inputs, mean_inputs
from dpstudio.engine.local.sketch import CMSReports
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.shuffle import run_shuffle_sum
from dpstudio.engine.shuffle.partial import (
    finish_shuffle,
    plan_shuffle_partial,
    shuffle_partial,
)

LABELS = ("a", "b", "c", "d")
HISTOGRAMS = ["krr", "rr", "sue", "oue", "olh", "hadamard", "cms"]
MEANS = ["local_laplace", "local_gaussian", "duchi"]
CUTS = (0, 700, 1100, 2400)  # three partitions of unequal sizes


def _params(name):
    return {"epsilon": 1.0} | ({"delta": 1e-6} if name == "local_gaussian" else {})


def _column(name, n=2400, seed=4):
    rng = np.random.default_rng(seed)
    if name in MEANS:
        x = rng.normal(50, 30, n)  # some outside the bounds
        x[::41] = np.nan
        return x
    return rng.choice(list(LABELS) + ["z", None], n).astype(object)


def _kw(name):
    if name in MEANS:
        return {"query": "mean", "bounds": (0, 100)}
    return {"query": "histogram", "categories": LABELS[:2] if name == "rr" else LABELS}


@pytest.mark.parametrize("name", HISTOGRAMS + MEANS)
def test_one_partition_is_run_local_exactly(name):
    values = _column(name)
    expected = run_local(values, name, _params(name), source=SimulationSource(9),
                         postprocess="clip", **_kw(name))
    src = SimulationSource(9)  # the plan draws what run_local draws first (the cms family)
    plan = plan_local(name, _params(name), source=src, **_kw(name))
    total = add_local_partials([local_partial(values, plan, src)])
    got = estimate_local(total, plan, SimulationSource(9), postprocess="clip")
    assert got.to_dict() == expected.to_dict()
    assert (got.missing, got.reports) == (expected.missing, None)


@pytest.mark.parametrize("name", ["rr", "krr"])
def test_a_yes_no_column_without_categories_is_run_local_exactly(name):
    values = np.array([True, False, None, True] * 300, dtype=object)
    expected = run_local(values, name, {"epsilon": 1.0}, source=SimulationSource(3))
    src = SimulationSource(3)
    plan = plan_local(name, {"epsilon": 1.0}, boolean=True, source=src)
    got = estimate_local(add_local_partials([local_partial(values, plan, src)]), plan,
                         SimulationSource(3))
    assert got.to_dict() == expected.to_dict()


def _concatenated(plan, values, seeds):
    """Every partition's reports, drawn as local_partial draws them, put end to end."""
    oracle = plan.oracle()
    reports = []
    for (lo, hi), seed in zip(zip(CUTS[:-1], CUTS[1:], strict=True), seeds, strict=True):
        src = SimulationSource(seed)
        part = values[lo:hi]
        given = (mean_inputs(part, oracle.lower, oracle.upper) if plan.query == "mean"
                 else histogram_inputs(part, list(plan.labels), src, other=plan.other))
        reports.append(oracle.randomize(given.values, src))
    first = reports[0]
    if isinstance(first, tuple):  # OLH and CMS reports are named tuples of arrays
        kind = OLHReports if isinstance(first, OLHReports) else CMSReports
        return oracle, kind(*(np.concatenate(f) for f in zip(*reports, strict=True)))
    return oracle, np.concatenate(reports)


@pytest.mark.parametrize("name", HISTOGRAMS + MEANS)
def test_partitions_give_the_estimate_of_their_concatenated_reports(name):
    values, seeds = _column(name), (101, 102, 103)
    plan = plan_local(name, _params(name), source=SimulationSource(1), **_kw(name))
    parts = [local_partial(values[lo:hi], plan, SimulationSource(s))
             for lo, hi, s in zip(CUTS[:-1], CUTS[1:], seeds, strict=True)]
    got = estimate_local(add_local_partials(reversed(parts)), plan, SimulationSource(0))
    oracle, reports = _concatenated(plan, values, seeds)
    whole = oracle.estimate(reports, values.size)
    if plan.query == "mean":
        assert got.unbiased == whole
    else:
        assert list(got.unbiased.values()) == whole.tolist()
    assert got.n == values.size == sum(p.n for p in parts)
    for p in parts:  # only integers, of the plan's shape
        assert type(p) is LocalPartial and len(p.counts) == plan.size
        assert all(type(v) is int for v in p.integers())


def _spread(name, epsilon, reps=300):
    """Independent partitioned estimates of one cell (or the mean), and the data."""
    values = _column(name, n=600, seed=8)
    params = {"epsilon": 1.0} | ({"delta": 1e-6} if name == "local_gaussian" else {})
    plan = plan_local(name, params, source=SimulationSource(2), **_kw(name))
    cut = [(0, 200), (200, 600)]
    out = []
    for r in range(reps):
        parts = [local_partial(values[lo:hi], plan, SimulationSource(20_000 + 2 * r + i))
                 for i, (lo, hi) in enumerate(cut)]
        res = estimate_local(add_local_partials(parts), plan, SimulationSource(0))
        out.append(res.unbiased if plan.query == "mean" else res.unbiased["a"])
    wrong = plan_local(name, dict(params, epsilon=epsilon), source=SimulationSource(2),
                       **_kw(name)).oracle()
    return np.array(out), values, plan.oracle(), wrong


@pytest.mark.parametrize("name", ["krr", "oue", "duchi", "local_laplace"])
def test_the_estimates_spread_as_the_exact_variance_and_a_wrong_epsilon_is_rejected(name):
    draws, values, oracle, wrong = _spread(name, epsilon=1.6)
    n = values.size
    if name in MEANS:
        given = mean_inputs(values, 0.0, 100.0).values
        truth = float(np.clip(given, 0, 100).mean())
        x2 = float(np.mean((2 * np.clip(given, 0, 100) / 100 - 1) ** 2))
        var = oracle.variance(n, x2) if name == "duchi" else oracle.variance(n)
        var_wrong = wrong.variance(n, x2) if name == "duchi" else wrong.variance(n)
    else:
        codes = histogram_inputs(values, list(LABELS), SimulationSource(0)).values
        counts = np.bincount(codes, minlength=len(LABELS) + 1)
        truth = float(counts[0])
        var = float(oracle.variance(n, counts)[0])
        var_wrong = float(wrong.variance(n, counts)[0])
    # Unbiased: the mean of 300 draws within 4 standard errors of the truth.
    assert abs(draws.mean() - truth) < 4 * np.sqrt(var / draws.size)
    # The sample variance of 300 draws is within 0.7–1.4 of the exact one (sd ≈ 8%), and
    # the variance of ε = 1.6 instead of 1 (about 2.5 times smaller) falls outside.
    ratio = draws.var(ddof=1) / var
    assert 0.7 < ratio < 1.4
    assert not 0.7 < draws.var(ddof=1) / var_wrong < 1.4


def test_heavy_hitters_and_foreign_aggregates_are_refused():
    with pytest.raises(QueryError, match="sequence-fragment puzzle reads every report"):
        plan_local("sfp", {"epsilon": 2.0}, source=SimulationSource(0))
    plan = plan_local("krr", {"epsilon": 1.0}, categories=LABELS, source=SimulationSource(0))
    with pytest.raises(QueryError, match="column is empty"):
        estimate_local(local_partial(np.array([], dtype=object), plan, SimulationSource(1)),
                       plan, SimulationSource(0))
    other = LocalPartial("oue", "histogram", (1, 2, 3, 4, 5), 5)
    with pytest.raises(QueryError, match="different protocols"):
        add_local_partials([local_partial(_column("krr")[:10], plan, SimulationSource(1)),
                            other])
    with pytest.raises(QueryError, match="not of this protocol"):
        estimate_local(other, plan, SimulationSource(0))
    # A yes/no column without categories has the cells False/True; others must declare.
    yes = plan_local("krr", {"epsilon": 1.0}, boolean=True, source=SimulationSource(0))
    assert yes.cells[:2] == ["False", "True"]
    with pytest.raises(QueryError, match="declared categories"):
        plan_local("krr", {"epsilon": 1.0}, query="histogram", source=SimulationSource(0))


# ------------------------------------------------------------------ shuffle, secure sum


@pytest.mark.parametrize("name", ["cloak", "blanket"])
def test_one_partition_is_run_shuffle_sum_exactly(name):
    x = _column("duchi", n=1500)
    expected = run_shuffle_sum(x, (0, 100), name, 1.0, 1e-6, SimulationSource(5),
                               query="mean").to_dict()
    plan = plan_shuffle_partial(x.size, (0, 100), name, 1.0, 1e-6, "mean")
    got = finish_shuffle(shuffle_partial(x, plan, SimulationSource(5)), plan,
                         SimulationSource(5)).to_dict()
    assert got.pop("notes")[:-1] == expected.pop("notes")
    assert got == expected


def _grid_values(n=400):
    return (np.arange(n) % 2).astype(float)  # 0 and 1: on the grid, no random rounding


@pytest.mark.parametrize("name, kind", [("cloak", "shuffle"), ("blanket", "shuffle"),
                                        ("skellam", "secure"),
                                        ("secagg_gaussian", "secure")])
def test_partitioned_sums_spread_as_the_planned_noise(name, kind):
    x, reps = _grid_values(), 200
    cut = [(0, 150), (150, 400)]

    def plan_at(eps):
        if kind == "shuffle":
            return plan_shuffle_partial(x.size, (0, 1), name, eps, 1e-6, "sum")
        return plan_secure_partial(x.size, (0, 1), name, eps, 1e-6, query="sum")

    plan = plan_at(1.0)
    finish = finish_shuffle if kind == "shuffle" else finish_secure
    partial = shuffle_partial if kind == "shuffle" else secure_partial
    values = []
    for r in range(reps):
        parts = [partial(x[lo:hi], plan, SimulationSource(500 + 2 * r + i))
                 for i, (lo, hi) in enumerate(cut)]
        out = finish(add_sum_partials(parts), plan, SimulationSource(0))
        values.append(out.value)
    draws = np.array(values)
    var = out.stderr ** 2  # exact here: the values are on the grid (blanket: its bound)
    assert abs(draws.mean() - x.sum()) < 4 * np.sqrt(var / reps)
    ratio = draws.var(ddof=1) / var
    if name == "blanket":  # the blanket's stderr bounds the variance from above
        assert 0.5 < ratio < 1.3
        return
    assert 0.7 < ratio < 1.35
    wrong = finish(add_sum_partials([partial(x, plan_at(2.0), SimulationSource(1))]),
                   plan_at(2.0), SimulationSource(0)).stderr ** 2
    assert not 0.7 < draws.var(ddof=1) / wrong < 1.35


def test_dropouts_are_spread_by_the_hypergeometric_law_and_checked():
    rows = [100, 300, 600]
    splits = np.array([split_dropouts(rows, 50, SimulationSource(s)) for s in range(400)])
    assert (splits.sum(axis=1) == 50).all()
    # Mean of each partition's share: 50·rows/1000, within 4 standard errors.
    expected = 50 * np.array(rows) / 1000
    sd = np.sqrt(50 * np.array(rows) / 1000 * (1 - np.array(rows) / 1000) * 950 / 999)
    assert (np.abs(splits.mean(axis=0) - expected) < 4 * sd / 20).all()
    x = _grid_values(1000)
    plan = plan_secure_partial(1000, (0, 1), "skellam", 1.0, 1e-6, dropouts=30,
                               query="sum", max_dropouts=40)
    drops = split_dropouts(rows, 30, SimulationSource(3))
    starts = np.cumsum([0, *rows])
    parts = [secure_partial(x[a:b], plan, SimulationSource(20 + i), d)
             for i, (a, b, d) in enumerate(zip(starts[:-1], starts[1:], drops, strict=True))]
    out = finish_secure(add_sum_partials(parts), plan, SimulationSource(0))
    assert out.n == 970 and out.dropouts == 30
    assert abs(out.value - 485) < 6 * out.stderr  # 970 survivors, half of them ones
    with pytest.raises(Exception, match="planned for at most 40"):
        plan_secure_partial(1000, (0, 1), "skellam", 1.0, 1e-6, dropouts=41, max_dropouts=40)
    with pytest.raises(QueryError, match="did the files change"):
        finish_secure(add_sum_partials(parts[:2]), plan, SimulationSource(0))
    assert add_sum_partials([SumPartial("cloak", 5, 7, 1, 1), SumPartial("cloak", 4, 7, 1, 1)]
                            ).total == 2
