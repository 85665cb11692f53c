"""The project controller's worker jobs and what they return.

Each job runs in the :class:`~dpstudio.ui.worker.JobRunner`'s thread, never the UI
thread, and returns an :class:`Outcome`: the value, or an error the analyst is shown in
one line (:data:`EXPECTED`). Anything else a job raises is a bug, reported as such.
"""

from __future__ import annotations

import inspect
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpstudio.data.errors import DataError
from dpstudio.engine.errors import EngineError
from dpstudio.export.errors import ExportError
from dpstudio.jobs import Cancelled
from dpstudio.project import Project, ProjectError, ReleaseSpec

__all__ = ["CANCELLED_TEXT", "EXPECTED", "Outcome", "ReleaseCancelled", "ReleaseState",
           "check_job", "hash_job", "release_job", "release_takes_state", "tamper_text"]

#: What the analyst is told of a release cancelled before its noise was drawn.
CANCELLED_TEXT = "Cancelled — nothing was charged"


class ReleaseCancelled(Exception):
    """A release stopped by its Cancel button before any noise was drawn or charged."""


class ReleaseState:
    """A release's job state: progress to the runner's, cancelled by its own flag.

    Not by the runner's generation: a release cancelled too late (its noise drawn and
    charged) still delivers its record, so the window never says "nothing was charged"
    of a release that was.
    """

    def __init__(self) -> None:
        self.flag = threading.Event()
        self.runner_state: Any = None

    def cancel(self) -> None:
        self.flag.set()

    def cancelled(self) -> bool:
        return self.flag.is_set()

    def progress(self, fraction: float, message: str = "") -> None:
        if self.runner_state is not None:
            self.runner_state.progress(fraction, message)


def release_takes_state(project: Any) -> bool:
    """Whether :meth:`Project.release` follows a job state (progress, cancel)."""
    try:
        return "state" in inspect.signature(project.release).parameters
    except (TypeError, ValueError):
        return False

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
        The runner's state: a folder's check sums every file (on Dask, a cluster started
        for it), so a newer check or the window's close cancels it.

    Returns
    -------
    Outcome
        The check's summary, or the refusal.
    """
    try:
        return Outcome(project.check(spec, out, state=state))
    except EXPECTED as exc:
        return Outcome(error=exc)


def release_job(project: Project, spec: ReleaseSpec, out: Path,
                follow: ReleaseState | None = None, state: Any = None) -> Outcome:
    """:meth:`Project.release` in the worker: noise drawn, charged and written at once.

    ``follow`` (when the project's release takes a state) carries the progress of the
    files summed and the Cancel button: cancelled before the noise, the outcome's error is
    :class:`ReleaseCancelled` and nothing was charged.

    Parameters
    ----------
    project : Project
    spec : ReleaseSpec
    out : Path
        The output folder.
    follow : ReleaseState, optional
        Progress and the release's own cancel flag.
    state : JobState, optional
        The runner's state (progress is forwarded to it).

    Returns
    -------
    Outcome
        The :class:`~dpstudio.project.ReleaseRecord`, or the refusal.
    """
    kwargs: dict[str, Any] = {}
    if follow is not None and release_takes_state(project):
        follow.runner_state = state
        kwargs["state"] = follow
    try:
        return Outcome(project.release(spec, out, **kwargs))
    except Cancelled:
        return Outcome(error=ReleaseCancelled(CANCELLED_TEXT))
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
    from dpstudio.ui.folder_open import is_folder

    if is_folder(dataset):
        # Looked up by its path alone: a folder is fingerprinted file by file, from the
        # bytes a release reads (never from the preview the window holds).
        return Outcome(())
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
