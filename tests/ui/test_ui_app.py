"""run_app: offscreen screenshots, load errors, and the no-display message."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PySide6.QtGui import QImage

from dpstudio.ui import display
from dpstudio.ui.app import run_app
from dpstudio.ui.display import NO_DISPLAY_MESSAGE, display_problem


def _distinct_colours(image: QImage) -> int:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), dtype=np.uint32)
    return len(np.unique(pixels[: image.width() * image.height()]))


def test_screenshot_has_the_requested_size_and_content(qtbot, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    shot = tmp_path / "shot.png"
    assert run_app(screenshot=str(shot), size=(900, 600)) == 0
    assert capsys.readouterr().out.strip() == str(shot.resolve())
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (900, 600)
    assert _distinct_colours(image) > 50  # text, table, plots: not a blank window


def test_screenshot_of_a_bad_dataset_fails_in_one_line(qtbot, tmp_path, capsys):
    shot = tmp_path / "shot.png"
    assert run_app(str(tmp_path / "missing.csv"), screenshot=str(shot)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.csv: file not found" in err
    assert "Traceback" not in err and not shot.exists()


def test_unwritable_screenshot_fails_cleanly(qtbot, tmp_path, capsys):
    assert run_app(screenshot=str(tmp_path / "no" / "such" / "dir.png"), size=(400, 300)) == 2
    assert "could not write the screenshot" in capsys.readouterr().err


@pytest.fixture
def no_display(monkeypatch):
    monkeypatch.setattr(display.sys, "platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)


def test_display_problem_without_display(no_display, monkeypatch):
    assert display_problem() == NO_DISPLAY_MESSAGE
    assert "xvfb-run make run" in NO_DISPLAY_MESSAGE and "--screenshot" in NO_DISPLAY_MESSAGE
    for platform in ("xcb", "wayland", "wayland;xcb"):
        monkeypatch.setenv("QT_QPA_PLATFORM", platform)
        assert display_problem() == NO_DISPLAY_MESSAGE, platform


def test_no_problem_offscreen_or_with_a_display(no_display, monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert display_problem() is None
    monkeypatch.delenv("QT_QPA_PLATFORM")
    monkeypatch.setenv("DISPLAY", ":0")
    assert display_problem() is None
    monkeypatch.delenv("DISPLAY")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert display_problem() is None


def test_no_problem_off_linux(no_display, monkeypatch):
    monkeypatch.setattr(display.sys, "platform", "darwin")
    assert display_problem() is None


def test_run_app_without_display_exits_1(no_display, capsys):
    assert run_app() == 1
    assert capsys.readouterr().err.strip() == NO_DISPLAY_MESSAGE


def test_run_app_shows_the_window_and_runs_the_event_loop(tmp_path):
    # Its own process: once a real event loop has quit, the shared QApplication of the
    # test session would no longer serve timers to the tests that follow.
    script = textwrap.dedent("""
        import os
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication
        from dpstudio.data.samples import sample_path
        from dpstudio.ui.app import run_app
        from dpstudio.ui.main_window import MainWindow
        app = QApplication([])  # the timer below needs an application to run on
        seen = []
        def close_windows():
            for widget in QApplication.topLevelWidgets():
                if isinstance(widget, MainWindow) and widget.isVisible():
                    seen.append(widget.windowTitle())
                    widget.close()
            QApplication.quit()
        QTimer.singleShot(300, close_windows)
        code = run_app(str(sample_path("health")))
        print(code, seen)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "0 ['DP Studio — health.csv']", out.stderr
