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



@pytest.fixture
def slow_second_start(monkeypatch):
    """``LocalCluster`` as it is, but its start from the ``slow``-th on waits on ``gate``
    (up to 20 s): a loaded machine. Yields (the calls' count, the start entered, gate)."""
    import distributed

    real, calls = distributed.LocalCluster, []
    started, gate = threading.Event(), threading.Event()
    slow_from = {"n": 1}

    def start(*args, **kwargs):
        calls.append(1)
        if len(calls) >= slow_from["n"]:
            started.set()
            gate.wait(20)
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", start)
    yield slow_from, calls, started, gate
    gate.set()


def test_a_release_cancelled_while_its_dask_cluster_starts_stops_at_once(
        qtbot, folder_window, slow_second_start):
    """On a loaded machine the local cluster may take long to start: Cancel is seen then
    too (the release's job ends, nothing charged), not once the cluster is up."""
    win, project = folder_window
    slow_from, calls, started, gate = slow_second_start
    slow_from["n"] = 2  # the release's own cluster; the check's pass before it starts as is
    refused = []
    win.projects.release_refused.connect(refused.append)
    qtbot.mouseClick(win.result_panel.release_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
    progress = win.release_progress
    qtbot.waitUntil(lambda: not progress.isHidden(), timeout=TIMEOUT_MS)
    t0 = time.monotonic()
    qtbot.mouseClick(progress.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.projects.busy is None, timeout=TIMEOUT_MS)
    assert time.monotonic() - t0 < 5.0  # not the start's 20 s
    gate.set()
    assert refused == [CANCELLED_TEXT] and len(calls) == 2
    p = Project.open(project)
    assert all(float(p.budget(d.id).spent_epsilon) == 0 for d in p.datasets())


def test_a_folder_check_on_a_dask_cluster_slow_to_start_does_not_hold_the_close(
        qtbot, folder_window, slow_second_start):
    """Release…'s check sums every file too (a cluster started for it): the window's
    close cancels it, rather than waiting for the cluster to come up."""
    win, _project = folder_window
    _slow_from, calls, started, gate = slow_second_start
    qtbot.mouseClick(win.result_panel.release_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
    assert win.projects.busy is not None and len(calls) == 1  # the check's pass
    t0 = time.monotonic()
    assert win.projects.runner.shutdown(timeout=5.0)  # the check's job has ended
    assert time.monotonic() - t0 < 5.0
    gate.set()
