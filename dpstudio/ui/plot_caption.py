"""A caption pinned under a plot, always shown: the plain-language sentence or the
assumptions a plot rests on, word-wrapped to the plot's width.

The plot's layout keeps room for it (a bottom margin), so it never covers the axis or the
legend. While presentation mode shows its own, larger caption on the same plot (a child
label named ``presentation_caption``), this one steps aside rather than overlap it.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel

__all__ = ["CAPTION_POINT_SIZE", "PlotCaption"]

CAPTION_POINT_SIZE = 9.0
#: Object name of presentation mode's caption label (ui/presentation.py).
PRESENTATION_CAPTION = "presentation_caption"


class PlotCaption(QLabel):
    """A word-wrapped caption under ``plot``; hidden while its text is empty.

    Parameters
    ----------
    plot : pyqtgraph.PlotWidget
        The plot it belongs to (its parent).
    text : str
        The caption.
    """

    MARGIN = 6

    def __init__(self, plot: pg.PlotWidget, text: str = "") -> None:
        super().__init__("", plot)
        self.setObjectName("plot_caption")
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.setTextFormat(Qt.TextFormat.PlainText)
        font = QFont(self.font())
        font.setPointSizeF(CAPTION_POINT_SIZE)
        font.setItalic(True)
        self.setFont(font)
        # No colour of its own: the application palette's text, which follows light/dark
        # as the plots' backgrounds do; transparent over the plot's background.
        self.setAutoFillBackground(False)
        self._plot = plot
        self._base_bottom = plot.getPlotItem().layout.getContentsMargins()[3]
        self._reserved = 0
        plot.installEventFilter(self)
        self.set_text(text)

    def text_shown(self) -> str:
        """The caption as shown ("" while hidden)."""
        return self.text() if self.isVisibleTo(self._plot) else ""

    def set_text(self, text: str) -> None:
        """Show ``text`` under the plot (nothing, and no room kept, for "")."""
        self.setText(str(text or ""))
        self.setToolTip(self.text())
        self._sync()

    def _presenting(self) -> bool:
        return any(not label.isHidden() and label is not self
                   for label in self._plot.findChildren(QLabel, PRESENTATION_CAPTION))

    def _sync(self) -> None:
        """Place the caption at the bottom of the plot, and keep room for it there."""
        layout = self._plot.getPlotItem().layout
        left, top, right, bottom = layout.getContentsMargins()
        if self._presenting():
            # Presentation mode's caption holds the bottom and its margin: step aside.
            self.hide()
            self._reserved = 0
            return
        if not self.text():
            self.hide()
            if self._reserved:
                layout.setContentsMargins(left, top, right, self._base_bottom)
                self._reserved = 0
            return
        width = max(50, self._plot.width() - 2 * self.MARGIN)
        height = self.heightForWidth(width)
        if height < 0:
            height = self.sizeHint().height()
        self.setGeometry(self.MARGIN, self._plot.height() - height - self.MARGIN, width,
                         height)
        reserved = height + 2 * self.MARGIN
        # The bottom margin is the plot's own (read once) plus this caption's room.
        if abs(bottom - (self._base_bottom + reserved)) > 0.5:
            layout.setContentsMargins(left, top, right, self._base_bottom + reserved)
        self._reserved = reserved
        self.show()
        self.raise_()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self._plot and event.type() in (
                QEvent.Type.Resize, QEvent.Type.ChildPolished, QEvent.Type.ChildRemoved,
                QEvent.Type.Show):
            self._sync()
        return False
