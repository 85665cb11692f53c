"""Shared plot helpers: a legible base plot, log-axis ticks, the empty-state hint.

The analysis plots themselves live in :mod:`dpstudio.ui.utility_plot`,
:mod:`dpstudio.ui.tradeoff_plot` and :mod:`dpstudio.ui.result_panel`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont

from dpstudio.engine.entry import EPSILON
from dpstudio.ui import style
from dpstudio.ui.style import GRID_ALPHA, MUTED, TEXT, configure_pyqtgraph

HINT = "Choose a column and a mechanism"
EPSILON_RANGE = EPSILON.shown_range  # the slider's range, from the one declaration
AXIS_FONT_PT = 10
TITLE_SIZE = "11pt"

UTILITY_TOOLTIP = (
    "Expected error of the released statistic at each privacy budget ε: "
    "smaller ε is more private, lower error is more useful."
)
TRADEOFF_TOOLTIP = (
    "Type I error: the chance an attacker wrongly claims a person is in the data; "
    "Type II error: the chance they miss someone who is."
)


# Short forms of long axis labels, for when the full label cannot fit (presentation mode).
SHORT_AXIS_LABELS = {
    "Type I error α (false alarm)": "α (false alarm)",
    "Type II error β (missed detection)": "β (missed detection)",
}


def foreground() -> str:
    """Text colour of plots in the current palette (light or dark)."""
    current = getattr(style, "current_palette", None)
    return current().plot_foreground if current is not None else TEXT


def muted() -> str:
    current = getattr(style, "current_palette", None)
    return current().plot_muted if current is not None else MUTED


def style_plot(widget: pg.PlotWidget, title: str, x_label: str, y_label: str,
               tooltip: str) -> None:
    """Titles, labels, grid and fonts legible at 1400×900; no mouse zoom (a presenter view)."""
    configure_pyqtgraph()
    widget.setToolTip(tooltip)
    text = foreground()
    widget.setTitle(title, color=text, size=TITLE_SIZE)
    item = widget.getPlotItem()
    font = QFont()
    font.setPointSize(AXIS_FONT_PT - 1)
    for side in ("bottom", "left"):
        axis = item.getAxis(side)
        axis.setTickFont(font)
        axis.setTextPen(pg.mkPen(text))
    item.setLabel("bottom", x_label, **{"font-size": f"{AXIS_FONT_PT}pt", "color": text})
    item.setLabel("left", y_label, **{"font-size": f"{AXIS_FONT_PT}pt", "color": text})
    item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
    item.hideButtons()
    item.setMenuEnabled(False)
    widget.setMouseEnabled(x=False, y=False)
    widget.setMinimumSize(260, 220)


def add_hint(widget: pg.PlotWidget, x: float, y: float, text: str = HINT) -> pg.TextItem:
    item = pg.TextItem(text, color=muted(), anchor=(0.5, 0.5),
                       fill=pg.mkBrush(255, 255, 255, 235))
    item.setPos(x, y)
    item.textItem.setTextWidth(240)
    item.setZValue(100)
    widget.addItem(item, ignoreBounds=True)
    return item


def _number(v: float) -> str:
    if v >= 1e4 or v < 1e-3:
        mantissa, exponent = f"{v:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return f"{v:g}"


def decade_ticks(lo: float, hi: float) -> list[list[tuple[float, str]]]:
    """Ticks for a log10 axis spanning [lo, hi] (values, not logs): labelled decades and
    unlabelled 2…9 minors; with less than two decades, 2 and 5 are labelled too."""
    lo, hi = float(lo), float(hi)
    major: list[tuple[float, str]] = []
    minor: list[tuple[float, str]] = []
    few = np.log10(hi / lo) < 2.2
    for exponent in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1):
        decade = 10.0**exponent
        if lo <= decade <= hi:
            major.append((float(exponent), _number(decade)))
        for k in range(2, 10):
            v = k * decade
            if lo <= v <= hi:
                if few and k in (2, 5):
                    major.append((float(np.log10(v)), _number(v)))
                else:
                    minor.append((float(np.log10(v)), ""))
    return [major, minor]


def linear_ticks(lo: float, hi: float, target: int = 6) -> list[list[tuple[float, str]]]:
    """Nice ticks for a linear axis, labelled with up to 4 significant digits."""
    span = max(hi - lo, 1e-300)
    raw = span / target
    mag = 10 ** np.floor(np.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = np.ceil(lo / step) * step
    values = np.arange(start, hi + step * 0.5, step)
    return [[(float(v), f"{v:.4g}") for v in values], []]


def bottom_legend(widget: pg.PlotWidget, columns: int = 2) -> pg.LegendItem:
    """A legend under the x axis (inside the plot widget, so exports include it), laid out
    in ``columns`` columns, that never hides data."""
    legend = pg.LegendItem(offset=None, colCount=columns, labelTextColor=foreground(),
                           labelTextSize="8pt", frame=False, horSpacing=14, verSpacing=-4)
    item = widget.getPlotItem()
    item.layout.addItem(legend, 4, 1)
    item.legend = legend
    return legend
