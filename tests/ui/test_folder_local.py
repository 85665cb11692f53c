"""The local model on a folder in the application (issue 16): the preview is one simulated
local release over every row, randomized where each file is (``run_on_files`` with the
same seed gives the same estimate); the error line is the randomizer's exact standard
error at n = the folder's rows, from no data; Cancel stops the pass; shuffle is still
refused in one sentence; Release… charges the local histogram's ε once."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pandas as pd
import pytest
from folder_helpers import ROWS, write_folder
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFileDialog

from dpstudio.analysis import AnalysisSpec
from dpstudio.engine.rng import SimulationSource
from dpstudio.execution import engines
from dpstudio.execution.run import run_on_files
from dpstudio.project import Project
from dpstudio.project.release_files import NO_RECORDS
from dpstudio.ui.project_dialogs import ReleaseDialog

TIMEOUT_MS = 30_000
N = 3 * ROWS


@pytest.fixture
def folder_window(qtbot, tmp_path, monkeypatch):
    """The window, File ▸ Open Folder… answered by a folder of 3 Parquet files (clusters
    of threads); :func:`open_folder` opens it."""
    from dpstudio.ui import session as session_module
    from dpstudio.ui.main_window import MainWindow

    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    folder = write_folder(tmp_path)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: str(folder)))
    win = MainWindow()
    qtbot.addWidget(win)
    win.set_execution("pandas", "")
    yield win, tmp_path
    win.analysis.shutdown()
    win.projects.shutdown()
    win.loader.shutdown()


def open_folder(qtbot, win, wait: bool = True) -> None:
    win.open_folder_action.trigger()
    qtbot.waitUntil(lambda: win.dataset is not None and not win.loader.busy,
                    timeout=TIMEOUT_MS)
    assert not wait or win.analysis.wait_idle(TIMEOUT_MS / 1000)


def pick(qtbot, combo, data) -> None:
    """Choose ``data`` in a combo box with the arrow keys, as a person would."""
    combo.setFocus()
    key = Qt.Key.Key_Down if combo.findData(data) > combo.currentIndex() else Qt.Key.Key_Up
    for _ in range(combo.count()):
        if combo.currentData() == data:
            break
        qtbot.keyClick(combo, key)
    assert combo.currentData() == data


def local_krr(qtbot, win) -> None:
    """Column ``region``, the Local trust-model button, K-RR in the mechanism combo."""
    panel = win.analysis_panel
    pick(qtbot, panel.column_combo, "region")
    qtbot.mouseClick(panel.trust_buttons["local"], Qt.MouseButton.LeftButton)
    pick(qtbot, panel.mechanism_combo, "krr")
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    s = win.session.settings()
    assert (s.column, s.trust_model, s.query, s.mechanism) == (
        "region", "local", "histogram", "krr")


def test_local_krr_on_a_folder_previews_every_row_and_draws_the_exact_error(
        qtbot, folder_window):
    win, tmp_path = folder_window
    folder = tmp_path / "visits"
    lines = []
    win.analysis.lines_ready.connect(lines.append)
    open_folder(qtbot, win)
    local_krr(qtbot, win)
    win.session.set_epsilon(1.0)
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    s = win.session.settings()
    preview = win.result_panel.preview
    assert preview is not None and preview.trust_model == "local" and preview.n == N
    # The same estimate as the execution layer's run with the same seed, bit for bit.
    seed = preview.seed
    expected = run_on_files(AnalysisSpec("local", s.spec()), win.dataset.files,
                            SimulationSource(seed), seed=seed, declared=win.session.spec)
    assert expected.result.engine.n == N
    assert list(preview.labels) == list(expected.result.engine.unbiased)
    np.testing.assert_array_equal(preview.value,
                                  list(expected.result.engine.unbiased.values()))
    # No truth is read on a folder under the local model: none drawn, none claimed.
    assert np.all(np.isnan(preview.truth))
    assert "RMSE against the true counts" not in win.result_panel.summary.text()
    # The line at ε = 1: K-RR's RMSE over k = 3 cells (North, South, other or missing)
    # for N reports, √(N (p(1−p) + (k−1) q(1−q)) / k) / (p − q): the counts add up to N,
    # so it needs none of them ...
    result = lines[-1]
    assert result.n == N and not result.reps
    line = result.curves[0]
    assert line.trust_model == "local" and line.noise_only
    e, k = math.e, 3
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    se = math.sqrt(N * (p * (1 - p) + (k - 1) * q * (1 - q)) / k) / (p - q)
    at = int(np.argmin(np.abs(line.epsilon - 1.0)))
    assert line.epsilon[at] == pytest.approx(1.0)
    assert line.error[at] == pytest.approx(se, rel=1e-12)
    # ... and it is the exact RMSE at the true counts (read here, independently).
    counts = pd.read_parquet(folder)["region"].value_counts()
    c = np.array([counts.get("North", 0), counts.get("South", 0), 0.0])
    c[2] = N - c[:2].sum()
    exact = (c * p * (1 - p) + (N - c) * q * (1 - q)) / (p - q) ** 2
    assert math.sqrt(exact.mean()) == pytest.approx(se, rel=1e-12)
    # A power check: the data-free Var* of a value no one holds would be off by 5%.
    assert abs(math.sqrt(N * q * (1 - q)) / (p - q) / se - 1) > 0.05
    # A display change reuses the pass; another draw is another pass (another estimate).
    before = preview.value.copy()
    qtbot.mouseClick(win.result_panel.draw_again, Qt.MouseButton.LeftButton)
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    assert win.result_panel.preview.seed == seed + 1
    assert not np.array_equal(win.result_panel.preview.value, before)


def test_cancel_stops_the_local_pass_and_shuffle_is_refused(qtbot, folder_window,
                                                           monkeypatch):
    from dpstudio.execution import local_partitions

    win, _ = folder_window
    real = local_partitions.file_local
    started = []

    def slow(*args, **kwargs):  # a slow file: the cancel lands mid-pass
        started.append(1)
        time.sleep(1.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(local_partitions, "file_local", slow)
    open_folder(qtbot, win, wait=False)
    panel, view = win.analysis_panel, win.analysis_view
    pick(qtbot, panel.column_combo, "region")
    qtbot.mouseClick(panel.trust_buttons["local"], Qt.MouseButton.LeftButton)
    # The pass's own words: on a loaded machine the folder's first pass (the sums of the
    # column shown on opening) may still report its last step when this one starts.
    qtbot.waitUntil(lambda: not view.cancel_button.isHidden() and bool(started)
                    and "Randomizing" in view.progress_text.text(), timeout=TIMEOUT_MS)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    assert "Cancelled" in view.progress_text.text()
    assert win.result_panel.preview is None
    assert len(started) < 3  # the files after the cancel were never randomized
    assert view.recompute_button.text() == "Compute again" and view.cancel_button.isHidden()
    # Shuffle on a folder (a sum or mean of ages): one sentence naming what works there.
    monkeypatch.setattr(local_partitions, "file_local", real)
    pick(qtbot, panel.column_combo, "age")
    assert panel.trust_buttons["shuffle"].isEnabled()
    qtbot.mouseClick(panel.trust_buttons["shuffle"], Qt.MouseButton.LeftButton)
    assert win.session.settings().trust_model == "shuffle"
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    text = view.progress_text.text()
    assert "central-model and local-model numbers" in text and "shuffle" in text
    assert "\n" not in text and text.count(". ") == 0


def test_a_local_release_from_a_folder_charges_once(qtbot, folder_window, monkeypatch):
    win, tmp_path = folder_window
    monkeypatch.setattr(ReleaseDialog, "exec", lambda _d: QDialog.DialogCode.Accepted)
    project = tmp_path / "study.dpstudio"
    assert win.projects.create_project(project, epsilon=3.0, delta=1e-5, relation="replace")
    open_folder(qtbot, win)
    local_krr(qtbot, win)
    win.session.set_epsilon(1.0)
    win.session.set_relation("replace")  # ε-LDP bounds changing one person's value
    assert win.analysis.wait_idle(TIMEOUT_MS / 1000)
    button = win.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(win.projects.release_done, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    record = blocker.args[0]
    assert (record.query, record.column, float(record.epsilon)) == ("histogram", "region",
                                                                    1.0)
    # The dialog said what the manifest says: no collector's records from a folder.
    assert win.projects.release_dialog.trust_label.text() == f"local model: {NO_RECORDS}"
    p = Project.open(project)
    assert float(p.budget(record.dataset_id).spent_epsilon) == pytest.approx(1.0)
    assert len(win.ledger_view.rows()) == 1
    manifest = next(f.path for f in record.files if f.path.name.endswith(".manifest.json"))
    data = json.loads(manifest.read_text(encoding="utf-8"))
    assert data["local"]["records_note"] == NO_RECORDS
    assert data["execution"]["engine"] == "pandas" and data["execution"]["partitions"] == 3


def test_monte_carlo_on_a_folder_is_the_spread_of_simulated_releases(tmp_path):
    from dpstudio.analysis.choices import Choices
    from dpstudio.data.folders import open_files
    from dpstudio.ui.folder_local import local_montecarlo, local_utility

    ds = open_files(write_folder(tmp_path))
    s = Choices("region", "categorical", ("categorical",), "local", "histogram", "krr",
                categories=("North", "South"))
    sim = local_montecarlo(s, ds, None, "pandas", "", runs=100,
                           epsilons=np.array([1.0]))
    line = local_utility(s, N, np.array([1.0])).curves[0]
    point = sim.curves[0]
    assert sim.n == N and sim.reps == 100 and point.kind == "simulation"
    # The analytic RMSE lies in the simulation's ±2 standard errors, which are narrow
    # enough to reject a line at half or twice the variance.
    assert point.low[0] <= line.error[0] <= point.high[0]
    assert point.high[0] < math.sqrt(2) * line.error[0]
    assert point.low[0] > line.error[0] / math.sqrt(2)
