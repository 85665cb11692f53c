"""Release… on a folder (issue 16): through the project as the command line releases it,
on the engine of the Execution setting, charged once, its manifest naming the execution;
a release cancelled before its noise charges nothing."""

from __future__ import annotations

import json
import threading
import time

import pytest
from folder_helpers import write_folder
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFileDialog

from dpstudio.execution import engines
from dpstudio.project import Project
from dpstudio.ui.project_dialogs import ReleaseDialog
from dpstudio.ui.release_jobs import CANCELLED_TEXT, release_takes_state

TIMEOUT_MS = 30_000


@pytest.fixture
def folder_window(qtbot, tmp_path, monkeypatch):
    from dpstudio.ui import session as session_module
    from dpstudio.ui.main_window import MainWindow

    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    monkeypatch.setattr(ReleaseDialog, "exec", lambda _d: QDialog.DialogCode.Accepted)
    folder = write_folder(tmp_path)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: str(folder)))
    win = MainWindow()
    qtbot.addWidget(win)
    win.set_execution("dask", "")  # releases run on a local cluster (of threads here)
    win.open_folder_action.trigger()
    qtbot.waitUntil(lambda: win.dataset is not None and not win.loader.busy,
                    timeout=TIMEOUT_MS)
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    project = tmp_path / "study.dpstudio"
    assert win.projects.create_project(project, epsilon=1.0, delta=1e-5)
    win.session.set_epsilon(0.5)
    yield win, project
    win.analysis.shutdown()
    win.projects.shutdown()
    win.loader.shutdown()


def test_release_from_a_folder_charges_once_with_the_execution_in_the_manifest(
        qtbot, folder_window):
    win, project = folder_window
    button = win.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(win.projects.release_done, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    record = blocker.args[0]
    assert (record.query, record.column, float(record.epsilon)) == ("mean", "age", 0.5)
    p = Project.open(project)
    budget = p.budget(record.dataset_id)
    assert float(budget.spent_epsilon) == pytest.approx(0.5)  # charged once
    manifest = next(f.path for f in record.files if f.path.name.endswith(".manifest.json"))
    execution = json.loads(manifest.read_text(encoding="utf-8"))["execution"]
    assert execution["engine"] == "dask" and execution["scheduler"] == "local"
    assert execution["workers"] >= 1 and execution["partitions"] >= 3
    assert len(win.ledger_view.rows()) == 1


def test_a_cancelled_folder_release_charges_nothing(qtbot, folder_window, monkeypatch):
    assert release_takes_state(Project)  # the project's release follows the job's state
    from PySide6.QtWidgets import QMessageBox

    from dpstudio.execution import partitions

    win, project = folder_window
    # In this process, file by file: the slow stand-in needs no pickling to a worker.
    win.set_execution("pandas", "")
    failures = []
    monkeypatch.setattr(QMessageBox, "critical",
                        staticmethod(lambda *a, **k: failures.append(a[2]) or 0))
    real, gate = partitions.file_partial, threading.Event()

    files, calls = len(win.dataset.files.files), []

    def slow(*args, **kwargs):
        calls.append(1)
        if len(calls) > files:  # the check's pass is quick; the release's waits
            gate.wait(5)
            time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(partitions, "file_partial", slow)
    refused = []
    win.projects.release_refused.connect(refused.append)
    qtbot.mouseClick(win.result_panel.release_button, Qt.MouseButton.LeftButton)
    progress = win.release_progress
    # The window is not shown: "shown" is the widget no longer hidden by its owner.
    qtbot.waitUntil(lambda: not progress.isHidden(), timeout=TIMEOUT_MS)
    qtbot.mouseClick(progress.cancel_button, Qt.MouseButton.LeftButton)
    gate.set()
    qtbot.waitUntil(lambda: win.projects.busy is None, timeout=TIMEOUT_MS)
    assert failures == []
    assert refused == [CANCELLED_TEXT]
    assert win.statusBar().currentMessage() == CANCELLED_TEXT
    p = Project.open(project)
    assert all(float(p.budget(d.id).spent_epsilon) == 0 for d in p.datasets())
