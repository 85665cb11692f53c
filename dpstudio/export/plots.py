"""The report's figures, drawn with QPainter into QImages (no plotting library).

Four figures: the adversary's trade-off curve (the privacy guarantee), the error the
release would have at other privacy levels, the released values with their error bars,
and the dataset's budget history. Each function takes plain numbers — nothing here sees
raw data — and returns an RGB image on a white background.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QImage, QPainter, QPainterPath, QPen, QPolygonF

__all__ = [
    "budget_image",
    "error_bar_image",
    "nice_ticks",
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


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        return f"{v:.1e}"
    return f"{v:.4g}"


class _Chart:
    """A plot area with axes, in data coordinates (x optionally logarithmic)."""

    def __init__(self, width: int, height: int, title: str, xlabel: str, ylabel: str,
                 xlim: tuple[float, float], ylim: tuple[float, float], logx: bool = False):
        self.image = QImage(width, height, QImage.Format.Format_RGB32)
        self.image.fill(QColor("white"))
        self.p = QPainter(self.image)
        self.p.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.font = QFont()
        self.font.setPixelSize(max(11, height // 38))
        self.p.setFont(self.font)
        self.logx = logx
        self.xlim = tuple(math.log10(v) for v in xlim) if logx else xlim
        self.ylim = ylim
        left, right, top, bottom = 88, 24, 44, 64
        self.rect = QRectF(left, top, width - left - right, height - top - bottom)
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel

    def x(self, v: float) -> float:
        v = math.log10(v) if self.logx else v
        lo, hi = self.xlim
        return self.rect.left() + (v - lo) / (hi - lo) * self.rect.width()

    def y(self, v: float) -> float:
        lo, hi = self.ylim
        return self.rect.bottom() - (v - lo) / (hi - lo) * self.rect.height()

    def pt(self, x: float, y: float) -> QPointF:
        return QPointF(self.x(x), self.y(y))

    def axes(self, xticks: Sequence[float], yticks: Sequence[float],
             xlabels: Sequence[str] | None = None) -> None:
        p, r = self.p, self.rect
        p.setPen(QPen(LIGHT, 1))
        for t in yticks:
            p.drawLine(QPointF(r.left(), self.y(t)), QPointF(r.right(), self.y(t)))
        for t in xticks:
            p.drawLine(QPointF(self.x(t), r.top()), QPointF(self.x(t), r.bottom()))
        p.setPen(QPen(INK, 1.5))
        p.drawRect(r)
        fh = self.font.pixelSize()
        for t in yticks:
            box = QRectF(0, self.y(t) - fh, r.left() - 8, 2 * fh)
            p.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, _fmt(t))
        labels = xlabels if xlabels is not None else [_fmt(t) for t in xticks]
        for t, text in zip(xticks, labels, strict=True):
            box = QRectF(self.x(t) - 60, r.bottom() + 4, 120, fh + 6)
            p.drawText(box, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, text)
        p.drawText(QRectF(r.left(), r.bottom() + fh + 14, r.width(), fh + 8),
                   Qt.AlignmentFlag.AlignHCenter, self.xlabel)
        p.save()
        p.translate(16, r.center().y())
        p.rotate(-90)
        p.drawText(QRectF(-r.height() / 2, -fh, r.height(), 2 * fh),
                   Qt.AlignmentFlag.AlignCenter, self.ylabel)
        p.restore()
        bold = QFont(self.font)
        bold.setBold(True)
        bold.setPixelSize(self.font.pixelSize() + 2)
        p.setFont(bold)
        p.drawText(QRectF(0, 6, self.image.width(), 30), Qt.AlignmentFlag.AlignHCenter,
                   self.title)
        p.setFont(self.font)

    def line(self, xs: Sequence[float], ys: Sequence[float], color: QColor, width: float = 2.5,
             dashed: bool = False) -> None:
        pen = QPen(color, width)
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
        self.p.setPen(QPen(INK, 1))
        self.p.setBrush(QBrush(color))
        self.p.drawEllipse(self.pt(x, y), radius, radius)
        self.p.setBrush(Qt.BrushStyle.NoBrush)

    def legend(self, entries: Sequence[tuple[str, QColor, bool]], corner: str = "tr") -> None:
        fh = self.font.pixelSize()
        widths = [self.p.fontMetrics().horizontalAdvance(t) for t, _, _ in entries]
        w, h = max(widths, default=0) + 56, len(entries) * (fh + 8) + 8
        r = self.rect
        x0 = r.right() - w - 8 if "r" in corner else r.left() + 8
        y0 = r.top() + 8 if "t" in corner else r.bottom() - h - 8
        self.p.setPen(QPen(GREY, 1))
        self.p.setBrush(QBrush(QColor(255, 255, 255, 235)))
        self.p.drawRect(QRectF(x0, y0, w, h))
        self.p.setBrush(Qt.BrushStyle.NoBrush)
        for i, (text, color, dashed) in enumerate(entries):
            yy = y0 + 8 + i * (fh + 8) + fh / 2
            pen = QPen(color, 3)
            if dashed:
                pen.setStyle(Qt.PenStyle.DashLine)
            self.p.setPen(pen)
            self.p.drawLine(QPointF(x0 + 8, yy), QPointF(x0 + 40, yy))
            self.p.setPen(QPen(INK, 1))
            self.p.drawText(QRectF(x0 + 46, yy - fh, w - 50, 2 * fh),
                            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)

    def finish(self) -> QImage:
        self.p.end()
        return self.image


def tradeoff_image(curves: Sequence[tuple[str, np.ndarray, np.ndarray]], width: int = 760,
                   height: int = 640) -> QImage:
    """Type II against type I error of the best possible attacker, for each curve.

    The region below the last (lowest) curve is shaded: out of reach of every attacker.
    The dashed diagonal is guessing (no information at all).
    """
    c = _Chart(width, height, "What an attacker can achieve",
               "false alarm rate α (says \"in the data\" when the person is not)",
               "miss rate β", (0.0, 1.0), (0.0, 1.0))
    colors = [BLUE, ORANGE, GREEN, RED]
    if curves:
        _, a0, b0 = curves[-1]
        c.fill_below(list(a0), list(b0), QColor(31, 95, 168, 40))
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    c.axes(ticks, ticks)
    c.line([0.0, 1.0], [1.0, 0.0], GREY, 2.0, dashed=True)
    for (_, a, b), color in zip(curves, colors, strict=False):
        c.line(list(a), list(b), color)
    c.legend([(label, color, False) for (label, _, _), color in zip(curves, colors,
                                                                      strict=False)]
             + [("guessing (no information)", GREY, True)])
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
                  height: int = 520) -> QImage:
    """Error against ε (log scale), the chosen ε marked."""
    eps = np.asarray(epsilons, dtype=float)
    err = np.asarray(errors, dtype=float)
    ok = np.isfinite(err)
    top = float(np.max(err[ok])) if ok.any() else 1.0
    top = top * 1.08 if top > 0 else 1.0
    c = _Chart(width, height, title, "ε (smaller: more privacy)", ylabel,
               (float(eps.min()), float(eps.max())), (0.0, top), logx=True)
    xt = _log_ticks(float(eps.min()), float(eps.max()))
    c.axes(xt, nice_ticks(0.0, top), [_fmt(t) for t in xt])
    c.line(list(eps[ok]), list(err[ok]), BLUE)
    if math.isfinite(chosen_error):
        c.line([chosen, chosen], [0.0, chosen_error], ORANGE, 1.5, dashed=True)
        c.dot(chosen, chosen_error, ORANGE, 6)
    c.legend([("expected error", BLUE, False), (f"this release, ε = {chosen:g}", ORANGE, True)])
    return c.finish()


def error_bar_image(labels: Sequence[str], values: Sequence[float],
                    low: Sequence[float | None], high: Sequence[float | None], title: str,
                    ylabel: str, width: int = 760, height: int = 480) -> QImage:
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
    c = _Chart(width, height, title, "", ylabel, (-0.5, n - 0.5), ylim)
    every = max(1, math.ceil(n / 12))
    shown = list(range(0, n, every))
    names = [labels[i] if len(labels[i]) <= 14 else labels[i][:13] + "…" for i in shown]
    c.axes([float(i) for i in shown], nice_ticks(c.ylim[0], c.ylim[1]), names)
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
                 width: int = 760, height: int = 440) -> QImage:
    """Cumulative ε after each release (aborted ones stay charged), against the budget."""
    cum = np.cumsum(np.asarray(epsilons, dtype=float))
    n = len(cum)
    top = max(budget, float(cum[-1]) if n else 0.0) * 1.35 or 1.0  # room for the legend
    c = _Chart(width, height, "Privacy budget spent on this dataset", "release",
               "cumulative ε", (0.0, max(n, 1) + 0.5), (0.0, top))
    every = max(1, math.ceil(n / 12))
    xt = [float(i) for i in range(1, n + 1, every)] if n else [0.0]
    c.axes(xt, nice_ticks(0.0, top), [str(int(t)) for t in xt] if n else ["0"])
    xs, ys = [0.0], [0.0]
    for i, v in enumerate(cum, start=1):
        xs += [float(i), float(i)]
        ys += [ys[-1], float(v)]
    c.line(xs, ys, BLUE)
    c.line([0.0, max(n, 1) + 0.5], [budget, budget], RED, 2.0, dashed=True)
    for i, (v, status) in enumerate(zip(cum, statuses, strict=True), start=1):
        c.dot(i, float(v), {"aborted": GREY, "pending": ORANGE}.get(status, BLUE), 5)
    c.legend([("cumulative ε (basic composition)", BLUE, False), (f"budget ε = {budget:g}",
                                                                  RED, True)], corner="tl")
    return c.finish()
