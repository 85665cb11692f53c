"""Plots whose content fits their widget: a title and legend entries that elide to the room
there is (the full text in their tooltip), and the room itself.

pyqtgraph lays a plot out in a grid whose minimum width is that of its widest part; a
title or legend entry wider than the widget pushes the plot item past the widget's right
edge, where the title, legend, axis and the plot's own buttons are cut. Here each text
part is at most as wide as the data area's column of the widget (:func:`content_width`),
so the plot item's minimum is the axis plus a few characters, below any plot's minimum.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QGraphicsWidget

from dpstudio.ui.legend import fit_columns

__all__ = ["FittingLabel", "FittingLegend", "PlotFitter", "content_width",
           "install_fitting"]

ELLIPSIS = "…"


class FittingLabel(pg.LabelItem):
    """A :class:`pyqtgraph.LabelItem` no wider than its ``room``: a longer text is cut
    with "…" and shown whole in the tooltip. ``text`` stays the full text (what
    presentation mode, the palettes and the exports read and set again)."""

    def __init__(self, text: str = " ", parent=None, angle: int = 0, **args) -> None:
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
        super().setText(full, **args)
        self._natural = self.itemRect().width()
        room = self._room
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
    """A legend whose entries are :class:`FittingLabel` (cut by :func:`legend.fit_columns`
    when even one column is wider than the plot); ``most_columns`` is the most it uses."""

    most_columns = 2

    def addItem(self, item, name) -> None:  # noqa: N802 - pyqtgraph's name
        label = FittingLabel(name, color=self.opts["labelTextColor"], justify="left",
                             size=self.opts["labelTextSize"])
        sample = item if isinstance(item, self.sampleType) else self.sampleType(item)
        sample.sigClicked.connect(self.sigSampleClicked)
        self.items.append((sample, label))
        self._addItemToLayout(sample, label)
        self.updateSize()


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
    ticks = getattr(widget, "fit_ticks", None)
    if callable(ticks):  # as many tick labels as the axis holds (its font may have grown)
        ticks()
    room = content_width(widget)
    item = widget.getPlotItem()
    title = item.titleLabel
    if isinstance(title, FittingLabel):
        title.set_room(room)
    legend = item.legend
    if isinstance(legend, pg.LegendItem) and legend.items:
        fit_columns(legend, room, getattr(legend, "most_columns", 2))


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
