"""The budget panel under a tight accountant (issue 14): "spent" and "left" follow the
project's accountant — the ledger's releases and the one on screen composed — instead of
subtracting ε, and a line names the accountant (with a one-sentence tooltip).

Numbers: a pld project of budget (ε, δ) = (1, 10⁻⁴) on the survey sample; Gaussian means
(the window's first analysis) at (0.5, 10⁻⁶). Basic composition would refuse the third;
under pld six spend ≈ 0.82 at δ = 6·10⁻⁶ (each mean is two discrete Gaussian sums of
(0.25, 5·10⁻⁷), and the twelve compose like one Gaussian), and the panel shows a seventh
adding ≈ 0.06 — it fits, where subtracting its ε (0.82 + 0.5 > 1) would say it does not.
"""

from __future__ import annotations

import shutil
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from dpstudio.data import open_dataset, sample_path
from dpstudio.engine.accounting.ledger import spent
from dpstudio.project import Project
from dpstudio.ui import session as session_module
from dpstudio.ui.budget_figures import amount, budget_figures
from dpstudio.ui.budget_panel import ACCOUNTANT_LINES
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.project_dialogs import ReleaseDialog

TIMEOUT_MS = 15_000
EPS, DELTA, RELEASES = 0.5, 1e-6, 6


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    src = sample_path("survey")
    shutil.copy(src, folder / src.name)
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / (src.name + ".schema.json"))
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)

    def exec_(dialog: ReleaseDialog) -> int:
        dialog.report_box.setChecked(False)  # keep the test quick: no PDF
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ReleaseDialog, "exec", exec_)
    win = MainWindow(open_dataset(folder / src.name))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    assert win.analysis.wait_idle(20)
    yield win
    win.analysis.shutdown()
    win.projects.shutdown()
    win.analysis_panel.budget_panel.shutdown()


def _release(win: MainWindow, qtbot) -> None:
    button = win.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(win.projects.release_done, timeout=TIMEOUT_MS):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _gaussian(win: MainWindow) -> None:
    s = win.session
    s.set_mechanism("gaussian")
    s.set_epsilon(EPS)
    s.set_delta(DELTA)


def test_the_panel_shows_the_pld_figure_of_a_pld_project(window, qtbot, tmp_path):
    path = tmp_path / "study.dpstudio"
    assert window.projects.create_project(path, epsilon=1.0, delta=1e-4, accountant="pld")
    _gaussian(window)
    assert window.session.query == "mean" and window.session.trust_model == "central"
    panel = window.analysis_panel.budget_panel
    for _ in range(RELEASES):
        _release(window, qtbot)
    with Project.open(path) as p:
        (ds,) = p.datasets()
        by = p.spent_by_accountant(ds)
        losses = p.losses(ds)
    assert by["basic"][0] == Decimal("3")  # basic would have refused the third
    pld = by["pld"][0]
    assert 0.7 < float(pld) < 1.0
    # What the panel says this release adds: the pld composition with it, minus without.
    with_it = spent([*losses, losses[-1]], "pld").epsilon
    # Composed in the panel's worker (a second at most), then shown.
    line = panel.accountant_line
    qtbot.waitUntil(lambda: budget_figures(window.session).composed is not None
                    and "composing" not in line.text(), timeout=TIMEOUT_MS)
    assert budget_figures(window.session).tight
    words = panel.words.text()
    assert words.startswith(f"ε {amount(pld)} spent + ")
    added = float(words.split(" + ")[1].split(" ")[0])
    assert added == pytest.approx(with_it - float(pld), rel=1e-5)
    assert added < EPS  # less than subtracting its ε
    assert words.endswith(f"of 1 → {amount(Decimal(1) - Decimal(repr(with_it)))} left")
    # The accountant, in a few words and one sentence, and Release… still enabled.
    assert line.isVisibleTo(panel) and line.text() == ACCOUNTANT_LINES["pld"][0]
    assert line.toolTip() == ACCOUNTANT_LINES["pld"][1] and line.toolTip().count(".") == 1
    assert window.result_panel.release_button.isEnabled()
    parts = panel.bar.parts()
    assert parts["spent"] == pytest.approx(float(pld), rel=1e-6) and not parts["over"]
    assert float(pld) + EPS > 1  # what subtracting ε would have refused
    # Display options draw no noise: the composition stands (nothing left pending).
    window.session.set_compositions(5)
    window.session.set_confidence(0.9)
    assert budget_figures(window.session).composed is not None
    # A release the accountant cannot fit is refused: ε = 3 alone is beyond the total.
    window.session.set_epsilon(3.0)
    qtbot.waitUntil(lambda: budget_figures(window.session).composed is not None
                    and "composing" not in line.text(), timeout=TIMEOUT_MS)
    assert " over" in panel.words.text() and panel.bar.parts()["over"]
    assert not window.result_panel.release_button.isEnabled()
    window.grab().save(str(tmp_path / "budget_tight.png"))


def test_basic_projects_keep_subtracting_and_show_no_accountant_line(window, qtbot,
                                                                     tmp_path):
    assert window.projects.create_project(tmp_path / "b.dpstudio", epsilon=3.0, delta=1e-4)
    _gaussian(window)
    panel = window.analysis_panel.budget_panel
    _release(window, qtbot)
    assert panel.words.text() == "ε 0.5 spent + 0.5 this release of 3 → 2 left"
    assert not panel.accountant_line.isVisibleTo(panel)
