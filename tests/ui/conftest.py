"""Every UI test gets its own settings folder: nothing reads or writes the user's config."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from dpstudio.data import sample_path
from dpstudio.data.dataset import open_dataset


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    """``$DPSTUDIO_CONFIG_DIR`` pointed at an empty temporary folder."""
    folder = tmp_path / "config"
    monkeypatch.setenv("DPSTUDIO_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def window(qtbot):
    """The main window on the bundled survey sample."""
    from dpstudio.ui.main_window import MainWindow

    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    return win


@pytest.fixture
def errors(monkeypatch):
    """Record QMessageBox.critical calls instead of blocking on a modal dialog."""
    shown: list[str] = []

    def fake_critical(parent, title, text, *args, **kwargs):
        shown.append(text)
        return QMessageBox.StandardButton.Ok

    monkeypatch.setattr(QMessageBox, "critical", staticmethod(fake_critical))
    return shown


@pytest.fixture(autouse=True)
def no_unanswered_message_box(monkeypatch):
    """A modal QMessageBox.exec that no test answers would wait forever (offscreen, nobody
    clicks): fail the test with the box's text instead. Tests that expect a box patch
    ``QMessageBox.exec`` themselves, after this."""

    def unanswered(box):
        raise AssertionError(f"an unanswered modal message box: {box.text()!r}")

    monkeypatch.setattr(QMessageBox, "exec", unanswered)
