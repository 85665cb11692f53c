"""Naming a categorical column's codes: the schema panel's "Label values…" dialog.

Codes stay as the data holds them (a 0/1 column reads "0" and "1"); a label is the
analyst's explicit, undoable, saved step (``0 = no``, ``1 = yes``), written in the schema
file, never a silent relabelling.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from dpstudio.data.schema import ColumnSpec
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name

__all__ = ["ValueLabelsDialog"]

#: Above this many categories the fields scroll.
_SCROLL_AFTER = 12


class ValueLabelsDialog(QDialog):
    """One field per declared category, its label as typed (empty: shown as the code).

    ``labels()`` is what to declare: a mapping of category to label.
    """

    def __init__(self, spec: ColumnSpec, parent: Any = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Label values")
        name = elide_name(spec.name, PHRASE_CHARS)
        intro = QLabel(
            f"Name the codes of <b>{html.escape(name)}</b> from its codebook. The data and "
            "the releases keep the codes; labels are for reading and are saved in the "
            "schema file. Leave a field empty to show the code as it is.", self)
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        form_widget = QWidget(self)
        form = QFormLayout(form_widget)
        self.fields: dict[str, QLineEdit] = {}
        for category in spec.categories:
            edit = QLineEdit(spec.label_of(category) if category != spec.label_of(category)
                             else "", form_widget)
            edit.setPlaceholderText(f"label of {category}")
            edit.setAccessibleName(f"Label of {category}")
            form.addRow(f"{elide_name(category, 40)} =", edit)
            self.fields[category] = edit
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        if len(self.fields) > _SCROLL_AFTER:
            scroll = QScrollArea(self)
            scroll.setWidgetResizable(True)
            scroll.setWidget(form_widget)
            layout.addWidget(scroll, 1)
        else:
            layout.addWidget(form_widget)
        layout.addWidget(buttons)
        self.setMinimumWidth(420)
        if self.fields:
            first = next(iter(self.fields.values()))
            first.setFocus()
            self.setFocusProxy(first)

    def labels(self) -> dict[str, str]:
        """Category → label as typed (stripped; empty ones mean "no label")."""
        return {c: edit.text().strip() for c, edit in self.fields.items()}

