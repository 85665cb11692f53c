"""The two result plots, empty until a column and a mechanism are chosen."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from dpstudio.ui.style import GRID_ALPHA, MUTED, REFERENCE_PEN, TEXT, configure_pyqtgraph

HINT = "Choose a column and a mechanism"
EPSILON_RANGE = (0.01, 10.0)

UTILITY_TOOLTIP = (
    "Expected error of the released statistic at each privacy budget ε: "
    "smaller ε is more private, lower error is more useful."
)
TRADEOFF_TOOLTIP = (
    "Type I error: the chance an attacker wrongly claims a person is in the data; "
    "Type II error: the chance they miss someone who is."
)


def _base_plot(title: str, x_label: str, y_label: str, tooltip: str) -> pg.PlotWidget:
    configure_pyqtgraph()
    widget = pg.PlotWidget()
    widget.setToolTip(tooltip)
    widget.setTitle(title, color=TEXT, size="11pt")
    item = widget.getPlotItem()
    item.setLabel("bottom", x_label)
    item.setLabel("left", y_label)
    item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
    item.hideButtons()
    item.setMenuEnabled(False)
    widget.setMouseEnabled(x=False, y=False)
    widget.setMinimumSize(220, 200)
    return widget


def _hint(widget: pg.PlotWidget, x: float, y: float) -> pg.TextItem:
    text = pg.TextItem(HINT, color=MUTED, anchor=(0.5, 0.5), fill=pg.mkBrush(255, 255, 255, 235))
    text.setPos(x, y)
    widget.addItem(text)
    return text


def epsilon_ticks(lo: float, hi: float) -> list[list[tuple[float, str]]]:
    """Log-axis ticks (positions in log10 units): labelled decades, unlabelled 2…9 minors."""
    major, minor = [], []
    for exponent in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1):
        decade = 10.0**exponent
        if lo <= decade <= hi:
            major.append((float(exponent), f"{decade:g}"))
        for k in range(2, 10):
            if lo <= k * decade <= hi:
                minor.append((float(np.log10(k * decade)), ""))
    return [major, minor]


def make_utility_plot() -> pg.PlotWidget:
    """Error against ε on a log axis."""
    widget = _base_plot("Privacy–utility", "ε (log scale)", "error", UTILITY_TOOLTIP)
    widget.setLogMode(x=True, y=False)
    lo, hi = np.log10(EPSILON_RANGE)
    widget.getPlotItem().getAxis("bottom").setTicks(epsilon_ticks(*EPSILON_RANGE))
    # Extra room on the left: with a grid, pyqtgraph hides labels that cross the axis end.
    widget.setXRange(lo - 0.2, hi + 0.2, padding=0)
    widget.setYRange(0.0, 1.0, padding=0.04)
    widget.hint = _hint(widget, (lo + hi) / 2, 0.5)
    return widget


def make_tradeoff_plot() -> pg.PlotWidget:
    """Type II against type I error on the unit square, with random guessing as reference."""
    widget = _base_plot(
        "Trade-off",
        "Type I error α (false alarm)",
        "Type II error β (missed detection)",
        TRADEOFF_TOOLTIP,
    )
    widget.setXRange(0.0, 1.0, padding=0.04)
    widget.setYRange(0.0, 1.0, padding=0.04)
    # The legend sits in the empty corner above the diagonal; future curves join it.
    widget.addLegend(
        offset=(-6, 6),
        labelTextColor=MUTED,
        labelTextSize="9pt",
        brush=pg.mkBrush(255, 255, 255, 230),
        pen=pg.mkPen("#d0d7de"),
    )
    diagonal = pg.PlotDataItem(
        [0.0, 1.0], [1.0, 0.0], pen=REFERENCE_PEN, name="random guessing (β = 1 − α)"
    )
    diagonal.setToolTip("β = 1 − α: an attacker who guesses at random")
    widget.addItem(diagonal)
    widget.diagonal = diagonal
    widget.hint = _hint(widget, 0.5, 0.5)
    return widget


class PlotPanel(QWidget):
    """Privacy–utility above, trade-off below."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.utility_plot = make_utility_plot()
        self.tradeoff_plot = make_tradeoff_plot()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(6)
        layout.addWidget(self.utility_plot, 1)
        layout.addWidget(self.tradeoff_plot, 1)
