"""Run an analysis: the one place that turns an :class:`AnalysisSpec` into an engine call.

Each trust model (and models) has one runner below, over the engine's own calling
convention; every runner returns the same :class:`~dpstudio.analysis.result.AnalysisResult`.
Adding a trust model means adding its engine function and one runner here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.result import AnalysisResult
from dpstudio.engine.rng import SimulationSource, Source

__all__ = ["run", "runnable_trust_models"]


def run(analysis: AnalysisSpec, values: Any, source: Source, *,
        notes: Sequence[str] = ()) -> AnalysisResult:
    """Run one analysis on the column's values and return its result.

    Parameters
    ----------
    analysis : AnalysisSpec
        A resolved analysis (bounds and categories declared; see
        :func:`dpstudio.analysis.resolve`).
    values : array or model input
        The column's values as the data layer reads them (floats with NaN for missing,
        or labels with None); for a model, an object with ``columns`` (label and feature
        arrays, missing features already at the middle of their bounds) and ``imputed``.
    source : Source
        Where the noise comes from: :class:`~dpstudio.engine.rng.SecureSource` for a
        release, :class:`~dpstudio.engine.rng.SimulationSource` for a simulation (the
        result then says so).
    notes : sequence of str
        Notes from resolution, shown before the engine's own.

    Returns
    -------
    AnalysisResult

    Raises
    ------
    EngineError
        (QueryError, ParameterError, …) in one line, before any noise is drawn, for an
        analysis the engine cannot run.
    """
    runner = _RUNNERS.get(analysis.kind)
    if runner is None:
        from dpstudio.engine.errors import QueryError

        raise QueryError(f"no {analysis.trust_model}-model analysis of a "
                         f"{analysis.query.query} yet")
    return runner(analysis, values, source, list(notes))


def _split_analyst(fields: dict[str, Any]) -> dict[str, Any]:
    """Move the analyst-only counts (clamped, missing, of which ±inf) out of ``fields``."""
    extra = {"clamped": fields.pop("clamped", 0)}
    if "missing_count" in fields:
        extra["missing"] = fields.pop("missing_count")
    if "non_finite_count" in fields:
        extra["non_finite"] = fields.pop("non_finite_count")
    return extra


def _central(a: AnalysisSpec, values: np.ndarray, source: Source, notes: list[str]
             ) -> AnalysisResult:
    from dpstudio.engine.queries import release, run_query

    # A release insists on the OS CSPRNG; only a simulation may use a seeded generator.
    draw = run_query if isinstance(source, SimulationSource) else release
    result = draw(values, a.query, source)
    result.notes = notes + list(result.notes)
    fields = result.to_dict()
    analyst = _split_analyst(fields)
    fields["trust_model"] = "central"
    return AnalysisResult(a, result, fields, analyst, source_label=source.label)


def _local(a: AnalysisSpec, values: Any, source: Source, notes: list[str]) -> AnalysisResult:
    from dpstudio.engine.local import run_local

    q = a.query
    result = run_local(values, q.mechanism, q.mechanism_params(), query=q.query,
                       categories=q.categories,
                       bounds=q.bounds if q.query == "mean" else None, source=source,
                       postprocess=a.postprocess, confidence=q.confidence)
    # Every row sends a report, so n is the number of rows; how many were missing is the
    # analyst's alone.
    fields = result.to_dict() | {"missing_count": result.missing}
    analyst = _split_analyst(fields)
    fields["column"] = q.column
    fields["notes"] = notes + list(fields.get("notes", []))
    return AnalysisResult(a, result, fields, analyst, records=result.records,
                          source_label=source.label)


def _sum_protocol(run_fn: Callable[..., Any], **extra: Any
                  ) -> Callable[[AnalysisSpec, Any, Source, list[str]], AnalysisResult]:
    """A runner for a shuffle or secure-aggregation sum (or mean) protocol."""

    def runner(a: AnalysisSpec, values: Any, source: Source, notes: list[str]
               ) -> AnalysisResult:
        from dpstudio.engine.errors import QueryError

        q = a.query
        if q.bounds is None:
            from dpstudio.analysis.capabilities import capability

            raise QueryError(f"a {capability(a.trust_model).title} sum needs declared bounds "
                             "(e.g. --bounds 0,100)")
        kwargs = {k: getattr(a, v) for k, v in extra.items()}
        result = run_fn()(values, q.bounds, q.mechanism, q.epsilon, q.delta, source,
                          query=q.query, **kwargs, **dict(q.params, confidence=q.confidence))
        fields = result.to_dict()
        analyst = _split_analyst(fields)
        fields.update(trust_model=a.trust_model, column=q.column,
                      notes=notes + list(fields.get("notes", [])))
        return AnalysisResult(a, result, fields, analyst, source_label=source.label)

    return runner


def _shuffle_sum() -> Callable[..., Any]:
    from dpstudio.engine.shuffle import run_shuffle_sum

    return run_shuffle_sum


def _secure_sum() -> Callable[..., Any]:
    from dpstudio.engine.distributed import run_secure_sum

    return run_secure_sum


def _model(a: AnalysisSpec, model: Any, source: Source, notes: list[str]) -> AnalysisResult:
    """DP logistic regression: ``query.column`` is the label, ``features`` the features."""
    from dpstudio.engine.learning import release_logistic, simulate_logistic

    q = a.query
    lam = a.info.resolve(q.mechanism_params())["lambda"]
    fit = simulate_logistic if isinstance(source, SimulationSource) else release_logistic
    result = fit(model.columns, q.column, list(a.features or ()), dict(a.feature_bounds or {}),
                 q.epsilon, q.delta, lam, source)
    fields = result.to_dict()
    fields.update(trust_model="central", query=q.query, label=q.column, relation=q.relation,
                  source=source.label)
    fields["notes"] = notes or ["neighbours differ in one record (replace-one, n public); "
                                "missing feature values set to the middle of their declared "
                                "bounds"]
    analyst = {"imputed_feature_values": model.imputed, **result.utility}
    fields.pop("utility", None)
    return AnalysisResult(a, result, fields, analyst, source_label=source.label)


_RUNNERS: dict[str, Callable[[AnalysisSpec, Any, Source, list[str]], AnalysisResult]] = {
    "central": _central,
    "local": _local,
    "shuffle": _sum_protocol(_shuffle_sum),
    "distributed": _sum_protocol(_secure_sum, dropouts="dropouts"),
    "model": _model,
}


def runnable_trust_models() -> tuple[str, ...]:
    """Trust models an analysis can run under (a statistic), in the table's order."""
    from dpstudio.engine.trust_models import TRUST_MODELS

    return tuple(t for t in TRUST_MODELS if t in _RUNNERS)
