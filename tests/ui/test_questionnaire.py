"""The sensitivity questionnaire: no answer chosen for the analyst, a proposal for the
dataset's total budget, and how it is split over the planned releases (issue 12, item 16)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from dpstudio.ui.questionnaire import QuestionnaireDialog, propose
from dpstudio.ui.session import ProjectBudget


def _open(window, qtbot) -> QuestionnaireDialog:
    window.show()
    qtbot.waitExposed(window)
    window.questionnaire_action.trigger()
    dialog = window.findChild(QuestionnaireDialog)
    qtbot.waitExposed(dialog)
    return dialog


def _click(qtbot, dialog, group, level: str) -> None:
    button = next(b for b in group.buttons() if b.objectName() == level)
    # On the round indicator: the middle of a wide row may lie past a short answer's text.
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))
    assert button.isChecked()


def _type_releases(qtbot, dialog, text: str) -> None:
    spin = dialog.releases_spin
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Tab)


def test_questionnaire_proposals():
    public = propose("public", "public")
    assert (public.epsilon, public.delta) == (2.0, 1e-5)
    high = propose("low", "high")
    assert (high.epsilon, high.delta, high.level) == (0.25, 1e-8, "high")
    p = propose("severe", "moderate", n_rows=2000)
    assert (p.epsilon, p.delta) == (0.1, 1e-9)
    assert "Severe harm of disclosure" in p.rationale and "×1.11" in p.rationale
    assert propose("public", "low", n_rows=10_000_000).delta == 1e-9  # δ below 1/(100 n)
    with pytest.raises(ValueError):
        propose("huge", "low")


def test_nothing_is_chosen_for_the_analyst_and_use_waits_for_both_answers(window, qtbot):
    dialog = _open(window, qtbot)
    radios = dialog.harm_group.buttons() + dialog.sensitivity_group.buttons()
    assert len(radios) == 10 and not any(r.isChecked() for r in radios)  # no anchor
    assert not dialog.use_button.isEnabled()
    assert dialog.proposal_label.text() == "Answer both questions to see a proposed budget."
    _click(qtbot, dialog, dialog.harm_group, "low")
    assert not dialog.use_button.isEnabled()
    qtbot.keyClick(dialog, Qt.Key.Key_Return)  # Enter before the second answer: nothing
    assert dialog.isVisible() and window.session.total_epsilon == 3.0
    _click(qtbot, dialog, dialog.sensitivity_group, "high")
    assert dialog.use_button.isEnabled()
    assert dialog.use_button.text() == "Use as total budget"
    assert "Proposed total budget for survey.csv: ε = 0.25" in dialog.proposal_label.text()
    dialog.reject()


def test_the_proposal_becomes_the_total_budget_split_over_the_releases(window, qtbot):
    session = window.session
    dialog = _open(window, qtbot)
    _click(qtbot, dialog, dialog.harm_group, "low")
    _click(qtbot, dialog, dialog.sensitivity_group, "high")  # ε 0.25, δ 1e-8 in total
    _type_releases(qtbot, dialog, "5")
    text = dialog.proposal_label.text()
    assert "ε 0.25 in total: about ε 0.05 (δ 2 × 10⁻⁹) per release for 5 releases" in text
    qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    assert (session.total_epsilon, session.total_delta) == (0.25, 1e-8)
    assert session.epsilon == pytest.approx(0.05) and session.delta == pytest.approx(2e-9)
    assert session.compositions == 5
    figures = window.analysis_panel.budget_panel.figures()
    assert figures["total_epsilon"] == 0.25 and figures["this_epsilon"] == pytest.approx(0.05)
    assert window.analysis_panel.epsilon.value() == pytest.approx(0.05)
    assert "about ε 0.05" in window.statusBar().currentMessage()


def test_a_plan_too_long_for_the_budget_says_how_many_releases_fit(window, qtbot):
    dialog = _open(window, qtbot)
    _click(qtbot, dialog, dialog.harm_group, "severe")  # ε 0.1 in total
    _click(qtbot, dialog, dialog.sensitivity_group, "low")
    _type_releases(qtbot, dialog, "20")
    assert not dialog.use_button.isEnabled()
    assert "plan at most 10 releases" in dialog.proposal_label.text()
    _type_releases(qtbot, dialog, "10")
    assert dialog.use_button.isEnabled()
    dialog.reject()


def test_a_project_fixes_the_total_so_the_proposal_sets_each_release(window, qtbot):
    session = window.session
    session.set_project_budget(ProjectBudget("study.dpstudio", "survey.csv", 2.0, 1e-6,
                                             registered=True))
    dialog = _open(window, qtbot)
    assert dialog.use_button.text() == "Use per release"
    _click(qtbot, dialog, dialog.harm_group, "public")
    _click(qtbot, dialog, dialog.sensitivity_group, "low")  # ε 1 in total
    _type_releases(qtbot, dialog, "4")
    assert "fixes the total of survey.csv at ε 2" in dialog.proposal_label.text()
    qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    assert session.total_epsilon == 3.0  # the session's own total is not the one in force
    assert session.epsilon == pytest.approx(0.25) and session.compositions == 4


def test_the_dialog_emits_the_total_and_the_releases(qtbot):
    dialog = QuestionnaireDialog(n_rows=2000, answers={"harm": "high", "sensitivity": "low"})
    qtbot.addWidget(dialog)
    assert dialog.answers() == {"harm": "high", "sensitivity": "low"}
    assert "ε = 0.25" in dialog.proposal_label.text()
    dialog.set_answers("low", "low")
    assert "ε = 1," in dialog.proposal_label.text()
    assert "all of it for one release" in dialog.proposal_label.text()
    with qtbot.waitSignal(dialog.budget_chosen) as blocker:
        dialog.use_button.click()
    assert blocker.args == [1.0, 1e-6, 1]
