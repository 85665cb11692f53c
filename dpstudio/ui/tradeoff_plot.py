"""Hypothesis-testing trade-off plot: what an attacker can tell at the current ε.

On the unit square of type I error α (false alarm) and type II error β (missed
detection): the region ruled out by the (ε, δ) guarantee (shaded), the release's exact
curve, the Gaussian-DP curve (dashed), the curve after k releases (dotted), simulated
likelihood-ratio attacks with their Clopper–Pearson boxes, and random guessing.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QGraphicsPathItem

from dpstudio.analysis.curves import TradeoffResult
from dpstudio.ui.plots import (
    HINT,
    TRADEOFF_TOOLTIP,
    add_hint,
    bottom_legend,
    foreground,
    linear_ticks,
    style_plot,
)
from dpstudio.ui.style import REFERENCE_PEN
from dpstudio.ui.texts import GLOSSARY
from dpstudio.ui.utility_plot import trust_colour

__all__ = ["TradeoffPlot"]

BOUND_BRUSH = (214, 39, 40, 45)
BOUND_PEN = "#c2410c"
GDP_COLOUR = "#3f3f46"
COMPOSED_COLOUR = "#7c3aed"
ATTACK_COLOUR = "#111827"


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
                                        name="random guessing (β = 1 − α)")
        self.diagonal.setToolTip("β = 1 − α: an attacker who guesses at random")
        self.addItem(self.diagonal)
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
        self._legend_roles: tuple[str, ...] = ()

    def curves(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Plotted curves by role: bound, mechanism, gdp, composed (those present)."""
        return dict(self._curves)

    def labels(self) -> dict[str, str]:
        return dict(self._labels)

    def attack(self) -> dict[str, np.ndarray] | None:
        return None if self._attack is None else dict(self._attack)

    def clear_data(self, message: str = HINT) -> None:
        self.result = None
        self._curves.clear()
        self._labels.clear()
        self._attack = None
        for item in (self._zero, self._fill, *self._roles.values(), self._boxes):
            item.setVisible(False)
        self._set_legend({})
        self.setTitle("Trade-off", color=foreground(), size="11pt")
        self.hint.textItem.setPlainText(message or HINT)
        self.hint.show()
        self.updated.emit()

    def _set_legend(self, labels: dict[str, str]) -> None:
        """Legend entries for the roles shown: rebuilt only when the set of roles changes."""
        roles = tuple(labels)
        if roles != self._legend_roles:
            self.legend.clear()
            self.legend.addItem(self.diagonal, self.diagonal.name())
            for role in roles:
                self.legend.addItem(self._roles[role], labels[role])
            self._legend_roles = roles
            return
        for role in roles:
            label = self.legend.getLabel(self._roles[role])
            if label is not None and label.text != labels[role]:
                label.setText(labels[role])

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
        legend = {"bound": f"ruled out by {result.bound.label}"}
        for role in ("gdp", "composed", "mechanism"):
            if role in self._labels:
                legend[role] = self._labels[role]
        a = result.attack
        if a is not None:
            self._boxes.set_boxes(a.alpha_low, a.alpha_high, a.beta_low, a.beta_high)
            self._dots.setData(a.alpha, a.beta)
            self._attack = {"alpha": a.alpha, "beta": a.beta, "alpha_low": a.alpha_low,
                            "alpha_high": a.alpha_high, "beta_low": a.beta_low,
                            "beta_high": a.beta_high}
            legend["attack"] = f"{a.label} ({a.confidence:.0%} boxes)"
        else:
            self._attack = None
        self._boxes.setVisible(a is not None)
        self._dots.setVisible(a is not None)
        self._set_legend(legend)
        delta = f", δ = {result.delta:.0e}" if result.delta else ""
        title = f"Attacker's trade-off at ε = {result.epsilon:.3g}{delta}"
        if self.getPlotItem().titleLabel.text != title:
            self.setTitle(title, color=foreground(), size="11pt")
        self.updated.emit()


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
        for x0, x1, y0, y1 in zip(a_lo, a_hi, b_lo, b_hi, strict=True):
            path.addRect(QRectF(float(x0), float(y0), float(x1 - x0), float(y1 - y0)))
        self.setPath(path)
