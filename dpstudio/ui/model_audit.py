"""The model's trade-off plot: what an attacker can learn of one record, and an audit.

:class:`ModelAuditView` shows, for the Models tab's training run, the model's trade-off
curve at the (ε, δ) it claims (type I against type II error of an attacker testing
whether one record was in the training data: the method's curve where the engine knows
it, else the boundary of the (ε, δ) region, labelled so) and, after "Run audit", the
membership audit's points with their Clopper–Pearson boxes over it and the ε the audit
certifies, in two plain sentences under the plot. Before it runs, a sentence says the
most the chosen number of trainings can certify (:func:`power_words`); when that is
nothing, "Run audit" is disabled and its tooltip says how many it takes. Both run in a
worker thread (the newest request wins; Cancel keeps the plot as it was and says
"cancelled"). Everything is simulated with seeded noise: nothing is released or charged.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from dpstudio.engine.learning.membership import AUDIT_CONFIDENCE, max_certifiable
from dpstudio.ui.model_audit_job import (
    AuditOutcome,
    ModelTradeoff,
    audit_delta,
    audit_job,
    claim_job,
    runs_to_certify,
)
from dpstudio.ui.tradeoff_plot import TradeoffPlot
from dpstudio.ui.worker import JobRunner

__all__ = ["DEFAULT_RUNS", "RUN_TIP", "SIMULATED", "ModelAuditView", "power_words",
           "too_few_tip"]

#: Trainings per neighbouring dataset by default: seconds, not minutes, on a sample.
DEFAULT_RUNS = 40
#: What the view always says about where its noise comes from.
SIMULATED = ("Simulated with seeded noise (seed {seed}): the audit trains the model many "
             "times on copies of the data; nothing is released or charged to a budget.")
_CLAIM, _AUDIT = "model-audit-claim", "model-audit"
#: The Run button's tooltip when the chosen trainings can certify something.
RUN_TIP = ("Train the model many times with and without one unusual record and attack "
           "each model: how much can an attacker tell? (simulated noise)")


def power_words(runs: int, delta: float = 0.0, claimed: float | None = None) -> str:
    """One sentence, before an audit runs: the most ``runs`` trainings can certify.

    Parameters
    ----------
    runs : int
        Trainings per neighbouring dataset.
    delta : float, optional
        The claimed δ the audit subtracts.
    claimed : float, optional
        The claimed ε (None without a guarantee).

    Returns
    -------
    str
    """
    conf = f"{AUDIT_CONFIDENCE:.0%}"
    most = max_certifiable(runs, delta=delta)
    if most <= 0.0:
        return (f"{runs} trainings per dataset cannot certify any ε > 0 at {conf} "
                f"confidence, whatever the attack finds: it takes at least "
                f"{runs_to_certify(delta)}.")
    tail = ""
    if claimed is not None and math.isfinite(claimed) and most <= claimed:
        tail = (f", not above the claimed ε = {claimed:.3g}: this audit cannot show the "
                f"claim wrong")
    return (f"{runs} trainings per dataset can certify at most ε = {most:.2f} at {conf} "
            f"confidence (a perfect attack){tail}.")


def too_few_tip(delta: float = 0.0) -> str:
    """The disabled Run button's tooltip: how many trainings certify anything (one sentence).

    Parameters
    ----------
    delta : float, optional
        The claimed δ the audit subtracts.

    Returns
    -------
    str
    """
    return (f"It takes at least {runs_to_certify(delta)} trainings per dataset to certify "
            f"any ε > 0 at {AUDIT_CONFIDENCE:.0%} confidence.")


def claim_words(claim: ModelTradeoff) -> str:
    """One or two sentences for stakeholders on what the claimed guarantee allows.

    Parameters
    ----------
    claim : ModelTradeoff
        The model's curve (:func:`~dpstudio.ui.model_audit_job.claimed_curve`).

    Returns
    -------
    str
    """
    if claim.accuracy is None:
        return ("This model is trained without privacy: nothing limits how well an attacker "
                "can guess whether one person's record was used to train it.")
    how = ("by the method's curve (its accounting's, pessimistic)"
           if claim.region_note is None else "by its (ε, δ) guarantee alone")
    delta = f", δ = {_compact(claim.delta)}" if claim.delta else ""
    return (f"An attacker guessing whether one person's record was used to train the model, "
            f"starting at even odds, is right at most {claim.accuracy:.1%} of the time "
            f"(random guessing: 50%), {how} at ε = {claim.epsilon:.3g}{delta}.")


def audit_words(outcome: AuditOutcome) -> str:
    """The audit's finding in one sentence: the ε it certifies, against the claim.

    Parameters
    ----------
    outcome : AuditOutcome
        A finished audit.

    Returns
    -------
    str
    """
    a, claim = outcome.audit, outcome.claim
    lower = float(a["epsilon_lower"])
    conf = f"{float(a['confidence']):.0%}"
    if lower <= 0.0:
        found = (f"the attack certifies no privacy loss at {conf} confidence (ε ≥ 0; the "
                 f"most {a['trials']} models per dataset can certify is "
                 f"{float(a['max_certifiable']):.2f})")
    else:
        found = f"the attack certifies ε ≥ {lower:.2f} at {conf} confidence"
    verdict = ""
    if claim.accuracy is not None:
        verdict = (f", within the claimed ε = {claim.epsilon:.3g}" if lower <= claim.epsilon
                   else f", ABOVE the claimed ε = {claim.epsilon:.3g}: the claim is wrong")
    return (f"Audit: {outcome.runs} trainings with and {outcome.runs} without one unusual "
            f"record; {found}{verdict}.")


def _compact(value: float) -> str:
    """δ as "1e-5" (not "1e-05")."""
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


class ModelAuditView(QWidget):
    """Trade-off curve of the model at its claimed (ε, δ), with a membership audit.

    Parameters
    ----------
    parent : QWidget, optional
        The Qt parent.

    Attributes
    ----------
    plot : TradeoffPlot
        The curve (``plot.curves()``) and the audit's points (``plot.attack()``).
    claim : ModelTradeoff or None
        What the plot shows now (with ``attack`` once an audit finished).
    outcome : AuditOutcome or None
        The last finished audit.
    """

    finished = Signal(object)     # AuditOutcome
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request: Any = None
        self._frame: Any = None
        self._schema: Any = None
        self.claim: ModelTradeoff | None = None
        self.outcome: AuditOutcome | None = None
        self.busy = False
        self.runner = JobRunner(self)
        self.runner.sig_finished.connect(self._finished)
        self.runner.sig_failed.connect(self._failed)
        self.runner.sig_progress.connect(self._progress)
        self.runner.sig_busy.connect(self._busy)

        self.plot = TradeoffPlot(self)
        self.plot.setMinimumHeight(260)
        self.words = QLabel(self)
        self.words.setWordWrap(True)
        self.words.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.simulated = QLabel(SIMULATED.format(seed="–"), self)
        self.simulated.setWordWrap(True)
        self.simulated.setStyleSheet("color: palette(mid);")

        self.runs_box = QSpinBox(self)
        self.runs_box.setRange(4, 2000)
        self.runs_box.setValue(DEFAULT_RUNS)
        self.runs_box.setSuffix(" trainings per dataset")
        self.runs_box.setToolTip("How many models the audit trains with, and as many without, "
                                 "the unusual record: more trainings can certify a larger ε")
        self.run_button = QPushButton("Run audit", self)
        self.run_button.setToolTip(RUN_TIP)
        #: What the chosen number of trainings can certify at most, said before a run.
        self.power = QLabel(self)
        self.power.setWordWrap(True)
        self._delta = 0.0  # the δ the audit subtracts (the request's, resolved)
        self.run_button.clicked.connect(self.run_audit)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.status = QLabel(self)
        self.status.setWordWrap(True)

        # Two rows: in one, the controls would set the Models tab's (and so the window's)
        # minimum width near 600 px.
        how = QHBoxLayout()
        how.addWidget(QLabel("Membership audit:", self))
        how.addWidget(self.runs_box, 1)
        bar = QHBoxLayout()
        bar.addWidget(self.run_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.progress, 1)
        col = QVBoxLayout(self)
        col.addWidget(self.plot, 1)
        col.addWidget(self.words)
        col.addLayout(how)
        col.addWidget(self.power)
        col.addLayout(bar)
        col.addWidget(self.status)
        col.addWidget(self.simulated)
        self.runs_box.valueChanged.connect(lambda _v: self._update_power())
        self._update_power()

    # ----------------------------------------------------------------- public API

    def set_request(self, request: Any, frame: Any, schema: Any) -> None:
        """Show the model's curve for ``request`` (a :class:`~dpstudio.ui.model_jobs
        .ModelRequest`) on ``frame`` with the declarations ``schema``; drops any audit.

        Parameters
        ----------
        request : ModelRequest
            The training run.
        frame : pandas.DataFrame
            The table.
        schema : Schema
            The declarations in force.
        """
        self.request, self._frame, self._schema = request, frame, schema
        self.simulated.setText(SIMULATED.format(seed=request.seed))
        self.outcome = None
        self.runner.cancel(_AUDIT)
        self._delta = audit_delta(request, schema)
        self._update_power()
        self.status.setText("working out the model's curve…")
        self.runner.submit(_CLAIM, claim_job, request, frame, schema)

    def run_audit(self) -> None:
        """Start the audit of the current request (``runs_box`` trainings per dataset)."""
        if self.request is None:
            self.status.setText("Choose a label, features and a method first.")
            return
        if max_certifiable(int(self.runs_box.value()), delta=self._delta) <= 0.0:
            self.status.setText(too_few_tip(self._delta))
            return
        self.status.setText("")
        self.progress.setValue(0)
        self.progress.setFormat("auditing…")
        self.runner.submit(_AUDIT, audit_job, self.request, self._frame, self._schema,
                           int(self.runs_box.value()))

    def cancel(self) -> None:
        """Stop the running audit: the plot stays as it was."""
        if not self.busy:
            return
        self.runner.cancel(_AUDIT)
        self.runner.cancel(_CLAIM)
        self.progress.setValue(0)
        self.progress.setFormat("cancelled")
        self.status.setText("Audit cancelled: the plot shows the last finished result.")
        self.cancelled.emit()

    def shutdown(self) -> None:
        """Stop the worker thread (the window closing)."""
        self.runner.shutdown()

    # ------------------------------------------------------------------ internals

    def _update_power(self) -> None:
        """Say what the chosen trainings can certify; Run only when that is above 0."""
        runs = int(self.runs_box.value())
        req = self.request
        claimed = (None if req is None or req.method == "nonprivate"
                   else float(req.epsilon))
        self.power.setText(power_words(runs, self._delta, claimed))
        able = max_certifiable(runs, delta=self._delta) > 0.0
        self.run_button.setEnabled(req is not None and able)
        self.run_button.setToolTip(RUN_TIP if able else too_few_tip(self._delta))

    def _busy(self, key: str, busy: bool) -> None:
        if key == _AUDIT:
            self.busy = busy
            self.cancel_button.setEnabled(busy)

    def _progress(self, key: str, fraction: float, message: str) -> None:
        if key == _AUDIT:
            self.progress.setValue(int(round(1000 * fraction)))
            self.progress.setFormat(message or "auditing…")

    def _failed(self, key: str, message: str) -> None:
        if key == _AUDIT:
            self.progress.setFormat("")
            self.progress.setValue(0)
        self.status.setText(message)
        self.failed.emit(message)

    def _finished(self, key: str, result: Any) -> None:
        if key == _CLAIM:
            if self.outcome is None:  # an audit's own curve is never replaced by a claim
                self._show(result)
                self.status.setText("")
            return
        self.outcome = result
        self._show(result.claim)
        self.progress.setValue(1000)
        self.progress.setFormat("done")
        self.status.setText("")
        self.finished.emit(result)

    def _show(self, claim: ModelTradeoff) -> None:
        self.claim = claim
        if claim.accuracy is None and claim.attack is None:
            self.plot.clear_data("Trained without privacy: no curve bounds an attacker.")
        else:
            self.plot.set_result(claim)
        # The audit's points are the point of this view: shown with the details.
        self.plot.details.setChecked(claim.attack is not None)
        text = claim_words(claim)
        if self.outcome is not None and self.outcome.claim is claim:
            text += " " + audit_words(self.outcome)
        self.words.setText(text)
