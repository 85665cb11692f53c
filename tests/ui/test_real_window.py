"""Focus and keys in a real window (issue 12, items 5, 13 and 17), on a real X display:
window activation, focus moving as widgets hide and show, and shortcuts reaching their
menu actions wherever the focus is are what offscreen rendering does not show.

Run under Xvfb::

    xvfb-run -a env QT_QPA_PLATFORM=xcb .venv/bin/pytest -q tests/ui/test_real_window.py

Skipped (with the reason) offscreen and where there is no display, as in ``make test``.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QWidget

from dpstudio.data import open_dataset, sample_path
from dpstudio.ui import schema_panel as sp

VIRTUAL = ("offscreen", "minimal", "vnc")
_PLATFORM = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0]
pytestmark = pytest.mark.skipif(
    _PLATFORM in VIRTUAL or not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")),
    reason="needs a real display for focus and Tab (QT_QPA_PLATFORM="
           f"{_PLATFORM or 'unset'}, DISPLAY={os.environ.get('DISPLAY') or 'unset'}): "
           "run under xvfb-run -a env QT_QPA_PLATFORM=xcb")

TIMEOUT = 60.0
CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def real_display(qapp):
    if QGuiApplication.platformName() in VIRTUAL:
        pytest.skip(f"Qt runs on the {QGuiApplication.platformName()} platform, not a display")


@pytest.fixture
def undeclared_csv(tmp_path):
    """A survey without declarations: an age column whose bounds nobody has typed yet."""
    rng = np.random.default_rng(5)
    path = tmp_path / "affairs.csv"
    pd.DataFrame({"age": rng.integers(18, 90, 300), "religious": rng.integers(1, 6, 300),
                  "gender": rng.choice(["female", "male"], 300)}).to_csv(path, index=False)
    return path


@pytest.fixture
def shown(qtbot, monkeypatch, real_display):
    """A main window on a file, at a size, shown, active and idle."""
    from dpstudio.ui import session as session_module
    from dpstudio.ui.main_window import MainWindow

    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    # Closing after declaring asks whether to save: the test's copy is thrown away.
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda *a, **k: QMessageBox.StandardButton.Discard))
    made = []

    def make(path=None, size=(1400, 900)):
        win = MainWindow(open_dataset(path or sample_path("survey")))
        qtbot.addWidget(win)
        win.resize(*size)
        win.show()
        qtbot.waitExposed(win)
        win.activateWindow()
        qtbot.waitUntil(win.isActiveWindow, timeout=5000)
        assert win.analysis.wait_idle(TIMEOUT)
        qtbot.wait(200)
        made.append(win)
        return win

    yield make
    for win in made:
        win.analysis.shutdown()
        win.projects.shutdown()


# --- helpers ---------------------------------------------------------------------------


def focused() -> QWidget | None:
    return QApplication.focusWidget()


def inside(widget: QWidget | None, container: QWidget) -> bool:
    return widget is not None and (widget is container or container.isAncestorOf(widget))


def press(qtbot, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """Press a key where the focus is, as the keyboard does."""
    widget = focused()
    assert widget is not None, "nothing has the keyboard focus"
    qtbot.keyClick(widget, key, modifier)
    qtbot.wait(30)


def type_text(qtbot, text: str) -> None:
    for char in text:
        press(qtbot, char)


def click_cell(qtbot, panel, name: str, column: int, double: bool = False) -> None:
    index = panel.model.index(panel.model.row_of(name), column)
    panel.table.scrollTo(index)
    pos = panel.table.visualRect(index).center()
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    if double:
        qtbot.mouseDClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def click_plot(qtbot, plot) -> None:
    """Click inside the plot's data area, as a person does to pick the plot."""
    view = plot.getPlotItem().vb.sceneBoundingRect().center()
    pos = plot.mapFromScene(view)
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.waitUntil(lambda: inside(focused(), plot), timeout=3000)


def focus_table(qtbot, win) -> None:
    table = win.schema_panel.table
    win.columns_dock.raise_()  # in front of the Analysis tab on a small screen
    qtbot.waitUntil(lambda: not win.columns_dock.visibleRegion().isEmpty(), timeout=3000)
    click_cell(qtbot, win.schema_panel, "age", sp.COL_NAME)
    qtbot.waitUntil(table.hasFocus, timeout=3000)


# --- (a) Tab moves on out of the Columns table ----------------------------------------------


@pytest.mark.parametrize("size", [(1400, 900), (800, 800)])
def test_tab_and_shift_tab_leave_the_columns_table(qtbot, shown, size):
    win = shown(size=size)
    table = win.schema_panel.table
    focus_table(qtbot, win)
    press(qtbot, Qt.Key.Key_Tab)
    after_tab = focused()
    assert not inside(after_tab, table), after_tab
    assert after_tab is not None and after_tab.isVisible()  # somewhere a person can see

    focus_table(qtbot, win)
    press(qtbot, Qt.Key.Key_Backtab, SHIFT)
    assert not inside(focused(), table), focused()

    # Not stuck anywhere: Tab after Tab goes round the window and comes back.
    focus_table(qtbot, win)
    seen = []
    for _ in range(80):
        press(qtbot, Qt.Key.Key_Tab)
        seen.append(focused())
        if focused() is table:
            break
    assert focused() is table, [type(w).__name__ for w in seen[-5:]]
    assert len({id(w) for w in seen}) >= 5  # many stops, none that holds the focus


# --- (b) the bounds editor: 18, Tab, 65, Enter ---------------------------------------------


def test_bounds_typed_18_tab_65_enter_declare_both_and_focus_returns(qtbot, shown,
                                                                    undeclared_csv):
    win = shown(undeclared_csv)
    panel = win.schema_panel
    assert panel.cell_texts("age")[2] == "undeclared"
    click_cell(qtbot, panel, "age", sp.COL_DOMAIN, double=True)
    editor = panel.table.findChild(sp.BoundsEditor)
    assert editor is not None
    qtbot.waitUntil(lambda: focused() is editor.lower, timeout=3000)
    type_text(qtbot, "18")
    press(qtbot, Qt.Key.Key_Tab)
    assert focused() is editor.upper  # still in the editor, on the upper bound
    type_text(qtbot, "65")
    press(qtbot, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.schema()["age"].bounds == (18.0, 65.0), timeout=3000)
    assert panel.cell_texts("age")[2] == "18 – 65"
    qtbot.waitUntil(lambda: panel.table.findChild(sp.BoundsEditor) is None, timeout=3000)
    assert focused() is panel.table  # back on the table, ready for the next row
    assert panel.table.currentIndex().row() == panel.model.row_of("age")
    # ... and the analysis uses the declared bounds.
    assert win.session.column == "age"
    assert win.analysis.wait_idle(TIMEOUT)


# --- (c) the menus' shortcuts wherever the focus is --------------------------------------------


@pytest.mark.parametrize("where", ["table", "plot"])
def test_menu_shortcuts_work_from_the_table_and_from_a_plot(qtbot, shown, monkeypatch,
                                                            tmp_path, where):
    from dpstudio.ui.guide import GuideDialog

    win = shown()
    if where == "table":
        focus_table(qtbot, win)
        home = win.schema_panel.table
    else:
        click_plot(qtbot, win.utility_plot)
        home = win.utility_plot
    session = win.session

    press(qtbot, Qt.Key.Key_H, CTRL)  # Analysis ▸ Hide True Values
    assert session.hide_true and win.hide_true_action.isChecked()
    press(qtbot, Qt.Key.Key_H, CTRL)
    assert not session.hide_true
    assert inside(focused(), home)

    seed = win.result_panel.preview.seed
    press(qtbot, Qt.Key.Key_R, CTRL)  # Analysis ▸ Draw Again
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.waitUntil(lambda: win.result_panel.preview.seed != seed, timeout=5000)

    clicks = []
    win.result_panel.set_release_state(True, "Release this mean (ε 1)")
    win.result_panel.release_button.clicked.disconnect()
    win.result_panel.release_button.clicked.connect(lambda: clicks.append(1))
    press(qtbot, Qt.Key.Key_R, CTRL | SHIFT)  # Analysis ▸ Release…
    assert clicks == [1]

    target = tmp_path / "plot.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target), "")))
    press(qtbot, Qt.Key.Key_E, CTRL | SHIFT)  # File ▸ Export Plot as PNG…
    assert target.is_file() and target.stat().st_size > 1000

    assert inside(focused(), home)
    press(qtbot, Qt.Key.Key_F1)  # Help ▸ Guide and Glossary
    guide = win.findChild(GuideDialog)
    assert guide is not None
    qtbot.waitUntil(guide.isVisible, timeout=3000)
    guide.close()


# --- (d) presentation mode moves the focus sensibly, and gives it back -----------------------


@pytest.mark.parametrize("size", [(1400, 900), (800, 800)])
def test_presentation_mode_focuses_epsilon_and_leaving_gives_the_focus_back(qtbot, shown,
                                                                          size):
    win = shown(size=size)
    table = win.schema_panel.table
    focus_table(qtbot, win)

    press(qtbot, Qt.Key.Key_F11)
    assert win.presentation.enabled
    spin = win.presentation_bar.epsilon.spin
    # The Columns table is hidden: the focus goes to the one control left, ε.
    qtbot.waitUntil(lambda: inside(focused(), spin), timeout=3000)
    type_text(qtbot, "2")
    press(qtbot, Qt.Key.Key_Return)
    assert win.session.epsilon == 2.0

    press(qtbot, Qt.Key.Key_F11)
    assert not win.presentation.enabled
    qtbot.waitUntil(lambda: focused() is table, timeout=3000)  # where it was before
    assert table.currentIndex().row() == win.schema_panel.model.row_of("age")

    # Entered from a plot, the focus stays on that plot, and is there after.
    click_plot(qtbot, win.tradeoff_plot)
    press(qtbot, Qt.Key.Key_F11)
    assert win.presentation.enabled
    assert inside(focused(), win.tradeoff_plot)
    press(qtbot, Qt.Key.Key_F11)
    assert inside(focused(), win.tradeoff_plot)

