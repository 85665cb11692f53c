"""The schema panel's table model and its undo command.

:class:`SchemaModel` holds one :class:`~dpstudio.ui.schema_parsing.Row` per column and
answers the view only for the rows it paints (a 5,000-column file opens as fast as a
5-column one); edits go through the panel's editor callback, and every accepted one is a
:class:`RowEdit` on the panel's undo stack.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QUndoCommand

from dpstudio.data.schema import ColumnType
from dpstudio.ui.schema_parsing import Row, format_bound, format_categories, shown_bound
from dpstudio.ui.style import current_palette
from dpstudio.ui.table_model import elide_name, name_tooltip

__all__ = [
    "COL_DOMAIN",
    "COL_NAME",
    "COL_TYPE",
    "HEADERS",
    "NOT_APPLICABLE",
    "UNDECLARED",
    "RowEdit",
    "SchemaModel",
]

HEADERS = ("Column", "Type", "Declared")
COL_NAME, COL_TYPE, COL_DOMAIN = range(3)

UNDECLARED = "undeclared"
NOT_APPLICABLE = "—"

_Index = QModelIndex | QPersistentModelIndex


class SchemaModel(QAbstractTableModel):
    """Rows of :class:`Row`; edits go through ``editor(row, field, value) -> bool``.

    The "Declared" cell's edit value is ``(lower, upper)`` texts for a numeric column
    (field ``"bounds"``) and the comma-separated categories for a categorical one.
    """

    def __init__(self, editor: Callable[[int, str, Any], bool], parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self._editor = editor

    @property
    def rows(self) -> list[Row]:
        return list(self._rows)

    def set_rows(self, rows: list[Row]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def set_row(self, i: int, row: Row) -> None:
        self._rows[i] = row
        self.dataChanged.emit(self.index(i, 0), self.index(i, len(HEADERS) - 1))

    def replace_rows(self, rows: list[Row]) -> None:
        """Same columns, new rows: one repaint of what is shown, no reset of the view."""
        if len(rows) != len(self._rows):
            raise ValueError("replace_rows keeps the number of rows")
        self._rows = list(rows)
        if rows:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(rows) - 1, len(HEADERS) - 1))

    def row_at(self, i: int) -> Row:
        """Row ``i`` (no copy of the whole list, unlike :attr:`rows`)."""
        return self._rows[i]

    def row_of(self, name: str) -> int:
        for i, row in enumerate(self._rows):
            if row.spec.name == name:
                return i
        raise KeyError(name)

    # -- Qt ---------------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                "The column's name in the data",
                "How the mechanisms read the column (double-click to change)",
                "Public bounds (numeric) or categories (categorical), declared from domain "
                "knowledge — double-click to edit",
            )[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if self._field(self._rows[index.row()], index.column()) is not None:
            base |= Qt.ItemFlag.ItemIsEditable
        return base

    @staticmethod
    def _field(row: Row, column: int) -> str | None:
        """The field a cell edits, or ``None`` if it is read-only."""
        if column == COL_TYPE:
            return "type"
        if column == COL_DOMAIN:
            if row.spec.type is ColumnType.NUMERIC:
                return "bounds"
            if row.spec.type is ColumnType.CATEGORICAL:
                return "categories"
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == Qt.ItemDataRole.EditRole:
            return self._edit_value(row, column)
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleDescriptionRole):
            return self._tooltip(row, column)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._foreground(row, column)
        if role == Qt.ItemDataRole.BackgroundRole:
            if column == COL_DOMAIN and self._state(row) in ("undeclared", "half"):
                tint = QColor(current_palette().warning)
                tint.setAlpha(34)
                return tint
            return None
        if role == Qt.ItemDataRole.FontRole:
            guessed = column == COL_TYPE and not row.explicit
            pending = column == COL_DOMAIN and self._state(row) in ("undeclared", "half")
            if guessed or pending:
                font = QFont()
                font.setItalic(True)
                return font
            return None
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        field_name = self._field(self._rows[index.row()], index.column())
        if field_name is None:
            return False
        return self._editor(index.row(), field_name, value)

    # -- presentation -------------------------------------------------------------------------

    @staticmethod
    def _state(row: Row) -> str:
        """The declared domain: "na", "declared", "undeclared" or "half" (one bound)."""
        kind = row.spec.type
        if kind is ColumnType.NUMERIC:
            if row.spec.bounds is not None:
                return "declared"
            return "half" if row.half_declared else "undeclared"
        if kind is ColumnType.CATEGORICAL:
            return "declared" if row.spec.categories else "undeclared"
        return "declared" if kind is ColumnType.BOOLEAN else "na"

    def _display(self, row: Row, column: int) -> str:
        spec = row.spec
        if column == COL_NAME:
            return elide_name(spec.name)  # bounded: Qt lays out the whole text per paint
        if column == COL_TYPE:
            return spec.type.label
        state = self._state(row)
        if state == "na":
            return NOT_APPLICABLE
        if state == "undeclared":
            return UNDECLARED
        if spec.type is ColumnType.NUMERIC:
            return f"{shown_bound(row.lower)} – {shown_bound(row.upper)}"
        return ", ".join(spec.categories)

    def _edit_value(self, row: Row, column: int) -> Any:
        if column == COL_TYPE:
            return row.spec.type.label
        if column == COL_DOMAIN:
            if row.spec.type is ColumnType.NUMERIC:
                return (format_bound(row.lower), format_bound(row.upper))
            return format_categories(row.spec.categories) if row.spec.categories else ""
        return row.spec.name

    def _tooltip(self, row: Row, column: int) -> str:
        spec = row.spec
        if column == COL_NAME:
            full = name_tooltip(spec.name)
            return f"{full}\n{spec.description}" if spec.description else full
        if column == COL_TYPE:
            if row.explicit:
                return f"{spec.type.label} (declared)"
            return f"{spec.type.label}: guessed from the data — confirm or change it"
        state = self._state(row)
        if state == "na":
            return "Free text: not used by the mechanisms"
        if state == "undeclared":
            what = "bounds" if spec.type is ColumnType.NUMERIC else "categories"
            return f"No public {what} declared yet: double-click to declare them"
        if state == "half":
            missing = "upper" if row.upper is None else "lower"
            return f"Declare the {missing} bound too: a numeric column needs both"
        if spec.type is ColumnType.CATEGORICAL:
            return "Declared categories:\n" + "\n".join(spec.categories)
        if spec.type is ColumnType.BOOLEAN:
            return "A yes/no column: its categories are always yes and no"
        return f"Declared bounds {spec.domain_text()}: values outside are clipped"

    def _foreground(self, row: Row, column: int) -> QColor | None:
        palette = current_palette()
        if column == COL_DOMAIN:
            state = self._state(row)
            if state in ("undeclared", "half"):
                return QColor(palette.warning)
            if state == "na" or row.spec.type is ColumnType.BOOLEAN:
                return QColor(palette.muted)
        if column == COL_TYPE and not row.explicit:
            return QColor(palette.muted)
        if column == COL_NAME and row.spec.type is ColumnType.TEXT:
            return QColor(palette.muted)
        return None


class RowEdit(QUndoCommand):
    """One accepted edit of a row: ``apply(row index, row)`` sets the row after or before."""

    def __init__(self, apply: Callable[[int, Row], None], row: int, before: Row, after: Row,
                 text: str) -> None:
        super().__init__(text)
        self._apply, self._row, self._before, self._after = apply, row, before, after

    def redo(self) -> None:
        self._apply(self._row, self._after)

    def undo(self) -> None:
        self._apply(self._row, self._before)
