"""Legends that are never cut: short names in the entries, the full names (and a curve's
assumptions) in their tooltips, and as many columns as the plot's width holds.
"""

from __future__ import annotations

import pyqtgraph as pg

from dpstudio.engine.registry import REGISTRY
from dpstudio.ui.texts import short_mechanism

__all__ = ["entry_texts", "fit_columns", "full_name", "legend_name", "set_entry_tooltip"]


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


def fit_columns(legend: pg.LegendItem, width: float, most: int) -> int:
    """Lay the legend out in as many columns (up to ``most``) as ``width`` pixels hold;
    in one column, entries wider than ``width`` are cut with "…" (their tooltip has them
    whole), so the legend never pushes the plot past its widget.

    Returns
    -------
    int
        The columns used.
    """
    entries = [(sample, label) for sample, label in legend.items]
    if not entries:
        return legend.columnCount
    spacing = legend.layout.horizontalSpacing() if legend.layout is not None else 14
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
    # Only one column can be too wide; two columns fit by the test above.
    recut = False
    for (sample, label), full in zip(entries, widths, strict=True):
        if hasattr(label, "set_room"):
            cut = columns == 1 and full + pad > width
            before = label.room
            label.set_room(width - pad - sample.boundingRect().width() - spacing if cut
                           else None)
            recut = recut or label.room != before
    if columns != legend.columnCount:
        legend.setColumnCount(columns)
    elif recut:
        legend.updateSize()
    return columns
