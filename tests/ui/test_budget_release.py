"""Budget and release as a person meets them (issue 12 items 8, 9, 10, 11 and the
mechanism combo of 15), driven through the real widgets.

- The budget bar and its words: what is spent and what this release would add are two
  things ("ε 1 spent + 1 this release of 3 → 1 left"), never "33% used" before anything
  was released.
- Release… is disabled, with the reason as its text and tooltip, when the release does
  not fit; "Use the remaining ε" sets ε to exactly what the project's accountant leaves.
- The release dialog leads with "Real release — cannot be undone" and ticks the
  stakeholder report.
- ε, δ and parameters typed out of range are kept as typed, marked, refused in the CLI's
  sentence, and nothing is computed or released with them.
"""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette, QTextDocumentFragment
from PySide6.QtWidgets import QDialog, QDialogButtonBox

from dpstudio.data import open_dataset, sample_path
from dpstudio.project import Project
from dpstudio.ui import session as session_module
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.project_dialogs import NewProjectDialog, ReleaseDialog

TIMEOUT_MS = 15_000
SIZE = (1400, 900)


@pytest.fixture
def data(tmp_path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    src = sample_path("survey")
    shutil.copy(src, folder / src.name)
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / (src.name + ".schema.json"))
    return folder / src.name


@pytest.fixture
def window(qtbot, data, monkeypatch):
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    win = MainWindow(open_dataset(data))
    qtbot.addWidget(win)
    win.resize(*SIZE)
    assert win.analysis.wait_idle(20)
    yield win
    win.analysis.shutdown()
    win.projects.shutdown()


def _project(win: MainWindow, tmp_path: Path, epsilon: float = 1.0) -> Path:
    path = tmp_path / "study.dpstudio"
    assert win.projects.create_project(path, epsilon=epsilon, delta=1e-5)
    return path


def _type(qtbot, box, text: str) -> None:
    """Select what the box shows, type ``text`` and press Enter, as a person does."""
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def _accept_dialogs(monkeypatch) -> list[ReleaseDialog]:
    shown: list[ReleaseDialog] = []

    def exec_(dialog: ReleaseDialog) -> int:
        shown.append(dialog)
        dialog.report_box.setChecked(False)  # keep the test quick: no PDF
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ReleaseDialog, "exec", exec_)
    return shown


def _release(win: MainWindow, qtbot):
    button = win.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(win.projects.release_done, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    return blocker.args[0]


# -- item 11: numbers typed out of range --------------------------------------------------

def test_epsilon_zero_typed_is_kept_marked_refused_and_not_released(window, qtbot, tmp_path):
    _project(window, tmp_path)
    panel, s = window.analysis_panel, window.session
    spin, release = panel.epsilon.spin, window.result_panel.release_button
    assert release.isEnabled()

    _type(qtbot, spin, "0")

    assert spin.text() == "0"  # before: replaced by 0.01, silently
    assert spin.property("invalid") is True
    assert spin.palette().color(QPalette.ColorRole.Base).name() == "#fdecea"  # light red
    why = "ε must be a finite number in (0, 100], got 0."
    assert panel.input_hint.text() == why and panel.input_hint.isVisibleTo(panel)
    assert why[:-1] in spin.toolTip()
    assert not release.isEnabled() and release.toolTip() == f"Nothing to release: {why}"
    # Nothing computed with it: the last valid ε stays, the preview says why.
    assert s.epsilon == 1.0 and s.settings() is None
    assert window.analysis.wait_idle(20)
    assert window.result_panel.preview is None
    assert "got 0" in window.result_panel.summary.text()
    # The same for 1000 (before: 100).
    _type(qtbot, spin, "1000")
    assert spin.text() == "1000" and s.epsilon == 1.0
    assert panel.input_hint.text() == "ε must be a finite number in (0, 100], got 1000."
    # A valid ε below the slider's range is taken exactly (before: 0.01).
    _type(qtbot, spin, "0.005")
    assert spin.text() == "0.005" and s.epsilon == 0.005
    assert spin.property("invalid") is False and not panel.input_hint.isVisibleTo(panel)
    assert release.isEnabled()
    assert window.analysis.wait_idle(20)
    assert window.result_panel.preview is not None


def test_delta_zero_typed_is_refused_while_the_mechanism_takes_delta(window, qtbot, tmp_path):
    _project(window, tmp_path)
    panel, s = window.analysis_panel, window.session
    s.set_mechanism("gaussian")
    release = window.result_panel.release_button
    assert panel.delta.isEnabled() and release.isEnabled()
    _type(qtbot, panel.delta, "0")
    assert panel.delta.text() == "0" and panel.delta.property("invalid") is True
    assert panel.input_hint.text() == "δ must be a finite number in (0, 1), got 0."
    assert not release.isEnabled() and s.delta == 1e-6
    # A pure mechanism takes no δ: the refused box no longer stops anything.
    s.set_mechanism("laplace")
    assert not panel.delta.isEnabled() and release.isEnabled()
    assert not panel.input_hint.isVisibleTo(panel)


def test_a_parameter_typed_out_of_range_is_kept_and_refused(window, qtbot, tmp_path):
    _project(window, tmp_path)
    s, form = window.session, window.analysis_panel.param_form
    s.set_query("quantile")
    s.set_mechanism("exponential")
    box = form.fields["candidates"]
    release = window.result_panel.release_button
    _type(qtbot, box, "1")
    assert box.text() == "1"  # before: 2, the range's end
    assert box.property("invalid") is True
    assert form.hints["candidates"].text() == (
        "candidates must be a finite number in [2, 1e+06], got 1.")  # the CLI's words
    assert s.params["candidates"] == 1024 and s.settings() is None
    assert not release.isEnabled()
    _type(qtbot, box, "64")
    assert s.params["candidates"] == 64 and box.property("invalid") is False
    assert form.hints["candidates"].text() == ""


def test_budget_totals_typed_out_of_range_are_kept_and_refused(window, qtbot, tmp_path):
    panel = window.analysis_panel.budget_panel
    box = panel.total_eps
    _type(qtbot, box, "0")
    assert box.text() == "0" and box.property("invalid") is True  # before: 0.01
    assert panel.totals_hint.text() == "a budget ε must be positive, got 0.0."
    assert window.session.total_epsilon == 3.0  # the last valid total stays in force
    assert panel.words.text().endswith("of 3 → 2 left")
    _type(qtbot, box, "5")
    assert box.property("invalid") is False and not panel.totals_hint.isVisibleTo(panel)
    assert window.session.total_epsilon == 5.0 and panel.words.text().endswith("of 5 → 4 left")
    # The same rule when creating a project: Create waits for a budget it can take.
    dialog = NewProjectDialog(window, tmp_path)
    qtbot.addWidget(dialog)
    create = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    _type(qtbot, dialog.delta, "1")
    assert dialog.delta.text() == "1" and not create.isEnabled()  # before: 0.1
    assert dialog.budget_hint.text() == "a budget δ must be below 1, got 1.0."
    _type(qtbot, dialog.delta, "1e-6")
    assert create.isEnabled() and dialog.values()["delta"] == 1e-6


# -- items 8 and 9: the budget bar, the words, and what does not fit ---------------------

def test_the_bar_and_words_add_up_and_this_release_is_not_spent(window, qtbot, tmp_path,
                                                                monkeypatch):
    panel = window.analysis_panel.budget_panel
    # No project: the session's budget, nothing spent.
    assert panel.words.text() == "ε 0 spent + 1 this release of 3 → 2 left"
    parts = panel.bar.parts()
    assert parts["spent"] == 0 and parts["this"] == pytest.approx(1 / 3)
    _project(window, tmp_path, epsilon=3.0)
    _accept_dialogs(monkeypatch)
    _release(window, qtbot)
    assert panel.words.text() == "ε 1 spent + 1 this release of 3 → 1 left"
    parts = panel.bar.parts()
    assert parts["spent"] == pytest.approx(1 / 3) and parts["this"] == pytest.approx(1 / 3)
    assert not parts["over"]
    # δ where a mechanism takes one.
    assert not panel.delta_words.isVisibleTo(panel)
    window.session.set_mechanism("gaussian")
    assert panel.delta_words.isVisibleTo(panel)
    assert panel.delta_words.text() == "δ 0 spent + 1e-06 this release of 1e-05 → 9e-06 left"


def test_over_budget_disables_release_and_the_remaining_epsilon_fits_exactly(
        window, qtbot, tmp_path, monkeypatch):
    path = _project(window, tmp_path)
    _accept_dialogs(monkeypatch)
    spin = window.analysis_panel.epsilon.spin
    _type(qtbot, spin, "0.35")
    _release(window, qtbot)
    _type(qtbot, spin, "0.8")
    panel = window.analysis_panel.budget_panel
    release = window.result_panel.release_button
    # The bar says over budget, and so does the button, before any click.
    assert panel.words.text() == "ε 0.35 spent + 0.8 this release of 1 → 0.15 over"
    assert panel.bar.parts()["over"]
    assert not release.isEnabled() and release.text() == "Release… (over budget)"
    assert release.toolTip().startswith(
        "Over budget: this release needs ε 0.8, but only ε 0.65 of 1 is left for survey.csv "
        "in study.dpstudio")
    use = panel.use_button
    assert use.isVisibleTo(panel) and use.text() == "Use the remaining ε (ε = 0.65)"

    qtbot.mouseClick(use, Qt.MouseButton.LeftButton)

    assert window.session.epsilon == 0.65 and spin.text() == "0.65"
    assert panel.words.text() == "ε 0.35 spent + 0.65 this release of 1 → 0 left"
    assert not use.isVisibleTo(panel)
    assert release.isEnabled() and release.text() == "Release…"
    _release(window, qtbot)
    with Project.open(path) as project:  # spent to the last decimal, not refused
        budget = project.budget(project.datasets()[0])
        assert budget.remaining_epsilon == Decimal(0)


def test_the_remaining_epsilon_never_exceeds_what_is_left():
    """Where no float spells what is left, the largest float below it (the accountant
    reads a charge as the float's exact decimal)."""
    from dpstudio.engine.accounting.budget import exact
    from dpstudio.ui.budget_figures import largest_within

    assert largest_within(Decimal("0.65")) == 0.65
    odd = Decimal("0.12345678901234567891")
    eps = largest_within(odd)
    assert exact(eps) <= odd and float(odd) > eps
    assert largest_within(Decimal(0)) is None


def test_a_used_up_budget_offers_nothing_to_use(window, qtbot, tmp_path, monkeypatch):
    _project(window, tmp_path)
    _accept_dialogs(monkeypatch)
    _release(window, qtbot)  # ε 1 of 1
    release = window.result_panel.release_button
    assert not release.isEnabled()
    assert "is used up" in release.toolTip()
    assert not window.analysis_panel.budget_panel.use_button.isVisibleTo(
        window.analysis_panel.budget_panel)


# -- item 10: the release dialog ----------------------------------------------------------

def test_the_release_dialog_leads_with_cannot_be_undone_and_ticks_the_report(
        window, qtbot, tmp_path, monkeypatch):
    _project(window, tmp_path)
    seen: list[ReleaseDialog] = []

    def look(dialog: ReleaseDialog) -> int:
        seen.append(dialog)
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(ReleaseDialog, "exec", look)
    qtbot.mouseClick(window.result_panel.release_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(seen), timeout=TIMEOUT_MS)
    dialog = seen[0]
    banner = QTextDocumentFragment.fromHtml(dialog.banner.text()).toPlainText()
    assert banner.splitlines()[0] == "Real release — cannot be undone."
    assert dialog.report_box.isChecked()
    assert dialog.report_box.text().startswith("Stakeholder report")


# -- item 15 (part): mechanism names in the combo -----------------------------------------

def test_mechanism_combo_shows_short_names_with_the_full_name_in_the_tooltip(window, qtbot):
    window.show()
    qtbot.waitExposed(window)
    panel = window.analysis_panel
    for model, short, full in (
            ("shuffle", "Invisibility cloak", "Invisibility cloak (multi-message)"),
            ("distributed", "Distributed discrete Gaussian",
             "Secure aggregation + distributed discrete Gaussian")):
        qtbot.mouseClick(panel.trust_buttons[model], Qt.MouseButton.LeftButton)
        combo = panel.mechanism_combo
        labels = [combo.itemText(i) for i in range(combo.count())]
        tips = [combo.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(combo.count())]
        assert short in labels
        assert any(tip.startswith(full + ":") for tip in tips)
        metrics = combo.fontMetrics()
        # Every short name fits the closed combo and the open list at 1400×900.
        for text in labels:
            assert metrics.horizontalAdvance(text) < combo.width() - 24, text
            assert metrics.horizontalAdvance(text) < combo.view().minimumWidth()
    window.hide()

