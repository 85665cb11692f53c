"""Every enabled action of every menu, clicked once on a loaded sample: no traceback.

Modal dialogs are answered at once (their ``exec`` returns "rejected"/"cancel"), file
dialogs are patched (Open: cancelled; Save: a temporary file), non-modal windows (the
demo, the questionnaire, the guide) are closed after their action. Any exception raised
in a slot — the way the Columns panel's TypeError went unnoticed — fails the test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QMenu, QMessageBox, QWidget

from dpstudio.ui import style

TIMEOUT_MS = 30_000


@pytest.fixture
def answered(monkeypatch, tmp_path):
    """Every modal dialog answered at once; Save dialogs get a file in ``tmp_path``."""
    saved: list[str] = []

    def save_name(_parent=None, _caption="", start="", _filter="", *a, **k):
        name = Path(start).name or "out"
        path = saves / name
        saved.append(str(path))
        return str(path), ""

    saves = tmp_path / "saved"
    saves.mkdir()
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: ""))
    for name in ("critical", "warning", "information"):
        monkeypatch.setattr(QMessageBox, name,
                            staticmethod(lambda *a, **k: QMessageBox.StandardButton.Ok))
    monkeypatch.setattr(QMessageBox, "question",
                        staticmethod(lambda *a, **k: QMessageBox.StandardButton.Cancel))
    monkeypatch.setattr(QMessageBox, "about", staticmethod(lambda *a, **k: None))
    monkeypatch.setattr(QMessageBox, "exec", lambda box: QMessageBox.StandardButton.Cancel)
    monkeypatch.setattr(QDialog, "exec", lambda dialog: QDialog.DialogCode.Rejected)
    return saved


def menu_actions(menu: QMenu, path: str = "") -> list[tuple[str, QAction]]:
    """The actions of ``menu`` and its submenus, as a person finds them: a menu fills
    itself when it opens (Open Recent), so ``aboutToShow`` is sent first."""
    menu.aboutToShow.emit()
    found = []
    for action in menu.actions():
        name = f"{path}{action.text().replace('&', '')}"
        if action.menu() is not None:
            found += menu_actions(action.menu(), f"{name} ▸ ")
        elif not action.isSeparator():
            found.append((name, action))
    return found


def click_every_action(qtbot, window) -> list[str]:
    """Trigger each enabled menu action once (Quit last); return the names clicked."""
    clicked = []
    for top in window.menuBar().actions():
        for name, action in menu_actions(top.menu(), f"{top.text().replace('&', '')} ▸ "):
            if not action.isEnabled() or action is window.quit_action:
                continue
            before = set(QApplication.topLevelWidgets())
            action.trigger()
            clicked.append(name)
            # Background work started by the action (a dataset loading, the analysis)
            # finishes before the next click, so its errors are this action's.
            qtbot.waitUntil(lambda: not window.loader.busy, timeout=TIMEOUT_MS)
            assert window.analysis.wait_idle(TIMEOUT_MS / 1000), name
            for widget in set(QApplication.topLevelWidgets()) - before:
                if isinstance(widget, QDialog) and widget.isVisible():
                    widget.close()  # a non-modal window the action opened
    window.quit_action.trigger()
    clicked.append("File ▸ Quit")
    return clicked


def _window(qtbot, monkeypatch, tmp_path):
    """The window on copies of the samples: Save Declarations must write no bundled file."""
    from dpstudio.data import open_dataset
    from dpstudio.data.samples import SAMPLES, sample_path
    from dpstudio.ui import main_window
    from dpstudio.ui import session as session_module

    copies = tmp_path / "samples"
    copies.mkdir()
    for name in SAMPLES:
        source = sample_path(name)
        for path in source.parent.glob(f"{source.name}*"):
            shutil.copy(path, copies / path.name)
    monkeypatch.setattr(main_window, "sample_path",
                        lambda name: copies / f"{name.removesuffix('.csv')}.csv")
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    win = main_window.MainWindow(open_dataset(copies / "survey.csv"))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    assert win.analysis.wait_idle(30)
    return win


def test_every_enabled_menu_action_runs_without_a_traceback(qtbot, monkeypatch, answered, tmp_path):
    window = _window(qtbot, monkeypatch, tmp_path)
    try:
        with qtbot.captureExceptions() as exceptions:
            clicked = click_every_action(qtbot, window)
    finally:
        style.apply_palette(QApplication.instance(), "light")
        window.analysis.shutdown()
        window.projects.shutdown()
    problems = [f"{kind.__name__}: {value}" for kind, value, _tb in exceptions]
    assert problems == []
    # Every menu was walked: the main actions of each are among those clicked.
    for name in ("File ▸ Open…", "File ▸ Open Sample ▸ health.csv", "File ▸ Export Plot as PNG…",
                 "View ▸ Presentation Mode", "View ▸ Reset Layout", "Analysis ▸ Draw Again",
                 "Analysis ▸ New Release Plan…",
                 "Analysis ▸ Hide True Values", "Tools ▸ Sensitivity Questionnaire…",
                 "Help ▸ Guide and Glossary", "File ▸ Quit"):
        assert name in clicked, name
    assert any(Path(p).suffix == ".png" for p in answered)  # the plot was exported
    assert not window.isVisible()  # Quit closed the window


def test_the_walk_reports_an_action_that_raises(qtbot, monkeypatch, answered, tmp_path):
    """The check can fail: an action whose slot raises is caught and named."""
    window = _window(qtbot, monkeypatch, tmp_path)
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")

    def broken() -> None:
        raise TypeError("rows() takes 1 positional argument but 2 were given")

    bad = QAction("Broken", window)
    bad.triggered.connect(broken)
    help_menu.addAction(bad)
    try:
        with qtbot.captureExceptions() as exceptions:
            click_every_action(qtbot, window)
    finally:
        style.apply_palette(QApplication.instance(), "light")
        window.analysis.shutdown()
        window.projects.shutdown()
    assert [str(value) for _kind, value, _tb in exceptions] == [
        "rows() takes 1 positional argument but 2 were given"]


def test_no_dialog_is_left_open(qtbot, monkeypatch, answered, tmp_path):
    window = _window(qtbot, monkeypatch, tmp_path)
    try:
        click_every_action(qtbot, window)
    finally:
        style.apply_palette(QApplication.instance(), "light")
        window.analysis.shutdown()
        window.projects.shutdown()
    left = [w for w in QApplication.topLevelWidgets()
            if isinstance(w, QDialog) and w.isVisible()]
    assert left == []
    assert isinstance(window, QWidget)
