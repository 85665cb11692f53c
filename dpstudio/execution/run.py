"""An analysis on a dataset of files, with its aggregates computed on Dask.

:func:`run_on_files` is the one entry: it checks that the analysis is one the partitioned
engine answers, starts (or connects to) the cluster, has each file aggregated where it is
(the central model's exact sums, a local randomizer's tallies, a shuffle or
secure-aggregation protocol's message sums: :mod:`dpstudio.analysis.partitioned` says
which), closes what it started, and draws the noise once here, from the source it is
given (the OS CSPRNG for a release). It returns the same
:class:`~dpstudio.analysis.AnalysisResult` as :func:`dpstudio.analysis.run` and what the
manifest says of the execution.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpstudio.analysis import AnalysisResult, AnalysisSpec
from dpstudio.analysis.capabilities import capability, partitioned
from dpstudio.analysis.partitioned import partition_kind, partition_protocol
from dpstudio.data.folders import FileDataset, FileEntry
from dpstudio.engine.queries.partial import PARTIAL_QUERIES, Partial, run_partials
from dpstudio.engine.rng import SecureSource, SimulationSource, Source, require_secure
from dpstudio.execution.engines import ExecutionError, dask_cluster
from dpstudio.execution.partitions import pieces, sum_files

__all__ = ["FilesRun", "FilesSums", "FilesTallies", "dask_refusal", "reader_of",
           "result_from_sums", "run_on_files", "sum_on_files", "tally_on_files"]


@dataclass
class FilesRun:
    """What :func:`run_on_files` gives: the result, the manifest's ``execution`` fields,
    and each file's fingerprint entry (when asked for)."""

    result: AnalysisResult
    execution: dict[str, Any]
    files: list[FileEntry] = field(default_factory=list)
    total: Any = None  # Partial (central), LocalPartial (local) or SumPartial


def dask_refusal(analysis: AnalysisSpec) -> str | None:
    """Why the Dask engine cannot run ``analysis`` (one sentence), or None."""
    if partitioned(analysis):
        return None
    if analysis.query.query == "heavy_hitters":
        return ("the dask engine does not run heavy hitters: the sequence-fragment puzzle "
                "reads every report, not a sum of them; use --engine pandas")
    row = capability(analysis.kind)
    if analysis.is_model or not row.partitioned:
        return (f"the dask engine runs central-model {', '.join(PARTIAL_QUERIES)} for now; "
                f"use --engine pandas for this {analysis.trust_model}-model analysis")
    return (f"the dask engine runs {row.title} {', '.join(row.partitioned)} for now, not a "
            f"{analysis.query.query}; use --engine pandas")


def reader_of(analysis: AnalysisSpec, declared: Any = None) -> str:
    """How the column is read: ``numeric``, ``category`` or ``yes_no`` (as the in-process
    path reads it for this analysis and declaration)."""
    if not analysis.reads_labels:
        return "numeric"
    kind = getattr(getattr(declared, "type", None), "value", None)
    return "yes_no" if kind == "boolean" else "category"


@dataclass
class FilesSums:
    """A dataset's exact integer aggregates and where they were computed (no noise yet)."""

    total: Partial
    execution: dict[str, Any]
    files: list[FileEntry] = field(default_factory=list)


def sum_on_files(analysis: AnalysisSpec, ds: FileDataset, *, engine: str = "dask",
                 scheduler: str | None = None, declared: Any = None, header: bool = True,
                 seed: int | None = None, fingerprint: bool = False, state: Any = None,
                 processes: bool | None = None) -> FilesSums:
    """The exact integer aggregates of a central count, sum, mean, variance or histogram
    over a dataset's files: one task per file on Dask (``engine="dask"``), or file by file
    in this process (``"pandas"``: a folder that fits, read one file at a time). No noise
    is drawn; ``fingerprint`` hashes each file from the bytes it parses (a release).
    """
    refused = dask_refusal(analysis)
    if refused is None and partition_kind(analysis) != "sums":
        # Another trust model's aggregate is no Partial: it runs through run_on_files.
        refused = (f"the exact sums of a folder or of Dask are central-model "
                   f"{', '.join(PARTIAL_QUERIES)} for now, not a {analysis.trust_model}-model "
                   f"{analysis.query.query}; run it from one file with the pandas engine")
    if refused is not None:
        raise ExecutionError(refused.replace("the dask engine", "a dataset of files")
                             if engine != "dask" else refused)
    spec, reader = analysis.query, reader_of(analysis, declared)
    # The tasks actually run: a big Parquet file is several row-group ranges.
    tasks = len(pieces(ds, spec.column, reader, fingerprint))
    if engine != "dask":
        total, entries = sum_files(ds, spec.column, reader, spec, header=header, seed=seed,
                                   fingerprint=fingerprint, state=state)
        return FilesSums(total, {"engine": "pandas", "partitions": tasks}, entries)
    with dask_cluster(scheduler, processes=processes, state=state) as cluster:
        total, entries = sum_files(ds, spec.column, reader, spec, client=cluster.client,
                                   header=header, seed=seed, fingerprint=fingerprint,
                                   state=state)
        execution = cluster.describe() | {"partitions": tasks}
    return FilesSums(total, execution, entries)


def result_from_sums(analysis: AnalysisSpec, total: Partial, source: Source,
                     notes: Sequence[str] = ()) -> AnalysisResult:
    """The analysis's result from its added aggregates: the noise drawn once, here, from
    ``source`` (the OS CSPRNG for a release), as :func:`dpstudio.analysis.run` gives it."""
    release = run_partials(total, analysis.query, source)
    release.notes = list(notes) + list(release.notes)
    fields = release.to_dict()
    analyst = {"clamped": fields.pop("clamped", 0), "missing": fields.pop("missing_count"),
               "non_finite": fields.pop("non_finite_count")}
    fields["trust_model"] = "central"
    return AnalysisResult(analysis, release, fields, analyst, source_label=source.label)


def run_on_files(analysis: AnalysisSpec, ds: FileDataset, source: Source, *,
                 scheduler: str | None = None, declared: Any = None, header: bool = True,
                 seed: int | None = None, fingerprint: bool = False, state: Any = None,
                 processes: bool | None = None, notes: Sequence[str] = ()) -> FilesRun:
    """Run a central count, sum, mean, variance or histogram — or a local histogram or
    mean, a shuffle or secure-aggregation sum or mean — over a dataset's files on Dask.

    ``seed`` (a simulation, with a :class:`~dpstudio.engine.rng.SimulationSource`) seeds
    each file's rounding; a release gives none and every task draws from the OS CSPRNG.
    """
    refused = dask_refusal(analysis)
    if refused is not None:
        raise ExecutionError(refused)
    if not isinstance(source, SimulationSource):
        require_secure(source)
        seed = None  # a release never ships a seed to a worker
    if partition_kind(analysis) != "sums":
        return _run_protocol(analysis, ds, source, scheduler=scheduler, declared=declared,
                             header=header, seed=seed, fingerprint=fingerprint, state=state,
                             processes=processes, notes=notes)
    sums = sum_on_files(analysis, ds, scheduler=scheduler, declared=declared, header=header,
                        seed=seed, fingerprint=fingerprint, state=state, processes=processes)
    # The noise, once, on the client, after the cluster is closed: nothing noisy ever
    # reached a worker, and a cancelled or failed sum drew none.
    result = result_from_sums(analysis, sums.total, source, notes)
    return FilesRun(result, sums.execution, sums.files, sums.total)


def _run_protocol(analysis: AnalysisSpec, ds: FileDataset, source: Source, *,
                  scheduler: str | None, declared: Any, header: bool, seed: int | None,
                  fingerprint: bool, state: Any, processes: bool | None,
                  notes: Sequence[str]) -> FilesRun:
    """A local histogram or mean, or a shuffle or secure-aggregation sum or mean, on Dask:
    each file's rows randomized where they are, only aggregates back, the estimator or
    analyzer once here (as :func:`dpstudio.analysis.run` gives it, without records)."""
    from dpstudio.execution.local_partitions import local_on_files, sum_protocol_on_files

    q = analysis.query
    reader = reader_of(analysis, declared)
    # Before the cluster starts: a bad parameter or domain is refused at once, and the
    # count-mean sketch's public hash family is drawn here, once, for every file.
    protocol = partition_protocol(analysis, reader, source, notes)
    with dask_cluster(scheduler, processes=processes, state=state) as cluster:
        if protocol.kind == "reports":
            plan = protocol.plan
            total, entries = local_on_files(ds, q.column, reader, plan,
                                            client=cluster.client, header=header, seed=seed,
                                            fingerprint=fingerprint, state=state)
        else:
            plan, total, entries = sum_protocol_on_files(
                ds, q.column, protocol.planner, client=cluster.client,
                header=header, seed=seed, dropouts=analysis.dropouts,
                fingerprint=fingerprint, state=state, source=source)
        execution = cluster.describe() | {"partitions": len(ds.files)}
    return FilesRun(protocol.finish(total, plan, source), execution, entries, total)


@dataclass
class FilesTallies:
    """A local randomizer's tallies over a dataset's files, not yet estimated: the added
    per-file aggregates of the reports (randomized where each file is), where they were
    computed, each file's fingerprint entry, and the estimator to run on them
    (``finish(total, plan, source)``, once, on the client)."""

    total: Any  # LocalPartial
    execution: dict[str, Any]
    files: list[FileEntry]
    plan: Any
    finish: Callable[[Any, Any, Source], AnalysisResult]


def tally_on_files(analysis: AnalysisSpec, ds: FileDataset, *, engine: str = "dask",
                   scheduler: str | None = None, declared: Any = None, header: bool = True,
                   fingerprint: bool = False, state: Any = None,
                   processes: bool | None = None, notes: Sequence[str] = ()) -> FilesTallies:
    """A release's local histogram or mean over a dataset's files, up to the estimator:
    every file's rows randomized where they are, each task from its own fresh OS CSPRNG
    (no seed is taken: this is a release's path), only the reports' integer aggregate
    back. On Dask (``engine="dask"``) or file by file in this process (``"pandas"``).

    The estimate is left to ``finish``: the randomized tallies wait with the caller (a
    release's charge step) and are never shown unless it runs it. ``state`` follows the
    files and may cancel (:class:`~dpstudio.jobs.Cancelled`, nothing estimated).
    """
    from dpstudio.execution.local_partitions import local_on_files

    refused = dask_refusal(analysis)
    if refused is None and partition_kind(analysis) != "reports":
        refused = (f"the tallies of a folder or of Dask are local-model histograms and means, "
                   f"not a {analysis.trust_model}-model {analysis.query.query}")
    if refused is not None:
        raise ExecutionError(refused.replace("the dask engine", "a dataset of files")
                             if engine != "dask" else refused)
    q = analysis.query
    reader = reader_of(analysis, declared)
    # The plan (the count-mean sketch's public hash family) is drawn here, once, before
    # any file is read: a bad parameter or domain is refused before the cluster starts.
    protocol = partition_protocol(analysis, reader, SecureSource(), notes)
    if engine != "dask":
        total, entries = local_on_files(ds, q.column, reader, protocol.plan, header=header,
                                        seed=None, fingerprint=fingerprint, state=state)
        return FilesTallies(total, {"engine": "pandas", "partitions": len(ds.files)},
                            entries, protocol.plan, protocol.finish)
    with dask_cluster(scheduler, processes=processes, state=state) as cluster:
        total, entries = local_on_files(ds, q.column, reader, protocol.plan,
                                        client=cluster.client, header=header, seed=None,
                                        fingerprint=fingerprint, state=state)
        execution = cluster.describe() | {"partitions": len(ds.files)}
    return FilesTallies(total, execution, entries, protocol.plan, protocol.finish)
