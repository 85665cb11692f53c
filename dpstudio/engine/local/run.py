"""Run a local protocol on one column: :func:`run_local` → :class:`LocalResult`.

The column's owner plays both sides: every value is randomized as its user's device would
(client), then estimated from the reports alone (server). The result carries the reports
(``LocalResult.records()`` are the collector's columns, for ``--export-records``) and, for
comparison, the standard error of the central model's Laplace release at the same ε.
"""

from __future__ import annotations

from typing import Any

from dpstudio.engine.local.collect import (  # noqa: F401 - re-exported (partial.py)
    Collected,
    _build_histogram,
    _labels,
    _query_for,
    collect_reports,
    histogram_note,
    mean_note,
)
from dpstudio.engine.local.estimate import (
    _heavy_hitters,
    _histogram,
    _mean,
    histogram_result,
    interval_z,
    mean_result,
    result_fields,
)
from dpstudio.engine.local.result import LocalResult
from dpstudio.engine.rng import Source
from dpstudio.jobs import State, check, scaled

__all__ = ["Collected", "LocalResult", "collect_reports", "histogram_note", "histogram_result",
           "mean_note", "mean_result", "result_fields", "run_local"]


def run_local(values, info_name: str, params: dict[str, Any] | None = None, *,
              query: str | None = None, categories=None, bounds=None, source: Source,
              postprocess: str = "none", confidence: float = 0.95,
              state: State | None = None) -> LocalResult:
    """Run the local protocol ``info_name`` on a column and estimate from its reports.

    Every row sends one report (:mod:`~dpstudio.engine.local.respond`): ``n`` is the
    number of rows and :meth:`LocalResult.records` has one report per row, whatever the
    values, so neither reveals how many values are missing or undeclared.

    Parameters
    ----------
    values : array_like
        The column (labels for histograms, numbers for means, words for heavy
        hitters). Missing values (None/NaN) send the "other or missing" category (a fair
        coin's answer for ``rr``), the middle of the bounds (means) or the empty word.
    info_name : str
        A registry entry of kind ``"randomizer"`` (``rr``, ``krr``, ``sue``,
        ``oue``, ``olh``, ``hadamard``, ``cms``, ``sfp``, ``local_laplace``,
        ``local_gaussian``, ``duchi``).
    params : dict, optional
        The entry's parameters (``epsilon``, …), validated by the registry.
    query : str, optional
        ``"histogram"``, ``"mean"`` or ``"heavy_hitters"``; by default the entry's
        (``cms`` without categories, and ``sfp``: heavy hitters).
    categories : sequence of str, optional
        The declared domain of a histogram (required, except for ``rr`` on
        0/1 or booleans).
    bounds : tuple of float, optional
        ``(lower, upper)`` for means (required).
    source : Source
        Random source (:class:`~dpstudio.engine.rng.SecureSource` for a release).
        The count-mean sketch's public hash family is drawn from it for each release.
    postprocess : str
        ``"none"``, ``"clip"`` or ``"simplex"`` for histograms (see
        :func:`~dpstudio.engine.local.base.postprocess_counts`, over all cells including
        the "other or missing" one, to a total of ``n``); ``"clip"`` also clamps a mean
        into the bounds.
    confidence : float
        Level of the normal confidence intervals, in (0, 1).
    state : State, optional
        The job's state (:mod:`~dpstudio.jobs`): cancellation is
        checked before the reports are drawn, between the client and the server side,
        and (heavy hitters) once per hash function of the fragment sketch; progress
        reaches 1 when the estimate is done. Randomizing is one vectorized draw over all
        rows, so a cancellation takes effect after it.

    Returns
    -------
    LocalResult
        The estimate, its standard errors and intervals, and the reports.

    Raises
    ------
    QueryError, ParameterError
        For a bad entry, query, declared domain, parameter or column.
    Cancelled
        If ``state`` is cancelled.
    """
    z = interval_z(postprocess, confidence)
    check(state)
    got = collect_reports(values, info_name, params, query=query, categories=categories,
                          bounds=bounds, source=source)
    if state is not None:
        state.progress(0.5, "reports collected")
    check(state)
    common = result_fields(got, source, postprocess, confidence)
    estimate = {"mean": _mean, "heavy_hitters": _heavy_hitters,
                "histogram": _histogram}[got.query]
    out = estimate(got, z, postprocess, common, scaled(state, 0.5, 1.0))
    if state is not None:
        state.progress(1.0, "estimated")
    return out

