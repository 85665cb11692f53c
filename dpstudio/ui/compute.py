"""The analysis view's live computations: pure, Qt-free jobs ``fn(params, values, state=…)``.

The worker thread (:class:`dpstudio.ui.worker.JobRunner`) runs these; tests call them
directly. Three jobs:

* :func:`utility` — error against ε for the chosen mechanism (analytic line where the
  engine has one, Monte-Carlo points with error bars on the analyst's column), plus the
  other trust models' mechanisms at the same ε where the registry has one. The curves do
  not depend on the current ε, so the view caches them by :meth:`Settings.utility_key`.
* :func:`tradeoff` — hypothesis-testing view at the current ε: the release's exact
  trade-off curve, the (ε, δ) bound, the tightest Gaussian-DP curve below it, the curve
  after k releases, and a simulated likelihood-ratio attack with Clopper–Pearson boxes.
* :func:`preview` — one *simulated* release at the current settings beside the true value.
  A local-model preview goes through the engine's own release path
  (:func:`~dpstudio.engine.local.run_local` on every row of the column), so its ``n``
  and the value it estimates are those of a real release.

Everything random here is a simulation: it draws from a seeded
:class:`~dpstudio.engine.rng.SimulationSource` and is labelled so. Trust models other
than the central one are handled through their registry entries generically: a
``"randomizer"`` entry builds an oracle with ``variance``/``randomize``/``estimate``
(:mod:`dpstudio.engine.local.base`); shuffle and distributed entries contribute whatever
their built objects offer (``variance(n)``, an ``epsilon``), never per-mechanism code.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from dpstudio.engine.attack import empirical_tradeoff, simulate_attack
from dpstudio.engine.calibration import discrete_gaussian_sigma
from dpstudio.engine.errors import EngineError, QueryError
from dpstudio.engine.jobs import State, check
from dpstudio.engine.missing import fill_missing
from dpstudio.engine.queries import (
    QuerySpec,
    histogram_bins,
    noisy_statistics,
    run_query,
    sum_sensitivity,
)
from dpstudio.engine.registry import REGISTRY, MechanismInfo
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.tradeoff import (
    alpha_grid,
    compose_tradeoff,
    epsilon_delta_tradeoff,
    gaussian_epsilon,
    gaussian_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
)
from dpstudio.engine.utility import analytic_curve, monte_carlo_curve, true_value

__all__ = [
    "ALPHA",
    "EPS_MAX",
    "EPS_MIN",
    "LINE_EPSILONS",
    "MC_EPSILONS",
    "QUERIES_BY_TYPE",
    "TRUST_MODELS",
    "AttackPoints",
    "Curve",
    "Line",
    "Preview",
    "Settings",
    "TradeoffResult",
    "UtilityResult",
    "fixed_epsilon",
    "imputation_shift",
    "mechanisms_for",
    "preview",
    "registry_value_types",
    "release_bias",
    "tightest_mu",
    "tradeoff",
    "utility",
]

#: The trust models the analysis view offers, in the order shown.
TRUST_MODELS = ("central", "local", "shuffle", "distributed")

EPS_MIN, EPS_MAX = 0.01, 100.0
#: ε of the Monte-Carlo points (5 per decade) and of the analytic lines (20 per decade).
MC_EPSILONS = np.geomspace(EPS_MIN, EPS_MAX, 21)
LINE_EPSILONS = np.geomspace(EPS_MIN, EPS_MAX, 81)
#: Type I errors of the trade-off curves (denser near 0, where curves are steep).
ALPHA = alpha_grid(256)

#: Queries offered per declared column type, most useful first.
QUERIES_BY_TYPE = {
    "numeric": ("mean", "sum", "count", "variance", "median", "quantile", "histogram"),
    "categorical": ("histogram", "count"),
    "boolean": ("histogram", "count"),
    # Free text: only the local model's dictionary-free discovery of frequent words.
    "text": ("heavy_hitters",),
}

#: Default Monte-Carlo replications per ε (central model; randomizers adapt to n).
MC_REPS = 200
#: Simulated attack: draws of the mechanism on each of the two neighbouring inputs.
ATTACK_DRAWS = 8_000
#: Largest lattice (k·parts·steps) used to compose Laplace-type curves exactly.
_LATTICE_BUDGET = 2_000


# ---------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    """A plain, hashable snapshot of the analyst's choices (what a job needs).

    ``column_type`` is the declared type (numeric, categorical, boolean, text); ``value_types``
    the registry value types the column's values fit (e.g. ``("integer", "numeric")``).
    ``params`` are the mechanism's parameters other than ε and δ, as sorted pairs.
    ``missing``/``impute``: how a central sum, mean or variance treats missing values
    (the engine's :class:`QuerySpec` fields; ignored by other queries).
    """

    column: str
    column_type: str
    value_types: tuple[str, ...]
    trust_model: str
    query: str
    mechanism: str
    epsilon: float = 1.0
    delta: float = 1e-6
    params: tuple[tuple[str, Any], ...] = ()
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    bins: int = 10
    quantile: float = 0.9
    relation: str = "add-remove"
    confidence: float = 0.95
    metric: str = "rmse"
    compositions: int = 10
    missing: str = "drop"
    impute: float | None = None

    @property
    def info(self) -> MechanismInfo:
        return REGISTRY.get(self.mechanism)

    @property
    def effective_delta(self) -> float:
        """δ if the mechanism takes one, else 0 (pure ε-DP)."""
        return float(self.delta) if self.info.needs_delta else 0.0

    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def spec(self, epsilon: float | None = None, mechanism: str | None = None,
             params: Mapping[str, Any] | None = None) -> QuerySpec:
        """The engine's QuerySpec for these settings (central model)."""
        mech = mechanism or self.mechanism
        info = REGISTRY.get(mech)
        names = {p.name for p in info.params}
        given = self.param_dict() if params is None else dict(params)
        given = {k: v for k, v in given.items() if k in names and k not in ("epsilon", "delta")}
        histogram = self.query == "histogram"
        categorical = self.column_type in ("categorical", "boolean")
        return QuerySpec(
            query=self.query, mechanism=mech,
            epsilon=float(self.epsilon if epsilon is None else epsilon),
            delta=float(self.delta) if info.needs_delta else 0.0,
            bounds=None if categorical else self.bounds,
            categories=self.categories if (histogram and categorical) else None,
            bins=int(self.bins) if (histogram and not categorical) else None,
            quantile=float(self.quantile) if self.query == "quantile" else None,
            relation=self.relation, confidence=float(self.confidence), params=given,
            column=self.column,
            missing=self.missing if self.query in ("sum", "mean", "variance") else "drop",
            impute=self.impute if self.query in ("sum", "mean", "variance") else None,
        )

    def utility_key(self) -> tuple:
        """Everything the utility curves depend on: not ε, k, confidence or display options.

        δ matters only for mechanisms that take it.
        """
        return (self.column, self.column_type, self.value_types, self.trust_model, self.query,
                self.mechanism, self.params, self.bounds, self.categories,
                self.bins if self.query == "histogram" else None,
                self.quantile if self.query == "quantile" else None, self.relation,
                self.metric, self.effective_delta, self.missing, self.impute)


def registry_value_types(column_type: str, values: np.ndarray | None = None) -> tuple[str, ...]:
    """The registry value types a column fits: whole-number numeric columns fit both."""
    if column_type != "numeric":
        return (column_type,)
    if values is not None:
        v = np.asarray(values, dtype=np.float64)
        v = v[np.isfinite(v)]
        if v.size and np.all(v == np.floor(v)):
            return ("integer", "numeric")
    return ("numeric",)


def mechanisms_for(trust_model: str, value_types: tuple[str, ...], query: str,
                   cells: int | None = None) -> list[MechanismInfo]:
    """Registry entries for a trust model, any of the value types and the query (in order).

    With ``cells`` (the number of categories or bins of a histogram), randomizers that
    refuse that domain size (e.g. binary randomized response for six categories) are left
    out: the entry is built once with its defaults to ask it (cached).
    """
    seen: dict[str, MechanismInfo] = {}
    for vt in value_types:
        for info in REGISTRY.select(trust_model=trust_model, value_type=vt, query=query):
            seen.setdefault(info.name, info)
    order = REGISTRY.names()
    out = sorted(seen.values(), key=lambda i: order.index(i.name))
    if query == "heavy_hitters":  # the entries made for it first (sfp before cms)
        out.sort(key=lambda i: i.queries != ("heavy_hitters",))
    if cells is not None and query == "histogram":
        out = [i for i in out if i.kind != "randomizer" or _takes_domain(i.name, int(cells))]
    return out


@functools.lru_cache(maxsize=256)
def _takes_domain(mechanism: str, k: int) -> bool:
    """Whether a randomizer entry builds for a domain of k values (at its defaults)."""
    info = REGISTRY.get(mechanism)
    try:
        info.build(**_accepted_kwargs(info.factory, {**info.resolve({}), "k": k}))
    except EngineError:
        return False
    except TypeError:
        return True  # it does not take k: not a frequency oracle, nothing to check
    return True


# ----------------------------------------------------------------------------- results


@dataclass
class Curve:
    """One utility curve: error against ε (``low``/``high`` bound simulated points)."""

    name: str
    trust_model: str
    mechanism: str
    kind: str  # "analytic" or "simulation"
    epsilon: np.ndarray
    error: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    primary: bool = True
    #: An analytic line of the noise alone, where the release's expectation is not the
    #: truth (clamping, imputation): its value at ε is not the whole error.
    noise_only: bool = False


@dataclass
class UtilityResult:
    key: tuple
    metric: str
    metric_label: str
    curves: list[Curve]
    n: int
    reps: int
    notes: list[str] = field(default_factory=list)
    #: The ε the mechanism's parameters fix (rr with a chosen p), else None: the marker
    #: then stands there, whatever the slider says.
    fixed_epsilon: float | None = None


@dataclass
class Line:
    """One trade-off curve β = f(α)."""

    label: str
    alpha: np.ndarray
    beta: np.ndarray
    exact: bool = True


@dataclass
class AttackPoints:
    """Empirical (α, β) of likelihood-ratio tests with Clopper–Pearson intervals."""

    label: str
    alpha: np.ndarray
    beta: np.ndarray
    alpha_low: np.ndarray
    alpha_high: np.ndarray
    beta_low: np.ndarray
    beta_high: np.ndarray
    draws: int
    confidence: float


@dataclass
class TradeoffResult:
    epsilon: float
    delta: float
    compositions: int
    bound: Line
    mechanism: Line | None
    gdp: Line | None
    mu: float | None
    composed: Line | None
    attack: AttackPoints | None
    notes: list[str] = field(default_factory=list)


@dataclass
class Preview:
    """One simulated release and the truth it estimates (the truth is for the analyst)."""

    query: str
    mechanism: str
    trust_model: str
    epsilon: float
    delta: float
    labels: list[str] | None  # cells of a histogram, None for one number
    value: np.ndarray
    ci_low: np.ndarray | None
    ci_high: np.ndarray | None
    truth: np.ndarray
    confidence: float
    source: str
    seed: int
    noise_scale: float | None = None
    sensitivity: float | None = None
    clamped: int = 0
    notes: list[str] = field(default_factory=list)
    simulated: bool = True
    #: Number of reports of a local release (every row sends one), else None.
    n: int | None = None
    #: Imputed-column statistic minus the present values' (central imputation; analyst
    #: only), else None.
    imputation_shift: float | None = None


METRIC_LABELS = {
    "rmse": "RMSE",
    "relative": "relative error",
    "tv": "total-variation distance",
}


def metric_label(s: Settings) -> str:
    what = {"histogram": "counts", "heavy_hitters": "word counts"}.get(s.query, s.query)
    base = METRIC_LABELS.get(s.metric, s.metric)
    return f"{base} of the {what}"


# ------------------------------------------------------- trust models other than central


def _accepted_kwargs(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``fn`` accepts (all of them if it takes **kwargs)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in sig.parameters}


def resolved_params(s: Settings, epsilon: float, mechanism: str | None = None
                    ) -> dict[str, Any]:
    """The entry's own parameters at ``epsilon``, validated by the registry."""
    info = REGISTRY.get(mechanism or s.mechanism)
    names = {p.name for p in info.params}
    given = {k: v for k, v in s.param_dict().items() if k in names} if (
        info.name == s.mechanism) else {}
    if "epsilon" in names:
        given["epsilon"] = epsilon
    if "delta" in names:
        given["delta"] = s.delta
    return info.resolve(given)


def build_randomizer(s: Settings, epsilon: float, mechanism: str | None = None) -> Any:
    """Build a local randomizer entry for this column: ``k`` cells (the declared ones and,
    but for binary randomized response, the "other or missing" one), ``bounds``, or the
    sequence-fragment puzzle of a heavy-hitters query."""
    info = REGISTRY.get(mechanism or s.mechanism)
    kwargs = resolved_params(s, epsilon, info.name)
    if s.query == "heavy_hitters":
        from dpstudio.engine.local.entries import sfp_from_params

        return sfp_from_params(**kwargs)
    if _cells(s):
        kwargs["k"] = len(_local_cells(s, info.name))
    else:
        kwargs["bounds"] = s.bounds
    return info.build(**_accepted_kwargs(info.factory, kwargs))


@functools.lru_cache(maxsize=256)
def release_epsilon(s: Settings) -> float:
    """The ε this release claims and is charged: the built engine object's, not the slider's.

    They differ where a parameter fixes the guarantee: randomized response with a chosen
    p is ln(p/(1−p))-DP whatever the slider says (the project charges the same).
    """
    if s.trust_model != "local":
        return float(s.epsilon)
    try:
        return float(getattr(build_randomizer(s, float(s.epsilon)), "epsilon", s.epsilon))
    except (EngineError, TypeError, ValueError):
        return float(s.epsilon)


def _labels(s: Settings) -> list[str]:
    """Cells of a histogram: declared categories, or the bins of the declared bounds."""
    if s.column_type in ("categorical", "boolean"):
        return [str(c) for c in (s.categories or ())]
    return histogram_bins(replace(s, query="histogram").spec())[0]


def _present_mask(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values)
    if v.dtype.kind in "fc":
        return np.isfinite(v)
    if v.dtype.kind == "O":
        return np.not_equal(v, None)
    return np.ones(v.shape, dtype=bool)


def _cells(s: Settings) -> bool:
    """Whether the answer is a histogram (counts per cell) rather than one number."""
    return s.query == "histogram" or s.column_type not in ("numeric", "text")


def _local_cells(s: Settings, mechanism: str | None = None) -> list[str]:
    """Cells of a local histogram: the declared ones, then "other or missing" (not rr)."""
    from dpstudio.engine.local import OTHER_LABEL
    from dpstudio.engine.local.respond import has_other_cell

    extra = [OTHER_LABEL] if has_other_cell(mechanism or s.mechanism) else []
    return _labels(s) + extra


def _local_column(s: Settings, values: np.ndarray) -> np.ndarray:
    """The column as a local release reads it: one entry per row, missing ones included.

    A numeric column's histogram sends each present value's bin label (the declared
    bounds' bins; values outside fall in the edge bins) and None for a missing value.
    """
    if not (_cells(s) and s.column_type == "numeric"):
        return np.asarray(values)
    labels = np.asarray(_labels(s), dtype=object)
    _, edges = histogram_bins(replace(s, query="histogram").spec())
    x = np.asarray(values, dtype=np.float64)
    out = np.full(x.size, None, dtype=object)
    present = np.isfinite(x)
    cells = np.clip(np.searchsorted(edges, x[present], side="right") - 1, 0, len(edges) - 2)
    out[present] = labels[cells]
    return out


def _local_inputs(s: Settings, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(truth, per-user inputs) of a local randomizer, one input per row as in a release.

    Histograms: codes of the declared cells, the "other or missing" code for the rest
    (binary randomized response: a fair coin's code, drawn from a fixed seed); the truth
    is what the estimator targets (rr: the declared count plus half of the others).
    Means: the value clamped to the bounds, the bounds' middle for a missing one; the
    truth is the mean of those, which the randomizers estimate without bias.
    """
    from dpstudio.engine.local.respond import has_other_cell, histogram_inputs, mean_inputs

    column = _local_column(s, values)
    if _cells(s):
        labels, k = _labels(s), len(_labels(s))
        exact = histogram_inputs(column, labels, SimulationSource(0), other=True).values
        counts = np.bincount(exact, minlength=k + 1).astype(np.float64)
        if has_other_cell(s.mechanism):
            return counts, exact
        coins = histogram_inputs(column, labels, SimulationSource(0), other=False).values
        return counts[:k] + counts[k] / 2.0, coins
    lo, hi = s.bounds
    x = np.clip(mean_inputs(column, lo, hi).values, lo, hi)
    return np.atleast_1d(float(x.mean()) if x.size else 0.0), x


def _call_variance(obj: Any, n: int, extra: Any) -> np.ndarray:
    try:
        return np.asarray(obj.variance(n, extra), dtype=np.float64)
    except TypeError:
        return np.asarray(obj.variance(n), dtype=np.float64)


def _local_sd(s: Settings, obj: Any, truth: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """Standard deviation of a local estimate per cell (the oracle's exact variance)."""
    n = int(inputs.size)
    extra = None
    if _cells(s):
        extra = truth
    elif n and hasattr(obj, "scaled"):  # mean of the values rescaled to [−1, 1]
        extra = float(np.mean(np.asarray(obj.scaled(inputs), dtype=float) ** 2))
    return np.sqrt(np.maximum(np.atleast_1d(_call_variance(obj, n, extra)), 0.0))


def _local_estimate(obj: Any, inputs: np.ndarray, source: Any) -> np.ndarray:
    reports = obj.randomize(inputs, source)
    try:
        est = obj.estimate(reports, int(inputs.size))
    except TypeError:
        est = obj.estimate(reports)
    return np.atleast_1d(np.asarray(est, dtype=np.float64))


#: Sum protocols of trust models with a server or shuffler between people and analyst:
#: module, planner (figures without data) and runner (a simulation on the column).
_SUM_PROTOCOLS = {
    "distributed": ("dpstudio.engine.distributed", "plan_secure_sum", "run_secure_sum"),
    "shuffle": ("dpstudio.engine.shuffle", "plan_shuffle_sum", "run_shuffle_sum"),
}
#: Trust models whose protocol simulation is quick enough for a live preview (secure
#: aggregation's pairwise masking costs seconds per thousand clients: its preview is drawn
#: from the planned error instead).
_LIVE_RUN = frozenset({"shuffle"})


def _sum_protocol(trust_model: str, which: int) -> Callable[..., Any]:
    module, plan, run = _SUM_PROTOCOLS[trust_model]
    return getattr(importlib.import_module(module), (plan, run)[which])


def _sum_args(s: Settings, epsilon: float) -> tuple[float, float, dict[str, Any]]:
    params = resolved_params(s, epsilon)
    eps, dlt = params.pop("epsilon", epsilon), params.pop("delta", s.delta)
    return eps, dlt, {**params, "confidence": s.confidence}


def _sum_plan(s: Settings, values: np.ndarray, epsilon: float) -> Any:
    """The protocol's plan for this column: data-free stderr and the guarantee it meets."""
    eps, dlt, params = _sum_args(s, epsilon)
    n = int(np.size(values))  # every row is a client (missing values sent as the middle)
    return _planned(s.trust_model, s.mechanism, n, s.bounds, float(eps), float(dlt), s.query,
                    tuple(sorted(params.items())))


@functools.lru_cache(maxsize=2048)
def _planned(trust_model: str, mechanism: str, n: int, bounds: tuple[float, float],
             epsilon: float, delta: float, query: str, params: tuple) -> Any:
    """Plans are data-free and some take a second (noise calibration): computed once."""
    return _sum_protocol(trust_model, 0)(n, bounds, mechanism, epsilon, delta, query=query,
                                         **dict(params))


def _protocol_values(s: Settings, values: np.ndarray) -> np.ndarray:
    """The column as a shuffle or secure-aggregation protocol sends it: one message per
    row, missing values as the middle of the bounds, clamped (the engine's encoding)."""
    from dpstudio.engine.distributed.encoding import unit_values

    u, lo, hi, _, _ = unit_values(values, s.bounds)
    return lo + u * (hi - lo)


def _truth(s: Settings, values: np.ndarray) -> np.ndarray:
    """The truth an error is measured against: the local estimators' target, else (central,
    shuffle, secure aggregation) the statistic of the present values, unclamped — so the
    error includes what imputing the bounds' middle and clamping move the release by."""
    if s.trust_model == "local":
        return _local_inputs(s, values)[0]
    return np.atleast_1d(true_value(values, s.spec())).astype(np.float64)


def imputation_shift(s: Settings, values: np.ndarray) -> float | None:
    """How far imputing moves the statistic from that of the present values (analyst only).

    The imputed column's statistic minus the present values' (neither clamped), for a
    central sum, mean or variance that imputes; None otherwise.
    """
    spec = s.spec()
    c = spec.impute_value() if s.trust_model == "central" else None
    if c is None:
        return None
    drop = replace(spec, missing="drop", impute=None)
    filled, _, _ = fill_missing(values, c)
    return float(true_value(filled, drop)) - float(true_value(values, drop))


def release_bias(s: Settings, values: np.ndarray) -> float | None:
    """The release's expectation minus the truth, for a central sum, mean or variance:
    what clamping (and imputing) shift the answer by, which the noise-only analytic line
    leaves out. None where no such expectation is computed here."""
    if s.trust_model != "central" or s.query not in ("sum", "mean", "variance") or (
            s.bounds is None):
        return None
    spec = s.spec()
    x = np.asarray(values, dtype=np.float64)
    c = spec.impute_value()
    x = fill_missing(x, c)[0] if c is not None else x[np.isfinite(x)]
    if x.size == 0:
        return None
    x = np.clip(x, *s.bounds)
    drop = replace(spec, missing="drop", impute=None)
    return float(true_value(x, drop)) - float(true_value(values, drop))


def fixed_epsilon(s: Settings) -> float | None:
    """The ε the mechanism's parameters fix whatever the slider says (randomized response
    with a chosen p: ln(p/(1−p))), or None when the slider's ε is the release's."""
    low = release_epsilon(replace(s, epsilon=EPS_MIN))
    high = release_epsilon(replace(s, epsilon=EPS_MAX))
    return low if math.isclose(low, high, rel_tol=1e-12) else None


def _metric_from_sd(sd: np.ndarray, truth: np.ndarray, metric: str) -> float:
    """Error of an unbiased estimate with per-cell standard deviations ``sd``."""
    sd = np.atleast_1d(sd)
    if metric == "tv":
        return float(0.5 * np.sum(sd) * math.sqrt(2 / math.pi) / max(float(truth.sum()), 1.0))
    rmse = math.sqrt(float(np.mean(sd**2)))
    if metric == "relative":
        scale = float(np.abs(truth).mean())
        return rmse / scale if scale else math.inf
    return rmse


def _error_of_samples(samples: np.ndarray, truth: np.ndarray, metric: str
                      ) -> tuple[float, float, float]:
    """(point, low, high) over replications, as the engine's Monte-Carlo curve computes it."""
    t = np.atleast_1d(truth).astype(np.float64)
    x = samples.reshape(samples.shape[0], -1)
    if metric == "tv":
        per = 0.5 * np.abs(x - t).sum(axis=1) / max(float(t.sum()), 1.0)
        m, se = per.mean(), per.std(ddof=1) / math.sqrt(per.size)
        return float(m), float(m - 2 * se), float(m + 2 * se)
    sq = ((x - t) ** 2).mean(axis=1)
    mse, se = sq.mean(), sq.std(ddof=1) / math.sqrt(sq.size)
    point, low, high = (math.sqrt(max(v, 0.0)) for v in (mse, mse - 2 * se, mse + 2 * se))
    if metric == "relative":
        scale = float(np.abs(t).mean()) or 1.0
        return point / scale, low / scale, high / scale
    return point, low, high


# ---------------------------------------------------------------------------- utility


def short(label: str, width: int = 26) -> str:
    """A mechanism's label cut to ``width`` characters for legends."""
    return label if len(label) <= width else label[: width - 1].rstrip() + "…"


def curve_name(trust_model: str, label: str, kind: str) -> str:
    """Legend name of a utility curve: trust model and mechanism (lines are analytic), or
    "simulated releases" for the Monte-Carlo points of the chosen mechanism."""
    if kind == "simulated":
        return f"{trust_label(trust_model)}: simulated releases"
    suffix = " (bound)" if kind == "bound" else ""
    return f"{trust_label(trust_model)}: {short(label, 30)}{suffix}"


def trust_label(tm: str) -> str:
    return {"central": "Central", "local": "Local", "shuffle": "Shuffle",
            "distributed": "Distributed"}.get(tm, tm.title())


def _defaults_if_other(s: Settings, info: MechanismInfo) -> dict[str, Any]:
    """The chosen parameters for the chosen mechanism; defaults for a comparison one."""
    if info.name == s.mechanism:
        return s.param_dict()
    return {p.name: p.default for p in info.params if p.name not in ("epsilon", "delta")}


def _analytic(s: Settings, values: np.ndarray, epsilons: np.ndarray,
              state: State | None = None) -> np.ndarray | None:
    """Analytic error of ``s.mechanism`` in ``s.trust_model`` at each ε, or None.

    A point the mechanism cannot reach (e.g. a δ too small for its noise at that ε) is NaN.
    """
    info = s.info
    if s.trust_model == "central":
        if info.kind != "additive":
            return None
        try:
            return analytic_curve(s.spec(), epsilons, s.metric,
                                  values).error
        except EngineError:
            return None
    if s.trust_model != "local" and s.trust_model not in _SUM_PROTOCOLS:
        return None
    try:
        truth = _truth(s, values)
        inputs = _local_inputs(s, values)[1] if s.trust_model == "local" else None
    except EngineError:
        return None
    out = np.full(epsilons.size, np.nan)
    for i, e in enumerate(epsilons):
        check(state)
        if state is not None:
            state.progress(i / epsilons.size)
        try:
            if inputs is not None:
                sd = _local_sd(s, build_randomizer(s, float(e)), truth, inputs)
            else:
                sd = np.array([_sum_plan(s, values, float(e)).stderr])
            out[i] = _metric_from_sd(sd, truth, s.metric)
        except EngineError:
            continue
        except (AttributeError, TypeError, ValueError):
            return None  # the entry does not follow the oracle interface
    return out if np.any(np.isfinite(out)) else None


def _simulate(s: Settings, values: np.ndarray, epsilons: np.ndarray, reps: int,
              source: SimulationSource, state: State | None) -> Curve | None:
    """Monte-Carlo error of the chosen mechanism at each ε (with ≈95% bars), or None."""
    name = curve_name(s.trust_model, s.info.label, "simulated")
    if s.trust_model == "central":
        mc = monte_carlo_curve(values, s.spec(), epsilons, reps, source,
                               s.metric, state)
        return Curve(name, "central", s.mechanism, "simulation", mc.epsilon, mc.error,
                     mc.low, mc.high)
    if s.trust_model != "local":
        return None  # the sum protocols' errors are planned exactly enough (a bound)
    truth, inputs = _local_inputs(s, values)
    pts = np.empty((epsilons.size, 3))
    for i, e in enumerate(epsilons):
        check(state)
        obj = build_randomizer(s, float(e))
        draws = np.stack([_local_estimate(obj, inputs, source) for _ in range(reps)])
        pts[i] = _error_of_samples(draws, truth, s.metric)
        if state is not None:
            state.progress((i + 1) / epsilons.size)
    return Curve(name, s.trust_model, s.mechanism, "simulation", epsilons.copy(), pts[:, 0],
                 pts[:, 1], pts[:, 2])


def randomizer_reps(n: int, points: int) -> int:
    """Replications for a randomizer's Monte-Carlo curve: ~2 million randomized records."""
    return int(np.clip(2_000_000 // max(n * points, 1), 10, MC_REPS))


#: Trust models whose error curves come from protocol plans (slower: a separate job).
PLANNED_MODELS = tuple(_SUM_PROTOCOLS)


def comparison_settings(s: Settings, models: tuple[str, ...] = TRUST_MODELS
                        ) -> list[Settings]:
    """The same column and query under each other trust model's first matching mechanism."""
    out = []
    for tm in TRUST_MODELS:
        if tm == s.trust_model or tm not in models:
            continue
        for info in mechanisms_for(tm, s.value_types, s.query)[:1]:
            params = tuple(sorted(_defaults_if_other(s, info).items()))
            out.append(replace(s, trust_model=tm, mechanism=info.name, params=params))
    return out


class _Part:
    """A state that maps a sub-task's progress 0…1 onto [lo, hi] of the whole job."""

    def __init__(self, state: State | None, lo: float, hi: float, message: str = "") -> None:
        self.state, self.lo, self.hi, self.message = state, lo, hi, message

    def progress(self, fraction: float, message: str = "") -> None:
        if self.state is not None:
            self.state.progress(self.lo + (self.hi - self.lo) * float(fraction),
                                message or self.message)

    def cancelled(self) -> bool:
        return self.state is not None and self.state.cancelled()


def utility(s: Settings, values: np.ndarray, state: State | None = None, *,
            reps: int = MC_REPS, seed: int = 20240601, mc_epsilons: np.ndarray | None = None,
            line_epsilons: np.ndarray | None = None, simulate: bool = True,
            analytic: bool = True, compare: bool | tuple[str, ...] = True) -> UtilityResult:
    """Error against ε: the chosen mechanism (analytic + Monte-Carlo) and the other trust
    models' first matching mechanisms (analytic) on the same column and query.

    ``analytic``, ``simulate`` and ``compare`` select the parts (the view runs the
    analytic lines and the slower Monte-Carlo points as separate jobs); ``compare`` may
    name the trust models to compare with (e.g. :data:`PLANNED_MODELS`, whose curves come
    from protocol plans, a job of their own).
    """
    eps_mc = MC_EPSILONS if mc_epsilons is None else np.asarray(mc_epsilons, dtype=float)
    eps_line = LINE_EPSILONS if line_epsilons is None else np.asarray(line_epsilons, float)
    check(state)
    if s.query == "heavy_hitters":
        return _heavy_hitters_utility(s, values, eps_line, analytic, state)
    curves: list[Curve] = []
    notes: list[str] = []
    source = SimulationSource(seed)
    # Local, shuffle and distributed releases have one report per row (missing values
    # included), as has a central release that imputes; else the present values count.
    every_row = s.trust_model != "central" or s.spec().impute_value() is not None
    n = int(np.size(values)) if every_row else int(np.count_nonzero(_present_mask(values)))
    planned = s.trust_model in _SUM_PROTOCOLS  # each point is a protocol plan: fewer
    line_eps = eps_line if not planned else eps_mc[::2]
    lines = None if not analytic else _analytic(
        s, values, line_eps, _Part(state, 0.0, 0.9 if planned else 0.05, "error model"))
    if lines is not None:
        kind = "bound" if planned else "analytic"
        bias = release_bias(s, values) if s.metric in ("rmse", "relative") else None
        shifted = bias is not None and bias != 0.0
        curves.append(Curve(curve_name(s.trust_model, s.info.label, kind), s.trust_model,
                            s.mechanism, "analytic", line_eps, lines, noise_only=shifted))
        if shifted:
            what = ("imputing and clamping move" if s.spec().impute_value() is not None
                    else "clamping moves")
            notes.append(f"the line is the noise alone: {what} the release's "
                         f"expectation by {bias:+.3g} from the true {s.query} (the simulated "
                         "points include it; analyst only)")
    used_reps = 0
    if simulate:
        mc_eps, used_reps = eps_mc, reps
        if s.trust_model != "central":
            mc_eps = eps_mc[::2]  # the oracles' variances are exact: fewer points suffice
            used_reps = randomizer_reps(n, mc_eps.size)
        sim = _simulate(s, values, mc_eps, used_reps, source,
                        _Part(state, 0.05, 0.9, "Monte-Carlo simulation"))
        if sim is not None:
            curves.append(sim)
        else:
            used_reps = 0
            notes.append(f"no simulation for the {s.trust_model} model: the curve is the "
                         "protocol's data-free error bound")
    if compare:
        others = comparison_settings(s, TRUST_MODELS if compare is True else compare)
        for i, other in enumerate(others):
            check(state)
            eps = eps_line if other.trust_model not in _SUM_PROTOCOLS else eps_mc[::4]
            part = _Part(state, 0.9 + 0.1 * i / len(others), 0.9 + 0.1 * (i + 1) / len(others),
                         "comparison")
            err = _analytic(other, values, eps, part)
            if err is not None:
                kind = "bound" if other.trust_model in _SUM_PROTOCOLS else "analytic"
                name = curve_name(other.trust_model, other.info.label, kind)
                curves.append(Curve(name, other.trust_model, other.mechanism, "analytic", eps,
                                    err, primary=False))
    if not curves and analytic and simulate:
        notes.append("no error model for this mechanism yet")
    if used_reps:
        what = ("reports (one per row)" if s.trust_model == "local" else
                "rows (missing values imputed)" if every_row else "present values")
        notes.append(f"simulation: {used_reps} simulated releases per ε, seeded generator "
                     f"(seed {seed}), on the {n:,} {what}")
    fixed = fixed_epsilon(s)
    if fixed is not None:
        notes.append(f"the mechanism's parameters fix its guarantee at ε = {fixed:.4g}: the "
                     "marker stands there, whatever the ε slider says")
    return UtilityResult(s.utility_key(), s.metric, metric_label(s), curves, n, used_reps,
                         notes, fixed)


#: Shown instead of Monte-Carlo points for heavy hitters (and in the plot's notes).
HEAVY_HITTERS_NOTE = ("heavy hitters: the line is the standard error of each discovered "
                      "word's estimated count (the users' coins; hash collisions add a "
                      "little); which words are discovered is not simulated here")


def _heavy_hitters_utility(s: Settings, values: np.ndarray, epsilons: np.ndarray,
                           analytic: bool, state: State | None) -> UtilityResult:
    """Error of a heavy-hitters release against ε: the standard error of a discovered
    word's count from the word sketch's exact, data-free variance at n = rows.

    A Monte-Carlo curve would have to rerun the whole discovery hundreds of times per ε
    (seconds each) and mixes two errors (missed words, count error): not drawn.
    """
    n = int(np.size(values))
    curves: list[Curve] = []
    if analytic and n:
        err = np.full(epsilons.size, np.nan)
        for i, e in enumerate(epsilons):
            check(state)
            try:
                var = build_randomizer(s, float(e)).variance(n)
            except EngineError:
                continue
            err[i] = math.sqrt(float(np.atleast_1d(var)[0]))
        if np.any(np.isfinite(err)):
            name = f"{curve_name('local', s.info.label, 'analytic')}: a word's count"
            curves.append(Curve(name, "local",
                                s.mechanism, "analytic", epsilons.copy(), err))
    return UtilityResult(s.utility_key(), "rmse", metric_label(s), curves, n, 0,
                         [HEAVY_HITTERS_NOTE], fixed_epsilon(s))


# --------------------------------------------------------------------------- trade-off


def _parts(s: Settings) -> int:
    """How many noisy statistics one release adds noise to, each with ε/parts: the
    engine's own plan (a mean with a public n is one noisy sum, not two)."""
    if s.query == "histogram":
        return 2 if s.relation == "replace" else 1
    if s.query in ("count", "sum", "mean", "variance") and (
            s.query == "count" or s.bounds is not None):
        return len(noisy_statistics(s.spec()))
    return 1


def _lattice_laplace(eps_part: float, parts: int, steps: int | None, label: str
                     ) -> tuple[Line, bool]:
    """Composition of ``parts`` Laplace-type mechanisms with ε_part each, on a lattice.

    With ``steps`` (the discrete mechanism's integer sensitivity) the lattice is the
    mechanism's own: exact. Without, the continuous Laplace is approximated by a discrete
    Laplace of m steps: a slightly *lower* (pessimistic) curve, converging as m grows.
    """
    if parts == 1 and steps is None:
        c = laplace_tradeoff(eps_part, ALPHA)
        return Line(label, c.alpha, c.beta, True), True
    exact = steps is not None and steps * parts <= 20_000
    m = steps if exact else int(np.clip(_LATTICE_BUDGET // parts, 20, 400))
    c = compose_tradeoff("discrete_laplace", {"scale": m / eps_part, "sensitivity": m}, parts,
                         ALPHA)
    return Line(label, c.alpha, c.beta, exact), exact


def _discrete_steps(s: Settings, eps_part: float) -> int | None:
    """Integer sensitivity (grid steps) of each part of a discrete-Laplace release, if equal."""
    if s.query in ("count", "histogram"):
        return 1
    if s.query in ("sum", "mean") and s.bounds is not None:
        spec = s.spec()
        parts = noisy_statistics(spec)
        if len(parts) != 1:
            return None  # mean / variance mix parts of different sensitivities
        fam = s.info.build(**s.info.resolve(spec.mechanism_params()))
        _, lo, hi, sens = parts[0]
        grid = fam.grid(sens, eps_part, 0.0)
        lo_s, hi_s = math.floor(lo / grid), math.ceil(hi / grid)
        # The engine's rule on the grid (missing ↔ present included under replace).
        return int(sum_sensitivity(lo_s, hi_s, spec.relation, spec.missing))
    return None


def _gaussian_mu(s: Settings, parts: int) -> tuple[float, bool]:
    """μ of the whole release (Gaussian family): exact for the continuous calibration."""
    fam = s.info.build(**s.info.resolve(s.spec().mechanism_params()))
    eps, dlt = s.epsilon, s.effective_delta
    discrete = s.mechanism.startswith("discrete")
    if s.query == "histogram":
        coords = 2 if s.relation == "replace" else 1
        sigma = fam.continuous_scale(1.0, eps, dlt, coords)
        if discrete:
            sigma = max(sigma, discrete_gaussian_sigma(1, eps, dlt, coords, at_least=sigma))
        return math.sqrt(coords) / sigma, not discrete
    sigma = fam.continuous_scale(1.0, eps / parts, dlt / parts)
    return math.sqrt(parts) / sigma, not discrete


def tightest_mu(curve_beta: np.ndarray, alpha: np.ndarray = ALPHA) -> float | None:
    """Smallest μ with G_μ ≤ f on the grid: the tightest Gaussian-DP curve under f.

    None when no μ works (a curve with f(0) < 1, i.e. δ > 0, is under no G_μ).
    """
    inner = (alpha > 0) & (alpha < 1)
    a, f = alpha[inner], np.asarray(curve_beta)[inner]

    def below(mu: float) -> bool:
        return bool(np.all(ndtr(-ndtri(a) - mu) <= f + 1e-12))

    lo, hi = 0.0, 1.0
    while not below(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 64:
            return None
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if below(mid) else (mid, hi)
    return hi


def matching_mu(epsilon: float, delta: float) -> float:
    """μ of the Gaussian mechanism that is exactly (ε, δ)-DP (δ > 0)."""
    lo, hi = 0.0, 1.0
    while gaussian_epsilon(hi, delta) < epsilon and hi < 1e3:
        lo, hi = hi, 2.0 * hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gaussian_epsilon(mid, delta) < epsilon else (lo, mid)
    return lo


def _attack_from(emp, label: str, draws: int, confidence: float) -> AttackPoints:
    return AttackPoints(label, emp.alpha, emp.beta, emp.alpha_low, emp.alpha_high,
                        emp.beta_low, emp.beta_high, draws, confidence)


def _laplace_parts_attack(eps_part: float, parts: int, draws: int, seed: int,
                          confidence: float) -> Any:
    """Likelihood-ratio test against ``parts`` independent Laplace(ε_part) releases."""
    gen = np.random.Generator(np.random.PCG64(seed))
    b = 1.0 / eps_part
    x = gen.laplace(0.0, b, (draws, parts))
    y = gen.laplace(1.0, b, (draws, parts))

    def llr(v: np.ndarray) -> np.ndarray:
        return ((2.0 * np.clip(v, 0.0, 1.0) - 1.0) / b).sum(axis=1)

    total = eps_part * parts
    return empirical_tradeoff(llr(x), llr(y), None, np.linspace(-total, total, 22)[:-1],
                              confidence)


def _central_additive(s: Settings, k: int, draws: int, seed: int, source: Any,
                      attack_label: str, notes: list[str]):
    """(mechanism line, μ or None, composed line, attack) of a central additive release."""
    info, eps = s.info, float(s.epsilon)
    parts = _parts(s)
    family = info.build(**info.resolve(s.spec().mechanism_params())).family
    if family == "gaussian":
        mu, exact = _gaussian_mu(s, parts)
        c = gaussian_tradeoff(mu, ALPHA)
        mech = Line(f"{info.label}" + (f" ({parts} noisy sums)" if parts > 1 else ""),
                    c.alpha, c.beta, exact)
        ck = gaussian_tradeoff(mu * math.sqrt(k), ALPHA)
        composed = Line(f"{k} releases (μ = {mu * math.sqrt(k):.2g})", ck.alpha, ck.beta,
                        exact)
        emp = simulate_attack("gaussian", {"sigma": 1.0 / mu}, draws, source,
                              confidence=s.confidence)
        if not exact:
            notes.append("discrete Gaussian shown as its continuous counterpart "
                         "(the difference is far below what the plot resolves)")
        return mech, mu, composed, _attack_from(emp, attack_label, draws, s.confidence)
    eps_part = eps / parts
    steps = _discrete_steps(s, eps_part) if info.name.startswith("discrete") else None
    name = info.label if parts == 1 else f"{info.label} ({parts} noisy sums)"
    mech, exact = _lattice_laplace(eps_part, parts, steps, name)
    composed, _ = _lattice_laplace(eps_part, parts * k, steps, f"{k} releases")
    if parts == 1 and steps is not None:
        emp = simulate_attack("discrete_laplace", {"scale": steps / eps_part,
                                                   "sensitivity": steps},
                              draws, source, confidence=s.confidence)
    elif parts == 1:
        emp = simulate_attack("laplace", {"scale": 1.0 / eps_part}, draws, source,
                              confidence=s.confidence)
    else:
        emp = _laplace_parts_attack(eps_part, parts, draws, seed, s.confidence)
    if not exact:
        notes.append("Laplace curves composed on a fine lattice: slightly pessimistic "
                     "(never more private than the mechanism)")
    if parts > 1:
        notes.append(f"one {s.query} spends ε/{parts} on each of {parts} noisy statistics; "
                     "the curve is their composition")
    return mech, None, composed, _attack_from(emp, attack_label, draws, s.confidence)


def _local_report(s: Settings, k: int, draws: int, source: Any, attack_label: str,
                  notes: list[str]):
    """(mechanism line, μ, composed line, attack) of one person's local report.

    Exact where the report's distribution pair is a known one: K-ary randomized response
    (its two output pmfs), or an additive-noise report whose built object carries its
    ``noise`` (Laplace or Gaussian). Otherwise the ε-LDP guarantee alone is drawn.
    """
    eps = float(s.epsilon)
    obj = build_randomizer(s, eps)
    label = f"{short(s.info.label, 22)}: one report"
    kk = getattr(obj, "k", None)
    p, q = getattr(obj, "p", None), getattr(obj, "q", None)
    if kk is not None and p is not None and q is not None and math.isclose(
            p / q, math.exp(getattr(obj, "epsilon", eps)), rel_tol=1e-9) and (
            s.info.name in ("rr", "krr")):
        c = krr_tradeoff(obj.epsilon, kk, ALPHA)
        ck = compose_tradeoff("krr", {"epsilon": obj.epsilon, "k": kk}, k, ALPHA)
        emp = simulate_attack("krr" if kk > 2 else "rr", {"epsilon": obj.epsilon, "k": kk},
                              draws, source, confidence=s.confidence)
        return (Line(label, c.alpha, c.beta), None, Line(f"{k} reports", ck.alpha, ck.beta,
                                                         ck.exact),
                _attack_from(emp, attack_label, draws, s.confidence))
    noise = getattr(obj, "noise", None)
    if noise is not None and getattr(noise, "family", "") == "laplace":
        e = noise.sensitivity * noise.coordinates / noise.scale
        c = laplace_tradeoff(e, ALPHA)
        ck, _ = _lattice_laplace(e, k, None, f"{k} reports")
        emp = simulate_attack("laplace", {"scale": 1.0 / e}, draws, source,
                              confidence=s.confidence)
        return Line(label, c.alpha, c.beta), None, ck, _attack_from(emp, attack_label, draws,
                                                                    s.confidence)
    if noise is not None and getattr(noise, "family", "") == "gaussian":
        mu = noise.sensitivity / noise.scale
        c = gaussian_tradeoff(mu, ALPHA)
        ck = gaussian_tradeoff(mu * math.sqrt(k), ALPHA)
        emp = simulate_attack("gaussian", {"sigma": 1.0 / mu}, draws, source,
                              confidence=s.confidence)
        return (Line(label, c.alpha, c.beta), mu,
                Line(f"{k} reports (μ = {mu * math.sqrt(k):.2g})", ck.alpha, ck.beta),
                _attack_from(emp, attack_label, draws, s.confidence))
    return None, None, None, None


def tradeoff(s: Settings, state: State | None = None, *, draws: int = ATTACK_DRAWS,
             seed: int = 7) -> TradeoffResult:
    """What an attacker can do at the current ε: curves on the unit square.

    The (ε, δ) bound is the guarantee itself; the mechanism's curve is the release's exact
    trade-off (all its noisy statistics together; one person's report in the local model);
    μ is its Gaussian-DP parameter (exact for Gaussian noise, else the tightest μ below the
    curve); the composed curve is k such releases; the attack is a simulated
    likelihood-ratio test between two neighbours (seeded, Clopper–Pearson boxes).
    """
    check(state)
    eps, dlt, k = release_epsilon(s), s.effective_delta, int(s.compositions)
    bound_c = epsilon_delta_tradeoff(eps, dlt, ALPHA)
    bound = Line(f"ε = {eps:.3g}, δ = {dlt:.0e}" if dlt else f"ε = {eps:.3g}",
                 bound_c.alpha, bound_c.beta)
    notes: list[str] = []
    mech = composed = attack = None
    mu = None
    info = s.info
    source = SimulationSource(seed)
    attack_label = "simulated attack"
    if not math.isclose(eps, float(s.epsilon), rel_tol=1e-9):
        notes.append(f"the mechanism's parameters fix its guarantee at ε = {eps:.4g} (not the "
                     f"slider's {float(s.epsilon):.4g}): that is the ε shown and charged")
    notes.append(f"simulated attack: likelihood-ratio tests on {draws:,} seeded draws per "
                 f"neighbour (seed {seed}), Clopper–Pearson boxes at {s.confidence:.0%}")
    if s.trust_model == "central" and info.kind == "additive":
        mech, mu, composed, attack = _central_additive(s, k, draws, seed, source,
                                                       attack_label, notes)
    elif s.trust_model == "local":
        mech, mu, composed, attack = _local_report(s, k, draws, source, attack_label, notes)
        notes.append("local model: neighbours differ in one person's value; the curve is "
                     "what the collector can infer from that person's report")
    elif s.trust_model == "distributed":
        notes.append("secure aggregation: the server sees only the noisy sum, so the "
                     "guarantee is that of the sum (replace-one neighbours)")
    elif s.trust_model == "shuffle":
        notes.append("shuffle model: the guarantee is that of the shuffled messages, what "
                     "the analyst receives (replace-one neighbours)")
    check(state)
    if mech is None:
        notes.append(f"no exact curve for {info.label}: its (ε, δ) guarantee is drawn")
    suffix = ""
    if mu is None and (mech is not None or dlt == 0):
        mu = tightest_mu(mech.beta if mech is not None else bound.beta)
        notes.append("Gaussian DP: the tightest μ-GDP curve below the mechanism's")
    if mu is None:  # δ > 0 and no exact curve: the Gaussian with the same (ε, δ)
        mu = matching_mu(eps, dlt)
        suffix = ", same ε, δ"
        notes.append("Gaussian DP: the Gaussian mechanism with the same (ε, δ)")
    g = gaussian_tradeoff(mu, ALPHA)
    gdp = Line(f"Gaussian DP, μ = {mu:.2g}{suffix}", g.alpha, g.beta)
    if composed is None:
        if dlt == 0:
            ck = compose_tradeoff("rr", {"epsilon": eps}, k, ALPHA)
            composed = Line(f"{k} releases (ε-DP, optimal)", ck.alpha, ck.beta)
        else:
            ck = gaussian_tradeoff(mu * math.sqrt(k), ALPHA)
            composed = Line(f"{k} releases (≈ μ = {mu * math.sqrt(k):.2g})", ck.alpha,
                            ck.beta, False)
    return TradeoffResult(eps, dlt, k, bound, mech, gdp, mu, composed, attack, notes)


# ----------------------------------------------------------------------------- preview


def preview(s: Settings, values: np.ndarray, state: State | None = None, *, seed: int = 1
            ) -> Preview:
    """One simulated release at the current settings, with its interval and the truth."""
    check(state)
    source = SimulationSource(seed)
    if s.trust_model == "central":
        spec = s.spec()
        rel = run_query(values, spec, source)
        truth = np.atleast_1d(true_value(values, spec)).astype(np.float64)
        if isinstance(rel.value, dict):
            labels = list(rel.value)
            value = np.array([rel.value[c] for c in labels])
            low = np.array([rel.ci_low[c] for c in labels])
            high = np.array([rel.ci_high[c] for c in labels])
        else:
            labels = None
            value = np.array([rel.value])
            low = None if rel.ci_low is None else np.array([rel.ci_low])
            high = None if rel.ci_high is None else np.array([rel.ci_high])
        return Preview(s.query, s.mechanism, "central", s.epsilon, rel.delta, labels, value,
                       low, high, truth, s.confidence, source.label, seed, rel.noise_scale,
                       rel.sensitivity, rel.clamped, list(rel.notes),
                       imputation_shift=imputation_shift(s, values))
    if s.trust_model == "local":
        return _local_preview(s, values, source, seed)
    if s.trust_model in _SUM_PROTOCOLS:
        return _sum_preview(s, values, source, seed)
    raise QueryError(f"no preview for the {s.trust_model} model yet")


def _local_preview(s: Settings, values: np.ndarray, source: Any, seed: int) -> Preview:
    """A local release simulated through the engine's release path: every row sends one
    report (:func:`~dpstudio.engine.local.run_local`), so n and the estimated value are
    a real release's."""
    from dpstudio.engine.local import run_local

    if s.query == "heavy_hitters":
        return _heavy_hitters_preview(s, values, source, seed)
    params = resolved_params(s, s.epsilon)
    column = _local_column(s, values)
    truth, _ = _local_inputs(s, values)
    if _cells(s):
        res = run_local(column, s.mechanism, params, query="histogram",
                        categories=_labels(s), source=source, confidence=s.confidence)
        labels = list(res.unbiased)  # the declared cells, then "other or missing"
        value = np.array([res.unbiased[c] for c in labels])
        low = np.array([res.ci_low[c] for c in labels])
        high = np.array([res.ci_high[c] for c in labels])
    else:
        labels = None
        res = run_local(column, s.mechanism, params, query="mean", bounds=s.bounds,
                        source=source, confidence=s.confidence)
        value, low, high = (np.array([v]) for v in (res.unbiased, res.ci_low, res.ci_high))
    notes = [f"each of the {res.n:,} people randomizes their own value before sending it; "
             "the collector never sees raw data"] + list(res.notes)
    return Preview(s.query, s.mechanism, "local", res.epsilon, res.delta, labels, value, low,
                   high, truth, s.confidence, res.source, seed, clamped=res.clamped,
                   notes=notes, n=res.n)


def _heavy_hitters_preview(s: Settings, values: np.ndarray, source: Any, seed: int
                           ) -> Preview:
    """The words a heavy-hitters release would discover, with their estimated counts and
    intervals; the truth is each discovered word's count in the column (analyst only)."""
    from dpstudio.engine.local import run_local
    from dpstudio.engine.local.respond import word_inputs

    column = np.asarray(values, dtype=object)
    res = run_local(column, s.mechanism, resolved_params(s, s.epsilon),
                    query="heavy_hitters", source=source, confidence=s.confidence)
    items = res.items or []
    labels = [str(i["item"]) for i in items]
    words = res.oracle.prepare(word_inputs(column).values)  # as the devices see them
    distinct, counts = np.unique(words.astype(str), return_counts=True)
    index = dict(zip(distinct.tolist(), counts.tolist(), strict=True))
    truth = np.array([float(index.get(w, 0)) for w in labels])
    value = np.array([float(i["count"]) for i in items])
    low = np.array([float(i["ci_low"]) for i in items])
    high = np.array([float(i["ci_high"]) for i in items])
    notes = [f"each of the {res.n:,} people sends one randomized report about their word; "
             "the collector discovers the frequent words without a dictionary"] + list(
                 res.notes)
    return Preview(s.query, s.mechanism, "local", res.epsilon, res.delta, labels, value, low,
                   high, truth, s.confidence, res.source, seed, notes=notes, n=res.n)


def _sum_preview(s: Settings, values: np.ndarray, source: Any, seed: int) -> Preview:
    """A sum or mean through the shuffle or secure-aggregation protocol.

    Where running the protocol is quick (shuffling), it runs on the column. Otherwise
    (secure aggregation, whose output is exactly the noisy sum but whose masking costs
    seconds) the release is drawn from the protocol's planned error: normal noise of the
    planned standard error around the clamped statistic.
    """
    truth = _truth(s, values)
    x = _protocol_values(s, values)
    model = trust_label(s.trust_model)
    if s.trust_model in _LIVE_RUN:
        eps, dlt, params = _sum_args(s, s.epsilon)
        res = _sum_protocol(s.trust_model, 1)(x, s.bounds, s.mechanism, eps, dlt, source,
                                              query=s.query, **params)
        value, half = float(res.value), float(res.error_bound)
        notes = [f"{res.n:,} people's messages shuffled ({res.messages_per_user} per "
                 f"person, {res.bits_per_message} bits each); the analyst sees only the "
                 "shuffled multiset"] + list(res.notes)
        eps_, dlt_ = res.epsilon, res.delta
    else:
        plan = _sum_plan(s, values, s.epsilon)
        clamped = float(x.sum()) if s.query == "sum" else float(x.mean())
        gen = np.random.Generator(np.random.PCG64([int(w) for w in source.uint64(4)]))
        value, half = clamped + gen.normal(0.0, plan.stderr), float(plan.error_bound)
        n = getattr(plan, "n_clients", plan.n)
        notes = [f"{n:,} clients add noise shares and mask their messages; the server "
                 "learns only the noisy sum",
                 "preview drawn from the protocol's planned error (normal approximation); "
                 "the masking protocol itself is not re-run on every change"
                 ] + list(plan.notes)  # the threat model the noise was planned for
        eps_, dlt_ = plan.epsilon, plan.delta
    notes.append(f"{model} model · interval: the protocol's rigorous {s.confidence:g} "
                 "error bound")
    return Preview(s.query, s.mechanism, s.trust_model, eps_, dlt_, None, np.array([value]),
                   np.array([value - half]), np.array([value + half]), truth, s.confidence,
                   source.label, seed, notes=notes, n=int(np.size(values)))
