"""The ε bar: presentation mode's only control, a tool bar with the privacy budget ε.

While presenting, the docks with the full controls are hidden; this bar keeps the one
number a stakeholder asks about — "and with more privacy?" — in reach, with what it
means in odds, and the way back.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QToolBar, QWidget

from dpstudio.analysis.choices import fixed_epsilon
from dpstudio.ui.param_form import LogSliderSpin
from dpstudio.ui.session import EPS_RANGE, Session
from dpstudio.ui.texts import GLOSSARY

__all__ = ["PresentationBar", "odds_sentence"]


def odds_sentence(epsilon: float) -> str:
    """What ε means in odds: "changes the odds of any conclusion by at most ×2.72".

    Parameters
    ----------
    epsilon : float
        The privacy budget of one release.

    Returns
    -------
    str
        The sentence, with e^ε to three significant digits.
    """
    return f"changes the odds of any conclusion by at most ×{math.exp(epsilon):.3g}"


class PresentationBar(QToolBar):
    """ε (slider and box) bound to ``session``, its meaning in odds, and "Leave".

    Parameters
    ----------
    session : Session
        The analysis session whose ε the bar shows and sets.
    leave : callable
        Called by the Leave button (turns presentation mode off).
    parent : QWidget, optional
        The main window.
    """

    def __init__(self, session: Session, leave: Any, parent: QWidget | None = None) -> None:
        super().__init__("Presentation", parent)
        self.setObjectName("presentation_bar")
        self.setMovable(False)
        self.setFloatable(False)
        self.session = session
        label = QLabel("ε", self)
        label.setToolTip(GLOSSARY["epsilon"])
        self.epsilon = LogSliderSpin(*EPS_RANGE, session.epsilon, parent=self)
        self.epsilon.setToolTip(GLOSSARY["epsilon"])
        self.epsilon.slider.setMinimumWidth(120)
        self.epsilon.setMaximumWidth(420)
        self.epsilon.value_changed.connect(session.set_epsilon)
        # A typed ε is checked as the Analysis panel's is (kept as typed when refused).
        typed = getattr(self.epsilon, "typed", None)
        if typed is not None and hasattr(session, "enter_epsilon"):
            typed.connect(session.enter_epsilon)
        self.odds = _FittingLabel(self)
        self.odds.setToolTip("e^ε: how much one person's record can change the odds of any "
                             "conclusion drawn from the release")
        self.leave_button = QPushButton("Leave (F11)", self)
        self.leave_button.setToolTip("Leave presentation mode: the layout, the type and "
                                     "the true values come back as they were")
        self.leave_button.clicked.connect(lambda _checked=False: leave())
        for widget in (label, self.epsilon, self.odds, self.leave_button):
            self.addWidget(widget)
        label.setBuddy(self.epsilon.spin)
        self.setContentsMargins(8, 2, 8, 2)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        session.epsilon_changed.connect(self._show_epsilon)
        session.changed.connect(self._changed)
        self._changed("")
        self.hide()

    def _show_epsilon(self, epsilon: float) -> None:
        self.epsilon.set_value(epsilon)
        self.odds.set_texts(f"ε = {epsilon:.3g} {odds_sentence(epsilon)}",
                            f"odds ×{math.exp(epsilon):.3g} at most")

    def _changed(self, aspect: str) -> None:
        """Follow the session; where the mechanism's parameters fix ε, say so, disabled; a
        refused typed ε stays in the box, marked, with the reason."""
        settings = self.session.settings()
        fixed = None if settings is None else fixed_epsilon(settings)
        self.epsilon.setEnabled(fixed is None)
        refused = getattr(self.session, "refused", {}).get("epsilon")
        if hasattr(self.epsilon, "mark"):
            self.epsilon.mark(refused[1] if refused else None, GLOSSARY["epsilon"])
        if refused is None:
            self._show_epsilon(self.session.epsilon if fixed is None else fixed)


class _FittingLabel(QLabel):
    """A label showing its long text where it fits and its short one otherwise.

    It asks only for the short text's width, so on a narrow screen the tool bar keeps the
    Leave button in view instead of moving it to its overflow menu; the room it gets
    beyond that (it stretches) shows the whole sentence.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._long = self._short = ""

    def set_texts(self, long: str, short: str) -> None:
        self._long, self._short = long, short
        self.updateGeometry()
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        hint = super().sizeHint()
        return QSize(self.fontMetrics().horizontalAdvance(self._short) + 8, hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return self.sizeHint()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        fits = self.fontMetrics().horizontalAdvance(self._long) + 8 <= self.width()
        text = self._long if fits else self._short
        if text != self.text():
            self.setText(text)
