"""How an exported plot is dressed: a caption saying what it shows, readable text, a whole
legend.

:func:`export_caption` finds what a plot shows: a caption its owner set
(:func:`set_export_caption`), else the analysis of its window's session (dataset, column,
statistic, trust model and mechanism, ε), else the randomized-response demo's survey, else
its title; the plot's plain-language caption (presentation mode's) goes first.

:func:`styled_for_export` dresses the plot for the length of one export and then puts
everything back: fonts enlarged so that tick labels are at least :data:`TICK_SHARE` of the
plot's width (a large plot on a large screen would otherwise export hair-thin text), the
legends drawn to the image's scale (pyqtgraph draws a legend at screen size whatever the
export's size: it ignores transformations) and enlarged with the rest (entries too wide
for the plot wrap onto more lines, never cut; a legend that cannot wrap only as far as
it still fits beside the plot), and the caption as a scene item under the plot.
"""

from __future__ import annotations

import contextlib
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFont, QFontInfo
from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem

__all__ = [
    "EXPORT_CAPTION_ATTR",
    "TICK_SHARE",
    "ExportDress",
    "export_caption",
    "session_facts",
    "set_export_caption",
    "styled_for_export",
]

#: The attribute a plot's owner sets (:func:`set_export_caption`) to caption its exports.
EXPORT_CAPTION_ATTR = "dpstudio_export_caption"
#: Smallest tick-label height in an export, as a share of the plot's width.
TICK_SHARE = 1 / 48
#: Most an export enlarges the on-screen fonts by.
MAX_ENLARGE = 2.5
_IGNORES = QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations


def set_export_caption(plot_widget: pg.PlotWidget, text: str) -> None:
    """Caption ``plot_widget``'s exports with ``text`` (what it shows: data, statistic,
    mechanism, ε) instead of the one read off its window."""
    setattr(plot_widget, EXPORT_CAPTION_ATTR, str(text))


def session_facts(session: Any) -> str:
    """What an analysis session's plots show, in one line.

    Parameters
    ----------
    session : dpstudio.ui.session.Session
        The window's session (dataset, column, query, trust model, mechanism, ε, δ).

    Returns
    -------
    str
        "Dataset survey.csv · column age · mean · central model, Laplace mechanism ·
        ε = 1", δ added where the mechanism takes one; "" without a dataset.
    """
    dataset = getattr(session, "dataset", None)
    if dataset is None:
        return ""
    name = getattr(dataset, "name", None) or getattr(getattr(dataset, "path", None), "name",
                                                      "")
    query = str(getattr(session, "query", "") or "")
    if query == "quantile":
        q = (getattr(session, "query_params", {}) or {}).get("quantile")
        query += f" (q = {q:g})" if isinstance(q, int | float) else ""
    info = getattr(session, "info", None)  # a property of the session (a MechanismInfo)
    info = info() if callable(info) else info
    mechanism = str(getattr(info, "label", "") or getattr(session, "mechanism", ""))
    trust = str(getattr(session, "trust_model", "") or "")
    epsilon = float(getattr(session, "epsilon", float("nan")))
    text = (f"Dataset {name} · column {getattr(session, 'column', None) or '—'} · {query} · "
            f"{trust} model, {mechanism} mechanism · ε = {epsilon:g}")
    if getattr(session, "needs_delta", False):
        text += f", δ = {float(getattr(session, 'delta', 0.0)):g}"
    return text


def _survey_facts(window: Any) -> str:
    """The randomized-response demo's plot: a simulated survey, never a dataset."""
    survey = getattr(window, "survey", None)
    if survey is None or not hasattr(survey, "epsilon"):
        return ""
    question = getattr(getattr(window, "question", None), "text", lambda: "")()
    n = int(getattr(survey, "n", 0) or 0)
    return (f"Simulated survey ({n:,} answers, no real data) · question “{question}” · "
            f"share answering yes · randomized response mechanism · "
            f"ε = {float(survey.epsilon):.3g}")


def _plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", html.unescape(text or "")).strip()


def export_caption(plot_widget: pg.PlotWidget) -> str:
    """The caption an export of ``plot_widget`` carries under the plot.

    Parameters
    ----------
    plot_widget : pyqtgraph.PlotWidget

    Returns
    -------
    str
        The plot's plain-language caption (if it has one), then on a new line what it
        shows: its owner's caption, else its window's session, else the demo's survey,
        else its title.
    """
    from dpstudio.ui.presentation import caption_for

    window = plot_widget.window()
    facts = (getattr(plot_widget, EXPORT_CAPTION_ATTR, "")
             or session_facts(getattr(window, "session", None))
             or _survey_facts(window)
             or _plain(getattr(plot_widget.getPlotItem().titleLabel, "text", "")))
    # The plain-language caption shown under the plot (a label over the widget, which an
    # export of the scene would miss), else the default for its title.
    from PySide6.QtWidgets import QLabel

    shown = [label.text() for name in ("presentation_caption", "plot_caption")
             for label in plot_widget.findChildren(QLabel, name)
             if label.isVisibleTo(plot_widget) and label.text()]
    plain = _plain(shown[0]) if shown else caption_for(plot_widget)
    return "\n".join(t for t in (plain, facts) if t)


@dataclass
class ExportDress:
    """What :func:`styled_for_export` added: the caption item and the rectangle to export
    (the plot and the caption under it, in scene coordinates)."""

    caption: QGraphicsTextItem | None
    rect: QRectF
    factor: float


def _pixels(font: QFont | None) -> float:
    return float(QFontInfo(font if font is not None else QFont()).pixelSize())


def _scaled(font: QFont | None, factor: float) -> QFont:
    out = QFont(font if font is not None else QFont())
    out.setPixelSize(max(1, round(_pixels(font) * factor)))
    return out


def _css_pixels(size: Any, fallback: float) -> float:
    """A pyqtgraph size ("11pt", "14px") in pixels."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*(pt|px)\s*", str(size or ""))
    if not m:
        return fallback
    value = float(m.group(1))
    return value if m.group(2) == "px" else value * 96.0 / 72.0


@contextlib.contextmanager
def styled_for_export(plot_widget: pg.PlotWidget, caption: str) -> Iterator[ExportDress]:
    """Dress ``plot_widget`` for one export; everything is put back on leaving.

    Parameters
    ----------
    plot_widget : pyqtgraph.PlotWidget
    caption : str
        Drawn under the plot ("" for none); lines separated by newlines.

    Yields
    ------
    ExportDress
        The caption item and the scene rectangle to export.
    """
    item = plot_widget.getPlotItem()
    width = item.sceneBoundingRect().width()
    axes = [item.getAxis(n) for n in ("left", "bottom", "right", "top")]
    axes = [a for a in axes if a.isVisible()]
    tick_px = max((_pixels(a.style.get("tickFont")) for a in axes), default=_pixels(None))
    factor = min(MAX_ENLARGE, max(1.0, TICK_SHARE * width / tick_px))
    undo: list[Any] = []
    caption_item: QGraphicsTextItem | None = None
    geometry = QRectF(item.geometry())
    put_back = _legends_as_now(item)
    try:
        if factor > 1.02:
            _enlarge(item, axes, factor, undo)
        for legend in [i for i in item.scene().items() if isinstance(i, pg.LegendItem)
                       and item.isAncestorOf(i)]:
            _whole_legend(legend, item, undo)
        _refit(plot_widget)  # the larger legend in fewer columns, or wrapped
        _relayout(item)
        rect = _drawn_rect(item)
        if caption:
            caption_item = _caption_item(item, caption, tick_px * factor, rect)
            rect = rect.united(caption_item.sceneBoundingRect().adjusted(0, 0, 0, 0.5 *
                                                                           tick_px * factor))
        yield ExportDress(caption_item, rect, factor)
    finally:
        if caption_item is not None:
            caption_item.setParentItem(None)
            if caption_item.scene() is not None:
                caption_item.scene().removeItem(caption_item)
        for step in reversed(undo):
            step()
        put_back()  # the legends exactly as drawn before (columns, wrapping, sizes)
        _relayout(item)
        item.setGeometry(geometry)  # as its view sized it, should the layout have grown


def _legends_as_now(item: Any):
    """A function that puts the plot's legends back as they are now: their columns and
    each entry's text size and wrapping (a refit could settle elsewhere: a wrapped entry
    unwraps only by a margin)."""
    saved = []
    for legend in (i for i in item.scene().items() if isinstance(i, pg.LegendItem)
                   and item.isAncestorOf(i)):
        entries = [(label, label.opts.get("size"), getattr(label, "room", None))
                   for _sample, label in legend.items]
        saved.append((legend, legend.columnCount, entries))

    def put_back() -> None:
        for legend, columns, entries in saved:
            for label, size, room in entries:
                if size is not None and label.opts.get("size") != size:
                    label.setText(label.text, size=size)
                if hasattr(label, "set_room"):
                    label.set_room(room)
            if legend.columnCount != columns:
                legend.setColumnCount(columns)
            legend.updateSize()

    return put_back


def _refit(plot_widget: pg.PlotWidget) -> None:
    """Lay the legend out again for its text's size: columns, and wrapped entries."""
    from dpstudio.ui.plot_fit import fit

    fit(plot_widget)


def _relayout(item: Any) -> None:
    """Lay the plot out again now (a legend resizing itself moves to its parent's corner
    until its layout places it again)."""
    for legend in (i for i in item.scene().items() if isinstance(i, pg.LegendItem)
                   and item.isAncestorOf(i)):
        legend.updateGeometry()
    item.layout.invalidate()
    item.layout.activate()


def _drawn_rect(item: Any) -> QRectF:
    """The plot's scene rectangle down to its lowest drawn part: the room its layout keeps
    for an on-screen caption label (not part of the scene) is left out."""
    rect = QRectF(item.sceneBoundingRect())
    layout = item.layout
    bottoms = []
    for i in range(layout.count()):
        part = layout.itemAt(i)
        graphic = part.graphicsItem() if part is not None else None
        if graphic is not None and graphic.isVisible() and part.geometry().height() > 0:
            bottoms.append(item.mapRectToScene(part.geometry()).bottom())
    if bottoms:
        rect.setBottom(min(rect.bottom(), max(bottoms) + 4))
    return rect


def _enlarge(item: Any, axes: list[Any], factor: float, undo: list[Any]) -> None:
    """Every text of the plot ``factor`` times larger (title, ticks, axis labels, legend,
    text in the plot)."""
    title = item.titleLabel
    if title.text:
        text, opts = title.text, dict(title.opts)
        size = _css_pixels(opts.get("size"), _pixels(None) * 1.2) * factor
        item.setTitle(text, **{**opts, "size": f"{size:.0f}px"})
        undo.append(lambda: item.setTitle(text, **opts))
    for axis in axes:
        tick_font, label_style = axis.style.get("tickFont"), dict(axis.labelStyle)
        # The room an axis keeps for its tick labels grows with them and shrinks only by
        # steps of 10 px: put back the very room it had.
        room = (getattr(axis, "textWidth", None), getattr(axis, "textHeight", None))
        axis.setStyle(tickFont=_scaled(tick_font, factor))
        if room[0] is not None and room[1] is not None:
            # Room for the larger tick labels now: the axis would only find out while the
            # export paints it, too late for the layout (labels would overlap the ticks).
            if axis.orientation in ("left", "right"):
                axis.textWidth = room[0] * factor
                axis._updateWidth()
            else:
                axis.textHeight = room[1] * factor
                axis._updateHeight()
        if axis.labelText or axis.labelUnits:
            size = _css_pixels(label_style.get("font-size"), _pixels(None)) * factor
            axis.labelStyle = {**label_style, "font-size": f"{size:.0f}px"}
            axis.setLabel(axis.labelText, axis.labelUnits or None)

        def put_back(axis=axis, tick_font=tick_font, label_style=label_style,
                     room=room) -> None:
            axis.setStyle(tickFont=tick_font)
            axis.labelStyle = label_style
            if axis.labelText or axis.labelUnits:
                axis.setLabel(axis.labelText, axis.labelUnits or None)
            if room[0] is not None and room[1] is not None:
                axis.textWidth, axis.textHeight = room
                axis._updateWidth() if axis.orientation in ("left", "right") else \
                    axis._updateHeight()

        undo.append(put_back)
    for legend in (i for i in item.scene().items() if isinstance(i, pg.LegendItem)
                   and item.isAncestorOf(i)):
        size = legend.opts.get("labelTextSize")
        if legend.items and all(getattr(label, "wraps", False) for _s, label in legend.items):
            fits = factor  # its entries wrap to the plot's width: as large as the rest
        else:
            # No larger than still fits beside the plot: a wider legend would widen it.
            box = legend.sceneBoundingRect()
            room = item.sceneBoundingRect().right() - box.left()
            fits = 0.97 * room / box.width() if box.width() > 0 else factor
        px = _css_pixels(size, _pixels(None) * 0.9) * max(1.0, min(factor, fits))
        _legend_size(legend, f"{px:.0f}px")
        undo.append(lambda legend=legend, size=size: _legend_size(legend, size))
    for text_item in (i for i in item.scene().items() if isinstance(i, pg.TextItem)
                      and item.isAncestorOf(i)):
        font = text_item.textItem.font()
        text_item.setFont(_scaled(font, factor))
        undo.append(lambda t=text_item, f=font: t.setFont(f))


def _legend_size(legend: Any, size: str | None) -> None:
    legend.opts["labelTextSize"] = size
    for _sample, label in legend.items:
        opts = {k: v for k, v in label.opts.items() if k in ("color", "bold", "italic")}
        if size:
            opts["size"] = size
        else:
            label.opts.pop("size", None)
        label.setText(label.text, **opts)
    legend.updateSize()


def _whole_legend(legend: Any, item: Any, undo: list[Any]) -> None:
    """Draw the legend to the export's scale (pyqtgraph draws it at screen size)."""
    if legend.flags() & _IGNORES:
        legend.setFlag(_IGNORES, False)
        undo.append(lambda: legend.setFlag(_IGNORES, True))


def _caption_item(item: Any, caption: str, pixels: float, plot_rect: QRectF
                  ) -> QGraphicsTextItem:
    """The caption as a scene item just under the plot, wrapped to its width."""
    from dpstudio.ui.plots import foreground

    margin = 0.6 * pixels
    text = QGraphicsTextItem(item)
    text.setObjectName("export_caption")
    font = QFont()
    font.setPixelSize(max(9, round(pixels * 0.95)))
    text.setFont(font)
    text.setDefaultTextColor(QColor(foreground()))
    lines = caption.split("\n")
    body = "<br>".join(f"<i>{html.escape(line)}</i>" if i == 0 and len(lines) > 1
                       else html.escape(line) for i, line in enumerate(lines))
    text.setHtml(body)
    text.setTextWidth(max(50.0, plot_rect.width() - 2 * margin))
    text.setPos(item.mapFromScene(plot_rect.left() + margin, plot_rect.bottom()))
    text.setZValue(1000)
    return text
