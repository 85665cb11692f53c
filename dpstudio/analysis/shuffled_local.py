"""A histogram in the shuffle model: a local frequency oracle shuffled (K-RR and its kin).

The dispatch (:mod:`dpstudio.analysis.dispatch`) sends a shuffle-model histogram here:
:func:`run_shuffled_histogram` runs the engine's
:func:`~dpstudio.engine.shuffle.shuffled_local.run_shuffled_local` (each user at the ε₀
that FMT21 amplification allows for the central (ε, δ)), :func:`plan_shuffled_histogram`
its data-free figures, and :func:`resolve_shuffled_histogram` completes a release's query
from the declared schema (categories, never the data).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.result import AnalysisResult
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import Source

__all__ = ["is_shuffled_histogram", "plan_shuffled_histogram", "resolve_shuffled_histogram",
           "run_shuffled_histogram", "shuffled_histogram_preview"]


def is_shuffled_histogram(trust_model: str, query: str) -> bool:
    """Whether an analysis is a local frequency oracle shuffled (a shuffle-model histogram).

    Parameters
    ----------
    trust_model, query : str
        The analysis's trust model and query.

    Returns
    -------
    bool
    """
    return trust_model == "shuffle" and query == "histogram"


def _params(q: QuerySpec) -> dict[str, Any]:
    return {k: v for k, v in q.params.items() if k not in ("epsilon", "delta")}


def run_shuffled_histogram(a: AnalysisSpec, values: Any, source: Source, notes: list[str],
                           state: Any = None) -> AnalysisResult:
    """Run a shuffle-model histogram (the dispatch's runner).

    Parameters
    ----------
    a : AnalysisSpec
        A resolved shuffle-model histogram (declared categories; central ε and δ > 0).
    values : array_like
        The column's labels.
    source : Source
        SecureSource for a release.
    notes : list of str
        Notes from resolution, shown first.
    state : State, optional
        Progress and cancel.

    Returns
    -------
    AnalysisResult

    Raises
    ------
    EngineError
        For what the engine refuses, before any noise is drawn.
    """
    from dpstudio.engine.shuffle.shuffled_local import run_shuffled_local

    q = a.query
    result = run_shuffled_local(values, q.mechanism, q.epsilon, q.delta,
                                categories=q.categories, source=source, params=_params(q),
                                postprocess=a.postprocess, confidence=q.confidence,
                                state=state)
    fields = result.to_dict()
    analyst = {"clamped": fields.pop("clamped", 0),
               "missing": fields.pop("missing_count", 0)}
    fields.update(column=q.column, notes=notes + list(fields.get("notes", [])))
    return AnalysisResult(a, result, fields, analyst, source_label=source.label)


def plan_shuffled_histogram(a: AnalysisSpec, n: int) -> Any:
    """The data-free figures of a shuffle-model histogram for n users.

    Parameters
    ----------
    a : AnalysisSpec
        The analysis (its declared categories give the cells, "other or missing" added).
    n : int
        Users.

    Returns
    -------
    ShuffledLocalResult
        ``estimate`` None; ``stderr`` of a count held by no one; ε, δ and ε₀.

    Raises
    ------
    QueryError
        Without declared categories.
    EngineError
        For what the engine refuses.
    """
    from dpstudio.engine.shuffle.shuffled_local import plan_shuffled_local

    q = a.query
    if not q.categories:
        raise QueryError("a shuffled histogram needs declared categories")
    return plan_shuffled_local(n, q.mechanism, q.epsilon, q.delta,
                               cells=len(q.categories) + 1, params=_params(q),
                               confidence=q.confidence)


def resolve_shuffled_histogram(spec: QuerySpec, declared: Any) -> tuple[QuerySpec, list[str]]:
    """A shuffle-model histogram completed from the declared schema.

    Parameters
    ----------
    spec : QuerySpec
        The query as described (its mechanism a local frequency oracle).
    declared : schema-like or None
        The dataset's declared schema (``get(column)``).

    Returns
    -------
    (QuerySpec, list of str)
        The spec with its categories filled (relation ``replace``) and notes.

    Raises
    ------
    QueryError
        For a randomizer that does not run shuffled, bins, missing categories, another
        relation or a bad confidence.
    ParameterError
        For a bad ε, δ or parameter.
    """
    from dpstudio.engine.calibration import validate_delta, validate_epsilon
    from dpstudio.engine.registry import REGISTRY
    from dpstudio.engine.shuffle.shuffled_local import SHUFFLED_RANDOMIZERS

    if spec.mechanism not in SHUFFLED_RANDOMIZERS:
        raise QueryError(f"{spec.mechanism} does not run shuffled (a shuffle-model histogram "
                         f"takes {', '.join(SHUFFLED_RANDOMIZERS)})")
    info = REGISTRY.get(spec.mechanism)
    if spec.relation != "replace":
        raise QueryError(f"a shuffled {info.label} release bounds changing one person's "
                         "value: set relation = \"replace\" (the number of users is public)")
    if not 0.0 < float(spec.confidence) < 1.0:
        raise QueryError(f"confidence must lie strictly between 0 and 1, got {spec.confidence}")
    if spec.bins is not None:
        raise QueryError("a shuffled histogram releases declared categories, not bins")
    validate_epsilon(spec.epsilon)
    validate_delta(spec.delta, required=True)
    notes: list[str] = []
    categories = spec.categories
    column = declared.get(spec.column) if declared is not None and spec.column else None
    if categories is None and column is not None and column.categories:
        categories = tuple(column.categories)
        notes.append("categories as declared in the dataset's schema")
    if categories is None:
        raise QueryError("a shuffled histogram needs declared categories: the analyzer "
                         "cannot learn the domain from data it never sees")
    info.resolve(_params(spec) | {"epsilon": spec.epsilon})  # a bad parameter, before data
    return replace(spec, categories=tuple(categories), bounds=None, bins=None,
                   quantile=None), notes


def shuffled_histogram_preview(s: Any, values: Any, source: Source, seed: int) -> Any:
    """One simulated shuffle-model histogram at the analyst's choices, with each user's
    ε₀ beside the central ε (the preview's first note).

    Parameters
    ----------
    s : Choices
        A shuffle-model histogram of a categorical or yes/no column.
    values : numpy.ndarray
        The column's values.
    source : Source
        A seeded SimulationSource (a preview is never a release).
    seed : int
        Its seed, shown with the preview.

    Returns
    -------
    Preview
        Counts per cell (declared categories, then "other or missing") with their
        intervals and the true counts (analyst only).

    Raises
    ------
    EngineError
        For choices the engine refuses.
    """
    import numpy as np

    from dpstudio.analysis.choices import cell_labels, local_column, local_inputs
    from dpstudio.analysis.curves import Preview

    spec = QuerySpec("histogram", s.mechanism, float(s.epsilon), delta=float(s.delta),
                     categories=tuple(cell_labels(s)), relation="replace",
                     confidence=s.confidence, params=dict(s.params), column=s.column)
    res = run_shuffled_histogram(AnalysisSpec("shuffle", spec), local_column(s, values),
                                 source, []).engine
    labels = list(res.unbiased)
    value = np.array([res.unbiased[c] for c in labels])
    low = np.array([res.ci_low[c] for c in labels])
    high = np.array([res.ci_high[c] for c in labels])
    notes = [f"each user's local ε₀ = {res.epsilon_local:.4g} beside the central ε = "
             f"{res.epsilon:.4g} after shuffling (δ = {res.delta:.3g}): each of the "
             f"{res.n:,} people randomizes their own category; the analyzer sees only the "
             "shuffled reports' counts"] + [n for n in res.notes
                                            if not n.startswith("each user's local")]
    return Preview("histogram", s.mechanism, "shuffle", res.epsilon, res.delta, labels, value,
                   # the truth of every cell, "other or missing" too (a local histogram's)
                   low, high, local_inputs(s, values)[0], s.confidence, res.source, seed,
                   clamped=res.clamped, notes=notes, n=res.n)
