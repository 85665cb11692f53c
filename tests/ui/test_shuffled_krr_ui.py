"""Release… of a shuffled K-RR histogram from the application (issue 14, first item).

The shuffle trust model, a categorical column, the histogram and K-RR are chosen with the
analysis panel's widgets; the preview's first note shows each user's ε₀ beside the
central ε; the Release… button is clicked with QTest (the confirmation's exec patched to
accept) and the release is charged the engine object's (ε, δ), with the manifest
verifying and stating ε₀.
"""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from dpstudio.data import open_dataset, sample_path
from dpstudio.engine.shuffle.amplification import shuffle_epsilon
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
    index = combo.findData(data)
    assert index >= 0, (data, [combo.itemData(i) for i in range(combo.count())])
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def test_release_a_shuffled_krr_histogram_through_the_dialog(window, qtbot, tmp_path,
                                                             monkeypatch):
    assert window.projects.create_project(tmp_path / "study.dpstudio", epsilon=5.0,
                                          delta=1e-4, relation="replace")
    panel = window.analysis_panel
    qtbot.mouseClick(panel.trust_buttons["shuffle"], Qt.MouseButton.LeftButton)
    _choose(panel.column_combo, "faculty")
    _choose(panel.query_combo, "histogram")
    _choose(panel.mechanism_combo, "krr")
    s = window.session
    s.set_epsilon(1.0)
    assert window.analysis.wait_idle(20)
    assert (s.trust_model, s.column, s.query, s.mechanism) == ("shuffle", "faculty",
                                                               "histogram", "krr")
    assert s.needs_delta  # a shuffled ε₀-LDP randomizer is (ε, δ) centrally
    preview = window.result_panel.preview
    assert preview is not None and preview.trust_model == "shuffle"
    assert preview.notes[0].startswith("each user's local ε₀ = ")
    assert "central ε = " in preview.notes[0]
    # One plotted count per faculty and the "other or missing" cell.
    assert preview.labels[-1] == "(other or missing)" and len(preview.value) == 7

    dialogs: list[ReleaseDialog] = []

    def exec_(dialog: ReleaseDialog) -> int:
        dialogs.append(dialog)
        dialog.script_box.setChecked(True)
        dialog.report_box.setChecked(False)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ReleaseDialog, "exec", exec_)
    window.projects.update_release_state()
    button = window.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(window.projects.release_done, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    record = blocker.args[0]
    notes = dialogs[0].notes_label.text()
    assert "each user's local ε₀ = " in notes and "central ε after shuffling" in notes
    assert record.status == "done" and record.trust_model == "shuffle"
    manifest = next(f.path for f in record.files if f.name.endswith(".manifest.json"))
    check = verify_manifest(manifest)
    assert check.ok, check.problems
    m = check.manifest
    eps0, n = m["parties"]["local_epsilon"], m["protocol"]["n"]
    # Charged FMT21's ε at the stated ε₀ (recomputed), at most the ε asked for.
    want = min(shuffle_epsilon(eps0, n, s.delta)[0], 1.0)
    assert (float(record.epsilon), float(record.delta)) == (want, s.delta)
    assert (m["privacy"]["epsilon"], m["privacy"]["delta"]) == (want, s.delta)
    assert 0.999 < want <= 1.0 < eps0
    row = window.ledger_view.rows()[0]
    assert "krr" in " ".join(row)
