"""A central analysis on a dataset of files, with its sums computed on Dask.

:func:`run_on_files` is the one entry: it checks that the analysis is one the partitioned
engine answers, starts (or connects to) the cluster, sums the files where they are, closes
what it started, and draws the noise once here, from the source it is given (the OS
CSPRNG for a release). It returns the same :class:`~dpstudio.analysis.AnalysisResult` as
:func:`dpstudio.analysis.run` and what the manifest says of the execution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dpstudio.analysis import AnalysisResult, AnalysisSpec
from dpstudio.analysis.capabilities import capability, partitioned
from dpstudio.data.folders import FileDataset, FileEntry
from dpstudio.engine.queries.partial import PARTIAL_QUERIES, Partial, run_partials
from dpstudio.engine.rng import SimulationSource, Source, require_secure
from dpstudio.execution.engines import ExecutionError, dask_cluster
from dpstudio.execution.partitions import sum_files

__all__ = ["FilesRun", "FilesSums", "dask_refusal", "reader_of", "result_from_sums",
           "run_on_files", "sum_on_files"]


@dataclass
class FilesRun:
    """What :func:`run_on_files` gives: the result, the manifest's ``execution`` fields,
    and each file's fingerprint entry (when asked for)."""

    result: AnalysisResult
    execution: dict[str, Any]
    files: list[FileEntry] = field(default_factory=list)
    total: Partial | None = None


def dask_refusal(analysis: AnalysisSpec) -> str | None:
    """Why the Dask engine cannot run ``analysis`` (one sentence), or None."""
    if partitioned(analysis):
        return None
    if analysis.is_model or not capability(analysis.kind).partitioned:
        return (f"the dask engine runs central-model {', '.join(PARTIAL_QUERIES)} for now; "
                f"use --engine pandas for this {analysis.trust_model}-model analysis")
    return (f"the dask engine runs {', '.join(PARTIAL_QUERIES)} for now, not a "
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
    if refused is not None:
        raise ExecutionError(refused.replace("the dask engine", "a dataset of files")
                             if engine != "dask" else refused)
    spec, reader = analysis.query, reader_of(analysis, declared)
    if engine != "dask":
        total, entries = sum_files(ds, spec.column, reader, spec, header=header, seed=seed,
                                   fingerprint=fingerprint, state=state)
        return FilesSums(total, {"engine": "pandas", "partitions": len(ds.files)}, entries)
    with dask_cluster(scheduler, processes=processes) as cluster:
        total, entries = sum_files(ds, spec.column, reader, spec, client=cluster.client,
                                   header=header, seed=seed, fingerprint=fingerprint,
                                   state=state)
        execution = cluster.describe() | {"partitions": len(ds.files)}
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
    """Run a central count, sum, mean, variance or histogram over a dataset's files on Dask.

    ``seed`` (a simulation, with a :class:`~dpstudio.engine.rng.SimulationSource`) seeds
    each file's rounding; a release gives none and every task draws from the OS CSPRNG.
    """
    refused = dask_refusal(analysis)
    if refused is not None:
        raise ExecutionError(refused)
    if not isinstance(source, SimulationSource):
        require_secure(source)
        seed = None  # a release never ships a seed to a worker
    sums = sum_on_files(analysis, ds, scheduler=scheduler, declared=declared, header=header,
                        seed=seed, fingerprint=fingerprint, state=state, processes=processes)
    # The noise, once, on the client, after the cluster is closed: nothing noisy ever
    # reached a worker, and a cancelled or failed sum drew none.
    result = result_from_sums(analysis, sums.total, source, notes)
    return FilesRun(result, sums.execution, sums.files, sums.total)
