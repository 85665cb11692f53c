"""Error against ε: the analysis view's utility curves, a pure job ``utility(s, values, state)``.

For the chosen mechanism: an analytic line where the engine has one and Monte-Carlo
points with error bars on the analyst's column; beside it, the other trust models' first
matching mechanisms at the same column and query. The curves do not depend on the
current ε, so the view caches them by :meth:`~dpstudio.analysis.choices.Choices.utility_key`.

Trust models other than the central one are handled through their registry entries
generically: a ``"randomizer"`` entry builds an oracle with ``variance``/``randomize``/
``estimate`` (:mod:`dpstudio.engine.local.base`); shuffle and distributed entries
contribute whatever their protocol plans offer (a standard error, an ``epsilon``), never
per-mechanism code. The plans come from the one dispatch
(:func:`dpstudio.analysis.dispatch.plan`); :func:`sum_plan` serves only the curves here.
The preview (:mod:`dpstudio.analysis.preview`) shares the choices-level helpers:
:func:`sum_analysis` (the protocol's analysis at an ε), :func:`protocol_values`,
:func:`estimand` and :func:`imputation_shift`.
Everything random is a simulation, seeded and labelled so.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from dpstudio.analysis.choices import (
    LINE_EPSILONS,
    MC_EPSILONS,
    VIEW_TRUST_MODELS,
    Choices,
    build_randomizer,
    comparison_settings,
    fixed_epsilon,
    is_histogram,
    local_inputs,
    resolved_params,
)
from dpstudio.analysis.curves import Curve, UtilityResult, curve_name, metric_label
from dpstudio.analysis.dispatch import plan, planned_trust_models
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.errors import EngineError
from dpstudio.engine.missing import fill_missing
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.utility import analytic_curve, monte_carlo_curve, true_value
from dpstudio.jobs import State, check

__all__ = [
    "HEAVY_HITTERS_NOTE",
    "MC_REPS",
    "PLANNED_MODELS",
    "estimand",
    "imputation_shift",
    "protocol_values",
    "randomizer_reps",
    "release_bias",
    "sum_analysis",
    "sum_plan",
    "utility",
]

#: Default Monte-Carlo replications per ε (central model; randomizers adapt to n).
MC_REPS = 200

#: Trust models whose error curves come from protocol plans (slower: a separate job): the
#: sum protocols with a server or shuffler between people and analyst (the dispatch's).
PLANNED_MODELS = planned_trust_models()


# ------------------------------------------------------- the local model's estimates


def _present_mask(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values)
    if v.dtype.kind in "fc":
        return np.isfinite(v)
    if v.dtype.kind == "O":
        return np.not_equal(v, None)
    return np.ones(v.shape, dtype=bool)


def _call_variance(obj: Any, n: int, extra: Any) -> np.ndarray:
    try:
        return np.asarray(obj.variance(n, extra), dtype=np.float64)
    except TypeError:
        return np.asarray(obj.variance(n), dtype=np.float64)


def _local_sd(s: Choices, obj: Any, truth: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """Standard deviation of a local estimate per cell (the oracle's exact variance)."""
    n = int(inputs.size)
    extra = None
    if is_histogram(s):
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


# ---------------------------------------------------- shuffle and secure aggregation


def sum_analysis(s: Choices, epsilon: float) -> AnalysisSpec:
    """The shuffle or secure-aggregation analysis these choices describe, at ``epsilon``.

    Parameters
    ----------
    s : Choices
        A shuffle or distributed choice.
    epsilon : float
        ε to set where the entry takes one (a curve's point, or the slider's).

    Returns
    -------
    AnalysisSpec
        ε and δ as the entry resolves them, its other parameters, and the confidence of
        the protocol's error bound; stated under ``replace`` (as a protocol release is).

    Raises
    ------
    EngineError
        For a parameter value the entry refuses.
    """
    params = resolved_params(s, epsilon)
    eps, dlt = params.pop("epsilon", epsilon), params.pop("delta", s.delta)
    spec = QuerySpec(s.query, s.mechanism, eps, delta=dlt, bounds=s.bounds,
                     relation="replace", confidence=s.confidence, params=params,
                     column=s.column)
    return AnalysisSpec(s.trust_model, spec)


def sum_plan(s: Choices, values: np.ndarray, epsilon: float) -> Any:
    """The protocol's plan for this column: data-free stderr and the guarantee it meets.

    Serves the utility curves (one plan per ε); cached by the dispatch.

    Parameters
    ----------
    s : Choices
        A shuffle or distributed choice.
    values : numpy.ndarray
        The column (only its number of rows is read: every row is a client).
    epsilon : float

    Returns
    -------
    object
        The engine's plan (``stderr``, ``error_bound``, ``epsilon``, ``delta``, notes).

    Raises
    ------
    EngineError
        When no noise meets the guarantee.
    """
    n = int(np.size(values))  # every row is a client (missing values sent as the middle)
    return plan(sum_analysis(s, epsilon), n)


def protocol_values(s: Choices, values: np.ndarray) -> np.ndarray:
    """The column as a shuffle or secure-aggregation protocol sends it.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray

    Returns
    -------
    numpy.ndarray
        One message per row: missing values as the middle of the bounds, clamped (the
        engine's encoding).
    """
    from dpstudio.engine.distributed.encoding import unit_values

    u, lo, hi, _, _ = unit_values(values, s.bounds)
    return lo + u * (hi - lo)


# ------------------------------------------------------------------ truth and bias


def estimand(s: Choices, values: np.ndarray) -> np.ndarray:
    """The truth an error is measured against.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray

    Returns
    -------
    numpy.ndarray
        The local estimators' target; else (central, shuffle, secure aggregation) the
        statistic of the present values, unclamped — so the error includes what imputing
        the bounds' middle and clamping move the release by.
    """
    if s.trust_model == "local":
        return local_inputs(s, values)[0]
    return np.atleast_1d(true_value(values, s.spec())).astype(np.float64)


def imputation_shift(s: Choices, values: np.ndarray) -> float | None:
    """How far imputing moves the statistic from that of the present values (analyst only).

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray

    Returns
    -------
    float or None
        The imputed column's statistic minus the present values' (neither clamped), for
        a central sum, mean or variance that imputes; None otherwise.
    """
    spec = s.spec()
    c = spec.impute_value() if s.trust_model == "central" else None
    if c is None:
        return None
    drop = replace(spec, missing="drop", impute=None)
    filled, _, _ = fill_missing(values, c)
    return float(true_value(filled, drop)) - float(true_value(values, drop))


def release_bias(s: Choices, values: np.ndarray) -> float | None:
    """The release's expectation minus the truth, for a central sum, mean or variance.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray

    Returns
    -------
    float or None
        What clamping (and imputing) shift the answer by, which the noise-only analytic
        line leaves out. None where no such expectation is computed here.
    """
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


# ----------------------------------------------------------------------- the curves


def _analytic(s: Choices, values: np.ndarray, epsilons: np.ndarray,
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
    if s.trust_model != "local" and s.trust_model not in PLANNED_MODELS:
        return None
    try:
        truth = estimand(s, values)
        inputs = local_inputs(s, values)[1] if s.trust_model == "local" else None
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
                sd = np.array([sum_plan(s, values, float(e)).stderr])
            out[i] = _metric_from_sd(sd, truth, s.metric)
        except EngineError:
            continue
        except (AttributeError, TypeError, ValueError):
            return None  # the entry does not follow the oracle interface
    return out if np.any(np.isfinite(out)) else None


def _simulate(s: Choices, values: np.ndarray, epsilons: np.ndarray, reps: int,
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
    truth, inputs = local_inputs(s, values)
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
    """Replications for a randomizer's Monte-Carlo curve: ~2 million randomized records.

    Parameters
    ----------
    n : int
        Reports per release.
    points : int
        Number of ε of the curve.

    Returns
    -------
    int
        Between 10 and :data:`MC_REPS`.
    """
    return int(np.clip(2_000_000 // max(n * points, 1), 10, MC_REPS))


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


def utility(s: Choices, values: np.ndarray, state: State | None = None, *,
            reps: int = MC_REPS, seed: int = 20240601, mc_epsilons: np.ndarray | None = None,
            line_epsilons: np.ndarray | None = None, simulate: bool = True,
            analytic: bool = True, compare: bool | tuple[str, ...] = True) -> UtilityResult:
    """Error against ε of the chosen mechanism and of the other trust models' ones.

    The chosen mechanism gets an analytic line and Monte-Carlo points; the other trust
    models' first matching mechanisms on the same column and query an analytic line.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray
        The column's values.
    state : State, optional
        Progress and cancellation of the job.
    reps : int
        Monte-Carlo replications per ε (central model; randomizers adapt them to n).
    seed : int
        Seed of the simulation.
    mc_epsilons, line_epsilons : numpy.ndarray, optional
        ε of the points and of the lines (:data:`MC_EPSILONS`, :data:`LINE_EPSILONS`).
    simulate, analytic : bool
        Whether to compute the points, the chosen mechanism's line (the view runs the
        analytic lines and the slower Monte-Carlo points as separate jobs).
    compare : bool or tuple of str
        Whether to add the other trust models' lines, or which (e.g.
        :data:`PLANNED_MODELS`, whose curves come from protocol plans: a job of their own).

    Returns
    -------
    UtilityResult
        Keyed by ``s.utility_key()``, with notes saying what was simulated and how.

    Raises
    ------
    Cancelled
        When ``state`` asks the job to stop.
    EngineError
        For choices the engine refuses.
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
    planned = s.trust_model in PLANNED_MODELS  # each point is a protocol plan: fewer
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
        others = comparison_settings(s, VIEW_TRUST_MODELS if compare is True else compare)
        for i, other in enumerate(others):
            check(state)
            eps = eps_line if other.trust_model not in PLANNED_MODELS else eps_mc[::4]
            part = _Part(state, 0.9 + 0.1 * i / len(others), 0.9 + 0.1 * (i + 1) / len(others),
                         "comparison")
            err = _analytic(other, values, eps, part)
            if err is not None:
                kind = "bound" if other.trust_model in PLANNED_MODELS else "analytic"
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


def _heavy_hitters_utility(s: Choices, values: np.ndarray, epsilons: np.ndarray,
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
