"""Declaring columns as a person does (issue 12, items 4–7): click a row of the Columns
panel, Tab through the bounds editor, see where each declaration comes from, keep 0/1
codes as they are and label them as an explicit step."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from ui_helpers import close_window, open_window, pick

from dpstudio.data import open_dataset, sample_path, sidecar_path
from dpstudio.data.schema import Source
from dpstudio.ui import schema_panel as sp
from dpstudio.ui.schema_panel import SchemaPanel

# --- helpers ------------------------------------------------------------------------------


def click(qtbot, panel, name: str, column: int = sp.COL_NAME) -> None:
    """Click a cell of column ``name``'s row, as a person does."""
    index = panel.model.index(panel.model.row_of(name), column)
    panel.table.scrollTo(index)
    rect = panel.table.visualRect(index)
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def open_bounds_editor(qtbot, panel, name: str) -> sp.BoundsEditor:
    """Double-click the "Declared" cell of ``name``: the bounds editor, its lower field
    focused."""
    index = panel.model.index(panel.model.row_of(name), sp.COL_DOMAIN)
    rect = panel.table.visualRect(index)
    click(qtbot, panel, name, sp.COL_DOMAIN)
    qtbot.mouseDClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    editor = panel.table.findChild(sp.BoundsEditor)
    assert editor is not None
    qtbot.waitUntil(lambda: QApplication.focusWidget() is editor.lower, timeout=2000)
    return editor


def type_keys(qtbot, *keys) -> None:
    """Type into whatever has the focus: texts as key clicks, Qt keys as one press."""
    for key in keys:
        widget = QApplication.focusWidget()
        assert widget is not None
        if isinstance(key, str):
            for char in key:
                if char.isascii():
                    qtbot.keyClick(widget, char)
                else:  # e.g. an en dash: QTest's key clicks take ASCII only
                    QTest.sendKeyEvent(QTest.KeyAction.Click, widget, Qt.Key.Key_unknown,
                                       char, Qt.KeyboardModifier.NoModifier)
        else:
            qtbot.keyClick(widget, key)


@pytest.fixture
def survey(tmp_path):
    """A copy of the survey sample and its sidecar (saving must not touch the bundled one)."""
    for name in ("survey.csv", "survey.csv.schema.json"):
        shutil.copy(sample_path("survey").with_name(name), tmp_path / name)
    return tmp_path / "survey.csv"


@pytest.fixture
def affairs(tmp_path):
    """A survey file without a schema: ages, a 1–5 scale, a 0/1 column, a word column."""
    rng = np.random.default_rng(12)
    n = 300
    path = tmp_path / "affairs.csv"
    pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "religious": rng.integers(1, 6, n),
        "children": rng.integers(0, 2, n),
        "gender": rng.choice(["female", "male"], n),
    }).to_csv(path, index=False)
    return path


@pytest.fixture
def panel(qtbot, affairs):
    widget = SchemaPanel()
    qtbot.addWidget(widget)
    widget.resize(420, 600)
    widget.set_dataset(open_dataset(affairs))
    widget.show()
    qtbot.waitExposed(widget)
    widget.activateWindow()
    qtbot.waitUntil(widget.isActiveWindow, timeout=2000)
    return widget


# --- item 4: a click on a row chooses the analysis column ---------------------------------


def test_clicking_a_row_chooses_the_analysis_column_at_once(qtbot, survey, monkeypatch):
    win = open_window(qtbot, survey, monkeypatch)
    try:
        win.columns_dock.show()
        win.columns_dock.raise_()
        panel, combo = win.schema_panel, win.analysis_panel.column_combo
        chosen = []
        panel.column_chosen.connect(chosen.append)
        for name in ("faculty", "gpa", "age"):
            click(qtbot, panel, name)
            assert win.session.column == name
            assert combo.currentData() == name
        # The analysis column changed elsewhere: the list's current row follows it, and a
        # click on another row chooses that one.
        pick(qtbot, combo, "gpa")
        assert win.session.column == "gpa" and panel.current_column() == "gpa"
        click(qtbot, panel, "age")
        assert win.session.column == "age" and combo.currentData() == "age"
        assert chosen == ["faculty", "gpa", "age", "gpa", "age"]
        # The keyboard moves the choice too.
        panel.table.setFocus()
        qtbot.keyClick(panel.table, Qt.Key.Key_Down)
        assert win.session.column == "hours_studied_per_week"
    finally:
        close_window(win)


def test_show_column_follows_the_analysis_column_without_choosing_again(qtbot, panel):
    chosen = []
    panel.column_chosen.connect(chosen.append)
    panel.show_column("gender")
    assert panel.current_column() == "gender"
    panel.show_column("nope")  # unknown: nothing
    assert panel.current_column() == "gender"
    assert chosen == ["gender"]  # a move of the current row, heard once


# --- item 5: Tab in the bounds editor -----------------------------------------------------


def test_tab_moves_from_lower_to_upper_and_enter_declares_both(qtbot, panel):
    editor = open_bounds_editor(qtbot, panel, "age")
    type_keys(qtbot, "18", Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is editor.upper  # still in the editor
    type_keys(qtbot, "65", Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.schema()["age"].bounds == (18.0, 65.0), timeout=2000)
    assert panel.cell_texts("age")[2] == "18 – 65"
    assert panel.undo_stack.count() == 1
    assert panel.undo_stack.undoText() == "Set bounds of 'age' to 18 – 65"
    qtbot.keyClick(panel.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert panel.cell_texts("age")[2] == "undeclared"


@pytest.mark.parametrize("tab_in_table", [True, False])  # the window turns it off
def test_a_tab_from_the_upper_bound_declares_both_and_moves_on(qtbot, panel, tab_in_table):
    panel.table.setTabKeyNavigation(tab_in_table)
    open_bounds_editor(qtbot, panel, "age")
    type_keys(qtbot, "18", Qt.Key.Key_Tab, "65", Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: panel.schema()["age"].bounds == (18.0, 65.0), timeout=2000)
    qtbot.waitUntil(lambda: panel.table.findChild(sp.BoundsEditor) is None, timeout=2000)
    assert panel.cell_texts("age")[2] == "18 – 65"


def test_shift_tab_goes_back_to_the_lower_bound(qtbot, panel):
    editor = open_bounds_editor(qtbot, panel, "age")
    type_keys(qtbot, "20", Qt.Key.Key_Tab, "65", Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is editor.lower
    type_keys(qtbot, "18", Qt.Key.Key_Return)  # the lower field's text was selected
    qtbot.waitUntil(lambda: panel.schema()["age"].bounds == (18.0, 65.0), timeout=2000)


@pytest.mark.parametrize("typed", ["18-65", "18–65", "18, 65", "18 to 65"])
def test_both_bounds_typed_in_one_field(qtbot, panel, typed):
    open_bounds_editor(qtbot, panel, "age")
    type_keys(qtbot, typed, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.schema()["age"].bounds == (18.0, 65.0), timeout=2000)
    assert panel.cell_texts("age")[2] == "18 – 65"
    assert panel.message_text() == ""


def test_a_half_declared_column_says_what_is_missing_once_beside_it(qtbot, panel):
    open_bounds_editor(qtbot, panel, "age")
    type_keys(qtbot, "18", Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "?" in panel.cell_texts("age")[2], timeout=2000)
    assert panel.cell_texts("age")[2] == "18 – ? · upper bound missing"
    shown = [panel.summary.text(), panel.source_line.text(), panel.message_text(),
             panel.legend.text()]
    assert not any("missing" in text for text in shown)  # said once, in the cell
    schema = panel.schema()
    assert schema["age"].bounds is None and schema.missing("age") == "upper bound missing"
    assert schema.missing("religious") is None


# --- item 6: where a declaration comes from -----------------------------------------------


def test_the_source_of_a_declaration_follows_declare_save_and_undo(qtbot, panel):
    seen = []
    panel.schema_changed.connect(seen.append)
    click(qtbot, panel, "religious")
    assert "guessed from the data" in panel.source_line.text()
    assert panel.schema().source("religious") is Source.GUESSED

    open_bounds_editor(qtbot, panel, "religious")
    type_keys(qtbot, "1-5", Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.schema()["religious"].bounds == (1.0, 5.0), timeout=2000)
    assert "religious</b>: " in panel.source_line.text()
    assert "declared by you, unsaved" in panel.source_line.text()
    assert seen[-1].source("religious") is Source.DECLARED
    tip = panel.model.data(panel.model.index(panel.model.row_of("religious"), sp.COL_TYPE),
                           Qt.ItemDataRole.ToolTipRole)
    assert tip == "numeric (declared by you, unsaved)"

    with qtbot.waitSignal(panel.saved, timeout=2000):
        qtbot.keyClick(panel.table, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert "saved in the schema file (affairs.csv.schema.json)" in panel.source_line.text()
    assert seen[-1].source("religious") is Source.SAVED  # the session hears the save
    assert seen[-1].source("age") is Source.SAVED  # saved types are declared too

    qtbot.keyClick(panel.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert "declared by you, unsaved" in panel.source_line.text()  # differs from the file
    qtbot.keyClick(panel.table, Qt.Key.Key_Z,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert "saved in the schema file" in panel.source_line.text()  # as the file holds it

    panel.set_dataset(open_dataset(panel.dataset.path))  # opened again
    click(qtbot, panel, "religious")
    assert "saved in the schema file" in panel.source_line.text()


# --- item 7: 0/1 codes shown as they are; value labels an explicit step --------------------


def test_a_zero_one_column_shows_its_codes_not_yes_no(qtbot, affairs, monkeypatch):
    win = open_window(qtbot, affairs, monkeypatch)
    try:
        panel = win.schema_panel
        assert panel.cell_texts("children")[1:] == ("categorical", "0, 1")
        tip = panel.model.data(panel.model.index(panel.model.row_of("children"),
                                                 sp.COL_DOMAIN), Qt.ItemDataRole.ToolTipRole)
        assert "codes 0, 1, shown as they are" in tip
        win.columns_dock.show()
        win.columns_dock.raise_()
        click(qtbot, panel, "children")
        assert win.session.column == "children"
        assert set(win.session.values) == {"0", "1"}  # what the mechanisms count
        assert win.session.spec.categories == ("0", "1")
    finally:
        close_window(win)


def _label_dialog(qtbot, panel, name):
    click(qtbot, panel, name)
    assert panel.labels_button.isVisible() and panel.labels_button.isEnabled()
    assert panel.labels_button.text() == "Label values…"
    qtbot.mouseClick(panel.labels_button, Qt.MouseButton.LeftButton)
    dialog = panel._labels_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_value_labels_are_an_explicit_undoable_step_saved_in_the_schema_file(qtbot, panel):
    click(qtbot, panel, "age")
    # Numeric: nothing to label; the bounds help has the button's place.
    assert not panel.labels_button.isVisible() and not panel.labels_action.isEnabled()
    assert panel.help_button.isVisible()
    dialog = _label_dialog(qtbot, panel, "children")
    assert list(dialog.fields) == ["0", "1"]
    qtbot.keyClicks(dialog.fields["0"], "no")
    qtbot.keyClicks(dialog.fields["1"], "yes")
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert panel.cell_texts("children")[2] == "0 = no, 1 = yes"
    assert panel.undo_stack.undoText() == "Label values of 'children'"
    qtbot.keyClick(panel.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert panel.cell_texts("children")[2] == "0, 1"
    qtbot.keyClick(panel.table, Qt.Key.Key_Z,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert panel.cell_texts("children")[2] == "0 = no, 1 = yes"

    with qtbot.waitSignal(panel.saved, timeout=2000):
        qtbot.keyClick(panel.table, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    saved = json.loads(sidecar_path(panel.dataset.path).read_text(encoding="utf-8"))
    assert saved["schema_version"] == 2
    children = next(c for c in saved["columns"] if c["name"] == "children")
    assert children == {"name": "children", "type": "categorical", "categories": ["0", "1"],
                        "labels": {"0": "no", "1": "yes"}}

    reopened = open_dataset(panel.dataset.path)
    panel.set_dataset(reopened)
    assert panel.cell_texts("children")[2] == "0 = no, 1 = yes"
    assert reopened.schema["children"].label_of("1") == "yes"
    # The data keeps its codes: labels are for reading.
    from dpstudio.data import column_values
    assert set(column_values(reopened.frame, reopened.schema["children"])) == {"0", "1"}


def test_an_ambiguous_label_is_refused_and_changes_nothing(qtbot, panel):
    click(qtbot, panel, "children")
    assert panel.labels_action in panel.table.actions()  # also in the row's context menu
    qtbot.keyClick(panel.table, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    dialog = panel._labels_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.keyClicks(dialog.fields["0"], "1")  # would read like the other code
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert panel.cell_texts("children")[2] == "0, 1"
    assert "two categories would both read '1'" in panel.message_text()
    assert panel.undo_stack.count() == 0


def test_changing_categories_keeps_the_labels_of_those_that_stay(qtbot, panel):
    assert panel.edit("gender", "categories", "female, male, other")
    assert panel.edit("gender", "labels", {"female": "F", "male": "M"})
    assert panel.edit("gender", "categories", "female, other")
    assert panel.cell_texts("gender")[2] == "female = F, other"
