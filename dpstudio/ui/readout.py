"""The privacy–utility plot's readout: the error of each trust model at the marker's ε.

:func:`readings` decides the numbers: each line's value at ε, split for the analyst into
the clamping bias and the noise, and — for the chosen mechanism — the Monte-Carlo value
where the simulated releases disagree with the line (the simulation measures the whole
error; a line may miss part of it). With true values hidden nothing that needs the data is
used: the noise alone, no simulation, no bias. :func:`readout_html` writes them, the amber
clamping warning beside the chosen mechanism's number. :func:`free_position` finds where
the box covers no data.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF

__all__ = ["LineData", "Reading", "candidate_corners", "clamping_warning_at", "free_position",
           "least_covered", "overlaps", "readings", "readout_html"]

def clamping_warning_at(clamping: dict | None, epsilon: float) -> str:
    """The clamping warning at ``epsilon`` ("" while the bias is immaterial there).

    Parameters
    ----------
    clamping : dict or None
        ``UtilityResult.clamping`` (analyst only).
    epsilon : float

    Returns
    -------
    str
        The analysis layer's sentence at that ε where it states one, else the result's own
        ``warning``.
    """
    if not clamping:
        return ""
    try:
        from dpstudio.analysis.compare import clamping_warning
    except ImportError:  # an analysis layer that states the warning at one ε only
        return str(clamping.get("warning") or "")
    return str(clamping_warning(clamping, float(epsilon)) or "")


#: Characters per line of the sentence saying why the chosen model has no number.
REASON_WIDTH = 40

#: A simulation this far (as a ratio) from the line, outside its ≈95% band, is followed.
DISAGREE_RATIO = 1.1


@dataclass(frozen=True)
class LineData:
    """What the readout needs of one analytic line (all in natural units)."""

    epsilon: np.ndarray
    error: np.ndarray
    trust_model: str
    primary: bool
    bias: float | None = None   # analyst-only clamping/imputation bias, column's units
    noise_only: bool = False    # the line leaves that bias out
    #: Where the line stops short of ε and why (:class:`~dpstudio.analysis.reach.Unreached`:
    #: its ``reason(ε)`` is the sentence ``dpstudio compare`` gives).
    unreached: Any = None
    #: What was computed at each ε where that changes along the line (the central line of
    #: a comparison: a central mechanism, or a protocol run by the curator), else None.
    names: tuple[str | None, ...] | None = None


@dataclass(frozen=True)
class Reading:
    """One model's error at the marker, as the readout states it.

    Attributes
    ----------
    trust_model : str
    value : float
        The number shown: the whole expected error (or the noise alone with true values
        hidden).
    noise, bias : float or None
        Its parts, for the analyst (None where not known or not shown).
    simulated : bool
        ``value`` is the Monte-Carlo points', which disagree with the line.
    line : float
        The line's value at ε.
    primary : bool
        The chosen mechanism's.
    noise_only : bool
        ``value`` is a line that leaves out a bias it could not size.
    name : str
        The line's name.
    computed : str
        What the value was computed with at this ε, where the line says ("" else).
    reason : str
        For the chosen mechanism's line where it has no value at this ε: why, in one
        sentence (``value`` is then NaN).
    """

    trust_model: str
    value: float
    noise: float | None
    bias: float | None
    simulated: bool
    line: float
    primary: bool
    noise_only: bool = False
    name: str = ""
    computed: str = ""
    reason: str = ""

    @property
    def reached(self) -> bool:
        """Whether there is a number to show (False: the line stops short of this ε)."""
        return not self.reason


def interpolate(eps: np.ndarray, values: np.ndarray, at: float) -> float | None:
    """``values`` at ``at`` by log–log interpolation; None outside the finite points."""
    eps, values = np.asarray(eps, float), np.asarray(values, float)
    ok = np.isfinite(values) & (values > 0) & np.isfinite(eps) & (eps > 0)
    if not ok.any() or not (eps[ok].min() <= at <= eps[ok].max()):
        return None
    return float(10 ** np.interp(math.log10(at), np.log10(eps[ok]), np.log10(values[ok])))


def _simulated(points: dict, trust_model: str, at: float
               ) -> tuple[float, float, float] | None:
    """The Monte-Carlo (value, low, high) of ``trust_model`` at ``at``, if any."""
    for eps, err, low, high, tm in points.values():
        if tm != trust_model:
            continue
        value = interpolate(eps, err, at)
        if value is None:
            continue
        lo = interpolate(eps, np.maximum(low, err * 1e-3), at) or value
        hi = interpolate(eps, np.maximum(high, err), at) or value
        return value, lo, hi
    return None


def _computed_at(data: LineData, at: float) -> str:
    """The line's name for what it computed at the ε nearest ``at`` ("" where none)."""
    if not data.names:
        return ""
    eps = np.asarray(data.epsilon, float)
    i = int(np.argmin(np.abs(np.log(eps) - math.log(at))))
    return data.names[i] or ""


def _unreached(name: str, data: LineData, at: float) -> Reading:
    """The chosen line where it has no value at ``at``: a reading that says why (the
    analysis layer's sentence, :meth:`~dpstudio.analysis.reach.Unreached.reason`)."""
    return Reading(data.trust_model, math.nan, None, None, False, math.nan, True,
                   name=name, reason=data.unreached.reason(at))


def readings(lines: dict[str, LineData], points: dict, at: float, *, metric: str = "rmse",
             hide_true: bool = False) -> list[Reading]:
    """The readout's numbers at ε = ``at``, the chosen mechanism's first.

    Parameters
    ----------
    lines : dict of str to LineData
        The analytic lines by name.
    points : dict
        Name → (ε, error, low, high, trust model) of the Monte-Carlo points.
    at : float
        The marker's ε.
    metric : str
        The error measure; the bias is split out of an RMSE only (it is in the column's
        units, which a relative or total-variation error is not).
    hide_true : bool
        Use nothing computed from the data: the noise alone, no simulation, no bias.

    Returns
    -------
    list of Reading
        The chosen mechanism's always where its line says where it stops (``unreached``:
        beyond that, a reading whose ``reason`` says why and whose ``value`` is NaN —
        draw no dot for it); the others' where they have a value.
    """
    out: list[Reading] = []
    for name, data in lines.items():
        line = interpolate(data.epsilon, data.error, at)
        if line is None:
            if data.primary and data.unreached is not None:
                out.append(_unreached(name, data, at))
            continue
        computed = _computed_at(data, at)
        bias = data.bias if (metric == "rmse" and data.bias is not None
                             and math.isfinite(data.bias) and data.bias != 0.0) else None
        if bias is None:
            noise, total = line, line
        elif data.noise_only:
            noise, total = line, math.hypot(line, bias)
        else:  # the line is √(noise² + bias²)
            noise, total = math.sqrt(max(line * line - bias * bias, 0.0)), line
        if hide_true:
            out.append(Reading(data.trust_model, noise, None, None, False, line,
                               data.primary, name=name, computed=computed))
            continue
        value, simulated = total, False
        sim = _simulated(points, data.trust_model, at) if data.primary else None
        if sim is not None:
            s, lo, hi = sim
            outside = not (lo <= total <= hi)
            if outside and max(s, total) > DISAGREE_RATIO * min(s, total):
                value, simulated = s, True
        out.append(Reading(data.trust_model, value, noise if bias is not None else None,
                           abs(bias) if bias is not None else None, simulated, line,
                           data.primary, data.noise_only and bias is None, name, computed))
    out.sort(key=lambda r: not r.primary)
    return out


def _fmt(v: float) -> str:
    """Three significant digits; thousands written out ("10,900", not "1.09e+04")."""
    if math.isfinite(v) and abs(v) >= 1e4:
        return f"{float(f'{v:.3g}'):,.0f}"
    return f"{v:.3g}"


def readout_html(header: str, shown: list[Reading], labels: dict[str, str], *,
                 colour: str, warning: str = "", warning_colour: str = "#b45309",
                 colours: dict[str, str] | None = None, per_line: int = 1) -> str:
    """The readout as rich text: ε and the chosen model in bold, then the others.

    Parameters
    ----------
    header : str
        First line ("ε = 1").
    shown : list of Reading
    labels : dict of str to str
        Line name, else trust model → the name the readout gives it.
    colour : str
        Text colour.
    warning : str
        The clamping warning, in amber beside the chosen mechanism's number ("" for none).
    warning_colour : str
    colours : dict of str to str, optional
        Trust model → its colour, for a small swatch before each name.
    per_line : int
        Compared models per line: 1 is narrow and tall, more is wider and shorter (the
        plot uses whichever finds room among its data).

    Returns
    -------
    str
        HTML for a ``pyqtgraph.TextItem``.
    """
    rows: list[str] = []
    others: list[str] = []
    for r in shown:
        if r.computed:  # the model, then what this ε's number was computed with
            raw = f"{labels.get(r.trust_model, r.trust_model)} ({r.computed})"
        else:
            raw = labels.get(r.name) or labels.get(r.trust_model, r.trust_model)
        name = html.escape(raw)
        swatch = ""
        if colours and r.trust_model in colours:
            swatch = f"<span style='color:{colours[r.trust_model]}'>●</span>&nbsp;"
        if not r.primary:
            others.append(f"{swatch}{name}:&nbsp;{_fmt(r.value)}" + (
                "&nbsp;(noise only)" if r.noise_only else ""))
            continue
        if not r.reached:  # the chosen model stops short of ε: said, not left out
            # On short lines: a box as wide as the sentence finds no room beside the data.
            # "ε = 20", "δ = 1e-6", "2,000 people" each kept on one line.
            glued = re.sub(r"([εδ]) = (\S+)", "\\1\u00a0=\u00a0\\2", r.reason)
            glued = re.sub(r"(\S+) people", "\\1\u00a0people", glued)
            first, *rest = textwrap.wrap(f"{raw}: {glued}", REASON_WIDTH)
            head, _, tail = first.partition(": ")
            rows.append(f"{swatch}<b>{html.escape(head)}:</b> {html.escape(tail)}")
            rows += [f"&nbsp;&nbsp;{html.escape(part)}" for part in rest]
            if warning:
                rows.append(f"<span style='color:{warning_colour}'>⚠ "
                            f"{html.escape(warning)}</span>")
            continue
        text = f"<b>{name}: {_fmt(r.value)}</b>"
        if r.simulated:
            text += " simulated"
        elif r.noise_only:
            text += " (noise only)"
        if warning:
            text += f" <span style='color:{warning_colour}'>⚠</span>"
        rows.append(swatch + text)
        # The parts of the chosen mechanism's error, on a line of their own.
        if r.bias is not None and r.noise is not None:
            rows.append(f"&nbsp;&nbsp;bias {_fmt(r.bias)} · noise {_fmt(r.noise)}")
        elif r.simulated:
            rows.append(f"&nbsp;&nbsp;the line says {_fmt(r.line)}"
                        + (" (noise only)" if r.noise_only else ""))
        if warning:
            rows.append(f"<span style='color:{warning_colour}'>⚠ {html.escape(warning)}</span>")
    step = max(int(per_line), 1)
    rows += [" &nbsp;".join(others[i:i + step]) for i in range(0, len(others), step)]
    # ε heads the first line: one line fewer.
    first = html.escape(header) + (" · " + rows[0] if rows else "")
    return f"<div style='color:{colour}'>" + "<br>".join([first, *rows[1:]]) + "</div>"


def _segments_hit(rect: QRectF, xs: np.ndarray, ys: np.ndarray) -> bool:
    """Whether the polyline through (xs, ys) (scene coordinates) crosses ``rect``."""
    ok = np.isfinite(xs) & np.isfinite(ys)
    x0, y0, x1, y1 = rect.left(), rect.top(), rect.right(), rect.bottom()
    inside = ok & (xs >= x0) & (xs <= x1) & (ys >= y0) & (ys <= y1)
    if inside.any():
        return True
    seg = ok[:-1] & ok[1:]
    if not seg.any():
        return False
    ax, ay, bx, by = xs[:-1][seg], ys[:-1][seg], xs[1:][seg], ys[1:][seg]
    # Liang–Barsky: the part of each segment inside the rectangle, if any.
    dx, dy = bx - ax, by - ay
    t0, t1 = np.zeros_like(ax), np.ones_like(ax)
    alive = np.ones_like(ax, dtype=bool)
    for p, q in ((-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)):
        parallel = p == 0
        alive &= ~(parallel & (q < 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(parallel, 0.0, q / np.where(parallel, 1.0, p))
        entering = ~parallel & (p < 0)
        leaving = ~parallel & (p > 0)
        t0 = np.where(entering, np.maximum(t0, r), t0)
        t1 = np.where(leaving, np.minimum(t1, r), t1)
    return bool(np.any(alive & (t0 <= t1)))


def candidate_corners(view: QRectF, marker_x: float, size: tuple[float, float],
                      pad: float = 6.0) -> list[QPointF]:
    """Where a box of ``size`` may go in ``view`` (scene coordinates), best first.

    Beside the marker at ``marker_x`` (right, then left; top, then bottom), the four
    corners, then a coarse scan of the whole area.

    Returns
    -------
    list of QPointF
        Top-left corners.
    """
    w, h = size
    top, bottom = view.top() + pad, view.bottom() - pad - h
    left, right = view.left() + pad, view.right() - pad - w
    corners = [QPointF(marker_x + pad, top), QPointF(marker_x - pad - w, top),
               QPointF(marker_x + pad, bottom), QPointF(marker_x - pad - w, bottom),
               QPointF(left, top), QPointF(right, top),
               QPointF(left, bottom), QPointF(right, bottom)]
    steps_x = max(int((right - left) / max(w / 3, 20)), 1)
    steps_y = max(int((bottom - top) / max(h / 3, 12)), 1)
    corners += [QPointF(left + (right - left) * i / steps_x, top + (bottom - top) * j / steps_y)
                for j in range(steps_y + 1) for i in range(steps_x + 1)]
    return corners


def _boxes_array(boxes) -> np.ndarray:
    """Rectangles as an (n, 4) array of left, top, right, bottom."""
    if isinstance(boxes, np.ndarray):
        return boxes.reshape(-1, 4)
    return np.array([[b.left(), b.top(), b.right(), b.bottom()] for b in boxes],
                    dtype=float).reshape(-1, 4)


def overlaps(rect: QRectF, polylines: list[tuple[np.ndarray, np.ndarray]], boxes) -> int:
    """How many lines and points a box at ``rect`` would cover (scene coordinates).

    ``boxes``: QRectF objects or an (n, 4) array of left, top, right, bottom; a polyline
    may hold several lines separated by NaN.
    """
    grown = rect.adjusted(-2, -2, 2, 2)
    b = _boxes_array(boxes)
    hit = int(np.count_nonzero((b[:, 0] <= grown.right()) & (b[:, 2] >= grown.left())
                               & (b[:, 1] <= grown.bottom()) & (b[:, 3] >= grown.top())))
    return hit + sum(_segments_hit(grown, xs, ys) for xs, ys in polylines)


def free_position(size: tuple[float, float], view: QRectF, candidates: list[QPointF],
                  polylines: list[tuple[np.ndarray, np.ndarray]],
                  boxes: list[QRectF]) -> QPointF | None:
    """The first top-left corner among ``candidates`` where a box of ``size`` covers no
    data, within ``view`` (all in scene coordinates); None where every one does.

    Parameters
    ----------
    size : tuple of float
        Width and height of the box.
    view : QRectF
        The data area the box must stay inside.
    candidates : list of QPointF
        Top-left corners, in order of preference.
    polylines : list of (numpy.ndarray, numpy.ndarray)
        Lines (x, y), in scene coordinates.
    boxes : list of QRectF or numpy.ndarray
        Points' symbols, in scene coordinates (or an (n, 4) array of their left, top,
        right and bottom).

    Returns
    -------
    QPointF or None
    """
    w, h = size
    boxes = _boxes_array(boxes)
    for corner in candidates:
        rect = QRectF(corner.x(), corner.y(), w, h)
        if view.contains(rect) and not overlaps(rect, polylines, boxes):
            return corner
    return None


def least_covered(size: tuple[float, float], view: QRectF, candidates: list[QPointF],
                  polylines: list[tuple[np.ndarray, np.ndarray]],
                  boxes: list[QRectF]) -> QPointF:
    """The candidate inside ``view`` whose box covers the fewest lines and points (the
    first candidate if none is inside)."""
    w, h = size
    boxes = _boxes_array(boxes)
    inside = [c for c in candidates if view.contains(QRectF(c.x(), c.y(), w, h))]
    if not inside:
        return candidates[0]
    return min(inside, key=lambda c: overlaps(QRectF(c.x(), c.y(), w, h), polylines, boxes))
