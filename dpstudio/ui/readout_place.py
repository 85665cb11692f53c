"""Where the privacy–utility plot's readout goes: beside the marker, covering no data.

:class:`ReadoutPlacement` is the part of :class:`~dpstudio.ui.utility_plot.UtilityPlot`
that places its readout box (``marker_label``): it collects what the box must not cover
in scene coordinates (:meth:`~ReadoutPlacement.data_shapes`: the drawn lines, the marker,
the error bars and the dots) and tries, best first, the places
:mod:`dpstudio.ui.readout` proposes — beside the marker, a corner, a free place of a
coarse scan, a band above the data, the least covered place. The plot keeps the data and
the drawing; this mixin reads its items and its y range.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF

from dpstudio.ui.readout import candidate_corners, free_position, least_covered

__all__ = ["MAX_HEADROOM", "ReadoutPlacement"]

#: Most of the data area a band for the readout may take above the data.
MAX_HEADROOM = 0.6


class ReadoutPlacement:
    """Mixin of :class:`~dpstudio.ui.utility_plot.UtilityPlot`: places ``marker_label``.

    It reads the plot's ``marker_label``, ``_items`` (lines), ``_point_items`` (error
    bars and points), ``marker_dots``/``active_dot``, ``_readout_html`` (the readout,
    longest first) and ``_readout_alone``, and sets ``_headroom`` (with
    ``_apply_y_range``) when the readout needs a band above the data.
    """

    def readout_rect(self) -> QRectF:
        """The readout box in scene coordinates."""
        return self.marker_label.mapRectToScene(self.marker_label.boundingRect())

    def data_shapes(self) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """What the readout must not cover, in scene coordinates: the drawn lines, the
        marker and the error bars (polylines; several lines in one separated by NaN), and
        the points' and dots' symbols (an (n, 4) array of left, top, right, bottom)."""
        vb = self.getPlotItem().vb
        vb.updateMatrix()  # a range just set is applied lazily
        t = vb.childGroup.sceneTransform()

        def scene(xs, ys):
            xs, ys = np.asarray(xs, float), np.asarray(ys, float)
            return (t.m11() * xs + t.m21() * ys + t.dx(), t.m12() * xs + t.m22() * ys + t.dy())

        def symbols(xs, ys, size):
            px, py = scene(xs, ys)
            ok = np.isfinite(px) & np.isfinite(py)
            half = size / 2 + 1.5
            return np.column_stack([px[ok] - half, py[ok] - half, px[ok] + half,
                                    py[ok] + half])

        polylines, boxes = [], [np.empty((0, 4))]
        for item in self._items:
            if item.isVisible():
                xs, ys = item.getData()
                if xs is not None and len(xs):
                    polylines.append(scene(xs, ys))
        (_x0, _x1), (y0, y1) = vb.viewRange()
        mx = math.log10(self.marker_epsilon())
        polylines.append(scene([mx, mx], [y0, y1]))
        for item in self._point_items:
            if isinstance(item, pg.ErrorBarItem):
                o = item.opts
                xs, ys = np.asarray(o["x"], float), np.asarray(o["y"], float)
                top = np.asarray(o["top"], float) if o["top"] is not None else 0 * ys
                bottom = np.asarray(o["bottom"], float) if o["bottom"] is not None else 0 * ys
                # Every bar a segment, one polyline: (x, low), (x, high), gap, …
                bx = np.column_stack([xs, xs, np.full_like(xs, np.nan)]).ravel()
                by = np.column_stack([ys - bottom, ys + top, np.full_like(ys, np.nan)]).ravel()
                polylines.append(scene(bx, by))
            else:
                xs, ys = item.getData()
                if xs is not None and len(xs):
                    boxes.append(symbols(xs, ys, item.opts.get("symbolSize", 8)))
        for dots in (self.marker_dots, self.active_dot):
            xs, ys = dots.getData()
            if xs is not None and len(xs):
                boxes.append(symbols(xs, ys, dots.opts.get("size", 11)))
        return polylines, np.concatenate(boxes)

    def _place_readout(self) -> None:
        """Put the readout where it covers no data: beside the marker at the top or bottom,
        else a corner, else the first free place of a coarse scan — one line per model
        if that finds room, else the models on one line; if the data leave no room at all,
        a band above them, or, in a plot too small even for that, the least covered place.
        """
        label = self.marker_label
        vb = self.getPlotItem().vb
        view = vb.sceneBoundingRect()
        variants = getattr(self, "_readout_html", [])
        if not variants:
            return
        if view.width() <= 0 or view.height() <= 0:
            label.setHtml(variants[0])
            return
        area = view.adjusted(-1, -1, 1, 1)
        shapes = self.data_shapes()
        tried = []
        for html in variants:
            label.setHtml(html)
            candidates, size = self._candidates()
            corner = free_position(size, area, candidates, *shapes)
            if corner is not None:
                return self._put_readout(corner)
            if size[0] <= view.width() - 12:
                tried.append((size[1], size[0], html))
        # No room among the data: the shortest box that fits across, in a band above them
        # as high as it (the chosen mechanism alone if that band would crush the data).
        label.setHtml(min(tried)[2] if tried else variants[0])
        candidates, (w, h) = self._candidates()
        if (h + 12.0) / view.height() > MAX_HEADROOM:
            label.setHtml(self._readout_alone)
            candidates, (w, h) = self._candidates()
        if self._headroom == 0.0 and self._y_range is not None:
            self._headroom = min((h + 12.0) / view.height(), MAX_HEADROOM)
            self._apply_y_range()
            shapes = self.data_shapes()
            candidates, size = self._candidates()
            corner = free_position(size, area, candidates, *shapes)
            if corner is not None:
                return self._put_readout(corner)
        self._put_readout(least_covered((w, h), area, candidates, *shapes))

    def _candidates(self) -> tuple[list[QPointF], tuple[float, float]]:
        """Top-left corners to try for the readout as it is now, best first, and its size."""
        vb = self.getPlotItem().vb
        text = self.marker_label.textItem.boundingRect()
        mx = vb.mapViewToScene(QPointF(math.log10(self.marker_epsilon()), 0.0)).x()
        size = (text.width(), text.height())
        return candidate_corners(vb.sceneBoundingRect(), mx, size), size

    def _put_readout(self, corner: QPointF) -> None:
        label = self.marker_label
        label.setAnchor((0, 0))
        label.setPos(self.getPlotItem().vb.mapSceneToView(corner))
