"""Presentation mode: large type, clean plots, and a plain-language caption under each plot.

:class:`PresentationMode` scales the window's font (and so every widget that inherits
it, style sheets' fixed point sizes included), enlarges plot titles, axis labels, tick
labels, legends and texts, hides plot grids and the docks (the controls shrink to the ε
bar, a tool bar named ``presentation_bar`` if the window has one), hides true values (the
session's "Hide true values"), goes full screen if the window is on screen, and shows each
plot's caption under it. Turning it off restores exactly what was there: the window's
state and dock layout (saved on entering, restored on leaving, on any screen size),
"Hide true values" as it was, the fonts and the plots. Plots made while it is on are
styled by :meth:`PresentationMode.refresh`.

Captions: :func:`set_caption` on a plot, or a default picked by the plot's title
(:data:`DEFAULT_CAPTIONS`).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow, QToolBar, QWidget

from dpstudio.ui.legend import scaled_size
from dpstudio.ui.plots import SHORT_AXIS_LABELS
from dpstudio.ui.style import current_palette, plot_widgets
from dpstudio.ui.texts import TRADEOFF_CAPTION, UTILITY_CAPTION

__all__ = ["CAPTION_PROPERTY", "DEFAULT_CAPTIONS", "PresentationMode", "caption_for",
           "set_caption"]

CAPTION_PROPERTY = "dpstudio_caption"
#: Sizes of the legend's and the caption's type while presenting, relative to the rest
#: (the legend still grows: 1.5 × 0.85 ≈ 1.3 times its normal size): what they take in
#: height, the data area does not get, and both plots with their captions must fit an
#: 800×800 screen without scrolling.
LEGEND_SCALE = 0.85
CAPTION_SCALE = 0.75

#: Title keyword (lower case) → caption for plots that set none.
DEFAULT_CAPTIONS: dict[str, str] = {
    "trade-off": TRADEOFF_CAPTION,
    "utility": UTILITY_CAPTION,
    "randomized response": "Each answer is deniable, yet the estimate closes in on the true "
                           "share as more people answer.",
    "running estimate": "Each answer is deniable, yet the estimate closes in on the true "
                        "share as more people answer.",
}


def set_caption(plot_widget: pg.PlotWidget, text: str) -> None:
    """The caption shown under ``plot_widget`` in presentation mode."""
    setattr(plot_widget, CAPTION_PROPERTY, str(text))


def caption_for(plot_widget: pg.PlotWidget) -> str:
    """The plot's own caption, else a default chosen by its title, else ""."""
    # A Python attribute, not a Qt property: QObject.property() of an unset name drops a
    # reference to None in PySide6 6.12.0.
    own = getattr(plot_widget, CAPTION_PROPERTY, "")
    if own:
        return str(own)
    title = (getattr(plot_widget.getPlotItem().titleLabel, "text", "") or "").lower()
    for key, caption in DEFAULT_CAPTIONS.items():
        if key in title:
            return caption
    return ""


@dataclass
class _PlotState:
    """What presentation mode changed on one plot, to put it back."""

    title: str | None = None
    title_opts: dict[str, Any] = field(default_factory=dict)
    axes: dict[str, tuple[Any, dict[str, Any], str]] = field(default_factory=dict)
    grid: tuple[bool, bool, float] = (False, False, 0.0)
    legend_size: str | None = None
    margins: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    caption: QLabel | None = None
    texts: list[tuple[Any, QFont]] = field(default_factory=list)


#: "font-size: 9pt" in a style sheet (the number and what precedes it).
_FONT_SIZE = re.compile(r"(font-size:\s*)([0-9.]+)\s*pt")


class _Caption(QLabel):
    """A caption pinned to the bottom of a plot widget, following its size."""

    MARGIN = 8

    def __init__(self, plot: pg.PlotWidget, text: str, point_size: float) -> None:
        super().__init__(text, plot)
        self.setObjectName("presentation_caption")
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        font = QFont(self.font())
        font.setPointSizeF(point_size)
        font.setItalic(True)
        self.setFont(font)
        palette = current_palette()
        self.setStyleSheet(f"color: {palette.plot_foreground}; background: transparent;")
        self._plot = plot
        plot.installEventFilter(self)
        self.place()
        self.show()

    def place(self) -> int:
        """Fit the caption to the plot's width; return its height."""
        width = max(50, self._plot.width() - 2 * self.MARGIN)
        height = self.heightForWidth(width)
        if height < 0:
            height = self.sizeHint().height()
        self.setGeometry(self.MARGIN, self._plot.height() - height - self.MARGIN, width, height)
        return height

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self._plot and event.type() == QEvent.Type.Resize:
            height = self.place()
            layout = self._plot.getPlotItem().layout
            left, top, right, _bottom = layout.getContentsMargins()
            layout.setContentsMargins(left, top, right, height + 2 * self.MARGIN)
        return False


class PresentationMode(QObject):
    """Toggle presentation styling on ``window``; ``toggled(bool)`` follows the state.

    Parameters
    ----------
    window : QMainWindow
        The window to style.
    scale : float
        How much larger the type is while presenting.
    session : object, optional
        Anything with ``hide_true`` and ``set_hide_true(bool)`` (the analysis session):
        true values are hidden while presenting and put back as they were after.
    focus : callable, optional
        Returns the widget that takes the keyboard focus when presenting hides the one
        that had it (the ε box of the presentation bar); by default the first control of
        the shown bars. Leaving gives the focus back to the widget that had it before.
    """

    toggled = Signal(bool)

    #: Docks (by object name) hidden while presenting: data preparation and the full
    #: controls, not results (the ε bar stands in for the controls).
    hidden_docks: tuple[str, ...] = ("columns_dock", "analysis_dock")
    #: Tool bars (by object name) shown only while presenting.
    shown_bars: tuple[str, ...] = ("presentation_bar",)
    #: How long after leaving a window manager's late resize still gets the layout back.
    RESTORE_WINDOW_MS = 2000

    def __init__(self, window: QMainWindow, scale: float = 1.5, session: Any = None,
                 focus: Callable[[], QWidget | None] | None = None) -> None:
        super().__init__(window)
        self._window = window
        self.scale = float(scale)
        self._session = session
        self._focus_target = focus
        self._focus_before: QWidget | None = None
        self._enabled = False
        self._font: QFont | None = None
        self._was_full_screen = False
        self._window_state = Qt.WindowState.WindowNoState
        self._layout: QByteArray | None = None
        self._geometry = QRect()
        self._was_hiding: bool | None = None
        self._styles: list[tuple[weakref.ref[QWidget], str, str]] = []
        self._hidden: list[QDockWidget] = []
        self._plots: weakref.WeakKeyDictionary[pg.PlotWidget, _PlotState] = (
            weakref.WeakKeyDictionary())
        self._restore_until = QTimer(self)
        self._restore_until.setSingleShot(True)

    @property
    def enabled(self) -> bool:
        return self._enabled

    def set_enabled(self, on: bool) -> None:
        on = bool(on)
        if on == self._enabled:
            return
        if on:
            self._enter()
        else:
            self._leave()
        self.toggled.emit(on)

    def _enter(self) -> None:
        window = self._window
        # The layout as it is now: leaving puts back exactly this, whatever the larger type
        # and the full screen did to the docks meanwhile.
        self._layout = window.saveState()
        self._window_state = window.windowState()
        self._geometry = window.geometry()
        self._font = QFont(window.font())
        before = QApplication.focusWidget()
        self._focus_before = before if before is not None and window.isAncestorOf(before) \
            else None
        big = QFont(self._font)
        big.setPointSizeF(self._base_size() * self.scale)
        window.setFont(big)
        self._scale_style_sheets()
        self._hidden = [
            dock for dock in window.findChildren(QDockWidget)
            if dock.objectName() in self.hidden_docks and not dock.isHidden()
        ]
        for dock in self._hidden:
            dock.hide()
        for bar in self._bars():
            bar.show()
        self._focus_on_enter()
        if self._session is not None:
            self._was_hiding = bool(self._session.hide_true)
            self._session.set_hide_true(True)
        self._enabled = True
        self.refresh()
        if window.isVisible():
            self._was_full_screen = window.isFullScreen()
            window.showFullScreen()

    def _leave(self) -> None:
        window = self._window
        self._enabled = False
        for plot, state in list(self._plots.items()):
            self._restore(plot, state)
        self._plots.clear()
        if self._font is not None:
            window.setFont(self._font)
        self._restore_style_sheets()
        now = QApplication.focusWidget()
        on_bar = now is not None and any(bar.isAncestorOf(now) for bar in self._bars())
        for bar in self._bars():
            bar.hide()
        for dock in self._hidden:
            dock.show()
        self._hidden = []
        if self._session is not None and self._was_hiding is not None:
            self._session.set_hide_true(self._was_hiding)
            self._was_hiding = None
        if window.isVisible() and not self._was_full_screen:
            if self._window_state & Qt.WindowState.WindowMaximized:
                window.showMaximized()
            else:
                window.showNormal()
                # Not every platform remembers the size from before full screen.
                window.setGeometry(self._geometry)
        self._restore_layout()
        self._focus_on_leave(now, on_bar)
        if window.isVisible():
            # A window manager applies the smaller size later: lay the docks out again then.
            self._restore_until.start(self.RESTORE_WINDOW_MS)
            window.installEventFilter(self)

    def _focus_on_enter(self) -> None:
        """The widget that had the focus was hidden (the Columns table, a control): the
        focus goes to the ε box, not to whatever Qt found next (a plot, the tabs)."""
        before = self._focus_before
        if before is not None and shiboken6.isValid(before) and before.isVisible():
            return  # a plot keeps it
        target = self._focus_target() if self._focus_target is not None else None
        if target is None:
            target = next((w for bar in self._bars() for w in bar.findChildren(QWidget)
                           if w.isVisible() and w.isEnabled()
                           and w.focusPolicy() & Qt.FocusPolicy.TabFocus), None)
        if target is not None and target.isVisible():
            # As a shortcut's target: its text selected, so that typing replaces it.
            target.setFocus(Qt.FocusReason.ShortcutFocusReason)
            select = getattr(target, "selectAll", None)
            if callable(select):
                select()

    def _focus_on_leave(self, now: QWidget | None, on_bar: bool) -> None:
        """Back to the widget that had the focus before presenting, unless the person
        moved it meanwhile to something that stays in view (a plot)."""
        before, self._focus_before = self._focus_before, None
        if before is None or not shiboken6.isValid(before) or not before.isVisible():
            return
        if on_bar or now is None or not shiboken6.isValid(now) or not now.isVisible():
            before.setFocus(Qt.FocusReason.OtherFocusReason)

    def _restore_layout(self) -> None:
        if self._layout is not None:
            self._window.restoreState(self._layout)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self._window and event.type() == QEvent.Type.Resize:
            if self._enabled or not self._restore_until.isActive():
                obj.removeEventFilter(self)
            else:
                self._restore_layout()
        return False

    def _bars(self) -> list[QToolBar]:
        return [bar for bar in self._window.findChildren(QToolBar)
                if bar.objectName() in self.shown_bars]

    def _scale_style_sheets(self) -> None:
        """Fixed point sizes in style sheets ("font-size: 9pt") scaled like the rest, or
        the notes beside larger text would shrink in comparison."""
        self._styles = []
        for widget in self._window.findChildren(QWidget):
            sheet = widget.styleSheet()
            if "font-size" not in sheet:
                continue
            scaled = _FONT_SIZE.sub(
                lambda m: f"{m.group(1)}{float(m.group(2)) * self.scale:.3g}pt", sheet)
            if scaled != sheet:
                widget.setStyleSheet(scaled)
                self._styles.append((weakref.ref(widget), sheet, scaled))

    def _restore_style_sheets(self) -> None:
        for ref, sheet, scaled in self._styles:
            widget = ref()
            # A style changed meanwhile (a new colour) is the widget's own: keep it.
            if widget is not None and widget.styleSheet() == scaled:
                widget.setStyleSheet(sheet)
        self._styles = []

    def refresh(self) -> None:
        """Style plots added since presentation mode was turned on."""
        if not self._enabled:
            return
        for plot in plot_widgets(self._window):
            if plot not in self._plots:
                self._plots[plot] = self._present(plot)

    def caption_label(self, plot: pg.PlotWidget) -> QLabel | None:
        state = self._plots.get(plot)
        return state.caption if state is not None else None

    def _base_size(self) -> float:
        size = self._font.pointSizeF() if self._font is not None else -1.0
        return size if size > 0 else 10.0

    def _fitting_points(self, text: str, points: float, floor: float, room: float) -> float:
        """The largest size ≤ ``points`` (and ≥ ``floor``) at which ``text`` fits ``room``."""
        font = QFont(self._font or QFont())
        while points > floor:
            font.setPointSizeF(points)
            if QFontMetricsF(font).horizontalAdvance(text) <= room:
                break
            points -= 0.5
        return max(points, floor)

    def _present(self, plot: pg.PlotWidget) -> _PlotState:
        item = plot.getPlotItem()
        base = self._base_size()
        state = _PlotState()
        title = item.titleLabel
        if title.text:
            state.title, state.title_opts = title.text, dict(title.opts)
            item.setTitle(title.text, **{**title.opts, "size": f"{base * self.scale * 1.25:.0f}pt"})
        tick_font = QFont(self._font or QFont())
        tick_font.setPointSizeF(base * self.scale)
        for name in ("left", "bottom", "right", "top"):
            axis = item.getAxis(name)
            state.axes[name] = (axis.style.get("tickFont"), dict(axis.labelStyle),
                                axis.labelText)
            axis.setStyle(tickFont=tick_font)
            if axis.labelText or axis.labelUnits:
                points = base * self.scale * 0.9
                text = axis.labelText
                if name in ("left", "right"):
                    # Vertical labels run along the plot's height, which the enlarged legend
                    # and caption shrink: use the short form, and shrink it if still too long.
                    text = SHORT_AXIS_LABELS.get(text, text)
                    room = 0.95 * item.vb.sceneBoundingRect().height()
                    points = self._fitting_points(text, points, 0.8 * base, room)
                size = f"{points:.0f}pt"
                axis.labelStyle = {**axis.labelStyle, "font-size": size}
                axis.setLabel(text, axis.labelUnits or None)
        ctrl = item.ctrl
        state.grid = (ctrl.xGridCheck.isChecked(), ctrl.yGridCheck.isChecked(),
                      ctrl.gridAlphaSlider.value() / 255.0)
        item.showGrid(x=False, y=False)
        legend = item.legend
        if legend is not None:
            state.legend_size = legend.opts.get("labelTextSize")
            # Enlarged with the rest of the type (a little less: it takes height from the
            # data); the legend fitting (plot_fit) wraps it where it is too wide.
            self._legend_size(legend, scaled_size(state.legend_size, self.scale * LEGEND_SCALE))
        seen: set[int] = set()
        for text_item in item.vb.addedItems + list(item.items):
            if isinstance(text_item, pg.TextItem) and id(text_item) not in seen:
                seen.add(id(text_item))
                font = QFont(text_item.textItem.font())
                state.texts.append((text_item, font))
                bigger = QFont(font)
                bigger.setPointSizeF((font.pointSizeF() if font.pointSizeF() > 0 else base)
                                     * self.scale)
                text_item.setFont(bigger)
        state.margins = item.layout.getContentsMargins()
        caption = caption_for(plot)
        if caption:
            state.caption = _Caption(plot, caption, base * self.scale * CAPTION_SCALE)
            left, top, right, _bottom = state.margins
            height = state.caption.place()
            item.layout.setContentsMargins(left, top, right, height + 2 * _Caption.MARGIN)
        return state

    @staticmethod
    def _legend_size(legend: Any, size: str | None) -> None:
        legend.opts["labelTextSize"] = size
        for _sample, label in legend.items:
            opts = {k: v for k, v in label.opts.items() if k in ("color", "bold", "italic")}
            if size:
                opts["size"] = size
            else:
                label.opts.pop("size", None)
            label.setText(label.text, **opts)
        legend.updateSize()

    def _restore(self, plot: pg.PlotWidget, state: _PlotState) -> None:
        item = plot.getPlotItem()
        if state.title is not None:
            # The title as redrawn while presenting (ε moved on the bar), not the one saved
            # on entering, which would show the old ε.
            item.setTitle(item.titleLabel.text or state.title, **state.title_opts)
        for name, (tick_font, label_style, label_text) in state.axes.items():
            axis = item.getAxis(name)
            axis.setStyle(tickFont=tick_font)
            axis.labelStyle = label_style
            if label_text or axis.labelUnits:
                axis.setLabel(label_text, axis.labelUnits or None)
        x, y, alpha = state.grid
        item.showGrid(x=x, y=y, alpha=alpha if (x or y) else None)
        if item.legend is not None:
            self._legend_size(item.legend, state.legend_size)
        for text_item, font in state.texts:
            text_item.setFont(font)
        if state.caption is not None:
            plot.removeEventFilter(state.caption)
            state.caption.hide()
            state.caption.deleteLater()
        item.layout.setContentsMargins(*state.margins)
