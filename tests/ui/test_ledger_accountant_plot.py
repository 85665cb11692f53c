"""Issue 14 in the application: the New Project dialog's accountant choice, and the Ledger
tab's cumulative-ε plot drawn under the dataset's accountant and labelled with it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt

from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ReleaseSpec
from dpstudio.ui.ledger_view import LedgerData, LedgerView
from dpstudio.ui.project_dialogs import ACCOUNTANT_CHOICES, NewProjectDialog

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "project"))
from dps_project_helpers import make_dataset  # noqa: E402


def test_new_project_dialog_chooses_the_accountant_by_keys(qtbot, tmp_path):
    dialog = NewProjectDialog(None, tmp_path)
    qtbot.addWidget(dialog)
    combo = dialog.accountant
    assert [combo.itemData(i) for i in range(combo.count())] == [
        "basic", "advanced", "zcdp", "pld"]
    assert dialog.chosen_accountant() == "basic"  # the default
    for i, (_, _, tip) in enumerate(ACCOUNTANT_CHOICES):  # one sentence each
        assert combo.itemData(i, Qt.ItemDataRole.ToolTipRole) == tip
        assert tip.endswith(".") and tip.count(". ") == 0
    dialog.show()
    combo.setFocus()
    for _ in range(3):
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert dialog.chosen_accountant() == "pld"
    assert "the tightest of the four" in combo.toolTip()
    values = dialog.values()
    with Project.create(values.pop("path"), **values,
                        accountant=dialog.chosen_accountant()) as p:
        assert p.defaults()["accountant"] == "pld"
    qtbot.keyClick(combo, Qt.Key.Key_Up)
    assert dialog.chosen_accountant() == "zcdp"


def _releases(tmp_path: Path, accountant: str) -> Project:
    tmp_path.mkdir()
    data = make_dataset(tmp_path)
    p = Project.create(tmp_path / f"{accountant}.dpstudio", epsilon=3, delta=1e-4,
                       accountant=accountant)
    for query in ("sum", "mean", "sum", "count"):
        p.release(ReleaseSpec(dataset=str(data), formats=("json",), query=QuerySpec(
            query=query, mechanism="gaussian", epsilon=0.5, delta=1e-6, bounds=(0.0, 10.0),
            column="x")), tmp_path / "out")
    return p


def test_the_cumulative_plot_follows_the_dataset_s_accountant(qtbot, tmp_path):
    view = LedgerView()
    qtbot.addWidget(view)
    for accountant in ("basic", "pld"):
        with _releases(tmp_path / accountant, accountant) as p:
            (ds,) = p.datasets()
            data = LedgerData(project=p.path.name, current=str(ds.id), dataset=ds.name,
                              releases=p.charged_ledger(ds), points=p.cumulative_epsilon(ds),
                              budget=p.budget(ds), spent_by_accountant=p.spent_by_accountant(ds))
            view.set_data(data)
            plotted = view.plotted()
            assert plotted["accountant"] == accountant
            title = view.plot.getPlotItem().titleLabel.text
            assert f"({accountant} accountant)" in title
            cumulative = plotted["cumulative_epsilon"]
            # The last step is what the dataset's budget counts under its accountant.
            assert cumulative[-1] == float(data.budget.spent_epsilon)
            assert np.all(np.diff(cumulative) > 0)
            if accountant == "basic":
                assert cumulative.tolist() == [0.5, 1.0, 1.5, 2.0]
            else:
                assert np.all(cumulative < [0.5, 1.0, 1.5, 2.0])
                assert cumulative[0] <= 0.5 and cumulative[-1] < 1.5
                assert float(data.spent_by_accountant["pld"][0]) == cumulative[-1]
