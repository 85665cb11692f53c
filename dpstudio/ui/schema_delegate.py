"""The schema panel's cell editors: a combo box for a column's type, two fields for a
numeric column's bounds, a line of categories for a categorical one.

An editor exists only while a cell is edited (:class:`SchemaDelegate` makes it); the
model's rules decide whether the typed value is accepted.
"""

from __future__ import annotations

from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QStyledItemDelegate,
    QWidget,
)

from dpstudio.ui.schema_model import COL_TYPE
from dpstudio.ui.schema_parsing import TYPE_LABELS

__all__ = ["BoundsEditor", "SchemaDelegate"]

_Index = QModelIndex | QPersistentModelIndex


class BoundsEditor(QWidget):
    """Two fields, lower – upper; ``done`` when Enter is pressed or focus leaves both.

    Tab in the lower field moves to the upper one (and Shift+Tab back): the table would
    otherwise take the Tab, close the editor and leave the upper bound undeclared. Both
    bounds may also be typed in one field ("18-65", "18–65", "18, 65").
    """

    done = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAutoFillBackground(True)
        self.cancelled = False
        self.lower = QLineEdit(self)
        self.upper = QLineEdit(self)
        self.lower.setPlaceholderText("lower")
        self.upper.setPlaceholderText("upper")
        self.lower.setToolTip("Lower bound — Tab to the upper one, or type both: 18-65")
        self.upper.setToolTip("Upper bound — Enter declares both")
        dash = QLabel("–", self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addWidget(self.lower, 1)
        layout.addWidget(dash)
        layout.addWidget(self.upper, 1)
        self.setFocusProxy(self.lower)
        for edit in (self.lower, self.upper):
            edit.returnPressed.connect(self.done)
            edit.installEventFilter(self)

    def texts(self) -> tuple[str, str]:
        return (self.lower.text(), self.upper.text())

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.FocusOut:
            QTimer.singleShot(0, self._maybe_done)
        elif event.type() == QEvent.Type.KeyPress:
            key = event.key()
            if key == Qt.Key.Key_Escape:
                self.cancelled = True
            elif obj is self.lower and key == Qt.Key.Key_Tab and not event.modifiers() & (
                    Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier):
                self._move_to(self.upper)
                return True
            elif obj is self.upper and (key == Qt.Key.Key_Backtab or (
                    key == Qt.Key.Key_Tab
                    and event.modifiers() & Qt.KeyboardModifier.ShiftModifier)):
                self._move_to(self.lower)
                return True
        return False

    def _move_to(self, edit: QLineEdit) -> None:
        edit.setFocus(Qt.FocusReason.TabFocusReason)
        edit.selectAll()

    def _maybe_done(self) -> None:
        if not shiboken6.isValid(self):
            return
        focus = QApplication.focusWidget()
        if focus is None or not self.isAncestorOf(focus):
            self.done.emit()


def _edit_value(index: _Index) -> Any:
    """The model's edit value, asked of the Python model directly: ``QModelIndex.data`` in
    PySide6 6.12.0 drops a reference to ``None`` whenever a role has no value."""
    return index.model().data(index, Qt.ItemDataRole.EditRole)


class SchemaDelegate(QStyledItemDelegate):
    """Type: a combo box applied as soon as a type is picked. Declared: the bounds editor
    for a numeric column, a line edit of categories for a categorical one."""

    def createEditor(self, parent: QWidget, option: Any, index: _Index) -> QWidget:
        if index.column() == COL_TYPE:
            combo = QComboBox(parent)
            combo.addItems(list(TYPE_LABELS.values()))
            combo.activated.connect(lambda _i, c=combo: self._commit(c))
            return combo
        if isinstance(_edit_value(index), tuple):
            bounds = BoundsEditor(parent)
            bounds.done.connect(lambda b=bounds: self._commit(b))
            return bounds
        editor = QLineEdit(parent)
        identifier = _edit_value(index.siblingAtColumn(COL_TYPE)) == "identifier"
        editor.setPlaceholderText("rows per person, e.g. 5" if identifier
                                  else "e.g. North, South, East, West")
        return editor

    def _commit(self, editor: QWidget) -> None:
        if not shiboken6.isValid(editor) or getattr(editor, "_closing", False):
            return
        editor._closing = True
        # The view takes the focus back only from an editor that has it itself (or its
        # focus proxy): Enter in the bounds editor's upper field would otherwise leave
        # focus to whatever follows the hidden editor (a plot), not the edited row.
        view = self.parent()
        focus = QApplication.focusWidget()
        keep = isinstance(view, QAbstractItemView) and focus is not None and (
            focus is editor or editor.isAncestorOf(focus))
        self.commitData.emit(editor)
        if keep and shiboken6.isValid(view):
            view.setFocus(Qt.FocusReason.OtherFocusReason)
        self.closeEditor.emit(editor, QStyledItemDelegate.EndEditHint.NoHint)

    def destroyEditor(self, editor: QWidget, index: _Index) -> None:  # noqa: N802
        editor._closing = True  # the view closed it: a late focus-out must not commit
        super().destroyEditor(editor, index)

    def setEditorData(self, editor: QWidget, index: _Index) -> None:
        value = _edit_value(index)
        if isinstance(editor, QComboBox):
            editor.setCurrentText(value or "")
        elif isinstance(editor, BoundsEditor):
            lower, upper = value
            editor.lower.setText(lower)
            editor.upper.setText(upper)
            editor.lower.selectAll()
        elif isinstance(editor, QLineEdit):
            editor.setText(value or "")
            editor.selectAll()

    def setModelData(self, editor: QWidget, model: Any, index: _Index) -> None:
        value = _edit_value(index)
        if isinstance(editor, QComboBox):
            new: Any = editor.currentText()
        elif isinstance(editor, BoundsEditor):
            if editor.cancelled:
                return
            new = editor.texts()
        elif isinstance(editor, QLineEdit):
            new = editor.text()
        else:  # pragma: no cover
            return
        if new != value:
            model.setData(index, new, Qt.ItemDataRole.EditRole)

    def updateEditorGeometry(self, editor: QWidget, option: Any, index: _Index) -> None:
        rect = option.rect.adjusted(0, 0, 0, 0)
        if isinstance(editor, BoundsEditor):
            rect.setWidth(max(rect.width(), editor.fontMetrics().horizontalAdvance("0" * 16)))
        elif isinstance(editor, QComboBox):  # room for the longest type and the arrow
            rect.setWidth(max(rect.width(), editor.sizeHint().width()))
        editor.setGeometry(rect)
