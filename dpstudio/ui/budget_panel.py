"""Privacy budget of this dataset: spent, this release, left — in a bar and in words.

With a project open, the totals and the spending are the project's (its ledger of real
releases, across sessions); otherwise a session-level budget the analyst sets here.
Counted by the project's accountant (basic composition: ε and δ add up). Under a tight
accountant (advanced, zCDP, PLD) "spent" and "left" are its composition of the ledger's
releases and this one (:mod:`~dpstudio.ui.budget_figures`), and a line above the bars
names it in a few words, with a one-sentence tooltip. Simulations spend nothing, and the
release being prepared is not spent until it is made: the bar draws it as a second,
hatched segment after the solid one of what is spent, and the words add up ("ε 1 spent
+ 1 this release of 3 → 1 left"). When the release does not fit, "Use the remaining ε"
sets ε to exactly what is left.

A shuffle or secure-aggregation release is counted at what its protocol will charge for
the public number of users (planned in the same worker,
:mod:`~dpstudio.ui.budget_protocol`), which can be below the slider's ε: the words then
show the ledger's figure, and the tooltip says why it differs.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from dpstudio.project import ProjectError
from dpstudio.project.store import budget_amounts
from dpstudio.ui.budget_figures import (
    BudgetFigures,
    amount,
    budget_figures,
    compose_pending,
)
from dpstudio.ui.budget_protocol import plan_charge
from dpstudio.ui.number_boxes import mark
from dpstudio.ui.param_form import REFUSED_STYLE, ScientificSpinBox, SignificantSpinBox
from dpstudio.ui.session import Session
from dpstudio.ui.style import MUTED
from dpstudio.ui.worker import JobRunner

__all__ = ["ACCOUNTANT_LINES", "BudgetBar", "BudgetPanel"]

SESSION_NOTE = ("Simulations spend nothing. Session-level: open or create a project (File "
                "menu) to keep a ledger of real releases across sessions.")
PROJECT_NOTE = ("Simulations spend nothing. The totals were set when the dataset was "
                "registered in the project; the spending is its ledger of real releases.")
SPENT_COLOUR = "#2563eb"
OVER_COLOUR = "#b42318"
#: A tight accountant in a few words, and its one-sentence tooltip (basic: no line).
ACCOUNTANT_LINES = {
    "advanced": ("Counted by advanced composition",
                 "Spent and left follow the optimal composition of the releases' (ε, δ) "
                 "(Kairouz, Oh & Viswanath 2015), not the sum of their ε."),
    "zcdp": ("Counted by zCDP (ρ adds up)",
             "Spent and left follow zero-concentrated DP: the releases' ρ add up (pure-ε "
             "ones as ε²/2) and are converted to ε at the releases' total δ."),
    "pld": ("Counted by privacy-loss distributions",
            "Spent and left follow the privacy-loss distributions of what each release "
            "drew, this one included, composed by FFT (pessimistic) and read at the "
            "releases' total δ."),
}
#: Session aspects that do not change the budget (display options of the plots).
IGNORED = frozenset({"hide_true", "compositions", "metric", "confidence"})


class BudgetBar(QWidget):
    """One budget as a bar: spent (solid), then this release (hatched), out of the total.

    When this release does not fit, the bar spans what spent and this release would add
    up to, the total is marked by a line, and the hatching turns red.
    """

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._spent, self._this, self._total, self._over = 0.0, 0.0, 1.0, False
        self.setAccessibleName(name)
        self.setMinimumHeight(14)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(120, 14)

    def set_parts(self, spent: float, this: float, total: float, over: bool) -> None:
        """Draw ``spent`` and ``this`` release out of ``total`` (red hatching if ``over``)."""
        parts = (max(spent, 0.0), max(this, 0.0), max(total, 0.0), bool(over))
        if parts != (self._spent, self._this, self._total, self._over):
            self._spent, self._this, self._total, self._over = parts
            self.update()

    def parts(self) -> dict[str, float | bool]:
        """What is drawn: spent, this and total as shares of the bar's width (tests)."""
        span = max(self._total, self._spent + self._this, 1e-300)
        return {"spent": self._spent / span, "this": self._this / span,
                "total": self._total / span, "over": self._over}

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        shares = self.parts()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        frame = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Mid), 1))
        painter.setBrush(self.palette().color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(frame, 3, 3)
        inner = frame.adjusted(1, 1, -1, -1)
        width = inner.width()
        spent_w, this_w = width * shares["spent"], width * shares["this"]
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(SPENT_COLOUR))
        painter.drawRect(QRectF(inner.left(), inner.top(), spent_w, inner.height()))
        colour = QColor(OVER_COLOUR if self._over else SPENT_COLOUR)
        this_rect = QRectF(inner.left() + spent_w, inner.top(), this_w, inner.height())
        light = QColor(colour)
        light.setAlpha(60)
        painter.setBrush(light)
        painter.drawRect(this_rect)
        painter.setBrush(QBrush(colour, Qt.BrushStyle.BDiagPattern))
        painter.drawRect(this_rect)
        if self._over:  # where the budget ends
            x = inner.left() + width * shares["total"]
            painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Text), 2))
            painter.drawLine(int(round(x)), int(frame.top()), int(round(x)),
                             int(frame.bottom()))
        painter.end()


class BudgetPanel(QWidget):
    """Reads the :class:`Session`; the total budget is editable here (no project open)."""

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        # Typed totals are kept as typed and checked as a project checks its budget.
        self.total_eps = SignificantSpinBox(self, steps_per_decade=10, keep_typed=True)
        self.total_eps.setRange(0.01, 1000.0)
        self.total_eps.setToolTip("Total ε you allow for this dataset in this session")
        self.total_delta = ScientificSpinBox(self, keep_typed=True)
        self.total_delta.setRange(1e-15, 0.5)
        self.total_delta.setToolTip("Total δ you allow for this dataset in this session")
        totals = QHBoxLayout()
        totals.addWidget(QLabel("Total ε", self))
        totals.addWidget(self.total_eps, 1)
        totals.addWidget(QLabel("δ", self))
        totals.addWidget(self.total_delta, 1)
        self.totals_hint = QLabel(self)
        self.totals_hint.setWordWrap(True)
        self.totals_hint.setStyleSheet(REFUSED_STYLE)
        self.totals_hint.hide()
        #: Total boxes holding a refused number → why (the session keeps its last totals).
        self.refused: dict[str, str] = {}
        #: Composes a tight accountant's figures off the UI thread (a second, at times).
        self.runner = JobRunner(self)
        self.runner.sig_finished.connect(self._composed)
        self._submitted: object | None = None
        self._planning: object | None = None
        self.accountant_line = QLabel(self)
        self.accountant_line.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        self.accountant_line.hide()
        self.bar = BudgetBar("ε budget", self)
        self.words = self._words_label()
        self.delta_bar = BudgetBar("δ budget", self)
        self.delta_words = self._words_label()
        self.use_button = QPushButton(self)
        self.use_button.clicked.connect(self.use_remaining)
        self.use_button.hide()
        self.note = QLabel(SESSION_NOTE, self)
        self.note.setWordWrap(True)
        self.note.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(3)
        layout.addLayout(totals)
        layout.addWidget(self.totals_hint)
        for w in (self.accountant_line, self.bar, self.words, self.delta_bar,
                  self.delta_words):
            layout.addWidget(w)
        use_row = QHBoxLayout()
        use_row.addWidget(self.use_button)
        use_row.addStretch(1)
        layout.addLayout(use_row)
        self.setToolTip(self.note.text())
        self.note.hide()
        self.total_eps.valueChanged.connect(self._totals_edited)
        self.total_delta.valueChanged.connect(self._totals_edited)
        session.changed.connect(self.refresh)
        self.refresh()

    def _words_label(self) -> QLabel:
        label = QLabel(self)
        label.setWordWrap(True)  # never widen the dock
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def _totals_edited(self) -> None:
        """A total typed: in force when a project would accept it as a budget, else kept
        in its box, marked, with the project's sentence (the command line's) below."""
        eps, delta = (float(self.total_eps.typed_text()),
                      float(self.total_delta.typed_text()))
        self.refused.clear()
        for key, pair in (("epsilon", (eps, 0.0)), ("delta", (1.0, delta))):
            try:
                budget_amounts(*pair)
            except ProjectError as exc:
                self.refused[key] = str(exc)
        self._show_refused()
        if not self.refused:
            self.session.set_total_budget(eps, delta)

    def _show_refused(self) -> None:
        for key, box, what in (("epsilon", self.total_eps, "ε"),
                               ("delta", self.total_delta, "δ")):
            mark(box, self.refused.get(key), f"Total {what} you allow for this dataset in "
                                             "this session")
        text = " ".join(f"{why}." for why in self.refused.values())
        self.totals_hint.setText(text)
        self.totals_hint.setVisible(bool(text))

    def figures(self) -> dict[str, float]:
        """Total, spent, this release and remaining ε and δ (remaining after this release)."""
        return budget_figures(self.session).floats()

    def use_remaining(self) -> None:
        """Set ε (and δ, if it is δ that does not fit) to exactly what the budget has
        left, as the project's accountant counts it."""
        eps, delta = budget_figures(self.session).usable()
        if delta is not None:
            self.session.use_delta(delta)
        if eps is not None:
            self.session.use_epsilon(eps)

    def refresh(self, aspect: str = "") -> None:
        if aspect in IGNORED:
            return
        s = self.session
        pb = s.project_budget
        f = budget_figures(s)
        if pb is not None and self.refused:  # the project's totals replace typed ones
            self.refused.clear()
            self._show_refused()
        for w in (self.total_eps, self.total_delta):
            w.blockSignals(True)
            w.setEnabled(pb is None)
        if "epsilon" not in self.refused:
            self.total_eps.setValue(float(f.total[0]))
        if "delta" not in self.refused:
            self.total_delta.setValue(float(f.total[1]))
        for w in (self.total_eps, self.total_delta):
            w.blockSignals(False)
        self._refresh_tips(f)
        line = ACCOUNTANT_LINES.get(f.accountant) if pb is not None else None
        self.accountant_line.setVisible(line is not None)
        if line is not None:
            self.accountant_line.setText(f"{line[0]} (composing…)" if f.pending is not None
                                         else line[0])
            self.accountant_line.setToolTip(line[1])
        if f.pending is not None and f.pending != self._submitted:
            self._submitted = f.pending
            self.runner.submit("compose", compose_pending, f.pending)
        if f.planning is not None and f.planning != self._planning:
            self._planning = f.planning
            self.runner.submit("protocol", plan_charge, f.planning)
        for index, (bar, words) in enumerate(((self.bar, self.words),
                                              (self.delta_bar, self.delta_words))):
            over = f.ready and f.after[index] < 0
            bar.set_parts(float(f.spent[index]), float(f.added[index]),
                          float(f.total[index]), over)
            text = f.words(index)
            words.setText(text)
            words.setStyleSheet(f"color: {OVER_COLOUR}; font-weight: bold;" if over else "")
            bar.setAccessibleDescription(text)
            if index == 1:
                bar.setVisible(f.shows_delta)
                words.setVisible(f.shows_delta)
        self._refresh_use_button(f)

    def _composed(self, key: str, _result: object) -> None:
        """A tight accountant's composition (or a protocol's charge) is cached: every
        reader of the budget (this panel, the Release… button) reads it again."""
        if key == "protocol":
            self._planning = None
        else:
            self._submitted = None
        self.session.changed.emit("budget")

    def shutdown(self) -> None:
        """Stop the worker (the window is closing)."""
        self.runner.shutdown()

    def _refresh_use_button(self, f: BudgetFigures) -> None:
        eps, delta = f.usable() if f.ready else (None, None)
        names = " and ".join(n for n, v in (("ε", eps), ("δ", delta)) if v is not None)
        if not names:
            self.use_button.hide()
            return
        shown = " and ".join(f"{n} = {amount(v)}" for n, v in (("ε", eps), ("δ", delta))
                             if v is not None)
        self.use_button.setText(f"Use the remaining {names} ({shown})")
        self.use_button.setToolTip(
            f"This release does not fit in what is left {f.where()}: set its {names} to "
            f"exactly what is left ({shown}, {f.accountant} accountant), so it can be "
            "released.")
        self.use_button.show()

    def _refresh_tips(self, f: BudgetFigures) -> None:
        s, pb = self.session, self.session.project_budget
        name = f.dataset
        hatched = ("Solid: spent. Hatched: the release being prepared, not spent until you "
                   "release it.")
        if pb is None:
            self.note.setText(SESSION_NOTE)
            self.setToolTip(f"Privacy budget of {name} in this session. {SESSION_NOTE}")
            self._show_refused()
            spent = "Nothing is spent in a session: real releases are made in a project."
        else:
            self.note.setText(PROJECT_NOTE)
            self.setToolTip(f"Privacy budget of {name} in the project {pb.project}. "
                            f"{PROJECT_NOTE}")
            fixed = ("fixed when the dataset was registered in the project" if pb.registered
                     else "the project's default: the first release registers the dataset "
                          "with it")
            for w, what in ((self.total_eps, "ε"), (self.total_delta, "δ")):
                w.setToolTip(f"Total {what} of this dataset in {pb.project} ({fixed})")
            n = pb.releases
            spent = (f"Spent: {n} real release{'s' if n != 1 else ''} of {name} recorded in "
                     f"{pb.project}'s ledger ({f.accountant} accountant).")
        if not f.ready:
            problem = s.problem()
            hatched = (f"Nothing to release yet ({problem})." if problem
                       else "Nothing to release yet.")
        elif f.asked is not None:
            hatched += " " + charge_differs(f)
        for w in (self.bar, self.words, self.delta_bar, self.delta_words):
            w.setToolTip(f"{spent} {hatched}")


def charge_differs(f: BudgetFigures) -> str:
    """Why "this release" is not the ε on the slider: what the protocol meets for the
    public number of users, which the ledger charges (two or three sentences)."""
    assert f.asked is not None and f.planned is not None
    shown = [i for i in (0, 1) if i == 0 or f.this[1] != f.asked[1]]
    said = " and ".join(f"{'εδ'[i]} {amount(f.this[i])}" for i in shown)
    asked = " and ".join(f"{'εδ'[i]} {amount(f.asked[i])}" for i in shown)
    how = f.planned.accounting
    how = f" Its accounting: {how[0].upper()}{how[1:]}." if how else ""
    than = "less" if f.this[0] <= f.asked[0] else "more"
    return (f"This release charges {said}, not the {asked} set: for its "
            f"{f.planned.users:,} users (a public number) the protocol meets {than} than "
            f"asked, and the ledger charges what it meets, as the release dialog shows."
            f"{how}")
