"""The application's preview and curves of a user-level dataset (issue 14, bounded
contributions per person): once the Columns panel declares an identifier with k rows per
person, the preview's interval of a count is k times the row-level one (the noise a
release will have, not far narrower per-row numbers), the analytic line's noise is k
times too, and the identifier is no longer offered as a column to release."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit
from ui_helpers import close_window, open_window, pick, write_declared_csv

from dpstudio.data.schema import ColumnType
from dpstudio.ui import schema_panel as sp

K = 4


@pytest.fixture
def visits(tmp_path):
    rng = np.random.default_rng(11)
    people = rng.integers(0, 25, 150)
    rows = [(f"p{p}", f"{a:.1f}") for p, a in zip(people, rng.uniform(0, 100, people.size),
                                                   strict=True)]
    return write_declared_csv(tmp_path / "visits.csv", ("person", "amount"), rows, [
        {"name": "amount", "type": "numeric", "lower": 0, "upper": 100}])


def _edit_cell(qtbot, panel, name, column):
    table = panel.table
    cell = panel.model.index(panel.model.row_of(name), column)
    table.scrollTo(cell)
    table.setCurrentIndex(cell)
    rect = table.visualRect(cell)
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    return table


def _half(win):
    shown = win.result_panel.plotted()
    return float(shown["ci_high"][0] - shown["ci_low"][0]) / 2


def _line_at(win, eps):
    (x, y), = [v for n, v in win.utility_plot.curves().items() if n.startswith("Central")]
    return float(np.interp(eps, x, y))


def test_the_preview_and_the_line_are_k_times_wider(qtbot, visits, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    # A failure before the declarations are saved must not leave a modal question open.
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *a, **k: QMessageBox.StandardButton.Discard)
    win = open_window(qtbot, visits, monkeypatch)
    try:
        s, analysis, schema = win.session, win.analysis_panel, win.schema_panel
        pick(qtbot, analysis.query_combo, "count")
        qtbot.waitUntil(lambda: s.query == "count" and s.mechanism == "laplace", timeout=3000)
        assert win.analysis.wait_idle(30)
        row_half = _half(win)
        row_scale = win.result_panel.preview.noise_scale
        row_line = _line_at(win, s.epsilon)
        assert row_scale == pytest.approx(1 / s.epsilon)  # a row's count: Laplace(1/ε)
        # Declare the identifier in the Columns panel: its type, then k rows per person.
        table = _edit_cell(qtbot, schema, "person", sp.COL_TYPE)
        qtbot.keyClicks(table.findChild(QComboBox), "id")
        qtbot.waitUntil(lambda: s.schema["person"].type is ColumnType.IDENTIFIER, timeout=3000)
        table = _edit_cell(qtbot, schema, "person", sp.COL_DOMAIN)
        qtbot.waitUntil(lambda: table.findChild(QLineEdit) is not None, timeout=2000)
        line = table.findChild(QLineEdit)
        line.selectAll()
        qtbot.keyClicks(line, str(K))
        qtbot.keyClick(line, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: s.schema["person"].max_rows == K, timeout=3000)
        qtbot.waitUntil(lambda: win.result_panel.preview is not None and
                        win.result_panel.preview.noise_scale != row_scale, timeout=10000)
        assert win.analysis.wait_idle(30)
        preview = win.result_panel.preview
        assert preview.noise_scale == pytest.approx(K * row_scale, rel=1e-12)
        assert _half(win) == pytest.approx(K * row_half, rel=1e-9)  # what is shown
        assert any("one person's rows" in n for n in preview.notes)
        assert analysis.user_level_label.text() == f"user-level: up to {K} rows per person"
        assert "still drawn per row" not in analysis.user_level_label.toolTip()
        # The line: noise K times a row's, beside the bias of dropping rows beyond K.
        (curve,) = [c.data for n, c in win.utility_plot._lines.items()
                    if n.startswith("Central")]
        bias = curve.bias or 0.0
        noise = np.sqrt(max(_line_at(win, s.epsilon) ** 2 - bias ** 2, 0.0))
        assert noise == pytest.approx(K * row_line, rel=1e-6)
        assert bias < 0  # a count of the kept rows is below the count of every row
        names = [analysis.column_combo.itemText(i) for i in
                 range(analysis.column_combo.count())]
        assert names == ["amount  (numeric)"]  # the identifier is never released
        assert schema.save()  # nothing left unsaved: the window closes without asking
    finally:
        close_window(win)
