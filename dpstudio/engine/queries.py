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
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.additive import IntegerNoise, NoiseFamily
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import bounds_pair
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import Source, require_secure
from dpstudio.engine.selection import SelectionMechanism

__all__ = [
    "QUERIES",
    "RELATIONS",
    "QuerySpec",
    "Release",
    "category_codes",
    "delta_method_variance",
    "plan_sums",
    "present_mask",
    "release",
    "run_query",
    "simulate_query",
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
    return bounds_pair(bounds)


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
class _Sum:
    """One bounded sum a query spends budget on: its values and declared range."""

    name: str
    values: np.ndarray
    lo: float
    hi: float


@dataclass
class _Plan:
    """A numeric query as bounded sums plus a vectorized post-processing of their values."""

    sums: list[_Sum]
    post: Callable[[dict[str, np.ndarray]], np.ndarray]
    clamped: int
    sensitivity: float
    lo: float = 0.0
    hi: float = 0.0


def _noisy_sums(plan: _Plan, family: NoiseFamily, spec: QuerySpec, source: Source,
                size: int) -> tuple[dict[str, np.ndarray], dict[str, IntegerNoise]]:
    """``size`` noisy draws of each bounded sum; the budget split evenly (basic composition)."""
    eps, dlt = spec.epsilon / len(plan.sums), spec.delta / len(plan.sums)
    values, noises = {}, {}
    for part in plan.sums:
        sens = sum_sensitivity(part.lo, part.hi, spec.relation)
        if sens == 0:
            raise QueryError("the declared bounds give this statistic zero sensitivity")
        grid = family.grid(sens, eps, dlt)
        steps, lo_s, hi_s = _snap(part.values, part.lo, part.hi, grid, source)
        if steps.size and (abs(lo_s) + abs(hi_s)) * steps.size >= 2**62:
            raise QueryError("too many records for an exact integer sum at this precision")
        sens_steps = hi_s - lo_s if spec.relation == "replace" else max(abs(lo_s), abs(hi_s))
        noise = family.calibrate(int(sens_steps), grid, eps, dlt)
        values[part.name] = (int(steps.sum()) + noise.sample(size, source)) * grid
        noises[part.name] = noise
    return values, noises


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
    if spec.query == "histogram":
        out = _histogram(values, spec, source)
    elif spec.query in ("quantile", "median"):
        out = _quantile(values, spec, source)
    else:
        out = _numeric_release(values, spec, source)
    if not REGISTRY.get(spec.mechanism).needs_delta:
        out.delta = 0.0  # a pure-ε mechanism spends no δ, whatever the spec offered
    out.simulated = not source.is_secure
    out.source = source.label
    out.column = spec.column
    return out


def release(values: np.ndarray, spec: QuerySpec, source: Source) -> Release:
    """A real release: like :func:`run_query` but only with a :class:`SecureSource`."""
    return run_query(values, spec, require_secure(source))


def simulate_query(values: np.ndarray, spec: QuerySpec, size: int, source: Source
                   ) -> np.ndarray:
    """``size`` independent answers of ``spec`` on ``values``, for Monte-Carlo utility.

    Exactly the release's distribution (the same plan, noise and post-processing), drawn
    in bulk: shape ``(size,)``, or ``(size, cells)`` for a histogram. Randomized rounding to
    the grid is drawn once, not per answer (its effect is far below the noise's).
    """
    spec = spec.validated()
    size = int(size)
    if spec.query == "histogram":
        counts, noise, _, _ = _histogram_parts(values, spec)
        draws = noise.sample(size * counts.size, source).reshape(size, counts.size)
        return (counts * noise.sensitivity + draws) * noise.grid
    if spec.query in ("quantile", "median"):
        mech, candidates, scores, _ = _quantile_parts(values, spec)
        return candidates[mech.select(scores, source, size=size)]
    plan = _plan(values, spec)
    noisy, _ = _noisy_sums(plan, _family(spec), spec, source, size)
    return plan.post(noisy)


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


def present_mask(values: np.ndarray) -> np.ndarray:
    """Mask of non-missing entries: not None and not NaN (NaN is the one value ≠ itself)."""
    v = np.asarray(values)
    if v.dtype.kind in "fc":
        return ~np.isnan(v)
    if v.dtype.kind != "O":
        return np.ones(v.shape, dtype=bool)
    return np.not_equal(v, None) & np.equal(v, v)


def category_codes(values: np.ndarray, labels: list[str]) -> tuple[np.ndarray, int]:
    """Codes (indices into ``labels``, compared as text) of the present values that are
    declared, and how many present values were not declared (analyst-only).

    Vectorized: one dictionary look-up per distinct value, not per record.
    """
    v = np.asarray(values).reshape(-1)
    present = v[present_mask(v)].astype(str)
    if present.size == 0:
        return np.empty(0, dtype=np.int64), 0
    distinct, inverse = np.unique(present, return_inverse=True)
    index = {c: i for i, c in enumerate(labels)}
    cells = np.array([index.get(d, -1) for d in distinct.tolist()], dtype=np.int64)[inverse]
    return cells[cells >= 0], int(np.count_nonzero(cells < 0))


def _plan(values: np.ndarray, spec: QuerySpec) -> _Plan:
    """The bounded sums of a count, sum, mean or variance, and how to combine them.

    The count of values is a bounded sum of ones in [0, 1] (sensitivity 1 under both
    relations: under replace a value can change from missing to present). Mean and
    variance divide by a noisy count, floored at 1.
    """
    if spec.query == "count":
        v = np.asarray(values)
        if v.size == 0:
            raise QueryError("the column is empty")
        ones = np.ones(int(np.count_nonzero(present_mask(v))))
        return _Plan([_Sum("count", ones, 0.0, 1.0)], lambda d: d["count"], 0, 1.0)
    finite, clamped = _numeric(values, spec)
    lo, hi = check_bounds(spec.bounds)
    sens = sum_sensitivity(lo, hi, spec.relation)
    total = _Sum("sum", finite, lo, hi)
    count = _Sum("count", np.ones(finite.size), 0.0, 1.0)
    if spec.query == "sum":
        return _Plan([total], lambda d: d["sum"], clamped, sens, lo, hi)
    if spec.query == "mean":
        def mean(d):
            return np.clip(d["sum"] / np.maximum(d["count"], 1.0), lo, hi)

        return _Plan([total, count], mean, clamped, sens, lo, hi)
    sq_lo = 0.0 if lo <= 0.0 <= hi else min(lo * lo, hi * hi)
    sq_hi = max(lo * lo, hi * hi)
    clipped = np.clip(finite, lo, hi)
    squares = _Sum("sum of squares", clipped * clipped, sq_lo, sq_hi)
    cap = (hi - lo) ** 2 / 4.0  # the largest variance of values in [lo, hi]

    def variance(d):
        c = np.maximum(d["count"], 1.0)
        return np.clip(d["sum of squares"] / c - (d["sum"] / c) ** 2, 0.0, cap)

    return _Plan([squares, total, count], variance, clamped, sens, lo, hi)


def delta_method_variance(query: str, sums: dict[str, float], variances: dict[str, float]
                          ) -> float:
    """Approximate variance of a count, sum, mean or variance from its noisy sums.

    ``sums`` are the (noisy or true) bounded sums by name, ``variances`` their noise
    variances; first-order (delta method) for the ratios of mean and variance.
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
    """(name, true sum of the clamped values, sensitivity) of each bounded sum of a count,
    sum, mean or variance — for analytic utility on the analyst's own data, never released.
    """
    plan = _plan(values, spec.validated())
    return [(p.name, float(np.clip(p.values, p.lo, p.hi).sum()),
             sum_sensitivity(p.lo, p.hi, spec.relation)) for p in plan.sums]


def _numeric_release(values: np.ndarray, spec: QuerySpec, source: Source) -> Release:
    plan = _plan(values, spec)
    noisy, noises = _noisy_sums(plan, _family(spec), spec, source, 1)
    value = float(plan.post(noisy)[0])
    got = {name: float(v[0]) for name, v in noisy.items()}
    # Union bound: each noisy sum's interval at 1 − β/k holds jointly with 1 − β.
    conf = 1.0 - (1.0 - spec.confidence) / len(plan.sums)
    iv = {name: (got[name] - noises[name].half_width(conf),
                 got[name] + noises[name].half_width(conf)) for name in got}
    var = {name: noises[name].variance for name in got}
    notes: list[str] = []
    exact = True
    variance = delta_method_variance(spec.query, got, var)
    if spec.query in ("count", "sum"):
        (name,) = got
        ci = iv[name]
    else:
        exact = False
        lo, hi = plan.lo, plan.hi
        if spec.query == "mean":
            ci = (lo, hi) if iv["count"][0] < 1.0 else tuple(
                float(np.clip(x, lo, hi)) for x in _box_ratio(iv["sum"], iv["count"]))
            notes.append("mean = noisy sum / noisy count, each with half the budget; variance "
                         "by the delta method (approximate); interval guaranteed")
        else:
            cap = (hi - lo) ** 2 / 4.0
            if iv["count"][0] < 1.0:
                ci = (0.0, cap)
            else:
                sq = iv["sum of squares"]
                a_lo, a_hi = _box_ratio((max(sq[0], 0.0), max(sq[1], 0.0)), iv["count"])
                m_lo, m_hi = _box_ratio(iv["sum"], iv["count"])
                msq_lo = 0.0 if m_lo <= 0.0 <= m_hi else min(m_lo * m_lo, m_hi * m_hi)
                msq_hi = max(m_lo * m_lo, m_hi * m_hi)
                ci = (float(np.clip(a_lo - msq_hi, 0.0, cap)),
                      float(np.clip(a_hi - msq_lo, 0.0, cap)))
            notes.append("variance = Σx²/n − (Σx/n)² from three noisy sums, each with a third "
                         "of the budget; interval guaranteed by interval arithmetic")
    main = noises.get("sum", next(iter(noises.values())))
    return Release(
        query=spec.query, mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=value, sensitivity=plan.sensitivity,
        noise_scale=main.noise_scale, variance=variance, ci_low=float(ci[0]),
        ci_high=float(ci[1]), confidence=spec.confidence, simulated=False, source="",
        variance_exact=exact,
        components=[noises[n].to_dict() | {"statistic": n} for n in noises],
        notes=notes, clamped=plan.clamped,
    )


def histogram_bins(spec: QuerySpec) -> tuple[list[str], np.ndarray | None]:
    """Labels of the histogram's cells and, for a binned numeric histogram, the edges."""
    if spec.categories is not None:
        return [str(c) for c in spec.categories], None
    lo, hi = check_bounds(spec.bounds)
    edges = np.linspace(lo, hi, int(spec.bins) + 1)
    return [f"[{a:g}, {b:g})" for a, b in zip(edges[:-1], edges[1:], strict=True)], edges


def _histogram_parts(values, spec: QuerySpec):
    """True counts per cell, calibrated noise, labels and the analyst-only clamped count."""
    labels, edges = histogram_bins(spec)
    v = np.asarray(values)
    if v.size == 0:
        raise QueryError("the column is empty")
    if edges is None:
        cells, clamped = category_codes(v, labels)
    else:
        finite, clamped = _numeric(v, spec)
        cells = np.clip(np.searchsorted(edges, finite, side="right") - 1, 0, len(labels) - 1)
    counts = np.bincount(cells, minlength=len(labels)).astype(np.int64)
    fam = _family(spec)
    # One record changes one cell by 1 (add/remove) or two cells by 1 each (replace).
    coords = 2 if spec.relation == "replace" else 1
    # Counts are integers: the grid never coarsens past 1 here (no rounding of counts).
    grid = min(1.0, fam.grid(1.0, spec.epsilon, spec.delta, coords))
    noise = fam.calibrate(int(round(1.0 / grid)), grid, spec.epsilon, spec.delta, coords)
    return counts, noise, labels, clamped


def _histogram(values, spec, source):
    counts, noise, labels, clamped = _histogram_parts(values, spec)
    noisy = (counts * noise.sensitivity + noise.sample(counts.size, source)) * noise.grid
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


def _quantile_parts(values, spec: QuerySpec):
    """Mechanism, candidate values, their scores, and the analyst-only clamped count."""
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
    return mech, candidates, quantile_scores(np.clip(finite, lo, hi), candidates, q), clamped


def _quantile(values, spec, source):
    mech, candidates, scores, clamped = _quantile_parts(values, spec)
    chosen = mech.select(scores, source)
    bound = mech.utility_bound(candidates.size, 1.0 - spec.confidence)
    return Release(
        query=spec.query, mechanism=spec.mechanism, epsilon=spec.epsilon, delta=0.0,
        relation=spec.relation, value=float(candidates[chosen]), sensitivity=mech.sensitivity,
        noise_scale=None, variance=None, ci_low=None, ci_high=None,
        confidence=spec.confidence, simulated=False, source="",
        components=[{"mechanism": spec.mechanism, "candidates": int(candidates.size),
                     "score_sensitivity": mech.sensitivity, "epsilon": spec.epsilon,
                     "rank_error_bound": bound}],
        notes=[f"with probability {spec.confidence:g} the released value's rank error is at "
               f"most {bound:.1f} records (exponential-mechanism bound); no interval in value "
               "units without more budget"],
        clamped=clamped,
    )
