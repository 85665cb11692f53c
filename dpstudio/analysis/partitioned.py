"""How each trust model's analysis runs where the data is: its plan and its finish.

The execution layer (:mod:`dpstudio.execution`) reads files and adds exact integers; it
does not know trust models. :func:`partition_protocol` tells it which kind of aggregate a
partition returns and how the client turns their total into the same
:class:`~dpstudio.analysis.AnalysisResult` as :func:`dpstudio.analysis.run`:

``"sums"``
    The central model: clamped, snapped bounded sums (the engine's ``Partial``); the noise
    is drawn once on the client (:func:`~dpstudio.engine.queries.partial.run_partials`).
``"reports"``
    A local randomizer over each partition's rows; the tallies its estimator needs
    (:mod:`dpstudio.engine.local.partial`).
``"messages"``
    A shuffle or secure-aggregation sum: the sum of each partition's messages, planned for
    the number of users, counted first (:mod:`dpstudio.engine.shuffle.partial`,
    :mod:`dpstudio.engine.distributed.partial`).

A trust model that runs on partitions is added here (and in the engine), nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dpstudio.analysis.capabilities import capability
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.result import AnalysisResult
from dpstudio.engine.errors import QueryError
from dpstudio.engine.rng import Source

__all__ = ["KINDS", "PartitionProtocol", "partition_kind", "partition_protocol"]

KINDS = ("sums", "reports", "messages")
_KIND_OF = {"central": "sums", "local": "reports", "shuffle": "messages",
            "distributed": "messages"}


def partition_kind(analysis: AnalysisSpec) -> str:
    """``"sums"``, ``"reports"`` or ``"messages"``: what a partition of ``analysis``
    returns (see the module's docstring).

    Parameters
    ----------
    analysis : AnalysisSpec
        A resolved analysis that runs on partitions
        (:func:`~dpstudio.analysis.capabilities.partitioned`).

    Returns
    -------
    str
    """
    return _KIND_OF[analysis.trust_model]


@dataclass
class PartitionProtocol:
    """What the execution layer needs to run a non-central analysis on partitions.

    Attributes
    ----------
    kind : str
        ``"reports"`` or ``"messages"``.
    plan : object or None
        ``"reports"``: the local plan every partition randomizes with (its public hash
        family drawn once, here).
    planner : callable or None
        ``"messages"``: ``planner(n)``, the protocol's plan for n users.
    finish : callable
        ``finish(total, plan, source) -> AnalysisResult``: the estimator or analyzer,
        once, on the client.
    """

    kind: str
    plan: Any
    planner: Callable[[int], Any] | None
    finish: Callable[[Any, Any, Source], AnalysisResult]


def partition_protocol(analysis: AnalysisSpec, reader: str, source: Source,
                       notes: Sequence[str] = ()) -> PartitionProtocol:
    """The plan and the finish of a local, shuffle or secure-aggregation analysis on
    partitions; refused in one sentence before any cluster starts.

    Parameters
    ----------
    analysis : AnalysisSpec
        A resolved non-central analysis that runs on partitions.
    reader : str
        How the column is read (``"numeric"``, ``"category"`` or ``"yes_no"``).
    source : Source
        The client's source (the local plan's public hash family; the finish's noise).
    notes : sequence of str
        Notes shown before the engine's own.

    Returns
    -------
    PartitionProtocol

    Raises
    ------
    QueryError, ParameterError
        For a parameter, domain or undeclared bound the protocol cannot take.
    """
    q = analysis.query
    kind = partition_kind(analysis)
    if kind == "reports":
        from dpstudio.engine.local.partial import PARTITION_NOTE, estimate_local, plan_local

        plan = plan_local(q.mechanism, q.mechanism_params(), query=q.query,
                          categories=q.categories,
                          bounds=q.bounds if q.query == "mean" else None,
                          boolean=reader == "yes_no", source=source)

        def finish_local(total: Any, plan: Any, src: Source) -> AnalysisResult:
            result = estimate_local(total, plan, src, postprocess=analysis.postprocess,
                                    confidence=q.confidence, notes=[PARTITION_NOTE])
            fields = result.to_dict() | {"missing_count": result.missing}
            fields["column"] = q.column
            return _result(analysis, result, fields, src, notes)

        return PartitionProtocol(kind, plan, None, finish_local)
    if q.bounds is None:
        raise QueryError(f"a {capability(analysis.trust_model).title} sum needs declared "
                         "bounds (e.g. --bounds 0,100)")
    kwargs = dict(q.params, confidence=q.confidence)
    if analysis.trust_model == "shuffle":
        from dpstudio.engine.shuffle.partial import finish_shuffle as finisher
        from dpstudio.engine.shuffle.partial import plan_shuffle_partial

        def planner(n: int) -> Any:
            return plan_shuffle_partial(n, q.bounds, q.mechanism, q.epsilon, q.delta,
                                        q.query, **kwargs)
    else:
        from dpstudio.engine.distributed.partial import finish_secure as finisher
        from dpstudio.engine.distributed.partial import plan_secure_partial

        def planner(n: int) -> Any:
            return plan_secure_partial(n, q.bounds, q.mechanism, q.epsilon, q.delta,
                                       analysis.dropouts, q.query, **kwargs)

    def finish_messages(total: Any, plan: Any, src: Source) -> AnalysisResult:
        result = finisher(total, plan, src)
        fields = result.to_dict()
        fields.update(trust_model=analysis.trust_model, column=q.column)
        return _result(analysis, result, fields, src, notes)

    return PartitionProtocol(kind, None, planner, finish_messages)


def _result(analysis: AnalysisSpec, engine_result: Any, fields: dict[str, Any],
            source: Source, notes: Sequence[str]) -> AnalysisResult:
    analyst = {"clamped": fields.pop("clamped", 0), "missing": fields.pop("missing_count")}
    fields["notes"] = list(notes) + list(fields.get("notes", []))
    return AnalysisResult(analysis, engine_result, fields, analyst, source_label=source.label)
