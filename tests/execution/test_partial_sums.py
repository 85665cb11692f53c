"""The engine's partitioned queries: exact integer sums per partition, noise once.

The sums added partition by partition equal the in-process path's exact sums, bit for
bit; with the same noise draw the release is the same release (value, interval, noise,
notes, analyst counts). Randomized rounding per partition stays unbiased.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec, run_query
from dpstudio.engine.queries.partial import (
    Partial,
    add_partials,
    partial_sums,
    release_partials,
    run_partials,
)
from dpstudio.engine.queries.spec import noisy_statistics
from dpstudio.engine.queries.sums import _family, _plan, _rounded_sums, _sum_noise
from dpstudio.engine.rng import InsecureSourceError, SecureSource, SimulationSource

SPECS = [
    QuerySpec("count", "laplace", 1.0),
    QuerySpec("sum", "laplace", 1.0, bounds=(0, 100)),
    QuerySpec("mean", "gaussian", 1.0, delta=1e-6, bounds=(0, 100)),
    QuerySpec("variance", "laplace", 1.0, bounds=(-10, 100)),
    QuerySpec("mean", "laplace", 1.0, bounds=(0, 100), missing="impute", relation="replace"),
    QuerySpec("histogram", "laplace", 1.0, bounds=(0, 100), bins=7),
    QuerySpec("median", "exponential", 1.0, bounds=(0, 100)),
    QuerySpec("quantile", "exponential", 0.5, bounds=(-10, 110), quantile=0.9,
              relation="replace"),
    QuerySpec("quantile", "permute_and_flip", 1.0, bounds=(0, 100), quantile=0.25,
              params={"candidates": 64}),
]


def _column(seed=1, n=20_000):
    rng = np.random.default_rng(seed)
    x = rng.integers(-20, 130, n).astype(float)  # whole numbers: on every grid below
    x[::97] = np.nan
    x[::389] = np.inf
    return x


def _in_process_steps(x, spec):
    """The in-process path's exact sums in grid steps (its own plan and rounding)."""
    spec = spec.validated()
    plan = _plan(x, spec)
    fam = _family(spec)
    out = []
    for part in plan.sums:
        grid, _ = _sum_noise(part.lo, part.hi, len(plan.sums), fam, spec)
        steps, _, _ = _rounded_sums(part.values, part.lo, part.hi, grid, SimulationSource(0), 1)
        out.append((part.name, int(steps[0])))
    return tuple(out)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.query}-{s.mechanism}-{s.missing}")
def test_partitioned_sums_and_release_equal_the_in_process_ones(spec):
    x = _column()
    parts = [partial_sums(c, spec, SimulationSource(i))
             for i, c in enumerate(np.array_split(x, 9))]
    total = add_partials(parts)
    if spec.query == "histogram":
        edges = np.linspace(0, 100, 8)
        finite = x[np.isfinite(x)]
        cells = np.bincount(np.clip(np.searchsorted(edges, finite, "right") - 1, 0, 6),
                            minlength=7)
        assert total.cells == tuple(int(c) for c in cells)
    elif spec.query in ("quantile", "median"):
        assert total.cells == _in_process_rank_counts(x, spec)  # exact counts per candidate
    else:
        assert total.sums == _in_process_steps(x, spec)  # pre-noise integers, bit for bit
    # The same noise draw: the same release, field for field.
    ours = run_partials(total, spec, SimulationSource(5)).to_dict()
    theirs = run_query(x, spec, SimulationSource(5)).to_dict()
    assert ours == theirs


def _in_process_rank_counts(x, spec):
    """Below and above each candidate, counted independently (a plain comparison)."""
    from dpstudio.engine.queries.quantile import quantile_candidates

    _, candidates, _ = quantile_candidates(spec.validated())
    c = spec.impute_value()
    used = x[np.isfinite(x)] if c is None else np.where(np.isfinite(x), x, c)
    used = np.clip(used, *spec.bounds)
    below = (used[None, :] < candidates[:, None]).sum(axis=1)
    above = (used[None, :] > candidates[:, None]).sum(axis=1)
    return tuple(int(b) for b in below) + tuple(int(a) for a in above)


def test_quantile_selection_from_added_counts_follows_the_exponential_law():
    """Power check: the client's one selection draws candidates with probability
    ∝ exp(ε·score / 2Δ) from the added counts; a selection at the wrong scale (2ε) is
    rejected by the same test."""
    from scipy import stats

    from dpstudio.engine.queries.quantile import quantile_candidates, scores_from_counts

    spec = QuerySpec("median", "exponential", 0.02, bounds=(0, 10),
                     params={"candidates": 11}).validated()
    x = np.repeat(np.arange(11.0), [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
    total = add_partials([partial_sums(c, spec, SecureSource()) for c in np.array_split(x, 4)])
    mech, candidates, q = quantile_candidates(spec)
    scores = scores_from_counts(np.array(total.cells[:11]), np.array(total.cells[11:]), q)
    src = SimulationSource(123)
    draws = np.array([run_partials(total, spec, src).value for _ in range(4000)])
    observed = np.array([np.count_nonzero(draws == c) for c in candidates])

    def law(eps):
        w = np.exp(eps * (scores - scores.max()) / (2 * mech.sensitivity))
        return w / w.sum()

    assert stats.chisquare(observed, 4000 * law(0.02)).pvalue > 1e-3
    assert stats.chisquare(observed, 4000 * law(0.04)).pvalue < 1e-6


def test_rounding_off_the_grid_stays_within_its_range_and_unbiased():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 100, 4000)
    spec = QuerySpec("sum", "laplace", 1.0, bounds=(0, 100)).validated()
    grid, _ = _sum_noise(0, 100, 1, _family(spec), spec)
    floor = int(np.floor(x / grid).sum())
    draws = np.array([add_partials([partial_sums(c, spec, SimulationSource(100 * k + i))
                                    for i, c in enumerate(np.array_split(x, 4))]).sums[0][1]
                      for k in range(200)])
    assert draws.min() >= floor and draws.max() <= floor + x.size
    frac = x / grid - np.floor(x / grid)
    # Mean of 200 draws of a sum of Bernoulli(frac): s.d. sqrt(Σf(1−f)/200); 5 s.d.
    sd = np.sqrt((frac * (1 - frac)).sum() / draws.size)
    assert abs(draws.mean() - x.sum() / grid) < 5 * sd
    # A biased rounding (always down) would be rejected by the same check.
    assert abs(floor - x.sum() / grid) > 5 * sd


def test_partials_hold_only_integers_of_the_declared_shape():
    x = _column()
    for spec in SPECS:
        p = partial_sums(x[:1000], spec, SecureSource())
        assert all(type(v) is int for v in p.integers())
        if spec.query == "histogram":
            assert len(p.cells) == 7 and p.sums == ()
        elif spec.query in ("quantile", "median"):  # below, then above, each candidate
            from dpstudio.engine.queries.quantile import quantile_candidates

            width = quantile_candidates(spec.validated())[1].size
            assert len(p.cells) == 2 * width and p.sums == ()
            assert all(0 <= v <= p.rows for v in p.cells)
        else:
            assert [n for n, _ in p.sums] == [n for n, *_ in noisy_statistics(spec.validated())]


def test_empty_and_all_missing_partitions_add_nothing_and_an_empty_total_is_refused():
    spec = QuerySpec("mean", "laplace", 1.0, bounds=(0, 10))
    empty = partial_sums(np.zeros(0), spec, SecureSource())
    missing = partial_sums(np.array([np.nan, np.inf]), spec, SecureSource())
    assert missing.missing == 2 and missing.non_finite == 1 and missing.rows == 0
    with pytest.raises(QueryError, match="no finite values"):
        run_partials(add_partials([empty, missing]), spec, SecureSource())
    with pytest.raises(QueryError, match="the column is empty"):
        run_partials(add_partials([empty]), spec, SecureSource())
    ok = add_partials([missing, partial_sums(np.array([4.0]), spec, SecureSource())])
    assert run_partials(ok, spec, SecureSource()).missing_count == 2


def test_a_release_needs_the_os_csprng():
    spec = QuerySpec("count", "laplace", 1.0)
    total = partial_sums(np.ones(10), spec, SecureSource())
    with pytest.raises(InsecureSourceError):
        release_partials(total, spec, SimulationSource(0))
    assert release_partials(total, spec, SecureSource()).simulated is False
    median = QuerySpec("median", "exponential", 1.0, bounds=(0, 1))
    with pytest.raises(QueryError, match="no finite values"):
        run_partials(partial_sums(np.full(3, np.nan), median, SecureSource()), median,
                     SecureSource())
    with pytest.raises(QueryError, match="one query"):
        add_partials([total, Partial(sums=(("sum", 1),))])
