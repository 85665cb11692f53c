"""Central-model queries on one declared column: count, sum, mean, variance, histogram,
quantiles.

Every numeric query is built from one primitive, a *bounded sum*: values clamped to the
user's declared bounds, snapped to the mechanism's grid by unbiased randomized rounding,
summed as exact integers, plus exact integer noise. Sensitivity follows from the declared
bounds and the neighbouring relation only — never from the data. Mean and variance spend
the budget on several bounded sums (basic composition) and carry confidence intervals
by interval arithmetic with a union bound, so the stated coverage is a guarantee.

Missing values (empty, NaN, ±inf) are part of a record's domain. Under ``replace`` a
record whose value is missing and the same record with a value are neighbours, so a sum
that *drops* missing values moves by up to max(hi − lo, |lo|, |hi|), not hi − lo. The
other treatment *imputes* a declared constant inside the bounds: every row contributes,
the sensitivity is hi − lo, and under ``replace`` the number of rows is public, so a mean
is the noisy sum over n with the whole budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.additive import IntegerNoise, NoiseFamily
from dpstudio.engine.calibration import check_budget_use, validate_delta, validate_epsilon
from dpstudio.engine.checks import bounds_pair
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.missing import fill_missing, midpoint
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import Source, require_secure
from dpstudio.engine.selection import SelectionMechanism

__all__ = [
    "MISSING",
    "QUERIES",
    "RELATIONS",
    "QuerySpec",
    "Release",
    "category_codes",
    "delta_method_variance",
    "missing_statement",
    "noisy_statistics",
    "plan_sums",
    "present_mask",
    "release",
    "row_codes",
    "run_query",
    "simulate_query",
    "sum_sensitivity",
]

QUERIES = ("count", "sum", "mean", "variance", "histogram", "quantile", "median")
RELATIONS = ("add-remove", "replace")
#: Treatments of missing values (empty, NaN, ±inf) in sums, means and variances.
MISSING = ("drop", "impute")
#: Queries built from bounded sums of the values, where the missing treatment applies.
_SUM_QUERIES = ("sum", "mean", "variance")


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
    column : the column's name (for labels only).
    missing : what a sum, mean or variance does with missing values (empty, NaN, ±inf):
        ``drop`` them (the sensitivity under ``replace`` then covers a value appearing:
        max(hi − lo, |lo|, |hi|)) or ``impute`` the constant ``impute`` (every row
        contributes; under ``replace`` the number of rows is public).
    impute : the declared constant for ``missing="impute"``, inside the bounds; None means
        the midpoint of the bounds.
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
    missing: str = "drop"
    impute: float | None = None

    def impute_value(self) -> float | None:
        """The constant imputed for missing values (``missing="impute"``), else None."""
        if self.missing != "impute" or self.bounds is None:
            return None
        if self.impute is not None:
            return float(self.impute)
        return midpoint(*check_bounds(self.bounds))

    def n_public(self) -> bool:
        """Whether the number of rows is public: imputed values and replace neighbours."""
        return self.missing == "impute" and self.relation == "replace"

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
        check_budget_use(info, self.epsilon, self.delta)
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
        self._validate_missing()
        return self

    def _validate_missing(self) -> None:
        if self.missing not in MISSING:
            raise QueryError(f"missing must be drop or impute, got {self.missing!r}")
        if self.impute is not None and self.missing != "impute":
            raise QueryError("an imputed value needs missing = impute (--missing impute)")
        if self.missing != "impute":
            return
        if self.query not in _SUM_QUERIES:
            raise QueryError(f"imputing missing values applies to sum, mean and variance, "
                             f"not to a {self.query}")
        lo, hi = check_bounds(self.bounds)
        try:
            c = math.nan if isinstance(self.impute, bool) else self.impute_value()
        except (TypeError, ValueError):
            c = math.nan
        if not math.isfinite(c):
            raise QueryError(f"the imputed value must be a number, got {self.impute!r} "
                             f"(one inside the declared bounds [{lo:g}, {hi:g}])")
        if not lo <= c <= hi:
            raise QueryError(f"the imputed value {c:g} lies outside the declared bounds "
                             f"[{lo:g}, {hi:g}]: impute a value inside the declared bounds")


def check_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    """Return (lower, upper) as floats, or raise QueryError for non-finite or reversed ones."""
    return bounds_pair(bounds)


def sum_sensitivity(lower: float, upper: float, relation: str, missing: str = "drop"
                    ) -> float:
    """Sensitivity of a sum of values in [lower, upper] under the neighbouring relation.

    Adding or removing one record moves the sum by at most max(|lower|, |upper|).
    Replacing one record's value moves it by at most upper − lower when every record
    contributes (``missing="impute"``); when missing values are dropped, a value may
    also appear or vanish (missing ↔ present), so by max(upper − lower, |lower|, |upper|).
    """
    if relation == "replace":
        if missing == "impute":
            return upper - lower
        return max(upper - lower, abs(lower), abs(upper))
    return max(abs(lower), abs(upper))


def _step_sensitivity(lo_s: int, hi_s: int, relation: str, missing: str) -> int:
    """:func:`sum_sensitivity` on the grid: records snap into [lo_s, hi_s] steps."""
    return int(sum_sensitivity(lo_s, hi_s, relation, missing))


def noisy_statistics(spec: QuerySpec) -> list[tuple[str, float, float, float]]:
    """The bounded sums a count, sum, mean or variance adds noise to, from the spec alone.

    Returns (name, lower, upper, sensitivity) for each; the release spends ε/k and δ/k on
    each of the k sums. Under ``replace`` with imputed values the number of rows is public,
    so a mean is one sum and a variance two (no noisy count).
    """
    if spec.query == "count":
        return [("count", 0.0, 1.0, sum_sensitivity(0.0, 1.0, spec.relation))]
    if spec.query not in _SUM_QUERIES:
        raise QueryError(f"a {spec.query} is not built from bounded sums")
    lo, hi = check_bounds(spec.bounds)
    mode = spec.missing
    parts = [("sum", lo, hi)]
    if spec.query == "variance":
        sq_lo = 0.0 if lo <= 0.0 <= hi else min(lo * lo, hi * hi)
        parts.insert(0, ("sum of squares", sq_lo, max(lo * lo, hi * hi)))
    if spec.query in ("mean", "variance") and not spec.n_public():
        parts.append(("count", 0.0, 1.0))
    return [(name, a, b, sum_sensitivity(a, b, spec.relation, mode)) for name, a, b in parts]


@dataclass
class Release:
    """A released statistic with its privacy parameters and its utility.

    ``value``, ``ci_low`` and ``ci_high`` are floats, or dicts label → float for a
    histogram. ``sensitivity`` is the main statistic's (the sum's for a mean or variance);
    ``sensitivities`` gives each noisy statistic's, by name, as do ``components``.
    ``missing`` states how missing values were treated (public: it is part of the
    procedure). ``clamped`` (values outside the declared bounds or categories),
    ``missing_count`` (missing values: empty, NaN, ±inf) and ``non_finite_count`` (of
    which ±inf) are for the analyst's eyes only and never part of an exported release.
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
    sensitivities: dict[str, float] = field(default_factory=dict)
    missing: dict[str, Any] = field(default_factory=dict)
    missing_count: int = 0
    non_finite_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------- primitives


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
        steps, lo_s, hi_s = _snap(values, lo, hi, grid, source)
        return np.array([int(steps.sum())], dtype=np.int64), lo_s, hi_s
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
                size: int) -> tuple[dict[str, np.ndarray], dict[str, IntegerNoise]]:
    """``size`` noisy draws of each bounded sum; the budget split evenly (basic composition).

    Each draw rounds the records to the grid afresh (:func:`_rounded_sums`), so repeated
    draws have exactly the release's distribution.
    """
    eps, dlt = spec.epsilon / len(plan.sums), spec.delta / len(plan.sums)
    values, noises = {}, {}
    for part in plan.sums:
        sens = sum_sensitivity(part.lo, part.hi, spec.relation, spec.missing)
        if sens == 0:
            raise QueryError("the declared bounds give this statistic zero sensitivity")
        grid = family.grid(sens, eps, dlt)
        lo_s, hi_s = math.floor(part.lo / grid), math.ceil(part.hi / grid)
        if part.values.size and (abs(lo_s) + abs(hi_s)) * part.values.size >= 2**62:
            raise QueryError("too many records for an exact integer sum at this precision")
        sums, lo_s, hi_s = _rounded_sums(part.values, part.lo, part.hi, grid, source, size)
        noise = family.calibrate(_step_sensitivity(lo_s, hi_s, spec.relation, spec.missing),
                                 grid, eps, dlt)
        values[part.name] = (sums + noise.sample(size, source)) * grid
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

    ``values``: a float array for numeric queries (NaN and ±inf = missing, dropped or
    imputed as ``spec.missing`` says), an array of strings for categorical histograms
    (None = missing). Use :func:`release` for a real release: it insists on the OS CSPRNG.
    """
    spec = spec.validated()
    if spec.query == "histogram":
        out = _histogram(values, spec, source)
    elif spec.query in ("quantile", "median"):
        out = _quantile(values, spec, source)
    else:
        out = _numeric_release(values, spec, source)
    if spec.query in ("histogram", "quantile", "median"):
        out.missing_count, out.non_finite_count = _missing_counts(values)
    if not out.missing:
        out.missing = {"treatment": spec.missing}
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
    the grid is drawn afresh for every answer (see :func:`_rounded_sums`), so each answer
    is an independent release and repeated calls or ``size > 1`` audit the real mechanism.
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


@dataclass
class _Column:
    """A numeric column prepared for a query.

    ``values``: the finite values, with missing ones (empty, NaN, ±inf) dropped or, when
    the spec imputes, replaced by the declared constant. The counts are analyst-only.
    """

    values: np.ndarray
    clamped: int
    missing: int
    non_finite: int


def _numeric(values: np.ndarray, spec: QuerySpec) -> _Column:
    """The column's values under the spec's missing treatment, and analyst-only counts
    (outside the declared bounds; missing; of which ±inf)."""
    try:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise QueryError(f"a {spec.query} needs a numeric column") from None
    if v.size == 0:
        raise QueryError("the column is empty")
    present = v[np.isfinite(v)]
    c = spec.impute_value()
    # ±inf is missing too: imputed (never clamped) or dropped, and counted.
    filled, missing, non_finite = fill_missing(v, math.nan if c is None else c)
    if c is not None:
        used = filled
    elif present.size == 0:
        raise QueryError("the column has no finite values (all missing, NaN or infinite)")
    else:
        used = present
    clamped = 0
    if spec.bounds is not None:
        lo, hi = check_bounds(spec.bounds)
        clamped = int(np.count_nonzero((present < lo) | (present > hi)))
    return _Column(used, clamped, missing, non_finite)


def _missing_counts(values: np.ndarray) -> tuple[int, int]:
    """(missing, of which ±inf) in a column: analyst-only counts."""
    v = np.asarray(values).reshape(-1)
    infinite = int(np.count_nonzero(np.isinf(v))) if v.dtype.kind in "fc" else 0
    return int(np.count_nonzero(~present_mask(v))), infinite


def present_mask(values: np.ndarray) -> np.ndarray:
    """Mask of non-missing entries: not None and not NaN (NaN is the one value ≠ itself);
    in a numeric column also not ±inf, which no release treats as a value."""
    v = np.asarray(values)
    if v.dtype.kind in "fc":
        return np.isfinite(v)
    if v.dtype.kind != "O":
        return np.ones(v.shape, dtype=bool)
    return np.not_equal(v, None) & np.equal(v, v)


def row_codes(values: np.ndarray, labels: list[str]) -> tuple[np.ndarray, int]:
    """One code per row: the index into ``labels`` (compared as text) of a declared value,
    −1 for a missing or undeclared one; and how many present values were not declared
    (analyst-only).

    Vectorized: one dictionary look-up per distinct value, not per record.
    """
    v = np.asarray(values).reshape(-1)
    present = present_mask(v)
    codes = np.full(v.size, -1, dtype=np.int64)
    if not present.any():
        return codes, 0
    distinct, inverse = np.unique(v[present].astype(str), return_inverse=True)
    index = {c: i for i, c in enumerate(labels)}
    codes[present] = np.array([index.get(d, -1) for d in distinct.tolist()],
                              dtype=np.int64)[inverse]
    return codes, int(np.count_nonzero(codes[present] < 0))


def category_codes(values: np.ndarray, labels: list[str]) -> tuple[np.ndarray, int]:
    """Codes (indices into ``labels``) of the present, declared values, and how many present
    values were not declared (analyst-only)."""
    codes, undeclared = row_codes(values, labels)
    return codes[codes >= 0], undeclared


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
        ones = np.ones(int(np.count_nonzero(present_mask(v))))
        return _Plan([_Sum("count", ones, 0.0, 1.0)], lambda d: d["count"], 0, declared[0][3],
                     missing=v.size - ones.size)
    col = _numeric(values, spec)
    lo, hi = check_bounds(spec.bounds)
    clipped = np.clip(col.values, lo, hi)
    data = {"sum": col.values, "count": np.ones(col.values.size),
            "sum of squares": clipped * clipped}
    sums = [_Sum(name, data[name], a, b) for name, a, b, _ in declared]
    rows = col.values.size if spec.n_public() else None
    sens = next(s for name, _, _, s in declared if name == "sum")
    extra = {"clamped": col.clamped, "sensitivity": sens, "lo": lo, "hi": hi, "rows": rows,
             "missing": col.missing, "non_finite": col.non_finite}

    def count(d):
        return float(rows) if rows is not None else np.maximum(d["count"], 1.0)

    if spec.query == "sum":
        return _Plan(sums, lambda d: d["sum"], **extra)
    if spec.query == "mean":
        return _Plan(sums, lambda d: np.clip(d["sum"] / count(d), lo, hi), **extra)
    cap = (hi - lo) ** 2 / 4.0  # the largest variance of values in [lo, hi]

    def variance(d):
        c = count(d)
        return np.clip(d["sum of squares"] / c - (d["sum"] / c) ** 2, 0.0, cap)

    return _Plan(sums, variance, **extra)


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

    When the number of rows is public (imputed values under ``replace``), a mean or
    variance also lists ``("count", n, 0.0)``: the exact count, with no noise.
    """
    spec = spec.validated()
    plan = _plan(values, spec)
    out = [(p.name, float(np.clip(p.values, p.lo, p.hi).sum()),
            sum_sensitivity(p.lo, p.hi, spec.relation, spec.missing)) for p in plan.sums]
    if plan.rows is not None and spec.query in ("mean", "variance"):
        out.append(("count", float(plan.rows), 0.0))
    return out


def missing_statement(spec: QuerySpec) -> dict[str, Any] | None:
    """The public statement of how a sum, mean or variance treats missing values (empty,
    NaN, ±inf), as the release's ``missing`` field, the manifest and the report give it;
    None for other queries. The declared procedure only, never how many were missing."""
    if spec.query not in _SUM_QUERIES:
        return None
    if spec.missing == "impute":
        c = spec.impute_value()
        public = spec.relation == "replace"
        return {"treatment": "impute", "value": c, "rows_public": public,
                "meaning": f"imputed as {c:g}, a declared constant inside the bounds: every "
                           "row contributes",
                "sensitivity_rule": "upper − lower (the number of rows is public)" if public
                else "max(|lower|, |upper|); the number of rows is private"}
    return {"treatment": "drop", "meaning": "dropped: missing values left out of the sums",
            "sensitivity_rule": "max(upper − lower, |lower|, |upper|): a value may appear "
                                "where one was missing" if spec.relation == "replace"
            else "max(|lower|, |upper|)"}


def _missing_notes(spec: QuerySpec, plan: _Plan) -> tuple[dict[str, Any], list[str]]:
    """The public statement of the missing-value treatment: a field and a note."""
    statement = missing_statement(spec)
    if statement is None:
        return {}, []
    # The result's own field: the treatment and its constant (the manifest has the rest).
    field_ = {k: v for k, v in statement.items() if k in ("treatment", "value")}
    lo, hi = plan.lo, plan.hi
    if spec.missing == "impute":
        c = spec.impute_value()
        note = (f"missing values (empty, NaN, ±inf) imputed as {c:g}, a declared constant "
                "inside the bounds: every row contributes")
        if spec.relation == "replace":
            note += (f"; under replace the number of rows is public (n = {plan.rows:,}) and "
                     f"the sum's sensitivity is hi − lo = {hi - lo:g}")
        else:
            note += "; under add-remove the number of rows stays private (a noisy count)"
        return field_, [note]
    note = "missing values (empty, NaN, ±inf) dropped, not imputed"
    if spec.relation == "replace":
        true = sum_sensitivity(lo, hi, "replace", "drop")
        note += (f"; under replace a value may appear where one was missing, so the sum's "
                 f"sensitivity is max(hi − lo, |lo|, |hi|) = {true:g}")
        if true > hi - lo:
            note += f" (declare an imputed value to use hi − lo = {hi - lo:g})"
    return field_, [note]


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
    if plan.rows is not None and spec.query in ("mean", "variance"):
        # n is public: an exact count, no noise, an interval of one point.
        n = float(max(plan.rows, 1))
        got["count"], var["count"], iv["count"] = n, 0.0, (n, n)
    missing, notes = _missing_notes(spec, plan)
    exact = True
    variance = delta_method_variance(spec.query, got, var)
    if spec.query in ("count", "sum"):
        ci = iv[spec.query]
    else:
        lo, hi = plan.lo, plan.hi
        if spec.query == "mean":
            ci = (lo, hi) if iv["count"][0] < 1.0 else tuple(
                float(np.clip(x, lo, hi)) for x in _box_ratio(iv["sum"], iv["count"]))
            if plan.rows is not None:
                notes.append("mean = noisy sum / n (n public) with the whole budget; variance "
                             "and interval exact (the interval clipped to the bounds)")
            else:
                exact = False
                notes.append("mean = noisy sum / noisy count, each with half the budget; "
                             "variance by the delta method (approximate); interval "
                             "guaranteed")
        else:
            exact = False
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
            k = len(plan.sums)
            notes.append(f"variance = Σx²/n − (Σx/n)² from {k} noisy sums, each with "
                         f"1/{k} of the budget" + (" (n public)" if plan.rows is not None
                                                   else "")
                         + "; interval guaranteed by interval arithmetic")
    # What each noise was calibrated to (on its grid): the components' own figures.
    sensitivities = {name: noise.sensitivity_value for name, noise in noises.items()}
    if len(sensitivities) > 1:
        notes.append("sensitivity shown is the sum's; each noisy statistic's own: "
                     + ", ".join(f"{k} {v:g}" for k, v in sensitivities.items())
                     + " (see components)")
    main = noises.get("sum", next(iter(noises.values())))
    return Release(
        query=spec.query, mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=value, sensitivity=plan.sensitivity,
        noise_scale=main.noise_scale, variance=variance, ci_low=float(ci[0]),
        ci_high=float(ci[1]), confidence=spec.confidence, simulated=False, source="",
        variance_exact=exact,
        components=[noises[n].to_dict() | {"statistic": n} for n in noises],
        notes=notes, clamped=plan.clamped, sensitivities=sensitivities, missing=missing,
        missing_count=plan.missing, non_finite_count=plan.non_finite,
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
        col = _numeric(v, spec)
        clamped = col.clamped
        cells = np.clip(np.searchsorted(edges, col.values, side="right") - 1, 0,
                        len(labels) - 1)
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
    col = _numeric(values, spec)
    finite, clamped = col.values, col.clamped
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
