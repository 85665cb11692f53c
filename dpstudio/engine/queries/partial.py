"""A query's bounded sums added up where the data is, and its noise drawn once from them.

An execution engine that holds the data in partitions (files, row groups, a cluster's
workers) runs :func:`partial_sums` on each: it clamps to the declared bounds, snaps to the
mechanism's grid with the unbiased randomized rounding (bits from the source the *caller
of that partition* gives it: the OS CSPRNG for a release) and returns a :class:`Partial`,
exact integers only. :func:`add_partials` adds them (exact integers, any order), and
:func:`release_partials` draws the noise once, from the OS CSPRNG, with the same samplers
and the same post-processing as :func:`~dpstudio.engine.queries.run.release`.

The grid and the noise follow from the spec alone, so every partition snaps to the same
grid without being told anything but the spec. Counts, sums, means, variances and
histograms (central model); and quantiles and medians, whose exponential-mechanism scores
are a function of two exact counts per candidate (values below it, values above it): each
partition counts, the counts are added, and the selection runs once on the client.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.missing import fill_missing
from dpstudio.engine.queries.columns import _numeric, category_counts, present_mask
from dpstudio.engine.queries.histogram import (
    _histogram_noise,
    _histogram_release,
    histogram_bins,
)
from dpstudio.engine.queries.numeric import _release_from_noisy
from dpstudio.engine.queries.quantile import (
    _quantile_release,
    quantile_candidates,
    rank_counts,
    scores_from_counts,
)
from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.spec import QuerySpec, check_bounds, noisy_statistics
from dpstudio.engine.queries.sums import (
    _check_exact,
    _family,
    _ones,
    _Plan,
    _post,
    _Sum,
    _sum_noise,
)
from dpstudio.engine.rng import Source, require_secure

__all__ = ["PARTIAL_QUERIES", "Partial", "add_partials", "count_partial", "partial_sums",
           "release_partials", "run_partials"]

#: The queries a partitioned engine answers from :class:`Partial` aggregates.
PARTIAL_QUERIES = ("count", "sum", "mean", "variance", "histogram", "quantile", "median")


@dataclass(frozen=True)
class Partial:
    """The exact integer aggregates of one partition (or of several, added).

    Only integers: nothing here is a record's value. ``sums`` and ``cells`` are what the
    noise is added to; the rest are counts the release needs (``rows``: values that
    entered the sums, public when imputing under replace) or keeps for the analyst only.

    Attributes
    ----------
    sums : tuple of (str, int)
        Each bounded sum, by name, in grid steps (count, sum, mean, variance).
    cells : tuple of int
        The histogram's exact counts per declared cell; a quantile's counts of values
        below each candidate, then of values above each candidate.
    size : int
        Rows read.
    rows : int
        Values that entered the sums (present, or imputed).
    clamped : int
        Analyst only: values outside the declared bounds or categories.
    missing : int
        Analyst only: missing values (empty, NaN, ±inf).
    non_finite : int
        Analyst only: of which ±inf.
    """

    sums: tuple[tuple[str, int], ...] = ()
    cells: tuple[int, ...] = ()
    size: int = 0
    rows: int = 0
    clamped: int = 0
    missing: int = 0
    non_finite: int = 0

    def integers(self) -> list[int]:
        """Every number this aggregate holds, flattened (to check that all are integers).

        Returns
        -------
        list of int
        """
        out = [v for _, v in self.sums] + list(self.cells)
        return out + [getattr(self, f.name) for f in fields(self)
                      if f.name not in ("sums", "cells")]


def partial_sums(values: np.ndarray, spec: QuerySpec, source: Source) -> Partial:
    """One partition's exact integer aggregates of ``spec`` on its ``values``.

    Values are clamped to the declared bounds and snapped to the grid with randomized
    rounding drawn from ``source``: give each partition its own source (for a release, a
    fresh :class:`~dpstudio.engine.rng.SecureSource` made where the partition is read),
    never a shared seed. An empty partition, or one with nothing but missing values, is
    all zeros; the release says the column is empty when the total is.

    Parameters
    ----------
    values : numpy.ndarray
        The partition's column, as for :func:`~dpstudio.engine.queries.run.run_query`.
    spec : QuerySpec
        A count, sum, mean, variance or histogram (see :data:`PARTIAL_QUERIES`).
    source : Source
        The randomized rounding's bits.

    Returns
    -------
    Partial
        Exact integers only.

    Raises
    ------
    QueryError, ParameterError
        An invalid spec, a query not built from sums, a column that cannot answer it.
    """
    spec = _checked(spec)
    v = np.asarray(values).reshape(-1)
    if spec.query == "histogram":
        return _histogram_partial(v, spec)
    if spec.query in ("quantile", "median"):
        return _quantile_partial(v, spec)
    if spec.query == "count":
        return count_partial(v.size, int(np.count_nonzero(present_mask(v))), spec, source)
    try:
        x = v.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        raise QueryError(f"a {spec.query} needs a numeric column") from None
    finite = np.isfinite(x)
    if x.size == 0 or (spec.impute_value() is None and not finite.any()):
        return Partial(size=x.size, missing=x.size - int(np.count_nonzero(finite)),
                       non_finite=int(np.count_nonzero(np.isinf(x))),
                       sums=tuple((name, 0) for name, *_ in noisy_statistics(spec)))
    col = _numeric(x, spec)
    return _summed(_partition_parts(col.values, spec), spec, source, size=x.size,
                   rows=col.values.size, clamped=col.clamped, missing=col.missing,
                   non_finite=col.non_finite)


def count_partial(size: int, present: int, spec: QuerySpec, source: Source) -> Partial:
    """A count's aggregates from the partition's numbers of rows and of present values.

    What :func:`partial_sums` gives for a count, when the partition has counted its
    present values itself (a Parquet column's nulls and NaNs, say, without building the
    column): each present value is a 1 snapped to the count's grid, so nothing but the
    two numbers is needed.

    Parameters
    ----------
    size : int
        Rows in the partition.
    present : int
        Of which present (not missing), as :func:`~dpstudio.engine.queries.columns.
        present_mask` counts them on the column the caller would have passed.
    spec : QuerySpec
        A count.
    source : Source
        The randomized rounding's bits (used only when 1 is off the count's grid).

    Returns
    -------
    Partial

    Raises
    ------
    QueryError
        If ``spec`` is not a count, or the numbers are inconsistent.
    """
    spec = _checked(spec)
    if spec.query != "count":
        raise QueryError(f"a {spec.query} needs the column's values, not only a count")
    size, present = int(size), int(present)
    if not 0 <= present <= size:
        raise QueryError("a partition cannot have more present values than rows")
    parts = [_Sum("count", _ones(present), 0.0, 1.0)]
    return _summed(parts, spec, source, size=size, rows=present, missing=size - present)


def add_partials(parts: list[Partial]) -> Partial:
    """The exact sum of partitions' aggregates (Python integers: no overflow, any order).

    Parameters
    ----------
    parts : list of Partial
        One per partition, of one query.

    Returns
    -------
    Partial

    Raises
    ------
    QueryError
        If the partitions disagree on the sums or cells they hold.
    """
    if not parts:
        return Partial()
    names = [name for name, _ in parts[0].sums]
    width = len(parts[0].cells)
    if any([n for n, _ in p.sums] != names or len(p.cells) != width for p in parts):
        raise QueryError("the partitions' aggregates do not belong to one query")
    sums = tuple((name, sum(int(p.sums[i][1]) for p in parts)) for i, name in enumerate(names))
    cells = tuple(sum(int(p.cells[i]) for p in parts) for i in range(width))
    counts = {f.name: sum(int(getattr(p, f.name)) for p in parts) for f in fields(Partial)
              if f.name not in ("sums", "cells")}
    return Partial(sums=sums, cells=cells, **counts)


def run_partials(total: Partial, spec: QuerySpec, source: Source) -> Release:
    """Answer ``spec`` from the added aggregates: the noise drawn once, from ``source``.

    The same noise, post-processing, interval and notes as
    :func:`~dpstudio.engine.queries.run.run_query` gives on the whole column. Use
    :func:`release_partials` for a release.

    Parameters
    ----------
    total : Partial
        :func:`add_partials` of every partition.
    spec : QuerySpec
        The query the partitions summed.
    source : Source
        The noise's random source (secure, or seeded for a simulation).

    Returns
    -------
    Release

    Raises
    ------
    QueryError
        An empty column, one with no finite values, or a sum too large to be exact.
    """
    spec = _checked(spec)
    if total.size == 0:
        raise QueryError("the column is empty")
    if spec.query == "histogram":
        labels, edges = histogram_bins(spec)
        if edges is not None and total.rows == 0:
            raise QueryError("the column has no finite values (all missing, NaN or infinite)")
        out = _histogram_release(np.asarray(total.cells, dtype=np.int64),
                                 _histogram_noise(spec), labels, total.clamped, spec, source)
        out.missing_count, out.non_finite_count = total.missing, total.non_finite
    elif spec.query in ("quantile", "median"):
        if total.rows == 0:
            raise QueryError("the column has no finite values (all missing, NaN or infinite)")
        mech, candidates, q = quantile_candidates(spec)
        cells = np.asarray(total.cells, dtype=np.int64)
        # The same integers as the whole column's, so the same scores, bit for bit; the
        # selection's randomness is drawn once, here.
        scores = scores_from_counts(cells[:candidates.size], cells[candidates.size:], q)
        out = _quantile_release(mech, candidates, scores, total.clamped, spec, source)
        out.missing_count, out.non_finite_count = total.missing, total.non_finite
    else:
        if spec.query != "count" and total.rows == 0:
            raise QueryError("the column has no finite values (all missing, NaN or infinite)")
        out = _release_from_noisy(*_noisy_totals(total, spec, source), spec)
    if not out.missing:
        out.missing = {"treatment": spec.missing}
    out.simulated = not source.is_secure
    out.source = source.label
    out.column = spec.column
    return out


def release_partials(total: Partial, spec: QuerySpec, source: Source) -> Release:
    """A real release from partitions' aggregates: :func:`run_partials` with the OS CSPRNG.

    Parameters
    ----------
    total : Partial
        :func:`add_partials` of every partition.
    spec : QuerySpec
        The query.
    source : Source
        Must be :class:`~dpstudio.engine.rng.SecureSource`.

    Returns
    -------
    Release

    Raises
    ------
    InsecureSourceError
        If ``source`` is a seeded one.
    QueryError
        As :func:`run_partials`.
    """
    return run_partials(total, spec, require_secure(source))


# ------------------------------------------------------------------------------ helpers


def _checked(spec: QuerySpec) -> QuerySpec:
    spec = spec.validated()
    if spec.query not in PARTIAL_QUERIES:
        raise QueryError(f"a {spec.query} is not built from sums: it runs in one process "
                         f"(partitioned queries: {', '.join(PARTIAL_QUERIES)})")
    return spec


@dataclass
class _Squares(_Sum):
    """A sum of squares whose records are squared slice by slice as they are rounded:
    ``values`` holds the column, ``clip`` the declared bounds it is clamped to first."""

    clip: tuple[float, float] = (0.0, 0.0)


def _partition_parts(values: np.ndarray, spec: QuerySpec) -> list[_Sum]:
    """The bounded sums of :func:`~dpstudio.engine.queries.sums._plan` for a sum, mean or
    variance of the column's used ``values``, the squares left to be made slice by slice
    (a partition then never holds the column's squares whole: the same numbers, in the
    same order)."""
    lo, hi = check_bounds(spec.bounds)
    parts: list[_Sum] = []
    for name, a, b, _ in noisy_statistics(spec):
        if name == "sum":
            parts.append(_Sum(name, values, a, b))
        elif name == "count":
            parts.append(_Sum(name, _ones(values.size), a, b))
        else:  # the sum of squares: (clamped value)², as _plan makes it
            parts.append(_Squares(name, values, a, b, clip=(lo, hi)))
    return parts


def _summed(parts: list[_Sum], spec: QuerySpec, source: Source, **counts: int) -> Partial:
    """Each bounded sum snapped to its grid (the spec's alone) and added, in steps."""
    family = _family(spec)
    sums = []
    for part in parts:
        grid, _ = _sum_noise(part.lo, part.hi, len(parts), family, spec)
        _check_exact(part.lo, part.hi, grid, part.values.size)
        steps = _constant_steps(part, grid)
        if steps is None:
            steps = _rounded_sum(part.values, part.lo, part.hi, grid, source,
                                 part.clip if isinstance(part, _Squares) else None)
        sums.append((part.name, steps))
    return Partial(sums=tuple(sums), **counts)


#: Records a partition rounds (or bins) at a time. A Dask worker hands freed memory back
#: to the system at once (its ``MALLOC_TRIM_THRESHOLD_``), so every temporary of 128 KiB
#: or more (glibc's mmap threshold) costs fresh pages: at 2^16 records a slice the page
#: faults cost twice the arithmetic; at 2^13 (64 KiB of float64) the temporaries (the
#: CSPRNG's words among them) are reused from the heap (measured: 2.5× faster on a
#: worker, the same in a plain process).
_PARTITION_SLICE = 1 << 13


def _rounded_sum(values: np.ndarray, lo: float, hi: float, grid: float, source: Source,
                 squares_of: tuple[float, float] | None = None) -> int:
    """One draw of the randomized-rounded sum in grid steps: exactly
    ``_rounded_sums(values, lo, hi, grid, source, 1)``, the same bits drawn in the same
    order and compared with the same fractions, in buffers reused slice after slice.

    Each record clamped to [lo, hi] is x = base + frac steps and rounds up when its own
    uniform u < frac (u from 53 bits of one 64-bit word, drawn in record order, only for
    frac > 0). Since base + [u < frac] already lies in [floor(lo/grid), ceil(hi/grid)],
    the sum is Σ base + (records rounded up): no per-record step array is built.
    ``squares_of=(a, b)``: the records are the squares of ``values`` clamped to [a, b].
    """
    m = max(1, min(values.size, _PARTITION_SLICE))
    x, base, draws = np.empty(m), np.empty(m), np.empty(m)
    # Each record's uniform at its own place; a record on the grid (fraction 0) never
    # rounds up whatever it holds there, as long as it is ≥ 0: zeros to begin with, then
    # earlier slices' uniforms.
    placed = np.zeros(m)
    up, fractional = np.empty(m, dtype=bool), np.empty(m, dtype=bool)
    total = 0
    for start in range(0, values.size, m):
        v = values[start:start + m]
        n = v.size
        xs, bs, fs = x[:n], base[:n], fractional[:n]
        if squares_of is not None:
            np.clip(v, *squares_of, out=xs)
            np.multiply(xs, xs, out=xs)
            v = xs
        np.clip(v, lo, hi, out=xs)
        xs /= grid  # grid is a power of two: exact
        np.floor(xs, out=bs)
        total += int(bs.sum(dtype=np.int64))
        xs -= bs  # now each record's fraction, exactly
        np.greater(xs, 0.0, out=fs)
        k = int(np.count_nonzero(fs))
        if k == 0:
            continue
        u = source.uint64(k)
        u >>= np.uint64(11)
        d = draws[:k]
        d[...] = u  # exact: under 2^53
        d *= 2.0**-53
        if k == n:
            ds = d
        else:  # the j-th uniform to the j-th record off the grid, in record order
            ds = placed[:n]
            ds[fs] = d
        total += int(np.count_nonzero(np.less(ds, xs, out=up[:n])))
    return total


def _constant_steps(part: _Sum, grid: float) -> int | None:
    """The rounded sum of a sum of one repeated value (a count's ones) when that value,
    clamped, lies on the grid: then no record's rounding is random and
    :func:`~dpstudio.engine.queries.sums._rounded_sums` would draw no bit and return
    exactly ``n × value / grid``. None otherwise (the records are rounded one by one)."""
    v = part.values
    if isinstance(part, _Squares) or v.ndim != 1 or v.size == 0 or v.strides != (0,):
        return None
    x = float(np.clip(v[0], part.lo, part.hi)) / grid  # grid is a power of two: exact
    if not (np.isfinite(x) and x == np.floor(x)):
        return None
    lo_s, hi_s = np.floor(part.lo / grid), np.ceil(part.hi / grid)
    return int(v.size) * int(np.clip(x, lo_s, hi_s))


def _histogram_partial(v: np.ndarray, spec: QuerySpec) -> Partial:
    """Exact cell counts of one partition (no randomness: counts are on the grid)."""
    labels, edges = histogram_bins(spec)
    if v.size == 0:
        return Partial(cells=(0,) * len(labels))
    if edges is None:
        counts, undeclared, missing = category_counts(v, labels)
        infinite = int(np.count_nonzero(np.isinf(v))) if v.dtype.kind in "fc" else 0
        return Partial(cells=tuple(int(c) for c in counts), size=v.size,
                       rows=int(counts.sum()), clamped=undeclared, missing=missing,
                       non_finite=infinite)
    try:
        x = v.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        raise QueryError("a histogram needs a numeric column") from None
    lo, hi = check_bounds(spec.bounds)
    counts = np.zeros(len(labels), dtype=np.int64)
    rows = clamped = infinite = 0
    m = max(1, min(x.size, _PARTITION_SLICE))
    finite, same, held = np.empty(m, dtype=bool), np.empty(m, dtype=bool), np.empty(m)
    for start in range(0, x.size, m):  # one slice's buffers, never the column's
        part = x[start:start + m]
        f = np.isfinite(part, out=finite[:part.size])
        present = part if f.all() else part[f]
        if present.size != part.size:
            infinite += int(np.count_nonzero(np.isinf(part)))
        rows += present.size
        cs = np.clip(present, lo, hi, out=held[:present.size])
        # Moved by the clamp: outside the declared bounds.
        clamped += present.size - int(np.count_nonzero(
            np.equal(cs, present, out=same[:present.size])))
        counts += np.bincount(_bin_cells(cs, edges), minlength=len(labels))
    return Partial(cells=tuple(int(c) for c in counts), size=x.size, rows=rows,
                   clamped=clamped, missing=x.size - rows, non_finite=infinite)


def _bin_cells(c: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each clamped value's bin: ``clip(searchsorted(edges, c, "right") - 1, 0, bins - 1)``
    exactly, the last bin closed, by arithmetic rather than a binary search.

    The bin is first guessed from (c − lo)·bins/(hi − lo), then moved until
    ``edges[k] <= c < edges[k + 1]`` holds (or k is the last bin): rounding makes the
    guess at most one bin off, and the correction makes the answer the search's.
    """
    bins = edges.size - 1
    lo, hi = float(edges[0]), float(edges[-1])
    scale = bins / (hi - lo)
    if not (np.isfinite(hi - lo) and np.isfinite(scale) and scale > 0):
        return np.clip(np.searchsorted(edges, c, side="right") - 1, 0, bins - 1)
    k = ((c - lo) * scale).astype(np.intp)
    np.clip(k, 0, bins - 1, out=k)
    while True:
        down = c < edges[k]
        if not down.any():
            break
        k -= down
    while True:
        up = (c >= edges[k + 1]) & (k < bins - 1)
        if not up.any():
            break
        k += up
    return k


def _quantile_partial(v: np.ndarray, spec: QuerySpec) -> Partial:
    """Exact counts below and above each candidate of one partition (no randomness)."""
    _, candidates, _ = quantile_candidates(spec)
    try:
        x = v.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        raise QueryError(f"a {spec.query} needs a numeric column") from None
    finite = np.isfinite(x)
    present = x[finite]
    c = spec.impute_value()
    used = present if c is None else fill_missing(x, c)[0]  # ±inf is missing too
    lo, hi = check_bounds(spec.bounds)
    below, above = rank_counts(np.clip(used, lo, hi), candidates)
    return Partial(cells=tuple(int(b) for b in below) + tuple(int(a) for a in above),
                   size=x.size, rows=used.size,
                   clamped=int(np.count_nonzero((present < lo) | (present > hi))),
                   missing=x.size - present.size,
                   non_finite=int(np.count_nonzero(np.isinf(x))))


def _noisy_totals(total: Partial, spec: QuerySpec, source: Source
                  ) -> tuple[_Plan, dict[str, np.ndarray], dict]:
    """The plan of the whole column (its sums already added) and one noisy draw of each."""
    declared = noisy_statistics(spec)
    family = _family(spec)
    exact = dict(total.sums)
    noisy, noises, sums = {}, {}, []
    for name, lo, hi, _ in declared:
        grid, noise = _sum_noise(lo, hi, len(declared), family, spec)
        _check_exact(lo, hi, grid, total.rows)
        # Drawn once, here: the partitions sent exact integers and no noise.
        noisy[name] = (np.array([exact[name]], dtype=np.int64)
                       + noise.sample(1, source)) * grid
        noises[name] = noise
        sums.append(_Sum(name, np.zeros(0), lo, hi))
    sens = declared[0][3] if spec.query == "count" else next(
        s for name, _, _, s in declared if name == "sum")
    if spec.query == "count":
        plan = _Plan(sums, lambda d: d["count"], 0, sens, missing=total.missing)
    else:
        lo, hi = check_bounds(spec.bounds)
        rows = total.rows if spec.n_public() else None
        plan = _Plan(sums, _post(spec, rows), total.clamped, sens, lo=lo, hi=hi, rows=rows,
                     missing=total.missing, non_finite=total.non_finite)
    return plan, noisy, noises

