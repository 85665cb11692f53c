"""The column list: each column's type and declared public domain."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpstudio.data.dataset import Dataset
from dpstudio.data.schema import ColumnSpec, ColumnType, sidecar_path
from dpstudio.ui.style import MUTED

HEADERS = ("Column", "Type", "Declared")
_MUTED = QColor(MUTED)
_UNDECLARED = QColor("#b45309")


class ColumnsPanel(QWidget):
    """A summary line, then one row per column: name, type, declared bounds or categories."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)

        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(list(HEADERS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.setStyleSheet("QTreeView::item { padding: 3px 2px; }")
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)

        self.legend = QLabel(
            "Bounds and categories are public declarations, never read from the data. "
            "<i>Italic</i> types are guessed: declare them in the dataset's schema file.",
            self,
        )
        self.legend.setWordWrap(True)
        self.legend.setStyleSheet(f"color: {MUTED};")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.setSpacing(6)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.legend)

    def set_dataset(self, dataset: Dataset | None) -> None:
        self.tree.clear()
        if dataset is None:
            self.summary.setText(f"<span style='color:{MUTED}'>No dataset open</span>")
            return
        schema_file = sidecar_path(dataset.path).name
        declared = sum(dataset.is_declared(spec.name) for spec in dataset.schema)
        if dataset.declared is None:
            status = f"no schema file ({schema_file}): types guessed"
        else:
            status = f"{declared} of {dataset.n_columns} columns declared in {schema_file}"
        self.summary.setText(
            f"<b>{dataset.name}</b><br>"
            f"<span style='color:{MUTED}'>{dataset.n_rows:,} rows · {status}</span>"
        )
        self.summary.setToolTip(str(dataset.path))
        items = [
            _item(spec, declared=dataset.is_declared(spec.name), schema_file=schema_file)
            for spec in dataset.schema
        ]
        self.tree.addTopLevelItems(items)

    def preferred_width(self) -> int:
        """Width that shows every cell of the list unclipped."""
        header = self.tree.header()
        needed = sum(
            max(self.tree.sizeHintForColumn(i), header.sectionSizeHint(i)) + 4
            for i in range(self.tree.columnCount())
        )
        margins = self.layout().contentsMargins()
        return needed + 2 * self.tree.frameWidth() + margins.left() + margins.right() + 4

    def column_names(self) -> list[str]:
        return [self.tree.topLevelItem(i).text(0) for i in range(self.tree.topLevelItemCount())]


def _item(spec: ColumnSpec, *, declared: bool, schema_file: str) -> QTreeWidgetItem:
    item = QTreeWidgetItem([spec.name, spec.type.label, spec.domain_text(compact=True)])
    item.setData(0, Qt.ItemDataRole.UserRole, spec.name)
    item.setToolTip(0, spec.description or spec.name)
    if declared:
        item.setToolTip(1, f"Declared in {schema_file}")
    else:
        italic = QFont()
        italic.setItalic(True)
        item.setFont(1, italic)
        item.setForeground(1, _MUTED)
        item.setToolTip(1, "Guessed from the data: declare it in the schema to be sure")
    if spec.type is ColumnType.TEXT:
        item.setForeground(2, _MUTED)
        item.setToolTip(2, "Free text: not used by the mechanisms")
    elif not spec.is_declared:
        item.setForeground(2, _UNDECLARED)
        item.setToolTip(2, "No public bounds or categories declared yet")
    else:
        item.setToolTip(2, spec.domain_text())
    return item
