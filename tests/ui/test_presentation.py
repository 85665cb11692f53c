"""Presentation mode, plot export (PNG and SVG), and the light and dark palettes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLabel,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui import style
from dpstudio.ui.export_plot import PlotFocusTracker, export_plot, suggested_file_name
from dpstudio.ui.presentation import PresentationMode, caption_for, set_caption


def _plot(title="Trade-off: what an attacker can tell"):
    widget = pg.PlotWidget()
    widget.setTitle(title, size="11pt")
    widget.getPlotItem().setLabel("bottom", "Type I error α")
    widget.getPlotItem().setLabel("left", "Type II error β")
    widget.getPlotItem().showGrid(x=True, y=True, alpha=0.2)
    widget.getPlotItem().addLegend()
    x = np.linspace(0, 1, 50)
    widget.plot(x, (1 - x) ** 2, pen=pg.mkPen("#2563eb", width=2), name="Laplace")
    widget.resize(480, 360)
    return widget


@pytest.fixture
def host(qtbot):
    """A window with two plots side by side, as the analysis view has."""
    from PySide6.QtWidgets import QMainWindow

    window = QMainWindow()
    centre = QWidget()
    layout = QVBoxLayout(centre)
    window.plots = [_plot(), _plot("Privacy–utility")]
    for plot in window.plots:
        layout.addWidget(plot)
    window.label = QLabel("ε = 1", centre)
    layout.addWidget(window.label)
    window.setCentralWidget(centre)
    window.resize(700, 800)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_export_png_has_pixels_and_svg_parses(qtbot, tmp_path):
    plot = _plot()
    qtbot.addWidget(plot)
    plot.show()
    qtbot.waitExposed(plot)
    png = export_plot(plot, tmp_path / "tradeoff.png")
    image = QImage(str(png))
    assert image.width() >= 2 * 400  # twice the on-screen size
    pixels = np.frombuffer(image.convertToFormat(QImage.Format.Format_RGB32).constBits(),
                           dtype=np.uint32)
    assert len(np.unique(pixels)) > 20  # a drawn plot, not a blank image
    svg = export_plot(plot, tmp_path / "tradeoff.svg")
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    text = svg.read_text(encoding="utf-8")
    assert "Trade-off" in text and "<path" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tradeoff.png", "tradeoff.svg"]


def test_export_errors_leave_nothing_behind(qtbot, tmp_path):
    plot = _plot()
    qtbot.addWidget(plot)
    with pytest.raises(ValueError, match="export as .png or .svg"):
        export_plot(plot, tmp_path / "plot.gif")
    with pytest.raises(OSError):
        export_plot(plot, tmp_path / "missing-folder" / "plot.png")
    assert list(tmp_path.iterdir()) == []
    assert suggested_file_name(plot, "svg") == "trade-off-what-an-attacker-can-tell.svg"


def test_the_plot_under_focus_is_the_one_exported(qtbot, host):
    tracker = PlotFocusTracker(host)
    first, second = host.plots
    assert tracker.current() is first  # nothing focused yet: the first plot
    second.setFocus()
    qtbot.waitUntil(lambda: tracker.current() is second, timeout=2000)
    tracker.watch()
    qtbot.mouseClick(first.viewport(), pg.QtCore.Qt.MouseButton.LeftButton)
    assert tracker.current() is first


def test_presentation_mode_enlarges_type_and_captions_each_plot(qtbot, host):
    mode = PresentationMode(host, scale=1.5)
    first, second = host.plots
    before_font = host.label.font().pointSizeF()
    axis = first.getPlotItem().getAxis("bottom")
    before_tick = axis.style["tickFont"]
    assert first.getPlotItem().ctrl.xGridCheck.isChecked()
    mode.set_enabled(True)
    assert host.label.font().pointSizeF() == pytest.approx(1.5 * before_font)
    assert axis.style["tickFont"].pointSizeF() >= 1.5 * before_font - 0.01
    assert "font-size" in axis.labelStyle
    assert not first.getPlotItem().ctrl.xGridCheck.isChecked()  # clean plots
    caption = mode.caption_label(first)
    assert caption is not None and caption.isVisible()
    assert "cannot do better than this curve" in caption.text()
    assert "further left is more private" in mode.caption_label(second).text()
    assert caption.geometry().bottom() <= first.height()

    mode.set_enabled(False)
    assert not caption.isVisible()
    assert host.label.font().pointSizeF() == pytest.approx(before_font)
    assert axis.style["tickFont"] == before_tick
    assert first.getPlotItem().ctrl.xGridCheck.isChecked()
    assert mode.caption_label(first) is None


def test_captions_can_be_set_per_plot(qtbot):
    plot = _plot("Something else")
    qtbot.addWidget(plot)
    assert caption_for(plot) == ""
    set_caption(plot, "Lower is better.")
    assert caption_for(plot) == "Lower is better."


def test_palettes_restyle_the_app_and_every_plot(qtbot, host):
    app = QApplication.instance()
    try:
        style.apply_palette(app, "dark")
        assert app.palette().window().color().name() == style.DARK.window
        plot = host.plots[0]
        assert plot.backgroundBrush().color().name() == style.DARK.plot_background
        axis = plot.getPlotItem().getAxis("left")
        assert axis.textPen().color().name() == style.DARK.plot_foreground
        # Text on the background must read: contrast ratio ≥ 4.5 (WCAG AA) in both palettes.
        for palette in style.PALETTES.values():
            assert _contrast(palette.text, palette.window) >= 4.5
            assert _contrast(palette.plot_foreground, palette.plot_background) >= 4.5
            assert _contrast(palette.warning, palette.base) >= 3.0
            assert _contrast(palette.muted, palette.base) >= 3.0
    finally:
        style.apply_palette(app, "light")
    assert host.plots[0].backgroundBrush().color().name() == "#ffffff"


def _contrast(a: str, b: str) -> float:
    def luminance(colour: str) -> float:
        rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_main_window_view_menu_and_export_actions(qtbot, monkeypatch, tmp_path):
    from dpstudio.data import open_dataset, sample_path
    from dpstudio.ui.main_window import MainWindow

    window = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(window)
    titles = [a.text() for a in window.menuBar().actions()]
    assert {"&File", "&View", "&Tools", "&Help"} <= set(titles)
    shortcuts = [s.toString() for s in window.presentation_action.shortcuts()]
    assert shortcuts == ["F11", "Ctrl+P"]
    before = window.font().pointSizeF()
    window.presentation_action.trigger()
    assert window.presentation.enabled and window.font().pointSizeF() > before
    window.presentation_action.trigger()
    assert window.font().pointSizeF() == pytest.approx(before)

    target = tmp_path / "out.svg"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target), "")))
    window.export_actions["svg"].trigger()
    assert target.is_file() and ET.parse(target).getroot().tag.endswith("svg")


def test_long_vertical_labels_use_their_short_form_while_presenting(qtbot, host):
    plot = host.plots[0]
    item = plot.getPlotItem()
    item.setLabel("left", "Type II error β (missed detection)")
    item.setLabel("bottom", "Type I error α (false alarm)")
    mode = PresentationMode(host, scale=1.5)
    mode.set_enabled(True)
    assert item.getAxis("left").labelText == "β (missed detection)"
    assert item.getAxis("bottom").labelText == "Type I error α (false alarm)"  # room enough
    mode.set_enabled(False)
    assert item.getAxis("left").labelText == "Type II error β (missed detection)"


# --- presentation mode on the main window (issue 12, item 13) -------------------------------


def _shown_window(qtbot, monkeypatch, width, height):
    from dpstudio.data import open_dataset, sample_path
    from dpstudio.ui import session as session_module
    from dpstudio.ui.main_window import MainWindow

    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    win.resize(width, height)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    assert win.analysis.wait_idle(30)
    return win


def _layout(win):
    """What a person sees of the layout: which docks show, and how wide everything is."""
    def shown(dock):  # a dock behind another's tab is visible, but moved off-screen
        return dock.isVisible() and not dock.visibleRegion().isEmpty()

    return {"size": (win.width(), win.height()), "tabs": win.tabs.width(),
            "docks": {d.objectName(): (shown(d), d.width() if shown(d) else None)
                      for d in (win.columns_dock, win.analysis_dock)}}


def _controls_need(win):
    """The Analysis controls' narrowest unclipped width: their own minimum and a scroll bar."""
    from PySide6.QtWidgets import QStyle

    panel = win.analysis_panel
    bar = panel.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
    return panel.widget().minimumSizeHint().width() + bar + 2 * panel.frameWidth()


def _close(win):
    win.close()
    win.analysis.shutdown()
    win.projects.shutdown()


def _press(qtbot, win, key):
    qtbot.keyClick(win, key)
    qtbot.wait(50)


def test_presenting_at_800x800_hides_truths_enlarges_text_and_puts_the_layout_back(
        qtbot, monkeypatch, config_dir):
    win = _shown_window(qtbot, monkeypatch, 800, 800)
    useful = _controls_need(win)
    assert useful >= 300  # the controls' own minimum, not a sliver
    before = _layout(win)
    assert win.width() <= 800  # the layout fits the small screen
    assert win.analysis_dock.width() >= useful
    assert win.result_panel.plotted()["truth"] is not None  # the analyst sees the truth
    note = win.result_panel.notes  # a "font-size: 9pt" note beside the plots
    note_points = note.font().pointSizeF()
    base = win.font().pointSizeF()

    _press(qtbot, win, Qt.Key.Key_F11)
    assert win.presentation.enabled
    assert not win.analysis_dock.isVisible() and not win.columns_dock.isVisible()
    assert win.tabs.width() == win.width()  # the plots get the whole width
    bar = win.presentation_bar
    assert bar.isVisible() and bar.leave_button.isVisible()  # controls reduced to ε
    assert bar.epsilon.value() == win.session.epsilon
    assert "odds" in bar.odds.text()
    assert win.session.hide_true and win.hide_true_action.isChecked()
    assert win.analysis.wait_idle(30)
    assert win.result_panel.plotted()["truth"] is None
    assert "true value" not in win.result_panel.summary.text()
    assert win.font().pointSizeF() == pytest.approx(1.5 * base)
    assert note.font().pointSizeF() == pytest.approx(1.5 * note_points, abs=0.5)
    assert bar.odds.font().pointSizeF() == pytest.approx(1.5 * base)

    # The one control left works: ε from the bar reaches the analysis.
    bar.epsilon.spin.setFocus()
    bar.epsilon.spin.selectAll()
    qtbot.keyClicks(bar.epsilon.spin, "2")
    qtbot.keyClick(bar.epsilon.spin, Qt.Key.Key_Return)
    assert win.session.epsilon == 2.0

    qtbot.mouseClick(bar.leave_button, Qt.MouseButton.LeftButton)
    assert not win.presentation.enabled and not bar.isVisible()
    qtbot.wait(50)
    assert _layout(win) == before
    assert win.analysis_dock.width() >= useful
    assert not win.session.hide_true and not win.hide_true_action.isChecked()
    assert note.font().pointSizeF() == pytest.approx(note_points)
    _close(win)  # saves the layout

    from dpstudio.data import open_dataset, sample_path
    from dpstudio.ui.main_window import MainWindow

    again = MainWindow(open_dataset(sample_path("survey")))  # a restart
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    # Qt's restoreGeometry fits the window and its frame inside the 800×800 screen (a few
    # pixels less): the docks are as they were.
    assert _layout(again)["docks"] == before["docks"]
    assert again.analysis_dock.width() >= useful
    _close(again)


def test_true_values_hidden_before_presenting_stay_hidden_after(qtbot, monkeypatch, config_dir):
    win = _shown_window(qtbot, monkeypatch, 1400, 900)
    qtbot.keyClick(win, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    assert win.session.hide_true and win.analysis_panel.hide_true.isChecked()
    before = _layout(win)
    _press(qtbot, win, Qt.Key.Key_F11)
    assert win.isFullScreen()
    _press(qtbot, win, Qt.Key.Key_F11)
    assert not win.presentation.enabled and not win.isFullScreen()
    assert win.session.hide_true  # as it was before presenting
    assert _layout(win) == before  # 1400×900: full screen and back, the layout unchanged
    _close(win)


def test_a_layout_saved_with_a_crushed_dock_comes_back_usable(qtbot, monkeypatch, config_dir):
    """Before, leaving presentation mode on a small screen left the Analysis dock 60 px
    wide, and the layout was saved so: a restart must not bring the sliver back."""
    from dpstudio.data import open_dataset, sample_path
    from dpstudio.ui.main_window import MainWindow

    win = _shown_window(qtbot, monkeypatch, 1400, 900)
    win.analysis_dock.setMinimumWidth(0)  # as before: nothing kept the dock usable
    win.resizeDocks([win.analysis_dock], [60], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: win.analysis_dock.width() < 100, timeout=2000)
    _close(win)

    again = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert again.analysis_dock.width() >= _controls_need(again)
    _close(again)


def test_reset_layout_brings_back_hidden_and_floating_docks(qtbot, monkeypatch, config_dir):
    win = _shown_window(qtbot, monkeypatch, 1400, 900)
    before = _layout(win)
    win.columns_dock.hide()
    win.analysis_dock.setFloating(True)
    assert not win.columns_dock.isVisible()
    view_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&View")
    assert win.reset_layout_action in view_menu.actions()
    win.reset_layout_action.trigger()
    qtbot.wait(50)
    assert not win.analysis_dock.isFloating() and win.columns_dock.isVisible()
    assert _layout(win) == before  # the default layout of a 1400×900 window
    assert win.tabifiedDockWidgets(win.analysis_dock) == []
    _close(win)


def test_the_default_layout_of_a_small_screen_shares_one_area(qtbot, monkeypatch, config_dir):
    small = _shown_window(qtbot, monkeypatch, 800, 800)
    assert small.width() == 800
    # 800 px: Columns and Analysis share one tabbed area, the controls in front.
    assert small.columns_dock in small.tabifiedDockWidgets(small.analysis_dock)
    tab_bar = next(bar for bar in small.findChildren(QTabBar)
                   if [bar.tabText(i) for i in range(bar.count())] == ["Analysis", "Columns"])
    assert tab_bar.currentIndex() == 0  # the controls in front
    qtbot.mouseClick(tab_bar, Qt.MouseButton.LeftButton, pos=tab_bar.tabRect(1).center())
    qtbot.waitUntil(lambda: not small.columns_dock.visibleRegion().isEmpty(), timeout=2000)
    assert small.columns_dock.width() >= _controls_need(small)
    assert small.schema_panel.table.isVisible()
    _close(small)
