"""Privacy budget of this dataset: spent, this release, remaining.

With a project open, the totals and the spending are the project's (its ledger of real
releases, across sessions); otherwise a session-level budget the analyst sets here.
Counted by basic composition (ε and δ add up). Simulations spend nothing.
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

from dpstudio.analysis.choices import release_epsilon
from dpstudio.ui.param_form import ScientificSpinBox, SignificantSpinBox
from dpstudio.ui.session import Session
from dpstudio.ui.style import MUTED

__all__ = ["BudgetPanel"]

SESSION_NOTE = ("Simulations spend nothing. Session-level: open or create a project (File "
                "menu) to keep a ledger of real releases across sessions.")
PROJECT_NOTE = ("Simulations spend nothing. The totals were set when the dataset was "
                "registered in the project; the spending is its ledger of real releases.")


class BudgetPanel(QWidget):
    """Reads the :class:`Session`; the total budget is editable here."""

    #: Session aspects that change what this panel shows ("" = everything).
    #: ("params": a mechanism parameter can fix the release's ε, e.g. rr's p.)
    ASPECTS = frozenset({"", "dataset", "column", "trust_model", "query", "mechanism",
                         "params", "epsilon", "delta", "budget", "refresh"})

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
        self.spent_label.setWordWrap(True)  # never widen the dock
        self.this_label = QLabel(self)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.bar.setToolTip("Share of the session's ε budget used after this release")
        self.note = QLabel(SESSION_NOTE, self)
        self.note.setWordWrap(True)
        self.note.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Total", totals)
        form.addRow("Spent", self.spent_label)
        self.left_label = QLabel(self)
        self.left_label.setWordWrap(True)
        form.addRow("Left", self.left_label)
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
        """Total, spent, this release and remaining ε and δ (remaining after this release)."""
        s = self.session
        pb = s.project_budget
        if pb is not None:
            total_e, total_d = pb.total_epsilon, pb.total_delta
            spent_e, spent_d = pb.spent_epsilon, pb.spent_delta
        else:
            # Real releases are made in a project only: a session spends nothing.
            total_e, total_d = s.total_epsilon, s.total_delta
            spent_e = spent_d = 0.0
        this_d = s.delta if s.needs_delta else 0.0
        snapshot = s.settings()
        # The engine object's ε (randomized response with a chosen p fixes its own).
        this_e = s.epsilon if snapshot is None else release_epsilon(snapshot)
        return {"total_epsilon": total_e, "total_delta": total_d,
                "spent_epsilon": spent_e, "spent_delta": spent_d,
                "this_epsilon": this_e, "this_delta": this_d,
                "remaining_epsilon": total_e - spent_e - this_e,
                "remaining_delta": total_d - spent_d - this_d}

    def refresh(self, aspect: str = "") -> None:
        if aspect not in self.ASPECTS:
            return
        s = self.session
        pb = s.project_budget
        f = self.figures()
        for w in (self.total_eps, self.total_delta):
            w.blockSignals(True)
            w.setEnabled(pb is None)
        self.total_eps.setValue(f["total_epsilon"])
        self.total_delta.setValue(f["total_delta"])
        for w in (self.total_eps, self.total_delta):
            w.blockSignals(False)
        name = s.dataset.name if s.dataset is not None else "no dataset"
        if pb is None:
            self.note.setText(SESSION_NOTE)
            self.setToolTip(f"Privacy budget of {name} in this session. {SESSION_NOTE}")
            for w, what in ((self.total_eps, "ε"), (self.total_delta, "δ")):
                w.setToolTip(f"Total {what} you allow for this dataset in this session")
            releases = 0
            spent_tip = ("Spent by real releases of this dataset in this session; the "
                         "release being prepared would add the second part")
        else:
            self.note.setText(PROJECT_NOTE)
            self.setToolTip(f"Privacy budget of {name} in the project {pb.project}. "
                            f"{PROJECT_NOTE}")
            fixed = ("fixed when the dataset was registered in the project" if pb.registered
                     else "the project's default: the first release registers the dataset "
                          "with it")
            for w, what in ((self.total_eps, "ε"), (self.total_delta, "δ")):
                w.setToolTip(f"Total {what} of this dataset in {pb.project} ({fixed})")
            releases = pb.releases
            spent_tip = (f"Spent by the real releases of {name} recorded in {pb.project}'s "
                         "ledger; the release being prepared would add the second part")
        self.spent_label.setText(
            f"ε {f['spent_epsilon']:.3g}, δ {f['spent_delta']:.1g} "
            f"({releases} release{'s' if releases != 1 else ''}) · this one: "
            f"ε {f['this_epsilon']:.3g}, δ {f['this_delta']:.1g}")
        self.spent_label.setToolTip(spent_tip)
        self.this_label.setText(f"ε {f['this_epsilon']:.3g}, δ {f['this_delta']:.1g}")
        left_e = max(f["total_epsilon"] - f["spent_epsilon"], 0.0)
        left_d = max(f["total_delta"] - f["spent_delta"], 0.0)
        self.left_label.setText(f"ε {left_e:.3g}, δ {left_d:.1g} of ε {f['total_epsilon']:.3g}, "
                                f"δ {f['total_delta']:.1g}")
        self.left_label.setToolTip(
            (f"What {pb.project}'s ledger leaves for {name}" if pb is not None else
             "What this session's budget leaves") + " before the release being prepared")
        self.bar.setToolTip("Share of the project's ε budget for this dataset used after "
                            "this release" if pb is not None else
                            "Share of the session's ε budget used after this release")
        used = (f["spent_epsilon"] + f["this_epsilon"]) / max(f["total_epsilon"], 1e-12)
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
