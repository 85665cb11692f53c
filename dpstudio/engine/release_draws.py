"""Many releases of one central query at many ε, reading the column once.

A central count, sum, mean, variance or histogram is a function of the column's clamped
sufficient statistics and of fresh randomness: the bounded sums' values enter a release
only through their multiset (randomized rounding treats equal values alike), a
histogram only through its cell counts, and a quantile only through its candidates'
rank scores. :class:`ReleaseDraws` computes those once — one pass over the rows — and
then draws ``size`` releases at any ε from noise alone (and, for the rounding, one
binomial per distinct fractional part), so a Monte-Carlo utility curve costs the same
for a thousand rows as for ten million with the same distinct values.

The draws have exactly the distribution of
:func:`dpstudio.engine.queries.simulate_query` (the same plan, grid, rounding and noise;
for the same source they are the same numbers): the tests compare the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec, sum_sensitivity
from dpstudio.engine.queries.histogram import _histogram_parts
from dpstudio.engine.queries.quantile import _quantile_parts
from dpstudio.engine.queries.sums import (
    _EXACT_ROUNDING_DRAWS,
    _ROUNDING_CHUNK,
    _family,
    _Plan,
    _plan,
    _step_sensitivity,
)
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import Source

__all__ = ["ReleaseDraws"]


@dataclass
class _Multiset:
    """A bounded sum's records as distinct clamped values and how many records hold each."""

    name: str
    values: np.ndarray
    counts: np.ndarray
    lo: float
    hi: float

    def __post_init__(self) -> None:
        self.size = int(self.counts.sum())
        #: Every value distinct (a continuous column): the counts need not weigh anything.
        self.unit = self.size == self.values.size
        self.weights = self.counts.astype(np.float64)
        # Work space reused at every ε: fresh arrays of a million values would cost more
        # in page faults than the arithmetic on them.
        self.scaled = np.empty_like(self.values)
        self.floors = np.empty_like(self.values)
        self.roundings: dict[tuple[float, int], _Rounding] = {}


#: Whole numbers spanning at most this many steps are counted, not sorted.
_COUNTED_SPAN = 1 << 22


def _multiset(name: str, values: np.ndarray, lo: float, hi: float) -> _Multiset:
    """The distinct clamped values and their counts: one pass over the rows (a count of
    each whole number where the values are whole and few, else a sort)."""
    x = np.clip(values, lo, hi)
    if x.size and hi - lo <= _COUNTED_SPAN:
        low = float(x.min())
        if low == math.floor(low) and np.array_equal(x, np.floor(x)):
            counts = np.bincount((x - low).astype(np.int64))
            held = np.flatnonzero(counts)
            return _Multiset(name, held + low, counts[held].astype(np.int64), lo, hi)
    distinct, counts = np.unique(x, return_counts=True)
    return _Multiset(name, distinct, counts.astype(np.int64), lo, hi)


def _floor_sum(part: _Multiset, base: np.ndarray, grid: float) -> int:
    """Σ floor over the records, exactly: in floating point while every partial sum of
    whole numbers stays below 2^53 (then exact in any order), else in 64-bit integers."""
    steps = max(abs(math.floor(part.lo / grid)), abs(math.ceil(part.hi / grid)))
    if steps * part.size < 2**53:
        return int(base.sum() if part.unit else base @ part.weights)
    return int((base.astype(np.int64) * part.counts).sum())


@dataclass
class _Rounding:
    """What the randomized rounding of one multiset on one grid needs at each draw.

    ``floor`` is Σ floor in grid steps; then either the distinct fractional parts ``p``
    and how many records hold each (``counts``: exact binomials), or the normal law of
    the count rounded up (``mean``, ``sd``, at most ``most``), or nothing to round.
    """

    floor: int
    p: np.ndarray | None = None
    counts: np.ndarray | None = None
    mean: float = 0.0
    sd: float = 0.0
    most: int = 0

    @property
    def rounds(self) -> bool:
        return self.p is not None or self.most > 0


def _rounding(part: _Multiset, grid: float, size: int) -> _Rounding:
    """The rounding of ``part`` on ``grid`` for ``size`` draws (cached: grids repeat)."""
    key = (grid, size)
    if key in part.roundings:
        return part.roundings[key]
    x = np.divide(part.values, grid, out=part.scaled)  # a power of two: exact
    base = np.floor(x, out=part.floors)
    out = _Rounding(_floor_sum(part, base, grid))
    frac = np.subtract(x, base, out=x)
    rounded = np.count_nonzero(frac)  # distinct values with a fractional part
    limit = _EXACT_ROUNDING_DRAWS // size  # exact while distinct parts × draws ≤ 2^24
    many = False
    if rounded > limit:  # many values: do more than ``limit`` distinct parts show early?
        head = frac[:limit + 1]
        many = bool(np.all(head > 0)) and np.unique(head).size > limit
    if rounded and not many:
        up = frac > 0
        parts = frac[up]
        p = np.unique(parts)
        if p.size <= limit:
            out.p = p
            out.counts = np.bincount(np.searchsorted(p, parts),
                                     weights=None if part.unit else part.counts[up],
                                     minlength=p.size).astype(np.int64)
    if rounded and out.p is None:
        # The engine's normal approximation: mean Σ f, variance Σ f(1 − f) over the
        # records (a value without a fractional part adds nothing to either).
        square = np.multiply(frac, frac, out=part.floors)
        if part.unit:
            mean, second, most = float(frac.sum()), float(square.sum()), rounded
        else:
            mean, second = float(frac @ part.weights), float(square @ part.weights)
            most = int(part.counts[frac > 0].sum())
        out.mean, out.sd, out.most = mean, math.sqrt(max(mean - second, 0.0)), most
    part.roundings[key] = out
    return out


def _rounded_sums(part: _Multiset, grid: float, source: Source, size: int) -> np.ndarray:
    """``size`` draws of the randomized-rounded sum in grid steps, from the multiset.

    The engine's bulk rounding (:func:`dpstudio.engine.queries.sums._rounded_sums`) on
    the records: Σ floor plus, per distinct fractional part p held by c records, a
    Binomial(c, p) of records rounded up — the same numbers, grouped by value first.
    Beyond 2^24 binomial draws it takes the engine's normal approximation of the count
    rounded up, as the engine does. Which of the two applies is decided without sorting
    every distinct value where a prefix already holds too many distinct parts, and once
    per grid: a column of ten million distinct values costs a few passes over them per
    grid, no sort; one of a few hundred distinct values, nothing that grows with n.
    """
    r = _rounding(part, grid, size)
    total = np.full(size, r.floor, dtype=np.int64)
    if not r.rounds:
        return total
    gen = np.random.Generator(np.random.PCG64([int(w) for w in source.uint64(4)]))
    if r.p is not None:
        rows = max(1, _ROUNDING_CHUNK // r.p.size)
        for start in range(0, size, rows):
            stop = min(size, start + rows)
            total[start:stop] += gen.binomial(r.counts, r.p,
                                              size=(stop - start, r.p.size)).sum(1)
        return total
    ups = np.rint(gen.normal(r.mean, r.sd, size))
    return total + np.clip(ups, 0, r.most).astype(np.int64)


class ReleaseDraws:
    """Independent simulated releases of one central query, from statistics read once.

    Parameters
    ----------
    values : numpy.ndarray
        The analyst's column, as for :func:`~dpstudio.engine.queries.run_query`.
    spec : QuerySpec
        The release; :meth:`draw` replaces its ε.

    Raises
    ------
    QueryError, ParameterError
        For a spec or column the engine refuses (as :func:`run_query` would).
    """

    def __init__(self, values: np.ndarray, spec: QuerySpec) -> None:
        self.spec = spec.validated()
        self._counts = self._quantile = None
        self._plan: _Plan | None = None
        self._parts: list[_Multiset] = []
        if spec.query == "histogram":
            self._counts = _histogram_parts(values, self.spec)[0]
        elif spec.query in ("quantile", "median"):
            mech, candidates, scores, _ = _quantile_parts(values, self.spec)
            self._quantile = (mech.sensitivity, candidates, scores)
        else:
            # The plan's sums and post-processing do not depend on ε, only their noise.
            self._plan = _plan(values, self.spec)
            self._parts = [_multiset(p.name, p.values, p.lo, p.hi) for p in self._plan.sums]

    def draw(self, epsilon: float, size: int, source: Source) -> np.ndarray:
        """``size`` independent releases at ``epsilon``.

        Parameters
        ----------
        epsilon : float
            The release's ε (δ and everything else as the spec says).
        size : int
            Number of releases.
        source : Source
            The random source.

        Returns
        -------
        numpy.ndarray
            Shape ``(size,)``, or ``(size, cells)`` for a histogram: distributed as
            :func:`~dpstudio.engine.queries.simulate_query`'s answers.

        Raises
        ------
        QueryError, ParameterError
            For an ε the mechanism refuses.
        """
        spec = replace(self.spec, epsilon=float(epsilon)).validated()
        size = int(size)
        if self._counts is not None:
            return self._histogram(spec, size, source)
        if self._quantile is not None:
            sensitivity, candidates, scores = self._quantile
            mech = REGISTRY.get(spec.mechanism).build(epsilon=spec.epsilon,
                                                      sensitivity=sensitivity)
            return candidates[mech.select(scores, source, size=size)]
        return self._sums(spec, size, source)

    def _histogram(self, spec: QuerySpec, size: int, source: Source) -> np.ndarray:
        # The noise of :func:`~dpstudio.engine.queries.histogram._histogram_parts`.
        fam = _family(spec)
        coords = 2 if spec.relation == "replace" else 1
        grid = min(1.0, fam.grid(1.0, spec.epsilon, spec.delta, coords))
        noise = fam.calibrate(int(round(1.0 / grid)), grid, spec.epsilon, spec.delta, coords)
        counts = self._counts
        draws = noise.sample(size * counts.size, source).reshape(size, counts.size)
        return (counts * noise.sensitivity + draws) * noise.grid

    def _sums(self, spec: QuerySpec, size: int, source: Source) -> np.ndarray:
        # :func:`~dpstudio.engine.queries.sums._noisy_sums` on the multisets: the budget
        # split evenly over the sums, each rounded afresh and given its integer noise.
        family = _family(spec)
        k = len(self._parts)
        eps, dlt = spec.epsilon / k, spec.delta / k
        noisy = {}
        for part in self._parts:
            sens = sum_sensitivity(part.lo, part.hi, spec.relation, spec.missing)
            if sens == 0:
                raise QueryError("the declared bounds give this statistic zero sensitivity")
            grid = family.grid(sens, eps, dlt)
            lo_s, hi_s = math.floor(part.lo / grid), math.ceil(part.hi / grid)
            if part.size and (abs(lo_s) + abs(hi_s)) * part.size >= 2**62:
                raise QueryError("too many records for an exact integer sum at this precision")
            sums = _rounded_sums(part, grid, source, size)
            noise = family.calibrate(_step_sensitivity(lo_s, hi_s, spec.relation,
                                                       spec.missing), grid, eps, dlt)
            noisy[part.name] = (sums + noise.sample(size, source)) * grid
        return self._plan.post(noisy)
