"""Privacy budget of this dataset in this session: spent, this release, remaining.

Counted by basic composition (ε and δ add up). Session-level for now: the ledger of real
releases across sessions comes with project files. Simulations spend nothing.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui.param_form import ScientificSpinBox, SignificantSpinBox
from dpstudio.ui.session import Session
from dpstudio.ui.style import MUTED

__all__ = ["BudgetPanel"]


class BudgetPanel(QWidget):
    """Reads the :class:`Session`; the total budget is editable here."""

    #: Session aspects that change what this panel shows ("" = everything).
    ASPECTS = frozenset({"", "dataset", "column", "trust_model", "query", "mechanism",
                         "epsilon", "delta", "budget", "refresh"})

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.total_eps = SignificantSpinBox(self, steps_per_decade=10)
        self.total_eps.setRange(0.01, 1000.0)
        self.total_eps.setToolTip("Total ε you allow for this dataset in this session")
        self.total_delta = ScientificSpinBox(self)
        self.total_delta.setRange(1e-15, 0.5)
        self.total_delta.setToolTip("Total δ you allow for this dataset in this session")
        totals = QHBoxLayout()
        totals.addWidget(QLabel("ε", self))
        totals.addWidget(self.total_eps, 1)
        totals.addWidget(QLabel("δ", self))
        totals.addWidget(self.total_delta, 1)
        self.spent_label = QLabel(self)
        self.this_label = QLabel(self)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.bar.setToolTip("Share of the session's ε budget used after this release")
        self.note = QLabel("Simulations spend nothing. Session-level for now; the ledger "
                           "of real releases comes with project files.", self)
        self.note.setWordWrap(True)
        self.note.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Total", totals)
        form.addRow("Spent", self.spent_label)
        self.this_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(4)
        layout.addLayout(form)
        layout.addWidget(self.bar)
        self.setToolTip(self.note.text())
        self.note.hide()
        self._chunk = ""
        self.total_eps.valueChanged.connect(self._totals_edited)
        self.total_delta.valueChanged.connect(self._totals_edited)
        session.changed.connect(self.refresh)
        self.refresh()

    def _totals_edited(self) -> None:
        self.session.set_total_budget(self.total_eps.value(), self.total_delta.value())

    def figures(self) -> dict[str, float]:
        """Spent, this release and remaining ε and δ (remaining after this release)."""
        s = self.session
        spent_e = sum(e for _, e, _ in s.spent)
        spent_d = sum(d for _, _, d in s.spent)
        this_d = s.delta if s.needs_delta else 0.0
        return {"spent_epsilon": spent_e, "spent_delta": spent_d,
                "this_epsilon": s.epsilon, "this_delta": this_d,
                "remaining_epsilon": s.total_epsilon - spent_e - s.epsilon,
                "remaining_delta": s.total_delta - spent_d - this_d}

    def refresh(self, aspect: str = "") -> None:
        if aspect not in self.ASPECTS:
            return
        s = self.session
        for w in (self.total_eps, self.total_delta):
            w.blockSignals(True)
        self.total_eps.setValue(s.total_epsilon)
        self.total_delta.setValue(s.total_delta)
        for w in (self.total_eps, self.total_delta):
            w.blockSignals(False)
        name = s.dataset.name if s.dataset is not None else "no dataset"
        self.setToolTip(f"Privacy budget of {name} in this session. {self.note.text()}")
        f = self.figures()
        releases = len(s.spent)
        self.spent_label.setText(
            f"ε {f['spent_epsilon']:.3g}, δ {f['spent_delta']:.1g} "
            f"({releases} release{'s' if releases != 1 else ''}) · this one: "
            f"ε {f['this_epsilon']:.3g}, δ {f['this_delta']:.1g}")
        self.spent_label.setToolTip("Spent by real releases of this dataset in this session; "
                                    "the release being prepared would add the second part")
        self.this_label.setText(f"ε {f['this_epsilon']:.3g}, δ {f['this_delta']:.1g}")
        used = (f["spent_epsilon"] + f["this_epsilon"]) / max(s.total_epsilon, 1e-12)
        value = int(min(used, 1.0) * 1000)
        if value != self.bar.value():
            self.bar.setValue(value)
        over = f["remaining_epsilon"] < -1e-12 or f["remaining_delta"] < -1e-18
        left = max(f["remaining_epsilon"], 0.0)
        self.bar.setFormat(f"{min(used, 9.99):.0%} of ε used · "
                           + ("over budget" if over else f"{left:.3g} left"))
        chunk = "#b42318" if over else "#2563eb"
        if chunk != self._chunk:  # style sheets are costly: only when the colour changes
            self._chunk = chunk
            self.bar.setStyleSheet(f"QProgressBar::chunk {{ background: {chunk}; }}"
                                   "QProgressBar { text-align: center; color: palette(text);"
                                   " background: palette(base); border: 1px solid palette(mid);"
                                   " border-radius: 3px; }")
