"""Analysis ▸ New Release Plan…, end to end on the bundled survey sample: build a plan of
three statistics with real clicks and keys, change a weight by typing and watch each
expected error move the right way (in the model), undo it, switch to accuracy targets,
see a target the budget cannot buy refused in one red sentence, release the plan into a
project and find its one charge in the Ledger tab."""

from __future__ import annotations

import math
import shutil
import tomllib
from decimal import Decimal
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from dpstudio.analysis.plan_split import half_width
from dpstudio.data import open_dataset, sample_path
from dpstudio.project import Project
from dpstudio.project.spec_plan import parse_plan_spec
from dpstudio.ui import session as session_module
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.plan_model import COL_VALUE
from dpstudio.ui.plan_view import PlanDialog

TIMEOUT_MS = 15_000
#: The plan of the issue's test: a count, a grouped mean by a declared category, a histogram.
PLAN = (("age", "count", None), ("hours_studied_per_week", "mean", "faculty"),
        ("faculty", "histogram", None))


@pytest.fixture
def data(tmp_path) -> Path:
    """A copy of the survey sample and its declarations (the release reads this file)."""
    folder = tmp_path / "data"
    folder.mkdir()
    src = sample_path("survey")
    shutil.copy(src, folder / src.name)
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / (src.name + ".schema.json"))
    return folder / src.name


@pytest.fixture
def window(qtbot, data, tmp_path, monkeypatch):
    """The window on the copy, with a project made through the project API opened."""
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    project = tmp_path / "study.dpstudio"
    Project.create(project, epsilon=5.0, delta=1e-5).close()
    win = MainWindow(open_dataset(data))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    assert win.projects.open_project(project)
    yield win
    win.analysis.shutdown()
    win.projects.shutdown()


def _choose(combo, value) -> None:
    index = combo.findData(value)
    assert index >= 0 and combo.model().item(index).isEnabled(), value
    combo.setCurrentIndex(index)


def _open_plan(win, qtbot) -> PlanDialog:
    """Ctrl+Shift+P, as the menu says."""
    assert win.plan_action.shortcut().toString() == "Ctrl+Shift+P"
    win.activateWindow()
    qtbot.keyClick(win, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)
    dialog = win.findChild(PlanDialog)
    assert dialog is not None and dialog.isVisible()
    return dialog


def _build(dialog, qtbot) -> None:
    for column, query, by in PLAN:
        _choose(dialog.add_column, column)
        _choose(dialog.add_query, query)
        _choose(dialog.add_by, by)
        qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    # A mean's error needs a PUBLIC number of rows: typed, never read off the data.
    dialog.rows.selectAll()
    qtbot.keyClicks(dialog.rows, "2000")
    qtbot.keyClick(dialog.rows, Qt.Key.Key_Return)
    assert dialog.model.public_rows == 2000
    assert [r["column"] for r in dialog.model.rows()] == [c for c, _q, _b in PLAN]


def _type_value(dialog, qtbot, row: int, text: str) -> None:
    """Type a weight or target into row ``row``'s cell and press Return."""
    dialog.edit_value(row)
    editor = dialog.table.viewport().findChild(QLineEdit)
    assert editor is not None and dialog.table.state() == dialog.table.State.EditingState
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    # The delegate commits on Return through a queued call.
    qtbot.waitUntil(lambda: dialog.table.state() != dialog.table.State.EditingState,
                    timeout=TIMEOUT_MS)


def test_plan_end_to_end_split_errors_release_and_ledger(window, qtbot, tmp_path):
    dialog = _open_plan(window, qtbot)
    # Undeclared columns are offered greyed, with their reason.
    ident = dialog.add_column.findData("respondent_id")
    assert not dialog.add_column.model().item(ident).isEnabled()
    assert "free text" in dialog.add_column.itemText(ident)
    _build(dialog, qtbot)
    model = dialog.model
    assert model.refusal is None and dialog.release_button.isEnabled()
    before = model.half_widths()
    assert all(math.isfinite(h) and h > 0 for h in before)
    # Equal weights: each statistic gets ε/3, and the half-widths are the closed forms.
    eps = dialog.epsilon.value()
    assert [s[0] for s in model.shares()] == pytest.approx([eps / 3] * 3)
    for i, h in enumerate(before):
        spec = model.plan.query_spec(i)
        assert h == pytest.approx(half_width(spec, bool(model.plan.statistics[i].by),
                                             model.plan.group_rows(i)))
    # The error cell shows the clamping bias the data shows beside the noise's half-width.
    from dpstudio.ui.plan_model import COL_ERROR

    for i, err in enumerate(model.errors()):
        text = model.index(i, COL_ERROR).data()
        assert ("bias" in text) == bool(err is not None and err.bias), text

    # A weight typed in the table: more ε for the count, less for the others.
    _type_value(dialog, qtbot, 0, "3")
    assert model.rows()[0]["weight"] == 3.0
    after = model.half_widths()
    assert [s[0] for s in model.shares()] == pytest.approx([eps * 3 / 5, eps / 5, eps / 5])
    assert after[0] < before[0]   # more ε → smaller error
    assert after[1] > before[1] and after[2] > before[2]
    # Laplace: the half-width scales as 1/ε exactly.
    assert after[0] == pytest.approx(before[0] * (1 / 3) / (3 / 5))
    assert after[2] == pytest.approx(before[2] * (1 / 3) / (1 / 5))
    assert model.data(model.index(0, COL_VALUE)) == "3"

    # Accuracy targets: the targets start from the current split and fit the budget.
    _choose(dialog.method, "accuracy")
    assert model.headerData(COL_VALUE, Qt.Orientation.Horizontal) == "Target ±"
    targets = [r["target"] for r in model.rows()]
    assert all(t >= h for t, h in zip(targets, after, strict=True))
    need = model.plan.needed()
    assert [s[0] for s in model.shares()] == pytest.approx([e for e, _ in need])
    assert model.half_widths() == pytest.approx(targets)
    total = model.table.total[0]
    assert total == pytest.approx(sum(e for e, _ in need)) and total <= eps
    assert model.refusal is None and dialog.release_button.isEnabled()

    # Release: check, confirm (its Release button clicked), one charge, the Ledger tab.
    with qtbot.waitSignal(window.projects.plan_checked, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.release_button, Qt.MouseButton.LeftButton)
    confirm = dialog.confirm
    assert confirm is not None and confirm.isVisible()
    with qtbot.waitSignal(window.projects.release_done, timeout=TIMEOUT_MS) as done:
        qtbot.mouseClick(confirm.release_button, Qt.MouseButton.LeftButton)
    record = done.args[0]
    assert record.query == "plan"
    assert float(record.epsilon) == pytest.approx(total, rel=1e-9)
    assert record.epsilon >= sum(Decimal(repr(e)) for e, _ in need) - Decimal("1e-12")
    ledger = window.ledger_view
    assert window.tabs.currentWidget() is ledger
    rows = ledger.rows()
    assert len(rows) == 1
    assert rows[0][2] == "Release plan" and float(rows[0][5]) == pytest.approx(total, rel=1e-3)
    with Project.open(window.projects.project.path) as project:
        [entry] = project.ledger(record.dataset_id)
        assert entry.id == record.id and entry.epsilon == record.epsilon
        stats = entry.result["statistics"]
        assert [s["label"] for s in stats] == [s.label for s in model.plan.statistics]
    assert f"#{record.id}" in dialog.status.text()
    assert not dialog.release_button.isEnabled() or model.refusal is None


def test_undo_of_a_typed_weight(window, qtbot):
    dialog = _open_plan(window, qtbot)
    _build(dialog, qtbot)
    model = dialog.model
    before = model.half_widths()
    _type_value(dialog, qtbot, 1, "4")
    edited = model.half_widths()
    assert edited[1] < before[1]
    dialog.table.setFocus()
    qtbot.keyClick(dialog.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert model.rows()[1]["weight"] == 1.0
    assert model.half_widths() == pytest.approx(before)
    qtbot.keyClick(dialog.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)
    assert model.rows()[1]["weight"] == 4.0
    assert model.half_widths() == pytest.approx(edited)
    # Removing a statistic is undone too.
    dialog.table.selectRow(2)
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    assert [r["column"] for r in model.rows()] == ["age", "hours_studied_per_week"]
    qtbot.keyClick(dialog.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert [r["column"] for r in model.rows()] == [c for c, _q, _b in PLAN]
    assert model.half_widths() == pytest.approx(edited)
    # A weight that is not a positive number is refused in one sentence, nothing changes.
    _type_value(dialog, qtbot, 1, "-2")
    assert model.rows()[1]["weight"] == 4.0
    assert dialog.status.text().startswith("Weight must be a positive number")


def test_targets_beyond_the_budget_are_refused_in_one_red_sentence(window, qtbot):
    dialog = _open_plan(window, qtbot)
    _build(dialog, qtbot)
    _choose(dialog.method, "accuracy")
    model = dialog.model
    assert model.refusal is None and dialog.release_button.isEnabled()
    _type_value(dialog, qtbot, 0, "0.5")  # a count within ±0.5: far more ε than there is
    assert model.rows()[0]["target"] == 0.5
    refusal = dialog.refusal.text()
    assert dialog.refusal.isVisibleTo(dialog)
    assert refusal.startswith("The targets need ε = ") and "more than the plan's ε = 1" in refusal
    assert refusal.count(". ") == 0 and refusal.endswith(".")  # one sentence
    assert "b42318" in dialog.refusal.styleSheet()  # red
    assert not dialog.release_button.isEnabled()
    # The table still shows what the targets would take.
    assert model.shares()[0][0] > dialog.epsilon.value()
    # Raising the total buys it: the sentence goes and Release… is offered again.
    dialog.epsilon.selectAll()
    qtbot.keyClicks(dialog.epsilon, "20")
    qtbot.keyClick(dialog.epsilon, Qt.Key.Key_Return)
    assert model.epsilon == 20.0
    assert model.refusal is None and not dialog.refusal.isVisibleTo(dialog)
    assert dialog.release_button.isEnabled()


def test_tooltips_say_each_term_in_one_sentence(window, qtbot):
    dialog = _open_plan(window, qtbot)
    _build(dialog, qtbot)
    model = dialog.model
    header = {model.headerData(c, Qt.Orientation.Horizontal):
              model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
              for c in range(model.columnCount())}
    tips = [header["ε share"], header["δ share"], header["Weight"], header["By"],
            dialog.epsilon.toolTip(), dialog.confidence.toolTip(), dialog.add_by.toolTip()]
    _choose(dialog.mechanism, "gaussian")
    assert dialog.delta.isEnabled()
    tips.append(dialog.delta.toolTip())
    _choose(dialog.method, "accuracy")
    tips.append(model.headerData(COL_VALUE, Qt.Orientation.Horizontal,
                                 Qt.ItemDataRole.ToolTipRole))
    for tip in tips:
        assert tip and tip.endswith(".") and ". " not in tip, tip
    assert "half-width" in tips[-1] and "εᵢ = ε·wᵢ/Σw" in header["Weight"]
    # Gaussian noise spends δ: the shares say so, and a Laplace plan spends none.
    assert all(d > 0 for _e, d in model.shares())
    _choose(dialog.mechanism, "laplace")
    assert not dialog.delta.isEnabled() and all(d == 0 for _e, d in model.shares())


def test_undeclared_columns_are_greyed_with_their_reason(window, qtbot):
    from dpstudio.data.schema import ColumnSpec, ColumnType

    dialog = _open_plan(window, qtbot)
    _choose(dialog.add_column, "gpa")
    _choose(dialog.add_query, "mean")
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    assert dialog.model.refusal is None
    # The analyst withdraws gpa's bounds in the Columns panel: greyed, and the plan refused.
    window.session.set_column_spec(ColumnSpec("gpa", ColumnType.NUMERIC))
    gpa = dialog.add_column.findData("gpa")
    assert not dialog.add_column.model().item(gpa).isEnabled()
    assert dialog.add_column.itemText(gpa) == "gpa — bounds not declared: declare them in the " \
                                              "Columns panel"
    assert "bounds" in dialog.model.refusal and not dialog.release_button.isEnabled()
    # Keys: a categorical column without declared categories cannot group.
    window.session.set_column_spec(ColumnSpec("year_of_study", ColumnType.CATEGORICAL))
    _choose(dialog.add_column, "age")
    _choose(dialog.add_query, "count")
    year = dialog.add_by.findData("year_of_study")
    assert not dialog.add_by.model().item(year).isEnabled()
    assert "keys not declared" in dialog.add_by.itemText(year)


def test_a_sum_grouped_by_two_declared_key_columns(window, qtbot):
    dialog = _open_plan(window, qtbot)
    _choose(dialog.add_column, "income")
    _choose(dialog.add_query, "sum")
    assert not dialog.add_by2.isEnabled()  # a second key once a first is chosen
    _choose(dialog.add_by, "faculty")
    assert dialog.add_by2.findData("faculty") < 0
    _choose(dialog.add_by2, "survey_mode")
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    model = dialog.model
    assert model.rows()[0]["by"] == ("faculty", "survey_mode")
    assert model.refusal is None
    assert model.plan.keys["survey_mode"] == ("online", "classroom")  # declared, not read
    [h] = model.half_widths()
    assert math.isfinite(h) and model.data(model.index(0, 2)) == "faculty × survey_mode"


def test_the_plan_saved_as_a_spec_reads_back_as_the_same_plan(window, qtbot, data, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    dialog = _open_plan(window, qtbot)
    _build(dialog, qtbot)
    _type_value(dialog, qtbot, 2, "2.5")
    target = data.parent / "plan.toml"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target.with_suffix("")), "")))
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert target.is_file() and "plan.toml" in dialog.status.text()
    spec = parse_plan_spec(tomllib.loads(target.read_text(encoding="utf-8")), "plan.toml",
                           data.parent)
    assert Path(spec.dataset) == data  # written relative to the spec, read back absolute
    plan = dialog.model.plan
    assert spec.plan.statistics == plan.statistics
    assert (spec.plan.method, spec.plan.weights) == ("weights", (1.0, 1.0, 2.5))
    assert (spec.plan.epsilon, spec.plan.rows) == (plan.epsilon, 2000)
