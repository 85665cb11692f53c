"""Keyboard and help (issue 12, item 17): Tab moves on out of the tables, the main actions
have shortcuts shown in the menus (and none clash), Help ▸ Guide explains the terms."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu

from dpstudio.ui.texts import GLOSSARY, TRUST_MODELS


@pytest.fixture
def shown(qtbot, monkeypatch):
    """The window on the survey sample, shown, active and idle."""
    from dpstudio.data import open_dataset, sample_path
    from dpstudio.ui import session as session_module
    from dpstudio.ui.main_window import MainWindow

    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    assert win.analysis.wait_idle(30)
    yield win
    win.analysis.shutdown()
    win.projects.shutdown()


def _focus(qtbot, widget) -> None:
    widget.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=3000)


def _inside(widget, container) -> bool:
    return widget is not None and (widget is container or container.isAncestorOf(widget))


def test_tab_moves_on_out_of_the_columns_table(qtbot, shown):
    table = shown.schema_panel.table
    _focus(qtbot, table)
    table.setCurrentIndex(table.model().index(0, 0))
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert not _inside(QApplication.focusWidget(), table)
    _focus(qtbot, table)
    qtbot.keyClick(table, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert not _inside(QApplication.focusWidget(), table)
    # The arrow keys still walk the list, and choose the column for the analysis.
    _focus(qtbot, table)
    table.setCurrentIndex(table.model().index(4, 0))
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert table.currentIndex().row() == 5


def test_tab_moves_on_out_of_the_data_table(qtbot, shown):
    qtbot.keyClick(shown, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # View ▸ Data
    view = shown.table_view
    assert shown.tabs.currentWidget() is view
    _focus(qtbot, view)
    view.setCurrentIndex(view.model().index(0, 0))
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    assert not _inside(QApplication.focusWidget(), view)
    _focus(qtbot, view)
    qtbot.keyClick(view, Qt.Key.Key_Right)  # within the table: the arrows
    assert view.hasFocus()


def _menus(window) -> dict[QAction, str]:
    """Every action reachable from the menu bar → its menu path."""
    found: dict[QAction, str] = {}

    def walk(menu: QMenu, path: str) -> None:
        menu.aboutToShow.emit()
        for action in menu.actions():
            name = path + action.text().replace("&", "")
            if action.menu() is not None:
                walk(action.menu(), name + " ▸ ")
            elif not action.isSeparator():
                found[action] = name

    for top in window.menuBar().actions():
        walk(top.menu(), top.text().replace("&", "") + " ▸ ")
    return found


def test_the_main_actions_have_shortcuts_shown_in_their_menus(shown):
    in_menus = _menus(shown)
    expected = {
        shown.release_action: ("Analysis ▸ Release…", "Ctrl+Shift+R"),
        shown.export_actions["png"]: ("File ▸ Export Plot as PNG…", "Ctrl+Shift+E"),
        shown.hide_true_action: ("Analysis ▸ Hide True Values", "Ctrl+H"),
        shown.draw_again_action: ("Analysis ▸ Draw Again", "Ctrl+R"),
        shown.guide_action: ("Help ▸ Guide and Glossary", "F1"),
        shown.presentation_action: ("View ▸ Presentation Mode", "F11"),
    }
    for action, (path, keys) in expected.items():
        assert in_menus.get(action) == path
        assert action.shortcut().toString() == keys
        assert action.isShortcutVisibleInContextMenu() or not QApplication.instance(
            ).testAttribute(Qt.ApplicationAttribute.AA_DontShowShortcutsInContextMenus)
    assert shown.guide_action.shortcut() == QKeySequence(QKeySequence.StandardKey.HelpContents)


def test_no_two_actions_share_a_shortcut(shown):
    owners: dict[str, list[str]] = {}
    for action in shown.findChildren(QAction):
        if action.shortcutContext() == Qt.ShortcutContext.WidgetShortcut:
            continue
        for key in action.shortcuts():
            owners.setdefault(key.toString(), []).append(action.text())
    clashes = {key: names for key, names in owners.items() if len(set(names)) > 1}
    assert clashes == {}
    assert {"Ctrl+R", "Ctrl+Shift+R", "Ctrl+H", "Ctrl+Shift+E", "F1"} <= set(owners)


def test_the_shortcuts_do_what_their_menus_say(qtbot, shown, monkeypatch, tmp_path):
    session, panel = shown.session, shown.analysis_panel
    qtbot.keyClick(shown, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    assert session.hide_true and panel.hide_true.isChecked()
    assert shown.hide_true_action.isChecked()
    box = panel.hide_true  # the check box, by hand (on its indicator)
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    assert not session.hide_true and not shown.hide_true_action.isChecked()

    seed = shown.result_panel.preview.seed
    qtbot.keyClick(shown, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert shown.analysis.wait_idle(30)
    qtbot.waitUntil(lambda: shown.result_panel.preview.seed != seed, timeout=5000)

    target = tmp_path / "plot.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target), "")))
    qtbot.keyClick(shown, Qt.Key.Key_E,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert target.is_file() and target.stat().st_size > 1000


def test_release_follows_its_button_and_says_why_it_is_disabled(qtbot, shown):
    button, action = shown.result_panel.release_button, shown.release_action
    assert not button.isEnabled() and not action.isEnabled()
    assert action.statusTip() == button.toolTip() and "project" in action.statusTip()
    shown.result_panel.set_release_state(True, "Release this mean (ε 1)")
    assert action.isEnabled() and action.statusTip() == "Release this mean (ε 1)"
    clicks = []
    button.clicked.connect(lambda: clicks.append(1))
    qtbot.keyClick(shown, Qt.Key.Key_R,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert clicks == [1]  # the same path as the button: the release asks first
    shown.result_panel.set_release_state(False, "No project")
    assert not action.isEnabled()


def test_help_guide_opens_offline_with_the_glossary_and_the_keys(qtbot, shown):
    from dpstudio.ui.guide import GLOSSARY_TERMS, GuideDialog, definition

    qtbot.keyClick(shown, Qt.Key.Key_F1)
    guide = shown.findChild(GuideDialog)
    assert guide is not None and guide.isVisible()
    text = guide.text()
    for heading in ("Steps", "The two plots", "Trust models", "Glossary", "Keyboard"):
        assert heading in text
    for meta in TRUST_MODELS.values():
        assert meta["label"] in text and meta["explanation"] in text
    for heading, _anchor, key in GLOSSARY_TERMS:  # each term once, under its own heading
        assert GLOSSARY[key] in text if key == "trust" else (
            f"{heading}: {definition(GLOSSARY[key])}" in text)
    assert "Neighbouring datasets" in text and "δ — the failure probability" in text
    assert "Privacy–utility" in text and "Attacker's trade-off" in text
    assert "Analysis ▸ Release…" in text and "Ctrl+Shift+R" in text
    assert not guide.browser.openExternalLinks()
    assert "http" not in guide.browser.toHtml().replace("http://www.w3.org", "")
    qtbot.keyClick(shown, Qt.Key.Key_F1)  # again: the same window, not a second one
    assert len(shown.findChildren(GuideDialog)) == 1
    guide.close()
