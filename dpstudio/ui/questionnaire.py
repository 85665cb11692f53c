"""The sensitivity questionnaire: two questions, a proposed (ε, δ) and why.

In the spirit of OpenDP's DP Creator, the analyst says how much harm disclosing one
person's record could do and how sensitive the data is; the more serious answer sets
the level, and the level proposes a privacy budget. These are DP Studio's starting
points — conservative, round numbers an analyst can defend and then adjust — not a
standard. δ is also kept far below 1/n, the chance of a catastrophic leak of one record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QLabel,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui.style import current_palette

__all__ = ["HARM", "LEVELS", "SENSITIVITY", "Proposal", "QuestionnaireDialog", "format_delta",
           "propose"]

#: Levels, least to most serious: key, word.
LEVELS: tuple[tuple[str, str], ...] = (
    ("public", "public"),
    ("low", "low"),
    ("moderate", "moderate"),
    ("high", "high"),
    ("severe", "severe"),
)

#: "If one person's record were disclosed, the harm could be …"
HARM: dict[str, str] = {
    "public": "None — the information is already public",
    "low": "Low — mild embarrassment or inconvenience",
    "moderate": "Moderate — damage to reputation, relationships or finances",
    "high": "High — legal, employment or insurance consequences",
    "severe": "Severe — danger to life, liberty or safety",
}

#: "The data themselves are …"
SENSITIVITY: dict[str, str] = {
    "public": "Public — published or freely observable facts",
    "low": "Low — ordinary preferences, opinions, routine records",
    "moderate": "Moderate — income, education, location, contact details",
    "high": "High — health, sexuality, religion, criminal record, immigration status",
    "severe": "Severe — information that could expose people to violence or persecution",
}

#: level → (ε, δ): the defaults proposed for that level.
BUDGETS: dict[str, tuple[float, float]] = {
    "public": (2.0, 1e-5),
    "low": (1.0, 1e-6),
    "moderate": (0.5, 1e-7),
    "high": (0.25, 1e-8),
    "severe": (0.1, 1e-9),
}


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_delta(delta: float) -> str:
    """``1e-07`` → ``10⁻⁷``; other values as ``2.5 × 10⁻⁸``."""
    if delta <= 0:
        return "0"
    exponent = math.floor(math.log10(delta))
    mantissa = delta / 10.0**exponent
    power = "10" + str(exponent).translate(_SUPERSCRIPT)
    return power if abs(mantissa - 1.0) < 1e-9 else f"{mantissa:.2g} × {power}"


@dataclass(frozen=True)
class Proposal:
    epsilon: float
    delta: float
    level: str
    rationale: str


def propose(harm: str, sensitivity: str, n_rows: int | None = None) -> Proposal:
    """The (ε, δ) proposed for these answers, with a one-line rationale.

    The more serious of the two answers sets the level; with ``n_rows`` the δ is lowered
    if need be to stay below 1/(100 n).
    """
    order = [key for key, _ in LEVELS]
    if harm not in order or sensitivity not in order:
        raise ValueError(f"answers must be among {', '.join(order)}")
    level = max(harm, sensitivity, key=order.index)
    epsilon, delta = BUDGETS[level]
    if n_rows is not None and n_rows > 0 and delta > 1.0 / (100.0 * n_rows):
        delta = 10.0 ** math.floor(math.log10(1.0 / (100.0 * n_rows)))
    driver = "harm of disclosure" if level == harm else "sensitivity of the data"
    if harm == sensitivity:
        driver = "harm and sensitivity"
    rationale = (
        f"{level.capitalize()} {driver}: ε = {epsilon:g} lets one person's record change "
        f"the odds of any conclusion by at most ×{math.exp(epsilon):.2f}, and "
        f"δ = {format_delta(delta)} is the tiny chance that guarantee fails."
    )
    if n_rows:
        rationale = rationale[:-1] + f" (well below 1/n for n = {n_rows:,})."
    return Proposal(epsilon, delta, level, rationale)


class QuestionnaireDialog(QDialog):
    """Two questions, the proposal, and "Use this budget".

    Emits ``budget_chosen(epsilon, delta)`` when accepted; ``answers()`` gives the
    choices (to remember them in the settings' ``last_choices``).
    """

    budget_chosen = Signal(float, float)

    def __init__(self, parent: QWidget | None = None, *, n_rows: int | None = None,
                 answers: dict[str, Any] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("How sensitive is this data?")
        self.n_rows = n_rows
        answers = answers or {}

        intro = QLabel(
            "Two questions to propose a privacy budget. The more serious answer decides; "
            "you can change the numbers afterwards.", self)
        intro.setWordWrap(True)
        self.harm_group, harm_box = self._question(
            "If one person's record were disclosed, how much harm could it do?", HARM,
            answers.get("harm", "moderate"))
        self.sensitivity_group, sensitivity_box = self._question(
            "How sensitive are the data themselves?", SENSITIVITY,
            answers.get("sensitivity", "moderate"))

        self.proposal_label = QLabel(self)
        self.proposal_label.setTextFormat(Qt.TextFormat.RichText)
        self.proposal_label.setWordWrap(True)
        palette = current_palette()
        self.proposal_label.setObjectName("proposal")
        tint = QColor(palette.highlight)
        tint.setAlpha(28)
        self.proposal_label.setStyleSheet(
            f"QLabel#proposal {{ background: rgba({tint.red()}, {tint.green()}, {tint.blue()}, "
            f"{tint.alpha()}); border: 1px solid {palette.highlight}; border-radius: 4px; "
            "padding: 8px 10px; }")
        note = QLabel(
            "These are DP Studio's conservative starting points, not a legal standard: "
            "check them with your data-protection officer or ethics board.", self)
        note.setWordWrap(True)
        note.setStyleSheet(f"color: {palette.muted};")

        self.buttons = QDialogButtonBox(self)
        self.use_button = self.buttons.addButton("Use this budget",
                                                 QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(harm_box)
        layout.addWidget(sensitivity_box)
        layout.addWidget(self.proposal_label)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        self.harm_group.idToggled.connect(lambda *_: self._update())
        self.sensitivity_group.idToggled.connect(lambda *_: self._update())
        self.resize(600, 640)
        self._update()

    def _question(self, text: str, options: dict[str, str],
                  chosen: str) -> tuple[QButtonGroup, QGroupBox]:
        box = QGroupBox(text, self)
        group = QButtonGroup(box)
        column = QVBoxLayout(box)
        keys = [key for key, _ in LEVELS]
        for i, key in enumerate(keys):
            button = QRadioButton(options[key], box)
            button.setObjectName(key)
            group.addButton(button, i)
            column.addWidget(button)
            if key == chosen:
                button.setChecked(True)
        if group.checkedButton() is None:
            group.button(2).setChecked(True)
        return group, box

    def answers(self) -> dict[str, str]:
        return {
            "harm": self.harm_group.checkedButton().objectName(),
            "sensitivity": self.sensitivity_group.checkedButton().objectName(),
        }

    def set_answers(self, harm: str, sensitivity: str) -> None:
        keys = [key for key, _ in LEVELS]
        self.harm_group.button(keys.index(harm)).setChecked(True)
        self.sensitivity_group.button(keys.index(sensitivity)).setChecked(True)

    def proposal(self) -> Proposal:
        a = self.answers()
        return propose(a["harm"], a["sensitivity"], self.n_rows)

    def _update(self) -> None:
        p = self.proposal()
        self.proposal_label.setText(
            f"<b>Proposed budget: ε = {p.epsilon:g}, δ = {format_delta(p.delta)}</b><br>"
            f"{p.rationale}")

    def accept(self) -> None:
        p = self.proposal()
        super().accept()
        self.budget_chosen.emit(p.epsilon, p.delta)
