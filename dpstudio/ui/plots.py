"""Shared plot helpers: a legible base plot, log-axis ticks, the empty-state hint.

The analysis plots themselves live in :mod:`dpstudio.ui.utility_plot`,
:mod:`dpstudio.ui.tradeoff_plot` and :mod:`dpstudio.ui.result_panel`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

from dpstudio.engine.entry import EPSILON
from dpstudio.ui import style
from dpstudio.ui.plot_fit import FittingLegend, install_fitting
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
    install_fitting(widget)  # a title and legend cut to the widget, never past it
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


def retitle(widget: pg.PlotWidget, title: str) -> None:
    """Give ``widget`` the title ``title`` in the size its title has now: a plot redrawn
    while presenting (ε moved on the presentation bar) keeps presentation mode's larger
    title, and the normal one otherwise."""
    label = widget.getPlotItem().titleLabel
    size = label.opts.get("size") or TITLE_SIZE
    widget.setTitle(title, color=foreground(), size=size)


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


def decade_ticks(lo: float, hi: float, most: int | None = None
                 ) -> list[list[tuple[float, str]]]:
    """Ticks for a log10 axis spanning [lo, hi] (values, not logs): labelled decades and
    unlabelled 2…9 minors; with less than two decades, 2 and 5 are labelled too.

    Parameters
    ----------
    lo, hi : float
        The axis's range, as values (positive).
    most : int, optional
        The most labels the axis has room for: beyond it every second (third, …) decade
        is labelled, the others become unlabelled ticks.

    Returns
    -------
    list
        pyqtgraph's ``[major, minor]`` tick lists of (log10 value, label).
    """
    lo, hi = float(lo), float(hi)
    major: list[tuple[float, str]] = []
    minor: list[tuple[float, str]] = []
    few = np.log10(hi / lo) < 2.2
    if most is not None and few:  # 2 and 5 labelled only where there is room for them
        labelled = sum(1 for e in range(int(np.floor(np.log10(lo))),
                                        int(np.ceil(np.log10(hi))) + 1)
                       for k in (1, 2, 5) if lo <= k * 10.0**e <= hi)
        few = labelled <= most
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
    if most is not None and len(major) > max(most, 1):
        # Every stride-th decade from the lowest: the axis's ends stay labelled.
        stride = int(np.ceil((len(major) - 1) / max(most - 1, 1)))
        kept = major[::stride]
        minor = sorted(minor + [(x, "") for x, t in major if (x, t) not in kept])
        major = kept
    return [major, minor]


def label_line(axis: pg.AxisItem) -> float:
    """The height in pixels of one tick label of ``axis`` (a line of its tick font)."""
    return QFontMetricsF(axis.style.get("tickFont") or QFont()).height()


def label_room(axis: pg.AxisItem, length: float, gap: float = 1.5) -> int:
    """How many tick labels ``length`` pixels of a vertical ``axis`` hold, each a line of
    its tick font and ``gap`` lines apart centre to centre (at least two)."""
    return max(2, int(length // (label_line(axis) * gap)) + 1)


def fitting_linear_ticks(lo: float, hi: float, most: int, target: int = 6
                         ) -> list[list[tuple[float, str]]]:
    """:func:`linear_ticks` with at most ``most`` labels (fewer, wider-spaced ticks)."""
    for aim in range(max(target, 1), 0, -1):
        ticks = linear_ticks(lo, hi, aim)
        if len(ticks[0]) <= most:
            return ticks
    return linear_ticks(lo, hi, 1)


def tick_labels(values, step: float) -> list[str]:
    """Labels for ticks ``step`` apart, with just enough digits that neighbours differ.

    Parameters
    ----------
    values : sequence of float
        Tick positions.
    step : float
        Their spacing (positive).

    Returns
    -------
    list of str
        "29.0902", "29.0904", … rather than "29.09" repeated: the decimals follow the step,
        not a fixed number of significant digits.
    """
    vals = [float(v) for v in values]
    if not vals:
        return []
    # Decimals the step needs (2.5 needs one more than 2 or 5), at least none.
    decimals = max(0, -int(np.floor(np.log10(step) + 1e-9)))
    if not np.isclose(step / 10.0 ** np.floor(np.log10(step)), round(step / 10.0 **
                                                                        np.floor(np.log10(step)))):
        decimals += 1
    big = max(abs(v) for v in vals)
    if big >= 1e9 or (big and big < 1e-4):  # scientific, digits to the step
        digits = max(1, int(np.floor(np.log10(big))) - int(np.floor(np.log10(step))) + 1)
        labels = [_sci(v, digits) for v in vals]
    else:  # thousands separated from 10,000 up
        comma = "," if big >= 1e4 else ""
        labels = [f"{v:{comma}.{decimals}f}" for v in vals]
    # Trailing zeros go ("1.0" → "1": distinct numbers stay distinct); "-0" is zero.
    labels = [_trim(label) for label in labels]
    extra = 0
    while len(set(labels)) < len(labels) and extra < 6:
        extra += 1
        labels = [_trim(f"{v:.{decimals + extra}f}") for v in vals]
    return labels


def _trim(label: str) -> str:
    if "." in label and "e" not in label:
        label = label.rstrip("0").rstrip(".")
    return "0" if label in ("-0", "") else label


def _sci(v: float, digits: int) -> str:
    """``v`` as "2.5e6" (no "+", no leading zeros in the exponent); zero as "0"."""
    if v == 0:
        return "0"
    mantissa, exponent = f"{v:.{digits - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def linear_ticks(lo: float, hi: float, target: int = 6) -> list[list[tuple[float, str]]]:
    """Nice ticks for a linear axis, each label distinct (:func:`tick_labels`)."""
    span = max(hi - lo, 1e-300)
    raw = span / target
    mag = 10 ** np.floor(np.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = np.ceil(lo / step) * step
    # Ticks as multiples of the step: no accumulated float error (21.305999999999997).
    values = [float(k * step) for k in range(int(round(start / step)),
                                             int(np.floor(hi / step + 0.5)) + 1)]
    values = [v for v in values if lo - step * 1e-9 <= v <= hi + step * 1e-9]
    return [list(zip(values, tick_labels(values, step), strict=True)), []]


def bottom_legend(widget: pg.PlotWidget, columns: int = 2) -> pg.LegendItem:
    """A legend under the x axis (inside the plot widget, so exports include it), laid out
    in ``columns`` columns, that never hides data."""
    legend = FittingLegend(offset=None, colCount=columns, labelTextColor=foreground(),
                           labelTextSize="8pt", frame=False, horSpacing=14, verSpacing=-4)
    legend.most_columns = max(columns, 2)
    legend.normal_size = "8pt"  # presentation mode and exports enlarge it, never below
    item = widget.getPlotItem()
    item.layout.addItem(legend, 4, 1)
    item.legend = legend
    return legend


#: Queries whose error is a number of rows (people), whatever the column.
_COUNT_QUERIES = ("count", "histogram", "heavy_hitters")


def error_axis_label(metric: str, query: str | None, column: str | None,
                     unit: str | None = None) -> str:
    """The privacy–utility plot's y-axis label: the error in the column's units.

    Parameters
    ----------
    metric : str
        ``"rmse"``, ``"relative"`` or ``"tv"``.
    query : str or None
        The statistic released.
    column : str or None
        The column's name (its units when it declares none).
    unit : str or None
        The column's unit ("years"), where known.

    Returns
    -------
    str
        "± years" or "± age" for an RMSE (squared for a variance, "± people" for counts);
        the measure's own name for a relative or total-variation error.
    """
    if metric == "relative":
        return "relative error"
    if metric == "tv":
        return "total-variation distance"
    if query in _COUNT_QUERIES:
        return "± people"
    what = (unit or column or "").strip()
    if not what:
        return "± error"
    return f"± {what}²" if query == "variance" else f"± {what}"
