"""Bounded sums: the one primitive of counts, sums, means and variances.

Values clamped to the declared bounds are snapped to the mechanism's grid by unbiased
randomized rounding (:func:`_snap`, or in bulk for simulation :func:`_rounded_sums`),
summed as exact integers and given exact integer noise (:func:`_noisy_sums`). A query is a
:class:`_Plan`: its bounded sums and a vectorized post-processing of their noisy values.
:func:`plan_sums` and :func:`delta_method_variance` serve analytic utility.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpstudio.engine.additive import IntegerNoise, NoiseFamily
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries.columns import _numeric, present_mask
from dpstudio.engine.queries.spec import (
    QuerySpec,
    check_bounds,
    noisy_statistics,
    sum_sensitivity,
)
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import Source

__all__ = ["delta_method_variance", "plan_sums"]


def _step_sensitivity(lo_s: int, hi_s: int, relation: str, missing: str) -> int:
    """:func:`sum_sensitivity` on the grid: records snap into [lo_s, hi_s] steps."""
    return int(sum_sensitivity(lo_s, hi_s, relation, missing))



def _snap(values: np.ndarray, lo: float, hi: float, grid: float, source: Source
          ) -> tuple[np.ndarray, int, int]:
    """Clamp to [lo, hi] and round to the grid, unbiased (randomized rounding).

    Returns (integer steps, lowest step, highest step). The rounding may go either way for
    any record, but every outcome stays in [floor(lo/grid), ceil(hi/grid)], which is all
    the sensitivity depends on; the randomness only removes rounding bias.
    """
    lo_s, hi_s = math.floor(lo / grid), math.ceil(hi / grid)
    x = np.clip(values, lo, hi) / grid  # grid is a power of two: the division is exact
    base = np.floor(x)
    frac = x - base
    up = np.zeros(x.shape, dtype=bool)
    fractional = frac > 0
    if np.any(fractional):
        u = (source.uint64(int(fractional.sum())) >> np.uint64(11)).astype(np.float64)
        up[fractional] = u * 2.0**-53 < frac[fractional]
    steps = base.astype(np.int64) + up
    return np.clip(steps, lo_s, hi_s), lo_s, hi_s


#: Above this many binomial draws, repeated simulation approximates the rounding (below).
_EXACT_ROUNDING_DRAWS = 1 << 24
_ROUNDING_CHUNK = 1 << 20
#: Records rounded at a time by a release (:func:`_rounded_sums` with one draw).
_SNAP_SLICE = 1 << 18


def _rounded_sums(values: np.ndarray, lo: float, hi: float, grid: float, source: Source,
                  size: int) -> tuple[np.ndarray, int, int]:
    """``size`` independent draws of the randomized-rounded sum (in grid steps).

    One draw (a release) rounds each record with its own bits (:func:`_snap`). For many
    draws (simulation), the rounded sum is Σ floor + the number of records rounded up, a
    sum of independent Bernoulli(frac_i): records sharing a fractional part form one
    Binomial(count, frac), so each draw is exact at a cost of (distinct fractions × draws),
    drawn from a generator seeded by ``source``. Beyond 2^24 such draws (huge columns of
    all-distinct values, where the rounding's variance n/4 steps² is negligible beside
    the noise's) the count rounded up is drawn from its normal approximation, rounded.
    """
    if size == 1:
        # In slices: _snap makes about eight temporaries the size of its input, so a
        # whole 10⁷-row column would cost ~600 MiB; slice by slice it costs a few. The
        # bits are drawn in the same order, so a seeded simulation gives the same sum.
        total = 0
        for start in range(0, values.size, _SNAP_SLICE):
            steps, _, _ = _snap(values[start:start + _SNAP_SLICE], lo, hi, grid, source)
            total += int(steps.sum())
        return (np.array([total], dtype=np.int64), math.floor(lo / grid),
                math.ceil(hi / grid))
    lo_s, hi_s = math.floor(lo / grid), math.ceil(hi / grid)
    x = np.clip(values, lo, hi) / grid
    base = np.floor(x)
    frac = (x - base)[x > base]
    total = np.full(size, int(base.astype(np.int64).sum()), dtype=np.int64)
    if frac.size == 0:
        return total, lo_s, hi_s
    gen = np.random.Generator(np.random.PCG64([int(w) for w in source.uint64(4)]))
    p, counts = np.unique(frac, return_counts=True)
    if p.size * size <= _EXACT_ROUNDING_DRAWS:
        rows = max(1, _ROUNDING_CHUNK // p.size)
        for start in range(0, size, rows):  # chunks of draws bound the memory, not records
            stop = min(size, start + rows)
            total[start:stop] += gen.binomial(counts, p, size=(stop - start, p.size)).sum(1)
    else:
        mean, var = float(frac.sum()), float((frac * (1.0 - frac)).sum())
        up = np.rint(gen.normal(mean, math.sqrt(var), size))
        total += np.clip(up, 0, frac.size).astype(np.int64)
    return total, lo_s, hi_s


@dataclass
class _Sum:
    """One bounded sum a query spends budget on: its values and declared range."""

    name: str
    values: np.ndarray
    lo: float
    hi: float


@dataclass
class _Plan:
    """A numeric query as bounded sums plus a vectorized post-processing of their values.

    ``rows`` is the public number of rows when the spec makes it public (imputed values
    under ``replace``), else None. ``missing`` and ``non_finite`` are analyst-only counts.
    """

    sums: list[_Sum]
    post: Callable[[dict[str, np.ndarray]], np.ndarray]
    clamped: int
    sensitivity: float
    lo: float = 0.0
    hi: float = 0.0
    rows: int | None = None
    missing: int = 0
    non_finite: int = 0


def _noisy_sums(plan: _Plan, family: NoiseFamily, spec: QuerySpec, source: Source,
                size: int, max_rows: int = 1
                ) -> tuple[dict[str, np.ndarray], dict[str, IntegerNoise]]:
    """``size`` noisy draws of each bounded sum; the budget split evenly (basic composition).

    Each draw rounds the records to the grid afresh (:func:`_rounded_sums`), so repeated
    draws have exactly the release's distribution. ``max_rows`` = k > 1 (a user-level
    release, add-remove): every sensitivity is k × a row's.
    """
    values, noises = {}, {}
    for part in plan.sums:
        grid, noise = _sum_noise(part.lo, part.hi, len(plan.sums), family, spec, max_rows)
        _check_exact(part.lo, part.hi, grid, part.values.size)
        sums, _, _ = _rounded_sums(part.values, part.lo, part.hi, grid, source, size)
        values[part.name] = (sums + noise.sample(size, source)) * grid
        noises[part.name] = noise
    return values, noises


def _sum_noise(lo: float, hi: float, parts: int, family: NoiseFamily, spec: QuerySpec,
               max_rows: int = 1) -> tuple[float, IntegerNoise]:
    """The grid of one bounded sum in [lo, hi] and its calibrated integer noise, from the
    spec alone (the budget split evenly over ``parts`` sums: basic composition); every
    sensitivity × ``max_rows`` (k of a user-level release; 1: row-level)."""
    eps, dlt = spec.epsilon / parts, spec.delta / parts
    sens = max_rows * sum_sensitivity(lo, hi, spec.relation, spec.missing)
    if sens == 0:
        raise QueryError("the declared bounds give this statistic zero sensitivity")
    grid = family.grid(sens, eps, dlt)
    lo_s, hi_s = math.floor(lo / grid), math.ceil(hi / grid)
    steps = max_rows * _step_sensitivity(lo_s, hi_s, spec.relation, spec.missing)
    noise = family.calibrate(steps, grid, eps, dlt)
    return grid, noise


def _check_exact(lo: float, hi: float, grid: float, records: int) -> None:
    """Refuse a sum whose integer steps (with noise) could leave int64."""
    lo_s, hi_s = math.floor(lo / grid), math.ceil(hi / grid)
    if records and (abs(lo_s) + abs(hi_s)) * records >= 2**62:
        raise QueryError("too many records for an exact integer sum at this precision")


def _family(spec: QuerySpec) -> NoiseFamily:
    info = REGISTRY.get(spec.mechanism)
    return info.build(**info.resolve(spec.mechanism_params()))


def _box_ratio(num: tuple[float, float], den: tuple[float, float]) -> tuple[float, float]:
    """Range of a/b over a ∈ num, b ∈ den with den > 0."""
    corners = [a / b for a in num for b in den]
    return min(corners), max(corners)


def _ones(n: int) -> np.ndarray:
    """``n`` ones as a read-only view of one value: a count's records take no memory."""
    return np.broadcast_to(np.float64(1.0), (n,))


def _squared(x: np.ndarray) -> np.ndarray:
    return x * x


def _plan(values: np.ndarray, spec: QuerySpec) -> _Plan:
    """The bounded sums of a count, sum, mean or variance, and how to combine them.

    The declared parts come from :func:`noisy_statistics`. The count of values is a
    bounded sum of ones in [0, 1] (sensitivity 1 under both relations: under replace a
    value can change from missing to present). Mean and variance divide by a noisy count,
    floored at 1 — or, when the number of rows is public (imputed values, replace), by it.
    """
    declared = noisy_statistics(spec)
    if spec.query == "count":
        v = np.asarray(values)
        if v.size == 0:
            raise QueryError("the column is empty")
        ones = _ones(int(np.count_nonzero(present_mask(v))))
        return _Plan([_Sum("count", ones, 0.0, 1.0)], lambda d: d["count"], 0, declared[0][3],
                     missing=v.size - ones.size)
    col = _numeric(values, spec)
    lo, hi = check_bounds(spec.bounds)
    data = {"sum": lambda: col.values, "count": lambda: _ones(col.values.size),
            "sum of squares": lambda: _squared(np.clip(col.values, lo, hi))}
    # Only the sums the statistic declares are made (a mean makes no sum of squares).
    sums = [_Sum(name, data[name](), a, b) for name, a, b, _ in declared]
    rows = col.values.size if spec.n_public() else None
    sens = next(s for name, _, _, s in declared if name == "sum")
    return _Plan(sums, _post(spec, rows), clamped=col.clamped, sensitivity=sens, lo=lo,
                 hi=hi, rows=rows, missing=col.missing, non_finite=col.non_finite)


def _post(spec: QuerySpec, rows: int | None
          ) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    """How a sum, mean or variance is computed from its noisy sums (vectorized).

    From the spec and the public number of rows alone (None when it is private), so a
    plan whose sums were added up elsewhere (partition by partition) post-processes the
    same way.
    """
    lo, hi = check_bounds(spec.bounds)

    def count(d):
        return float(rows) if rows is not None else np.maximum(d["count"], 1.0)

    if spec.query == "sum":
        return lambda d: d["sum"]
    if spec.query == "mean":
        return lambda d: np.clip(d["sum"] / count(d), lo, hi)
    cap = (hi - lo) ** 2 / 4.0  # the largest variance of values in [lo, hi]

    def variance(d):
        c = count(d)
        return np.clip(d["sum of squares"] / c - (d["sum"] / c) ** 2, 0.0, cap)

    return variance


def delta_method_variance(query: str, sums: dict[str, float], variances: dict[str, float]
                          ) -> float:
    """Approximate variance of a count, sum, mean or variance from its noisy sums.

    First-order (delta method) for the ratios of mean and variance; exact for a count or
    a sum.

    Parameters
    ----------
    query : str
        ``"count"``, ``"sum"``, ``"mean"`` or ``"variance"``.
    sums : dict of str to float
        The (noisy or true) bounded sums by name (``count``, ``sum``, ``sum of squares``).
    variances : dict of str to float
        The noise variance of each of them.

    Returns
    -------
    float
        The variance of the released statistic.
    """
    if query in ("count", "sum"):
        return variances[query]
    c = max(sums["count"], 1.0)
    m = sums["sum"] / c
    if query == "mean":
        return (variances["sum"] + m * m * variances["count"]) / (c * c)
    return (variances["sum of squares"] + 4 * m * m * variances["sum"]
            + (sums["sum of squares"] / c - 2 * m * m) ** 2 * variances["count"]) / (c * c)


def plan_sums(values: np.ndarray, spec: QuerySpec) -> list[tuple[str, float, float]]:
    """The true bounded sums of a count, sum, mean or variance on the analyst's data.

    For analytic utility on the analyst's own data, never released. When the number of
    rows is public (imputed values under ``replace``), a mean or variance also lists
    ``("count", n, 0.0)``: the exact count, with no noise.

    Parameters
    ----------
    values : numpy.ndarray
        The column.
    spec : QuerySpec
        A count, sum, mean or variance.

    Returns
    -------
    list of (str, float, float)
        (name, true sum of the clamped values, sensitivity) of each bounded sum.

    Raises
    ------
    QueryError, ParameterError
        If the spec is invalid or the column unusable (empty, not numeric).
    """
    spec = spec.validated()
    plan = _plan(values, spec)
    out = [(p.name, float(np.clip(p.values, p.lo, p.hi).sum()),
            sum_sensitivity(p.lo, p.hi, spec.relation, spec.missing)) for p in plan.sums]
    if plan.rows is not None and spec.query in ("mean", "variance"):
        out.append(("count", float(plan.rows), 0.0))
    return out
