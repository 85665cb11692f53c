"""The sensitivity questionnaire: two questions, a proposed total (ε, δ), why, and how it
is split over the planned releases.

In the spirit of OpenDP's DP Creator, the analyst says how much harm disclosing one
person's record could do and how sensitive the data is; the more serious answer sets
the level, and the level proposes the dataset's total privacy budget (all its releases
together), shared evenly among the releases the analyst plans. These are DP Studio's starting
points — conservative, round numbers an analyst can defend and then adjust — not a
standard. δ is also kept far below 1/n, the chance of a catastrophic leak of one record.
"""

from __future__ import annotations

import html
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
    QHBoxLayout,
    QLabel,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from dpstudio.engine.entry import EPSILON
from dpstudio.ui.style import current_palette

__all__ = ["HARM", "LEVELS", "SENSITIVITY", "Proposal", "QuestionnaireDialog", "Split",
           "format_delta", "propose"]

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


@dataclass(frozen=True)
class Split:
    """A total budget spread evenly over planned releases (basic composition: ε and δ
    add up, so each release gets the total divided by their number)."""

    epsilon: float
    delta: float
    releases: int

    @property
    def per_release_epsilon(self) -> float:
        return self.epsilon / self.releases

    @property
    def per_release_delta(self) -> float:
        return self.delta / self.releases

    def sentence(self) -> str:
        """"ε 0.5 in total: about ε 0.05 (δ 10⁻⁸) per release for 10 releases"."""
        if self.releases == 1:
            return f"ε {self.epsilon:g} in total: all of it for one release"
        per = f"about ε {self.per_release_epsilon:.2g}"
        if self.delta > 0:
            per += f" (δ {format_delta(float(f'{self.per_release_delta:.2g}'))})"
        return f"ε {self.epsilon:g} in total: {per} per release for {self.releases} releases"


class QuestionnaireDialog(QDialog):
    """Two questions and the number of planned releases; the proposed total budget, how it
    is split, and "Use as total budget".

    Nothing is chosen at first — a pre-selected answer anchors the analyst's judgement —
    and the button stays disabled until both questions are answered. Accepting emits
    ``budget_chosen(total_epsilon, total_delta, releases)``.

    Parameters
    ----------
    parent : QWidget, optional
        The main window.
    n_rows : int, optional
        The dataset's number of rows (δ is kept below 1/(100 n)).
    answers : dict, optional
        ``{"harm": level, "sensitivity": level}`` to start from (scripts and tests; the
        application starts blank).
    releases : int
        The number of releases planned at first (the view's "Releases k").
    dataset : str
        The dataset's name, for the proposal's wording.
    fixed_total : str, optional
        Set when a project fixes the dataset's total: the sentence saying so (the
        proposal then sets the per-release budget only).
    """

    budget_chosen = Signal(float, float, int)

    #: Most releases the plan may count.
    MAX_RELEASES = 100

    def __init__(self, parent: QWidget | None = None, *, n_rows: int | None = None,
                 answers: dict[str, Any] | None = None, releases: int = 1,
                 dataset: str = "", fixed_total: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("How sensitive is this data?")
        self.n_rows = n_rows
        self.dataset = dataset
        self.fixed_total = fixed_total
        answers = answers or {}

        intro = QLabel(
            "Two questions to propose the total privacy budget for this dataset — all its "
            "releases together. The more serious answer decides; you can change the "
            "numbers afterwards.", self)
        intro.setWordWrap(True)
        self.harm_group, harm_box = self._question(
            "If one person's record were disclosed, how much harm could it do?", HARM,
            answers.get("harm"))
        self.sensitivity_group, sensitivity_box = self._question(
            "How sensitive are the data themselves?", SENSITIVITY,
            answers.get("sensitivity"))

        self.releases_spin = QSpinBox(self)
        self.releases_spin.setRange(1, self.MAX_RELEASES)
        self.releases_spin.setValue(min(max(int(releases), 1), self.MAX_RELEASES))
        self.releases_spin.setToolTip("How many statistics you expect to release from this "
                                      "dataset: the total budget is shared among them")
        releases_row = QHBoxLayout()
        releases_label = QLabel("How many releases do you plan from this dataset?", self)
        releases_label.setBuddy(self.releases_spin)
        releases_row.addWidget(releases_label, 1)
        releases_row.addWidget(self.releases_spin)

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
        self.use_button = self.buttons.addButton(
            "Use per release" if fixed_total else "Use as total budget",
            QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(harm_box)
        layout.addWidget(sensitivity_box)
        layout.addLayout(releases_row)
        layout.addWidget(self.proposal_label)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        self.harm_group.idToggled.connect(lambda *_: self._update())
        self.sensitivity_group.idToggled.connect(lambda *_: self._update())
        self.releases_spin.valueChanged.connect(lambda *_: self._update())
        self.resize(620, 700)
        self._update()

    def _question(self, text: str, options: dict[str, str],
                  chosen: str | None) -> tuple[QButtonGroup, QGroupBox]:
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
        return group, box

    def answers(self) -> dict[str, str]:
        """The levels chosen so far (a question not yet answered is absent)."""
        out = {}
        for name, group in (("harm", self.harm_group), ("sensitivity", self.sensitivity_group)):
            if (button := group.checkedButton()) is not None:
                out[name] = button.objectName()
        return out

    def set_answers(self, harm: str, sensitivity: str) -> None:
        keys = [key for key, _ in LEVELS]
        self.harm_group.button(keys.index(harm)).setChecked(True)
        self.sensitivity_group.button(keys.index(sensitivity)).setChecked(True)

    def proposal(self) -> Proposal | None:
        """The proposed total (ε, δ), or None until both questions are answered."""
        a = self.answers()
        if len(a) < 2:
            return None
        return propose(a["harm"], a["sensitivity"], self.n_rows)

    def split(self) -> Split | None:
        """The proposal spread over the planned releases (None until answered)."""
        p = self.proposal()
        return None if p is None else Split(p.epsilon, p.delta, self.releases_spin.value())

    def _update(self) -> None:
        p, split = self.proposal(), self.split()
        if p is None or split is None:
            self.proposal_label.setText(
                "Answer both questions to see a proposed budget.")
            self.use_button.setEnabled(False)
            self.use_button.setToolTip("Answer both questions first")
            return
        where = f" for {html.escape(self.dataset)}" if self.dataset else ""
        lines = [f"<b>Proposed total budget{where}: ε = {p.epsilon:g}, "
                 f"δ = {format_delta(p.delta)}</b>",
                 f"{split.sentence()} (ε and δ add up over releases).",
                 p.rationale]
        smallest = EPSILON.shown_range[0]
        ok = split.per_release_epsilon >= smallest - 1e-12
        if not ok:
            most = max(int(p.epsilon / smallest), 1)
            lines.append(f"<span style='color:#b42318'>ε {split.per_release_epsilon:.2g} "
                         f"per release is below the smallest ε a release can use "
                         f"({smallest:g}): plan at most {most} releases.</span>")
        if self.fixed_total:
            lines.append(f"<i>{html.escape(self.fixed_total)}</i>")
        self.proposal_label.setText("<br>".join(lines))
        self.use_button.setEnabled(ok)
        self.use_button.setToolTip("" if ok else "Plan fewer releases")

    def accept(self) -> None:
        split = self.split()
        if split is None or not self.use_button.isEnabled():
            return  # Enter before both answers: nothing to use yet
        super().accept()
        self.budget_chosen.emit(split.epsilon, split.delta, split.releases)
