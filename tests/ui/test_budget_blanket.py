"""The budget panel counts a shuffle privacy-blanket release at what the ledger charges.

The blanket's central ε for n public users is the smaller of BBGN19's (what its blanket
probability γ is calibrated for) and FMT21's amplification of each user's ε₀: on the
survey sample's 2,000 ages, asked ε = 0.5 at δ = 10⁻⁶ it charges ≈ 0.2004. The panel used
to show the 0.5 of the slider ("+ 0.5 this release"), and the Release… button called a
release over budget that fits. Now the panel plans the protocol in its worker and shows
the figure the release dialog and the ledger show, with a tooltip that says why it is
not the slider's.
"""

from __future__ import annotations

import shutil
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog
from ui_helpers import close_window, open_window, type_into

from dpstudio.analysis import AnalysisSpec
from dpstudio.analysis.capabilities import release_query
from dpstudio.data import sample_path
from dpstudio.project.release_parties import protocol_charge, resolve_release
from dpstudio.ui.budget_figures import BudgetFigures, amount, budget_figures
from dpstudio.ui.project_dialogs import ReleaseDialog

TIMEOUT_MS = 20_000
ASKED = 0.5


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    src = sample_path("survey")
    data = tmp_path / src.name  # a copy: the release reads and fingerprints it
    shutil.copy(src, data)
    shutil.copy(src.with_name(src.name + ".schema.json"), tmp_path / (src.name + ".schema.json"))

    def exec_(dialog: ReleaseDialog) -> int:
        dialog.report_box.setChecked(False)  # keep the test quick: no report
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ReleaseDialog, "exec", exec_)
    win = open_window(qtbot, data, monkeypatch)
    yield win
    close_window(win)
    win.analysis_panel.budget_panel.shutdown()


def _pick(qtbot, combo, data) -> None:
    """Step the combo to the item holding ``data`` with the arrow keys, as a person does
    (each step is an activated item)."""
    target = combo.findData(data)
    assert target >= 0, (data, [combo.itemData(i) for i in range(combo.count())])
    combo.setFocus()
    while combo.currentIndex() != target:
        key = Qt.Key.Key_Down if combo.currentIndex() < target else Qt.Key.Key_Up
        before = combo.currentIndex()
        qtbot.keyClick(combo, key)
        assert combo.currentIndex() != before, "the combo did not move"


def _blanket(win, qtbot) -> None:
    panel = win.analysis_panel
    qtbot.mouseClick(panel.trust_buttons["shuffle"], Qt.MouseButton.LeftButton)
    _pick(qtbot, panel.column_combo, "age")
    _pick(qtbot, panel.query_combo, "mean")
    _pick(qtbot, panel.mechanism_combo, "blanket")
    type_into(qtbot, panel.epsilon.spin, f"{ASKED:g}")
    s = win.session
    assert (s.trust_model, s.column, s.query, s.mechanism, s.epsilon) == (
        "shuffle", "age", "mean", "blanket", ASKED)


def _ledger_figure(win) -> tuple:
    """The charge as the release transaction computes it, independently of the panel."""
    s = win.session
    analysis = AnalysisSpec(s.trust_model, s.settings().spec())
    resolved, _ = resolve_release(AnalysisSpec(s.trust_model, release_query(analysis)),
                                  s.dataset.schema)
    return protocol_charge(resolved, s.dataset.n_rows)


def _planned(win, qtbot) -> str:
    words = win.analysis_panel.budget_panel.words
    qtbot.waitUntil(lambda: "planning" not in words.text() and "composing" not in
                    words.text(), timeout=TIMEOUT_MS)
    return words.text()


def test_the_panel_shows_the_blanket_charge_not_the_slider_epsilon(window, qtbot, tmp_path):
    path = tmp_path / "study.dpstudio"
    assert window.projects.create_project(path, epsilon=5.0, delta=1e-4, relation="replace")
    _blanket(window, qtbot)
    shown = _planned(window, qtbot)
    eps, delta = _ledger_figure(window)
    assert 0.15 < float(eps) < 0.3  # well below the 0.5 asked: the check has power
    assert shown == (f"ε 0 spent + {amount(eps)} this release (0.5 set) of 5 → "
                     f"{amount(5 - eps)} left")
    assert "+ 0.5 this release" not in shown
    panel = window.analysis_panel.budget_panel
    assert budget_figures(window.session).floats()["this_epsilon"] == float(eps)
    tip = panel.words.toolTip()
    assert f"This release charges ε {amount(eps)}, not the ε 0.5 set" in tip
    assert "Feldman, McMillan & Talwar 2021" in tip  # the plan's own why
    # The ledger's figure: a real release through the Release… button charges it.
    button = window.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(window.projects.release_done, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    record = blocker.args[0]
    assert (record.epsilon, record.delta) == (eps, delta)
    assert _planned(window, qtbot).startswith(f"ε {amount(eps)} spent + {amount(eps)} ")


def test_a_blanket_release_that_fits_only_at_its_charge_is_not_over_budget(
        window, qtbot, tmp_path):
    """Total ε 0.3: the 0.5 asked would not fit, the ≈ 0.2004 charged does."""
    path = tmp_path / "small.dpstudio"
    assert window.projects.create_project(path, epsilon=0.3, delta=1e-4, relation="replace")
    _blanket(window, qtbot)
    shown = _planned(window, qtbot)
    eps, _ = _ledger_figure(window)
    assert shown.endswith(f"of 0.3 → {amount(0.3 - float(eps))} left"), shown
    button = window.result_panel.release_button  # re-read when the charge was planned
    assert button.isEnabled() and button.text() == "Release…", button.toolTip()
    assert not window.analysis_panel.budget_panel.use_button.isVisibleTo(window)


def test_a_central_release_is_not_planned_and_shows_its_epsilon(window, qtbot, tmp_path):
    assert window.projects.create_project(tmp_path / "c.dpstudio", epsilon=5.0, delta=1e-4)
    type_into(qtbot, window.analysis_panel.epsilon.spin, "0.5")
    f = budget_figures(window.session)
    assert f.planning is None and f.asked is None
    assert window.analysis_panel.budget_panel.words.text().startswith(
        "ε 0 spent + 0.5 this release of 5")


def test_while_the_protocol_is_planned_the_words_say_so_and_claim_no_figure():
    d = Decimal
    f = BudgetFigures((d(5), d("1e-4")), (d(1), d(0)), (d("0.5"), d("1e-6")),
                      planning=object())
    assert f.words(0) == "ε 1 spent + … this release of 5 → planning the protocol…"
    assert not f.over and f.usable() == (None, None)  # the transaction gates it meanwhile
    assert f.words(1) == "δ 0 spent + 1e-06 this release of 0.0001 → 9.9e-05 left"
