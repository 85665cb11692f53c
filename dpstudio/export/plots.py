"""The report's figures, drawn with QPainter into QImages (no plotting library).

Four figures: the adversary's trade-off curve (the privacy guarantee), the error the
release would have at other privacy levels, the released values with their error bars,
and the dataset's budget history. Each function takes plain numbers — nothing here sees
raw data — and returns an RGB image on a white background.

Every figure is laid out for the size it is drawn at: its text is a fixed share of the
image's width (:data:`TEXT_SHARE`), so it stays readable when the page shrinks the image;
its legend sits under the plot, wrapped to the width, never cut; and its caption (what
was released: dataset, column, statistic, mechanism, ε) is drawn under the legend, so a
figure copied out of the report still says what it shows. The title, caption and legend
are also stored in the PNG's text chunks (``Title``, ``Description``, ``Legend``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
)

__all__ = [
    "TEXT_SHARE",
    "LegendEntry",
    "budget_image",
    "error_bar_image",
    "legend_layout",
    "nice_ticks",
    "tick_texts",
    "tradeoff_image",
    "utility_image",
]

BLUE = QColor("#1f5fa8")
ORANGE = QColor("#d9661f")
GREEN = QColor("#2e8b57")
GREY = QColor("#8a8a8a")
RED = QColor("#b22222")
LIGHT = QColor("#e8e8e8")
INK = QColor("#222222")
MUTED = QColor("#555555")

#: Body text height as a share of the image width. The report shows a 760-pixel figure
#: about 560 pixels wide: 0.025 × 760 = 19 px drawn, about 14 px on the page.
TEXT_SHARE = 0.025
#: Labels of category ticks longer than this are shortened (the value table has them all).
TICK_CHARS = 28


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    ticks, t = [], start
    while t <= hi + step * 1e-9:
        ticks.append(0.0 if abs(t) < step * 1e-9 else t)
        t += step
    return ticks


def _fmt(v: float, digits: int = 4) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        return f"{v:.{max(digits - 3, 1)}e}"
    return f"{v:.{digits}g}"


def tick_texts(ticks: Sequence[float]) -> list[str]:
    """Tick labels with just enough significant digits that no two read the same.

    Parameters
    ----------
    ticks : sequence of float
        Distinct tick values, increasing.

    Returns
    -------
    list of str
        One label per tick ("29.09", "29.1" would otherwise repeat for close ticks).
    """
    for digits in range(4, 16):
        texts = [_fmt(t, digits) for t in ticks]
        if len(set(texts)) == len(texts):
            return texts
    return [repr(float(t)) for t in ticks]


def _font(pixels: float, bold: bool = False, italic: bool = False) -> QFont:
    font = QFont()
    font.setPixelSize(max(9, round(pixels)))
    font.setBold(bold)
    font.setItalic(italic)
    return font


@dataclass(frozen=True)
class LegendEntry:
    """One legend entry: its text, colour and line style (``marker``: a dot, no line)."""

    text: str
    color: QColor
    dashed: bool = False
    marker: bool = False


def legend_layout(entries: Sequence[LegendEntry], font: QFont, width: float
                  ) -> tuple[list[tuple[LegendEntry, QRectF, QRectF]], float]:
    """Where each legend entry goes in a band ``width`` wide: two columns when every
    entry fits half the width on one line, else one column; long texts wrap, never cut.

    Parameters
    ----------
    entries : sequence of LegendEntry
    font : QFont
        The legend's font.
    width : float
        The band's width in pixels.

    Returns
    -------
    placed : list of (LegendEntry, swatch rect, text rect)
        Rectangles relative to the band's top-left corner; each text rect is tall and
        wide enough for its whole (wrapped) text.
    height : float
        The band's height.
    """
    fm = QFontMetricsF(font)
    swatch, gap, row_gap = 2.2 * fm.height(), 0.5 * fm.height(), 0.35 * fm.height()
    half = (width - 2 * gap) / 2
    widest = max((fm.horizontalAdvance(e.text) for e in entries), default=0.0)
    columns = 2 if len(entries) > 1 and swatch + gap + widest <= half - gap else 1
    col_width = half if columns == 2 else width
    text_width = max(col_width - swatch - gap, fm.averageCharWidth() * 8)
    flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
                | Qt.TextFlag.TextWordWrap)
    placed, y, row_height = [], 0.0, 0.0
    for i, entry in enumerate(entries):
        col = i % columns
        if col == 0 and i:
            y += row_height + row_gap
            row_height = 0.0
        need = fm.boundingRect(QRectF(0, 0, text_width, 1e6), flags, entry.text)
        x = col * (half + 2 * gap)
        text = QRectF(x + swatch + gap, y, text_width, math.ceil(need.height()) + 1)
        placed.append((entry, QRectF(x, y, swatch, fm.height()), text))
        row_height = max(row_height, text.height())
    return placed, (y + row_height if entries else 0.0)


class _Chart:
    """A plot area with axes, in data coordinates (x optionally logarithmic), its legend
    and caption under it; text sized to the image (:data:`TEXT_SHARE`)."""

    def __init__(self, width: int, height: int, title: str, xlabel: str, ylabel: str,
                 xlim: tuple[float, float], ylim: tuple[float, float], *,
                 xticks: Sequence[float], yticks: Sequence[float],
                 xlabels: Sequence[str] | None = None, logx: bool = False,
                 legend: Sequence[LegendEntry] = (), caption: str = ""):
        body = width * TEXT_SHARE
        self.font = _font(body)
        self.tick_font = _font(body * 0.9)
        self.title_font = _font(body * 1.2, bold=True)
        self.caption_font = _font(body * 0.85, italic=True)
        self.title, self.xlabel, self.ylabel, self.caption = title, xlabel, ylabel, caption
        self.logx = logx
        self.xlim = tuple(math.log10(v) for v in xlim) if logx else xlim
        self.ylim = ylim
        self.xticks, self.yticks = list(xticks), list(yticks)
        self.ylabels = tick_texts(self.yticks)
        self.xlabels = (list(xlabels) if xlabels is not None else tick_texts(self.xticks))
        self.legend_entries = list(legend)
        fm, tfm = QFontMetricsF(self.font), QFontMetricsF(self.tick_font)
        pad = round(body * 0.8)
        self.pad = pad
        wrap = int(Qt.AlignmentFlag.AlignHCenter | Qt.TextFlag.TextWordWrap)
        self.title_h = QFontMetricsF(self.title_font).boundingRect(
            QRectF(0, 0, width - 2 * pad, 1e6), wrap, title).height() if title else 0.0
        left = pad + (1.6 * fm.height() if ylabel else 0) + max(
            (tfm.horizontalAdvance(t) for t in self.ylabels), default=0) + 0.6 * body
        # Category names that do not fit their slot are drawn slanted.
        slot = (width - left - 2 * pad) / max(len(self.xticks), 1)
        widest = max((tfm.horizontalAdvance(t) for t in self.xlabels), default=0.0)
        self.slant = widest > 0.92 * slot
        if self.slant and self.xlabels:  # the first slanted label must not leave the image
            first = tfm.horizontalAdvance(self.xlabels[0]) * math.cos(math.radians(35))
            left = max(left, first - slot / 2 + pad)
        ticks_h = (widest * math.sin(math.radians(35)) + tfm.height() if self.slant
                   else tfm.height()) + 0.4 * body
        bottom = ticks_h + (1.4 * fm.height() if xlabel else 0) + pad
        top = pad + self.title_h + pad
        # The right margin leaves room for the last x tick label's overhang when that tick
        # sits on the right edge (category ticks sit mid-slot: no overhang).
        edge = (bool(self.xticks) and not self.slant and math.isclose(
            math.log10(self.xticks[-1]) if logx else self.xticks[-1], self.xlim[1],
            rel_tol=1e-9, abs_tol=1e-9))
        right = max(2 * pad, tfm.horizontalAdvance(self.xlabels[-1]) / 2 + pad
                    if edge else 2 * pad)
        self.rect = QRectF(left, top, width - left - right, max(height - top - bottom,
                                                               4 * body))
        band_w = width - 2 * pad
        self.legend_at = self.rect.bottom() + bottom
        self.placed, legend_h = legend_layout(self.legend_entries, self.font, band_w)
        caption_top = self.legend_at + (legend_h + pad if self.legend_entries else 0)
        cfm = QFontMetricsF(self.caption_font)
        caption_h = cfm.boundingRect(QRectF(0, 0, band_w, 1e6),
                                     int(Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap),
                                     caption).height() if caption else 0.0
        self.caption_rect = QRectF(pad, caption_top, band_w, math.ceil(caption_h) + 1)
        total = math.ceil(caption_top + (caption_h + pad if caption else 0))
        self.image = QImage(width, max(total, height), QImage.Format.Format_RGB32)
        self.image.fill(QColor("white"))
        self.p = QPainter(self.image)
        self.p.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        self.p.setFont(self.font)
        #: Every text drawn, with its box in the image (for checking nothing is cut).
        self.texts: list[tuple[str, QRectF]] = []

    def _text(self, rect: QRectF, flags: int, text: str, font: QFont | None = None) -> None:
        if font is not None:
            self.p.setFont(font)
        self.p.drawText(rect, flags, text)
        self.texts.append((text, self.p.transform().mapRect(QRectF(rect))))
        self.p.setFont(self.font)

    def x(self, v: float) -> float:
        v = math.log10(v) if self.logx else v
        lo, hi = self.xlim
        return self.rect.left() + (v - lo) / (hi - lo) * self.rect.width()

    def y(self, v: float) -> float:
        lo, hi = self.ylim
        return self.rect.bottom() - (v - lo) / (hi - lo) * self.rect.height()

    def pt(self, x: float, y: float) -> QPointF:
        return QPointF(self.x(x), self.y(y))

    def axes(self) -> None:
        p, r = self.p, self.rect
        p.setPen(QPen(LIGHT, 1))
        for t in self.yticks:
            p.drawLine(QPointF(r.left(), self.y(t)), QPointF(r.right(), self.y(t)))
        for t in self.xticks:
            p.drawLine(QPointF(self.x(t), r.top()), QPointF(self.x(t), r.bottom()))
        p.setPen(QPen(INK, 1.5))
        p.drawRect(r)
        tfm = QFontMetricsF(self.tick_font)
        fh = tfm.height()
        gap = 0.3 * self.font.pixelSize()
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for t, text in zip(self.yticks, self.ylabels, strict=True):
            self._text(QRectF(0, self.y(t) - fh, r.left() - gap, 2 * fh), int(right), text,
                       self.tick_font)
        for t, text in zip(self.xticks, self.xlabels, strict=True):
            if self.slant:
                w = tfm.horizontalAdvance(text) + 2
                p.save()
                p.translate(self.x(t), r.bottom() + gap)
                p.rotate(-35)
                self._text(QRectF(-w, -fh / 2, w, fh), int(right), text, self.tick_font)
                p.restore()
            else:
                w = tfm.horizontalAdvance(text) + 4
                self._text(QRectF(self.x(t) - w / 2, r.bottom() + gap, w, fh + 2),
                           int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop),
                           text, self.tick_font)
        fm = QFontMetricsF(self.font)
        if self.xlabel:
            self._text(QRectF(r.left(), self.legend_at - self.pad - 1.3 * fm.height(),
                              r.width(), 1.3 * fm.height()),
                       int(Qt.AlignmentFlag.AlignHCenter), self.xlabel)
        if self.ylabel:
            p.save()
            p.translate(self.pad + 0.7 * fm.height(), r.center().y())
            p.rotate(-90)
            self._text(QRectF(-r.height() / 2, -fm.height(), r.height(), 2 * fm.height()),
                       int(Qt.AlignmentFlag.AlignCenter), self.ylabel)
            p.restore()
        if self.title:
            self._text(QRectF(self.pad, self.pad, self.image.width() - 2 * self.pad,
                              self.title_h + 2),
                       int(Qt.AlignmentFlag.AlignHCenter | Qt.TextFlag.TextWordWrap),
                       self.title, self.title_font)

    def line(self, xs: Sequence[float], ys: Sequence[float], color: QColor, width: float = 2.5,
             dashed: bool = False) -> None:
        pen = QPen(color, width * self.font.pixelSize() / 19)
        if dashed:
            pen.setStyle(Qt.PenStyle.DashLine)
        self.p.setPen(pen)
        pts = [self.pt(a, b) for a, b in zip(xs, ys, strict=True)
               if math.isfinite(a) and math.isfinite(b)]
        if len(pts) >= 2:
            self.p.drawPolyline(QPolygonF(pts))

    def fill_below(self, xs: Sequence[float], ys: Sequence[float], color: QColor) -> None:
        path = QPainterPath(self.pt(xs[0], self.ylim[0]))
        for a, b in zip(xs, ys, strict=True):
            path.lineTo(self.pt(a, b))
        path.lineTo(self.pt(xs[-1], self.ylim[0]))
        path.closeSubpath()
        self.p.fillPath(path, QBrush(color))

    def dot(self, x: float, y: float, color: QColor, radius: float = 5.0) -> None:
        self._dot(self.pt(x, y), color, radius * self.font.pixelSize() / 19)

    def _dot(self, at: QPointF, color: QColor, radius: float) -> None:
        self.p.setPen(QPen(INK, 1))
        self.p.setBrush(QBrush(color))
        self.p.drawEllipse(at, radius, radius)
        self.p.setBrush(Qt.BrushStyle.NoBrush)

    def _legend(self) -> None:
        x0, y0 = self.pad, self.legend_at
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
                    | Qt.TextFlag.TextWordWrap)
        for entry, swatch, text in self.placed:
            yy = y0 + swatch.center().y()
            if entry.marker:
                self._dot(QPointF(x0 + swatch.center().x(), yy), entry.color,
                          0.3 * swatch.height())
            else:
                pen = QPen(entry.color, 0.17 * swatch.height())
                if entry.dashed:
                    pen.setStyle(Qt.PenStyle.DashLine)
                self.p.setPen(pen)
                self.p.drawLine(QPointF(x0 + swatch.left(), yy), QPointF(x0 + swatch.right(), yy))
            self.p.setPen(QPen(INK, 1))
            self._text(text.translated(x0, y0), flags, entry.text)

    def finish(self) -> QImage:
        self._legend()
        if self.caption:
            self.p.setPen(QPen(MUTED, 1))
            self._text(self.caption_rect,
                       int(Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap),
                       self.caption, self.caption_font)
        self.p.end()
        self.image.setText("Title", self.title)
        self.image.setText("Description", self.caption)
        self.image.setText("Legend", "\n".join(e.text for e in self.legend_entries))
        return self.image


def tradeoff_image(curves: Sequence[tuple[str, np.ndarray, np.ndarray]], width: int = 760,
                   height: int = 640, caption: str = "") -> QImage:
    """Type II against type I error of the best possible attacker, for each curve.

    The region below the last (lowest) curve is shaded: out of reach of every attacker.
    The dashed diagonal is guessing (no information at all). ``caption`` is drawn under
    the legend.
    """
    colors = [BLUE, ORANGE, GREEN, RED]
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    entries = [LegendEntry(label, color) for (label, _, _), color in zip(curves, colors,
                                                                         strict=False)]
    entries.append(LegendEntry("guessing (no information)", GREY, dashed=True))
    c = _Chart(width, height, "What an attacker can achieve",
               "false alarm rate α (says \"in the data\" when the person is not)",
               "miss rate β", (0.0, 1.0), (0.0, 1.0), xticks=ticks, yticks=ticks,
               legend=entries, caption=caption)
    if curves:
        _, a0, b0 = curves[-1]
        c.fill_below(list(a0), list(b0), QColor(31, 95, 168, 40))
    c.axes()
    c.line([0.0, 1.0], [1.0, 0.0], GREY, 2.0, dashed=True)
    for (_, a, b), color in zip(curves, colors, strict=False):
        c.line(list(a), list(b), color)
    return c.finish()


def _log_ticks(lo: float, hi: float) -> list[float]:
    ticks = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** e
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                ticks.append(v)
    return ticks or [lo, hi]


def utility_image(epsilons: Sequence[float], errors: Sequence[float], chosen: float,
                  chosen_error: float, ylabel: str, title: str, width: int = 760,
                  height: int = 520, caption: str = "",
                  noise: Sequence[float] | None = None, label: str = "expected error"
                  ) -> QImage:
    """Error against ε (log scale), the chosen ε marked.

    With ``noise`` (the analyst's copy, when clamping biases the statistic), ``errors`` is
    bias + noise and the noise alone is drawn dashed beside it.
    """
    eps = np.asarray(epsilons, dtype=float)
    err = np.asarray(errors, dtype=float)
    ok = np.isfinite(err)
    top = float(np.max(err[ok])) if ok.any() else 1.0
    top = top * 1.08 if top > 0 else 1.0
    xt = _log_ticks(float(eps.min()), float(eps.max()))
    entries = [LegendEntry(label, BLUE)]
    if noise is not None:
        entries.append(LegendEntry("noise alone", BLUE, dashed=True))
    entries.append(LegendEntry(f"this release, ε = {chosen:g}", ORANGE, dashed=True))
    c = _Chart(width, height, title, "ε (smaller: more privacy)", ylabel,
               (float(eps.min()), float(eps.max())), (0.0, top), logx=True, xticks=xt,
               yticks=nice_ticks(0.0, top), xlabels=[_fmt(t) for t in xt], legend=entries,
               caption=caption)
    c.axes()
    if noise is not None:
        sd = np.asarray(noise, dtype=float)
        good = np.isfinite(sd)
        c.line(list(eps[good]), list(sd[good]), BLUE, 2.0, dashed=True)
    c.line(list(eps[ok]), list(err[ok]), BLUE)
    if math.isfinite(chosen_error):
        c.line([chosen, chosen], [0.0, chosen_error], ORANGE, 1.5, dashed=True)
        c.dot(chosen, chosen_error, ORANGE, 6)
    return c.finish()


def error_bar_image(labels: Sequence[str], values: Sequence[float],
                    low: Sequence[float | None], high: Sequence[float | None], title: str,
                    ylabel: str, width: int = 760, height: int = 480,
                    caption: str = "") -> QImage:
    """Each released value with its confidence interval (whiskers), one per label."""
    vals = [float(v) for v in values]
    lows = [float(v) if lo is None else float(lo) for v, lo in zip(vals, low, strict=True)]
    highs = [float(v) if hi is None else float(hi) for v, hi in zip(vals, high, strict=True)]
    lo_all, hi_all = min(lows + vals), max(highs + vals)
    n = len(vals)
    if n > 1:  # bars from zero
        lo_all, hi_all = min(lo_all, 0.0), max(hi_all, 0.0)
        pad = (hi_all - lo_all) * 0.08 or 1.0
        ylim = (lo_all - pad if lo_all < 0 else 0.0, hi_all + pad)
    else:  # one value: zoom on its interval
        pad = (hi_all - lo_all) * 0.5 or max(abs(hi_all) * 0.1, 1.0)
        ylim = (lo_all - pad, hi_all + pad)
    every = max(1, math.ceil(n / 24))
    shown = list(range(0, n, every))
    names = [labels[i] if len(labels[i]) <= TICK_CHARS else labels[i][:TICK_CHARS - 1] + "…"
             for i in shown]
    c = _Chart(width, height, title, "", ylabel, (-0.5, n - 0.5), ylim,
               xticks=[float(i) for i in shown], yticks=nice_ticks(*ylim), xlabels=names,
               caption=caption)
    c.axes()
    half = 0.35
    for i, (v, lo, hi) in enumerate(zip(vals, lows, highs, strict=True)):
        if n > 1:
            left, right = c.x(i - half), c.x(i + half)
            c.p.fillRect(QRectF(left, min(c.y(v), c.y(0.0)), right - left,
                                abs(c.y(0.0) - c.y(v))), QColor(31, 95, 168, 90))
        if hi > lo:  # no whiskers for a value without an interval (quantiles)
            c.line([i, i], [lo, hi], INK, 2.0)
            for end in (lo, hi):
                c.line([i - half / 2, i + half / 2], [end, end], INK, 2.0)
        c.dot(i, v, BLUE, 5)
    return c.finish()


def budget_image(epsilons: Sequence[float], statuses: Sequence[str], budget: float,
                 width: int = 760, height: int = 440, caption: str = "") -> QImage:
    """Cumulative ε after each release (aborted ones stay charged), against the budget."""
    cum = np.cumsum(np.asarray(epsilons, dtype=float))
    n = len(cum)
    top = max(budget, float(cum[-1]) if n else 0.0) * 1.12 or 1.0
    every = max(1, math.ceil(n / 12))
    xt = [float(i) for i in range(1, n + 1, every)] if n else [0.0]
    entries = [LegendEntry("cumulative ε (basic composition)", BLUE),
               LegendEntry(f"budget ε = {budget:g}", RED, dashed=True)]
    if "pending" in statuses:
        entries.append(LegendEntry("this release", ORANGE, marker=True))
    if "aborted" in statuses:
        entries.append(LegendEntry("aborted (still charged)", GREY, marker=True))
    c = _Chart(width, height, "Privacy budget spent on this dataset", "release",
               "cumulative ε", (0.0, max(n, 1) + 0.5), (0.0, top), xticks=xt,
               yticks=nice_ticks(0.0, top), xlabels=[str(int(t)) for t in xt] if n else ["0"],
               legend=entries, caption=caption)
    c.axes()
    xs, ys = [0.0], [0.0]
    for i, v in enumerate(cum, start=1):
        xs += [float(i), float(i)]
        ys += [ys[-1], float(v)]
    c.line(xs, ys, BLUE)
    c.line([0.0, max(n, 1) + 0.5], [budget, budget], RED, 2.0, dashed=True)
    for i, (v, status) in enumerate(zip(cum, statuses, strict=True), start=1):
        c.dot(i, float(v), {"aborted": GREY, "pending": ORANGE}.get(status, BLUE), 5)
    return c.finish()
