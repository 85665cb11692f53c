"""The project controller's worker jobs and what they return.

Each job runs in the :class:`~dpstudio.ui.worker.JobRunner`'s thread, never the UI
thread, and returns an :class:`Outcome`: the value, or an error the analyst is shown in
one line (:data:`EXPECTED`). Anything else a job raises is a bug, reported as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpstudio.data.errors import DataError
from dpstudio.engine.errors import EngineError
from dpstudio.export.errors import ExportError
from dpstudio.project import Project, ProjectError, ReleaseSpec

__all__ = ["EXPECTED", "Outcome", "check_job", "hash_job", "release_job", "tamper_text"]

#: Errors a check or release reports to the user (one line each); anything else is a bug.
EXPECTED = (ProjectError, DataError, EngineError, ExportError, OSError)


@dataclass
class Outcome:
    """What a worker job returns: its value, or the expected error it raised.

    Attributes
    ----------
    value : object
        The job's result (None after an error).
    error : Exception or None
        The error to show the analyst.
    """

    value: Any = None
    error: Exception | None = None


def check_job(project: Project, spec: ReleaseSpec, out: Path, state: Any = None) -> Outcome:
    """:meth:`Project.check` in the worker: the budget, the dataset, the query; no noise.

    Parameters
    ----------
    project : Project
    spec : ReleaseSpec
    out : Path
        The output folder the release would write to.
    state : JobState, optional
        The runner's state (unused: a check is quick).

    Returns
    -------
    Outcome
        The check's summary, or the refusal.
    """
    try:
        return Outcome(project.check(spec, out))
    except EXPECTED as exc:
        return Outcome(error=exc)


def release_job(project: Project, spec: ReleaseSpec, out: Path, state: Any = None) -> Outcome:
    """:meth:`Project.release` in the worker: noise drawn, charged and written at once.

    Parameters
    ----------
    project : Project
    spec : ReleaseSpec
    out : Path
        The output folder.
    state : JobState, optional
        The runner's state (unused: a release is never cut short).

    Returns
    -------
    Outcome
        The :class:`~dpstudio.project.ReleaseRecord`, or the refusal.
    """
    try:
        return Outcome(project.release(spec, out))
    except EXPECTED as exc:
        return Outcome(error=exc)


def hash_job(dataset: Any, state: Any = None) -> Outcome:
    """The dataset's byte hash and content hash, in the worker.

    They are the keys a project finds a moved or re-encoded dataset by.

    Parameters
    ----------
    dataset : Dataset
        The session's dataset.
    state : JobState, optional
        The runner's state (unused).

    Returns
    -------
    Outcome
        ``(sha256, content digest)``, or the error reading the file.
    """
    from dpstudio.data.fingerprint import content_fingerprint

    try:
        return Outcome((dataset.sha256, content_fingerprint(dataset.frame).digest))
    except (ProjectError, OSError, DataError) as exc:
        return Outcome(error=exc)


def tamper_text(message: str) -> str:
    """The engine's tamper sentence for the application.

    Parameters
    ----------
    message : str
        :func:`dpstudio.project.project.tamper_message`'s sentence.

    Returns
    -------
    str
        What changed, without its command-line advice (``dpstudio ledger …
        --acknowledge``), and the application's way on.
    """
    return (message.split(" — ")[0] + ". New releases are refused until you acknowledge "
            "the changes: the Ledger tab lists them, and its “Acknowledge the changes…” "
            "button keeps the pessimistic charges.")
