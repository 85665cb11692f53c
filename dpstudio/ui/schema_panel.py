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

import html
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,  # noqa: F401 - the categories' editor, found as schema_panel.QLineEdit
    QMessageBox,
    QSizePolicy,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from dpstudio.data.dataset import Dataset
from dpstudio.data.errors import DataError, cap_message
from dpstudio.data.schema import ColumnSpec, ColumnType, Schema, save_schema, sidecar_path
from dpstudio.ui.schema_delegate import BoundsEditor, SchemaDelegate
from dpstudio.ui.schema_model import COL_DOMAIN, COL_NAME, COL_TYPE, HEADERS, RowEdit, SchemaModel
from dpstudio.ui.schema_parsing import (
    BOUNDS_GUIDANCE,
    TYPE_LABELS,
    Row,
    command_text,
    describe_row,
    edit_row,
    format_bound,
    suggest_bounds,
)
from dpstudio.ui.style import current_palette
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name

# Callers and tests reach the table's pieces (its columns, rows and editors) through the
# panel's module: some names below are re-exported from the modules that hold them.
__all__ = [
    "BOUNDS_GUIDANCE",
    "COL_DOMAIN",
    "COL_NAME",
    "COL_TYPE",
    "HEADERS",
    "BoundsEditor",
    "BoundsHelpDialog",
    "Row",
    "SchemaModel",
    "SchemaPanel",
    "edit_row",
    "suggest_bounds",
]


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
        self.table.setItemDelegate(SchemaDelegate(self.table))
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
        self.undo_stack.push(RowEdit(self._apply_row, i, before, after,
                                     command_text(before, field_name, value)))
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
        self.undo_stack.push(RowEdit(self._apply_row, i, before, after,
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
