"""File ▸ Open Folder (issue 16): a folder of Parquet files opened from metadata, its
first rows previewed and labelled so, every number of the analysis from the exact
aggregates of all its rows (``sum_on_files``), progress and Cancel, the engine in the status
bar, the Execution setting."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest
from folder_helpers import ROWS, write_folder
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog

from dpstudio.analysis import AnalysisSpec
from dpstudio.execution import engines
from dpstudio.execution.run import sum_on_files

TIMEOUT_MS = 30_000
@pytest.fixture
def threads_cluster(monkeypatch):
    """Local clusters of threads in this process (quick, nothing left behind)."""
    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)


@pytest.fixture
def folder_window(qtbot, tmp_path, monkeypatch, threads_cluster):
    """The window with File ▸ Open Folder… answered by a folder of 3 Parquet files."""
    from dpstudio.ui import session as session_module
    from dpstudio.ui.main_window import MainWindow

    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    folder = write_folder(tmp_path)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: str(folder)))
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    yield win, folder
    win.analysis.shutdown()
    win.projects.shutdown()
    win.loader.shutdown()


def open_folder(qtbot, win):
    """File ▸ Open Folder… through its menu action, and wait for the numbers."""
    win.open_folder_action.trigger()
    qtbot.waitUntil(lambda: win.dataset is not None and not win.loader.busy,
                    timeout=TIMEOUT_MS)
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)


def test_open_folder_previews_first_rows_and_sums_every_row(qtbot, folder_window):
    win, folder = folder_window
    lines = []
    win.analysis.lines_ready.connect(lines.append)
    open_folder(qtbot, win)
    d = win.dataset
    assert d.total_rows == 3 * ROWS and d.n_rows == 1000
    win.show_view("data")
    assert win.preview_label.isVisible()
    assert win.preview_label.text().startswith(
        f"Preview: first 1,000 rows of {3 * ROWS:,} (3 Parquet files)")
    assert win.tabs.tabToolTip(1).startswith("The folder's first 1,000 rows")
    assert not win.tabs.tabBar().usesScrollButtons() or all(  # every tab still shown
        win.tabs.tabBar().tabRect(i).right() <= win.tabs.tabBar().width()
        for i in range(win.tabs.count()))
    assert win.table_model.rowCount() == 1000
    # The mean's n and noise scale are those of the exact aggregates of all rows.
    s = win.session.settings()
    assert (s.column, s.query) == ("age", "mean")
    sums = sum_on_files(AnalysisSpec("central", s.spec()), d.files, engine="pandas",
                        declared=win.session.spec)
    preview = win.result_panel.preview
    assert preview is not None and sums.total.rows == 3 * ROWS
    assert any(f"n = {3 * ROWS:,}" in note for note in preview.notes)
    # One noise for all rows: the engine's calibration at this ε (a mean's is the sum's).
    from dpstudio.engine.queries.partial import run_partials
    from dpstudio.engine.rng import SimulationSource

    expected = run_partials(sums.total, s.spec(), SimulationSource(1))
    assert preview.noise_scale == pytest.approx(expected.noise_scale, rel=1e-12)
    # The analytic line is on the full data: n is every row, not the preview's.
    assert lines and lines[-1].n == 3 * ROWS
    assert lines[-1].curves[0].kind == "analytic" and not lines[-1].reps  # no simulation
    # The Columns panel counts every row; Open Recent lists the folder.
    assert f"{3 * ROWS:,} rows in 3 files" in win.schema_panel.summary.text()
    assert win.settings.recent_files[0] == str(folder)
    # The Models tab never trains on the preview's rows.
    win.show_view("models")
    win.model_view.recompute()
    assert "folder" in win.model_view.status.text()


def choose_execution(qtbot, win, engine: str, scheduler: str) -> None:
    """Tools ▸ Execution…: pick the engine and type the scheduler's address, then OK."""
    from dpstudio.ui.execution_settings import ENGINE_TEXTS, ExecutionDialog

    win.execution_action.trigger()
    dialog = win.findChild(ExecutionDialog)
    assert dialog is not None and dialog.isVisible()
    combo = dialog.engine
    combo.setFocus()
    while combo.currentData() != engine:  # arrow keys, as a person would
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert combo.currentText() == ENGINE_TEXTS[engine]
    dialog.scheduler.setFocus()
    dialog.scheduler.selectAll()
    qtbot.keyClick(dialog.scheduler, Qt.Key.Key_Delete)
    qtbot.keyClicks(dialog.scheduler, scheduler)
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)


def dask_threads() -> set[str]:
    """The threads of a cluster still running (distributed's one process-wide offload
    executor is not one: idle, shared by every client, joined at exit)."""
    return {t.name for t in threading.enumerate()
            if t.is_alive() and not t.name.startswith("Dask-Offload")
            and ("Dask" in t.name or "distributed" in t.name.lower()
                 or "TCP-Executor" in t.name or "IO loop" in t.name)}


def test_dask_progress_moves_and_cancel_stops_the_futures(qtbot, folder_window, tmp_path,
                                                         monkeypatch):
    from dpstudio.execution import partitions

    win, folder = folder_window
    for i in range(3, 10):  # ten files: progress per file
        pd.read_parquet(folder / "part-0.parquet").to_parquet(folder / f"part-{i}.parquet")
    choose_execution(qtbot, win, "dask", "")
    assert win.execution_status.text() == "Engine: dask"
    started: list[str] = []
    real = partitions.file_partial

    def slow(path, *args, **kwargs):  # a slow file: the cancel lands mid-sum
        started.append(path)
        time.sleep(0.4)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(partitions, "file_partial", slow)
    before = dask_threads()
    fractions: list[float] = []
    win.analysis.progress.connect(lambda key, f, _m: key == "folder" and fractions.append(f))
    win.open_folder_action.trigger()
    view = win.analysis_view
    qtbot.waitUntil(lambda: 0 < view.progress_bar.value() < 1000, timeout=TIMEOUT_MS)
    assert view.cancel_button.isVisible() and "Summing 10 files" in view.progress_text.text()
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    assert "Cancelled" in view.progress_text.text()
    assert view.recompute_button.isVisible() and not view.cancel_button.isVisible()
    assert fractions and 0 < fractions[-1] < 1  # it moved, and stopped short of the end
    # The pending futures were cancelled, and the local cluster closed with its threads.
    qtbot.waitUntil(lambda: dask_threads() <= before, timeout=TIMEOUT_MS)
    assert len(started) < 10
    # Asked again, it sums every file on the cluster and says where in the status bar.
    monkeypatch.setattr(partitions, "file_partial", real)
    qtbot.mouseClick(view.recompute_button, Qt.MouseButton.LeftButton)
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    assert win.analysis.execution["engine"] == "dask"
    text = win.execution_status.text()
    assert text.startswith("Engine: Dask · local cluster, 1 worker, ") and "thread" in text
    assert win.result_panel.preview is not None
    assert any("10 files" in n or "40,000 rows" in n for n in win.result_panel.preview.notes)
    qtbot.waitUntil(lambda: dask_threads() <= before, timeout=TIMEOUT_MS)


def test_the_scheduler_setting_persists_and_a_bad_address_is_one_sentence(
        qtbot, folder_window, monkeypatch):
    from dpstudio.ui.settings import AppSettings

    # A refused connection is tried for 10 s in the application; 1 s here.
    monkeypatch.setitem(engines.dask_cluster.__wrapped__.__kwdefaults__, "timeout", 1.0)
    win, _folder = folder_window
    assert win.execution_status.text() == "Engine: auto"  # nothing open: the setting
    open_folder(qtbot, win)
    assert win.execution_status.text() == "Engine: pandas"  # auto, a small folder
    choose_execution(qtbot, win, "dask", "tcp://127.0.0.1:9")
    saved = AppSettings.load()
    assert (saved.engine, saved.scheduler) == ("dask", "tcp://127.0.0.1:9")
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    text = win.analysis_view.progress_text.text()
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in text
    assert "\n" not in text and "Traceback" not in text
    # Nothing lost: the folder and its preview stay open.
    assert win.dataset is not None and win.table_model.rowCount() == 1000
    assert "tcp://127.0.0.1:9" in win.execution_status.text()


def test_old_settings_get_the_execution_defaults():
    from dpstudio.ui.settings import AppSettings

    old = AppSettings(data={"schema_version": 2, "palette": "dark"})
    assert (old.engine, old.scheduler, old.palette) == ("auto", "", "dark")
    bad = AppSettings(data={"schema_version": 2, "execution": {"engine": "spark",
                                                               "scheduler": 3}})
    assert (bad.engine, bad.scheduler) == ("auto", "")
    with pytest.raises(ValueError, match="unknown engine 'spark'"):
        bad.engine = "spark"


def test_monte_carlo_on_a_folder_runs_only_when_asked(qtbot, folder_window):
    win, _folder = folder_window
    points, lines = [], []
    win.analysis.points_ready.connect(points.append)
    win.analysis.lines_ready.connect(lines.append)
    open_folder(qtbot, win)
    view = win.analysis_view
    assert not points and lines and lines[-1].reps == 0  # the analytic line only
    assert view.recompute_button.isVisible()
    assert view.recompute_button.text() == "Simulate on the data (slow)"
    qtbot.mouseClick(view.recompute_button, Qt.MouseButton.LeftButton)
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    assert len(points) == 1
    sim = points[0].curves[0]
    assert sim.kind == "simulation" and points[0].reps == 200
    # Each point: 200 releases drawn from one pass's exact aggregates. Their RMSE
    # estimates the noise's (the line: no bias against the clamped statistic) within
    # 4 standard errors: Laplace noise has kurtosis 6, so the MSE's relative standard
    # error is √(5/200) ≈ 0.16 and the RMSE's about half of it.
    line = lines[-1].curves[0]
    expected = np.interp(sim.epsilon, line.epsilon, line.error)
    np.testing.assert_allclose(sim.error, expected, rtol=4 * 0.5 * np.sqrt(5 / 200))


def test_other_trust_models_on_a_folder_say_why_in_one_sentence(qtbot, folder_window):
    from dpstudio.ui.folder_numbers import folder_refusal

    win, _folder = folder_window
    open_folder(qtbot, win)
    # The local model runs on a folder now (tests/ui/test_folder_local.py); shuffle not.
    win.session.set_trust_model("shuffle")
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    why = folder_refusal(win.session.settings())
    assert why is not None and "\n" not in why
    assert why in win.analysis_view.progress_text.text()


def test_a_cancel_while_the_local_cluster_starts_ends_the_sums_at_once(qtbot, folder_window,
                                                                       monkeypatch):
    """A local cluster slow to start (a loaded machine) holds neither the Cancel button nor
    the window's close: the start is given up on, and closed by its own thread later."""
    import distributed

    win, _folder = folder_window
    choose_execution(qtbot, win, "dask", "")
    real, started, gate = distributed.LocalCluster, threading.Event(), threading.Event()

    def slow_start(*args, **kwargs):
        started.set()
        gate.wait(20)
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", slow_start)
    before = dask_threads()
    view = win.analysis_view
    try:
        win.open_folder_action.trigger()
        qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
        qtbot.waitUntil(view.cancel_button.isVisible, timeout=TIMEOUT_MS)
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        assert win.analysis.wait_idle(5.0)
        assert "Cancelled" in view.progress_text.text()
        # The job itself has ended (the window's close would wait for it), not only its
        # answer been dropped: within 3 s, not after the start's 20 s.
        win.analysis.slow.wait("folder", 3.0)
        assert win.analysis.execution is None or win.analysis.execution["engine"] != "dask"
    finally:
        gate.set()
    # The cluster that started late is closed, with its threads, by the start's thread.
    qtbot.waitUntil(lambda: dask_threads() <= before, timeout=TIMEOUT_MS)
