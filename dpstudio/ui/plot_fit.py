"""Plots whose content fits their widget: a title that takes a shorter form or elides to
the room there is (the full text in its tooltip), legend entries that wrap onto more
lines and are never cut, and the room itself.

pyqtgraph lays a plot out in a grid whose minimum width is that of its widest part; a
title or legend entry wider than the widget pushes the plot item past the widget's right
edge, where the title, legend, axis and the plot's own buttons are cut. Here each text
part is at most as wide as the data area's column of the widget (:func:`content_width`),
so the plot item's minimum is the axis plus a few characters, below any plot's minimum.
A legend entry keeps every word (a legend is the key to the plot, and exports and
presentation mode enlarge it): it wraps to that width instead.
"""

from __future__ import annotations

import re

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QGraphicsWidget
from shiboken6 import isValid

from dpstudio.ui.legend import fit_columns

__all__ = ["FittingLabel", "FittingLegend", "PlotFitter", "content_width", "css_pixels",
           "fit_height", "install_fitting"]

ELLIPSIS = "…"


class FittingLabel(pg.LabelItem):
    """A :class:`pyqtgraph.LabelItem` no wider than its ``room``: a longer text is cut
    with "…" and shown whole in the tooltip, or with ``wraps`` (legend entries) wrapped
    onto as many lines as it needs, every word shown. ``text`` stays the full text (what
    presentation mode, the palettes and the exports read and set again)."""

    def __init__(self, text: str = " ", parent=None, angle: int = 0, wraps: bool = False,
                 **args) -> None:
        #: Wrap a text wider than the room instead of cutting it.
        self.wraps = bool(wraps)
        self._room: float | None = None
        self._natural = 0.0
        self._own_tooltip = ""
        #: Full text → shorter forms of it, tried (in order) before cutting with "…".
        self.short_forms: dict[str, list[str]] = {}
        super().__init__(text, parent=parent, angle=angle, **args)

    @property
    def room(self) -> float | None:
        return self._room

    def natural_width(self) -> float:
        """The width of the whole text, as it would be drawn uncut."""
        return self._natural

    def is_elided(self) -> bool:
        """Whether less than the full text is shown (a short form, or cut)."""
        return self.item.toPlainText() != _plain(self.text)

    def is_wrapped(self) -> bool:
        """Whether the text is shown on more lines than it has (wrapped to the room)."""
        return self.wraps and self.item.textWidth() > 0

    def set_tooltip_text(self, tooltip: str) -> None:
        """A tooltip of its own (shown cut or not); "" for the full text when cut."""
        self._own_tooltip = str(tooltip or "")
        self._sync_tooltip()

    def set_room(self, room: float | None) -> None:
        """Cut the text to ``room`` pixels (None: never cut)."""
        room = None if room is None else max(float(room), 0.0)
        if room == self._room or (room is not None and self._room is not None
                                  and abs(room - self._room) < 0.5):
            return
        self._room = room
        self.setText(self.text)

    def setText(self, text, **args) -> None:  # noqa: N802 - pyqtgraph's name
        full = str(text)
        if getattr(self, "item", None) is not None:
            self.item.setTextWidth(-1)  # measure the text on one line
        super().setText(full, **args)
        self._natural = self.itemRect().width()
        room = self._room
        if self.wraps:
            if room is not None and self._natural > room:
                # As many lines as the text needs at the room's width: nothing cut.
                self.item.setTextWidth(max(room, 1.0))
                self.resizeEvent(None)
                self.updateGeometry()
            self.text = full
            self._sync_tooltip()
            return
        shown = full
        if room is not None and self._natural > room:
            for short in self.short_forms.get(full, []):
                shown = short
                super().setText(short)
                if self.itemRect().width() <= room:
                    break
        if room is not None and self.itemRect().width() > room and "<" not in shown:
            full_shown = shown
            # The longest head of the text that fits with "…" after it.
            lo, hi = 0, len(full_shown)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                super().setText(full_shown[:mid].rstrip() + ELLIPSIS)
                if self.itemRect().width() <= room:
                    lo = mid
                else:
                    hi = mid - 1
            super().setText(full_shown[:lo].rstrip() + ELLIPSIS if lo else ELLIPSIS)
        self.text = full
        self._sync_tooltip()

    def _sync_tooltip(self) -> None:
        if self._own_tooltip:
            self.setToolTip(self._own_tooltip)
        elif getattr(self, "item", None) is not None and self.is_elided():
            self.setToolTip(_plain(self.text))
        else:
            self.setToolTip("")


def _plain(text: str) -> str:
    doc = pg.QtGui.QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


class FittingLegend(pg.LegendItem):
    """A legend whose entries are wrapping :class:`FittingLabel` (wrapped by
    :func:`legend.fit_columns` when even one column is wider than the plot, never cut);
    ``most_columns`` is the most columns it uses.

    Its text is drawn at ``opts["labelTextSize"]`` (presentation mode and exports set a
    larger one) unless the legend would then take more than ``most_share`` of the
    height it shares with the data area: then at the largest size, down to
    ``normal_size``, at which it does not (:func:`fit_height`).
    """

    most_columns = 2
    #: Most of the height shared with the data area the legend takes when enlarged.
    most_share = 0.5
    #: Its on-screen size outside presentation mode: never drawn smaller.
    normal_size: str | None = None

    def addItem(self, item, name) -> None:  # noqa: N802 - pyqtgraph's name
        label = FittingLabel(name, color=self.opts["labelTextColor"], justify="left",
                             size=self.opts["labelTextSize"], wraps=True)
        sample = item if isinstance(item, self.sampleType) else self.sampleType(item)
        sample.sigClicked.connect(self.sigSampleClicked)
        self.items.append((sample, label))
        self._addItemToLayout(sample, label)
        self.updateSize()


def css_pixels(size: str | None) -> float | None:
    """A pyqtgraph text size ("8pt", "14px") in pixels; None if it is none of those."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*(pt|px)\s*", str(size or ""))
    if match is None:
        return None
    value = float(match.group(1))
    return value if match.group(2) == "px" else value * 96.0 / 72.0


def _draw_at(legend: pg.LegendItem, pixels: float) -> bool:
    """Draw the legend's entries at ``pixels``; whether any changed."""
    size = f"{pixels:.4g}px"
    changed = False
    for _sample, label in legend.items:
        if label.opts.get("size") != size:
            label.setText(label.text, size=size)
            changed = True
    return changed


def fit_height(widget: pg.PlotWidget, room: float) -> None:
    """Draw an enlarged legend no larger than leaves the data area its share.

    Parameters
    ----------
    widget : pyqtgraph.PlotWidget
        The plot, its legend a :class:`FittingLegend` with a ``normal_size``.
    room : float
        The width its columns may take (:func:`content_width`).

    Notes
    -----
    The legend's asked size stays in ``opts["labelTextSize"]``: a plot that grows gets
    the larger text back. The height shared by the data area and the legend does not
    depend on the legend's size; the legend's height grows with its text, so the size
    that fits is estimated from the size drawn now, then checked. It grows again only
    by two pixels or more, so that refits never go back and forth.
    """
    item = widget.getPlotItem()
    legend = item.legend
    asked = css_pixels(legend.opts.get("labelTextSize"))
    normal = css_pixels(getattr(legend, "normal_size", None))
    if asked is None or normal is None or asked <= normal or not legend.items:
        return
    current = css_pixels(legend.items[0][1].opts.get("size")) or asked
    height = legend.boundingRect().height()
    most = getattr(legend, "most_share", 0.5) * _shared_height(item)
    if height > most:  # a pixel smaller at a time (fewer columns may fit, or more)
        lowest = normal
    elif current < asked and current * most / max(height, 1.0) >= current + 2:
        # Clearly room for more (the height grows with the text): back up to the asked
        # size, then down to what fits.
        lowest = current
        current = min(asked, float(int(current * most / max(height, 1.0))))
        _apply(legend, current, room)
    else:
        return
    while legend.boundingRect().height() > most and current > lowest:
        current = max(lowest, current - 1.0)
        _apply(legend, current, room)


def _shared_height(item) -> float:
    """The height the data area and the legend share: the plot's, less its margins,
    title and bottom axis (the data area's own height lags a layout pass behind)."""
    _left, top, _right, bottom = item.layout.getContentsMargins()
    used = top + bottom
    title = item.titleLabel
    if title.isVisible():
        used += title.height()
    axis = item.getAxis("bottom")
    if axis.isVisible():
        used += axis.height()
    return max(float(item.height()) - used, 0.0)


def _apply(legend: pg.LegendItem, pixels: float, room: float) -> None:
    if _draw_at(legend, pixels):
        fit_columns(legend, room, getattr(legend, "most_columns", 2))
        legend.updateSize()


def content_width(widget: pg.PlotWidget) -> float:
    """The width the data area's column of ``widget``'s layout can have: the widget's,
    less the vertical axes and the layout's margins.

    Parameters
    ----------
    widget : pyqtgraph.PlotWidget
        The plot.

    Returns
    -------
    float
        Pixels available to the title, the data area and the legend.
    """
    item = widget.getPlotItem()
    left, _top, right, _bottom = item.layout.getContentsMargins()
    used = left + right + 2.0
    for name in ("left", "right"):
        axis = item.getAxis(name)
        if axis.isVisible():
            used += max(QGraphicsWidget.minimumWidth(axis), 0.0)
    return max(float(widget.width()) - used, 40.0)


def fit(widget: pg.PlotWidget) -> None:
    """Cut the title and lay out (and cut) the legend to ``widget``'s width now."""
    if widget.__dict__.get("_dpstudio_fitting"):  # a refit's own layout changes
        return
    widget._dpstudio_fitting = True
    try:
        _fit(widget)
    finally:
        widget._dpstudio_fitting = False


def _fit(widget: pg.PlotWidget) -> None:
    item = widget.getPlotItem()
    if not (isValid(item) and isValid(item.vb)):  # a late event while the window closes
        return
    ticks = getattr(widget, "fit_ticks", None)
    if callable(ticks):  # as many tick labels as the axis holds (its font may have grown)
        ticks()
    room = content_width(widget)
    title = item.titleLabel
    if isinstance(title, FittingLabel):
        title.set_room(room)
    legend = item.legend
    if isinstance(legend, pg.LegendItem) and legend.items:
        fit_columns(legend, room, getattr(legend, "most_columns", 2))
        if isinstance(legend, FittingLegend):
            fit_height(widget, room)


class PlotFitter(QObject):
    """Refits a plot (:func:`fit`) when the widget is resized or its vertical axis changes
    width (larger tick labels while presenting)."""

    def __init__(self, widget: pg.PlotWidget) -> None:
        super().__init__(widget)
        self._widget = widget
        widget.installEventFilter(self)
        widget.getPlotItem().getAxis("left").geometryChanged.connect(self.refit)

    def refit(self) -> None:
        fit(self._widget)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self._widget and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self.refit()
        return False


def install_fitting(widget: pg.PlotWidget) -> PlotFitter:
    """Give ``widget`` a title that fits (:class:`FittingLabel`, in place of pyqtgraph's)
    and refit it as it changes size.

    Parameters
    ----------
    widget : pyqtgraph.PlotWidget
        The plot, before its title is set.

    Returns
    -------
    PlotFitter
        The object that keeps it fitted (a child of ``widget``).
    """
    item = widget.getPlotItem()
    old = item.titleLabel
    if not isinstance(old, FittingLabel):
        title = FittingLabel(old.text, parent=item, **{k: v for k, v in old.opts.items()
                                                       if k != "justify"})
        title.setMaximumHeight(old.maximumHeight())
        title.setVisible(old.isVisible())
        item.layout.removeItem(old)
        old.setParentItem(None)
        if old.scene() is not None:
            old.scene().removeItem(old)
        item.layout.addItem(title, 0, 1)
        item.titleLabel = title
    fitter = widget.findChild(PlotFitter)
    if fitter is None:
        fitter = PlotFitter(widget)
    return fitter
