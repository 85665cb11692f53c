"""Tools ▸ Execution…: where a folder's sums run — the engine and the Dask scheduler.

The engine is the command line's ``--engine`` (``auto`` picks Dask when the data is larger
than a share of this machine's memory), the scheduler its ``--scheduler``: an address such
as ``tcp://host:8786``, or empty for a local cluster started for the work and closed after.
An address is not tried here: a bad one is said in one sentence when it is used, and
nothing is lost.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from dpstudio.ui.settings import EXECUTION_ENGINES

__all__ = ["ENGINE_TEXTS", "ExecutionDialog"]

ENGINE_TEXTS = {
    "auto": "Auto — Dask for a folder larger than an eighth of memory, else pandas",
    "pandas": "pandas — in this process, one file at a time",
    "dask": "Dask — one task per file on a cluster",
}


class ExecutionDialog(QDialog):
    """The engine and the scheduler's address; :meth:`values` gives them."""

    def __init__(self, engine: str, scheduler: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Execution")
        self.engine = QComboBox(self)
        for name in EXECUTION_ENGINES:
            self.engine.addItem(ENGINE_TEXTS[name], name)
        self.engine.setCurrentIndex(max(0, self.engine.findData(engine)))
        self.scheduler = QLineEdit(scheduler, self)
        self.scheduler.setPlaceholderText("empty: a local cluster, started and closed here")
        self.scheduler.setToolTip("A Dask scheduler's address, e.g. tcp://host:8786. Only "
                                  "exact integer sums come back from its workers.")
        note = QLabel("Analyses and releases of a folder run here; a file is read into "
                      "this process.", self)
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Engine:", self.engine)
        form.addRow("Scheduler:", self.scheduler)
        form.addRow(note)
        form.addRow(buttons)

    def values(self) -> tuple[str, str]:
        """(engine, scheduler address; empty for a local cluster)."""
        return str(self.engine.currentData()), self.scheduler.text().strip()

    def set_values(self, engine: str, scheduler: str) -> Any:
        """Fill the form (tests and scripts)."""
        self.engine.setCurrentIndex(max(0, self.engine.findData(engine)))
        self.scheduler.setText(scheduler)
        return self
