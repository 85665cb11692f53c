"""The schema panel: in-place declarations, refused edits, undo/redo, saving, guidance."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QMessageBox

from dpstudio.data import ColumnType, open_dataset, sample_path, sidecar_path
from dpstudio.data.schema import load_schema
from dpstudio.ui import schema_panel as sp
from dpstudio.ui.schema_panel import SchemaPanel, edit_row, suggest_bounds


@pytest.fixture
def survey(tmp_path):
    """A copy of the survey sample and its sidecar (saving must not touch the bundled one)."""
    for name in ("survey.csv", "survey.csv.schema.json"):
        shutil.copy(sample_path("survey").with_name(name), tmp_path / name)
    return open_dataset(tmp_path / "survey.csv")


@pytest.fixture
def panel(qtbot, survey):
    widget = SchemaPanel()
    qtbot.addWidget(widget)
    widget.resize(460, 600)
    widget.set_dataset(survey)
    return widget


@pytest.fixture
def plain(tmp_path):
    path = tmp_path / "plain.csv"
    pd.DataFrame({"age": [30, 41, 52], "region": ["N", "S", "N"], "note": ["a", "b", "c"]}
                 ).to_csv(path, index=False)
    return open_dataset(path)


def test_shows_types_and_declared_domains(panel):
    assert panel.column_names()[:3] == ["respondent_id", "survey_mode", "faculty"]
    assert panel.cell_texts("age") == ("age", "numeric", "18 – 100")
    assert panel.cell_texts("faculty")[1] == "categorical"
    assert panel.cell_texts("faculty")[2].startswith("Arts, Business")
    assert panel.cell_texts("cheated_on_exam") == ("cheated_on_exam", "yes/no", "yes, no")
    assert panel.cell_texts("respondent_id")[1:] == ("text", "—")
    assert panel.undeclared_columns() == []
    assert "all 9 columns declared" in panel.summary.text()


def test_undeclared_columns_are_shown_as_such(qtbot, plain):
    panel = SchemaPanel()
    qtbot.addWidget(panel)
    changes = []
    panel.schema_changed.connect(changes.append)
    panel.set_dataset(plain)
    assert panel.cell_texts("age")[2] == "undeclared"
    assert panel.cell_texts("region")[2] == "undeclared"
    assert panel.undeclared_columns() == ["age", "region"]
    assert "2 of 2 columns undeclared" in panel.summary.text()
    index = panel.model.index(0, sp.COL_DOMAIN)
    # (model.data, not index.data: the latter drops a reference to None in PySide6 6.12.0)
    assert panel.model.data(index, Qt.ItemDataRole.FontRole).italic()
    assert panel.model.data(index, Qt.ItemDataRole.BackgroundRole) is not None
    guessed_type = panel.model.index(0, sp.COL_TYPE)
    assert panel.model.data(guessed_type, Qt.ItemDataRole.FontRole).italic()
    assert [s.names for s in changes] == [("age", "region", "note")]


def test_edits_emit_the_schema_and_undo_restores_the_previous_bounds(panel):
    seen = []
    panel.schema_changed.connect(seen.append)
    assert panel.edit("age", "lower", "0")
    assert panel.edit("age", "upper", "120")
    assert panel.schema()["age"].bounds == (0.0, 120.0)
    assert seen[-1]["age"].bounds == (0.0, 120.0) and len(seen) == 2
    assert panel.is_dirty() and "unsaved changes" in panel.summary.text()

    panel.undo_action.trigger()
    assert panel.schema()["age"].bounds == (0.0, 100.0)
    panel.undo_action.trigger()
    assert panel.schema()["age"].bounds == (18.0, 100.0)
    assert seen[-1]["age"].bounds == (18.0, 100.0)
    assert not panel.is_dirty()
    panel.redo_action.trigger()
    assert panel.schema()["age"].bounds == (0.0, 100.0)
    assert panel.undo_stack.undoText() == "Set lower bound of 'age' to 0"


def test_shortcuts(panel):
    assert panel.undo_action.shortcut().toString() == "Ctrl+Z"
    assert panel.redo_action.shortcut().toString() == "Ctrl+Shift+Z"
    assert panel.save_action.shortcut().toString() == "Ctrl+S"
    assert panel.undo_action.shortcutContext() == Qt.ShortcutContext.WidgetWithChildrenShortcut


@pytest.mark.parametrize(
    ("field", "text", "message"),
    [
        ("lower", "150", "reversed bounds (lower 150 > upper 100)"),
        ("upper", "10", "reversed bounds (lower 18 > upper 10)"),
        ("lower", "inf", "the lower bound must be finite"),
        ("upper", "nan", "the upper bound must be finite"),
        ("lower", "abc", "the lower bound must be a number, not 'abc'"),
        ("upper", "18", "lower and upper bounds are both 18"),
    ],
)
def test_bad_bounds_are_refused_with_a_message_and_change_nothing(panel, field, text, message):
    seen = []
    panel.schema_changed.connect(seen.append)
    before = panel.schema()
    assert not panel.edit("age", field, text)
    assert panel.schema() == before and seen == []
    assert panel.undo_stack.count() == 0 and not panel.is_dirty()
    shown = panel.message_text()
    assert message in shown and "not applied" in shown and "keeps bounds 18 – 100" in shown
    assert panel.cell_texts("age")[2] == "18 – 100"
    assert panel.edit("age", "lower", "0")  # a good edit clears the message
    assert panel.message_text() == ""


def test_editing_through_the_model_goes_through_the_same_rules(panel):
    row = panel.model.row_of("age")
    cell = panel.model.index(row, sp.COL_DOMAIN)
    assert panel.model.data(cell, Qt.ItemDataRole.EditRole) == ("18", "100")
    assert not panel.model.setData(cell, ("18", "-5"))
    assert "reversed bounds" in panel.message_text()
    assert panel.model.setData(cell, ("150", "1,000"))  # both at once: no reversed midway
    assert panel.schema()["age"].bounds == (150.0, 1000.0)
    assert panel.undo_stack.undoText() == "Set bounds of 'age' to 150 – 1,000"
    text = panel.model.index(panel.model.row_of("respondent_id"), sp.COL_DOMAIN)
    assert not panel.model.flags(text) & Qt.ItemFlag.ItemIsEditable


def test_editing_in_the_table_with_the_keyboard(qtbot, panel):
    panel.show()
    qtbot.waitExposed(panel)
    panel.activateWindow()  # shortcuts need an active window (a real X server too)
    qtbot.waitUntil(panel.isActiveWindow, timeout=2000)
    table = panel.table
    cell = panel.model.index(panel.model.row_of("income"), sp.COL_DOMAIN)
    table.setCurrentIndex(cell)
    table.edit(cell)
    editor = table.indexWidget(cell) or table.findChild(sp.BoundsEditor)
    assert isinstance(editor, sp.BoundsEditor)
    assert editor.texts() == ("0", "100000")
    editor.upper.setText("250000")
    qtbot.keyClick(editor.upper, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.schema()["income"].bounds == (0.0, 250000.0), timeout=2000)
    assert panel.cell_texts("income")[2] == "0 – 250,000"

    faculty = panel.model.index(panel.model.row_of("faculty"), sp.COL_DOMAIN)
    table.setCurrentIndex(faculty)
    table.edit(faculty)
    line = table.findChild(sp.QLineEdit)
    line.setText("Arts, Science")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.schema()["faculty"].categories == ("Arts", "Science"),
                    timeout=2000)
    qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert panel.schema()["faculty"].categories[:2] == ("Arts", "Business")
    qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ShiftModifier
                   | Qt.KeyboardModifier.ControlModifier)
    assert panel.schema()["faculty"].categories == ("Arts", "Science")
    with qtbot.waitSignal(panel.saved, timeout=2000):
        qtbot.keyClick(table, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert load_schema(sidecar_path(panel.dataset.path))["income"].bounds == (0.0, 250000.0)


def test_one_bound_alone_is_a_draft_until_the_other_comes(qtbot, plain):
    panel = SchemaPanel()
    qtbot.addWidget(panel)
    panel.set_dataset(plain)
    assert panel.edit("age", "lower", "0")
    assert panel.schema()["age"].bounds is None  # not declared yet
    # What is missing is said in the cell, beside the column (issue 12 item 5).
    assert panel.cell_texts("age")[2] == "0 – ? · upper bound missing"
    assert panel.schema().missing("age") == "upper bound missing"
    tip = panel.model.data(panel.model.index(0, sp.COL_DOMAIN), Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("Upper bound missing")
    assert panel.edit("age", "upper", "120")
    assert panel.schema()["age"].bounds == (0.0, 120.0)
    assert panel.undeclared_columns() == ["region"]


def test_types_and_categories(qtbot, plain):
    panel = SchemaPanel()
    qtbot.addWidget(panel)
    panel.set_dataset(plain)
    assert panel.edit("region", "categories", 'North, South, "East, far"')
    assert panel.schema()["region"].categories == ("North", "South", "East, far")
    assert not panel.edit("region", "categories", "N, S, N")
    assert "category 'N' is listed twice" in panel.message_text()
    assert panel.edit("region", "type", "yes/no")
    assert panel.schema()["region"].type is ColumnType.BOOLEAN
    assert panel.edit("region", "type", "categorical")  # the categories come back
    assert panel.schema()["region"].categories == ("North", "South", "East, far")
    assert panel.edit("note", "type", "numeric")
    assert panel.row("note").explicit
    assert not panel.edit("note", "categories", "x")
    for _ in range(4):
        panel.undo_action.trigger()
    assert panel.schema() == panel.dataset.schema


def test_save_writes_the_sidecar_atomically_and_keeps_extra_declarations(panel, tmp_path,
                                                                          monkeypatch):
    sidecar = sidecar_path(panel.dataset.path)
    data = json.loads(sidecar.read_text(encoding="utf-8"))
    data["columns"].append({"name": "retired_column", "type": "numeric", "lower": 0,
                            "upper": 1})
    sidecar.write_text(json.dumps(data), encoding="utf-8")
    panel.set_dataset(open_dataset(panel.dataset.path))
    saved = []
    panel.saved.connect(saved.append)
    assert panel.edit("income", "upper", "250000")
    assert panel.save()
    assert saved == [sidecar] and not panel.is_dirty()
    on_disk = load_schema(sidecar)
    assert on_disk["income"].bounds == (0.0, 250000.0)
    assert "retired_column" in on_disk
    assert on_disk["age"].description == "Age in whole years"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert "Saved to survey.csv.schema.json" in panel.message_text()


def test_save_failure_shows_a_dialog(panel, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "critical",
                        staticmethod(lambda *a, **k: shown.append(a[2])))
    monkeypatch.setattr(sp, "save_schema", _raise_data_error)
    assert panel.edit("age", "lower", "0")
    assert not panel.save()
    assert shown == ["survey.csv.schema.json: cannot save schema (Permission denied)"]
    assert panel.is_dirty()


def _raise_data_error(*_args, **_kwargs):
    from dpstudio.data import DataError

    raise DataError("survey.csv.schema.json: cannot save schema (Permission denied)")


def test_guidance_uses_names_never_values():
    assert suggest_bounds("age")[:2] == (0.0, 120.0)
    assert suggest_bounds("hours_studied_per_week")[:2] == (0.0, 168.0)
    assert suggest_bounds("Percent Female")[:2] == (0.0, 100.0)
    assert suggest_bounds("gpa")[:2] == (0.0, 4.0)
    assert suggest_bounds("income") is None


def test_help_dialog_applies_a_suggestion_as_one_undoable_edit(panel, monkeypatch):
    panel.table.setCurrentIndex(panel.model.index(panel.model.row_of("age"), sp.COL_DOMAIN))

    def accept_suggestion(dialog):
        assert "never read from the data" in dialog.findChildren(sp.QLabel)[0].text()
        dialog.use_button.click()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(sp.BoundsHelpDialog, "exec", accept_suggestion)
    panel.show_bounds_help()
    assert panel.schema()["age"].bounds == (0.0, 120.0)
    panel.undo_action.trigger()
    assert panel.schema()["age"].bounds == (18.0, 100.0)


def test_edit_row_is_pure():
    row = sp.Row(spec=sp.ColumnSpec("x", ColumnType.NUMERIC, lower=0, upper=1))
    assert edit_row(row, "upper", "1") is None
    new = edit_row(row, "upper", "2")
    assert new.spec.bounds == (0.0, 2.0) and row.spec.bounds == (0.0, 1.0)


def test_a_long_name_is_elided_in_cells_messages_and_guidance(qtbot, tmp_path):
    """A header can hold any name: cells, refusals, undo texts and the guidance show it
    bounded (and escaped in rich text), the tooltip and the schema keep it whole."""
    name = "<b>" + "y" * 1500 + "_age"  # whole in a tooltip (up to 2,000 characters)
    path = tmp_path / "long.csv"
    pd.DataFrame({name: [30, 41], "n": [1, 2]}).to_csv(path, index=False)
    panel = SchemaPanel()
    qtbot.addWidget(panel)
    panel.set_dataset(open_dataset(path))
    cell = panel.model.index(0, sp.COL_NAME)
    assert len(panel.model.data(cell)) <= 60 and panel.model.data(cell).endswith("…")
    assert panel.model.data(cell, Qt.ItemDataRole.ToolTipRole) == name
    assert not panel.edit(name, "lower", "abc")
    message = panel.message_text()
    assert "must be a number, not 'abc'" in message and "not applied" in message
    assert len(message) < 300
    assert panel.edit(name, "bounds", ("0", "120"))
    assert panel.schema()[name].bounds == (0.0, 120.0)
    assert len(panel.undo_stack.undoText()) < 100
    dialog = sp.BoundsHelpDialog(panel.row(name).spec)
    qtbot.addWidget(dialog)
    notes = [label.text() for label in dialog.findChildren(sp.QLabel)
             if label.text().startswith("For ")]
    assert len(notes) == 1 and "&lt;b&gt;" in notes[0] and len(notes[0]) < 400
    assert dialog.suggestion[:2] == (0.0, 120.0)  # guidance still reads the whole name
