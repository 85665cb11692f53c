"""Central-model queries on one declared column: count, sum, mean, variance, histogram,
quantiles.

Every numeric query is built from one primitive, a *bounded sum*: values clamped to the
user's declared bounds, snapped to the mechanism's grid by unbiased randomized rounding,
summed as exact integers, plus exact integer noise. Sensitivity follows from the declared
bounds and the neighbouring relation only — never from the data. Mean and variance spend
the budget on several bounded sums (basic composition) and carry confidence intervals
by interval arithmetic with a union bound, so the stated coverage is a guarantee.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.additive import IntegerNoise, NoiseFamily
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import Source, require_secure
from dpstudio.engine.selection import SelectionMechanism

__all__ = [
    "QUERIES",
    "RELATIONS",
    "QuerySpec",
    "Release",
    "release",
    "run_query",
    "sum_sensitivity",
]

QUERIES = ("count", "sum", "mean", "variance", "histogram", "quantile", "median")
RELATIONS = ("add-remove", "replace")


@dataclass(frozen=True)
class QuerySpec:
    """What to release: the query, its declared domain, the mechanism and the budget.

    Parameters
    ----------
    query : one of :data:`QUERIES`.
    mechanism : a registry name (``laplace``, ``gaussian``, …).
    epsilon, delta : the budget this release spends.
    bounds : declared (lower, upper) for numeric queries and binned histograms.
    categories : declared categories for a categorical histogram.
    bins : number of equal-width bins for a numeric histogram.
    quantile : q in [0, 1] for ``quantile`` (``median`` is q = 0.5).
    relation : neighbouring relation, ``add-remove`` (one record more or fewer) or
        ``replace`` (one record's value changed).
    confidence : level of the confidence intervals reported with the release.
    params : further mechanism parameters (e.g. ``calibration`` or ``candidates``).
    """

    query: str
    mechanism: str
    epsilon: float
    delta: float = 0.0
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    bins: int | None = None
    quantile: float | None = None
    relation: str = "add-remove"
    confidence: float = 0.95
    params: dict[str, Any] = field(default_factory=dict)
    column: str | None = None

    def mechanism_params(self) -> dict[str, Any]:
        """The mechanism's parameters: ``params`` with this spec's ε (and δ if it takes one)."""
        names = {p.name for p in REGISTRY.get(self.mechanism).params}
        budget = {"epsilon": self.epsilon, "delta": self.delta}
        return {**self.params, **{k: v for k, v in budget.items() if k in names}}

    def validated(self) -> QuerySpec:
        """Check every field; raise QueryError/ParameterError with a one-line message."""
        if self.query not in QUERIES:
            raise QueryError(f"unknown query {self.query!r} (choose from {', '.join(QUERIES)})")
        if self.relation not in RELATIONS:
            raise QueryError(f"relation must be add-remove or replace, got {self.relation!r}")
        validate_epsilon(self.epsilon)
        validate_delta(self.delta)
        if not (0.0 < float(self.confidence) < 1.0):
            raise QueryError(f"confidence must lie strictly between 0 and 1, got {self.confidence}")
        info = REGISTRY.get(self.mechanism)
        if "central" not in info.trust_models:
            raise QueryError(f"{self.mechanism} is not a central-model mechanism")
        if self.query not in info.queries:
            raise QueryError(
                f"{info.label} does not answer {self.query} queries "
                f"(it answers {', '.join(info.queries)})"
            )
        if info.needs_delta and not self.delta > 0:
            raise ParameterError(f"{info.label} needs δ > 0 (e.g. --delta 1e-6)")
        info.resolve(self.mechanism_params())
        if self.bounds is not None:
            check_bounds(self.bounds)
        if self.query in ("sum", "mean", "variance", "quantile", "median") and self.bounds is None:
            raise QueryError(f"a {self.query} needs declared bounds (e.g. --bounds 0,100)")
        if self.query == "histogram":
            if self.categories is None and (self.bounds is None or self.bins is None):
                raise QueryError(
                    "a histogram needs declared categories (--categories a,b,c) "
                    "or declared bounds and a number of bins (--bounds 0,100 --bins 10)"
                )
            if self.categories is not None and len(set(self.categories)) != len(self.categories):
                raise QueryError("declared categories must be distinct")
            if self.categories is not None and len(self.categories) == 0:
                raise QueryError("declare at least one category")
            if self.categories is None and not (1 <= int(self.bins) <= 100_000):
                raise QueryError(f"bins must be between 1 and 100000, got {self.bins}")
        if self.query == "quantile":
            if self.quantile is None or not (0.0 <= float(self.quantile) <= 1.0):
                raise QueryError(f"quantile must be in [0, 1], got {self.quantile}")
        return self


def check_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    """Return (lower, upper) as floats, or raise QueryError for non-finite or reversed ones."""
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise QueryError(f"bounds must be two numbers, got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise QueryError(f"bounds must be finite, got {lo:g}, {hi:g}")
    if lo >= hi:
        raise QueryError(f"bounds are reversed or empty: lower {lo:g} must be below upper {hi:g}")
    return lo, hi


def sum_sensitivity(lower: float, upper: float, relation: str) -> float:
    """Sensitivity of a sum of values in [lower, upper] under the neighbouring relation.

    Adding or removing one record moves the sum by at most max(|lower|, |upper|);
    replacing one record's value moves it by at most upper − lower.
    """
    if relation == "replace":
        return upper - lower
    return max(abs(lower), abs(upper))


@dataclass
class Release:
    """A released statistic with its privacy parameters and its utility.

    ``value``, ``ci_low`` and ``ci_high`` are floats, or dicts label → float for a
    histogram. ``clamped`` (values outside the declared bounds or categories) is for the
    analyst's eyes only and is never part of an exported release.
    """

    query: str
    mechanism: str
    epsilon: float
    delta: float
    relation: str
    value: Any
    sensitivity: float
    noise_scale: float | None
    variance: Any
    ci_low: Any
    ci_high: Any
    confidence: float
    simulated: bool
    source: str
    column: str | None = None
    variance_exact: bool = True
    components: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    clamped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------- primitives


def _finite(values: np.ndarray) -> np.ndarray:
    """The finite entries of ``values`` (missing values, NaN, are not records' values)."""
    v = np.asarray(values, dtype=np.float64)
    return v[np.isfinite(v)]


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


@dataclass
class _Noisy:
    """One noisy bounded sum: released value (value units) and its noise."""

    value: float
    noise: IntegerNoise

    def interval(self, confidence: float) -> tuple[float, float]:
        h = self.noise.half_width(confidence)
        return self.value - h, self.value + h


def _bounded_sum(values: np.ndarray, lo: float, hi: float, family: NoiseFamily,
                 relation: str, epsilon: float, delta: float, source: Source) -> _Noisy:
    """Noisy sum of ``values`` clamped to [lo, hi] (values already finite)."""
    sens = sum_sensitivity(lo, hi, relation)
    if sens == 0:
        raise QueryError("the declared bounds give this statistic zero sensitivity")
    grid = family.grid(sens, epsilon, delta)
    steps, lo_s, hi_s = _snap(values, lo, hi, grid, source)
    sens_steps = int(hi_s - lo_s) if relation == "replace" else int(max(abs(lo_s), abs(hi_s)))
    if steps.size and (abs(lo_s) + abs(hi_s)) * steps.size >= 2**62:
        raise QueryError("too many records for an exact integer sum at this precision")
    noise = family.calibrate(sens_steps, grid, epsilon, delta)
    total = int(steps.sum()) + int(noise.sample(1, source)[0])
    return _Noisy(total * grid, noise)


def _count_noisy(values: np.ndarray, family: NoiseFamily, relation: str, epsilon: float,
                 delta: float, source: Source) -> _Noisy:
    """Noisy number of (non-missing) values: a bounded sum of ones, sensitivity 1.

    Under replace a record can change from missing to present, so the count is not public.
    """
    return _bounded_sum(np.ones(values.size), 0.0, 1.0, family, relation, epsilon, delta,
                        source)


def _family(spec: QuerySpec) -> NoiseFamily:
    info = REGISTRY.get(spec.mechanism)
    return info.build(**info.resolve(spec.mechanism_params()))


def _box_ratio(num: tuple[float, float], den: tuple[float, float]) -> tuple[float, float]:
    """Range of a/b over a ∈ num, b ∈ den with den > 0."""
    corners = [a / b for a in num for b in den]
    return min(corners), max(corners)


# ------------------------------------------------------------------------------ queries


def run_query(values: np.ndarray, spec: QuerySpec, source: Source) -> Release:
    """Answer ``spec`` on ``values`` with randomness from ``source`` (secure or simulated).

    ``values``: a float array for numeric queries (NaN = missing), an array of strings for
    categorical histograms (None = missing). Use :func:`release` for a real release: it
    insists on the OS CSPRNG.
    """
    spec = spec.validated()
    handler = {
        "count": _count, "sum": _sum, "mean": _mean, "variance": _variance,
        "histogram": _histogram, "quantile": _quantile, "median": _quantile,
    }[spec.query]
    out = handler(values, spec, source)
    out.simulated = not source.is_secure
    out.source = source.label
    out.column = spec.column
    return out


def release(values: np.ndarray, spec: QuerySpec, source: Source) -> Release:
    """A real release: like :func:`run_query` but only with a :class:`SecureSource`."""
    return run_query(values, spec, require_secure(source))


def _numeric(values: np.ndarray, spec: QuerySpec) -> tuple[np.ndarray, int]:
    """Finite values and how many fall outside the declared bounds (analyst-only)."""
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise QueryError(f"a {spec.query} needs a numeric column") from None
    if v.size == 0:
        raise QueryError("the column is empty")
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        raise QueryError("the column has no finite values (all missing, NaN or infinite)")
    if spec.bounds is None:
        return finite, 0
    lo, hi = check_bounds(spec.bounds)
    return finite, int(np.count_nonzero((finite < lo) | (finite > hi)))


def _scalar_release(spec: QuerySpec, noisy: _Noisy, clamped: int, sensitivity: float) -> Release:
    lo, hi = noisy.interval(spec.confidence)
    return Release(
        query=spec.query, mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=noisy.value, sensitivity=sensitivity,
        noise_scale=noisy.noise.noise_scale, variance=noisy.noise.variance, ci_low=lo,
        ci_high=hi, confidence=spec.confidence, simulated=False, source="",
        components=[noisy.noise.to_dict()], clamped=clamped,
    )


def _present(values: np.ndarray) -> np.ndarray:
    """Mask of non-missing entries: not None and not NaN (NaN is the one value ≠ itself)."""
    v = np.asarray(values)
    if v.dtype.kind in "fc":
        return ~np.isnan(v)
    if v.dtype.kind != "O":
        return np.ones(v.shape, dtype=bool)
    return np.not_equal(v, None) & np.equal(v, v)


def _count(values, spec, source):
    v = np.asarray(values)
    if v.size == 0:
        raise QueryError("the column is empty")
    noisy = _count_noisy(v[_present(v)], _family(spec), spec.relation, spec.epsilon, spec.delta,
                         source)
    return _scalar_release(spec, noisy, 0, 1.0)


def _sum(values, spec, source):
    finite, clamped = _numeric(values, spec)
    lo, hi = check_bounds(spec.bounds)
    noisy = _bounded_sum(finite, lo, hi, _family(spec), spec.relation, spec.epsilon,
                         spec.delta, source)
    return _scalar_release(spec, noisy, clamped, sum_sensitivity(lo, hi, spec.relation))


def _mean(values, spec, source):
    finite, clamped = _numeric(values, spec)
    lo, hi = check_bounds(spec.bounds)
    fam = _family(spec)
    eps, dlt = spec.epsilon / 2, spec.delta / 2
    total = _bounded_sum(finite, lo, hi, fam, spec.relation, eps, dlt, source)
    count = _count_noisy(finite, fam, spec.relation, eps, dlt, source)
    c = max(count.value, 1.0)
    value = float(np.clip(total.value / c, lo, hi))
    # Union bound over the two noisy sums; the ratio's range over the box is the interval.
    conf = 1.0 - (1.0 - spec.confidence) / 2
    s_iv, c_iv = total.interval(conf), count.interval(conf)
    if c_iv[0] < 1.0:
        ci = (lo, hi)
    else:
        ci = tuple(float(np.clip(x, lo, hi)) for x in _box_ratio(s_iv, c_iv))
    var = (total.noise.variance + value * value * count.noise.variance) / (c * c)
    return Release(
        query="mean", mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=value,
        sensitivity=sum_sensitivity(lo, hi, spec.relation),
        noise_scale=total.noise.noise_scale, variance=var, ci_low=ci[0], ci_high=ci[1],
        confidence=spec.confidence, simulated=False, source="", variance_exact=False,
        components=[total.noise.to_dict() | {"statistic": "sum"},
                    count.noise.to_dict() | {"statistic": "count"}],
        notes=["mean = noisy sum / noisy count, each with half the budget; "
               "variance by the delta method (approximate); interval guaranteed"],
        clamped=clamped,
    )


def _variance(values, spec, source):
    finite, clamped = _numeric(values, spec)
    lo, hi = check_bounds(spec.bounds)
    fam = _family(spec)
    eps, dlt = spec.epsilon / 3, spec.delta / 3
    sq_lo = 0.0 if lo <= 0.0 <= hi else min(lo * lo, hi * hi)
    sq_hi = max(lo * lo, hi * hi)
    clipped = np.clip(finite, lo, hi)
    sum_sq = _bounded_sum(clipped * clipped, sq_lo, sq_hi, fam, spec.relation, eps, dlt, source)
    total = _bounded_sum(clipped, lo, hi, fam, spec.relation, eps, dlt, source)
    count = _count_noisy(finite, fam, spec.relation, eps, dlt, source)
    c = max(count.value, 1.0)
    cap = (hi - lo) ** 2 / 4.0  # the largest variance of values in [lo, hi]
    value = float(np.clip(sum_sq.value / c - (total.value / c) ** 2, 0.0, cap))
    conf = 1.0 - (1.0 - spec.confidence) / 3
    c_iv = count.interval(conf)
    if c_iv[0] < 1.0:
        ci = (0.0, cap)
    else:
        sq_iv = sum_sq.interval(conf)
        a_lo, a_hi = _box_ratio((max(sq_iv[0], 0.0), max(sq_iv[1], 0.0)), c_iv)
        m_lo, m_hi = _box_ratio(total.interval(conf), c_iv)
        msq_lo = 0.0 if m_lo <= 0.0 <= m_hi else min(m_lo * m_lo, m_hi * m_hi)
        msq_hi = max(m_lo * m_lo, m_hi * m_hi)
        ci = (float(np.clip(a_lo - msq_hi, 0.0, cap)), float(np.clip(a_hi - msq_lo, 0.0, cap)))
    m = total.value / c
    var = (sum_sq.noise.variance + 4 * m * m * total.noise.variance
           + (sum_sq.value / c - 2 * m * m) ** 2 * count.noise.variance) / (c * c)
    return Release(
        query="variance", mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=value,
        sensitivity=sum_sensitivity(lo, hi, spec.relation),
        noise_scale=total.noise.noise_scale, variance=var, ci_low=ci[0], ci_high=ci[1],
        confidence=spec.confidence, simulated=False, source="", variance_exact=False,
        components=[sum_sq.noise.to_dict() | {"statistic": "sum of squares"},
                    total.noise.to_dict() | {"statistic": "sum"},
                    count.noise.to_dict() | {"statistic": "count"}],
        notes=["variance = Σx²/n − (Σx/n)² from three noisy sums, each with a third of the "
               "budget; interval guaranteed by interval arithmetic"],
        clamped=clamped,
    )


def histogram_bins(spec: QuerySpec) -> tuple[list[str], np.ndarray | None]:
    """Labels of the histogram's cells and, for a binned numeric histogram, the edges."""
    if spec.categories is not None:
        return [str(c) for c in spec.categories], None
    lo, hi = check_bounds(spec.bounds)
    edges = np.linspace(lo, hi, int(spec.bins) + 1)
    return [f"[{a:g}, {b:g})" for a, b in zip(edges[:-1], edges[1:], strict=True)], edges


def _histogram(values, spec, source):
    labels, edges = histogram_bins(spec)
    v = np.asarray(values)
    if v.size == 0:
        raise QueryError("the column is empty")
    if edges is None:
        present = v[_present(v)].astype(str)
        distinct, codes = np.unique(present, return_inverse=True)
        index = {c: i for i, c in enumerate(labels)}
        # A dictionary look-up per distinct value, not per record.
        cell_of = np.array([index.get(d, -1) for d in distinct.tolist()], dtype=np.int64)
        cells = cell_of[codes] if present.size else np.empty(0, dtype=np.int64)
        clamped = int(np.count_nonzero(cells == -1))  # present, but not a declared category
        cells = cells[cells >= 0]
    else:
        finite, clamped = _numeric(v, spec)
        cells = np.clip(np.searchsorted(edges, finite, side="right") - 1, 0, len(labels) - 1)
    counts = np.bincount(cells, minlength=len(labels)).astype(np.int64)
    fam = _family(spec)
    # One record changes one cell by 1 (add/remove) or two cells by 1 each (replace).
    coords = 2 if spec.relation == "replace" else 1
    # Counts are integers: the grid never coarsens past 1 here (no rounding of counts).
    grid = min(1.0, fam.grid(1.0, spec.epsilon, spec.delta, coords))
    steps = int(round(1.0 / grid))
    noise = fam.calibrate(steps, grid, spec.epsilon, spec.delta, coords)
    noisy = (counts * steps + noise.sample(counts.size, source)) * grid
    h = noise.half_width(spec.confidence)
    return Release(
        query="histogram", mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=dict(zip(labels, noisy.tolist(), strict=True)),
        sensitivity=noise.sensitivity_value, noise_scale=noise.noise_scale,
        variance=noise.variance, ci_low=dict(zip(labels, (noisy - h).tolist(), strict=True)),
        ci_high=dict(zip(labels, (noisy + h).tolist(), strict=True)),
        confidence=spec.confidence, simulated=False, source="",
        components=[noise.to_dict()],
        notes=["each interval holds with the stated probability on its own (not jointly)"],
        clamped=clamped,
    )


def quantile_scores(values: np.ndarray, candidates: np.ndarray, q: float) -> np.ndarray:
    """Utility of each candidate c: −|(1−q)·#{x < c} − q·#{x > c}| (no need to know n)."""
    x = np.sort(values)
    below = np.searchsorted(x, candidates, side="left")
    above = x.size - np.searchsorted(x, candidates, side="right")
    return -np.abs((1.0 - q) * below - q * above)


def _quantile(values, spec, source):
    finite, clamped = _numeric(values, spec)
    lo, hi = check_bounds(spec.bounds)
    q = 0.5 if spec.query == "median" else float(spec.quantile)
    info = REGISTRY.get(spec.mechanism)
    params = info.resolve(spec.mechanism_params())
    candidates = np.linspace(lo, hi, int(params["candidates"]))
    # One record moves a score by at most max(q, 1−q) when added or removed, and by at most
    # 1 when its value changes.
    du = 1.0 if spec.relation == "replace" else max(q, 1.0 - q)
    mech: SelectionMechanism = info.build(epsilon=spec.epsilon, sensitivity=du)
    scores = quantile_scores(np.clip(finite, lo, hi), candidates, q)
    chosen = mech.select(scores, source)
    beta = 1.0 - spec.confidence
    return Release(
        query=spec.query, mechanism=spec.mechanism, epsilon=spec.epsilon, delta=0.0,
        relation=spec.relation, value=float(candidates[chosen]), sensitivity=du,
        noise_scale=None, variance=None, ci_low=None, ci_high=None,
        confidence=spec.confidence, simulated=False, source="",
        components=[{"mechanism": spec.mechanism, "candidates": int(candidates.size),
                     "score_sensitivity": du, "epsilon": spec.epsilon,
                     "rank_error_bound": mech.utility_bound(candidates.size, beta)}],
        notes=[f"with probability {spec.confidence:g} the released value's rank error is at "
               f"most {mech.utility_bound(candidates.size, beta):.1f} records "
               "(exponential-mechanism bound); no interval in value units without more budget"],
        clamped=clamped,
    )
