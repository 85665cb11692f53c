"""A plot's "computing" mark: a small spinner and a word in a corner of the plot, shown
while one of the jobs drawing that plot runs.

A job that ends within :data:`SHOW_DELAY_MS` never shows the mark, so dragging the ε slider
(a trade-off job every few milliseconds) does not make it flicker; a slow job (the curves of
a million rows, the Monte-Carlo simulation) shows it until the job ends or is cancelled.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QWidget

from dpstudio.ui.style import MUTED

__all__ = ["SHOW_DELAY_MS", "BusyMark"]

#: A job shorter than this never shows the mark.
SHOW_DELAY_MS = 200
#: Margin between the mark and the corner of the widget it marks.
MARGIN = 6


class _Spinner(QWidget):
    """An arc turning while shown (a busy indicator that needs no image)."""

    STEP_MS = 80

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        side = max(10, self.fontMetrics().height() - 2)
        self.setFixedSize(side, side)
        self._angle = 0
        self._timer = QTimer(self)
        self._timer.setInterval(self.STEP_MS)
        self._timer.timeout.connect(self._turn)

    def showEvent(self, event) -> None:
        self._timer.start()
        super().showEvent(event)

    def hideEvent(self, event) -> None:
        self._timer.stop()
        super().hideEvent(event)

    def _turn(self) -> None:
        self._angle = (self._angle + 30) % 360
        self.update()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(QColor(MUTED), max(1.5, self.width() / 7))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        inset = pen.widthF()
        box = QRectF(self.rect()).adjusted(inset, inset, -inset, -inset)
        # Qt counts angles in 1/16 degree, counter-clockwise: a 270° arc turning clockwise.
        painter.drawArc(box, -self._angle * 16, 270 * 16)


class BusyMark(QFrame):
    """The "computing" mark of one widget (a plot): a child of it, kept in one corner.

    :meth:`set_running` says which of the widget's jobs run (``key`` → what it computes);
    the mark shows after :data:`SHOW_DELAY_MS` while any runs, says what in its tooltip,
    and hides as soon as none does. ``text`` is the word shown ("Computing…").

    ``beside``: a child of ``target`` (a button) to sit just left of instead of a corner;
    where the word does not fit there, the spinner alone is shown.
    """

    def __init__(self, target: QWidget, corner: Qt.Corner = Qt.Corner.TopLeftCorner,
                 text: str = "Computing…", beside: QWidget | None = None) -> None:
        super().__init__(target)
        self.setObjectName("busyMark")
        self.target, self.corner, self.beside = target, corner, beside
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(
            "#busyMark { background: rgba(255, 255, 255, 225); border: 1px solid #c8c8c8;"
            " border-radius: 4px; }")
        self.spinner = _Spinner(self)
        self.label = QLabel(text, self)
        self.label.setStyleSheet(f"color: {MUTED};")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 8, 2)
        layout.setSpacing(5)
        layout.addWidget(self.spinner)
        layout.addWidget(self.label)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self._running: dict[str, str] = {}
        self._show_timer = QTimer(self)
        self._show_timer.setSingleShot(True)
        self._show_timer.setInterval(SHOW_DELAY_MS)
        self._show_timer.timeout.connect(self._reveal)
        target.installEventFilter(self)
        if beside is not None:
            beside.installEventFilter(self)
        self.hide()

    @property
    def running(self) -> tuple[str, ...]:
        """What is being computed for the widget (the jobs' descriptions)."""
        return tuple(self._running.values())

    def set_running(self, key: str, what: str | None) -> None:
        """Job ``key`` runs (``what``: what it computes) or, with ``None``, has ended."""
        if what is None:
            self._running.pop(key, None)
        else:
            self._running[key] = what
        if not self._running:
            self._show_timer.stop()
            self.hide()
            return
        self.setToolTip("Computing " + ", ".join(self._running.values()) + "…")
        if not self.isVisibleTo(self.target) and not self._show_timer.isActive():
            self._show_timer.start()

    def clear(self) -> None:
        """No job runs any more (all cancelled)."""
        self._running.clear()
        self.set_running("", None)

    def _reveal(self) -> None:
        if self._running:
            self._place()
            self.show()
            self.raise_()

    def _place(self) -> None:
        if self.beside is not None:
            self._place_beside(self.beside)
            return
        self.adjustSize()
        area = self.target.rect()
        left = self.corner in (Qt.Corner.TopLeftCorner, Qt.Corner.BottomLeftCorner)
        top = self.corner in (Qt.Corner.TopLeftCorner, Qt.Corner.TopRightCorner)
        x = MARGIN if left else area.width() - self.width() - MARGIN
        y = MARGIN if top else area.height() - self.height() - MARGIN
        self.move(max(0, x), max(0, y))

    def _place_beside(self, anchor: QWidget) -> None:
        origin = anchor.mapTo(self.target, anchor.rect().topLeft())
        self.label.show()
        self.adjustSize()
        if self.width() > origin.x() - MARGIN:
            self.label.hide()  # the spinner alone (the tooltip still says what)
            self.adjustSize()
        x = origin.x() - self.width() - MARGIN
        y = origin.y() + (anchor.height() - self.height()) // 2
        self.move(max(0, x), max(0, y))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (watched in (self.target, self.beside)
                and event.type() in (QEvent.Type.Resize, QEvent.Type.Move)):
            self._place()
        return False
