"""The plots keep a usable data area (issue 12, item 13): at 800×800 and 1400×900, after
start-up, after presentation mode (its key and its menu item) and after View ▸ Reset
Layout, both plots' data areas are at least 180 px tall — before, the privacy–utility
plot's was 60 px at 800×800 — and the Analysis dock keeps its width. While presenting
(larger type), both plots and their captions are in view, their data areas equal."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QStyle

from dpstudio.data import open_dataset, sample_path
from dpstudio.ui import window_layout
from dpstudio.ui.layout_data_area import (
    MIN_DATA_HEIGHT,
    PRESENTING_MIN_DATA_HEIGHT,
    data_height,
)

TIMEOUT = 60.0


@pytest.fixture
def shown(qtbot, monkeypatch):
    """The main window on the survey sample at a size, shown, active and idle."""
    from dpstudio.ui import session as session_module
    from dpstudio.ui.main_window import MainWindow

    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    made = []

    def make(width, height):
        win = MainWindow(open_dataset(sample_path("survey")))
        qtbot.addWidget(win)
        win.resize(width, height)
        win.show()
        qtbot.waitExposed(win)
        win.activateWindow()
        qtbot.waitUntil(win.isActiveWindow, timeout=3000)
        made.append(win)
        _settle(qtbot, win)
        return win

    yield make
    for win in made:
        win.analysis.shutdown()
        win.projects.shutdown()


def _settle(qtbot, win, ms=300):
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.wait(ms)


def _heights(win) -> tuple[float, float]:
    """The data areas' heights as drawn: privacy–utility, trade-off."""
    return data_height(win.utility_plot), data_height(win.tradeoff_plot)


def _controls_need(win) -> int:
    panel = win.analysis_panel
    bar = panel.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
    return panel.widget().minimumSizeHint().width() + bar + 2 * panel.frameWidth()


def _menu_action(win, menu_text, action):
    menu = next(a.menu() for a in win.menuBar().actions() if a.text() == menu_text)
    assert action in menu.actions()  # where a person finds it
    return action


def _usable(win, least=MIN_DATA_HEIGHT) -> None:
    utility, tradeoff = _heights(win)
    assert utility >= least - 1, (utility, tradeoff)
    assert tradeoff >= least - 1, (utility, tradeoff)


def _presenting_in_view(win) -> None:
    """While presenting, both plots at least the presenting height, equally tall, and
    nothing to scroll to: the captions a stakeholder reads are in view."""
    _usable(win, PRESENTING_MIN_DATA_HEIGHT)
    utility, tradeoff = _heights(win)
    assert abs(utility - tradeoff) <= 3
    assert win.analysis_view.scroll.verticalScrollBar().maximum() == 0


@pytest.mark.parametrize("size", [(800, 800), (1400, 900)])
def test_both_data_areas_are_usable_at_start_while_presenting_and_after(qtbot, shown, size):
    win = shown(*size)
    _usable(win)
    start = _heights(win)
    width = win.width()  # the size asked for, or about the screen's if smaller
    dock = win.analysis_dock.width()
    assert dock >= _controls_need(win)  # the Analysis dock is not crushed for it

    qtbot.keyClick(win, Qt.Key.Key_F11)
    _settle(qtbot, win)
    assert win.presentation.enabled
    _presenting_in_view(win)
    qtbot.keyClick(win, Qt.Key.Key_F11)
    _settle(qtbot, win, 600)
    assert not win.presentation.enabled
    _usable(win)
    assert _heights(win) == pytest.approx(start, abs=3)

    # The same through View ▸ Presentation Mode.
    action = _menu_action(win, "&View", win.presentation_action)
    action.trigger()
    _settle(qtbot, win)
    assert win.presentation.enabled
    _presenting_in_view(win)
    action.trigger()
    _settle(qtbot, win, 600)
    _usable(win)
    assert _heights(win) == pytest.approx(start, abs=3)
    assert win.analysis_dock.width() == dock
    assert win.width() == width


@pytest.mark.parametrize("size", [(800, 800), (1400, 900)])
def test_a_dragged_splitter_stops_at_a_usable_plot_and_reset_layout_shares_again(
        qtbot, shown, size):
    win = shown(*size)
    start = _heights(win)
    if size == (1400, 900):  # room for both: the two data areas equally tall
        assert abs(start[0] - start[1]) <= 3
    split = win.analysis_view.split
    handle = split.handle(1)
    # Drag the handle between the plots far up, as a person would with the mouse.
    middle = QPoint(handle.width() // 2, handle.height() // 2)
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=middle)
    qtbot.mouseMove(handle, QPoint(middle.x(), middle.y() - 400))
    qtbot.mouseRelease(handle, Qt.MouseButton.LeftButton,
                       pos=QPoint(middle.x(), middle.y() - 400))
    qtbot.wait(200)
    _usable(win)  # the privacy–utility plot stops at a usable height
    if size == (1400, 900):
        assert _heights(win)[0] < start[0] - 10  # the drag did move the handle

    fitting = window_layout.target_width(win)  # its width, or its screen's if smaller
    _menu_action(win, "&View", win.reset_layout_action).trigger()
    _settle(qtbot, win)
    assert win.width() == fitting  # Reset Layout keeps the window's width (was 833)
    _usable(win)
    utility, tradeoff = _heights(win)
    assert abs(utility - tradeoff) <= 3  # shared again: equal data areas
    if win.width() == size[0]:  # the same arrangement as at start (the screen holds it)
        assert (utility, tradeoff) == pytest.approx(start, abs=3)
    assert win.analysis_dock.width() >= _controls_need(win)


def test_on_a_short_window_the_plots_scroll_rather_than_shrink(qtbot, shown):
    win = shown(800, 800)
    scroll = win.analysis_view.scroll
    bar = scroll.verticalScrollBar()
    assert bar.isVisible() and bar.maximum() > 0  # 800 px cannot hold both at 180 px
    # The bottom of the result preview is reachable: scrolled to the end, it is in view.
    bar.setValue(bar.maximum())
    qtbot.wait(50)
    panel = win.result_panel
    bottom = panel.mapTo(scroll.viewport(), QPoint(0, panel.height()))
    assert bottom.y() <= scroll.viewport().height() + 1
    assert not scroll.focusPolicy() & Qt.FocusPolicy.TabFocus  # no extra Tab stop


def test_after_a_restart_with_a_saved_layout_the_data_areas_stay_usable(qtbot, shown):
    win = shown(800, 800)
    qtbot.keyClick(win, Qt.Key.Key_F11)
    _settle(qtbot, win)
    qtbot.keyClick(win, Qt.Key.Key_F11)
    _settle(qtbot, win)
    win.close()  # saves the window's layout, as on quitting
    again = shown(800, 800)  # the layout restored from the settings
    assert again.settings.window_bytes("state") is not None
    _usable(again)
    assert again.analysis_dock.width() >= _controls_need(again)
