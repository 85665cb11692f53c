"""Hypothesis-testing trade-off plot: what an attacker can tell at the current ε.

On the unit square of type I error α (false alarm) and type II error β (missed
detection): the release's exact curve, random guessing and the curve after k releases —
the three a stakeholder needs, with a plain-language caption always under the plot. The
"Details" toggle adds the region ruled out by the (ε, δ) guarantee (shaded), the
Gaussian-DP curve (dashed) and simulated likelihood-ratio attacks with their
Clopper–Pearson boxes. Where only the release's (ε, δ) is known (shuffle protocols,
permute-and-flip), its curve is that region's boundary: the legend calls it "(ε, δ)
region" and the caption says so in one more sentence.
"""

from __future__ import annotations

import re

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QGraphicsPathItem, QToolButton

from dpstudio.analysis.curves import TradeoffResult
from dpstudio.ui.legend import set_entry_tooltip, uncut_names
from dpstudio.ui.plot_caption import PlotCaption
from dpstudio.ui.plot_fit import fit
from dpstudio.ui.plots import (
    HINT,
    TRADEOFF_TOOLTIP,
    add_hint,
    bottom_legend,
    fitting_linear_ticks,
    label_room,
    linear_ticks,
    retitle,
    style_plot,
)
from dpstudio.ui.style import REFERENCE_PEN
from dpstudio.ui.texts import GLOSSARY, TRADEOFF_CAPTION
from dpstudio.ui.utility_plot import trust_colour

__all__ = ["TradeoffPlot"]

BOUND_BRUSH = (214, 39, 40, 45)
BOUND_PEN = "#c2410c"
GDP_COLOUR = "#3f3f46"
COMPOSED_COLOUR = "#7c3aed"
ATTACK_COLOUR = "#111827"
#: Legend of the release's curve when it is only the boundary of its (ε, δ) region
#: (followed by the guarantee: "(ε, δ) region: ε = 1, δ = 1e-6").
REGION_LEGEND = "(ε, δ) region"
#: Roles shown only with "Details" on (the release, guessing and k releases always are).
DETAIL_ROLES = ("bound", "gdp", "attack")
DETAILS_TOOLTIP = ("Show the region the (ε, δ) guarantee rules out, the Gaussian-DP curve and "
                   "a simulated attack")


class TradeoffPlot(pg.PlotWidget):
    """β against α. ``curves()`` → name → (α, β); ``attack()`` → the simulated points."""

    updated = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        style_plot(self, "Trade-off", "Type I error α (false alarm)",
                   "Type II error β (missed detection)", TRADEOFF_TOOLTIP)
        for side, term in (("bottom", "type1"), ("left", "type2")):
            self.getAxis(side).setTicks(linear_ticks(0.0, 1.0, 5))
            self.getAxis(side).setToolTip(GLOSSARY[term])
        self.setXRange(0.0, 1.0, padding=0.03)
        self.setYRange(0.0, 1.0, padding=0.03)
        self.legend = bottom_legend(self, 1)
        self.diagonal = pg.PlotDataItem([0.0, 1.0], [1.0, 0.0], pen=REFERENCE_PEN,
                                        name="random guessing")
        self.diagonal.setToolTip("β = 1 − α: an attacker who guesses at random")
        self.addItem(self.diagonal)
        set_entry_tooltip(self.legend, self.diagonal, "random guessing (β = 1 − α): what an "
                                                      "attacker does knowing nothing")
        self.hint = add_hint(self, 0.5, 0.5)
        self._curves: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._labels: dict[str, str] = {}
        self._attack: dict[str, np.ndarray] | None = None
        self._colour = trust_colour("central")
        self.result: TradeoffResult | None = None
        # Every item exists once and is updated in place: moving ε redraws, never rebuilds.
        self._zero = pg.PlotDataItem([0.0, 1.0], [0.0, 0.0], pen=pg.mkPen(None))
        self._edge = pg.PlotDataItem(pen=pg.mkPen(BOUND_PEN, width=1.3,
                                                  style=Qt.PenStyle.DashLine))
        self._fill = pg.FillBetweenItem(self._edge, self._zero, brush=pg.mkBrush(*BOUND_BRUSH))
        self._fill.setZValue(-1)
        self._gdp = pg.PlotDataItem(pen=pg.mkPen(GDP_COLOUR, width=1.6,
                                                 style=Qt.PenStyle.DashLine))
        self._composed = pg.PlotDataItem(pen=pg.mkPen(COMPOSED_COLOUR, width=2.0,
                                                      style=Qt.PenStyle.DotLine))
        self._mech = pg.PlotDataItem(pen=pg.mkPen(self._colour, width=2.8))
        self._mech.setZValue(10)
        self._boxes = _BoxesItem()
        self._boxes.setZValue(15)
        self._dots = pg.PlotDataItem(pen=None, symbol="s", symbolSize=6,
                                     symbolBrush=pg.mkBrush(ATTACK_COLOUR),
                                     symbolPen=pg.mkPen("w", width=0.8))
        self._dots.setZValue(16)
        self._roles = {"bound": self._edge, "gdp": self._gdp, "composed": self._composed,
                       "mechanism": self._mech, "attack": self._dots}
        for item in (self._zero, self._fill, *self._roles.values(), self._boxes):
            item.setVisible(False)
            self.addItem(item)
        self._legend_roles: tuple[tuple[str, str], ...] = ()
        self._legend_labels: dict[str, str] = {}
        self._primary_role = "mechanism"
        self._region_note: str | None = None
        self.caption = PlotCaption(self, TRADEOFF_CAPTION)
        self.details = QToolButton(self)
        self.details.setText("Details")
        self.details.setCheckable(True)
        self.details.setToolTip(DETAILS_TOOLTIP)
        self.details.toggled.connect(self._details_toggled)
        vb = self.getPlotItem().vb
        vb.sigResized.connect(self._place_details)
        vb.sigResized.connect(self.fit_ticks)
        vb.sigResized.connect(self._fit_legend)
        self.legend.geometryChanged.connect(self._fit_legend)  # larger text may not fit
        self._place_details()

    def curves(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Plotted curves by role: bound, mechanism, gdp, composed (those present)."""
        return dict(self._curves)

    def labels(self) -> dict[str, str]:
        return dict(self._labels)

    def attack(self) -> dict[str, np.ndarray] | None:
        return None if self._attack is None else dict(self._attack)

    def clear_data(self, message: str = HINT) -> None:
        self.result = None
        self._region_note = None
        self.caption.set_text(TRADEOFF_CAPTION)
        self._curves.clear()
        self._labels.clear()
        self._attack = None
        for item in (self._zero, self._fill, *self._roles.values(), self._boxes):
            item.setVisible(False)
        self._set_legend({})
        label = self.getPlotItem().titleLabel
        if hasattr(label, "short_forms"):
            label.short_forms = {}
            label.set_tooltip_text("")
        retitle(self, "Trade-off")
        self.hint.textItem.setPlainText(message or HINT)
        self.hint.show()
        self.updated.emit()

    def _set_legend(self, labels: dict[str, str]) -> None:
        """Legend entries for the roles shown: this release, guessing, k releases, and with
        "Details" the rest; rebuilt only when the entries change."""
        self._legend_labels = dict(labels)
        shown = self._shown_roles()
        entries = tuple((role, labels[role]) for role in ("mechanism", "bound", "composed",
                                                          "gdp", "attack")
                        if role in labels and role in shown)
        if entries == self._legend_roles:
            return
        self._legend_roles = entries
        self.legend.clear()
        entries_in_order = list(entries)
        # This release first, then guessing (the reference), then the others.
        first = [e for e in entries_in_order if e[0] == self._primary_role]
        rest = [e for e in entries_in_order if e[0] != self._primary_role]
        for role, text in first:
            self._add_entry(role, text)
        self.legend.addItem(self.diagonal, self.diagonal.name())
        set_entry_tooltip(self.legend, self.diagonal, "random guessing (β = 1 − α): what an "
                                                      "attacker does knowing nothing")
        for role, text in rest:
            self._add_entry(role, text)
        self._fit_legend()

    def _add_entry(self, role: str, text: str) -> None:
        item = self._roles[role]
        self.legend.addItem(item, text)
        full = uncut_names(self._labels.get(role, ""))
        tips = {
            "mechanism": (f"{self._region_note} ({full})" if self._region_note else
                          f"This release ({full}): the fewest misses an attacker can have at "
                          "each rate of false alarms"),
            "composed": f"After {full}: what an attacker who sees them all can do",
            "bound": (f"This release: an attacker can do at most what {full} allows (no "
                      "exact curve of its own here, so its (ε, δ) guarantee stands for it)"
                      if role == self._primary_role
                      else f"Ruled out by {full}: no attacker of this release gets into the "
                           "shaded region"),
            "gdp": f"{full}. {GLOSSARY['gdp']}",
        }
        set_entry_tooltip(self.legend, item, tips.get(role, text))

    def _shown_roles(self) -> set[str]:
        """Roles drawn now: the detail roles only with "Details" on (the bound too when it
        stands for the release, which has no exact curve of its own)."""
        details = self.details.isChecked() if hasattr(self, "details") else False
        return {role for role in self._roles
                if details or role not in DETAIL_ROLES or role == self._primary_role}

    def _apply_visibility(self) -> None:
        shown = self._shown_roles()
        for role, item in self._roles.items():
            present = role in self._curves or (role == "attack" and self._attack is not None)
            item.setVisible(present and role in shown)
        bound = "bound" in self._curves and "bound" in shown
        self._zero.setVisible(bound)
        self._fill.setVisible(bound)
        self._boxes.setVisible(self._attack is not None and "attack" in shown)

    def _details_toggled(self, _on: bool) -> None:
        self._apply_visibility()
        if self._legend_labels:
            self._set_legend(self._legend_labels)
        self.updated.emit()

    def caption_text(self) -> str:
        """The caption under the plot, as shown ("" when hidden)."""
        return self.caption.text_shown()

    def legend_texts(self) -> list[str]:
        """The legend's entries, as shown."""
        return [label.text for _sample, label in self.legend.items]

    def _place_details(self) -> None:
        """The Details button in the data area's top-right corner: above the diagonal,
        where no trade-off curve ever goes (β ≤ 1 − α)."""
        button = self.__dict__.get("details")  # resize events come before __init__ ends
        if button is None:
            return
        button.adjustSize()
        area = self.mapFromScene(self.getPlotItem().vb.sceneBoundingRect()).boundingRect()
        button.move(max(area.right() - button.width() - 6, 0), max(area.top() + 6, 0))
        button.raise_()

    def fit_ticks(self) -> None:
        """Fewer β labels on a short axis (presentation mode's large type): never piled."""
        axis = self.getAxis("left")
        ticks = fitting_linear_ticks(0.0, 1.0, label_room(axis, self.getPlotItem().vb.height()),
                                     5)
        if ticks != getattr(self, "_y_ticks", None):
            self._y_ticks = ticks
            axis.setTicks(ticks)

    def _fit_legend(self) -> None:
        if self.__dict__.get("legend") is not None:
            fit(self)  # to the widget's width: never wider than the widget

    def _show(self, role: str, line) -> None:
        item = self._roles[role]
        if line is None:
            item.setVisible(False)
            self._curves.pop(role, None)
            self._labels.pop(role, None)
            return
        item.setData(line.alpha, line.beta)
        item.setVisible(True)
        self._curves[role] = (line.alpha, line.beta)
        self._labels[role] = line.label

    def set_result(self, result: TradeoffResult, trust_model: str = "central") -> None:
        self.result = result
        colour = trust_colour(trust_model)
        if colour != self._colour:
            self._colour = colour
            self._mech.setPen(pg.mkPen(colour, width=2.8))
            self._boxes.set_colour(colour)
        self.hint.hide()
        self._zero.setData(result.bound.alpha, np.zeros_like(result.bound.alpha))
        self._zero.setVisible(True)
        self._fill.setVisible(True)
        self._show("bound", result.bound)
        self._show("gdp", result.gdp)
        self._show("composed", result.composed)
        self._show("mechanism", result.mechanism)
        self.setToolTip(TRADEOFF_TOOLTIP + "\n\n" + "\n".join(result.notes))
        # Without an exact curve of its own, the release is what its guarantee allows.
        self._primary_role = "mechanism" if result.mechanism is not None else "bound"
        # Short entries (the whole sentence in their tooltips), wrapped where still too
        # wide: never cut.
        guarantee = _guarantee(result.epsilon, result.delta)
        legend = {"bound": (f"this release: bound at {guarantee}"
                            if self._primary_role == "bound"
                            else f"ruled out by {guarantee}")}
        # Only the (ε, δ) region known: named so, and the caption says it in a sentence.
        self._region_note = getattr(result, "region_note", None) or None
        self.caption.set_text(TRADEOFF_CAPTION + (f" {self._region_note}"
                                                  if self._region_note else ""))
        if result.mechanism is not None:
            legend["mechanism"] = (f"{REGION_LEGEND}: {guarantee}" if self._region_note else
                                   "this release: " + _short_label(result.mechanism.label))
        if result.composed is not None:
            legend["composed"] = "after " + _short_label(result.composed.label)
        if result.gdp is not None:
            legend["gdp"] = result.gdp.label
        a = result.attack
        if a is not None:
            best = frontier(a.alpha, a.beta)  # a box per point would cover the plot
            self._boxes.set_boxes(a.alpha_low[best], a.alpha_high[best], a.beta_low[best],
                                  a.beta_high[best])
            self._dots.setData(a.alpha, a.beta)
            self._attack = {"alpha": a.alpha, "beta": a.beta, "alpha_low": a.alpha_low,
                            "alpha_high": a.alpha_high, "beta_low": a.beta_low,
                            "beta_high": a.beta_high}
            legend["attack"] = f"{a.label} ({a.confidence:.0%} boxes)"
        else:
            self._attack = None
        self._apply_visibility()
        self._set_legend(legend)
        # The whole title where it fits; else without δ (the legend and the title's
        # tooltip say it), else cut: never wider than the plot.
        short = f"Attacker's trade-off at ε = {result.epsilon:.3g}"
        title = short + (f", δ = {_compact(result.delta)}" if result.delta else "")
        label = self.getPlotItem().titleLabel
        if hasattr(label, "short_forms"):
            shortest = f"Trade-off at ε = {result.epsilon:.3g}"
            label.short_forms = {title: [f for f in (short, shortest) if f != title]}
            label.set_tooltip_text(title)
        if label.text != title:
            retitle(self, title)
        self.updated.emit()


def _guarantee(epsilon: float, delta: float) -> str:
    """"ε = 20, δ = 1e-6" (δ left out when zero): the guarantee, in a legend's few words."""
    return f"ε = {epsilon:.3g}" + (f", δ = {_compact(delta)}" if delta else "")


def _compact(value: float) -> str:
    """δ as "1e-6" (not "1e-06"): shorter, and the same number."""
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _short_label(label: str) -> str:
    """A curve's label without its parentheses ("10 releases (ε-DP, optimal)" → "10
    releases"), a mechanism's name cut with "…" given whole; never cut (a long entry
    wraps), the full label in the entry's tooltip."""
    return re.sub(r"\s*\([^()]*\)", "", uncut_names(label)).strip() or label


def frontier(alpha, beta) -> np.ndarray:
    """Indices of the attack's best points: distinct (α, β) no other point beats in both.

    A dominated or repeated point adds no box worth drawing: the attacker does at least as
    well elsewhere, and with few trials many thresholds land on one point.

    Parameters
    ----------
    alpha, beta : array_like
        The points' type I and type II errors.

    Returns
    -------
    numpy.ndarray
        Indices into ``alpha`` (of the first of any repeated points), by α.
    """
    pts = np.column_stack([np.asarray(alpha, dtype=float), np.asarray(beta, dtype=float)])
    _, first = np.unique(pts, axis=0, return_index=True)
    first = np.sort(first)
    p = pts[first]
    le = np.all(p[None, :, :] <= p[:, None, :], axis=2)  # le[i, j]: j at least as good as i
    beaten = np.any(le & ~np.eye(len(p), dtype=bool), axis=1)
    keep = first[~beaten]
    return keep[np.argsort(pts[keep, 0], kind="stable")]


class _BoxesItem(QGraphicsPathItem):
    """Clopper–Pearson rectangles [α_lo, α_hi] × [β_lo, β_hi], one per attack point."""

    def __init__(self) -> None:
        super().__init__()
        self.set_colour(trust_colour("central"))

    def set_colour(self, colour: str) -> None:
        pen = pg.mkPen(colour, width=1.2)
        pen.setCosmetic(True)
        self.setPen(pen)
        brush = pg.mkBrush(colour)
        c = brush.color()
        c.setAlpha(40)
        brush.setColor(c)
        self.setBrush(brush)

    def set_boxes(self, a_lo, a_hi, b_lo, b_hi) -> None:
        path = QPainterPath()
        path.setFillRule(Qt.FillRule.WindingFill)  # overlaps shaded, not cut out
        for x0, x1, y0, y1 in zip(a_lo, a_hi, b_lo, b_hi, strict=True):
            path.addRect(QRectF(float(x0), float(y0), float(x1 - x0), float(y1 - y0)))
        self.setPath(path)
