"""Plots that keep a usable data area: each plot's minimum height is its titles, axis,
legend and caption plus :data:`MIN_DATA_HEIGHT`, and the analysis view's vertical
splitter shares the height so that both data areas are equally tall.

A plot's legend and caption take a fixed height whatever the plot's own (they follow its
width), so a splitter that shares the height by proportions alone can leave a data area
of a few dozen pixels on a small screen (60 px on an 800×800 one), where a curve is a
line. When the window cannot hold both plots at their minimum, the plots scroll
(:class:`PlotScrollArea`) rather than shrink.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QWidget

__all__ = ["MIN_DATA_HEIGHT", "PRESENTING_MIN_DATA_HEIGHT", "DataAreaKeeper", "PlotScrollArea",
           "data_height"]

#: The least height (pixels) of a plot's data area: room for a curve's shape and a few
#: tick labels.
MIN_DATA_HEIGHT = 180
#: The least height while presenting: the larger type takes room, and on a small screen
#: both plots with their plain-language captions must be in view without scrolling.
PRESENTING_MIN_DATA_HEIGHT = 100
#: Changes smaller than this (pixels) are left alone: rounding must not start a loop of
#: layouts.
_SLACK = 3


def data_height(plot: pg.PlotWidget) -> float:
    """The height of ``plot``'s data area (its view box) on screen, in pixels.

    Parameters
    ----------
    plot : pyqtgraph.PlotWidget
        The plot.

    Returns
    -------
    float
        Height of the view box's scene rectangle.
    """
    return float(plot.getPlotItem().vb.sceneBoundingRect().height())


class PlotScrollArea(QScrollArea):
    """A vertical scroll area for the plots: it scrolls when the window is shorter than
    the plots' minimum heights, and asks for its contents' minimum width (so the window's
    dock arrangement, which reads it, is as without it). Never takes the keyboard focus.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # not a Tab stop of its own

    def setWidget(self, widget: QWidget) -> None:  # noqa: N802 - Qt override
        super().setWidget(widget)
        widget.installEventFilter(self)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        hint = super().minimumSizeHint()
        inner = self.widget()
        if inner is not None:
            hint.setWidth(max(hint.width(), inner.minimumSizeHint().width()
                              + 2 * self.frameWidth()))
        return hint

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # the contents' minimum width may have changed
        return super().eventFilter(obj, event)


class DataAreaKeeper(QObject):
    """Keep each plot's data area at least ``min_data`` pixels tall, and share the height
    of ``split`` so that the plots' data areas are equal — until the person drags the
    splitter's handle (their sizes are then theirs); :meth:`reset` shares it again.

    Parameters
    ----------
    split : QSplitter
        A vertical splitter.
    plots : list of (QWidget, pyqtgraph.PlotWidget)
        Each part of ``split`` with the plot inside it that fills its height.
    min_data : int
        The data areas' least height in pixels.
    """

    def __init__(self, split: QSplitter, plots: list[tuple[QWidget, pg.PlotWidget]],
                 min_data: int = MIN_DATA_HEIGHT) -> None:
        super().__init__(split)
        self.split = split
        self.parts = list(plots)
        self.min_data = int(min_data)
        self.balancing = True
        self._own_minimum = {id(plot): plot.minimumHeight() for _part, plot in self.parts}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.apply)
        self._applying = False
        split.splitterMoved.connect(self._moved_by_hand)
        split.installEventFilter(self)
        for part, plot in self.parts:
            plot.getPlotItem().vb.sigResized.connect(self._timer.start)
            plot.installEventFilter(self)
            part.installEventFilter(self)

    def set_min_data(self, pixels: int) -> None:
        """Change the data areas' least height (presentation mode's is smaller)."""
        self.min_data = int(pixels)
        self._timer.start()

    def reset(self) -> None:
        """Share the height again (View ▸ Reset Layout), whatever the handle's drags."""
        self.balancing = True
        self.apply()

    def _moved_by_hand(self, *_args) -> None:
        self.balancing = False

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide):
            self._timer.start()
        return False

    def apply(self) -> None:
        """Set the plots' minimum heights to what they need now, and share the height."""
        if self._applying:
            return
        self._applying = True
        try:
            # A new size moves the plots' own parts at once (tick labels, legend columns):
            # look again until nothing changes, so that the plots settle in one go.
            for _ in range(4):
                if not self._apply():
                    break
        finally:
            self._applying = False

    def _apply(self) -> bool:
        changed = False
        for _part, plot in self.parts:
            if not plot.isVisible():
                continue
            overhead = plot.height() - data_height(plot)
            wanted = max(self._own_minimum[id(plot)], round(overhead + self.min_data))
            if abs(wanted - plot.minimumHeight()) >= _SLACK:
                plot.setMinimumHeight(wanted)
                changed = True
        if self.balancing:
            changed = self._share() or changed
        return changed

    def _share(self) -> bool:
        shown = [(part, plot) for part, plot in self.parts if part.isVisible()]
        if len(shown) != len(self.parts) or len(shown) < 2:
            return False  # one plot filling the view: nothing to share
        sizes = self.split.sizes()
        total = sum(sizes)
        # What each part takes besides its data area (legend, caption, the progress
        # strip...), and the data area each gets when the rest is shared equally.
        overheads = [part.height() - data_height(plot) for part, plot in shown]
        data = (total - sum(overheads)) / len(shown)
        wanted = [max(round(o + data), part.minimumSizeHint().height())
                  for o, (part, _plot) in zip(overheads, shown, strict=True)]
        wanted[-1] = max(total - sum(wanted[:-1]), 0)
        if any(abs(a - b) >= _SLACK for a, b in zip(wanted, sizes, strict=True)):
            self.split.setSizes(wanted)
            return True
        return False
