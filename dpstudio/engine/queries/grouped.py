"""Counts, sums and means grouped by one or two categorical key columns with declared keys.

The groups are the cells of the declared keys (one column's, or the product of two
columns'), never keys read off the data: every declared cell is released, with noise,
even when no row holds it, and a row whose key is missing or not declared is dropped
before anything is summed (it is under no key; the release does not say how many were
dropped). Dropping is a per-record filter, so it keeps neighbouring datasets neighbours.

Sensitivity (parallel composition across groups: a record is in exactly one group).
Under ``add-remove`` one record changes one cell, by at most the ungrouped statistic's
sensitivity: the noise is the ungrouped one's, on every cell. Under ``replace`` a record
may move to another group, changing two cells: each by at most max(hi − lo, |lo|, |hi|)
(a value leaving one group and another arriving in the other), so the noise is calibrated
to two coordinates of that per-cell sensitivity (ℓ₁ twice it for Laplace, ℓ₂ √2 times it
for Gaussian) — pessimistic when the record stays in its group.

User-level (``max_rows`` = k: each person's rows bounded to k before, by the caller,
once for everything released; add-remove only). One person's k rows may fall into
different groups, so adding or removing them changes several cells: the change over all
cells is at most k × the per-row change in ℓ₁ (the k rows' changes add up wherever they
fall) and in ℓ₂ too — √(Σ cᵢ²) ≤ Σ cᵢ ≤ k·Δ, with equality when all k rows fall in one cell
(the worst case). So the noise is calibrated to one coordinate of k × the per-cell
sensitivity: k for counts by group, k·B for sums with |values| ≤ B.

A mean is a noisy sum and a noisy count per cell, each with half the budget; per cell it
is clip(sum / max(count, 1), lo, hi). Vectorized: cell codes from
:func:`~dpstudio.engine.queries.columns.row_codes`, exact integer sums per cell by
``np.bincount``/sorted ``np.add.reduceat``, no per-record loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.additive import IntegerNoise
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries.columns import present_mask, row_codes
from dpstudio.engine.queries.spec import QuerySpec, check_bounds, sum_sensitivity
from dpstudio.engine.queries.sums import _check_exact, _family, _snap
from dpstudio.engine.rng import Source

__all__ = ["GROUPED_QUERIES", "GroupedRelease", "grouped_cells", "grouped_noises",
           "grouped_release", "grouped_sensitivities", "simulate_grouped"]

#: Statistics that may be grouped.
GROUPED_QUERIES = ("count", "sum", "mean")
#: At most this many cells (the product of the declared keys).
_MAX_CELLS = 100_000


def grouped_cells(keys: tuple[tuple[str, ...], ...]) -> list[tuple[str, ...]]:
    """The cells of one or two key columns' declared keys, in release order.

    Parameters
    ----------
    keys : tuple of tuple of str
        The declared keys of each ``by`` column (one or two columns).

    Returns
    -------
    list of tuple of str
        One key tuple per cell (the first column's keys vary slowest).

    Raises
    ------
    QueryError
        For no column, more than two, a column without keys, repeated keys, or more than
        100,000 cells.
    """
    if not 1 <= len(keys) <= 2:
        raise QueryError("group by one or two key columns")
    for k in keys:
        if len(k) == 0:
            raise QueryError("a key column needs at least one declared key")
        if len(set(k)) != len(k):
            raise QueryError("a key column's declared keys must be distinct")
    cells = math.prod(len(k) for k in keys)
    if cells > _MAX_CELLS:
        raise QueryError(f"{cells:,} groups is too many (at most {_MAX_CELLS:,})")
    if len(keys) == 1:
        return [(str(a),) for a in keys[0]]
    return [(str(a), str(b)) for a in keys[0] for b in keys[1]]


def _parts(spec: QuerySpec) -> list[tuple[str, float, float]]:
    """(name, lower, upper) of the noisy vectors a grouped statistic spends budget on."""
    if spec.query == "count":
        return [("count", 0.0, 1.0)]
    lo, hi = check_bounds(spec.bounds)
    parts = [("sum", lo, hi)]
    if spec.query == "mean":
        parts.append(("count", 0.0, 1.0))
    return parts


def _cell_sensitivity(lo: float, hi: float, relation: str, missing: str) -> float:
    """Per-cell sensitivity: the ungrouped one under add-remove; under replace, the most
    one cell moves when a record changes group or value (see the module docstring)."""
    if relation == "replace":
        return sum_sensitivity(lo, hi, "replace", "drop")
    return sum_sensitivity(lo, hi, "add-remove", missing)


def grouped_sensitivities(spec: QuerySpec, max_rows: int = 1
                          ) -> list[tuple[str, float, int]]:
    """The noisy vectors of a grouped statistic, with each cell's sensitivity, from the spec.

    Parameters
    ----------
    spec : QuerySpec
        A count, sum or mean.
    max_rows : int, optional
        k of a user-level release (add-remove only): the sensitivity is k × a row's, one
        coordinate (see the module docstring). 1: row-level.

    Returns
    -------
    list of (str, float, int)
        (name, per-cell sensitivity in value units, coordinates changing between
        neighbours: 1 under add-remove, 2 under replace). The budget is split evenly.

    Raises
    ------
    QueryError
        For another query, bounds that are not finite and ordered, or k > 1 under replace.
    """
    if spec.query not in GROUPED_QUERIES:
        raise QueryError(f"a {spec.query} cannot be grouped (count, sum or mean)")
    k = _max_rows(spec, max_rows)
    coords = 2 if spec.relation == "replace" else 1
    return [(name, k * _cell_sensitivity(lo, hi, spec.relation, spec.missing), coords)
            for name, lo, hi in _parts(spec)]


def _max_rows(spec: QuerySpec, max_rows: int) -> int:
    """k, checked (:func:`~dpstudio.engine.contribution.check_max_rows`); above 1 only
    under add-remove."""
    from dpstudio.engine.contribution import check_max_rows

    k = check_max_rows(max_rows)
    if k > 1 and spec.relation != "add-remove":
        raise QueryError("a user-level release bounds adding or removing one person's rows: "
                         "use relation add-remove")
    return k


def grouped_noises(spec: QuerySpec, max_rows: int = 1) -> dict[str, IntegerNoise]:
    """The calibrated integer noise of every cell of each noisy vector, from the spec alone.

    Parameters
    ----------
    spec : QuerySpec
        A count, sum or mean (validated); the budget is split evenly over its noisy
        vectors (a mean: the sums and the counts, each ε/2 and δ/2).
    max_rows : int, optional
        k of a user-level release: every sensitivity × k (see the module docstring).

    Returns
    -------
    dict of str to IntegerNoise
        ``"count"`` and/or ``"sum"``: the noise added to each cell of that vector.

    Raises
    ------
    QueryError
        For another query, or bounds giving zero sensitivity.
    ParameterError
        For ε or δ out of range.
    """
    if spec.query not in GROUPED_QUERIES:
        raise QueryError(f"a {spec.query} cannot be grouped (count, sum or mean)")
    m = _max_rows(spec, max_rows)
    parts = _parts(spec)
    fam = _family(spec)
    eps, dlt = spec.epsilon / len(parts), spec.delta / len(parts)
    out = {}
    for (name, lo, hi), (_, sens, coords) in zip(parts, grouped_sensitivities(spec, m),
                                                 strict=True):
        if sens == 0:
            raise QueryError("the declared bounds give this statistic zero sensitivity")
        grid = fam.grid(sens, eps, dlt, coords)
        if name == "count":
            grid = min(1.0, grid)  # counts are integers: no rounding of counts
        lo_s, hi_s = math.floor(lo / grid), math.ceil(hi / grid)
        steps = m * int(_cell_sensitivity(lo_s, hi_s, spec.relation, spec.missing))
        out[name] = fam.calibrate(steps, grid, eps, dlt, coords)
    return out


def _cell_codes(key_values: list[np.ndarray], keys: tuple[tuple[str, ...], ...]
                ) -> np.ndarray:
    """One cell code per row; −1 where a key is missing or undeclared (the row drops)."""
    codes = None
    for values, labels in zip(key_values, keys, strict=True):
        c, _ = row_codes(np.asarray(values), [str(x) for x in labels])
        if codes is None:
            codes = c
        else:
            codes = np.where((codes >= 0) & (c >= 0), codes * len(labels) + c, -1)
    return codes


def _cell_sums(codes: np.ndarray, steps: np.ndarray, cells: int) -> np.ndarray:
    """Exact int64 sums of ``steps`` per cell (sorted, ``np.add.reduceat``)."""
    out = np.zeros(cells, dtype=np.int64)
    if codes.size == 0:
        return out
    order = np.argsort(codes, kind="stable")
    c, s = codes[order], steps[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    out[c[starts]] = np.add.reduceat(s, starts)
    return out


def _exact_cells(values: np.ndarray, codes: np.ndarray, spec: QuerySpec,
                 noises: dict[str, IntegerNoise], cells: int, source: Source
                 ) -> dict[str, np.ndarray]:
    """The exact integer vectors (grid steps) the noise is added to."""
    v = np.asarray(values)
    keep = codes >= 0
    out = {}
    if spec.query == "count":
        present = present_mask(v) & keep
        out["count"] = _count_steps(np.bincount(codes[present], minlength=cells), noises)
        return out
    try:
        x = np.asarray(v, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise QueryError(f"a {spec.query} needs a numeric column") from None
    c = spec.impute_value()
    finite = np.isfinite(x)
    if c is not None:
        x = np.where(finite, x, c)
        used = keep
    else:
        used = keep & finite
    x, cell = x[used], codes[used]
    lo, hi = check_bounds(spec.bounds)
    noise = noises["sum"]
    _check_exact(lo, hi, noise.grid, x.size)
    steps, _, _ = _snap(x, lo, hi, noise.grid, source)
    out["sum"] = _cell_sums(cell, steps.astype(np.int64), cells)
    if "count" in noises:
        out["count"] = _count_steps(np.bincount(cell, minlength=cells), noises)
    return out


def _count_steps(counts: np.ndarray, noises: dict[str, IntegerNoise]) -> np.ndarray:
    """Counts in the count noise's grid steps (a grid of 2^-k: each row is 2^k steps)."""
    per_row = int(round(1.0 / noises["count"].grid))
    return counts.astype(np.int64) * per_row


@dataclass
class GroupedRelease:
    """A grouped count, sum or mean: one noisy value per declared cell.

    Attributes
    ----------
    query, mechanism, relation : str
        As the spec.
    epsilon, delta, confidence : float
        The release's guarantee and the intervals' level.
    by : tuple of str
        The key columns.
    cells : list of tuple of str
        Each cell's keys, in order.
    value, ci_low, ci_high : numpy.ndarray
        Per cell: the released value and its interval (each on its own, not jointly).
    noises : dict of str to IntegerNoise
        The noise of each noisy vector.
    notes : list of str
        Public notes.
    column : str or None
        The value column.
    """

    query: str
    mechanism: str
    epsilon: float
    delta: float
    relation: str
    confidence: float
    by: tuple[str, ...]
    cells: list[tuple[str, ...]]
    value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    noises: dict[str, IntegerNoise]
    notes: list[str] = field(default_factory=list)
    column: str | None = None
    simulated: bool = False

    def labels(self) -> list[str]:
        """Each cell's label: its keys joined by " / ".

        Returns
        -------
        list of str
        """
        return [" / ".join(c) for c in self.cells]

    def public(self) -> dict[str, Any]:
        """The public fields (JSON-ready): value and interval per cell, noise, notes.

        Returns
        -------
        dict
        """
        labels = self.labels()
        return {
            "query": self.query, "column": self.column, "by": list(self.by),
            "mechanism": self.mechanism, "epsilon": self.epsilon, "delta": self.delta,
            "relation": self.relation, "confidence": self.confidence,
            "value": dict(zip(labels, self.value.tolist(), strict=True)),
            "ci_low": dict(zip(labels, self.ci_low.tolist(), strict=True)),
            "ci_high": dict(zip(labels, self.ci_high.tolist(), strict=True)),
            "components": [n.to_dict() | {"statistic": k} for k, n in self.noises.items()],
            "notes": list(self.notes),
        }

    def loss_description(self) -> LossDescription:
        """What this release drew: each noisy vector's integer noise (composed for a mean).

        Returns
        -------
        LossDescription
            Claiming this release's (ε, δ).
        """
        parts = tuple(LossDescription.from_integer_noise(n) for n in self.noises.values())
        if len(parts) == 1:
            return parts[0]
        return LossDescription("composed", epsilon=self.epsilon, delta=self.delta,
                               parts=parts)


def _post(spec: QuerySpec, noisy: dict[str, np.ndarray]) -> np.ndarray:
    if spec.query == "count":
        return noisy["count"]
    if spec.query == "sum":
        return noisy["sum"]
    lo, hi = check_bounds(spec.bounds)
    return np.clip(noisy["sum"] / np.maximum(noisy["count"], 1.0), lo, hi)


def _check(spec: QuerySpec) -> QuerySpec:
    spec = spec.validated()
    if spec.query not in GROUPED_QUERIES:
        raise QueryError(f"a {spec.query} cannot be grouped (count, sum or mean)")
    return spec


def grouped_release(values: np.ndarray, key_values: list[np.ndarray],
                    keys: tuple[tuple[str, ...], ...], spec: QuerySpec, source: Source,
                    by: tuple[str, ...] = (), max_rows: int = 1) -> GroupedRelease:
    """Release a count, sum or mean per declared cell of one or two key columns.

    Parameters
    ----------
    values : numpy.ndarray
        The value column (for a count, only which values are present is read).
    key_values : list of numpy.ndarray
        Each key column, row-aligned with ``values``.
    keys : tuple of tuple of str
        The declared keys of each key column (from the declared schema, never the data).
    spec : QuerySpec
        A count, sum or mean, its ε and δ for the whole grouped release.
    source : Source
        Random bits (:class:`~dpstudio.engine.rng.SecureSource` for a release).
    by : tuple of str, optional
        The key columns' names (labels only).
    max_rows : int, optional
        k of a user-level release: the rows given are already bounded to k per person
        (by the caller, once); every noise is calibrated to k × a row's sensitivity.

    Returns
    -------
    GroupedRelease
        Every declared cell, with noise; rows under an undeclared or missing key dropped.

    Raises
    ------
    QueryError, ParameterError
        For an invalid spec, keys, or a column that cannot answer it.
    """
    spec = _check(spec)
    cells = grouped_cells(keys)
    if len(key_values) != len(keys):
        raise QueryError("give one key column per declared key list")
    n = np.asarray(values).reshape(-1).size
    if any(np.asarray(k).reshape(-1).size != n for k in key_values):
        raise QueryError("the key columns and the value column differ in length")
    noises = grouped_noises(spec, max_rows)
    codes = _cell_codes(key_values, keys)
    exact = _exact_cells(values, codes, spec, noises, len(cells), source)
    noisy = {name: (exact[name] + noises[name].sample(len(cells), source)).astype(np.float64)
             * noises[name].grid for name in noises}
    value = _post(spec, noisy)
    if spec.query == "mean":
        lo, hi = check_bounds(spec.bounds)
        # Interval arithmetic with a union bound over the two noisy values of a cell.
        conf = 1.0 - (1.0 - spec.confidence) / 2
        hs, hc = noises["sum"].half_width(conf), noises["count"].half_width(conf)
        s, c = noisy["sum"], noisy["count"]
        c_lo = c - hc
        corners = np.stack([(s - hs) / np.maximum(c_lo, 1e-300), (s + hs) / np.maximum(
            c_lo, 1e-300), (s - hs) / (c + hc), (s + hs) / (c + hc)])
        ok = c_lo >= 1.0
        ci_low = np.where(ok, np.clip(corners.min(0), lo, hi), lo)
        ci_high = np.where(ok, np.clip(corners.max(0), lo, hi), hi)
    else:
        h = noises[spec.query].half_width(spec.confidence)
        ci_low, ci_high = value - h, value + h
    notes = ["every declared key is released, with noise, whether or not the data hold it; "
             "rows under a missing or undeclared key are dropped (under no key)",
             "each interval holds with the stated probability on its own (not jointly)"]
    if spec.relation == "replace":
        notes.append("under replace a record may move to another group: the noise covers "
                     "two changed cells")
    if spec.query == "mean":
        notes.append("mean per group = noisy sum / noisy count, each with half the budget")
    if max_rows > 1:
        notes.append(f"one person's up to {max_rows} rows may fall in several groups: the "
                     f"noise covers {max_rows} × a row's change over all groups")
    return GroupedRelease(spec.query, spec.mechanism, spec.epsilon, spec.delta,
                          spec.relation, spec.confidence, tuple(by), cells, value, ci_low,
                          ci_high, noises, notes, spec.column, not source.is_secure)


def simulate_grouped(values: np.ndarray, key_values: list[np.ndarray],
                     keys: tuple[tuple[str, ...], ...], spec: QuerySpec, size: int,
                     source: Source, max_rows: int = 1) -> np.ndarray:
    """``size`` independent grouped answers, for Monte-Carlo utility and tests.

    Parameters
    ----------
    values, key_values, keys, spec
        As :func:`grouped_release`.
    size : int
        Number of answers.
    source : Source
        The random source (a seeded one for simulation).
    max_rows : int, optional
        As :func:`grouped_release`.

    Returns
    -------
    numpy.ndarray
        Shape ``(size, cells)``.

    Raises
    ------
    QueryError, ParameterError
        As :func:`grouped_release`.
    """
    spec = _check(spec)
    cells = len(grouped_cells(keys))
    noises = grouped_noises(spec, max_rows)
    codes = _cell_codes(key_values, keys)
    # The rounding is drawn once (its variance is far below the noise's at the fine grid).
    exact = _exact_cells(values, codes, spec, noises, cells, source)
    noisy = {name: (exact[name][None, :] + noises[name].sample(size * cells, source)
                    .reshape(size, cells)) * noises[name].grid for name in noises}
    return _post(spec, noisy)
