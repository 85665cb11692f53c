"""Privacy–utility plot: error against ε, one colour per trust model.

Analytic curves are lines (the chosen mechanism solid, other trust models dashed),
simulated (Monte-Carlo) errors are points with ≈95% error bars, and a vertical marker
follows the current ε. Both axes are logarithmic (the y axis only when the errors span
more than a decade); coordinates are plotted as log10 values with labelled ticks, so
error bars and the marker need no special log handling.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from dpstudio.analysis.curves import UtilityResult
from dpstudio.ui.plots import (
    EPSILON_RANGE,
    HINT,
    UTILITY_TOOLTIP,
    add_hint,
    bottom_legend,
    decade_ticks,
    foreground,
    linear_ticks,
    style_plot,
)
from dpstudio.ui.style import MUTED, configure_pyqtgraph
from dpstudio.ui.texts import TRUST_MODELS

__all__ = ["UtilityPlot"]

_LOG_EPS = np.log10(EPSILON_RANGE)


def trust_colour(trust_model: str) -> str:
    return TRUST_MODELS.get(trust_model, {}).get("colour", "#444444")


_BRUSHES: dict[str, object] = {}


def _brush(colour: str):
    """One brush per colour: the scatter item's symbol cache then hits every time."""
    if colour not in _BRUSHES:
        _BRUSHES[colour] = pg.mkBrush(colour)
    return _BRUSHES[colour]


class UtilityPlot(pg.PlotWidget):
    """Error against ε. ``curves()``/``points()``/``marker()`` expose what is drawn."""

    updated = Signal(str)  # "lines", "points", "marker", "clear"

    def __init__(self, parent=None) -> None:
        configure_pyqtgraph()  # before the widget exists: its background is read at creation
        super().__init__(parent)
        style_plot(self, "Privacy–utility", "ε (log scale)", "error", UTILITY_TOOLTIP)
        self._lines: dict[str, tuple[np.ndarray, np.ndarray, str, bool]] = {}
        self._noise_only: set[str] = set()  # lines that leave out a bias (readout says so)
        self._notes: dict[str, list[str]] = {}  # "lines" / "points" → the results' notes
        self._fixed: float | None = None  # ε fixed by the mechanism's parameters
        self._points: dict[str, tuple[np.ndarray, ...]] = {}
        self._point_trust: dict[str, str] = {}
        self._items: list = []
        self._point_items: list = []
        self._log_y = True
        self._epsilon = 1.0
        self._title = ""
        self.legend = bottom_legend(self, 2)
        self.getAxis("bottom").setTicks(decade_ticks(*EPSILON_RANGE))
        self.setXRange(_LOG_EPS[0] - 0.1, _LOG_EPS[1] + 0.1, padding=0)
        self.setYRange(0.0, 1.0, padding=0.04)
        self.marker = pg.InfiniteLine(0.0, angle=90, movable=False,
                                      pen=pg.mkPen("#1f2328", width=1.5,
                                                   style=Qt.PenStyle.DashLine))
        self.marker_label = pg.TextItem("", color=foreground(), anchor=(0, 0),
                                        fill=pg.mkBrush(255, 255, 255, 215))
        self.marker_dots = pg.ScatterPlotItem(size=11, pen=pg.mkPen("w", width=1.5))
        for item in (self.marker, self.marker_label, self.marker_dots):
            item.setZValue(50)
            self.addItem(item, ignoreBounds=True)
        self.hint = add_hint(self, float(_LOG_EPS.mean()), 0.5)
        self.status = pg.TextItem("", color=MUTED, anchor=(0.5, 0.5))
        self.set_epsilon(1.0)

    # -- data ------------------------------------------------------------------------

    def curves(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Analytic lines: name → (ε, error), in natural units."""
        return {k: (v[0], v[1]) for k, v in self._lines.items()}

    def points(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Simulated points: name → (ε, error, low, high)."""
        return dict(self._points)

    def marker_epsilon(self) -> float:
        """The ε the marker stands at: the mechanism's fixed ε where its parameters fix one
        (randomized response with a chosen p), else the slider's."""
        return self._fixed if self._fixed is not None else self._epsilon

    def notes(self) -> list[str]:
        """The notes of the results drawn (shown in the plot's tooltip, as the trade-off
        plot's are: a caption of full sentences would widen the plot)."""
        return [n for part in ("lines", "points") for n in self._notes.get(part, [])]

    def marker_text(self) -> str:
        return self.marker_label.textItem.toPlainText()

    @property
    def log_y(self) -> bool:
        return self._log_y

    def clear_data(self, message: str = HINT) -> None:
        self._lines.clear()
        self._points.clear()
        self._noise_only.clear()
        self._notes.clear()
        self._fixed = None
        self._redraw()
        self.hint.textItem.setPlainText(message or HINT)
        self.hint.show()
        self.updated.emit("clear")

    def set_lines(self, result: UtilityResult, add: bool = False) -> None:
        """Draw the analytic curves of ``result`` (added to those shown with ``add``)."""
        self._title = result.metric_label
        lines = {
            c.name: (np.asarray(c.epsilon, float), np.asarray(c.error, float), c.trust_model,
                     c.primary)
            for c in result.curves if c.kind == "analytic"}
        noise_only = {c.name for c in result.curves if c.kind == "analytic" and c.noise_only}
        if add:
            self._lines = {**self._lines, **lines}
            self._noise_only |= noise_only
        else:
            self._lines, self._noise_only = lines, noise_only
            self._notes["lines"] = list(result.notes)
            self._fixed = result.fixed_epsilon
            self.marker.setValue(math.log10(self.marker_epsilon()))
        self._redraw()
        self.updated.emit("lines")

    def set_points(self, result: UtilityResult | None) -> None:
        self._points.clear()
        self._point_trust.clear()
        self._notes["points"] = [] if result is None else list(result.notes)
        if result is not None:
            self._title = result.metric_label
            for c in result.curves:
                if c.kind == "simulation":
                    self._points[c.name] = (np.asarray(c.epsilon, float),
                                            np.asarray(c.error, float),
                                            np.asarray(c.low, float), np.asarray(c.high, float))
                    self._point_trust[c.name] = c.trust_model
        self._redraw()
        self.updated.emit("points")

    def set_epsilon(self, epsilon: float) -> None:
        """Move the marker (no recomputation: the curves do not depend on ε)."""
        self._epsilon = float(epsilon)
        self.marker.setValue(math.log10(self.marker_epsilon()))
        self._update_marker_text()
        self.updated.emit("marker")

    # -- drawing ---------------------------------------------------------------------

    def _y(self, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        if not self._log_y:
            return v
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(v > 0, np.log10(np.where(v > 0, v, 1.0)), np.nan)

    def _redraw(self) -> None:
        for item in self._items + self._point_items:
            self.removeItem(item)
        self._items, self._point_items = [], []
        self.legend.clear()
        ys = [v[1] for v in self._lines.values()] + [v[1] for v in self._points.values()]
        finite = np.concatenate([y[np.isfinite(y) & (y > 0)] for y in ys]) if ys else \
            np.empty(0)
        if finite.size:  # at most six decades below the largest error
            finite = finite[finite >= finite.max() * 1e-6]
        self._log_y = bool(finite.size) and finite.max() / finite.min() > 10.0
        # Lines: comparisons first (underneath), the chosen mechanism on top.
        order = sorted(self._lines.items(), key=lambda kv: kv[1][3])
        for name, (eps, err, tm, primary) in order:
            colour = trust_colour(tm)
            pen = pg.mkPen(colour, width=2.6 if primary else 2.0,
                           style=Qt.PenStyle.SolidLine if primary else Qt.PenStyle.DashLine)
            item = pg.PlotDataItem(np.log10(eps), self._y(err), pen=pen, name=name,
                                   connect="finite")
            item.setZValue(10 if primary else 5)
            self.addItem(item)
            self._items.append(item)
        for name, (eps, err, low, high) in self._points.items():
            colour = trust_colour(self._point_trust.get(name, "central"))
            x, y = np.log10(eps), self._y(err)
            ok = np.isfinite(y)
            top = self._y(np.maximum(high, err)) - y
            bottom = y - self._y(np.maximum(low, err * 1e-3)) if self._log_y else err - low
            bars = pg.ErrorBarItem(x=x[ok], y=y[ok], top=np.nan_to_num(top[ok]),
                                   bottom=np.nan_to_num(bottom[ok]), beam=0.035,
                                   pen=pg.mkPen(colour, width=1.4))
            dots = pg.PlotDataItem(x[ok], y[ok], pen=None, symbol="o", symbolSize=8,
                                   symbolBrush=pg.mkBrush(colour),
                                   symbolPen=pg.mkPen("w", width=1.2), name=name)
            for item in (bars, dots):
                item.setZValue(20)
                self.addItem(item)
                self._point_items.append(item)
        has_data = bool(self._lines or self._points)
        self.hint.setVisible(not has_data)
        self.setTitle(self._title_text(), color=foreground(), size="11pt")
        notes = self.notes()
        self.setToolTip(UTILITY_TOOLTIP + ("\n\n" + "\n".join(notes) if notes else ""))
        self._set_y_axis(finite)
        self._update_marker_text()

    def _title_text(self) -> str:
        if not (self._lines or self._points):
            return "Privacy–utility"
        return f"Privacy–utility: {self._title} against ε"

    def _set_y_axis(self, finite: np.ndarray) -> None:
        axis = self.getAxis("left")
        if finite.size == 0:
            axis.setTicks(None)
            self.setYRange(0.0, 1.0, padding=0.04)
            return
        if self._log_y:
            lo, hi = finite.min(), finite.max()
            lo_d, hi_d = math.floor(math.log10(lo) - 0.05), math.ceil(math.log10(hi) + 0.05)
            axis.setTicks(decade_ticks(10.0**lo_d, 10.0**hi_d))
            self.setYRange(math.log10(lo) - 0.15, math.log10(hi) + 0.15, padding=0)
        else:
            hi = float(finite.max()) * 1.08
            axis.setTicks(linear_ticks(0.0, hi))
            self.setYRange(0.0, hi, padding=0)

    def _update_marker_text(self) -> None:
        at = self.marker_epsilon()
        x = math.log10(at)
        parts, dots_x, dots_y, brushes = [], [], [], []
        for name, (eps, err, tm, primary) in self._lines.items():
            ok = np.isfinite(err) & (err > 0)
            if not ok.any() or not (eps[ok].min() <= at <= eps[ok].max()):
                continue
            value = float(10 ** np.interp(x, np.log10(eps[ok]), np.log10(err[ok])))
            # A noise-only line is not the whole error where the release is biased.
            part = (f"{TRUST_MODELS.get(tm, {}).get('label', tm)}: {value:.3g}"
                    + (" (noise only)" if name in self._noise_only else ""))
            if primary:
                parts.insert(0, part)
            else:
                parts.append(part)
            dots_x.append(x)
            dots_y.append(math.log10(value) if self._log_y else value)
            brushes.append(_brush(trust_colour(tm)))
        self.marker_dots.setData(dots_x, dots_y, brush=brushes)
        # Where the parameters fix ε the readout says so (the notes say by what).
        text = f"ε = {at:.4g} (fixed)" if self._fixed is not None else f"ε = {at:.3g}"
        if parts:
            text += "\n" + "\n".join(parts)
        self.marker_label.setText(text)
        (x0, x1), (y0, y1) = self.viewRange()
        right = x < x0 + 0.7 * (x1 - x0)
        self.marker_label.setAnchor((0, 0) if right else (1, 0))
        self.marker_label.setPos(x + (0.03 if right else -0.03), y1 - 0.02 * (y1 - y0))
