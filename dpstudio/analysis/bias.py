"""What clamping and imputing move a release by, measured on the data (analyst only).

The truth an error is measured against is the statistic of the present values, unclamped
(:func:`estimand`). A release clamps every value to the declared bounds and imputes or
drops the missing ones, so its expectation is off the truth by a bias (:func:`analyst_bias`)
that the noise does not show: the expected error is √(noise² + bias²) (:func:`with_bias`).
:func:`clamping_report` says how much of the column lies outside the bounds and when the
bias is material (:func:`clamping_warning`). All of it reads the raw data: for the
analyst's eyes, never released.
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from dataclasses import replace

import numpy as np

from dpstudio.analysis.choices import Choices, is_histogram, local_inputs
from dpstudio.analysis.dispatch import planned_trust_models
from dpstudio.engine.errors import EngineError
from dpstudio.engine.missing import fill_missing
from dpstudio.engine.utility import true_value

__all__ = [
    "ANALYST_NOTE",
    "MATERIAL_FRACTION",
    "MATERIAL_SHARE",
    "WARNING_EPSILON",
    "analyst_bias",
    "bias_parts",
    "clamping_report",
    "clamping_warning",
    "estimand",
    "imputation_shift",
    "protocol_values",
    "release_bias",
    "with_bias",
]

#: Said wherever these numbers are shown: they are read off the raw data.
ANALYST_NOTE = ("for the analyst's eyes only: the bias is measured on the raw data; nothing "
                "is released and no real noise is drawn")

#: A bias is material once it is a tenth of the noise's standard deviation: below that it
#: adds under 0.5% to the expected error (√(1 + 0.1²) = 1.005), invisible on the plot.
MATERIAL_SHARE = 0.1
#: More than 5% of the values outside the bounds is a wrong declaration whatever ε: the
#: warning stands even while the noise still hides the bias.
MATERIAL_FRACTION = 0.05
#: The ε at which the ε-free warning judges the bias: the default ε, mid-plot.
WARNING_EPSILON = 1.0

_PLANNED = planned_trust_models()


# ------------------------------------------------------------------------ memo
# One lines job asks for the same bias and truth a dozen times (its own line, each
# compared model's, the clamping report), each a pass over every row. They depend on the
# values and on a few choices, not on ε, δ or the mechanism: remembered here for the one
# values array in use, while it is alive and read-only (the session's column is; an
# array that may still change is never remembered).
_MEMO_LOCK = threading.Lock()
_MEMO: dict = {"ref": None, "results": {}}
_MISSING = object()


def _memo_key(s: Choices) -> tuple:
    """The choices a bias or truth depends on: shuffle and secure aggregation send the same
    values (one key); a local histogram's cells depend on its mechanism."""
    model = "planned" if s.trust_model in _PLANNED else s.trust_model
    mechanism = s.mechanism if s.trust_model == "local" else None
    return (model, s.query, s.column_type, s.bounds, s.categories, s.bins, s.quantile,
            s.missing, s.impute, mechanism)


def _statistic_key(s: Choices) -> tuple:
    """The choices the present values' statistic depends on (not the trust model)."""
    return (s.query, s.column_type, s.bounds, s.categories, s.bins, s.quantile)


def _memoized(fn=None, *, key=_memo_key):
    """``fn(s, values)`` remembered per ``key(s)`` for the read-only array in use."""
    if fn is None:
        return functools.partial(_memoized, key=key)

    @functools.wraps(fn)
    def wrapper(s: Choices, values: np.ndarray):
        if not isinstance(values, np.ndarray) or values.flags.writeable:
            return fn(s, values)
        memo_key = (fn.__name__, key(s))
        with _MEMO_LOCK:
            ref = _MEMO["ref"]
            if ref is None or ref() is not values:
                _MEMO["ref"], _MEMO["results"] = weakref.ref(values), {}
            hit = _MEMO["results"].get(memo_key, _MISSING)
        if hit is _MISSING:
            hit = fn(s, values)
            with _MEMO_LOCK:
                ref = _MEMO["ref"]
                if ref is not None and ref() is values:
                    _MEMO["results"][memo_key] = hit
        # A copy of an array: callers may not change the remembered one.
        return hit.copy() if isinstance(hit, np.ndarray | dict) else hit

    return wrapper


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


@_memoized(key=_statistic_key)
def _present_statistic(s: Choices, values: np.ndarray) -> float:
    drop = replace(s.spec(), missing="drop", impute=None)
    return float(true_value(values, drop))


@_memoized
def estimand(s: Choices, values: np.ndarray) -> np.ndarray:
    """The truth an error is measured against.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray

    Returns
    -------
    numpy.ndarray
        A local histogram's target (its declared cells and "other or missing"); else
        (central, shuffle, secure aggregation, a local mean) the statistic of the present
        values, unclamped — so the error includes what imputing the bounds' middle and
        clamping move the release by.
    """
    if s.trust_model == "local" and is_histogram(s):
        return local_inputs(s, values)[0]
    return np.atleast_1d(true_value(values, s.spec())).astype(np.float64)


@_memoized
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


@_memoized
def release_bias(s: Choices, values: np.ndarray) -> float | None:
    """The release's expectation minus the truth, for a central sum, mean or variance.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray

    Returns
    -------
    float or None
        What clamping (and imputing) shift the answer by. None where no such expectation
        is computed here.
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


@_memoized
def analyst_bias(s: Choices, values: np.ndarray) -> float | None:
    """What clamping and imputing move a release's expectation by, measured on the data.

    Analyst only: it reads the raw values. The noise has mean zero, so this is the
    release's whole bias (to first order for a mean over a noisy count).

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray

    Returns
    -------
    float or None
        In the statistic's units: for a central sum, mean or variance
        (:func:`release_bias`); a shuffle or secure-aggregation sum or mean (each row sends
        its value clamped, a missing one as the middle of the bounds); a local mean (each
        device clamps, a missing value as the middle). None for other queries, a column
        without bounds, or one without a present value.
    """
    if s.trust_model == "central":
        return release_bias(s, values)
    if s.bounds is None or is_histogram(s) or s.query not in ("sum", "mean"):
        return None
    try:
        truth = _present_statistic(s, values)
        if s.trust_model in _PLANNED:
            sent = protocol_values(s, values)
            return float(sent.sum() if s.query == "sum" else sent.mean()) - truth
        if s.trust_model == "local" and s.query == "mean":
            return float(np.mean(local_inputs(s, values)[1])) - truth
    except (EngineError, ValueError):
        return None
    return None


def with_bias(noise: np.ndarray, bias: float | None, metric: str,
              truth: np.ndarray | None = None) -> np.ndarray:
    """The expected error √(noise² + bias²) in the metric's units.

    Parameters
    ----------
    noise : numpy.ndarray
        The noise's error at each ε, in the metric's units.
    bias : float or None
        The release's bias in the statistic's units (None or 0: the noise alone).
    metric : str
        ``"rmse"``, ``"relative"`` (the bias over |truth|) or ``"tv"`` (no bias model).
    truth : numpy.ndarray, optional
        The truth, for the relative error's scale.

    Returns
    -------
    numpy.ndarray
    """
    if not bias or metric == "tv":
        return np.asarray(noise, dtype=float)
    if metric == "relative":
        scale = float(np.abs(truth).mean()) if truth is not None else 0.0
        bias = bias / scale if scale else math.inf
    return np.hypot(noise, bias)


# ------------------------------------------------------------------------ clamping


def _percent(fraction: float) -> str:
    """84%, 4.3%, 0.05%: two significant figures at most, none wasted."""
    pct = 100.0 * fraction
    if pct >= 10:
        return f"{pct:.0f}%"
    return f"{pct:.2g}%"


def _fill_value(s: Choices) -> float | None:
    """The value a release sends for a missing row (clamped), or None where it drops it."""
    if s.trust_model == "central":
        c = s.spec().impute_value()
    elif s.trust_model in _PLANNED or s.trust_model == "local":
        c = (float(s.bounds[0]) + float(s.bounds[1])) / 2.0  # the engines' encoding
    else:
        c = None
    return None if c is None else float(np.clip(c, *s.bounds))


@_memoized
def bias_parts(s: Choices, values: np.ndarray) -> dict | None:
    """The release's bias split into its causes, measured on the data (analyst only).

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray

    Returns
    -------
    dict or None
        ``bias`` (:func:`analyst_bias`), ``clamping_bias`` (the clamped present values'
        statistic minus the present values'), ``missing_bias`` (the rest: what sending
        the missing rows as ``missing_value`` moves the statistic by; 0 where they are
        dropped), ``missing_fraction`` (of all rows), ``missing_value`` (the value sent
        for a missing row, clamped; None where dropped) and ``cause`` (``"clamping"`` or
        ``"missing"``, the larger part). None where :func:`analyst_bias` is.
    """
    total = analyst_bias(s, values)
    if total is None or s.bounds is None:
        return None
    x = np.asarray(values, dtype=np.float64)
    present = x[np.isfinite(x)]
    fill = _fill_value(s)
    truth = _present_statistic(s, present)
    clamping = _present_statistic(s, np.clip(present, *s.bounds)) - truth
    # The rest is the filling's: the two add up to the whole bias by construction.
    missing = float(total) - clamping if fill is not None else 0.0
    if fill is None:
        clamping = float(total)
    return {"bias": float(total), "clamping_bias": float(clamping),
            "missing_bias": float(missing),
            "missing_fraction": (x.size - present.size) / x.size if x.size else 0.0,
            "missing_value": fill,
            "cause": "missing" if abs(missing) > abs(clamping) else "clamping"}


def clamping_report(s: Choices, values: np.ndarray, epsilons: np.ndarray | None = None,
                    noise: np.ndarray | None = None) -> dict | None:
    """How much clamping to the bounds and filling missing values move the release.

    Analyst only.

    Parameters
    ----------
    s : Choices
        The analyst's choices (a sum, mean or variance with declared bounds).
    values : numpy.ndarray
    epsilons, noise : numpy.ndarray, optional
        The release's noise (in the statistic's units, RMSE) at each ε: where the bias is
        material. Without them only the fraction outside decides.

    Returns
    -------
    dict or None
        ``fraction_outside``, ``bounds``, ``bias``, ``warning`` (the sentence while the
        values outside are more than 5% or the bias is at least a tenth of the noise at
        ε = 1; else None), ``material_from_epsilon``, ``query``, ``trust_model`` and the
        split of :func:`bias_parts` (``clamping_bias``, ``missing_bias``,
        ``missing_fraction``, ``missing_value``, ``cause``); None when no present value
        lies outside the bounds and no missing value is filled in, or the query has no
        bias model.
    """
    parts = bias_parts(s, values)
    if parts is None:
        return None
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    lo, hi = (float(b) for b in s.bounds)
    outside = int(np.count_nonzero((x < lo) | (x > hi)))
    filled = parts["missing_value"] is not None and parts["missing_fraction"] > 0
    if not outside and not filled:
        return None
    bias = parts["bias"]
    out = {"fraction_outside": outside / x.size if x.size else 0.0, "bounds": (lo, hi),
           **parts, "material_from_epsilon": None, "warning": None, "query": s.query,
           "trust_model": s.trust_model}
    if epsilons is not None and noise is not None:
        ok = np.isfinite(noise)
        material = ok & (abs(bias) >= MATERIAL_SHARE * np.where(ok, noise, np.inf))
        if material.any():
            out["material_from_epsilon"] = float(np.asarray(epsilons)[material].min())
    out["warning"] = clamping_warning(out, WARNING_EPSILON)
    return out


def _number(x: float) -> str:
    """50,000; 2; 0.0375: thousands separated, four significant figures at most."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def _signed(x: float) -> str:
    """+2,816; -0.0375: a bias, three significant figures below a thousand."""
    text = f"{abs(x):,.0f}" if abs(x) >= 1000 else f"{abs(x):.3g}"
    return ("+" if x >= 0 else "-") + text


#: What to do about missing values, by who fills them in.
_MISSING_ADVICE = {
    "central": "drop them or impute a better value",
    "protocol": "the price of hiding who is missing",
    None: "central can drop them or impute a better value; protocols that send every row "
          "pay this to hide who is missing",
}


def _missing_sentence(clamping: dict) -> str:
    query = clamping.get("query", "statistic")
    tm = clamping.get("trust_model")
    value = clamping["missing_value"]
    lo, hi = clamping["bounds"]
    middle = math.isclose(value, (lo + hi) / 2.0, rel_tol=1e-12, abs_tol=1e-12)
    how = (f"sent as the middle of the bounds ({_number(value)})" if middle else
           f"imputed as {_number(value)}")
    if tm == "central" and middle:
        how = f"imputed as the middle of the bounds ({_number(value)})"
    advice = _MISSING_ADVICE["central" if tm == "central" else
                             "protocol" if tm is not None else None]
    return (f"{_percent(clamping['missing_fraction'])} of values are missing and {how}: "
            f"they bias the {query} by {_signed(clamping['missing_bias'])}; {advice}")


def clamping_warning(clamping: dict | None, epsilon: float) -> str | None:
    """The bias warning at ``epsilon``, or None while the bias is immaterial there.

    Parameters
    ----------
    clamping : dict or None
        :attr:`UtilityResult.clamping` (:func:`clamping_report`).
    epsilon : float

    Returns
    -------
    str or None
        The sentence for the cause that dominates the bias: clamping, e.g. "84% of values
        are outside 18–30: the mean is biased; widen the bounds" (also whenever more than
        5% of the values lie outside), or the missing values, e.g. "6.2% of values are
        missing and sent as the middle of the bounds (50,000): they bias the mean by
        +2,816; …" (their part of the bias) — when the bias is at least a tenth of the
        noise at ``epsilon``.
    """
    if not clamping:
        return None
    start = clamping.get("material_from_epsilon")
    material = start is not None and epsilon >= start
    fraction = clamping["fraction_outside"]
    if clamping.get("cause") == "missing" and material:
        return _missing_sentence(clamping)
    if not fraction or (fraction <= MATERIAL_FRACTION and not material):
        return None
    lo, hi = clamping["bounds"]
    return (f"{_percent(fraction)} of values are outside {lo:g}–{hi:g}: the "
            f"{clamping.get('query', 'statistic')} is biased; widen the bounds")
