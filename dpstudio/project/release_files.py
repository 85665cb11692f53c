"""A release's sums computed where the data is: a folder (or glob) of files, or one file on
Dask. The helpers :meth:`~dpstudio.project.release.ReleaseTransaction._prepare` uses.

A folder is read once: every task parses a file's bytes and hashes those same bytes, so
the dataset's fingerprint (:func:`~dpstudio.data.folders.files_fingerprint`, kind
``files-sha256-v1``) names exactly the rows summed. Its identity in the ledger is that
fingerprint (with its row count and column names, so a folder that looks like a version of
a registered dataset is caught like a file is): reading every row into this process to
hash them as parsed would defeat the point of a folder. Nothing is drawn here: the exact
integers wait in the prepared release, and the noise is drawn once, in the charge
transaction, from the OS CSPRNG.

A local-model histogram or mean is randomized where the data is: each file's rows get
their reports from a fresh OS CSPRNG in the task that reads them, and only the reports'
integer tallies come back (:func:`~dpstudio.execution.run.tally_on_files`). The tallies
wait in the prepared release like the central sums; the estimator runs in the charge
transaction (nothing is left to draw there), so randomized tallies are never shown
unless charged. No report leaves its file, so such a release has no collector's records:
its manifest says so (``records_note``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpstudio.analysis import AnalysisSpec
from dpstudio.analysis.capabilities import capability, partitioned
from dpstudio.data.fingerprint import ContentFingerprint
from dpstudio.data.folders import FILES_ALGORITHM, FileDataset, is_multi_file
from dpstudio.engine.queries.partial import Partial
from dpstudio.project.errors import ProjectError

__all__ = ["NO_RECORDS", "content_of_files", "execution_of",
           "figures_from_partial", "files_refusal", "is_local_tallies", "one_file",
           "release_engine", "sum_where_data_is"]

#: What a local release computed where the data is says of the collector's records.
NO_RECORDS = ("no collector's records: each file's rows were randomized where they are "
              "and only the integer tallies of their reports left the file, so no "
              "individual report exists to export")


def release_engine(spec: Any, path: Path) -> tuple[str, bool]:
    """``(engine, multi)``: where the release's sums are computed (``pandas`` or ``dask``)
    and whether the dataset is a folder or glob.

    A spec's ``scheduler`` implies Dask; ``auto`` picks Dask for a folder larger than a
    share of memory (:func:`~dpstudio.execution.engines.choose_engine`) and pandas for one
    file (one file is one partition: nothing to spread).
    """
    from dpstudio.execution.engines import choose_engine, require_dask

    multi = is_multi_file(path)
    engine = "dask" if spec.scheduler else spec.engine
    if engine == "pandas" and spec.scheduler:
        raise ProjectError("the spec's scheduler names a Dask cluster: it goes with "
                           "engine = \"dask\" (or \"auto\")")
    if engine == "auto":
        if not multi:
            return "pandas", False
        from dpstudio.data.folders import open_files

        engine = choose_engine("auto", open_files(path).total_bytes)
    if engine == "dask":
        require_dask()
    return engine, multi


def one_file(path: Path) -> FileDataset:
    """One data file as a dataset of one partition (the Dask path on a single file)."""
    fmt = "parquet" if path.suffix.lower() in (".parquet", ".pq") else "csv"
    return FileDataset(str(path), (path,), fmt, (), {}, path.stat().st_size)


def content_of_files(ds: FileDataset, fingerprint: str, total: Partial) -> ContentFingerprint:
    """A folder's identity for the ledger: its files' fingerprint as the content digest
    (prefixed with its kind: never equal to a file's parsed-rows digest), its row count
    and its column names. No sketch and no column digests: those need every value here.
    """
    rows = total.n if is_local_tallies(total) else total.size  # every row, missing or not
    return ContentFingerprint(f"{FILES_ALGORITHM}:{fingerprint}", int(rows),
                              tuple(sorted(ds.columns)), ())


def is_local_tallies(total: Any) -> bool:
    """Whether a prepared release's aggregate is a local randomizer's tallies (a
    :class:`~dpstudio.engine.local.partial.LocalPartial`), not central exact sums."""
    from dpstudio.engine.local.partial import LocalPartial

    return isinstance(total, LocalPartial)


def figures_from_partial(spec: Any, total: Partial) -> Any:
    """The analyst's figures from a release's integer aggregates (no value reaches this
    process): rows, records used, missing and clamped; the raw and clamped statistic and
    the bias are not measured (they would need the values themselves)."""
    from dpstudio.export.report_analyst import AnalystFigures

    if is_local_tallies(total):  # every row reports (a missing one as the local fill)
        if spec.query == "mean" and spec.bounds is not None:
            return AnalystFigures(rows=total.n, n=total.n, missing=total.missing,
                                  outside=total.clamped,
                                  bounds=(float(spec.bounds[0]), float(spec.bounds[1])))
        return AnalystFigures(rows=total.n, n=total.n - total.missing,
                              missing=total.missing)
    if spec.bounds is None or spec.categories is not None:
        return AnalystFigures(rows=total.size, n=total.size - total.missing,
                              missing=total.missing)
    n = total.rows if spec.query != "histogram" else total.size - total.missing
    return AnalystFigures(rows=total.size, n=n, missing=total.missing, outside=total.clamped,
                          bounds=(float(spec.bounds[0]), float(spec.bounds[1])))


def files_refusal(analysis: AnalysisSpec) -> str | None:
    """Why a release on a folder or on Dask cannot be ``analysis`` (one sentence), or None.

    The project's own sentences: a trust model the project does not release is refused as
    on one file (:func:`~dpstudio.analysis.capabilities.release_refusal`), before asking
    where it could run; then what a folder releases is central sums and local tallies.
    """
    from dpstudio.analysis.capabilities import release_refusal
    from dpstudio.analysis.partitioned import partition_kind
    from dpstudio.engine.queries.partial import PARTIAL_QUERIES

    refused = release_refusal(analysis)
    if refused is not None:
        return refused
    q = analysis.query
    if not partitioned(analysis) or partition_kind(analysis) not in ("sums", "reports"):
        what = ("a model" if analysis.is_model
                else f"a {q.query}" if capability(analysis.kind).partitioned
                else f"a {analysis.trust_model}-model {q.query}")
        return (f"a release on a folder or on Dask is a central-model "
                f"{', '.join(PARTIAL_QUERIES)} or a local-model histogram or mean for now, "
                f"not {what}; release it from one file with engine = \"pandas\"")
    return None


def execution_of(sums: Any) -> dict[str, Any]:
    """The manifest's ``execution`` fields of a release: its sums' (a folder, or Dask), or
    this process's for a release read in-process from one file (one partition)."""
    from dpstudio.execution.engines import in_process

    return in_process(1) if sums is None else dict(sums.execution)


def sum_where_data_is(spec: Any, analysis: AnalysisSpec, ds: Any, engine: str,
                      declared: Any, state: Any = None) -> Any:
    """The release's exact integer aggregates, each file read and hashed once where it is
    (on Dask, or file by file here); no noise. ProjectError for an analysis that is not
    built from sums or local tallies.

    A central analysis gives a :class:`~dpstudio.execution.run.FilesSums`; a local one a
    :class:`~dpstudio.execution.run.FilesTallies` (its rows randomized in their tasks,
    each from its own OS CSPRNG; the estimator not run yet). ``state`` (a
    :class:`~dpstudio.jobs.State`, may be None) follows the files summed and may cancel:
    :class:`~dpstudio.jobs.Cancelled` is raised before any noise is drawn, any estimate
    made or anything charged. A worker lost mid-query has its tasks rerun; a query the
    cluster cannot finish is one :class:`~dpstudio.execution.engines.ExecutionError`
    line. The ``execution`` fields are the same keys on either engine (engine, scheduler,
    workers, threads, memory_bytes, partitions).
    """
    from dpstudio.analysis.partitioned import partition_kind
    from dpstudio.execution.engines import in_process
    from dpstudio.execution.run import sum_on_files, tally_on_files

    refused = files_refusal(analysis)
    if refused is not None:
        raise ProjectError(refused)
    column = declared.get(analysis.query.column) if declared is not None else None
    run = tally_on_files if partition_kind(analysis) == "reports" else sum_on_files
    sums = run(analysis, ds, engine=engine, scheduler=spec.scheduler, declared=column,
               header=spec.header, fingerprint=True, state=state)
    if sums.execution.get("engine") != "dask":
        sums.execution = in_process(len(ds.files)) | dict(sums.execution)
    return sums
