"""The first hour's speed and first run (issue 12, items 18 and 19): a "computing" mark on
each plot while its jobs run, one file's curves never shown for another, the lazy imports
the first frame relies on, and `make run` without pip's warnings."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLabel
from ui_helpers import TIMEOUT, close_window, open_window, pick, write_declared_csv

from dpstudio.ui import analysis_jobs

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 5000


def computing_marks(plot) -> list[QLabel]:
    """The "Computing…"/"Simulating…" labels a person sees on ``plot``."""
    return [label for label in plot.findChildren(QLabel)
            if label.isVisible() and label.text() in ("Computing…", "Simulating…")]


def gate(monkeypatch, name: str) -> threading.Event:
    """Hold the analysis job ``name`` (e.g. ``_tradeoff_job``) until the event is set."""
    release = threading.Event()
    original = getattr(analysis_jobs, name)

    def held(*args, state=None, **kwargs):
        release.wait(TIMEOUT)
        return original(*args, state=state, **kwargs)

    monkeypatch.setattr(analysis_jobs, name, held)
    return release


def age_csv(path: Path, ages, upper: int = 100) -> Path:
    """A file of one "age" column declared 0 – ``upper``."""
    return write_declared_csv(path, ["age"], [[int(a)] for a in ages],
                              [{"name": "age", "type": "numeric", "lower": 0, "upper": upper}])


@pytest.fixture
def survey_window(qtbot, monkeypatch):
    from dpstudio.data.samples import sample_path

    win = open_window(qtbot, sample_path("survey"), monkeypatch)
    yield win
    close_window(win)


def test_the_trade_off_plot_says_computing_while_its_curves_compute(survey_window, qtbot,
                                                                     monkeypatch):
    window = survey_window
    assert computing_marks(window.tradeoff_plot) == []
    release = gate(monkeypatch, "_tradeoff_job")
    before = window.session.epsilon
    slider = window.analysis_panel.epsilon.slider
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_PageUp)  # ε up a quarter decade, as a person would
    assert window.session.epsilon > before
    qtbot.waitUntil(lambda: computing_marks(window.tradeoff_plot) != [], timeout=WAIT_MS)
    (mark,) = computing_marks(window.tradeoff_plot)
    assert "trade-off curves" in mark.parentWidget().toolTip()
    assert computing_marks(window.utility_plot) == []  # its curves do not depend on ε
    release.set()
    qtbot.waitUntil(lambda: computing_marks(window.tradeoff_plot) == [], timeout=WAIT_MS)
    assert window.tradeoff_plot.result.epsilon == pytest.approx(window.session.epsilon)


def test_cancelling_the_simulation_takes_its_mark_away(survey_window, qtbot, monkeypatch):
    window = survey_window
    view = window.analysis_view
    release = gate(monkeypatch, "_points_job")
    pick(qtbot, window.analysis_panel.query_combo, "Sum")
    assert window.session.query == "sum"
    qtbot.waitUntil(lambda: computing_marks(window.utility_plot) != [], timeout=WAIT_MS)
    (mark,) = computing_marks(window.utility_plot)
    assert "Monte-Carlo simulation" in mark.parentWidget().toolTip()
    qtbot.waitUntil(lambda: view.cancel_button.isVisible(), timeout=WAIT_MS)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert computing_marks(window.utility_plot) == []
    release.set()
    assert window.analysis.wait_idle(TIMEOUT)
    assert computing_marks(window.utility_plot) == []


def test_a_new_file_never_shows_the_last_files_numbers(qtbot, tmp_path, monkeypatch):
    # Same column name, same declaration, same n: only the values differ.
    young = age_csv(tmp_path / "young.csv", np.arange(200) % 10 + 20)   # mean 24.5
    old = age_csv(tmp_path / "old.csv", np.arange(200) % 10 + 60)       # mean 64.5
    window = open_window(qtbot, young, monkeypatch)
    try:
        assert "true value 24.5" in window.result_panel.summary.text()
        # File ▸ Open…, the dialog answered with the other file.
        monkeypatch.setattr(QFileDialog, "getOpenFileName",
                            staticmethod(lambda *a, **k: (str(old), "")))
        release = gate(monkeypatch, "_preview_job")
        window.open_action.trigger()
        qtbot.waitUntil(lambda: window.dataset is not None and window.dataset.name == "old.csv",
                        timeout=WAIT_MS)
        # While the new file's release is simulated, the last file's is not shown for it.
        assert "Simulating a release" in window.result_panel.summary.text()
        release.set()
        assert window.analysis.wait_idle(TIMEOUT)
        assert "true value 64.5" in window.result_panel.summary.text()
        assert "24.5" not in window.result_panel.summary.text()
    finally:
        close_window(window)


def test_a_new_files_curves_are_its_own(qtbot, tmp_path, monkeypatch):
    # The curves are cached by their settings: the same column and declaration in another
    # file must still be computed on that file (here its values all lie above the bounds).
    inside = age_csv(tmp_path / "inside.csv", np.arange(200) % 10 + 20, upper=50)
    above = age_csv(tmp_path / "above.csv", np.arange(200) % 10 + 60, upper=50)
    window = open_window(qtbot, inside, monkeypatch)
    try:
        assert window.utility_plot.clamping_warning() == ""
        monkeypatch.setattr(QFileDialog, "getOpenFileName",
                            staticmethod(lambda *a, **k: (str(above), "")))
        window.open_action.trigger()
        qtbot.waitUntil(lambda: window.dataset.name == "above.csv", timeout=WAIT_MS)
        assert window.analysis.wait_idle(TIMEOUT)
        assert "100%" in window.utility_plot.clamping_warning()
    finally:
        close_window(window)


def _imported_after(statement: str) -> set[str]:
    code = textwrap.dedent(f"""
        import sys
        {statement}
        print("\\n".join(sorted(sys.modules)))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_starting_the_app_imports_nothing_heavy_before_it_knows_it_can_show_a_window():
    loaded = _imported_after("import dpstudio.ui.app")
    heavy = {"pandas", "scipy", "pyqtgraph", "PySide6.QtWidgets", "dpstudio.ui.main_window"}
    assert not heavy & loaded


def test_the_first_frame_does_not_import_the_analysis_jobs_modules():
    # The trade-off and preview modules are imported by their jobs, in the worker thread.
    loaded = _imported_after("import dpstudio.ui.main_window")
    assert "dpstudio.ui.main_window" in loaded
    assert not {"dpstudio.analysis.preview", "dpstudio.analysis.privacy"} & loaded


def test_the_app_name_is_the_windows():
    from dpstudio.ui import app, window_menus

    assert app.APP_NAME == window_menus.APP_NAME


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_installs_quietly(tmp_path):
    # Dry run of a first `make run` into a fresh environment: pip prints errors only, and
    # the long commands are not echoed (one line says what is happening instead).
    venv = tmp_path / "venv"
    out = subprocess.run(["make", "-n", "run", f"VENV={venv}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, env={**os.environ, "MAKEFLAGS": ""})
    assert out.returncode == 0, out.stderr
    installs = [line for line in out.stdout.splitlines() if "pip" in line and "install" in line]
    assert len(installs) == 2
    for line in installs:
        assert "--quiet --quiet" in line and "PIP_DISABLE_PIP_VERSION_CHECK=1" in line
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("$(STAMP): pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert all(line.startswith("\t@") for line in recipe.splitlines()[1:])
