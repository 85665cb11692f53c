"""run_app: offscreen screenshots, load errors, and the no-display message."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PySide6.QtGui import QImage

from dpstudio.ui import display
from dpstudio.ui.app import run_app
from dpstudio.ui.display import display_problem


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
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "MAKELEVEL"):
        monkeypatch.delenv(name, raising=False)


def on_path(monkeypatch, *programs: str) -> None:
    """Pretend that only ``programs`` are installed (what shutil.which finds)."""
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: f"/usr/bin/{name}" if name in programs else None)


def test_display_problem_without_display(no_display, monkeypatch):
    on_path(monkeypatch, "xvfb-run")
    message = display_problem()
    assert message is not None and "\n" not in message
    assert "no display" in message and "--screenshot" in message
    for platform in ("xcb", "wayland", "wayland;xcb"):
        monkeypatch.setenv("QT_QPA_PLATFORM", platform)
        assert "no display" in display_problem(), platform


def test_with_xvfb_run_installed_it_suggests_running_under_it(no_display, monkeypatch, capsys):
    on_path(monkeypatch, "xvfb-run", "apt-get")
    assert run_app() == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "`xvfb-run -a dpstudio`" in err and "`dpstudio --screenshot shot.png`" in err
    assert "not installed" not in err and "apt-get" not in err


def test_without_xvfb_run_it_suggests_what_works_here(no_display, monkeypatch, capsys):
    on_path(monkeypatch, "apt-get")
    assert run_app() == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "xvfb-run is not installed" in err
    assert "`dpstudio --screenshot shot.png` (no display needed)" in err
    assert "`sudo apt-get install xvfb`" in err
    on_path(monkeypatch)  # no package manager it knows either
    message = display_problem()
    assert "install Xvfb (it provides xvfb-run)" in message and "sudo" not in message


def test_under_make_it_suggests_make_run(no_display, monkeypatch):
    on_path(monkeypatch, "xvfb-run")
    monkeypatch.setenv("MAKELEVEL", "1")
    assert "`xvfb-run -a make run`" in display_problem()


def test_it_names_the_program_as_it_was_started(no_display, monkeypatch, tmp_path):
    # .venv/bin/dpstudio, not on PATH: the suggestion must be a command that runs here.
    program = tmp_path / ".venv" / "bin" / "dpstudio"
    program.parent.mkdir(parents=True)
    program.write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(display.sys, "argv", [str(program)])
    on_path(monkeypatch)
    assert "`.venv/bin/dpstudio --screenshot shot.png`" in display_problem()


def test_a_chosen_display_platform_needs_offscreen_for_a_screenshot(no_display, monkeypatch):
    on_path(monkeypatch, "xvfb-run")
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert "`QT_QPA_PLATFORM=offscreen dpstudio --screenshot shot.png`" in display_problem()


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
    assert capsys.readouterr().err.strip() == display_problem()


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
