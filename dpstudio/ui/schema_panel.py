"""The schema panel: each column's type and its *declared* public bounds or categories.

An editable table (Column · Type · Declared). Double-click a type for a combo box, a
numeric column's domain for its lower and upper bound editors, a categorical one's for
its categories (comma-separated; quote a name with a comma). Every accepted edit is
one command on a :class:`QUndoStack` (Ctrl+Z / Ctrl+Shift+Z while the panel has focus);
a refused one (reversed or non-finite bounds, a repeated category, …) leaves the schema
as it was and says why in a line under the table. "Save declarations" (Ctrl+S) writes
the sidecar ``<data>.schema.json`` atomically.

Bounds and categories are public facts the analyst declares; nothing here reads the
data's values ("Help me choose bounds" shows guidance by the column's *name*). Each
change emits :attr:`SchemaPanel.schema_changed` with the whole current :class:`Schema`.

The table is a model/view: nothing is made per column up front, the view asks the model
only for the rows it paints, and an editor exists only while a cell is edited, so a
5,000-column file opens as fast as a 5-column one. Names are shown elided (a header can
hold a 100,000-character name) with the full name in the tooltip.
"""

from __future__ import annotations

import csv
import html
import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import shiboken6
from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QColor, QFont, QKeySequence, QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSizePolicy,
    QStyledItemDelegate,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from dpstudio.data.dataset import Dataset
from dpstudio.data.errors import DataError, cap_message
from dpstudio.data.schema import ColumnSpec, ColumnType, Schema, save_schema, sidecar_path
from dpstudio.ui.style import current_palette
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name, name_tooltip

__all__ = [
    "BOUNDS_GUIDANCE",
    "BoundsEditor",
    "HEADERS",
    "BoundsHelpDialog",
    "SchemaModel",
    "SchemaPanel",
    "edit_row",
    "suggest_bounds",
]

HEADERS = ("Column", "Type", "Declared")
COL_NAME, COL_TYPE, COL_DOMAIN = range(3)

UNDECLARED = "undeclared"
NOT_APPLICABLE = "—"
TYPE_LABELS = {t: t.label for t in ColumnType}

_Index = QModelIndex | QPersistentModelIndex
_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")


# --- one row of the table, and the pure editing rules --------------------------------------


@dataclass(frozen=True)
class Row:
    """A column's spec as declared so far.

    ``draft_lower``/``draft_upper`` hold a bound typed while the other is still missing
    (the spec then has no bounds: a column needs both). ``explicit``: the type comes from
    the sidecar or the analyst, not a guess. ``stash`` keeps the domain a column had
    under another type, so switching the type back restores it.
    """

    spec: ColumnSpec
    explicit: bool = False
    draft_lower: float | None = None
    draft_upper: float | None = None
    stash: tuple[ColumnSpec, ...] = field(default=())

    @property
    def lower(self) -> float | None:
        return self.spec.lower if self.spec.bounds is not None else self.draft_lower

    @property
    def upper(self) -> float | None:
        return self.spec.upper if self.spec.bounds is not None else self.draft_upper

    @property
    def half_declared(self) -> bool:
        return self.spec.bounds is None and (
            self.draft_lower is not None or self.draft_upper is not None
        )


def parse_bound(text: str, column: str, which: str) -> float | None:
    """A bound typed by the analyst: a finite number, or ``None`` for an empty cell."""
    text = str(text).strip().replace("\u2212", "-")  # a typographic minus
    if not text:
        return None
    candidate = text.replace(",", "") if _THOUSANDS_RE.fullmatch(text) else text
    try:
        value = float(candidate.replace("_", ""))
    except ValueError:
        raise DataError(f"column '{column}': the {which} bound must be a number, not "
                        f"'{text}'") from None
    if not math.isfinite(value):
        raise DataError(f"column '{column}': the {which} bound must be finite, not {text}")
    return value


def parse_categories(text: str) -> tuple[str, ...]:
    """Comma-separated names; quote a name that contains a comma: ``"A, B", C``."""
    text = str(text).strip()
    if not text:
        return ()
    fields = next(csv.reader([text], skipinitialspace=True))
    return tuple(f.strip() for f in fields if f.strip())


def format_categories(categories: tuple[str, ...]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(categories)
    return buffer.getvalue().replace(",", ", ").replace('", "', '", "')


def format_bound(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def _shown(value: float | None) -> str:
    """A bound for reading: thousands separated ("250,000"), "?" if not declared."""
    if value is None:
        return "?"
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:,g}"


def edit_row(row: Row, field_name: str, value: Any) -> Row | None:
    """``row`` with one field set to ``value`` as typed; ``None`` if nothing changes.

    Raises :class:`DataError` (one line, naming the column) for a value that cannot be
    declared; ``row`` is never modified.
    """
    spec = row.spec
    name = spec.name
    shown = elide_name(name, PHRASE_CHARS)  # for messages: a name can be 100,000 long
    if field_name == "type":
        kind = _parse_type(value, shown)
        if kind is spec.type:
            return None if row.explicit else replace(row, explicit=True)
        stash = tuple(s for s in row.stash if s.type is not spec.type and s.type is not kind)
        if spec.is_declared and spec.type is not ColumnType.BOOLEAN:
            stash += (spec,)
        restored = next((s for s in row.stash if s.type is kind), None)
        new_spec = restored or ColumnSpec(name, kind, description=spec.description)
        return Row(spec=new_spec, explicit=True, stash=stash)

    if field_name in ("lower", "upper", "bounds"):
        if spec.type is not ColumnType.NUMERIC:
            raise DataError(f"column '{shown}': bounds only apply to numeric columns, "
                            f"not {spec.type.label}")
        if field_name == "bounds":  # both at once: (lower text, upper text)
            lower_text, upper_text = value
            lower = parse_bound(lower_text, shown, "lower")
            upper = parse_bound(upper_text, shown, "upper")
        else:
            new = parse_bound(value, shown, field_name)
            lower = new if field_name == "lower" else row.lower
            upper = new if field_name == "upper" else row.upper
        if (lower, upper) == (row.lower, row.upper):
            return None
        if lower is not None and upper is not None:
            bounded = ColumnSpec(name, spec.type, lower=lower, upper=upper,
                                 description=spec.description)  # raises if reversed
            return replace(row, spec=bounded, explicit=True, draft_lower=None, draft_upper=None)
        plain = ColumnSpec(name, spec.type, description=spec.description)
        return replace(row, spec=plain, explicit=True, draft_lower=lower, draft_upper=upper)

    if field_name == "categories":
        if spec.type is not ColumnType.CATEGORICAL:
            raise DataError(f"column '{shown}': categories only apply to categorical columns")
        categories = parse_categories(value)
        if categories == spec.categories:
            return None
        new_spec = ColumnSpec(name, spec.type, categories=categories,
                              description=spec.description)  # raises on repeats
        return replace(row, spec=new_spec, explicit=True)

    raise ValueError(f"unknown field {field_name!r}")


def _parse_type(value: Any, column: str) -> ColumnType:
    if isinstance(value, ColumnType):
        return value
    text = str(value).strip().lower()
    for kind, label in TYPE_LABELS.items():
        if text == label:
            return kind
    return ColumnType.parse(text, column)


def describe_row(row: Row) -> str:
    """What a column declares, for messages: "bounds 0 – 120", "undeclared", …"""
    spec = row.spec
    if spec.type is ColumnType.NUMERIC:
        return f"bounds {spec.domain_text()}" if spec.bounds else "no bounds"
    if spec.type is ColumnType.CATEGORICAL:
        return f"categories {spec.domain_text()}" if spec.categories else "no categories"
    return spec.type.label


# --- guidance for bounds (by name and domain knowledge only) -------------------------------

#: (pattern on the column name, lower, upper, reason) — public facts about measurements.
BOUNDS_GUIDANCE: tuple[tuple[str, float, float, str], ...] = (
    (r"(^|_)age($|_)|years?_old", 0, 120, "human ages lie between 0 and 120"),
    (r"per_?week|weekly_hours|hours_week", 0, 168, "a week has 168 hours"),
    (r"per_?day|daily_hours|hours_day", 0, 24, "a day has 24 hours"),
    (r"percent|pct|percentage", 0, 100, "a percentage lies between 0 and 100"),
    (r"proportion|fraction|probability|(^|_)prob($|_)|(^|_)share($|_)", 0, 1,
     "a proportion lies between 0 and 1"),
    (r"(^|_)gpa($|_)", 0, 4, "grade point averages are on a 0–4 scale (check your institution's)"),
    (r"(^|_)bmi($|_)", 12, 60, "body-mass index outside 12–60 kg/m² is clinically implausible"),
    (r"systolic", 70, 250, "systolic blood pressure is measured within 70–250 mmHg"),
    (r"diastolic", 40, 150, "diastolic blood pressure is measured within 40–150 mmHg"),
    (r"(^|_)month($|_)", 1, 12, "months are numbered 1 to 12"),
    (r"(^|_)(hour|hour_of_day)($|_)", 0, 23, "hours of the day run from 0 to 23"),
    (r"likert|rating|stars", 1, 5, "a five-point rating scale runs from 1 to 5 (check yours)"),
)

BOUNDS_HELP_HTML = (
    "<p><b>Bounds are public facts you declare, never read from the data.</b> "
    "The mechanisms clip every value into [lower, upper], and the noise they add grows "
    "with upper − lower.</p>"
    "<ul>"
    "<li>Use the natural range of the measurement: ages 0–120, percentages 0–100, "
    "proportions 0–1, hours per week 0–168, a questionnaire's answer scale.</li>"
    "<li>For open-ended quantities (income, counts, durations) choose a cap from public "
    "sources — published statistics, the questionnaire's answer boxes, regulations. "
    "Values above it are clipped: a tighter cap means less noise but more bias.</li>"
    "<li>Never look up the data's own minimum or maximum: they are themselves private "
    "(the oldest person in the data is somebody).</li>"
    "<li>Categories: list every possible answer from the codebook or questionnaire, "
    "including ones nobody may have chosen.</li>"
    "</ul>"
)


def _html_name(name: str) -> str:
    """A column name for rich text: elided, and escaped (a name may hold ``<``)."""
    return html.escape(elide_name(name, PHRASE_CHARS))


#: Longest message shown under the table (characters).
MESSAGE_CHARS = 400


def _short(text: str, name: str) -> str:
    """A message for the line under the table: a long ``name`` elided wherever it
    appears, and the whole bounded (its start and its end, which says what happened)."""
    if len(name) > PHRASE_CHARS:
        text = text.replace(name, elide_name(name, PHRASE_CHARS))
    return cap_message(text, MESSAGE_CHARS)


def suggest_bounds(column: str) -> tuple[float, float, str] | None:
    """A public range suggested by the column's *name* (never its values), if any."""
    name = column.strip().lower().replace(" ", "_").replace("-", "_")
    for pattern, lower, upper, reason in BOUNDS_GUIDANCE:
        if re.search(pattern, name):
            return float(lower), float(upper), reason
    return None


class BoundsHelpDialog(QDialog):
    """Guidance on choosing bounds; for a numeric column, maybe a range to use.

    ``chosen`` is the ``(lower, upper)`` the analyst accepted with "Use these bounds",
    else ``None``.
    """

    def __init__(self, spec: ColumnSpec | None, parent: Any = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Choosing bounds")
        self.chosen: tuple[float, float] | None = None
        text = QLabel(BOUNDS_HELP_HTML, self)
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        self.suggestion = None
        self.use_button = None
        if spec is not None and spec.type is ColumnType.NUMERIC:
            self.suggestion = suggest_bounds(spec.name)
            if self.suggestion is not None:
                lower, upper, reason = self.suggestion
                note = QLabel(
                    f"For <b>{_html_name(spec.name)}</b>: {reason}, so <b>{format_bound(lower)} – "
                    f"{format_bound(upper)}</b> is a public choice (from the column's name, "
                    "not its values). Check it against your codebook.", self)
                note.setWordWrap(True)
                layout.addWidget(note)
                self.use_button = buttons.addButton(
                    f"Use {format_bound(lower)} – {format_bound(upper)}",
                    QDialogButtonBox.ButtonRole.AcceptRole)
                self.use_button.clicked.connect(self._use)
            else:
                note = QLabel(f"No standard range is known for <b>{_html_name(spec.name)}</b>: "
                              "choose one from its codebook or public statistics.", self)
                note.setWordWrap(True)
                layout.addWidget(note)
        layout.addWidget(buttons)
        self.setMinimumWidth(520)

    def _use(self) -> None:
        assert self.suggestion is not None
        self.chosen = (self.suggestion[0], self.suggestion[1])
        self.accept()


# --- the table model -----------------------------------------------------------------------


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
            return f"{_shown(row.lower)} – {_shown(row.upper)}"
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


class BoundsEditor(QWidget):
    """Two fields, lower – upper; ``done`` when Enter is pressed or focus leaves both."""

    done = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAutoFillBackground(True)
        self.cancelled = False
        self.lower = QLineEdit(self)
        self.upper = QLineEdit(self)
        self.lower.setPlaceholderText("lower")
        self.upper.setPlaceholderText("upper")
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
        elif event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Escape:
            self.cancelled = True
        return False

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


class _Delegate(QStyledItemDelegate):
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
        editor.setPlaceholderText("e.g. North, South, East, West")
        return editor

    def _commit(self, editor: QWidget) -> None:
        if not shiboken6.isValid(editor) or getattr(editor, "_closing", False):
            return
        editor._closing = True
        self.commitData.emit(editor)
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


class _RowEdit(QUndoCommand):
    def __init__(self, panel: SchemaPanel, row: int, before: Row, after: Row, text: str):
        super().__init__(text)
        self._panel, self._row, self._before, self._after = panel, row, before, after

    def redo(self) -> None:
        self._panel._apply_row(self._row, self._after)

    def undo(self) -> None:
        self._panel._apply_row(self._row, self._before)


# --- the panel -----------------------------------------------------------------------------


class SchemaPanel(QWidget):
    """Declare each column's type and public domain; undo, redo, save to the sidecar.

    Signals: ``schema_changed(Schema)`` after every change (edits, undo, redo, a new
    dataset); ``saved(Path)`` after the sidecar is written.
    """

    schema_changed = Signal(object)
    saved = Signal(object)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._dataset: Dataset | None = None
        self._description = ""
        self.undo_stack = QUndoStack(self)

        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)

        self.model = SchemaModel(self._edit_from_view, self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setItemDelegate(_Delegate(self.table))
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setCornerButtonEnabled(False)
        self.table.verticalHeader().hide()
        vertical = self.table.verticalHeader()
        vertical.setDefaultSectionSize(self.table.fontMetrics().height() + 10)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setMinimumSectionSize(36)
        header.setSectionResizeMode(COL_NAME, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(COL_TYPE, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.selectionModel().currentChanged.connect(lambda *_: self._update_buttons())

        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()

        # Actions: undo/redo/save work while focus is anywhere inside the panel.
        self.undo_action = self.undo_stack.createUndoAction(self, "Undo")
        self.undo_action.setShortcut(QKeySequence("Ctrl+Z"))
        self.redo_action = self.undo_stack.createRedoAction(self, "Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.save_action = QAction("Save Declarations", self)
        self.save_action.setShortcut(QKeySequence("Ctrl+S"))
        self.save_action.setStatusTip("Write every column's type, bounds and categories to the "
                                      "schema file next to the data")
        self.save_action.triggered.connect(self.save)
        self.addAction(self.save_action)  # Ctrl+S also when the panel stands alone
        for action in (self.undo_action, self.redo_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(action)

        self.undo_button = self._tool_button("Undo", self.undo_stack.undo,
                                             self.undo_stack.canUndoChanged)
        self.redo_button = self._tool_button("Redo", self.undo_stack.redo,
                                             self.undo_stack.canRedoChanged)
        self.undo_stack.undoTextChanged.connect(
            lambda text: self.undo_button.setToolTip(f"Undo {text} (Ctrl+Z)" if text else ""))
        self.undo_stack.redoTextChanged.connect(
            lambda text: self.redo_button.setToolTip(
                f"Redo {text} (Ctrl+Shift+Z)" if text else ""))
        self.save_button = self._tool_button("Save declarations", self.save,
                                             self.save_action.enabledChanged)
        self.save_button.setToolTip("Write the declarations to the schema file next to the "
                                    "data (Ctrl+S)")
        self.help_button = QToolButton(self)
        self.help_button.setText("Help me choose bounds")
        self.help_button.setToolTip("Public guidance on bounds and categories (does not read "
                                    "the data)")
        self.help_button.setAutoRaise(True)
        self.help_button.clicked.connect(self.show_bounds_help)
        self.undo_stack.cleanChanged.connect(lambda _clean: self._update_summary())
        self.undo_stack.indexChanged.connect(lambda _i: self._update_buttons())

        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        for button in (self.undo_button, self.redo_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.help_button)
        buttons.addWidget(self.save_button)

        self.legend = QLabel(
            "Bounds and categories are public declarations, never read from the data. "
            "<i>Italic</i> types are guessed; <i>undeclared</i> cells need a value before "
            "a mechanism can use the column. Double-click a cell to edit it.",
            self,
        )
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.setSpacing(6)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        layout.addWidget(self.legend)
        self._restyle()
        self.set_dataset(None)

    def _tool_button(self, text: str, slot: Callable[[], Any], enabled: Any) -> QToolButton:
        """A flat text button (fixed text: the undo stack's action texts grow long)."""
        button = QToolButton(self)
        button.setText(text)
        button.setAutoRaise(True)
        button.setEnabled(False)
        button.clicked.connect(lambda _checked=False: slot())
        enabled.connect(button.setEnabled)
        return button

    def _restyle(self) -> None:
        """Colours of the message and legend for the current palette."""
        self.legend.setStyleSheet(f"color: {current_palette().muted};")
        self._update_summary()

    def changeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self._restyle()

    # -- state --------------------------------------------------------------------------------

    @property
    def dataset(self) -> Dataset | None:
        return self._dataset

    def set_dataset(self, dataset: Dataset | None) -> None:
        """Show ``dataset``'s schema (undo history cleared) and emit :attr:`schema_changed`."""
        self._dataset = dataset
        self.undo_stack.clear()
        self.message.hide()
        if dataset is None:
            self._description = ""
            self.model.set_rows([])
        else:
            self._description = dataset.schema.description
            self.model.set_rows([
                Row(spec=spec, explicit=dataset.is_declared(spec.name)) for spec in dataset.schema
            ])
        self.undo_stack.setClean()
        self._fit_columns()
        self._update_summary()
        self._update_buttons()
        self.schema_changed.emit(self.schema())

    def schema(self) -> Schema | None:
        """The schema as currently declared (``None`` without a dataset)."""
        if self._dataset is None:
            return None
        return Schema(tuple(row.spec for row in self.model.rows), description=self._description)

    def is_dirty(self) -> bool:
        """Whether there are changes not yet saved to the sidecar."""
        if self._dataset is None or not shiboken6.isValid(self.undo_stack):
            return False  # (the stack is gone while the panel is being destroyed)
        return not self.undo_stack.isClean()

    def column_names(self) -> list[str]:
        return [row.spec.name for row in self.model.rows]

    def row(self, name: str) -> Row:
        return self.model.row_at(self.model.row_of(name))

    def cell_texts(self, name: str) -> tuple[str, ...]:
        """The five cells of column ``name`` as shown (tests and accessibility)."""
        i = self.model.row_of(name)
        return tuple(self.model.data(self.model.index(i, c)) for c in range(len(HEADERS)))

    def undeclared_columns(self) -> list[str]:
        """Non-text columns whose public domain is not declared yet."""
        return [
            row.spec.name for row in self.model.rows
            if row.spec.type is not ColumnType.TEXT and not row.spec.is_declared
        ]

    def message_text(self) -> str:
        """The line under the table ("" when hidden): why an edit was refused, or a note."""
        return self.message.text() if not self.message.isHidden() else ""

    # -- editing ------------------------------------------------------------------------------

    def edit(self, column: str, field_name: str, value: Any) -> bool:
        """Set one field of ``column`` as if typed; ``False`` (and a message) if refused."""
        try:
            i = self.model.row_of(column)
        except KeyError:
            self._show_message(f"No column '{column}' in this dataset.")
            return False
        return self._edit(i, field_name, value)

    def _edit_from_view(self, i: int, field_name: str, value: Any) -> bool:
        return self._edit(i, field_name, value)

    def _edit(self, i: int, field_name: str, value: Any) -> bool:
        before = self.model.row_at(i)
        try:
            after = edit_row(before, field_name, value)
        except DataError as exc:
            name = before.spec.name
            self._show_message(_short(f"{exc} — not applied; '{name}' keeps "
                                      f"{describe_row(before)}.", name))
            return False
        if after is None:
            return True
        self.message.hide()
        self.message.clear()
        self.undo_stack.push(_RowEdit(self, i, before, after,
                                      _command_text(before, field_name, value)))
        return True

    def _apply_row(self, i: int, row: Row) -> None:
        self.model.set_row(i, row)
        self._update_summary()
        self._update_buttons()
        self.schema_changed.emit(self.schema())

    def _show_message(self, text: str, *, error: bool = True) -> None:
        palette = current_palette()
        if error:
            self.message.setStyleSheet(f"color: {palette.error}; border-left: 3px solid "
                                       f"{palette.error}; padding: 3px 6px;")
        else:
            self.message.setStyleSheet(f"color: {palette.muted}; padding: 3px 6px;")
        self.message.setText(text)
        self.message.show()

    # -- saving -------------------------------------------------------------------------------

    def save(self) -> bool:
        """Write the declarations to ``<data>.schema.json`` (atomically); ``False`` on error.

        Columns the sidecar declared that are absent from the data are kept.
        """
        dataset = self._dataset
        if dataset is None:
            return False
        schema = self.schema()
        assert schema is not None
        columns = list(schema.columns)
        if dataset.declared is not None:
            columns += [s for s in dataset.declared if s.name not in schema]
        path = sidecar_path(dataset.path)
        try:
            save_schema(Schema(tuple(columns), description=schema.description), path)
        except DataError as exc:
            QMessageBox.critical(self, "Could not save the declarations", str(exc))
            return False
        rows = self.model.rows
        if not all(row.explicit for row in rows):  # saved types are declared, not guessed
            self.model.replace_rows([row if row.explicit else replace(row, explicit=True)
                                     for row in rows])
        self.undo_stack.setClean()
        self._show_message(f"Saved to {path.name}.", error=False)
        self._update_summary()
        self.saved.emit(path)
        return True

    # -- help ---------------------------------------------------------------------------------

    def current_column(self) -> str | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.model.row_at(index.row()).spec.name

    def show_bounds_help(self) -> BoundsHelpDialog:
        """Open the guidance; a range accepted there is applied as one undoable edit."""
        name = self.current_column()
        spec = self.row(name).spec if name is not None else None
        dialog = BoundsHelpDialog(spec, self)
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.chosen and name:
            self._set_bounds(name, *dialog.chosen)
        return dialog

    def _set_bounds(self, name: str, lower: float, upper: float) -> bool:
        i = self.model.row_of(name)
        before = self.model.row_at(i)
        try:
            spec = ColumnSpec(name, ColumnType.NUMERIC, lower=lower, upper=upper,
                              description=before.spec.description)
        except DataError as exc:
            self._show_message(_short(str(exc), name))
            return False
        after = replace(before, spec=spec, explicit=True, draft_lower=None, draft_upper=None)
        self.undo_stack.push(_RowEdit(self, i, before, after,
                                      f"Declare bounds of '{elide_name(name, PHRASE_CHARS)}' "
                                      f"{format_bound(lower)} – {format_bound(upper)}"))
        return True

    # -- layout -------------------------------------------------------------------------------

    def _update_buttons(self) -> None:
        has = self._dataset is not None
        self.save_action.setEnabled(has)
        self.help_button.setEnabled(has)

    def _update_summary(self) -> None:
        palette = current_palette()
        dataset = self._dataset
        if dataset is None:
            self.summary.setText(f"<span style='color:{palette.muted}'>No dataset open</span>")
            self.summary.setToolTip("")
            return
        rows = self.model.rows
        usable = [r for r in rows if r.spec.type is not ColumnType.TEXT]
        declared = sum(r.spec.is_declared for r in usable)
        missing = len(usable) - declared
        parts = [f"{dataset.n_rows:,} rows"]
        if missing:
            parts.append(f"<span style='color:{palette.warning}'>{missing:,} of "
                         f"{len(usable):,} columns undeclared</span>")
        else:
            parts.append(f"all {len(usable):,} columns declared")
        if self.is_dirty():
            parts.append(f"<span style='color:{palette.warning}'>unsaved changes</span>")
        elif dataset.declared is None and not any(r.explicit for r in rows):
            parts.append(f"no {sidecar_path(dataset.path).name} yet")
        self.summary.setText(
            f"<b>{dataset.name}</b><br><span style='color:{palette.muted}'>"
            + " · ".join(parts) + "</span>"
        )
        self.summary.setToolTip(str(dataset.path))

    def _fit_columns(self) -> None:
        header = self.table.horizontalHeader()
        metrics = self.table.fontMetrics()
        pad = 16
        # Elided names, as shown: measuring a 100,000-character name lays it all out.
        names = [elide_name(r.spec.name) for r in self.model.rows]
        name_width = max(metrics.horizontalAdvance(n) for n in [*names, "Column"]) + pad
        header.resizeSection(COL_NAME, min(name_width, 170))
        type_width = max(metrics.horizontalAdvance(t) for t in TYPE_LABELS.values()) + pad
        header.resizeSection(COL_TYPE, type_width)

    def preferred_width(self) -> int:
        """Width that shows names, types and a typical declared domain unclipped."""
        header = self.table.horizontalHeader()
        needed = header.sectionSize(COL_NAME) + header.sectionSize(COL_TYPE)
        needed += self.table.fontMetrics().horizontalAdvance("100,000 – 250,000") + 24
        margins = self.layout().contentsMargins()
        scrollbar = self.table.verticalScrollBar().sizeHint().width()
        return needed + scrollbar + 2 * self.table.frameWidth() + margins.left() + margins.right()


def _command_text(before: Row, field_name: str, value: Any) -> str:
    """The undo stack's text (shown in the Undo button's tooltip): names elided."""
    name = elide_name(before.spec.name, PHRASE_CHARS)
    if field_name == "type":
        return f"Set type of '{name}' to {_parse_type(value, before.spec.name).label}"
    if field_name == "bounds":
        lower, upper = (str(v).strip() for v in value)
        if not lower and not upper:
            return f"Clear bounds of '{name}'"
        return f"Set bounds of '{name}' to {lower or '?'} – {upper or '?'}"
    if field_name in ("lower", "upper"):
        text = str(value).strip()
        return f"Set {field_name} bound of '{name}' to {text}" if text else (
            f"Clear {field_name} bound of '{name}'")
    return f"Set categories of '{name}'"
