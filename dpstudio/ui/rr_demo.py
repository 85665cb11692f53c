"""The classroom survey: Warner's randomized response, one simulated respondent at a time.

Each respondent answers a yes/no question truthfully with probability ``p`` and gives the
opposite answer otherwise — ε-local differential privacy with ``ε = ln(p / (1 − p))``.
Nobody's answer gives them away, yet the share of "yes" is estimated without bias by
``Ŷ = (mean(z) + p − 1) / (2p − 1)``, with standard error
``√(z̄ (1 − z̄) / n) / (2p − 1)`` (plug-in). The dialog plots the running estimate, its
95 % confidence band and the true proportion as respondents are added.

Everything is a **simulation** from a seeded :class:`SimulationSource`; the coins come
from the engine's :class:`~dpstudio.engine.local.frequency.RandomizedResponse` (exact
coins) when it is available.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from dpstudio.engine.rng import SimulationSource
from dpstudio.ui.style import GRID_ALPHA, apply_plot_palette, configure_pyqtgraph, current_palette

__all__ = [
    "MAX_RESPONDENTS",
    "RRDemoDialog",
    "Survey",
    "band_half_width",
    "epsilon_from_p",
    "p_from_epsilon",
    "standard_error",
    "warner_estimate",
]

MAX_RESPONDENTS = 1_000_000
Z_95 = 1.959963984540054
DEFAULT_QUESTION = "Have you ever cheated on an exam?"


_SHOWN = (-0.1, 1.1)


def count_ticks(top: int) -> list[list[tuple[float, str]]]:
    """Log-axis ticks for 1 … ``top`` respondents: "1", "10", "100", "1,000", …"""
    major, minor = [], []
    for exponent in range(0, int(math.log10(top)) + 1):
        major.append((float(exponent), f"{10 ** exponent:,}"))
        minor += [(math.log10(k * 10**exponent), "") for k in range(2, 10)]
    return [major, minor]


def p_from_epsilon(epsilon: float) -> float:
    """The probability of answering truthfully that gives ε-LDP: ``e^ε / (1 + e^ε)``."""
    return 1.0 / (1.0 + math.exp(-float(epsilon)))


def epsilon_from_p(p: float) -> float:
    """``ln(p / (1 − p))`` for ``p`` in (1/2, 1)."""
    return math.log(p / (1.0 - p))


def warner_estimate(z_mean: Any, p: float) -> Any:
    """Warner's unbiased estimate of the true share of "yes" from the reported share."""
    return (np.asarray(z_mean, dtype=float) + p - 1.0) / (2.0 * p - 1.0)


def standard_error(z_mean: Any, n: Any, p: float) -> Any:
    """Plug-in standard error of :func:`warner_estimate` after ``n`` reports."""
    z = np.clip(np.asarray(z_mean, dtype=float), 0.0, 1.0)
    return np.sqrt(z * (1.0 - z) / np.asarray(n, dtype=float)) / (2.0 * p - 1.0)


def band_half_width(z_mean: Any, n: Any, p: float, z: float = Z_95) -> Any:
    """Half-width of the (normal-approximation) confidence band: ``z · SE``."""
    return z * standard_error(z_mean, n, p)


@dataclass(frozen=True)
class Respondent:
    """One simulated respondent: true answer, the coin, and what they reported."""

    number: int
    truth: bool
    told_truth: bool

    @property
    def answer(self) -> bool:
        return self.truth if self.told_truth else not self.truth


class Survey:
    """A seeded simulated survey under randomized response with truth probability ``p``.

    ``truth`` is the share of respondents whose true answer is "yes".
    """

    def __init__(self, p: float, truth: float, seed: int = 0) -> None:
        if not 0.5 < p < 1.0:
            raise ValueError(f"p must lie strictly between 1/2 and 1; got {p}")
        if not 0.0 <= truth <= 1.0:
            raise ValueError(f"the true proportion must lie in [0, 1]; got {truth}")
        self.p, self.truth, self.seed = float(p), float(truth), int(seed)
        self._source = SimulationSource(self.seed)
        self._rr = _engine_rr(self.p)
        self.true_answers = np.zeros(0, dtype=np.int8)
        self.reports = np.zeros(0, dtype=np.int8)

    @property
    def epsilon(self) -> float:
        return epsilon_from_p(self.p)

    @property
    def n(self) -> int:
        return int(self.reports.size)

    def add(self, count: int) -> list[Respondent]:
        """Ask ``count`` more respondents (capped at :data:`MAX_RESPONDENTS` in all); return
        the last one asked (none if the cap is reached)."""
        count = max(0, min(int(count), MAX_RESPONDENTS - self.n))
        if count == 0:
            return []
        x = (_uniform(self._source, count) < self.truth).astype(np.int64)
        if self._rr is not None:
            z = np.asarray(self._rr.randomize(x, self._source), dtype=np.int64)
        else:  # the engine's local randomizers are not there: the same coin, inexactly
            lie = _uniform(self._source, count) >= self.p
            z = np.where(lie, 1 - x, x)
        start = self.n
        self.true_answers = np.concatenate([self.true_answers, x.astype(np.int8)])
        self.reports = np.concatenate([self.reports, z.astype(np.int8)])
        return [Respondent(start + count, bool(x[-1]), bool(x[-1] == z[-1]))]

    def running(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(n, estimate, half_width)`` after each respondent."""
        n = np.arange(1, self.n + 1, dtype=float)
        z_mean = np.cumsum(self.reports, dtype=float) / n
        return n, warner_estimate(z_mean, self.p), band_half_width(z_mean, n, self.p)

    def estimate(self) -> tuple[float, float]:
        """Current estimate and its 95 % half-width (NaN before the first respondent)."""
        if self.n == 0:
            return math.nan, math.nan
        z_mean = float(self.reports.mean())
        return float(warner_estimate(z_mean, self.p)), float(
            band_half_width(z_mean, self.n, self.p))

    def true_standard_error(self) -> float:
        """The estimator's exact standard error at the true proportion (for checks)."""
        lam = self.p * self.truth + (1.0 - self.p) * (1.0 - self.truth)
        return math.sqrt(lam * (1.0 - lam) / max(self.n, 1)) / (2.0 * self.p - 1.0)


def _uniform(source: SimulationSource, size: int) -> np.ndarray:
    """Uniform doubles in [0, 1) from 53 random bits each."""
    return (source.uint64(size) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _engine_rr(p: float) -> Any:
    try:
        from dpstudio.engine.local.frequency import RandomizedResponse
    except ImportError:  # pragma: no cover - the local engine is optional here
        return None
    try:
        return RandomizedResponse(p=p)
    except Exception:  # pragma: no cover - fall back to the plain coin
        return None


class RRDemoDialog(QDialog):
    """The dialog; ``survey`` is the :class:`Survey` shown."""

    survey_changed = Signal()

    def __init__(self, parent: QWidget | None = None, *, seed: int = 7,
                 epsilon: float = math.log(3.0), truth: float = 0.3) -> None:
        super().__init__(parent)
        self.setWindowTitle("Randomized response — classroom demo")
        self._updating = False
        self._chosen = "epsilon"
        palette = current_palette()

        title = QLabel("<b>Randomized response: the classroom survey</b>", self)
        self.badge = QLabel(self)
        self.badge.setStyleSheet(
            f"color: {palette.warning}; border: 1px solid {palette.warning}; "
            "border-radius: 3px; padding: 1px 6px; font-weight: 600;"
        )
        heading = QHBoxLayout()
        heading.addWidget(title)
        heading.addStretch(1)
        heading.addWidget(self.badge)

        intro = QLabel(
            "Each respondent privately flips a biased coin: with probability <i>p</i> they "
            "answer truthfully, otherwise they give the opposite answer. No single answer "
            "gives anyone away, yet the share of true “yes” is estimated without bias by "
            "Ŷ = (mean of answers + <i>p</i> − 1) / (2<i>p</i> − 1).",
            self,
        )
        intro.setWordWrap(True)

        self.question = QLineEdit(DEFAULT_QUESTION, self)
        self.epsilon_spin = QDoubleSpinBox(self)
        self.epsilon_spin.setRange(0.05, 4.5)
        self.epsilon_spin.setDecimals(2)
        self.epsilon_spin.setSingleStep(0.1)
        self.p_spin = QDoubleSpinBox(self)
        self.p_spin.setRange(0.51, 0.99)
        self.p_spin.setDecimals(3)
        self.p_spin.setSingleStep(0.01)
        self.truth_spin = QDoubleSpinBox(self)
        self.truth_spin.setRange(0.0, 100.0)
        self.truth_spin.setDecimals(0)
        self.truth_spin.setSingleStep(5.0)
        self.truth_spin.setSuffix(" %")
        self.truth_spin.setToolTip("The share of respondents whose true answer is “yes” "
                                   "(known here only because this is a simulation)")
        self.seed_spin = QSpinBox(self)
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("Seed of the simulated coins: the same seed replays the "
                                  "same classroom")

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Question", self.question)
        privacy = QHBoxLayout()
        privacy.addWidget(self.epsilon_spin)
        privacy.addWidget(QLabel("truth probability p", self))
        privacy.addWidget(self.p_spin)
        privacy.addStretch(1)
        form.addRow("Privacy ε", privacy)
        truth_row = QHBoxLayout()
        truth_row.addWidget(self.truth_spin)
        truth_row.addWidget(QLabel("seed", self))
        truth_row.addWidget(self.seed_spin)
        truth_row.addStretch(1)
        form.addRow("True share of “yes”", truth_row)

        self.ask_button = QPushButton("Ask one respondent", self)
        self.ask_button.setDefault(True)
        self.add_buttons = {k: QPushButton(f"Add {k:,}", self) for k in (10, 100, 1000)}
        self.reset_button = QPushButton("Start over", self)
        actions = QHBoxLayout()
        actions.addWidget(self.ask_button)
        for button in self.add_buttons.values():
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.reset_button)

        self.last_label = QLabel(self)
        self.last_label.setWordWrap(True)
        self.last_label.setTextFormat(Qt.TextFormat.RichText)
        self.last_label.setMinimumHeight(self.fontMetrics().height() * 2 + 4)

        configure_pyqtgraph()
        self.plot = pg.PlotWidget(self)
        self.plot.setObjectName("rr_demo_plot")
        self.plot.setMinimumSize(560, 300)
        item = self.plot.getPlotItem()
        item.setTitle("Running estimate of the share of “yes” (simulation)", size="11pt")
        item.setLabel("bottom", "respondents (log scale)")
        item.setLabel("left", "share of “yes”")
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        item.hideButtons()
        item.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setLogMode(x=True, y=False)
        self.plot.setYRange(-0.1, 1.1, padding=0)
        self.plot.getPlotItem().getAxis("left").setTicks(
            [[(v / 10, f"{v * 10}%") for v in range(0, 11, 2)],
             [(v / 10, "") for v in range(1, 10, 2)]])
        self.plot.setXRange(0, 3, padding=0.02)
        item.getAxis("bottom").setTicks(count_ticks(MAX_RESPONDENTS))
        item.addLegend(offset=(-8, 8), labelTextSize="9pt")
        accent = pg.mkColor(current_palette().highlight)
        band_colour = pg.mkColor(accent)
        band_colour.setAlpha(50)
        self.band_upper = pg.PlotDataItem(pen=pg.mkPen(None))
        self.band_lower = pg.PlotDataItem(pen=pg.mkPen(None))
        self.band = pg.FillBetweenItem(self.band_lower, self.band_upper, brush=band_colour)
        self.plot.addItem(self.band_upper)
        self.plot.addItem(self.band_lower)
        self.plot.addItem(self.band)
        self.estimate_curve = self.plot.plot([], [], pen=pg.mkPen(accent, width=2),
                                             name="estimate Ŷ with 95 % band")
        self.truth_line = pg.InfiniteLine(
            angle=0, pen=pg.mkPen(current_palette().warning, width=1.5,
                                  style=Qt.PenStyle.DashLine))
        self.plot.addItem(self.truth_line)
        legend = item.legend
        legend.addItem(pg.PlotDataItem(pen=self.truth_line.pen), "true share")
        for curve in (self.estimate_curve, self.band_upper, self.band_lower):
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
        apply_plot_palette(self.plot)

        self.readout = QLabel(self)
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        self.readout.setWordWrap(True)
        self.privacy_label = QLabel(self)
        self.privacy_label.setWordWrap(True)
        self.privacy_label.setStyleSheet(f"color: {palette.muted};")

        line = QFrame(self)
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(heading)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addLayout(actions)
        layout.addWidget(self.last_label)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.readout)
        layout.addWidget(self.privacy_label)
        layout.addWidget(line)
        layout.addWidget(close)

        self.epsilon_spin.setValue(epsilon)
        self.p_spin.setValue(p_from_epsilon(epsilon))
        self.truth_spin.setValue(100.0 * truth)
        self.seed_spin.setValue(seed)
        self.epsilon_spin.valueChanged.connect(self._on_epsilon)
        self.p_spin.valueChanged.connect(self._on_p)
        self.truth_spin.valueChanged.connect(lambda _v: self.start_over())
        self.seed_spin.valueChanged.connect(lambda _v: self.start_over())
        self.question.textChanged.connect(lambda _t: self._refresh())
        self.ask_button.clicked.connect(lambda: self.add(1))
        for count, button in self.add_buttons.items():
            button.clicked.connect(lambda _c=False, k=count: self.add(k))
        self.reset_button.clicked.connect(self.start_over)
        self.resize(760, 720)
        self.start_over()

    # -- parameters ---------------------------------------------------------------------------

    def _on_epsilon(self, value: float) -> None:
        if self._updating:
            return
        self._chosen = "epsilon"
        self._updating = True
        self.p_spin.setValue(p_from_epsilon(value))
        self._updating = False
        self.start_over()

    def _on_p(self, value: float) -> None:
        if self._updating:
            return
        self._chosen = "p"
        self._updating = True
        self.epsilon_spin.setValue(epsilon_from_p(value))
        self._updating = False
        self.start_over()

    @property
    def p(self) -> float:
        """The truth probability: exactly the p chosen, or the one ε gives."""
        if self._chosen == "p":
            return float(self.p_spin.value())
        return p_from_epsilon(self.epsilon_spin.value())

    def start_over(self) -> None:
        """A fresh simulated classroom with the current ε/p, true share and seed."""
        p = self.p
        self.survey = Survey(p, self.truth_spin.value() / 100.0, self.seed_spin.value())
        self._last: list[Respondent] = []
        self._asked = 0
        self._refresh()
        self.survey_changed.emit()

    def add(self, count: int) -> None:
        """Ask ``count`` more simulated respondents."""
        before = self.survey.n
        self._last = self.survey.add(count)
        self._asked = self.survey.n - before
        self._refresh()
        self.survey_changed.emit()

    # -- display ------------------------------------------------------------------------------

    def _refresh(self) -> None:
        survey = self.survey
        palette = current_palette()
        self.badge.setText(f"SIMULATION · seed {survey.seed}")
        self.badge.setToolTip("Simulated respondents drawn from a seeded generator: "
                              "no real person answered")
        self.truth_line.setValue(survey.truth)
        n, estimate, half = survey.running()
        if n.size:
            # Early estimates can leave [0, 1] far behind: pin them to the chart's edge.
            self.estimate_curve.setData(n, np.clip(estimate, *_SHOWN))
            self.band_upper.setData(n, np.clip(estimate + half, *_SHOWN))
            self.band_lower.setData(n, np.clip(estimate - half, *_SHOWN))
            self.plot.setXRange(0, max(3.0, math.log10(n[-1]) + 0.1), padding=0.02)
        else:
            for curve in (self.estimate_curve, self.band_upper, self.band_lower):
                curve.setData([], [])
            self.plot.setXRange(0, 3, padding=0.02)
        at_cap = survey.n >= MAX_RESPONDENTS
        for button in (self.ask_button, *self.add_buttons.values()):
            button.setEnabled(not at_cap)

        if self._last:
            r = self._last[-1]
            truth = "yes" if r.truth else "no"
            coin = "tell the truth" if r.told_truth else "give the opposite answer"
            answer = "yes" if r.answer else "no"
            more = f", the last of {self._asked:,} just asked" if self._asked > 1 else ""
            self.last_label.setText(
                f"Respondent #{r.number:,}{more}: truly <b>{truth}</b> → the coin says "
                f"<i>{coin}</i> → answers <b>{answer}</b>. Only “{answer}” is recorded."
            )
        else:
            self.last_label.setText(
                f"<span style='color:{palette.muted}'>Press “Ask one respondent” to put "
                f"the question “{self.question.text()}” to a simulated student.</span>"
            )

        if survey.n:
            est, hw = survey.estimate()
            yes = 100.0 * float(survey.reports.mean())
            self.readout.setText(
                f"<b>{survey.n:,}</b> respondents · answered “yes”: {yes:.1f} % · "
                f"<b>estimate {100 * est:.1f} % ± {100 * hw:.1f} %</b> (95 %) · "
                f"true share {100 * survey.truth:.0f} %"
            )
        else:
            self.readout.setText(f"No respondents yet · true share {100 * survey.truth:.0f} %")
        eps = survey.epsilon
        self.privacy_label.setText(
            f"ε = {eps:.2f}, p = {survey.p:.3f}: a “yes” is at most e^ε = {math.exp(eps):.2f}× "
            "as likely from someone whose true answer is yes as from someone whose is no. "
            "Smaller ε: more deniability, a wider band."
        )
