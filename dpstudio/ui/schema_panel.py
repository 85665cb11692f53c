"""The schema panel: each column's type and its *declared* public bounds or categories.

An editable table (Column · Type · Declared). Double-click a type for a combo box, a
numeric column's domain for its lower and upper bound editors, a categorical one's for
its categories (comma-separated; quote a name with a comma). Every accepted edit is
one command on a :class:`QUndoStack` (Ctrl+Z / Ctrl+Shift+Z while the panel has focus);
a refused one (reversed or non-finite bounds, a repeated category, …) leaves the schema
as it was and says why in a line under the table. "Save declarations" (Ctrl+S) writes
the sidecar ``<data>.schema.json`` atomically. A line under the table says where the
current column's declaration comes from (guessed / declared by you, unsaved / saved in
the schema file); "Label values…" names a categorical column's codes (0 = no, 1 = yes),
an explicit step: codes are never relabelled silently.

Clicking a row (or moving to it with the keyboard) chooses that column:
:attr:`SchemaPanel.column_chosen`.

Bounds and categories are public facts the analyst declares; nothing here reads the
data's values ("Help me choose bounds" shows guidance by the column's *name*). Each
change emits :attr:`SchemaPanel.schema_changed` with the whole current :class:`Schema`.

The table is a model/view: nothing is made per column up front, the view asks the model
only for the rows it paints, and an editor exists only while a cell is edited, so a
5,000-column file opens as fast as a 5-column one. Names are shown elided (a header can
hold a 100,000-character name) with the full name in the tooltip.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
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
from dpstudio.data.schema import (
    ColumnSpec,
    ColumnType,
    Schema,
    Source,
    save_schema,
)
from dpstudio.ui.bounds_help import BoundsHelpDialog
from dpstudio.ui.folder_open import sidecar_of
from dpstudio.ui.schema_delegate import BoundsEditor, SchemaDelegate
from dpstudio.ui.schema_model import (
    COL_DOMAIN,
    COL_NAME,
    COL_TYPE,
    HEADERS,
    RowEdit,
    SchemaModel,
    source_text,
    summary_text,
)
from dpstudio.ui.schema_parsing import (
    BOUNDS_GUIDANCE,
    TYPE_LABELS,
    Row,
    command_text,
    describe_row,
    edit_row,
    format_bound,
    missing_text,
    suggest_bounds,
)
from dpstudio.ui.style import current_palette
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name
from dpstudio.ui.value_labels import ValueLabelsDialog

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
    "ValueLabelsDialog",
    "edit_row",
    "suggest_bounds",
]


#: Longest message shown under the table (characters).
MESSAGE_CHARS = 400


def _short(text: str, name: str) -> str:
    """A message for the line under the table: a long ``name`` elided wherever it
    appears, and the whole bounded (its start and its end, which says what happened)."""
    if len(name) > PHRASE_CHARS:
        text = text.replace(name, elide_name(name, PHRASE_CHARS))
    return cap_message(text, MESSAGE_CHARS)


# --- the panel -----------------------------------------------------------------------------


class SchemaPanel(QWidget):
    """Declare each column's type and public domain; undo, redo, save to the sidecar.

    Signals: ``schema_changed(Schema)`` after every change (edits, undo, redo, a new
    dataset, a save: the schema's sources change); ``saved(Path)`` after the sidecar is
    written; ``column_chosen(str)`` when the analyst clicks a row (the current one too)
    or moves to one with the keyboard.
    """

    schema_changed = Signal(object)
    saved = Signal(object)
    column_chosen = Signal(str)

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
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.table.selectionModel().currentChanged.connect(lambda *_: self._update_buttons())
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        # A click on the row that is already current changes nothing in the selection
        # model: the press is watched to choose that column again (see _pressed).
        self._press_on_current = False
        self.table.viewport().installEventFilter(self)
        self.table.pressed.connect(self._pressed)

        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()

        self.source_line = QLabel(self)
        self.source_line.setWordWrap(True)
        self.source_line.setTextFormat(Qt.TextFormat.RichText)
        self.source_line.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

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
        self.help_action = QAction("Help Me Choose Bounds…", self)
        self.help_action.triggered.connect(lambda _checked=False: self.show_bounds_help())
        self.labels_action = QAction("Label Values…", self)
        self.labels_action.setShortcut(QKeySequence("Ctrl+L"))
        self.labels_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.labels_action.setStatusTip("Name the current column's codes (0 = no, 1 = yes); "
                                        "the data keeps its codes")
        self.labels_action.triggered.connect(lambda _checked=False: self.label_values())
        self.addAction(self.labels_action)
        self.table.addActions([self.labels_action, self.help_action])  # its context menu
        # One place in the row of buttons, shared with the bounds help (a narrow dock):
        # "Label values" for a categorical column with categories, else the help.
        self.labels_button = QToolButton(self)
        self.labels_action.setIconText("Label values…")  # the button's text
        self.labels_button.setDefaultAction(self.labels_action)
        self.labels_button.setToolTip("Name a categorical column's codes from its codebook, "
                                      "e.g. 0 = no, 1 = yes (Ctrl+L)")
        self.labels_button.setAutoRaise(True)
        self._labels_dialog: ValueLabelsDialog | None = None
        self.undo_stack.cleanChanged.connect(lambda _clean: self._update_summary())
        self.undo_stack.indexChanged.connect(lambda _i: self._update_buttons())

        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        for button in (self.undo_button, self.redo_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.labels_button)
        buttons.addWidget(self.help_button)
        buttons.addWidget(self.save_button)

        self.legend = QLabel(
            "Bounds and categories are public declarations, never read from the data. "
            "<i>Italic</i> types are guessed; <i>undeclared</i> cells need a value before "
            "a mechanism can use the column. Double-click a cell to edit it; type both "
            "bounds as 18-65 or Tab between them.",
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
        layout.addWidget(self.source_line)
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

    # -- choosing a column ----------------------------------------------------------------

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self.table.viewport() and event.type() == QEvent.Type.MouseButtonPress:
            current = self.table.currentIndex()
            pressed = self.table.indexAt(event.position().toPoint())
            self._press_on_current = (current.isValid() and pressed.isValid()
                                      and pressed.row() == current.row())
        return super().eventFilter(obj, event)

    def _pressed(self, index: QModelIndex) -> None:
        """A click on a row: that column is chosen, even if the row was already current
        (the analysis column may have been changed elsewhere since)."""
        if not self._press_on_current or not index.isValid():
            return  # a new current row: _row_changed has chosen it
        self._press_on_current = False
        self.column_chosen.emit(self.model.row_at(index.row()).spec.name)

    def _row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        self._update_source_line()
        if current is not previous and current.isValid() and \
                0 <= current.row() < self.model.rowCount() and (
                not previous.isValid() or previous.row() != current.row()):
            self.column_chosen.emit(self.model.row_at(current.row()).spec.name)

    def show_column(self, name: str) -> None:
        """Make ``name`` the current row (e.g. when the analysis column changes elsewhere),
        keeping the current table column; nothing if it is current or unknown."""
        try:
            i = self.model.row_of(name)
        except KeyError:
            return
        current = self.table.currentIndex()
        if current.isValid() and current.row() == i:
            return
        column = current.column() if current.isValid() else COL_NAME
        self.table.setCurrentIndex(self.model.index(i, column))
        self.table.scrollTo(self.model.index(i, column))

    # -- state --------------------------------------------------------------------------------

    @property
    def dataset(self) -> Dataset | None:
        return self._dataset

    def set_dataset(self, dataset: Dataset | None) -> None:
        """Show ``dataset``'s schema (undo history cleared) and emit :attr:`schema_changed`."""
        self._dataset = dataset
        self.undo_stack.clear()
        self.message.hide()
        self._close_labels_dialog()
        self.model.set_saved(dataset.declared if dataset is not None else None)
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
        self._update_source_line()
        self.schema_changed.emit(self.schema())

    def schema(self) -> Schema | None:
        """The schema as currently declared (``None`` without a dataset)."""
        if self._dataset is None:
            return None
        rows = self.model.rows
        return Schema(tuple(row.spec for row in rows), description=self._description,
                      sources={row.spec.name: self.model.source(row) for row in rows},
                      pending={row.spec.name: text for row in rows
                               if (text := missing_text(row)) is not None})

    def source(self, name: str) -> Source:
        """Where column ``name``'s declaration comes from, as the panel shows it."""
        return self.model.source(self.row(name))

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
        self._update_source_line()
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
        path = sidecar_of(dataset)  # a folder's beside it, as every tool finds it
        try:
            save_schema(Schema(tuple(columns), description=schema.description), path)
        except DataError as exc:
            QMessageBox.critical(self, "Could not save the declarations", str(exc))
            return False
        rows = self.model.rows
        if not all(row.explicit for row in rows):  # saved types are declared, not guessed
            self.model.replace_rows([row if row.explicit else replace(row, explicit=True)
                                     for row in rows])
        self.model.set_saved(schema)
        self.undo_stack.setClean()
        self._show_message(f"Saved to {path.name}.", error=False)
        self._update_summary()
        self._update_source_line()
        self.saved.emit(path)
        self.schema_changed.emit(self.schema())  # every column's source is now "saved"
        return True

    # -- help ---------------------------------------------------------------------------------

    def current_column(self) -> str | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.model.row_at(index.row()).spec.name

    def label_values(self) -> ValueLabelsDialog | None:
        """Open "Label values" for the current column (categorical, with categories); the
        labels typed there are applied, when accepted, as one undoable edit."""
        name = self.current_column()
        if name is None or not self._can_label(self.row(name)):
            return None
        self._close_labels_dialog()
        dialog = ValueLabelsDialog(self.row(name).spec, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.edit(name, "labels", dialog.labels()))
        self._labels_dialog = dialog
        dialog.open()  # window-modal, and the UI thread does not wait on it
        return dialog

    def _close_labels_dialog(self) -> None:
        dialog, self._labels_dialog = self._labels_dialog, None
        if dialog is not None and shiboken6.isValid(dialog):
            dialog.reject()

    @staticmethod
    def _can_label(row: Row) -> bool:
        return row.spec.type is ColumnType.CATEGORICAL and bool(row.spec.categories)

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
        self.help_action.setEnabled(has)
        name = self.current_column() if has else None
        can_label = name is not None and self._can_label(self.row(name))
        self.labels_action.setEnabled(can_label)
        self.labels_button.setVisible(can_label)
        self.help_button.setVisible(not can_label)

    def _update_source_line(self) -> None:
        """Where the current column's declaration comes from, in words, under the table."""
        name = self.current_column() if self._dataset is not None else None
        if name is None:
            self.source_line.clear()
            self.source_line.hide()
            return
        file_name = sidecar_of(self._dataset).name
        self.source_line.setText(source_text(self.row(name), self.model.source(self.row(name)),
                                             file_name))
        self.source_line.setStyleSheet(f"color: {current_palette().muted};")
        self.source_line.show()

    def _update_summary(self) -> None:
        dataset = self._dataset
        self.summary.setText(summary_text(dataset, self.model.rows, self.is_dirty()))
        self.summary.setToolTip(str(dataset.path) if dataset is not None else "")

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
