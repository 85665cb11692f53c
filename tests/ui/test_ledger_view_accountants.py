"""The Ledger tab shows the ε spent under every accountant side by side (issue 14), the
dataset's own accountant starred, and its remaining budget following that accountant."""

from __future__ import annotations

import sqlite3
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from dpstudio.data import open_dataset
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.calibration import analytic_gaussian_sigma
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ReleaseSpec
from dpstudio.project._chain import record_release
from dpstudio.project.ledger_loss import loss_json
from dpstudio.ui import session as session_module
from dpstudio.ui.ledger_view import LedgerData, LedgerView
from dpstudio.ui.main_window import MainWindow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "project"))
from dps_project_helpers import make_dataset  # noqa: E402


def _project(tmp_path: Path, accountant: str = "pld") -> tuple[Path, Path]:
    """Four Gaussian counts at (0.5, 10⁻⁶), each stored with its Gaussian description
    (what the release transaction will write once it describes its noise)."""
    data = make_dataset(tmp_path)
    path = tmp_path / "study.dpstudio"
    with Project.create(path, epsilon=3, delta=1e-4, accountant=accountant) as p:
        for _ in range(4):
            p.release(ReleaseSpec(dataset=str(data), accountant=accountant, formats=("json",),
                                  query=QuerySpec(query="count", mechanism="gaussian",
                                                  epsilon=0.5, delta=1e-6, column="x")),
                      tmp_path / "out")
    sigma = analytic_gaussian_sigma(1.0, 0.5, 1e-6)
    desc = LossDescription("gaussian", epsilon=0.5, delta=1e-6, scale=sigma, sensitivity=1)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE releases SET loss = ?", (loss_json(desc),))
    # ...and chains it, as the release transaction does (a hand edit is tampering).
    for (rid,) in conn.execute("SELECT id FROM releases").fetchall():
        record_release(conn, rid)
    conn.commit()
    conn.close()
    return path, data


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    path, data = _project(tmp_path)
    win = MainWindow(open_dataset(data))
    qtbot.addWidget(win)
    assert win.analysis.wait_idle(20)
    win.study = path
    yield win
    win.analysis.shutdown()
    win.projects.shutdown()


def test_the_ledger_tab_shows_every_accountant(window, qtbot):
    assert window.projects.open_project(window.study)
    window.ledger_tab_action.trigger()
    view = window.ledger_view
    assert window.tabs.currentWidget() is view
    shown = view.accountant_columns()
    assert list(shown) == ["basic", "advanced", "zcdp", "pld ★"]
    assert shown["basic"] == "2"
    eps = {k.split()[0]: Decimal(v) for k, v in shown.items()}
    assert eps["pld"] < eps["zcdp"] < eps["basic"]
    assert "δ = 4e-06" in view.by_accountant_label.text()
    # The remaining budget is the pld one: 3 − ε_pld, not basic's 3 − 2.
    with Project.open(window.study) as p:
        b = p.budget(p.datasets()[0])
    assert b.accountant == "pld" and b.remaining_epsilon > Decimal(1)
    assert "(pld composition)" in view.remaining.text()
    assert f"ε {float(b.remaining_epsilon):.4g}</b> of 3" in view.remaining.text()


def test_no_releases_hide_the_row(qtbot):
    view = LedgerView()
    qtbot.addWidget(view)
    view.set_data(LedgerData(project="p.dpstudio", message="No releases yet."))
    assert view.accountant_columns() == {}
    view.set_data(None)
    assert view.accountant_columns() == {}
