"""Privacy–utility plot: error against ε, one colour per trust model.

Analytic curves are lines (the chosen mechanism solid, other trust models dashed),
simulated (Monte-Carlo) errors are points with ≈95% error bars, and a vertical marker
follows the current ε. Both axes are logarithmic (the y axis only when the errors span
more than a decade); coordinates are plotted as log10 values with labelled ticks, so
error bars and the marker need no special log handling. The y axis is in the column's
units ("± age").

The readout beside the marker gives each model's error at ε (:mod:`dpstudio.ui.readout`):
for the analyst, bias and noise, the simulation where it disagrees with the line, and the
clamping warning in amber; with true values hidden, the noise alone. It sits where it
covers no curve or point (:mod:`dpstudio.ui.readout_place`). One caption under the plot
states the comparison's assumptions; each legend entry is a short name, its tooltip the
full name and the curve's assumptions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from dpstudio.analysis.curves import UtilityResult
from dpstudio.engine.registry import REGISTRY
from dpstudio.ui.legend import full_name, legend_name, set_entry_tooltip
from dpstudio.ui.plot_caption import PlotCaption
from dpstudio.ui.plot_fit import fit
from dpstudio.ui.plots import (
    AXIS_FONT_PT,
    EPSILON_RANGE,
    HINT,
    UTILITY_TOOLTIP,
    add_hint,
    bottom_legend,
    decade_ticks,
    error_axis_label,
    fitting_linear_ticks,
    foreground,
    label_line,
    label_room,
    retitle,
    style_plot,
)
from dpstudio.ui.readout import LineData, clamping_warning_at, readings, readout_html
from dpstudio.ui.readout_place import ReadoutPlacement
from dpstudio.ui.style import configure_pyqtgraph, current_palette
from dpstudio.ui.texts import TRUST_MODELS, short_mechanism

__all__ = ["UtilityPlot", "trust_colour"]

_LOG_EPS = np.log10(EPSILON_RANGE)
#: Width the readout wraps at when it holds the clamping warning (a full sentence).
READOUT_WIDTH = 300
_Z_LINES, _Z_PRIMARY, _Z_POINTS, _Z_MARKER, _Z_ACTIVE, _Z_READOUT = 5, 10, 20, 50, 52, 60


def trust_colour(trust_model: str) -> str:
    """The colour a trust model is drawn in."""
    return TRUST_MODELS.get(trust_model, {}).get("colour", "#444444")


_BRUSHES: dict[str, object] = {}


def _brush(colour: str):
    """One brush per colour: the scatter item's symbol cache then hits every time."""
    if colour not in _BRUSHES:
        _BRUSHES[colour] = pg.mkBrush(colour)
    return _BRUSHES[colour]


@dataclass
class _Line:
    data: LineData
    mechanism: str
    assumptions: str = ""


def _label(mechanism: str) -> str:
    return REGISTRY.get(mechanism).label if mechanism in REGISTRY else mechanism


def _merge_captions(captions: list[str]) -> str:
    """One caption from several results' (sentences said once, in order)."""
    seen: list[str] = []
    for caption in captions:
        for sentence in (caption or "").replace(". ", ".\n").splitlines():
            sentence = sentence.strip()
            if sentence and sentence not in seen:
                seen.append(sentence)
    return " ".join(seen)


def _result_field(result: UtilityResult, name: str, index: int):
    """A field of the result, else its place in the utility key (column 0, query 4)."""
    value = getattr(result, name, None)
    if value is None and isinstance(result.key, tuple) and len(result.key) > index:
        value = result.key[index]
    return value if isinstance(value, str) else None


class UtilityPlot(ReadoutPlacement, pg.PlotWidget):
    """Error against ε. ``curves()``/``points()``/``marker()`` expose what is drawn."""

    updated = Signal(str)  # "lines", "points", "marker", "clear"

    def __init__(self, parent=None) -> None:
        configure_pyqtgraph()  # before the widget exists: its background is read at creation
        super().__init__(parent)
        style_plot(self, "Privacy–utility", "ε (log scale)", "error", UTILITY_TOOLTIP)
        self._lines: dict[str, _Line] = {}
        self._notes: dict[str, list[str]] = {}  # "lines" / "points" → the results' notes
        self._captions: dict[str, str] = {}     # "lines" / "compare" → the results' captions
        self._fixed: float | None = None  # ε fixed by the mechanism's parameters
        self._points: dict[str, tuple[np.ndarray, ...]] = {}
        self._point_trust: dict[str, str] = {}
        self._items: list = []
        self._point_items: list = []
        self._log_y = True
        self._epsilon = 1.0
        self._title = ""
        self._metric = "rmse"
        self._clamping: dict | None = None
        self._hide_true = False
        self._y_range: tuple[float, float] | None = None
        self._headroom = 0.0  # fraction of the data area kept free above the data
        self._readout_html: list[str] = []  # the readout, stacked and on fewer lines
        self._readout_alone = ""  # the chosen mechanism's line alone
        self.legend = bottom_legend(self, 2)
        self.getAxis("bottom").setTicks(decade_ticks(*EPSILON_RANGE))
        self.setXRange(_LOG_EPS[0] - 0.1, _LOG_EPS[1] + 0.1, padding=0)
        self.setYRange(0.0, 1.0, padding=0.04)
        self.marker = pg.InfiniteLine(0.0, angle=90, movable=False,
                                      pen=pg.mkPen("#1f2328", width=1.5,
                                                   style=Qt.PenStyle.DashLine))
        self.marker_label = pg.TextItem("", color=foreground(), anchor=(0, 0),
                                        fill=pg.mkBrush(255, 255, 255, 225))
        self.marker_dots = pg.ScatterPlotItem(size=11, pen=pg.mkPen("w", width=1.5))
        # The chosen model's dot: its own item, drawn above the others' (never hidden).
        self.active_dot = pg.ScatterPlotItem(size=12, pen=pg.mkPen("w", width=1.8))
        for item, z in ((self.marker, _Z_MARKER), (self.marker_dots, _Z_MARKER),
                        (self.active_dot, _Z_ACTIVE), (self.marker_label, _Z_READOUT)):
            item.setZValue(z)
            self.addItem(item, ignoreBounds=True)
        self.hint = add_hint(self, float(_LOG_EPS.mean()), 0.5)
        self.caption = PlotCaption(self)
        self.getPlotItem().vb.sigResized.connect(self._fit_legend)
        # Larger legend text (presentation mode) may no longer fit in as many columns.
        self.legend.geometryChanged.connect(self._fit_legend)
        self.getPlotItem().vb.sigResized.connect(self._place_readout)
        self.getPlotItem().vb.sigResized.connect(self.fit_ticks)
        self.set_epsilon(1.0)
        # Follow "Hide true values" of the session of the view holding this plot, if any.
        self._session = getattr(parent, "session", None)
        changed = getattr(self._session, "changed", None)
        if changed is not None:
            changed.connect(self._session_changed)
            self._hide_true = bool(getattr(self._session, "hide_true", False))

    # -- data ------------------------------------------------------------------------

    def curves(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Analytic lines: name → (ε, error), in natural units, as computed."""
        return {k: (v.data.epsilon, v.data.error) for k, v in self._lines.items()}

    def points(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Simulated points: name → (ε, error, low, high)."""
        return dict(self._points)

    def marker_epsilon(self) -> float:
        """The ε the marker stands at: the mechanism's fixed ε where its parameters fix one
        (randomized response with a chosen p), else the slider's."""
        return self._fixed if self._fixed is not None else self._epsilon

    def notes(self) -> list[str]:
        """The notes of the results drawn (shown in the plot's tooltip, as the trade-off
        plot's are: a caption of full sentences would widen the plot); with true values
        hidden, not the analyst's."""
        notes = [n for part in ("lines", "points") for n in self._notes.get(part, [])]
        if self._hide_true:
            notes = [n for n in notes if "analyst only" not in n]
        return notes

    def marker_text(self) -> str:
        """The readout as plain text."""
        return self.marker_label.textItem.toPlainText()

    def caption_text(self) -> str:
        """The caption under the plot, as shown ("" when none)."""
        return self.caption.text_shown()

    def clamping_warning(self) -> str:
        """The amber warning of the readout at the marker's ε ("" when none is shown)."""
        if self._hide_true:
            return ""
        return clamping_warning_at(self._clamping, self.marker_epsilon())

    @property
    def hide_true(self) -> bool:
        return self._hide_true

    @property
    def log_y(self) -> bool:
        return self._log_y

    def clear_data(self, message: str = HINT) -> None:
        self._lines.clear()
        self._points.clear()
        self._notes.clear()
        self._captions.clear()
        self._clamping = None
        self._fixed = None
        self._redraw()
        self.hint.textItem.setPlainText(message or HINT)
        self.hint.show()
        self.updated.emit("clear")

    def set_lines(self, result: UtilityResult, add: bool = False) -> None:
        """Draw the analytic curves of ``result`` (added to those shown with ``add``)."""
        self._title = result.metric_label
        lines = {
            c.name: _Line(LineData(np.asarray(c.epsilon, float), np.asarray(c.error, float),
                                   c.trust_model, c.primary, getattr(c, "bias", None),
                                   bool(getattr(c, "noise_only", False)),
                                   getattr(c, "unreached", None), getattr(c, "names", None)),
                          c.mechanism, str(getattr(c, "assumptions", "") or ""))
            for c in result.curves if c.kind == "analytic"}
        caption = str(getattr(result, "caption", "") or "")
        if add:
            self._lines = {**self._lines, **lines}
            self._captions["compare"] = caption
        else:
            self._lines = lines
            self._captions = {"lines": caption}
            self._notes["lines"] = list(result.notes)
            self._fixed = result.fixed_epsilon
            self._metric = result.metric
            self._clamping = getattr(result, "clamping", None) or None
            self._set_axis_label(result)
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

    def set_hide_true(self, hide: bool) -> None:
        """With true values hidden, draw and say nothing that needs the data: the lines and
        the readout are the noise alone, without the simulated points, bias or warning."""
        if bool(hide) != self._hide_true:
            self._hide_true = bool(hide)
            self._redraw()
            self.updated.emit("lines")

    def _session_changed(self, aspect: str) -> None:
        if aspect == "hide_true":
            self.set_hide_true(bool(getattr(self._session, "hide_true", False)))

    # -- drawing ---------------------------------------------------------------------

    def _y(self, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        if not self._log_y:
            return v
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(v > 0, np.log10(np.where(v > 0, v, 1.0)), np.nan)

    def _shown_error(self, line: _Line) -> np.ndarray:
        """The line as drawn: without the bias when true values are hidden."""
        d = line.data
        bias = d.bias
        if (self._hide_true and self._metric == "rmse" and not d.noise_only
                and bias is not None and math.isfinite(bias) and bias != 0.0):
            return np.sqrt(np.maximum(d.error**2 - bias * bias, 0.0))
        return d.error

    def _shown_points(self) -> dict[str, tuple[np.ndarray, ...]]:
        # Simulated errors are measured against the data's truth: none with it hidden.
        return {} if self._hide_true else self._points

    def _redraw(self) -> None:
        for item in self._items + self._point_items:
            self.removeItem(item)
        self._items, self._point_items = [], []
        self.legend.clear()
        points = self._shown_points()
        shown = {name: self._shown_error(line) for name, line in self._lines.items()}
        # The range holds the points' error bars too (nothing drawn above the data).
        ys = list(shown.values()) + [v[1] for v in points.values()] + [
            np.maximum(v[3], v[1]) for v in points.values()]
        finite = np.concatenate([y[np.isfinite(y) & (y > 0)] for y in ys]) if ys else \
            np.empty(0)
        if finite.size:  # at most six decades below the largest error
            finite = finite[finite >= finite.max() * 1e-6]
        self._log_y = bool(finite.size) and finite.max() / finite.min() > 10.0
        # Lines: comparisons first (underneath), the chosen mechanism on top.
        order = sorted(self._lines.items(), key=lambda kv: kv[1].data.primary)
        for name, line in order:
            d = line.data
            colour = trust_colour(d.trust_model)
            pen = pg.mkPen(colour, width=2.6 if d.primary else 2.0,
                           style=Qt.PenStyle.SolidLine if d.primary else Qt.PenStyle.DashLine)
            item = pg.PlotDataItem(np.log10(d.epsilon), self._y(shown[name]), pen=pen,
                                   name=legend_name(name, line.mechanism), connect="finite")
            item.setZValue(_Z_PRIMARY if d.primary else _Z_LINES)
            self.addItem(item)
            self._items.append(item)
            tip = full_name(name, line.mechanism) + (
                f"\n{line.assumptions}" if line.assumptions else "")
            set_entry_tooltip(self.legend, item, tip)
        for name, (eps, err, low, high) in points.items():
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
                item.setZValue(_Z_POINTS)
                self.addItem(item)
                self._point_items.append(item)
            set_entry_tooltip(self.legend, dots, f"{name}: the error of simulated releases "
                                                 "(≈95% bars), measured against the data")
        has_data = bool(self._lines or points)
        self.hint.setVisible(not has_data)
        retitle(self, self._title_text())
        notes = self.notes()
        self.setToolTip(UTILITY_TOOLTIP + ("\n\n" + "\n".join(notes) if notes else ""))
        caption = _merge_captions([self._captions.get("lines", ""),
                                   self._captions.get("compare", "")])
        if self._hide_true:  # the sentences about the data's bias are the analyst's
            caption = " ".join(s for s in caption.replace(". ", ".\n").splitlines()
                               if "analyst only" not in s)
        self.caption.set_text(caption)
        self._set_y_axis(finite)
        self._fit_legend()
        self._update_marker_text()

    def _title_text(self) -> str:
        if not (self._lines or self._points):
            return "Privacy–utility"
        return f"Privacy–utility: {self._title} against ε"

    def _set_axis_label(self, result: UtilityResult) -> None:
        """The y axis in the column's units ("± age"), the measure's name otherwise."""
        query = _result_field(result, "query", 4)
        column = _result_field(result, "column", 0)
        text = error_axis_label(result.metric, query, column, getattr(result, "unit", None))
        item = self.getPlotItem()
        item.setLabel("left", text, **{"font-size": f"{AXIS_FONT_PT}pt",
                                       "color": foreground()})
        item.getAxis("left").setToolTip(
            f"{result.metric_label}: how far a release typically lands from the true value"
            + (", in the column's units" if text.startswith("±") else ""))

    def _set_y_axis(self, finite: np.ndarray) -> None:
        self._headroom = 0.0  # the readout asks for it again if it needs it
        if finite.size == 0:
            self._y_range = None
            self._y_ticks = None
            self.getAxis("left").setTicks(None)
            self.setYRange(0.0, 1.0, padding=0.04)
            return
        if self._log_y:
            lo, hi = finite.min(), finite.max()
            self._y_range = (math.log10(lo) - 0.15, math.log10(hi) + 0.15)
        else:
            self._y_range = (0.0, float(finite.max()) * 1.08)
        self._apply_y_range()

    def _apply_y_range(self) -> None:
        """The data's range, and above it the headroom the readout asked for (a band
        where no data is drawn)."""
        lo, hi = self._y_range
        top = hi + (hi - lo) * self._headroom / (1.0 - self._headroom)
        self.fit_ticks()
        self.setYRange(lo, top, padding=0)

    def fit_ticks(self) -> None:
        """Ticks on the data's range only (the band above holds no value), as many labels
        as the axis's height holds apart: a short axis (presentation mode's large type)
        labels every second or third decade rather than pile them up."""
        if self.__dict__.get("_y_range") is None:  # none yet, or still being made
            return
        lo, hi = self._y_range
        axis = self.getAxis("left")
        # The data's share of the axis's height (the rest is the readout's band).
        height = self.getPlotItem().vb.height()
        length = height * (1.0 - self._headroom)
        most = label_room(axis, length) if length > 0 else None
        if self._log_y:
            first, last = math.floor(lo + 0.1), math.ceil(hi - 0.1)
            if most is not None and height > 0:
                # Labels whole inside the axis: half a line clear of its bottom end.
                top = hi + (hi - lo) * self._headroom / (1.0 - self._headroom)
                half = 0.5 * label_line(axis) * (top - lo) / height
                first, last = max(first, math.ceil(lo + half)), min(last, math.floor(top - half))
                if first > last:  # no decade whole inside: the data's range as before
                    first, last = math.floor(lo + 0.1), math.ceil(hi - 0.1)
            ticks = decade_ticks(10.0**first, 10.0**last, most)
        else:
            ticks = fitting_linear_ticks(0.0, hi, most or 7)
        if ticks != getattr(self, "_y_ticks", None):
            self._y_ticks = ticks
            axis.setTicks(ticks)

    def _fit_legend(self) -> None:
        """Two columns where the plot is wide enough, one otherwise: never a cut entry."""
        if self.__dict__.get("legend") is not None:  # resize events come before __init__
            # To the widget's width, not the data area's: a legend laid out wider than the
            # widget would widen the data area with it, and keep itself so.
            fit(self)

    def _update_marker_text(self) -> None:
        at = self.marker_epsilon()
        x = math.log10(at)
        lines = {name: line.data for name, line in self._lines.items()}
        points = {name: (*v, self._point_trust.get(name, "central"))
                  for name, v in self._shown_points().items()}
        shown = readings(lines, points, at, metric=self._metric, hide_true=self._hide_true)
        others_x, others_y, brushes = [], [], []
        active: tuple[float, str] | None = None
        for r in shown:
            if not r.reached:  # the chosen line stops short of ε: no dot, the text says why
                continue
            y = math.log10(r.value) if self._log_y else r.value
            if r.primary and active is None:
                active = (y, trust_colour(r.trust_model))
            else:
                others_x.append(x)
                others_y.append(y)
                brushes.append(_brush(trust_colour(r.trust_model)))
        self.marker_dots.setData(others_x, others_y, brush=brushes)
        if active is None:
            self.active_dot.setData([], [])
        else:
            self.active_dot.setData([x], [active[0]], brush=_brush(active[1]))
        # Where the parameters fix ε the readout says so (the notes say by what).
        header = f"ε = {at:.4g} (fixed)" if self._fixed is not None else f"ε = {at:.3g}"
        warning = self.clamping_warning()
        palette = current_palette()
        labels = {k: v["label"] for k, v in TRUST_MODELS.items()}
        # Two lines of one trust model (the chosen mechanism and the like-for-like
        # comparison): the second says which mechanism it is.
        for r in shown:
            if not r.primary and sum(o.trust_model == r.trust_model for o in shown) > 1:
                line = self._lines[r.name]
                labels[r.name] = (f"{labels.get(r.trust_model, r.trust_model)} "
                                  f"({short_mechanism(line.mechanism, _label(line.mechanism))})")
        colours = {k: v["colour"] for k, v in TRUST_MODELS.items()}
        self._readout_html = [
            readout_html(header, shown, labels, colour=foreground(), warning=warning,
                         warning_colour=palette.warning, colours=colours, per_line=k)
            for k in (1, 2, len(shown))]
        # The last resort of a plot with no room (the other models' dots are on their
        # lines at the marker): the chosen mechanism alone.
        self._readout_alone = readout_html(
            header, [r for r in shown if r.primary] or shown[:1], labels, colour=foreground(),
            warning=warning, warning_colour=palette.warning, colours=colours)
        self.marker_label.textItem.setTextWidth(READOUT_WIDTH if warning else -1)
        self._place_readout()
