"""Wide files and very long column names, opened through File ▸ Open.

A 5,000-column file took 21 s to open and a 100,000-character header 48 s: the data
table measured every column's cells up front and every name was laid out in full. These
tests check the *work done* (which rows and columns the models were asked for, how many
widgets exist), not the wall-clock time: ``benchmarks/wide_open.py`` measures that.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QWidget

from dpstudio.data import load_schema, sidecar_path
from dpstudio.ui import schema_panel as sp
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.table_model import NAME_CHARS, TOOLTIP_CHARS, DataFrameModel

WIDE = 5000
LONG = "x" * 100_000
MEDIUM = "how_many_hours_per_week_" + "m" * 276  # 300 characters: its tooltip is whole


def _csv(path, header, rows):
    values = np.random.default_rng(3).integers(0, 100, size=(rows, len(header)))
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(",".join(header) + "\n")
        np.savetxt(f, values, fmt="%d", delimiter=",")
    return path


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory):
    return _csv(tmp_path_factory.mktemp("wide") / "wide.csv",
                [f"c{j:04d}" for j in range(WIDE)], rows=40)


@pytest.fixture
def app_window(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.schema_panel.undo_stack.setClean()  # even after a failure: closing must not ask


def _open_with_file_menu(qtbot, window, monkeypatch, path):
    """File ▸ Open… with the file dialog answering ``path`` (loads in the background)."""
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda *a, **k: (str(path), "")))
    with qtbot.waitSignal(window.dataset_changed, timeout=60_000):
        window.open_action.trigger()
    qtbot.wait(50)  # let the window paint what it shows


def _record(monkeypatch, cls, method, seen, key):
    original = getattr(cls, method, None)
    if original is None:  # (the old model had no such method)
        return

    def recording(self, *args, **kwargs):
        seen.add(key(*args))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, method, recording)


def test_a_wide_file_opens_lazily_and_a_far_column_can_still_be_edited(
        qtbot, app_window, monkeypatch, wide_csv):
    schema_rows: set[int] = set()
    table_columns: set[int] = set()
    _record(monkeypatch, sp.SchemaModel, "data", schema_rows, lambda index, *_: index.row())
    _record(monkeypatch, DataFrameModel, "data", table_columns,
            lambda index, *_: index.column())
    _record(monkeypatch, DataFrameModel, "cell_text", table_columns, lambda _row, col: col)
    window = app_window
    _open_with_file_menu(qtbot, window, monkeypatch, wide_csv)
    panel, table = window.schema_panel, window.schema_panel.table

    # The Columns panel lists all 5,000 columns, but was asked only for a screenful.
    assert panel.model.rowCount() == WIDE
    assert "5,000 of 5,000 columns undeclared" in panel.summary.text()
    screenful = table.viewport().height() // table.verticalHeader().defaultSectionSize() + 2
    assert 10 <= screenful < 60
    assert schema_rows and max(schema_rows) <= screenful
    # Nothing is made per column: no editors, a fixed number of widgets.
    assert not table.findChildren(sp.BoundsEditor)
    assert len(panel.findChildren(QWidget)) < 60
    # The data table sized (and read) only the columns in view, not 5,000.
    assert window.table_model.columnCount() == WIDE
    assert 0 < len(table_columns) < 60
    assert window.table_model.materialized_columns() < 60

    # Scrolling the data table far right fits the columns that come into view.
    window.show_view("data")
    bar = window.table_view.horizontalScrollBar()
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: WIDE - 1 in table_columns, timeout=5000)
    assert window.table_model.materialized_columns() < 120

    # The last column, reached with real clicks and keys, is edited, undone, redone, saved.
    first = panel.model.index(0, sp.COL_NAME)
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualRect(first).center())
    qtbot.keyClick(table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    last = table.currentIndex()
    assert (last.row(), last.column()) == (WIDE - 1, sp.COL_DOMAIN)
    assert window.session.column == "c4999"  # the selection is followed for analysis
    # A double click as a mouse sends it: press and release, then the double-click event
    # (QTest's mouseDClick alone sends only the latter, which the view ignores).
    centre = table.visualRect(last).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    qtbot.waitUntil(lambda: table.findChild(sp.BoundsEditor) is not None, timeout=2000)
    editor = table.findChild(sp.BoundsEditor)
    assert editor.texts() == ("", "")
    qtbot.keyClicks(editor.lower, "0")
    qtbot.keyClicks(editor.upper, "120")
    qtbot.keyClick(editor.upper, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.schema()["c4999"].bounds == (0.0, 120.0), timeout=2000)
    assert panel.cell_texts("c4999") == ("c4999", "numeric", "0 – 120")
    assert window.session.spec.bounds == (0.0, 120.0)

    qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert panel.schema()["c4999"].bounds is None
    qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)
    assert panel.schema()["c4999"].bounds == (0.0, 120.0)
    with qtbot.waitSignal(panel.saved, timeout=5000):
        qtbot.keyClick(table, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    saved = load_schema(sidecar_path(wide_csv))
    assert saved["c4999"].bounds == (0.0, 120.0) and len(saved.columns) == WIDE
    assert not panel.is_dirty()


def test_long_names_are_elided_with_the_full_name_in_the_tooltip(
        qtbot, app_window, monkeypatch, tmp_path):
    path = _csv(tmp_path / "long.csv", [LONG, MEDIUM, "age"], rows=30)
    window = app_window
    _open_with_file_menu(qtbot, window, monkeypatch, path)
    horizontal = Qt.Orientation.Horizontal
    display, tooltip = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole

    # Data table header: bounded text, whole name (or its head and length) in the tooltip.
    model = window.table_model
    for column, name in ((0, LONG), (1, MEDIUM)):
        shown = model.headerData(column, horizontal, display)
        assert len(shown) <= NAME_CHARS and shown.endswith("…")
        assert name.startswith(shown[:-1])
    assert model.headerData(1, horizontal, tooltip) == MEDIUM
    long_tip = model.headerData(0, horizontal, tooltip)
    assert long_tip.startswith("x" * TOOLTIP_CHARS) and "100,000 characters" in long_tip
    assert len(long_tip) < TOOLTIP_CHARS + 100
    assert model.headerData(2, horizontal, display) == "age"
    assert window.table_view.horizontalHeader().sectionSize(0) <= 260

    # Columns panel: the same, and the guidance and messages name the column elided.
    panel = window.schema_panel
    names = [panel.model.data(panel.model.index(r, sp.COL_NAME)) for r in range(3)]
    assert [len(n) <= NAME_CHARS for n in names] == [True, True, True]
    assert names[2] == "age"
    assert panel.model.data(panel.model.index(1, sp.COL_NAME), tooltip) == MEDIUM
    assert "100,000 characters" in panel.model.data(panel.model.index(0, sp.COL_NAME), tooltip)
    assert not panel.edit(LONG, "lower", "abc")
    assert 0 < len(panel.message_text()) < 300
    assert panel.edit(LONG, "bounds", ("0", "5"))
    assert len(panel.undo_stack.undoText()) < 200
    assert panel.schema()[LONG].bounds == (0.0, 5.0)  # the full name is what is declared
    panel.undo_stack.undo()  # clean again: closing must not ask to save
    assert not panel.is_dirty()

    # Analysis combo box: elided items, the full names in tooltips, the selected one too.
    combo = window.analysis_panel.column_combo
    assert combo.count() == 3
    assert all(len(combo.itemText(i)) <= NAME_CHARS + 20 for i in range(3))
    assert combo.itemData(0) == LONG  # what is selected is the real column
    assert combo.itemData(1, tooltip) == MEDIUM
    assert window.session.column == LONG
    assert "100,000 characters" in combo.toolTip()
    assert len(window.analysis_panel.problem_label.text()) < 400
