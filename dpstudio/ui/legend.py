"""Legends that are never cut: short names in the entries, the full names (and a curve's
assumptions) in their tooltips, as many columns as the plot's width holds, and in one
column an entry wider than the plot wrapped onto more lines.
"""

from __future__ import annotations

import re

import pyqtgraph as pg

from dpstudio.engine.registry import REGISTRY
from dpstudio.ui.texts import short_mechanism

__all__ = ["entry_texts", "fit_columns", "full_name", "legend_name", "scaled_size",
           "set_entry_tooltip", "uncut_names"]


def _parts(name: str, mechanism: str) -> tuple[str, str, str] | None:
    """(trust model, the mechanism's full label, what follows it) of a curve's name, or
    None where the name does not hold the mechanism's label."""
    if mechanism not in REGISTRY:
        return None
    label = REGISTRY.get(mechanism).label
    head, sep, tail = name.partition(": ")
    if not sep:
        return None
    # curve_name() may have cut the label itself ("Secure aggregation + distribu…").
    for shown in (label, label[:29].rstrip() + "…"):
        if tail.startswith(shown):
            return head, label, tail[len(shown):]
    return None


def legend_name(name: str, mechanism: str) -> str:
    """The legend's short form of a curve's name.

    Parameters
    ----------
    name : str
        The curve's name ("Shuffle: Invisibility cloak (multi-message) (bound)").
    mechanism : str
        Its mechanism's registry name.

    Returns
    -------
    str
        The same name with the mechanism's short name in place of its label
        ("Shuffle: Invisibility cloak (bound)"); ``name`` when it holds no label.
    """
    parts = _parts(name, mechanism)
    if parts is None:
        return name
    head, label, rest = parts
    return f"{head}: {short_mechanism(mechanism, label)}{rest}"


def full_name(name: str, mechanism: str) -> str:
    """A curve's name with its mechanism's whole label (for the entry's tooltip)."""
    parts = _parts(name, mechanism)
    return name if parts is None else f"{parts[0]}: {parts[1]}{parts[2]}"


def uncut_names(text: str) -> str:
    """``text`` with each mechanism label cut with "…" given whole.

    Parameters
    ----------
    text : str
        A curve's label, perhaps with a mechanism's label cut short ("K-ary randomized
        resp…: one report").

    Returns
    -------
    str
        The same with the whole label ("K-ary randomized response: one report"): a
        legend wraps a long entry, it need not cut it. A cut that matches no mechanism's
        label (or several) stays as it is.
    """
    out = text
    while True:
        head, sep, rest = out.partition("…")
        if not sep:
            return out
        # The cut label starts the text or follows a space, colon or parenthesis.
        starts = [0] + [i + 1 for i, c in enumerate(head) if c in " :("]
        found = None
        for start in starts:
            cut = head[start:].rstrip()
            labels = {info.label for info in REGISTRY} if len(cut) >= 4 else set()
            whole = [label for label in labels if label.startswith(cut) and label != cut]
            if len(whole) == 1:
                found = (start, whole[0])
                break
        if found is None:
            return out
        start, label = found
        out = head[:start] + label + rest


def scaled_size(size: str | None, factor: float, fallback: str = "8pt") -> str:
    """A legend's text size ``factor`` times larger, in its own unit.

    Parameters
    ----------
    size : str or None
        pyqtgraph's label size ("8pt", "11px"); None or unreadable for ``fallback``.
    factor : float
        How much larger (presentation mode's scale, 1.5).
    fallback : str
        The size of a legend that sets none (:func:`dpstudio.ui.plots.bottom_legend`'s).

    Returns
    -------
    str
        "12pt" for ("8pt", 1.5): the legend grows with the rest of the type, not less
        (its entries wrap where they no longer fit on one line).
    """
    match = re.fullmatch(r"\s*([0-9.]+)\s*(pt|px)\s*", str(size or ""))
    if match is None:
        match = re.fullmatch(r"\s*([0-9.]+)\s*(pt|px)\s*", fallback)
    value, unit = float(match.group(1)), match.group(2)
    return f"{value * float(factor):.3g}{unit}"


def _entry(legend: pg.LegendItem, item) -> tuple | None:
    for sample, label in legend.items:
        if sample.item is item:
            return sample, label
    return None


def set_entry_tooltip(legend: pg.LegendItem, item, tooltip: str) -> None:
    """Give the legend entry of ``item`` (its swatch and text) the tooltip ``tooltip``."""
    entry = _entry(legend, item)
    if entry is not None:
        for part in entry:
            part.setToolTip(tooltip)


def entry_texts(legend: pg.LegendItem) -> list[str]:
    """The texts of the legend's visible entries, in order."""
    return [label.text for sample, label in legend.items if label.isVisible()]


def _text_width(label) -> float:
    natural = getattr(label, "natural_width", None)
    if callable(natural):  # a FittingLabel: its whole text, not the part shown
        return float(natural())
    text = getattr(label, "item", None)
    return float(text.boundingRect().width() if text is not None
                 else label.boundingRect().width())


#: Pixels a wrapped entry's room must grow by before it is widened or unwrapped
#: (see :func:`_rooms`).
UNWRAP_MARGIN = 24.0


def _text_height(label, room: float | None) -> float:
    """The height of ``label``'s text wrapped to ``room`` pixels (None: on one line)."""
    text = getattr(label, "item", None)
    if text is None:
        return float(label.boundingRect().height())
    doc = text.document().clone()
    doc.setTextWidth(room if room is not None else -1.0)
    return float(doc.size().height())


def _rooms(entries, widths, width: float, columns: int, spacing: float, pad: float,
           equal: bool) -> list[float | None]:
    """Each entry's text room in ``columns`` columns: None where it fits on one line.
    Columns as wide as their widest entry (``equal`` False: all fit by then, or one
    column), else an equal share of ``width`` each."""
    share = (width - pad - spacing * (columns - 1)) / columns
    rooms: list[float | None] = []
    for (sample, label), full in zip(entries, widths, strict=True):
        cell = share if equal else width - pad
        # A wrapped entry widens (or unwraps) only by more than a margin: fewer lines
        # shorten the legend, which can give the axis more tick labels, narrow the
        # room and wrap it again, back and forth.
        old = getattr(label, "room", None)
        wraps = full > cell or (old is not None and full + UNWRAP_MARGIN > cell)
        room = cell - sample.boundingRect().width() - spacing if wraps else None
        if room is not None and old is not None and old < room < old + UNWRAP_MARGIN:
            room = old
        rooms.append(room)
    return rooms


def _height(entries, rooms, columns: int, gap: float) -> float:
    """The legend's height with these rooms: rows of ``columns`` entries, each as tall as
    its tallest text or swatch."""
    tall = [max(_text_height(label, room), sample.boundingRect().height())
            for (sample, label), room in zip(entries, rooms, strict=True)]
    rows = [max(tall[i:i + columns]) for i in range(0, len(tall), columns)]
    return sum(rows) + gap * (len(rows) - 1)


def fit_columns(legend: pg.LegendItem, width: float, most: int) -> int:
    """Lay the legend out in the columns (up to ``most``) that ``width`` pixels hold
    with the least height: as many as hold every entry on one line, or more with the
    longer entries wrapped where that makes the legend shorter (presentation mode's
    larger type); entries wider than their column wrap onto more lines (every word
    shown), so the legend never pushes the plot past its widget and never hides a word.

    Returns
    -------
    int
        The columns used.
    """
    entries = [(sample, label) for sample, label in legend.items]
    if not entries:
        return legend.columnCount
    spacing = legend.layout.horizontalSpacing() if legend.layout is not None else 14
    gap = legend.layout.verticalSpacing() if legend.layout is not None else 0
    # The legend's own margins, and a little room for rounding.
    left, _top, right, _bottom = (legend.layout.getContentsMargins()
                                  if legend.layout is not None else (0, 0, 0, 0))
    pad = max(left + right, 0) + 8
    # Each entry: its swatch, a spacing, its text (a label's geometry stretches to the
    # layout's column, so its text's own width); columns a spacing apart.
    widths = [sample.boundingRect().width() + spacing + _text_width(label)
              for sample, label in entries]
    columns = max(1, most)
    while columns > 1:
        # Column widths: the widest entry of each column (entries fill row by row).
        per = [max(widths[c::columns], default=0.0) for c in range(columns)]
        if sum(per) + spacing * (columns - 1) + pad <= width:
            break
        columns -= 1
    rooms = _rooms(entries, widths, width, columns, spacing, pad, equal=False)
    if columns < most:
        # More columns of equal width, their long entries wrapped, where that is shorter
        # by at least half a line (no wrapping for nothing).
        best = _height(entries, rooms, columns, gap)
        line = min(_text_height(label, None) for _s, label in entries)
        for more in range(columns + 1, max(1, most) + 1):
            wrapped = _rooms(entries, widths, width, more, spacing, pad, equal=True)
            if min((r for r in wrapped if r is not None), default=line * 4) < line * 4:
                break  # a column too narrow for a few words
            height = _height(entries, wrapped, more, gap)
            if height < best - line / 2:
                best, columns, rooms = height, more, wrapped
    recut = False
    for (_sample, label), room in zip(entries, rooms, strict=True):
        if hasattr(label, "set_room"):
            before = label.room
            label.set_room(room)
            recut = recut or label.room != before
    if columns != legend.columnCount:
        legend.setColumnCount(columns)
    elif recut:
        legend.updateSize()
    return columns
