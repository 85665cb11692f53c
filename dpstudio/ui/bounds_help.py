"""Guidance on choosing bounds: public advice, and a range suggested by a column's *name*
(never its values), applied by the schema panel as one undoable edit."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout

from dpstudio.data.schema import ColumnSpec, ColumnType
from dpstudio.ui.schema_parsing import format_bound, suggest_bounds
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name

__all__ = ["BOUNDS_HELP_HTML", "BoundsHelpDialog"]


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
    "<li>Codes (0/1, 1–7) stay as the data holds them; name them from the codebook with "
    "<i>Label values…</i> (0 = no, 1 = yes).</li>"
    "</ul>"
)


def _html_name(name: str) -> str:
    """A column name for rich text: elided, and escaped (a name may hold ``<``)."""
    return html.escape(elide_name(name, PHRASE_CHARS))


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
