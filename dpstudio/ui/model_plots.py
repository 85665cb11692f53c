"""The Models tab's two plots, drawn from a :class:`~dpstudio.ui.model_jobs.CompareResult`.

- :func:`draw_overlay`: the privacy–utility overlay — each variant's mean held-out metric
  against ε (log axis, ticks at the grid's ε) with a shaded band from the smallest to the
  largest of its R runs, its point at the form's ε, the non-private line, and each site
  trained alone (dashed, the mean over the sites).
- :func:`draw_rounds`: held-out metric after each FedAvg round at the form's ε, one line
  per ticked federated variant, with the non-private line.

Both return the items they drew (tests read the plotted arrays from them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from dpstudio.ui.model_jobs import CompareResult
from dpstudio.ui.model_variants import variant

__all__ = ["BASELINE_COLOUR", "METRIC_SHORT", "METRIC_TEXT", "Drawn", "draw_overlay",
           "draw_rounds", "new_plot"]

METRIC_TEXT = {"accuracy": "held-out accuracy", "auc": "held-out AUC",
               "rmse": "held-out RMSE (label units)"}
METRIC_SHORT = {"accuracy": "accuracy", "auc": "AUC", "rmse": "RMSE"}
BASELINE_COLOUR = "#57606a"
_ALONE_COLOUR = "#24292f"


@dataclass
class Drawn:
    """What a plot shows: by variant key, the mean line, the band's (low, high) edges and
    the point at the form's ε; the non-private line; each site alone (or None)."""

    curves: dict[str, pg.PlotDataItem] = field(default_factory=dict)
    bands: dict[str, tuple[pg.PlotCurveItem, pg.PlotCurveItem]] = field(default_factory=dict)
    marks: dict[str, pg.PlotDataItem] = field(default_factory=dict)
    baseline: pg.InfiniteLine | None = None
    alone: pg.PlotDataItem | None = None


def new_plot(parent: Any, bottom: str) -> pg.PlotWidget:
    """A plot with a grid, a legend at the bottom right and the x axis named."""
    plot = pg.PlotWidget(parent)
    plot.setLabel("bottom", bottom)
    plot.showGrid(x=True, y=True, alpha=0.2)
    plot.getAxis("left").enableAutoSIPrefix(False)
    plot.getAxis("left").setWidth(56)  # the axis name clear of the tick labels
    plot.addLegend(offset=(-10, -10), labelTextSize="8pt")  # curves rise to the top
    return plot


def _reset(plot: pg.PlotWidget) -> None:
    plot.clear()
    legend = plot.getPlotItem().legend
    if legend is not None:
        legend.clear()


def _baseline(plot: pg.PlotWidget, value: float | None, drawn: Drawn) -> None:
    if value is None or not math.isfinite(value):
        return
    pen = pg.mkPen(BASELINE_COLOUR, width=1.6, style=Qt.PenStyle.DashLine)
    line = pg.InfiniteLine(pos=value, angle=0, movable=False, pen=pen)
    plot.addItem(line)
    # The legend's entry (an InfiniteLine has none of its own).
    plot.addItem(pg.PlotDataItem([], [], pen=pen, name="non-private model (central)"))
    drawn.baseline = line


def _y_range(plot: pg.PlotWidget, metric: str, values: list[float]) -> None:
    # A fixed scale, so a difference of a few thousandths does not fill the plot: accuracy
    # and AUC from below chance (0.5) to 1, RMSE from 0.
    finite = [v for v in values if math.isfinite(v)]
    if metric == "rmse":
        plot.setYRange(0.0, 1.1 * max(finite or [1.0]), padding=0)
    else:
        plot.setYRange(min([0.5, *finite]) - 0.02, 1.0, padding=0)


def draw_overlay(plot: pg.PlotWidget, r: CompareResult, metric: str) -> Drawn:
    """Every shown variant's curve and band against log10 ε; the form's ε marked.

    Parameters
    ----------
    plot : pyqtgraph.PlotWidget
    r : CompareResult
    metric : str
        ``"accuracy"``, ``"auc"`` or ``"rmse"``.

    Returns
    -------
    Drawn
    """
    _reset(plot)
    drawn = Drawn()
    plot.setLabel("left", METRIC_TEXT[metric])
    x = np.log10(np.asarray(r.epsilons, dtype=float))
    form_eps = float(r.request.epsilon)
    ticks = sorted({*r.epsilons, form_eps})
    plot.getAxis("bottom").setTicks([[(math.log10(e), f"{e:g}") for e in ticks], []])
    shown: list[float] = []
    for key in r.points:
        if key in r.skipped:
            continue
        v = variant(key)
        mean, lo, hi = (np.asarray(a, dtype=float) for a in r.series(key, metric))
        colour = QColor(v.colour)
        if r.request.runs > 1:  # FedAvg without privacy varies too (its batches)
            fill = QColor(colour)
            fill.setAlpha(55)
            edge = QColor(colour)
            edge.setAlpha(90)
            # Curve items (not data items): a fill needs their paths, drawn or not.
            low = pg.PlotCurveItem(x, lo, pen=pg.mkPen(edge, width=0.8), connect="finite")
            high = pg.PlotCurveItem(x, hi, pen=pg.mkPen(edge, width=0.8), connect="finite")
            plot.addItem(low)
            plot.addItem(high)
            plot.addItem(pg.FillBetweenItem(low, high, brush=pg.mkBrush(fill)))
            drawn.bands[key] = (low, high)
        style = Qt.PenStyle.SolidLine if v.private else Qt.PenStyle.DashDotLine
        curve = pg.PlotDataItem(x, mean, pen=pg.mkPen(colour, width=2.2, style=style),
                                symbol=v.symbol, symbolSize=8, symbolBrush=colour,
                                symbolPen=pg.mkPen(colour), name=v.label, connect="finite")
        plot.addItem(curve)
        drawn.curves[key] = curve
        at = r.at_epsilon.get(key, {})
        m, _a, _b = _point(at, metric)
        if v.private and math.isfinite(m):
            mark = pg.PlotDataItem([math.log10(form_eps)], [m], pen=None, symbol=v.symbol,
                                   symbolSize=14, symbolBrush=colour,
                                   symbolPen=pg.mkPen("w", width=1.5))
            plot.addItem(mark)
            drawn.marks[key] = mark
        shown += [*mean, *lo, *hi, m]
    alone = r.sites_alone.get(metric)
    if alone:
        pen = pg.mkPen(_ALONE_COLOUR, width=1.6, style=Qt.PenStyle.DotLine)
        ys = np.asarray(alone, dtype=float)
        drawn.alone = pg.PlotDataItem(
            x, ys, pen=pen, symbol="+", symbolSize=10, symbolPen=pg.mkPen(_ALONE_COLOUR),
            name=f"each site alone (mean of {r.sites_count})", connect="finite")
        plot.addItem(drawn.alone)
        shown += list(ys)
    base = r.baseline.get(metric)
    _baseline(plot, base, drawn)
    _y_range(plot, metric, [*shown, *([base] if base is not None else [])])
    pad = 0.08 * (x.max() - x.min() if x.size > 1 else 1.0)
    xs = [*x, math.log10(form_eps)]
    plot.setXRange(min(xs) - pad, max(xs) + pad, padding=0)
    return drawn


def _point(p: dict[str, Any], metric: str) -> tuple[float, float, float]:
    from dpstudio.ui.model_jobs import _stats

    return _stats(p, metric)


def draw_rounds(plot: pg.PlotWidget, r: CompareResult, metric: str | None = None) -> Drawn:
    """A held-out metric after each FedAvg round at the form's ε, per federated variant.

    Parameters
    ----------
    plot : pyqtgraph.PlotWidget
    r : CompareResult
    metric : str, optional
        ``"accuracy"``, ``"auc"`` or ``"rmse"`` (default: the result's main metric); a
        run that measured only its main metric per round shows that one.

    Returns
    -------
    Drawn
        ``curves`` by variant key (x: round 1..T).
    """
    _reset(plot)
    drawn = Drawn()
    metric = metric or r.metric
    plot.setLabel("left", f"{METRIC_TEXT[metric]} after each round")
    plot.getAxis("bottom").setTicks(None)
    shown: list[float] = []
    for key, at in r.at_epsilon.items():
        v = variant(key)
        by_name = at.get("rounds_by_metric") or {}
        rounds = by_name.get(metric) or (at.get("rounds") if metric == r.metric else None) or []
        if not v.federated or not rounds or key in r.skipped:
            continue
        x = np.arange(1, len(rounds) + 1, dtype=float)
        y = np.asarray(rounds, dtype=float)
        style = Qt.PenStyle.SolidLine if v.private else Qt.PenStyle.DashDotLine
        curve = pg.PlotDataItem(x, y, pen=pg.mkPen(v.colour, width=2.0, style=style),
                                symbol=v.symbol if len(rounds) <= 30 else None,
                                symbolSize=6, symbolBrush=v.colour,
                                symbolPen=pg.mkPen(v.colour), name=v.label, connect="finite")
        plot.addItem(curve)
        drawn.curves[key] = curve
        shown += list(y)
    base = r.baseline.get(metric)
    _baseline(plot, base, drawn)
    _y_range(plot, metric, [*shown, *([base] if base is not None else [])])
    plot.enableAutoRange(axis="x")
    return drawn
