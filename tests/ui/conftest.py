"""Every UI test gets its own settings folder: nothing reads or writes the user's config."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialog, QFileDialog, QInputDialog, QMessageBox

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
    """A modal message box that no test answers would wait forever (offscreen, nobody
    clicks): fail the test with the box's text instead. Tests that expect a box patch
    ``QMessageBox.exec`` (or the static ``critical``, ``warning``, ``information`` or
    ``question``) themselves, after this.

    The static functions run Qt's own exec, not the patched one: a failure shown with
    ``QMessageBox.critical`` while a fixture waited (a folder that did not load, say) hung
    the whole run inside the box's event loop, past every ``waitUntil`` timeout."""

    def unanswered(box):
        raise AssertionError(f"an unanswered modal message box: {box.text()!r}")

    def unanswered_static(kind):
        def show(_parent, title, text, *args, **kwargs):
            raise AssertionError(f"an unanswered QMessageBox.{kind}: {title!r}: {text!r}")
        return staticmethod(show)

    def unanswered_dialog(dialog):
        raise AssertionError(f"an unanswered modal dialog: {dialog.windowTitle()!r} "
                             f"({type(dialog).__name__})")

    def unanswered_chooser(owner, kind):
        def show(*args, **kwargs):
            raise AssertionError(f"an unanswered {owner.__name__}.{kind}")
        return staticmethod(show)

    monkeypatch.setattr(QMessageBox, "exec", unanswered)
    for kind in ("critical", "warning", "information", "question"):
        monkeypatch.setattr(QMessageBox, kind, unanswered_static(kind))
    # Any other modal dialog (Python subclasses, file and input dialogs included) and the
    # static file and input choosers: a test that expects one patches it after this.
    monkeypatch.setattr(QDialog, "exec", unanswered_dialog)
    for kind in ("getOpenFileName", "getOpenFileNames", "getSaveFileName",
                 "getExistingDirectory"):
        monkeypatch.setattr(QFileDialog, kind, unanswered_chooser(QFileDialog, kind))
    for kind in ("getText", "getInt", "getDouble", "getItem", "getMultiLineText"):
        monkeypatch.setattr(QInputDialog, kind, unanswered_chooser(QInputDialog, kind))
