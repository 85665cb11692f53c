"""The schema panel's table model and its undo command.

:class:`SchemaModel` holds one :class:`~dpstudio.ui.schema_parsing.Row` per column and
answers the view only for the rows it paints (a 5,000-column file opens as fast as a
5-column one); edits go through the panel's editor callback, and every accepted one is a
:class:`RowEdit` on the panel's undo stack.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QUndoCommand

from dpstudio.data.dataset import Dataset
from dpstudio.data.schema import ColumnSpec, ColumnType, Schema, Source
from dpstudio.ui.schema_parsing import (
    Row,
    format_bound,
    format_categories,
    format_labels,
    missing_text,
    shown_bound,
)
from dpstudio.ui.style import current_palette
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name, name_tooltip

__all__ = [
    "COL_DOMAIN",
    "COL_NAME",
    "COL_TYPE",
    "HEADERS",
    "NOT_APPLICABLE",
    "UNDECLARED",
    "RowEdit",
    "SchemaModel",
    "source_text",
    "summary_text",
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
        self._saved: dict[str, ColumnSpec] = {}

    def set_saved(self, saved: Schema | None) -> None:
        """The declarations as the schema file holds them (what "saved" means)."""
        self._saved = {spec.name: spec for spec in saved} if saved is not None else {}
        if self._rows:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(self._rows) - 1, len(HEADERS) - 1))

    def source(self, row: Row) -> Source:
        """Where ``row``'s declaration comes from: guessed, declared by the analyst and not
        saved, or as saved in the schema file."""
        saved = self._saved.get(row.spec.name)
        if saved is not None:  # in the file: as the file holds it, or changed since
            return (Source.SAVED if saved == row.spec and not row.half_declared
                    else Source.DECLARED)
        return Source.DECLARED if row.explicit else Source.GUESSED

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
            if row.spec.type is ColumnType.IDENTIFIER:
                return "max_rows"
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
            # Guessed: the type, and a domain the type implies (yes/no, 0/1 codes).
            guessed = (column in (COL_TYPE, COL_DOMAIN)
                       and self.source(row) is Source.GUESSED)
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
        if kind is ColumnType.IDENTIFIER:
            return "declared" if row.spec.max_rows is not None else "undeclared"
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
            shown = f"{shown_bound(row.lower)} – {shown_bound(row.upper)}"
            missing = missing_text(row)
            return f"{shown} · {missing}" if missing else shown
        if spec.type is ColumnType.IDENTIFIER:
            return spec.domain_text()  # "up to k rows per person"
        if spec.labels:
            return format_labels(spec.labels, spec.categories)
        return ", ".join(spec.categories)

    def _edit_value(self, row: Row, column: int) -> Any:
        if column == COL_TYPE:
            return row.spec.type.label
        if column == COL_DOMAIN:
            if row.spec.type is ColumnType.NUMERIC:
                return (format_bound(row.lower), format_bound(row.upper))
            if row.spec.type is ColumnType.IDENTIFIER:
                return "" if row.spec.max_rows is None else str(row.spec.max_rows)
            return format_categories(row.spec.categories) if row.spec.categories else ""
        return row.spec.name

    def _tooltip(self, row: Row, column: int) -> str:
        spec = row.spec
        if column == COL_NAME:
            full = name_tooltip(spec.name)
            return f"{full}\n{spec.description}" if spec.description else full
        source = self.source(row)
        if column == COL_TYPE:
            if source is Source.GUESSED:
                return f"{spec.type.label}: guessed from the data — confirm or change it"
            return f"{spec.type.label} ({source.label})"
        state = self._state(row)
        if state == "na":
            return "Free text: not used by the mechanisms"
        if state == "undeclared" and spec.type is ColumnType.IDENTIFIER:
            return ("Identifies a person: declare the most rows one person may have "
                    "(double-click, e.g. 5); releases then protect people, not rows")
        if spec.type is ColumnType.IDENTIFIER:
            return (f"Identifies a person: at most {spec.max_rows} rows each (declared; rows "
                    f"beyond are dropped at random before a release) ({source.label})")
        if state == "undeclared":
            what = "bounds" if spec.type is ColumnType.NUMERIC else "categories"
            return f"No public {what} declared yet: double-click to declare them"
        if state == "half":
            missing = "upper" if row.upper is None else "lower"
            return (f"{missing.capitalize()} bound missing: a numeric column needs both "
                    "(type both in one field, e.g. 18-65, or Tab to the other)")
        where = f" ({source.label})"
        if source is Source.GUESSED and spec.type is ColumnType.CATEGORICAL:
            return (f"Guessed: the column holds codes {', '.join(spec.categories)}, shown as "
                    "they are — confirm them, or name them with Label values…")
        if spec.type is ColumnType.CATEGORICAL:
            shown = [f"{c} = {spec.label_of(c)}" if spec.label_of(c) != c else c
                     for c in spec.categories]
            return f"Declared categories{where}:\n" + "\n".join(shown)
        if spec.type is ColumnType.BOOLEAN:
            return ("A yes/no column: its categories are always yes and no (1, true and y "
                    f"are read as yes; 0, false and n as no){where}")
        return f"Declared bounds {spec.domain_text()}{where}: values outside are clipped"

    def _foreground(self, row: Row, column: int) -> QColor | None:
        palette = current_palette()
        if column == COL_DOMAIN:
            state = self._state(row)
            if state in ("undeclared", "half"):
                return QColor(palette.warning)
            if (state == "na" or row.spec.type is ColumnType.BOOLEAN
                    or self.source(row) is Source.GUESSED):
                return QColor(palette.muted)
        if column == COL_TYPE and self.source(row) is Source.GUESSED:
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


def source_text(row: Row, source: Source, file_name: str) -> str:
    """Where a column's declaration comes from, as rich text for the line under the table.

    Parameters
    ----------
    row : Row
        The column's row.
    source : Source
        Its source (:meth:`SchemaModel.source`).
    file_name : str
        The schema file's name (``survey.csv.schema.json``).

    Returns
    -------
    str
        E.g. "<b>age</b>: declared by you, unsaved — Save declarations (Ctrl+S) writes it
        to survey.csv.schema.json".
    """
    palette = current_palette()
    shown = html.escape(elide_name(row.spec.name, PHRASE_CHARS))
    file_name = html.escape(file_name)
    if source is Source.GUESSED:
        words = ("type guessed from the data (free text: nothing to declare)"
                 if row.spec.type is ColumnType.TEXT else
                 "guessed from the data — confirm the type or declare its domain")
    elif source is Source.DECLARED:
        words = (f"<span style='color:{palette.warning}'>{source.label}</span> — "
                 f"Save declarations (Ctrl+S) writes it to {file_name}")
    else:
        words = f"{source.label} ({file_name})"
    return f"<b>{shown}</b>: {words}"


def summary_text(dataset: Dataset | None, rows: list[Row], dirty: bool) -> str:
    """The panel's heading as rich text: the file, its rows, how many columns are still
    undeclared, unsaved changes.

    Parameters
    ----------
    dataset : Dataset or None
    rows : list of Row
        The table's rows.
    dirty : bool
        Whether there are unsaved changes.

    Returns
    -------
    str
    """
    palette = current_palette()
    if dataset is None:
        return f"<span style='color:{palette.muted}'>No dataset open</span>"
    usable = [r for r in rows if r.spec.type is not ColumnType.TEXT]
    missing = len(usable) - sum(r.spec.is_declared for r in usable)
    from dpstudio.ui.folder_open import rows_phrase, sidecar_of

    parts = [rows_phrase(dataset)]  # a folder's rows, never its preview's
    if missing:
        parts.append(f"<span style='color:{palette.warning}'>{missing:,} of "
                     f"{len(usable):,} columns undeclared</span>")
    else:
        parts.append(f"all {len(usable):,} columns declared")
    if dirty:
        parts.append(f"<span style='color:{palette.warning}'>unsaved changes</span>")
    elif dataset.declared is None and not any(r.explicit for r in rows):
        parts.append(f"no {sidecar_of(dataset).name} yet")
    return (f"<b>{dataset.name}</b><br><span style='color:{palette.muted}'>"
            + " · ".join(parts) + "</span>")
