"""The main window: table, column list, plots, menus, and File ▸ Open errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog

from dpstudio.data import open_dataset
from dpstudio.ui import analysis_view
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.plots import HINT
from dpstudio.ui.table_model import MISSING_TEXT, DataFrameModel


def _choose_file(monkeypatch, path):
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), ""))
    )


def test_window_shows_the_whole_survey(window):
    frame = window.dataset.frame
    assert window.table_model.rowCount() == len(frame) == 2000
    assert window.table_model.columnCount() == frame.shape[1]
    assert window.schema_panel.column_names() == list(frame.columns)
    assert window.windowTitle() == "DP Studio — survey.csv"
    assert "2,000 rows × 10 columns" in window.size_label.text()
    assert "survey.csv" in window.file_label.text()


def test_column_list_shows_types_and_declared_domains(window):
    panel = window.schema_panel
    assert panel.cell_texts("age")[1:] == ("numeric", "18 – 100")
    assert panel.cell_texts("faculty")[1:] == (
        "categorical", "Arts, Business, Engineering, Law, Medicine, Science")
    assert panel.cell_texts("cheated_on_exam")[1:] == ("yes/no", "yes, no")


def test_undeclared_columns_say_so(qtbot, tmp_path):
    path = tmp_path / "plain.csv"
    pd.DataFrame({"age": [30, 41, 52], "region": ["N", "S", "N"]}).to_csv(path, index=False)
    win = MainWindow(open_dataset(path))
    qtbot.addWidget(win)
    panel = win.schema_panel
    assert [panel.cell_texts(c)[2] for c in ("age", "region")] == ["undeclared", "undeclared"]
    guessed = panel.model.data(panel.model.index(0, 1), Qt.ItemDataRole.FontRole)
    assert guessed.italic()  # a guessed type


def test_open_malformed_file_shows_error_and_keeps_data(qtbot, window, monkeypatch, errors,
                                                         tmp_path):
    before = window.dataset
    bad = tmp_path / "broken.csv"
    bad.write_text("a,b,c\n1,2,3\n4,5,6,7\n", encoding="utf-8")
    _choose_file(monkeypatch, bad)
    window.open_action.trigger()  # loads in the background
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert errors == ["broken.csv: line 3 has 4 fields, expected 3"]
    assert window.dataset is before
    assert window.table_model.rowCount() == 2000
    assert window.windowTitle() == "DP Studio — survey.csv"


def test_open_good_file_and_sample(qtbot, window, monkeypatch, errors, tmp_path):
    good = tmp_path / "tiny.tsv"
    good.write_text("x\ty\n1\t2\n3\t4\n", encoding="utf-8")
    _choose_file(monkeypatch, good)
    with qtbot.waitSignal(window.dataset_changed, timeout=5000):
        window.open_action.trigger()
    assert errors == []
    assert window.windowTitle() == "DP Studio — tiny.tsv"
    assert window.table_model.rowCount() == 2
    with qtbot.waitSignal(window.dataset_changed, timeout=5000):
        window.sample_actions["health"].trigger()
    assert window.dataset.name == "health.csv"
    assert window.table_model.rowCount() == 3000


def test_cancelled_dialog_changes_nothing(window, monkeypatch, errors):
    before = window.dataset
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: ("", "")))
    window.open_action.trigger()
    assert window.dataset is before and errors == []


def test_menus_and_shortcuts(window):
    assert window.open_action.shortcut() == QKeySequence("Ctrl+O")
    assert window.quit_action.shortcut() == QKeySequence("Ctrl+Q")
    assert set(window.sample_actions) == {"survey", "health"}
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles[0] == "&File" and titles[-1] == "&Help"
    assert {"&View", "&Tools"} <= set(titles)


def test_empty_plots_are_labelled(window):
    utility = window.utility_plot.getPlotItem()
    tradeoff = window.tradeoff_plot.getPlotItem()
    assert utility.getAxis("bottom").labelText == "ε (log scale)"
    assert utility.getAxis("left").labelText == "error"
    assert tradeoff.getAxis("bottom").labelText == "Type I error α (false alarm)"
    assert tradeoff.getAxis("left").labelText == "Type II error β (missed detection)"
    x, y = window.tradeoff_plot.diagonal.getData()
    np.testing.assert_allclose(y, 1 - x)
    # A dataset just opened: its curves are being computed, and the empty plot says so.
    computing = getattr(analysis_view, "COMPUTING", HINT)
    assert window.tradeoff_plot.hint.textItem.toPlainText() == computing
    assert window.utility_plot.toolTip() and window.tradeoff_plot.toolTip()
    assert "Type I error" in window.tradeoff_plot.toolTip()


def test_table_model_formats_cells():
    frame = pd.DataFrame(
        {"n": [1.0, np.nan, 2.5], "i": pd.array([3, None, 5], dtype="Int64"), "s": ["a", None, "c"]}
    )
    model = DataFrameModel(frame)
    cell = model.index
    assert [model.data(cell(r, 0)) for r in range(3)] == ["1", MISSING_TEXT, "2.5"]
    assert [model.data(cell(r, 1)) for r in range(3)] == ["3", MISSING_TEXT, "5"]
    assert [model.data(cell(r, 2)) for r in range(3)] == ["a", MISSING_TEXT, "c"]
    assert model.headerData(2, Qt.Orientation.Horizontal) == "s"
    assert model.headerData(0, Qt.Orientation.Vertical) == "1"
    right = model.data(cell(0, 0), Qt.ItemDataRole.TextAlignmentRole)
    assert right & int(Qt.AlignmentFlag.AlignRight)


def test_table_model_is_virtual_for_large_frames(qtbot):
    frame = pd.DataFrame({"x": np.arange(1_000_000, dtype=float), "y": "k"})
    model = DataFrameModel(frame)
    assert model.rowCount() == 1_000_000
    assert model.data(model.index(999_999, 0)) == "999999"
