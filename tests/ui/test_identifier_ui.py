"""Declaring an identifier column in the Columns panel (issue 14, bounded contributions per
person): pick the type "identifier" in the table's combo, type the rows per person, and
the Analysis panel says "user-level: up to k rows per person"; saved as schema version 3."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit
from ui_helpers import close_window, open_window

from dpstudio.data import sidecar_path
from dpstudio.data.schema import ColumnType
from dpstudio.ui import schema_panel as sp


@pytest.fixture
def visits(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "visits.csv"
    rows = [f"p{rng.integers(0, 30)},{rng.uniform(0, 100):.1f}" for _ in range(200)]
    path.write_text("person,amount\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def _edit_cell(qtbot, panel, name, column):
    table = panel.table
    cell = panel.model.index(panel.model.row_of(name), column)
    table.scrollTo(cell)
    table.setCurrentIndex(cell)
    rect = table.visualRect(cell)
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    return table


def test_declaring_an_identifier_makes_the_analysis_user_level(qtbot, visits, monkeypatch):
    win = open_window(qtbot, visits, monkeypatch)
    try:
        panel, analysis = win.schema_panel, win.analysis_panel
        assert not analysis.user_level_label.isVisible()
        # The type: the table's own combo box, the item picked with the keyboard.
        table = _edit_cell(qtbot, panel, "person", sp.COL_TYPE)
        combo = table.findChild(QComboBox)
        assert combo is not None and "identifier" in [combo.itemText(i)
                                                      for i in range(combo.count())]
        qtbot.keyClicks(combo, "id")  # typed, as a person picks an item of a closed combo
        qtbot.waitUntil(lambda: panel.schema()["person"].type is ColumnType.IDENTIFIER,
                        timeout=3000)
        assert panel.cell_texts("person")[2] == "undeclared"
        qtbot.waitUntil(lambda: "declare its rows per person"
                        in analysis.user_level_label.text(), timeout=3000)
        # The rows per person: typed in the Declared cell.
        table = _edit_cell(qtbot, panel, "person", sp.COL_DOMAIN)
        qtbot.waitUntil(lambda: table.findChild(QLineEdit) is not None, timeout=2000)
        line = table.findChild(QLineEdit)
        assert line.placeholderText() == "rows per person, e.g. 5"
        line.selectAll()
        qtbot.keyClicks(line, "4")
        qtbot.keyClick(line, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: panel.schema()["person"].max_rows == 4, timeout=3000)
        assert panel.cell_texts("person")[2] == "up to 4 rows per person"
        qtbot.waitUntil(lambda: analysis.user_level_label.isVisible(), timeout=3000)
        assert analysis.user_level_label.text() == "user-level: up to 4 rows per person"
        # A bad number is refused in one sentence, the declaration kept.
        assert not panel.edit("person", "max_rows", "0")
        assert panel.schema()["person"].max_rows == 4
        assert panel.save()
        saved = json.loads(sidecar_path(visits).read_text(encoding="utf-8"))
        assert saved["schema_version"] == 3
        assert {"name": "person", "type": "identifier", "max_rows": 4} in saved["columns"]
    finally:
        close_window(win)
