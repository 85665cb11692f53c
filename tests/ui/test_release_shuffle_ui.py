"""Release… for shuffle-model and secure-aggregation analyses (issue 14, first item).

The trust model and the protocol are chosen with the analysis panel's own widgets, the
Release… button is clicked with QTest, the confirmation (its exec patched to accept)
shows the charge and, for the blanket, each user's local ε₀ beside the central ε; the
release is charged, in the ledger view, with the (ε, δ) its manifest states, and the
manifest verifies and says what each party sees.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from dpstudio.data import open_dataset, sample_path
from dpstudio.export import verify_manifest
from dpstudio.ui import session as session_module
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.project_dialogs import ReleaseDialog

TIMEOUT_MS = 20_000


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    src = sample_path("survey")
    shutil.copy(src, folder / src.name)
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / (src.name + ".schema.json"))
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    win = MainWindow(open_dataset(folder / src.name))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    assert win.analysis.wait_idle(20)
    yield win
    win.analysis.shutdown()
    win.projects.shutdown()


def _choose(combo, data) -> None:
    """Pick the combo's item holding ``data`` as the analyst does (an activated item)."""
    index = combo.findData(data)
    assert index >= 0, (data, [combo.itemData(i) for i in range(combo.count())])
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def _release(win, qtbot, monkeypatch, report: bool):
    dialogs: list[ReleaseDialog] = []

    def exec_(dialog: ReleaseDialog) -> int:
        dialogs.append(dialog)
        dialog.script_box.setChecked(True)
        dialog.report_box.setChecked(report)  # one report is enough (they take a second)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ReleaseDialog, "exec", exec_)
    win.projects.update_release_state()
    button = win.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(win.projects.release_done, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    return blocker.args[0], dialogs[0]


@pytest.mark.parametrize(("trust", "mechanism", "epsilon"), [
    ("shuffle", "blanket", 0.5), ("shuffle", "cloak", 1.0),
    ("distributed", "secagg_gaussian", 1.0), ("distributed", "skellam", 1.0)])
def test_release_a_protocol_sum_through_the_dialog(window, qtbot, tmp_path, monkeypatch,
                                                   trust, mechanism, epsilon):
    assert window.projects.create_project(tmp_path / "study.dpstudio", epsilon=5.0,
                                          delta=1e-4, relation="replace")
    panel = window.analysis_panel
    qtbot.mouseClick(panel.trust_buttons[trust], Qt.MouseButton.LeftButton)
    _choose(panel.column_combo, "age")
    _choose(panel.query_combo, "mean")
    _choose(panel.mechanism_combo, mechanism)
    s = window.session
    s.set_epsilon(epsilon)
    assert window.analysis.wait_idle(20)
    assert (s.trust_model, s.column, s.query, s.mechanism) == (trust, "age", "mean", mechanism)
    record, dialog = _release(window, qtbot, monkeypatch, report=mechanism == "blanket")
    notes = dialog.notes_label.text()
    charged = epsilon
    if mechanism == "blanket":  # each user's ε₀ beside the central ε after shuffling
        from dpstudio.engine.shuffle.amplification import shuffle_epsilon

        # The smaller of BBGN19's ε (γ's calibration) and FMT21's on each user's ε₀.
        local = float(notes.split("each user's local ε₀ = ")[1].split(";")[0])
        assert local > epsilon
        charged = float(record.epsilon)
        assert charged <= epsilon
        assert f"central ε after shuffling = {charged:g}" in notes
        # Its precision k is left to the protocol (0 in the spec): the summary says so.
        from PySide6.QtWidgets import QLabel

        shown = " | ".join(w.text() for w in dialog.findChildren(QLabel))
        assert "precision = auto" in shown and "precision = 0" not in shown, shown
        # Every row whole at the size the dialog opens at: its wrapped labels (parameters,
        # notes) used to be squeezed onto one clipped line.
        dialog.show()
        qtbot.waitExposed(dialog)
        cut = [w.text()[:40] for w in dialog.findChildren(QLabel)
               if w.isVisible() and w.wordWrap() and w.height() < w.heightForWidth(w.width())]
        assert cut == [], (cut, dialog.size())
        dialog.close()
    sees = "the analyzer sees the shuffled multiset" if trust == "shuffle" else \
        "the server sees only the masked sum"
    assert sees in notes
    assert record.status == "done" and record.trust_model == trust
    assert (record.query, record.column, record.mechanism) == ("mean", "age", mechanism)
    manifest = next(f.path for f in record.files if f.name.endswith(".manifest.json"))
    check = verify_manifest(manifest)
    assert check.ok, check.problems
    m = check.manifest
    # Charged what the engine object met, shown alike in the dialog, ledger and manifest.
    assert (m["privacy"]["epsilon"], m["privacy"]["delta"]) == (float(record.epsilon),
                                                                float(record.delta))
    assert float(record.epsilon) == charged and float(record.delta) <= s.delta
    # The dialog's charge is the ledger's, not the ε asked for (the blanket's is lower).
    assert f"ε = {float(record.epsilon):.4g}," in dialog.charge_label.text()
    assert m["parties"]["sees"] and m["parties"]["trusted"]
    if mechanism == "blanket":
        assert m["parties"]["local_epsilon"] > m["parties"]["central_epsilon"] == charged
        n = m["protocol"]["n"]
        want = shuffle_epsilon(m["parties"]["local_epsilon"], n, float(record.delta))[0]
        assert charged == min(epsilon, want)
    row = window.ledger_view.rows()[0]
    assert mechanism in " ".join(row) and f"{charged:.4g}" in row
    assert any(f.name.endswith(".py") for f in record.files)
    if mechanism == "blanket":
        report = next(f.path for f in record.files if f.name.endswith(".report.html"))
        assert "ε₀ = " in Path(report).read_text(encoding="utf-8")
    assert json.loads(Path(manifest).read_text(encoding="utf-8"))["trust_model"] == trust


@pytest.mark.parametrize(("trust", "mechanism"), [("shuffle", "cloak"), ("shuffle", "blanket"),
                                                  ("distributed", "secagg_gaussian"),
                                                  ("distributed", "skellam")])
def test_the_release_rules_no_longer_refuse_the_protocols(trust, mechanism):
    """The Release… button's rule: releasable under a replace budget; under add-remove it
    says why (the protocols bound changing one person's value), in one sentence."""
    from pathlib import Path as _Path
    from types import SimpleNamespace

    from dpstudio.ui.release_rules import release_problem

    session = SimpleNamespace(trust_model=trust, query="mean", mechanism=mechanism,
                              relation="replace", epsilon=1.0, problem=lambda: None,
                              dataset=SimpleNamespace(name="survey.csv"))

    def project(relation):
        return SimpleNamespace(path=_Path("study.dpstudio"),
                               defaults=lambda: {"relation": relation})

    assert release_problem(session, project("replace"), None, busy=None, tamper=[]) is None
    refused = release_problem(session, project("add-remove"), None, busy=None, tamper=[])
    assert refused == ("survey.csv is budgeted under the add-remove relation in "
                       "study.dpstudio: its guarantee bounds changing one person's value, so "
                       f"{trust} releases need a dataset budgeted under the replace relation.")
