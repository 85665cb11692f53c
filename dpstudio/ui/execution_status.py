"""The status bar's "Engine: …": where the numbers of the open dataset are computed.

"Engine: pandas" for a file (read into this process), and for a folder the cluster of its
last sums as the manifest names it ("Engine: Dask · local cluster, 2 workers, 2 threads,
8 GiB"), or the Execution setting until a sum has run (and with no dataset open). A click
opens Tools ▸ Execution….
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from dpstudio.ui.folder_numbers import describe_execution

__all__ = ["ExecutionStatus"]


class ExecutionStatus(QLabel):
    """A permanent status-bar label following the analysis's last execution."""

    def __init__(self, analysis: Any, engine: str, scheduler: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("execution_status")
        self.analysis = analysis
        self._setting = (engine, scheduler)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        analysis.execution_changed.connect(lambda _e: self.refresh())
        analysis.session.changed.connect(self._session_changed)
        self.refresh()

    def set_setting(self, engine: str, scheduler: str) -> None:
        """The Execution setting changed (shown until the next run)."""
        self._setting = (engine, scheduler)
        self.refresh()

    def refresh(self) -> None:
        engine, scheduler = self._setting
        if self.analysis.session.dataset is not None and not self.analysis.is_folder:
            self.setText("Engine: pandas")
            self.setToolTip("The open file is read into this process; a folder's sums run "
                            f"on the Execution setting's engine ({engine}). Tools ▸ "
                            "Execution… to change it.")
            return
        self.setText(describe_execution(self.analysis.execution, engine, scheduler))
        where = scheduler or "a local cluster started for the work and closed after"
        self.setToolTip(f"Setting: engine {engine}, scheduler {where}. Tools ▸ Execution… "
                        "to change it.")

    def _session_changed(self, aspect: str) -> None:
        if aspect == "dataset":
            self.refresh()

    def mousePressEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        window = self.window()
        if hasattr(window, "show_execution_settings"):
            window.show_execution_settings()
        super().mousePressEvent(event)


class ReleaseProgress(QWidget):
    """Status-bar widget while a release runs: its files summed so far and Cancel (a
    release cancelled before its noise is drawn charges nothing)."""

    def __init__(self, projects: Any, parent: QWidget | None = None) -> None:
        from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QToolButton

        super().__init__(parent)
        self.projects = projects
        self.label = QLabel("Releasing…", self)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(140)
        self.cancel_button = QToolButton(self)
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop the release: before its noise is drawn nothing "
                                      "is charged or written")
        self.cancel_button.clicked.connect(self._cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.cancel_button)
        projects.runner.sig_progress.connect(self._progress)
        projects.busy_changed.connect(self._busy)
        self.hide()

    def _busy(self, _busy: bool) -> None:
        running = self.projects.busy == "release"
        if running and not self.isVisible():
            self.bar.setValue(0)
            self.label.setText("Releasing…")
            self.cancel_button.setEnabled(True)
        self.setVisible(running)

    def _progress(self, key: str, fraction: float, message: str) -> None:
        if key == "release":
            self.bar.setValue(int(round(1000 * min(max(fraction, 0.0), 1.0))))
            self.label.setText(f"{message or 'Releasing'} {fraction:.0%}")

    def _cancel(self) -> None:
        if self.projects.cancel_release():
            self.cancel_button.setEnabled(False)
            self.label.setText("Cancelling…")
