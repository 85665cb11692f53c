"""Open datasets off the UI thread, with progress and a Cancel button.

:class:`DatasetLoader` runs :func:`dpstudio.data.open_dataset` in its own
:class:`~dpstudio.ui.worker.JobRunner` (one worker thread kept for loading, so a big file
never queues behind — or in front of — the analysis jobs). The newest request wins: a
second ``load`` or a ``cancel`` drops what the previous one would return, and the load
itself stops at its next step. Results and errors arrive on the UI thread as signals;
whoever shows them keeps the previous dataset until ``loaded`` fires.

:class:`LoadStatus` is the status-bar widget: "Opening big.csv…", a progress bar and a
Cancel button, shown only while a load runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from dpstudio.data.dataset import Dataset, open_dataset
from dpstudio.data.errors import DataError
from dpstudio.ui.worker import JobRunner

__all__ = ["DatasetLoader", "LoadOutcome", "LoadStatus", "load_job"]

KEY = "load"
#: A load shorter than this never shows the progress bar (no flicker for small files).
SHOW_DELAY_MS = 250
#: How long closing waits for a load to see its cancel: a load only reads, so nothing is
#: lost by leaving one that does not stop, and the window (or a test) is not held by it.
SHUTDOWN_SECONDS = 10.0


@dataclass(frozen=True)
class LoadOutcome:
    """What one load produced: a dataset, or the one-line reason it could not."""

    path: Path
    dataset: Dataset | None = None
    error: str | None = None


def load_job(path: Path, open_fn: Callable[..., Dataset], header: bool = True, *,
             state: Any) -> LoadOutcome:
    """The worker's job: open ``path``; a :class:`DataError` becomes the outcome's error.
    ``header=False``: the file's first line is data."""
    try:
        kwargs = {} if header else {"header": False}
        return LoadOutcome(path, dataset=open_fn(path, state=state, **kwargs))
    except DataError as exc:
        return LoadOutcome(path, error=str(exc))
    except MemoryError:
        return LoadOutcome(path, error=f"{path.name}: too large to fit in memory")


class DatasetLoader(QObject):
    """Loads one dataset at a time in the background.

    Signals (all on the UI thread): ``started(str)`` path; ``progress(float, str)``
    fraction and step; ``loaded(object)`` the :class:`Dataset`; ``failed(str, str)`` path
    and one-line message; ``cancelled(str)`` path; ``busy_changed(bool)``.

    ``open_fn(path, state=…)`` defaults to :func:`open_dataset`; tests pass a slow one.
    """

    started = Signal(str)
    progress = Signal(float, str)
    loaded = Signal(object)
    failed = Signal(str, str)
    cancelled = Signal(str)
    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None,
                 open_fn: Callable[..., Dataset] = open_dataset) -> None:
        super().__init__(parent)
        self.open_fn = open_fn
        self._runner = JobRunner(self)
        self._runner.sig_finished.connect(self._on_finished)
        self._runner.sig_failed.connect(self._on_failed)
        self._runner.sig_progress.connect(self._on_progress)
        self._path: Path | None = None

    @property
    def busy(self) -> bool:
        return self._path is not None

    def load(self, path: str | os.PathLike[str], *, header: bool = True) -> None:
        """Start loading ``path`` (superseding any load under way); ``header=False`` reads
        the first line as data."""
        self._path = Path(path)
        self._runner.submit(KEY, load_job, self._path, self.open_fn, header)
        self.started.emit(str(self._path))
        self.busy_changed.emit(True)

    def cancel(self) -> None:
        """Give up the load under way; the current dataset stays."""
        if self._path is None:
            return
        path, self._path = self._path, None
        self._runner.cancel(KEY)
        self.cancelled.emit(str(path))
        self.busy_changed.emit(False)

    def wait(self, timeout: float = 30.0) -> None:
        """Block until the last load ended (tests and shutdown only; signals still queued)."""
        self._runner.wait(KEY, timeout)

    def shutdown(self) -> bool:
        """Stop for good; a load that does not stop within :data:`SHUTDOWN_SECONDS` of its
        cancel (a read stalled on a network share) is left to end in its thread. True
        when nothing is left running."""
        self._path = None
        return self._runner.shutdown(timeout=SHUTDOWN_SECONDS)

    def _on_progress(self, key: str, fraction: float, message: str) -> None:
        if key == KEY and self._path is not None:
            self.progress.emit(fraction, message)

    def _on_finished(self, key: str, outcome: LoadOutcome) -> None:
        if key != KEY or self._path is None or outcome.path != self._path:
            return
        self._path = None
        self.busy_changed.emit(False)
        if outcome.error is not None or outcome.dataset is None:
            self.failed.emit(str(outcome.path), outcome.error or "could not be opened")
        else:
            self.loaded.emit(outcome.dataset)

    def _on_failed(self, key: str, message: str) -> None:
        if key != KEY or self._path is None:
            return
        path, self._path = self._path, None
        self.busy_changed.emit(False)
        self.failed.emit(str(path), f"{path.name}: {message}")


class LoadStatus(QWidget):
    """Status-bar widget: what is loading, how far along, and a Cancel button."""

    def __init__(self, loader: DatasetLoader, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loader = loader
        self.label = QLabel(self)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(160)
        self.bar.setFixedHeight(max(10, self.fontMetrics().height() - 4))
        self.cancel_button = QToolButton(self)
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop loading; the current dataset stays open")
        self.cancel_button.clicked.connect(loader.cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.cancel_button)
        self._show_timer = QTimer(self)
        self._show_timer.setSingleShot(True)
        self._show_timer.setInterval(SHOW_DELAY_MS)
        self._show_timer.timeout.connect(self._reveal)
        loader.started.connect(self._on_started)
        loader.progress.connect(self._on_progress)
        loader.busy_changed.connect(self._on_busy)
        self.hide()

    def _on_started(self, path: str) -> None:
        self.label.setText(f"Opening {Path(path).name}…")
        self.bar.setValue(0)
        self._show_timer.start()

    def _on_progress(self, fraction: float, message: str) -> None:
        self.bar.setValue(int(round(1000 * min(max(fraction, 0.0), 1.0))))
        if message:
            self.bar.setToolTip(message)

    def _reveal(self) -> None:
        if self.loader.busy:
            self.show()

    def _on_busy(self, busy: bool) -> None:
        if not busy:
            self._show_timer.stop()
            self.hide()
