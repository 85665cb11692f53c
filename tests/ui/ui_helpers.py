"""Helpers the UI tests share: a data file with its declarations, a window on it, and
choosing or typing as a person would."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from dpstudio.data import open_dataset

TIMEOUT = 30.0


def write_declared_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]],
                       columns: list[dict[str, Any]]) -> Path:
    """Write a CSV and its ``.schema.json`` sidecar (the declared columns)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(header)
        out.writerows(rows)
    schema = {"schema_version": 1, "columns": columns}
    path.with_name(path.name + ".schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return path


def open_window(qtbot, path: Path, monkeypatch):
    """The main window on ``path`` at 1400×900, shown and idle (no planned comparisons:
    they are a job of their own). The caller shuts it down (:func:`close_window`)."""
    from dpstudio.ui import session as session_module
    from dpstudio.ui.main_window import MainWindow

    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    win = MainWindow(open_dataset(path))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    assert win.analysis.wait_idle(TIMEOUT)
    return win


def close_window(win) -> None:
    win.analysis.shutdown()
    win.projects.shutdown()


def pick(qtbot, combo, text: str) -> None:
    """Choose an item of a closed combo box by typing its first letters, as a person would
    (after a pause: letters typed within the keyboard interval extend the last search)."""
    qtbot.wait(QApplication.keyboardInputInterval() + 50)
    combo.setFocus()
    qtbot.keyClicks(combo, text)


def type_into(qtbot, edit, text: str) -> None:
    """Replace an edit's text by typing, then Return, as a person would."""
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
