"""What the legend tests check on a plot: every entry drawn whole, and its text's size."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontInfo, QTextCursor

ELLIPSIS = "…"


def cut_entries(plot) -> list[str]:
    """The legend entries of ``plot`` not drawn whole: less text than the entry's, an
    elision mark, or text outside the legend's box or the plot's widget."""
    legend = plot.getPlotItem().legend
    box = legend.sceneBoundingRect().adjusted(-0.5, -0.5, 0.5, 0.5)
    widget = QRectF(plot.rect()).adjusted(-0.5, -0.5, 0.5, 0.5)
    bad = []
    data = plot.getPlotItem().vb.sceneBoundingRect()
    if legend.isVisible() and box.top() < data.bottom():  # over the title or the data
        bad.append(f"legend {box.getRect()} over the data area {data.getRect()}")
    for _sample, label in legend.items:
        if not label.isVisible():
            continue
        shown = label.item.toPlainText()
        drawn = label.item.sceneBoundingRect()  # the text as drawn (wrapped or not)
        on_screen = plot.viewportTransform().mapRect(drawn)
        if shown != label.text or ELLIPSIS in shown:
            bad.append(f"{label.text!r} drawn as {shown!r}")
        elif not box.contains(drawn):
            bad.append(f"{label.text!r} {drawn.getRect()} outside the legend {box.getRect()}")
        elif not widget.contains(on_screen):
            bad.append(f"{label.text!r} {on_screen.getRect()} outside {plot.width()} px")
    return bad


def entry_pixels(label) -> int:
    """The pixel size of a legend entry's text as drawn (its rich text's font)."""
    cursor = QTextCursor(label.item.document())
    cursor.setPosition(1)
    return QFontInfo(cursor.charFormat().font()).pixelSize()
