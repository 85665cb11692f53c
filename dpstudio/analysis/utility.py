"""Error against ε: the analysis view's utility curves, a pure job ``utility(s, values, state)``.

For the chosen mechanism: an analytic line of its expected error, √(noise² + bias²) with
the bias of clamping and imputing measured on the data (:mod:`dpstudio.analysis.bias`),
and Monte-Carlo points with error bars on the analyst's column; beside them, the other
trust models compared like with like — the same ε and δ, replace-one neighbours, n known
(:mod:`dpstudio.analysis.footing`) — and the central model on that footing where the
chosen central line is off it. The numbers come from :mod:`dpstudio.analysis.compare`, as
``dpstudio compare``'s do. The curves do not depend on the current ε, so the view caches
them by :meth:`~dpstudio.analysis.choices.Choices.utility_key`.

Trust models other than the central one are handled through their registry entries
generically: a ``"randomizer"`` entry builds an oracle with ``variance``/``randomize``/
``estimate`` (:mod:`dpstudio.engine.local.base`); shuffle and distributed entries
contribute whatever their protocol plans offer (a standard error, an ``epsilon``), never
per-mechanism code. The preview (:mod:`dpstudio.analysis.preview`) shares the
choices-level helpers re-exported here: :func:`sum_analysis`, :func:`protocol_values`,
:func:`estimand` and :func:`imputation_shift`. Everything random is a simulation, seeded
and labelled so.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np

from dpstudio.analysis.bias import (
    analyst_bias,
    clamping_report,
    estimand,
    imputation_shift,
    protocol_values,
    release_bias,
    with_bias,
)
from dpstudio.analysis.choices import (
    LINE_EPSILONS,
    MC_EPSILONS,
    VIEW_TRUST_MODELS,
    Choices,
    build_randomizer,
    comparison_settings,
    fixed_epsilon,
    local_inputs,
)
from dpstudio.analysis.compare import (
    CURATOR_BEST,
    PLANNED_MODELS,
    central_best,
    computed_names,
    curator_envelope,
    densify_plan,
    noise_curve,
    sum_analysis,
    sum_plan,
)
from dpstudio.analysis.contribution import person_ids
from dpstudio.analysis.curves import Curve, UtilityResult, curve_name, metric_label
from dpstudio.analysis.footing import assumptions, caption
from dpstudio.analysis.reach import unreachable
from dpstudio.analysis.sample_error import error_of_samples
from dpstudio.engine.errors import EngineError
from dpstudio.engine.local.tally import tally_values
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.utility import monte_carlo_curve
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

#: A central line on the comparison's footing is drawn beside the chosen central one only
#: where the two differ by more than this (relative): else the chosen line is it.
_SAME_LINE = 0.01


def _present_mask(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values)
    if v.dtype.kind in "fc":
        return np.isfinite(v)
    if v.dtype.kind == "O":
        return np.not_equal(v, None)
    return np.ones(v.shape, dtype=bool)


def _local_estimate(obj: Any, inputs: np.ndarray, source: Any) -> np.ndarray:
    reports = obj.randomize(inputs, source)
    try:
        est = obj.estimate(reports, int(inputs.size))
    except TypeError:
        est = obj.estimate(reports)
    return np.atleast_1d(np.asarray(est, dtype=np.float64))


# ----------------------------------------------------------------------- the curves


def _simulate(s: Choices, values: np.ndarray, epsilons: np.ndarray, reps: int,
              source: SimulationSource, state: State | None) -> tuple[Curve | None, int]:
    """Monte-Carlo error of the chosen mechanism at each ε (with ≈95% bars), or None; and
    the replications per ε.

    A local randomizer that offers ``sample_estimates`` (the mean oracles) draws each
    simulated estimate from the law of its sum over the grouped values
    (:mod:`dpstudio.engine.local.tally`), at a cost in distinct values rather than rows;
    the others randomize every record, ``reps`` times."""
    name = curve_name(s.trust_model, s.info.label, "simulated")
    if s.trust_model == "central":
        mc = monte_carlo_curve(values, s.spec(), epsilons, reps, source,
                               s.metric, state)
        return Curve(name, "central", s.mechanism, "simulation", mc.epsilon, mc.error,
                     mc.low, mc.high), reps
    if s.trust_model != "local":
        return None, 0  # the sum protocols' errors are planned exactly enough (a bound)
    # Against the present values' statistic (a mean: unclamped), so the points include
    # the clamping bias the line includes.
    truth, inputs = estimand(s, values), local_inputs(s, values)[1]
    pts = np.empty((epsilons.size, 3))
    tally = None
    for i, e in enumerate(epsilons):
        check(state)
        obj = build_randomizer(s, float(e))
        if hasattr(obj, "sample_estimates"):
            if tally is None:  # once per job: the values do not change with ε
                tally = tally_values(inputs)
                reps = randomizer_reps(tally.values.size, epsilons.size)
            draws = obj.sample_estimates(tally, reps, source)[:, None]
        else:
            draws = np.stack([_local_estimate(obj, inputs, source) for _ in range(reps)])
        pts[i] = error_of_samples(draws, truth, s.metric)
        if state is not None:
            state.progress((i + 1) / epsilons.size)
    return Curve(name, s.trust_model, s.mechanism, "simulation", epsilons.copy(), pts[:, 0],
                 pts[:, 1], pts[:, 2]), reps


def randomizer_reps(n: int, points: int) -> int:
    """Replications for a randomizer's Monte-Carlo curve: ~2 million randomized records
    (or grouped values, for a randomizer that draws its estimate from the values' tally).

    Parameters
    ----------
    n : int
        Reports per release (or entries of the tally).
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
    """Error against ε of the chosen mechanism and of the other trust models, like with like.

    The chosen mechanism gets an analytic line of its expected error (noise and bias) and
    Monte-Carlo points; the other trust models' first matching mechanisms, on the
    comparison's footing (same ε and δ, replace-one, n known), an analytic line each; a
    central choice off that footing also gets the central model on it (the best a
    trusted curator can do at each ε: :func:`~dpstudio.analysis.compare.central_best`).

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray
        The column's values.
    state : State, optional
        Progress and cancellation of the job.
    reps : int
        Monte-Carlo replications per ε (central model; randomizers adapt them to n,
        or to the distinct values when they draw their estimates from a tally).
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
        Keyed by ``s.utility_key()``, with notes saying what was simulated and how, the
        caption of the comparison's assumptions and the clamping report (analyst only).

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
    if person_ids(s) is not None:  # user-level: bounded rows, noise × k, no comparison
        from dpstudio.analysis.contribution_utility import user_level_utility

        return user_level_utility(s, values, state, mc_epsilons=eps_mc,
                                  line_epsilons=eps_line, reps=reps, seed=seed,
                                  simulate=simulate, analytic=analytic)
    curves: list[Curve] = []
    notes: list[str] = []
    source = SimulationSource(seed)
    # Local, shuffle and distributed releases have one report per row (missing values
    # included), as has a central release that imputes; else the present values count.
    every_row = s.trust_model != "central" or s.spec().impute_value() is not None
    n = int(np.size(values)) if every_row else int(np.count_nonzero(_present_mask(values)))
    planned = s.trust_model in PLANNED_MODELS  # each point is a protocol plan: fewer
    line_eps = eps_line if not planned else eps_mc[::2]
    own = None
    if analytic:
        own = _line(s, values, line_eps, True,
                    _Part(state, 0.0, 0.9 if planned else 0.05, "error model"), eps_line)
        if own is not None:
            curves.append(own)
            if own.bias:
                what = ("imputing and clamping move" if s.spec().impute_value() is not None
                        else "clamping moves")
                notes.append(f"the lines include the bias: {what} the release's expectation "
                             f"by {own.bias:+.3g} from the true {s.query} (measured on the "
                             "data; analyst only)")
    used_reps = 0
    if simulate:
        mc_eps, used_reps = eps_mc, reps
        if s.trust_model != "central":
            mc_eps = eps_mc[::2]  # the oracles' variances are exact: fewer points suffice
            used_reps = randomizer_reps(n, mc_eps.size)
        sim, used_reps = _simulate(s, values, mc_eps, used_reps, source,
                                   _Part(state, 0.05, 0.9, "Monte-Carlo simulation"))
        if sim is not None:
            curves.append(sim)
        else:
            notes.append(f"no simulation for the {s.trust_model} model: the curve is the "
                         "protocol's data-free error bound")
    compared = False
    if compare:
        models = VIEW_TRUST_MODELS if compare is True else compare
        compared = _compare(s, values, comparison_settings(s, models), own, eps_line, eps_mc,
                            curves, state)
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
    # The clamping report rides on the lines (the view reads it there): the points' and
    # the comparison's jobs need not measure it again.
    return UtilityResult(s.utility_key(), s.metric, metric_label(s), curves, n, used_reps,
                         notes, fixed, caption(s, curves, compared),
                         _clamping(s, values, own, line_eps) if analytic else None)


def _line(s: Choices, values: np.ndarray, epsilons: np.ndarray, primary: bool,
          state: State | None = None, dense: np.ndarray | None = None) -> Curve | None:
    """The analytic line of ``s``: its expected error √(noise² + bias²), or None.

    A sum protocol is planned at ``epsilons`` and drawn at ``dense``
    (:func:`~dpstudio.analysis.compare.densify_plan`)."""
    from dpstudio.analysis.choices import is_histogram
    from dpstudio.analysis.shuffled_local import is_shuffled_histogram

    if dense is not None and is_shuffled_histogram(
            s.trust_model, "histogram" if is_histogram(s) else s.query):
        epsilons, dense = dense, None  # the oracle's exact variance: cheap at every ε
    noise = noise_curve(s, values, epsilons, state)
    if noise is None:
        return None
    # Where the chosen line stops short, the readout says why (the planned grid knows).
    reach = unreachable(s, values, epsilons, noise) if primary else None
    if dense is not None and s.trust_model in PLANNED_MODELS:
        noise, epsilons = densify_plan(s, epsilons, noise, dense), dense
    bias = analyst_bias(s, values) if s.metric in ("rmse", "relative") else None
    truth = estimand(s, values) if bias and s.metric == "relative" else None
    kind = "bound" if s.trust_model in PLANNED_MODELS else "analytic"
    return Curve(curve_name(s.trust_model, s.info.label, kind), s.trust_model, s.mechanism,
                 "analytic", epsilons, with_bias(noise, bias, s.metric, truth),
                 primary=primary, assumptions=assumptions(s), bias=bias or None,
                 unreached=reach)


def _compare(s: Choices, values: np.ndarray, others: list[Choices], own: Curve | None,
             eps_line: np.ndarray, eps_mc: np.ndarray, curves: list[Curve],
             state: State | None) -> bool:
    """Add the compared trust models' lines to ``curves``; the central one last, as the
    best a curator can do (it may run the others' protocols itself). Whether any was
    added."""
    added = False
    central = None
    lines = []
    for i, other in enumerate(others):
        check(state)
        if other.trust_model == "central":
            central = other
            continue
        eps = eps_line if other.trust_model not in PLANNED_MODELS else eps_mc[::4]
        part = _Part(state, 0.9 + 0.1 * i / len(others), 0.9 + 0.1 * (i + 1) / len(others),
                     "comparison")
        line = _line(other, values, eps, False, part, eps_line)
        if line is not None:
            curves.append(line)
            lines.append(line)
            added = True
    if central is not None:
        if own is not None and s.trust_model != "central":
            lines.append(own)  # on the footing already: the curator may run it too
        line = _central_line(s, central, values, eps_line, lines, own)
        if line is not None:
            curves.append(line)
            added = True
    return added


def _central_line(s: Choices, central: Choices, values: np.ndarray, eps: np.ndarray,
                  others: list[Curve], own: Curve | None) -> Curve | None:
    """The central model on the comparison's footing: the best central mechanism at each
    ε, or the protocol of ``others`` a curator would run itself where that does better.
    None when a chosen central line already is it (within 1%)."""
    best = central_best(central, values, eps)
    if best is None:
        return None
    error, mechanisms = best
    error, taken = curator_envelope(eps, error, [(c.mechanism, c.epsilon, c.error)
                                                 for c in others])
    if own is not None and s.trust_model == "central" and own.epsilon.size == eps.size:
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.abs(own.error / error - 1.0)
        if np.all(~np.isfinite(gap) | (gap <= _SAME_LINE)):
            return None
    used = [m for m in mechanisms if m is not None]
    main = Counter(used).most_common(1)[0][0] if used else central.mechanism
    text = assumptions(central) + " · best central mechanism at each ε"
    labels = list(dict.fromkeys(REGISTRY.get(m).label for m in used))
    if len(labels) > 1:
        text += f" ({', '.join(labels)})"
    run = [i for i, t in enumerate(taken) if t is not None]
    named = REGISTRY.get(main).label
    if run:
        label = REGISTRY.get(taken[run[0]]).label
        text += (f" · from ε ≈ {eps[run[0]]:.2g} the curator runs {label} itself (less "
                 "error than central noise)")
        named = CURATOR_BEST  # not one mechanism's line: the readout names each ε's
    # Beside a chosen central line it needs telling apart; beside another model's it is
    # simply the central model (every line there is on the footing).
    name = curve_name("central", named, "like" if s.trust_model == "central" else "analytic")
    bias = analyst_bias(central, values) if s.metric in ("rmse", "relative") else None
    return Curve(name, "central", main, "analytic", eps, error, primary=False,
                 assumptions=text, bias=bias or None, names=computed_names(mechanisms, taken))


def _clamping(s: Choices, values: np.ndarray, own: Curve | None, eps: np.ndarray
              ) -> dict | None:
    """The clamping report of the chosen release, with the noise of its own line."""
    if s.metric == "tv":
        return None
    noise = None
    if own is not None and s.metric == "rmse":
        bias = own.bias or 0.0
        noise = np.sqrt(np.maximum(own.error**2 - bias**2, 0.0))
        eps = own.epsilon
    elif s.trust_model not in PLANNED_MODELS:
        noise = noise_curve(replace(s, metric="rmse"), values, eps)
    return clamping_report(s, values, eps if noise is not None else None, noise)


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
            curves.append(Curve(name, "local", s.mechanism, "analytic", epsilons.copy(), err,
                                assumptions=assumptions(s)))
    return UtilityResult(s.utility_key(), "rmse", metric_label(s), curves, n, 0,
                         [HEAVY_HITTERS_NOTE], fixed_epsilon(s),
                         caption(s, curves, compared=False))
