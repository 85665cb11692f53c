"""The main window's dock layout: useful minimum widths, the default arrangement for the
window's width, and View ▸ Reset Layout.

Two arrangements. On a wide window the Columns dock sits left of the plots and the
Analysis dock right of them. On a narrow one (an 800-pixel screen) the two docks share
one tabbed area on the right, so the plots keep a readable width; the columns list may
then be narrower than its button row asks, and the plots narrower than their usual
minimum.

Each dock has a *useful width*, below which its contents are clipped; the dock's minimum
width is set to it, so that no layout — a small screen, presentation mode's larger type, a
layout saved by an older version — can crush a dock to a sliver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QStyle

from dpstudio.ui.style import plot_widgets

if TYPE_CHECKING:
    from PySide6.QtCore import QRect

    from dpstudio.ui.main_window import MainWindow

__all__ = ["COLUMNS_NARROW_WIDTH", "NARROW_PLOT_WIDTH", "apply_default_layout", "arrange",
           "available_screen", "fit_minimums", "fits", "is_narrow", "set_useful_widths",
           "shares_area", "size_docks", "target_width", "useful_width", "wide_width"]

#: The Columns dock's width in the narrow arrangement's shared area is the Analysis
#: dock's; its own button row may ask for more, so its minimum is lowered to this.
COLUMNS_NARROW_WIDTH = 260
#: The plots' minimum width in the narrow arrangement (their usual minimum, 260 px, leaves
#: no room for the controls beside two plots on an 800-pixel screen).
NARROW_PLOT_WIDTH = 200
#: Platforms whose "screen" is no real screen: offscreen renders keep the size asked for.
VIRTUAL_PLATFORMS = ("offscreen", "minimal")


def available_screen(window: MainWindow) -> QRect | None:
    """The available geometry of the window's screen; ``None`` on a virtual platform.

    Parameters
    ----------
    window : MainWindow
        The main window.

    Returns
    -------
    QRect or None
        The screen's area less task bars, or None for offscreen and minimal rendering.
    """
    if QGuiApplication.platformName() in VIRTUAL_PLATFORMS:
        return None
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else None


def useful_width(dock: QDockWidget) -> int:
    """The narrowest width at which ``dock``'s contents are not clipped.

    A scroll area (the Analysis controls) scrolls vertically only, so it needs its
    contents' minimum width plus a scroll bar; other widgets their own minimum.

    Parameters
    ----------
    dock : QDockWidget
        A dock of the main window.

    Returns
    -------
    int
        Width in pixels of the dock's widget.
    """
    widget = dock.widget()
    inner = getattr(widget, "widget", None)
    if callable(inner) and inner() is not None:
        bar = widget.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        frame = 2 * widget.frameWidth()
        return inner().minimumSizeHint().width() + bar + frame
    return widget.minimumSizeHint().width()


def set_useful_widths(window: MainWindow) -> None:
    """Give the Analysis dock its useful width as a minimum, so no layout crushes it.

    Parameters
    ----------
    window : MainWindow
        The main window.
    """
    window.analysis_dock.setMinimumWidth(useful_width(window.analysis_dock))


def _separator(window: MainWindow) -> int:
    return window.style().pixelMetric(QStyle.PixelMetric.PM_DockWidgetSeparatorExtent,
                                      None, window)


def wide_width(window: MainWindow) -> int:
    """The narrowest window that holds both docks and the plots side by side.

    Parameters
    ----------
    window : MainWindow
        The main window.

    Returns
    -------
    int
        Width in pixels, at the panels' and plots' usual minimums.
    """
    columns = window.schema_panel.minimumSizeHint().width()
    analysis = window.analysis_dock.minimumWidth()
    centre = window.centralWidget().minimumSizeHint().width()
    return columns + analysis + centre + 4 * _separator(window)


def is_narrow(window: MainWindow, width: int | None = None) -> bool:
    """Whether a window ``width`` pixels wide needs the narrow arrangement.

    Parameters
    ----------
    window : MainWindow
        The main window.
    width : int, optional
        The width to judge (default: the window's).

    Returns
    -------
    bool
        True below :func:`wide_width`.
    """
    return (window.width() if width is None else width) < wide_width(window)


def shares_area(window: MainWindow) -> bool:
    """Whether the Columns and Analysis docks are tabbed together (the narrow arrangement).

    Parameters
    ----------
    window : MainWindow
        The main window.

    Returns
    -------
    bool
    """
    return window.columns_dock in window.tabifiedDockWidgets(window.analysis_dock)


def fit_minimums(window: MainWindow) -> None:
    """Lower the minimums the narrow arrangement cannot honour while the docks share an
    area, and put them back otherwise (after a layout is restored or changed).

    Parameters
    ----------
    window : MainWindow
        The main window.
    """
    _narrow_minimums(window, shares_area(window))


def _narrow_minimums(window: MainWindow, narrow: bool) -> None:
    window.schema_panel.setMinimumWidth(COLUMNS_NARROW_WIDTH if narrow else 0)
    for plot in plot_widgets(window.centralWidget()):
        own = getattr(plot, "_dpstudio_min_width", None)
        if own is None:
            own = plot.minimumWidth()
            plot._dpstudio_min_width = own
        plot.setMinimumWidth(min(own, NARROW_PLOT_WIDTH) if narrow else own)


def target_width(window: MainWindow) -> int:
    """The window's width, or its screen's available width if that is smaller.

    Parameters
    ----------
    window : MainWindow
        The main window.

    Returns
    -------
    int
        Width in pixels of the window's inside (its frame left out).
    """
    width = window.width()
    if screen := available_screen(window):
        frame = max(window.frameGeometry().width() - window.width(), 0)
        width = min(width, screen.width() - frame)
    return width


def arrange(window: MainWindow, width: int | None = None) -> None:
    """Dock both panels (shown) where the default layout puts them for ``width``.

    Wide: Columns left of the plots, Analysis right. Narrow: both tabbed in one area on
    the right, Analysis in front. Done before the window is first shown, so that its
    minimum size (and so its size) is that of the arrangement chosen.

    Parameters
    ----------
    window : MainWindow
        The window whose ``columns_dock`` and ``analysis_dock`` are arranged.
    width : int, optional
        The window's width to arrange for (default: :func:`target_width`).
    """
    columns, analysis = window.columns_dock, window.analysis_dock
    width = target_width(window) if width is None else width
    _narrow_minimums(window, False)  # judged at the usual minimums
    narrow = is_narrow(window, width)
    for dock in (columns, analysis):
        dock.setFloating(False)
    if narrow:
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, analysis)
        window.tabifyDockWidget(analysis, columns)
    else:
        window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, columns)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, analysis)
    for dock in (columns, analysis):
        dock.show()
    if narrow:
        analysis.raise_()
    _narrow_minimums(window, narrow)


def size_docks(window: MainWindow, width: int | None = None) -> None:
    """The default dock widths for ``width``; the window no wider than that.

    Wide: the column list as wide as its contents need (at most a fifth of the window,
    never below its own minimum), the controls about a quarter (300–360 px, never below
    their useful width), the plots the rest. Narrow: the shared area at the controls'
    useful width.

    Parameters
    ----------
    window : MainWindow
        The window, shown.
    width : int, optional
        The width to size for (default: :func:`target_width`).
    """
    columns, analysis = window.columns_dock, window.analysis_dock
    width = target_width(window) if width is None else width
    if window.width() > width:
        window.resize(width, window.height())
    controls = max(min(max(int(width * 0.24), 300), 360), analysis.minimumWidth())
    if shares_area(window):
        window.resizeDocks([analysis], [analysis.minimumWidth()], Qt.Orientation.Horizontal)
        return
    wanted = min(max(window.schema_panel.preferred_width(), 220), int(width * 0.2))
    wanted = max(wanted, window.schema_panel.minimumSizeHint().width())
    window.resizeDocks([columns, analysis], [wanted, controls], Qt.Orientation.Horizontal)


def apply_default_layout(window: MainWindow) -> None:
    """View ▸ Reset Layout: :func:`arrange` and :func:`size_docks` for the window's width."""
    width = target_width(window)
    arrange(window, width)
    size_docks(window, width)


def fits(window: MainWindow, width: int | None = None) -> bool:
    """Whether the window's layout fits ``width``: a layout restored from a larger
    screen may not.

    Parameters
    ----------
    window : MainWindow
        The main window.
    width : int, optional
        The width available (default: :func:`target_width`, the window's width within
        its screen).

    Returns
    -------
    bool
        True when the window's minimum width is at most ``width``.
    """
    width = target_width(window) if width is None else width
    return window.minimumSizeHint().width() <= width
