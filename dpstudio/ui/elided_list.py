"""A ticked list whose names always fit: elided in the middle, the full name in a tooltip.

The Models form is narrow (the plot beside it needs the width), so a long column name
("hours_studied_per_week  (number)") would otherwise run past the list's edge behind a
horizontal scrollbar. :class:`ElidedList` keeps each row's full text under
:data:`FULL_TEXT` and shows it elided in the middle to the viewport's width (the start
and the end of a name tell names apart better than its start alone); a row whose text is
shortened still gives its full text in its tooltip. It refits on every resize.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyleOptionViewItem,
    QWidget,
)

__all__ = ["FULL_TEXT", "TIP_TEXT", "ElidedList"]

#: The item role holding a row's full text (what is shown when it fits).
FULL_TEXT = Qt.ItemDataRole.UserRole + 1
#: The item role holding the row's own tooltip sentence (without the full text).
TIP_TEXT = Qt.ItemDataRole.UserRole + 2


class ElidedList(QListWidget):
    """A :class:`QListWidget` of checkable rows shown whole or elided in the middle.

    Parameters
    ----------
    parent : QWidget, optional
        The Qt parent.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)

    def add(self, text: str, key: str, tip: str = "") -> QListWidgetItem:
        """Append a checkable, unticked row showing ``text`` for ``key`` (its UserRole).

        Parameters
        ----------
        text : str
            The full text.
        key : str
            What the row stands for (``Qt.UserRole``).
        tip : str, optional
            The row's tooltip sentence (the full text is put before it when the row is
            elided and the sentence does not contain it).

        Returns
        -------
        QListWidgetItem
        """
        item = QListWidgetItem(text, self)
        item.setData(Qt.ItemDataRole.UserRole, key)
        item.setData(FULL_TEXT, text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Unchecked)
        self.set_tip(item, tip)
        return item

    def set_tip(self, item: QListWidgetItem, tip: str) -> None:
        """Give ``item`` the tooltip ``tip`` (with its full text first when elided)."""
        item.setData(TIP_TEXT, tip)
        self._fit(item, self._room())

    def text_room(self) -> int:
        """The pixels a row's text may take: the viewport less the check box and margins."""
        return self._room()

    def refit(self) -> None:
        """Show every row whole or elided to the current width (signals blocked: only the
        shown text changes, not what is ticked)."""
        room = self._room()
        blocked = self.blockSignals(True)
        try:
            for i in range(self.count()):
                self._fit(self.item(i), room)
        finally:
            self.blockSignals(blocked)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.refit()

    def _room(self) -> int:
        # The style's text rectangle of a checkable row as wide as the viewport, less the
        # margin the item delegate keeps on each side of the text.
        opt = QStyleOptionViewItem()
        self.initViewItemOption(opt)
        opt.rect = QRect(0, 0, self.viewport().width(), self.fontMetrics().height())
        opt.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
        style = self.style()
        text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, self)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self) + 1
        return max(text.width() - 2 * margin, 24)

    def _fit(self, item: QListWidgetItem, room: int) -> None:
        full = str(item.data(FULL_TEXT) or item.text())
        shown = self.fontMetrics().elidedText(full, Qt.TextElideMode.ElideMiddle, room)
        blocked = self.blockSignals(True)
        try:
            if item.text() != shown:
                item.setText(shown)
            tip = str(item.data(TIP_TEXT) or "")
            # The tooltip always gives the full text: the caller's sentence when the row
            # shows it whole or the sentence names it, else the full text before it.
            whole = shown == full or full in tip
            item.setToolTip(tip if tip and whole else f"{full}: {tip}" if tip else full)
        finally:
            self.blockSignals(blocked)
