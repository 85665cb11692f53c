"""Each trust model's expected error on one column, compared like with like.

The one source of the numbers the privacy–utility plot, its readout and ``dpstudio
compare`` show. A trust model's expected error at ε is √(noise² + bias²): the noise its
release adds (:func:`noise_curve`: the central mechanisms' calibrated noise, a local
randomizer's exact variance, a sum protocol's planned standard error) and the bias of
clamping to the declared bounds and of imputing missing values, measured on the data
(:func:`~dpstudio.analysis.bias.analyst_bias`; the analyst's alone, never released).

Comparisons hold the footing equal (:func:`~dpstudio.analysis.footing.like_for_like`):
the same ε and δ, replace-one neighbours, n known. A trusted curator sees the raw data and
can run any protocol itself — a users' randomizer, a shuffler, secure aggregation — with
the same guarantee, so at equal (ε, δ) and relation the central model's expected error is
never above another model's. The central curve of a comparison is therefore the best a
curator can do at each ε (:func:`central_best`, then :func:`curator_envelope`): the best
of the central mechanisms meeting (ε, δ) (Laplace, Gaussian and, on whole-number counts,
their discrete forms), and where a protocol of the comparison does better still (the
users' randomized response on a histogram at large ε, where the Laplace noise of two
changed cells falls as e^{-ε/2} and randomized response's error as n·e^{-ε}), that
protocol run by the curator, said so in the curve's assumptions.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from dpstudio.analysis.bias import (
    ANALYST_NOTE,
    analyst_bias,
    clamping_report,
    clamping_warning,
    estimand,
    with_bias,
)
from dpstudio.analysis.choices import (
    VIEW_TRUST_MODELS,
    Choices,
    build_randomizer,
    is_histogram,
    local_inputs,
    mechanisms_for,
    resolved_params,
)
from dpstudio.analysis.curves import trust_label
from dpstudio.analysis.dispatch import plan, planned_trust_models
from dpstudio.analysis.footing import (
    assumptions,
    effective_delta,
    footing_text,
    like_for_like,
    n_known,
    relation_of,
)
from dpstudio.analysis.reach import Unreached, reach_grid, unreachable
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.errors import EngineError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.utility import analytic_curve
from dpstudio.jobs import State, check

__all__ = [
    "CURATOR_BEST",
    "PLANNED_MODELS",
    "central_best",
    "clamping_warning",
    "compare_models",
    "comparison_at",
    "computed_names",
    "curator_envelope",
    "densify_plan",
    "noise_curve",
    "reach_at",
    "sum_analysis",
    "sum_plan",
    "unreachable_reason",
]

#: Trust models whose error curves come from protocol plans: the sum protocols with a
#: server or shuffler between people and analyst (the dispatch's).
PLANNED_MODELS = planned_trust_models()

# :func:`~dpstudio.analysis.bias.clamping_warning` is also read from here (the UI's
# readout asks this module for the numbers it shows).

#: A central mechanism :func:`central_best` weighs only when it is the chosen one.
_SLOW_CANDIDATE = "discrete_gaussian"


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


# ----------------------------------------------------------------------- the noise


def _call_variance(obj: Any, n: int, extra: Any) -> np.ndarray:
    try:
        return np.asarray(obj.variance(n, extra), dtype=np.float64)
    except TypeError:
        return np.asarray(obj.variance(n), dtype=np.float64)


def _local_extra(s: Choices, obj: Any, truth: np.ndarray, inputs: np.ndarray) -> Any:
    """What a local oracle's variance reads besides n: the counts of a histogram, the
    second moment of a mean's rescaled inputs (read once, not at every ε)."""
    if is_histogram(s):
        return truth
    if inputs.size and hasattr(obj, "scaled"):  # mean of the values rescaled to [−1, 1]
        return float(np.mean(np.asarray(obj.scaled(inputs), dtype=float) ** 2))
    return None


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


def _shuffled_epsilon0(s: Choices) -> Any:
    """For a shuffle-model histogram, (ε array, n) ↦ each user's ε₀ (else None)."""
    from dpstudio.analysis.shuffled_local import is_shuffled_histogram

    if not is_shuffled_histogram(s.trust_model, "histogram" if is_histogram(s) else s.query):
        return None
    from dpstudio.engine.shuffle.shuffled_local import local_epsilon_curve

    return lambda eps, n: local_epsilon_curve(eps, n, float(s.delta))


def noise_curve(s: Choices, values: np.ndarray, epsilons: np.ndarray,
                state: State | None = None) -> np.ndarray | None:
    """The noise's error of ``s.mechanism`` in ``s.trust_model`` at each ε, or None.

    Central: the engine's analytic curve (the calibrated noise of each noisy sum; the
    delta method for a ratio). Local: the oracle's exact variance. Shuffle and secure
    aggregation: the protocol plan's standard error. A point the mechanism cannot reach
    (e.g. a δ too small for its noise at that ε) is NaN.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray
    epsilons : numpy.ndarray
    state : State, optional
        Progress over the ε (plans may take a while) and cancellation.

    Returns
    -------
    numpy.ndarray or None
        In the metric's units; None where there is no error model.
    """
    info = s.info
    if s.trust_model == "central":
        if info.kind != "additive":
            return None
        try:
            return analytic_curve(s.spec(), epsilons, s.metric, values).error
        except EngineError:
            return None
    if s.trust_model != "local" and s.trust_model not in PLANNED_MODELS:
        return None
    # A local frequency oracle shuffled: the oracle's exact variance at each user's ε₀.
    shuffled = _shuffled_epsilon0(s)
    try:
        if s.trust_model == "local" or shuffled:  # read the column once (a histogram's truth)
            target, inputs = local_inputs(s, values)
            truth = target if is_histogram(s) else estimand(s, values)
        else:
            truth = estimand(s, values)
    except EngineError:
        return None
    out = np.full(epsilons.size, np.nan)
    extra = None
    user_eps = epsilons
    if shuffled:  # each user's ε₀ at every central ε (a few exact, interpolated)
        try:
            user_eps = shuffled(epsilons, int(inputs.size))
        except EngineError:
            return None
    for i, e in enumerate(epsilons):
        check(state)
        if state is not None:
            state.progress(i / epsilons.size)
        try:
            if s.trust_model == "local" or shuffled:
                obj = build_randomizer(s, float(user_eps[i]))
                if extra is None:
                    extra = _local_extra(s, obj, target, inputs)
                sd = np.sqrt(np.maximum(np.atleast_1d(_call_variance(obj, int(inputs.size),
                                                                     extra)), 0.0))
            else:
                sd = np.array([sum_plan(s, values, float(e)).stderr])
            out[i] = _metric_from_sd(sd, truth, s.metric)
        except EngineError:
            continue
        except (AttributeError, TypeError, ValueError):
            return None  # the entry does not follow the oracle interface
    return out if np.any(np.isfinite(out)) else None


def densify_plan(s: Choices, epsilons: np.ndarray, noise: np.ndarray, dense: np.ndarray
                 ) -> np.ndarray:
    """A sum protocol's planned noise on a denser grid of ε, from a few plans.

    Plans cost up to a fraction of a second each, and log–log interpolation between a
    few of them bends the wrong way (at ε = 1 it overstated the shuffle's error by 40%).
    Their ratio to the Gaussian mechanism's σ at the same (ε, δ) is smooth (it moves by
    under 8% over four decades of ε): that ratio is interpolated instead, exact at the
    planned points.

    Parameters
    ----------
    s : Choices
        The protocol's choices (their δ).
    epsilons, noise : numpy.ndarray
        The planned points.
    dense : numpy.ndarray
        The ε of the line.

    Returns
    -------
    numpy.ndarray
        The noise at each of ``dense``; NaN outside the range of the finite planned
        points (where the protocol may not reach the ε).
    """
    out = np.full(np.size(dense), np.nan)
    ok = np.isfinite(noise) & (noise > 0)
    if ok.sum() < 2:
        return out
    gauss = REGISTRY.get("gaussian").build(calibration="analytic")

    def shape(eps: np.ndarray) -> np.ndarray:
        return np.array([gauss.continuous_scale(1.0, float(e), s.delta) for e in eps])

    planned = np.asarray(epsilons)[ok]
    ratio = np.log(noise[ok] / shape(planned))
    inside = (dense >= planned.min()) & (dense <= planned.max())
    out[inside] = shape(dense[inside]) * np.exp(np.interp(np.log(dense[inside]),
                                                          np.log(planned), ratio))
    return out


def central_best(s: Choices, values: np.ndarray, epsilons: np.ndarray
                 ) -> tuple[np.ndarray, list[str | None]] | None:
    """The least error of the central mechanisms that meet (ε, δ), at each ε.

    Every additive central mechanism for the column and query is a candidate (a
    histogram's counts are whole numbers whatever the column: the discrete mechanisms
    count too); each keeps its default parameters and the choices' δ (the pure ones meet
    any δ). Bias included (the same for all: it is the footing's).

    The discrete Gaussian is a candidate only when it is the chosen mechanism: its exact
    calibration costs up to seconds per curve, and it is never better than the best of
    the others by more than 0.1% (its σ is at least its continuous twin's, and where σ
    falls below a step the discrete Laplace of the same ε is narrower still; checked over
    four decades of ε and of δ in ``tests/analysis/test_comparison_property.py``).

    Parameters
    ----------
    s : Choices
        A central choice (on the comparison's footing: :func:`like_for_like`).
    values : numpy.ndarray
    epsilons : numpy.ndarray

    Returns
    -------
    (error, mechanisms) or None
        The least expected error at each ε and the mechanism that gives it (None where
        none reaches that ε); None when no mechanism has an error model.
    """
    types = s.value_types + (("categorical",) if is_histogram(s) else ())
    names, rows = [], []
    bias = analyst_bias(s, values) if s.metric != "tv" else None
    truth = estimand(s, values) if s.metric == "relative" else None
    for info in mechanisms_for("central", types, s.query):
        if info.kind != "additive" or (info.name == _SLOW_CANDIDATE != s.mechanism):
            continue
        params = () if info.name != s.mechanism else s.params
        noise = noise_curve(replace(s, mechanism=info.name, params=params), values, epsilons)
        if noise is not None:
            names.append(info.name)
            rows.append(with_bias(noise, bias, s.metric, truth))
    if not rows:
        return None
    table = np.vstack(rows)
    table = np.where(np.isfinite(table), table, np.inf)
    best = table.argmin(axis=0)
    error = table[best, np.arange(table.shape[1])]
    mechanisms = [names[b] if np.isfinite(error[i]) else None for i, b in enumerate(best)]
    return np.where(np.isfinite(error), error, np.nan), mechanisms


def curator_envelope(epsilons: np.ndarray, error: np.ndarray,
                     others: list[tuple[str, np.ndarray, np.ndarray]]
                     ) -> tuple[np.ndarray, list[str | None]]:
    """Where another model's protocol does better, the curator runs it itself.

    Parameters
    ----------
    epsilons, error : numpy.ndarray
        The central mechanisms' best error at each ε (:func:`central_best`).
    others : list of (name, ε, error)
        The other trust models' curves of the comparison (name: their mechanism).

    Returns
    -------
    (error, taken)
        The least of them at each ε (others interpolated on log–log axes within their own
        range of ε) and, at each ε, the name of the protocol taken (None: a central
        mechanism's).
    """
    out = np.asarray(error, dtype=float).copy()
    taken: list[str | None] = [None] * out.size
    x = np.log(epsilons)
    for name, eps, err in others:
        ok = np.isfinite(err) & (err > 0)
        if ok.sum() < 2:
            continue
        lo, hi = np.log(eps[ok].min()), np.log(eps[ok].max())
        inside = (x >= lo) & (x <= hi)
        at = np.full(out.size, np.inf)
        at[inside] = np.exp(np.interp(x[inside], np.log(eps[ok]), np.log(err[ok])))
        better = at < np.where(np.isfinite(out), out, np.inf)
        out[better] = at[better]
        for i in np.flatnonzero(better):
            taken[i] = name
    return out, taken


#: The legend's name of a central line that is not one mechanism's: where another model's
#: protocol does better, the curator runs it (the readout names what each ε's number is).
CURATOR_BEST = "curator's best"


def computed_names(mechanisms: list[str | None], taken: list[str | None]
                   ) -> tuple[str | None, ...]:
    """What the central line of a comparison computed at each ε, in the words people see.

    The line is the best a curator can do: a central mechanism's noise, or where another
    model's protocol does better, that protocol run by the curator (:func:`curator_envelope`).
    The readout and ``dpstudio compare`` name it the same way.

    Parameters
    ----------
    mechanisms : list of str or None
        The central mechanism at each ε (:func:`central_best`).
    taken : list of str or None
        The protocol the curator runs instead at each ε (None: the central mechanism's).

    Returns
    -------
    tuple of str or None
        E.g. "Discrete Laplace" or "Randomized response, run by the curator"; None where
        nothing reaches that ε.
    """
    out: list[str | None] = []
    for mechanism, protocol in zip(mechanisms, taken, strict=True):
        if protocol is not None:
            out.append(f"{REGISTRY.get(protocol).label}, run by the curator")
        else:
            out.append(None if mechanism is None else REGISTRY.get(mechanism).label)
    return tuple(out)


# ---------------------------------------------------------- one ε, every trust model


def compare_models(s: Choices, values: np.ndarray, epsilon: float,
                   mechanism: str | None = None) -> list[dict[str, Any]]:
    """Each trust model's expected error at one ε on the comparison's footing.

    What ``dpstudio compare`` prints; the same functions as the plot's curves.

    Parameters
    ----------
    s : Choices
        The column, query, δ and relation (``"replace"``: every model on the footing;
        ``"add-remove"``: the central model under it, the others — stated under
        replace-one only — say so in their assumptions).
    values : numpy.ndarray
    epsilon : float
    mechanism : str, optional
        A mechanism pinned for its trust model (the others take their default: central,
        the best at (ε, δ)).

    Returns
    -------
    list of dict
        One per trust model that answers the query on this column: ``trust_model``,
        ``mechanism``, ``rmse`` = √(noise² + bias²), ``noise``, ``bias`` (analyst only, 0
        where none is modelled), ``epsilon``, ``delta``, ``relation``, ``n_known``,
        ``assumptions``, ``label``, ``analyst_only``. A model that cannot be run at
        (ε, δ) is listed with ``rmse`` and ``noise`` None and a ``reason``
        (:func:`unreachable_reason`).
    """
    s = replace(s, metric="rmse", epsilon=float(epsilon))
    eps = np.array([float(epsilon)])
    pinned = REGISTRY.get(mechanism) if mechanism else None
    rows, others = [], []
    for tm in VIEW_TRUST_MODELS:
        mech = pinned.name if pinned is not None and tm in pinned.trust_models else None
        c = _model_choice(s, tm, mech)
        if c is None:
            continue
        bias = analyst_bias(c, values) or 0.0
        total: float | None = None
        noise: float | None = None
        if tm == "central" and mech is None:
            best = central_best(c, values, eps)
            if best is not None and best[1][0] is not None:
                c = replace(c, mechanism=best[1][0], params=())
                total = float(best[0][0])
                noise = math.sqrt(max(total**2 - bias**2, 0.0))
        else:
            err = noise_curve(c, values, eps)
            if err is not None and np.isfinite(err[0]):
                noise = float(err[0])
                total = math.hypot(noise, bias)
        row = {"trust_model": tm, "mechanism": c.mechanism, "rmse": total, "noise": noise,
               "bias": float(bias), "epsilon": float(epsilon),
               "delta": effective_delta(c), "relation": relation_of(c),
               "n_known": n_known(c), "assumptions": assumptions(c),
               "label": REGISTRY.get(c.mechanism).label, "analyst_only": True}
        if total is None:  # listed, not dropped: the analyst learns why it is missing
            row["reason"] = unreachable_reason(c, values, float(epsilon))
        if tm != "central" and s.relation != "replace":
            row["assumptions"] += " (stated under replace-one only)"
        rows.append(row)
        if tm != "central" and total is not None:
            others.append(row)
    central = next((r for r in rows if r["trust_model"] == "central"), None)
    if central is not None and central["rmse"] is not None and mechanism is None and (
            s.relation == "replace"):
        better = [r for r in others if r["rmse"] < central["rmse"]]
        if better:  # the curator runs that protocol itself: same guarantee, its error
            best = min(better, key=lambda r: r["rmse"])
            central.update(rmse=best["rmse"], noise=best["noise"],
                           mechanism=best["mechanism"],
                           label=computed_names([None], [best["mechanism"]])[0],
                           assumptions=central["assumptions"] + " · the curator runs "
                           f"the {trust_label(best['trust_model']).lower()} protocol "
                           "itself (less error than its own noise at this ε)")
    return rows


def unreachable_reason(c: Choices, values: np.ndarray, epsilon: float) -> str:
    """Why trust model ``c`` has no error at ``epsilon``, in one sentence.

    The same sentence as the readout of the utility plot: where the model's guarantee
    stops, on the plot's own grid of ε (:func:`reach_grid`, with ``epsilon`` itself).

    Parameters
    ----------
    c : Choices
        The model's choice on the comparison's footing.
    values : numpy.ndarray
        The column (its number of rows: the people).
    epsilon : float

    Returns
    -------
    str
        E.g. "cannot reach ε = 20 with δ = 1e-6 for 2,000 people (at this δ it reaches
        ε 6.3 but not 16)".
    """
    return reach_at(c, values, epsilon).reason(float(epsilon))


def reach_at(c: Choices, values: np.ndarray, epsilon: float) -> Unreached:
    """Where ``c`` reaches, on the plot's grid of ε and at ``epsilon`` itself.

    Parameters
    ----------
    c : Choices
    values : numpy.ndarray
    epsilon : float

    Returns
    -------
    Unreached
        ``reaches(epsilon)`` is True where the model has an error at ``epsilon`` after all.
    """
    eps = np.union1d(reach_grid(c), [float(epsilon)])
    found = unreachable(c, values, eps, noise_curve(replace(c, metric="rmse"), values, eps))
    if found is None:  # reached everywhere
        lo, hi = float(eps.min()), float(eps.max())
        found = Unreached(float(effective_delta(c)), int(np.size(values)), (lo, hi))
    return found


def _model_choice(s: Choices, tm: str, mechanism: str | None) -> Choices | None:
    """``s`` under trust model ``tm`` for :func:`compare_models`."""
    if tm == "central" and s.relation != "replace":
        infos = [i for i in mechanisms_for("central", s.value_types, s.query)
                 if mechanism is None or i.name == mechanism]
        if not infos:
            return None
        c = replace(s, trust_model="central", mechanism=infos[0].name, params=())
        return replace(c, missing="drop", impute=None)
    return like_for_like(s, tm, mechanism)


def comparison_at(s: Choices, values: np.ndarray, epsilon: float,
                  mechanism: str | None = None) -> dict[str, Any]:
    """What ``dpstudio compare`` reports: every model's row, the footing, the clamping.

    Parameters
    ----------
    s : Choices
        The column, query, δ and relation (see :func:`compare_models`).
    values : numpy.ndarray
    epsilon : float
    mechanism : str, optional
        A mechanism pinned for its trust model.

    Returns
    -------
    dict
        ``models`` (:func:`compare_models`), ``footing`` (in words), ``clamping`` (the
        clamping report at this ε — its warning when the bias is at least a tenth of the
        central model's noise here, or more than 5% of the values lie outside — or None),
        ``analyst_only`` and ``note``.
    """
    rows = compare_models(s, values, epsilon, mechanism)
    replace_one = s.relation == "replace"
    footing = like_for_like(s, "central") if replace_one else None
    clamping = None
    if rows:
        reached = [r for r in rows if r["noise"] is not None] or rows
        central = next((r for r in reached if r["trust_model"] == "central"), reached[0])
        noise = central["noise"]
        clamping = clamping_report(footing or s, values, np.array([float(epsilon)]),
                                   None if noise is None else np.array([noise]))
    if clamping is not None:
        # The footing stands for every model: the warning's advice speaks to them all.
        clamping.pop("trust_model", None)
        clamping["warning"] = clamping_warning(clamping, float(epsilon))
        clamping.pop("material_from_epsilon")
    return {"models": rows, "analyst_only": True, "note": ANALYST_NOTE,
            "footing": footing_text(s) if replace_one else
            "the central model under add-remove; the others under replace-one (their only "
            "relation)", "clamping": clamping}
