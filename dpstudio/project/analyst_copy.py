"""The analyst's copy of a release's report: where it lives and how it is written.

A release that writes a report also gets the analyst's copy: the same report with the
figures measured on the raw data at release time (n, values outside the declared bounds,
the error as bias + noise; :func:`~dpstudio.export.report_analyst.measure_clamping`). It is
not a release file — never in the output folder, the manifest or the ledger's list of
files — because it states figures of the raw data. It goes to the project's private folder,
``<project stem>.analyst/`` beside the project file (``study.dpstudio`` →
``study.analyst/release-7-report-analyst.html``), created for its owner only, and is
written atomically once the release is done. Failing to write it never undoes the release:
the record says why it is missing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from dpstudio.data.atomic import write_atomic
from dpstudio.project.records import ReleaseRecord

__all__ = ["ANALYST_SUFFIX", "ReleasedRecord", "analyst_folder", "analyst_report_name",
           "write_analyst_copy"]

#: The private folder beside a project file (``study.dpstudio`` → ``study.analyst``).
ANALYST_SUFFIX = ".analyst"


@dataclass(frozen=True)
class ReleasedRecord(ReleaseRecord):
    """The ledger entry of a release just made, and where its analyst's copy went.

    Attributes
    ----------
    analyst_report : pathlib.Path or None
        The analyst's copy of the report (not for publication), in the project's private
        folder; None when the release wrote no report, is a model release, or the copy
        could not be written.
    analyst_note : str
        Why the analyst's copy is missing when it should be there ("" otherwise).
    """

    analyst_report: Path | None = None
    analyst_note: str = ""


def analyst_folder(project_path: str | os.PathLike[str]) -> Path:
    """The private folder of a project's analyst's copies.

    Parameters
    ----------
    project_path : str or os.PathLike
        The project file.

    Returns
    -------
    pathlib.Path
        ``<project stem>.analyst`` beside the project file (it may not exist yet).
    """
    p = Path(project_path).expanduser().absolute()
    return p.with_name(p.stem + ANALYST_SUFFIX)


def analyst_report_name(release_id: int) -> str:
    """The file name of a release's analyst's copy in the project's private folder.

    Parameters
    ----------
    release_id : int

    Returns
    -------
    str
        ``release-<id>-report-analyst.html``.
    """
    return f"release-{int(release_id)}-report-analyst.html"


def write_analyst_copy(project_path: str | os.PathLike[str], record: ReleaseRecord,
                       bundle: Any) -> ReleasedRecord:
    """Render and write the analyst's copy of a done release's report.

    Parameters
    ----------
    project_path : str or os.PathLike
        The project file (the copy goes to :func:`analyst_folder`).
    record : ReleaseRecord
        The done release.
    bundle : BundleInput
        What its files were rendered from, with the analyst's figures.

    Returns
    -------
    ReleasedRecord
        ``record`` with the copy's path, or with the reason it could not be written (the
        release stands either way).
    """
    from dpstudio.export.bundle import render_analyst_report

    done = {f.name: getattr(record, f.name) for f in fields(ReleaseRecord)}
    folder = analyst_folder(project_path)
    path, note = None, ""
    try:
        html_doc = render_analyst_report(bundle)
        if html_doc is not None:
            # Owner-only: it states figures of the raw data (n, values outside the bounds).
            folder.mkdir(mode=0o700, exist_ok=True)
            path = write_atomic(folder / analyst_report_name(record.id), html_doc, mode=0o600)
    except Exception as exc:  # the release is done: whatever fails here must not hide it
        path = None
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        note = (f"the analyst's copy of the report could not be written in {folder} "
                f"({why or type(exc).__name__}); the release itself is done")
    return ReleasedRecord(**done, analyst_report=path, analyst_note=note)
