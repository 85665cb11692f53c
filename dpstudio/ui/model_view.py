"""The Models tab: train a model privately and see what privacy costs in accuracy.

Left, the :class:`~dpstudio.ui.model_panel.ModelForm`; right, the privacy–utility plot
(held-out accuracy, AUC or RMSE against ε for the chosen method, with the non-private
model's line), a progress bar with Cancel, and the coefficients released at the form's ε.
Everything is a seeded simulation on held-out rows ("simulation · seed N"): nothing is
released or charged to a ledger.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui.model_jobs import CurveResult, ModelJobs
from dpstudio.ui.model_panel import METHOD_TEXT, ModelForm
from dpstudio.ui.style import configure_pyqtgraph
from dpstudio.ui.worker import Coalescer

__all__ = ["ModelView"]

_METRIC_TEXT = {"accuracy": "held-out accuracy", "auc": "held-out AUC",
                "rmse": "held-out RMSE (label units)"}
_METRIC_SHORT = {"accuracy": "accuracy", "auc": "AUC", "rmse": "RMSE"}
_CURVE = "#1f6feb"
_BASELINE = "#57606a"


class ModelView(QWidget):
    """The tab. ``jobs`` runs the curve; ``plot``, ``curve``, ``baseline_line`` and
    ``coefficients`` are what a person sees (tests read them)."""

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.result: CurveResult | None = None
        self.jobs = ModelJobs(self)
        self.form = ModelForm(self)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.form)
        # The tab must not need more width than the Analysis tab (a wider centre raises
        # the window's minimum, or tabifies its docks): the form scrolls sideways when the
        # window is narrow, and starts at its full width (setSizes below).
        scroll.setMinimumWidth(160)
        self._form_width = self.form.minimumSizeHint().width() + 24

        right = QWidget(self)
        col = QVBoxLayout(right)
        top = QHBoxLayout()
        self.metric_box = QComboBox(right)
        self.metric_box.setMinimumContentsLength(9)
        self.metric_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.metric_box.setToolTip("What the curve shows, measured on held-out rows without "
                                   "noise (for the analyst, not for publication).")
        top.addWidget(QLabel("Show", right))
        top.addWidget(self.metric_box)
        top.addStretch(1)
        self.caption = QLabel(right)
        self.caption.setWordWrap(True)  # never wider than the plot beside the form
        top.addWidget(self.caption)
        col.addLayout(top)
        configure_pyqtgraph()
        self.plot = pg.PlotWidget(right)
        self.plot.setLogMode(x=True, y=False)
        self.plot.setLabel("bottom", "ε (privacy-loss budget; smaller is more private)")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.addLegend(offset=(-10, -10))  # bottom right: the curve rises to the top
        self.curve = pg.PlotDataItem([], [], pen=pg.mkPen(_CURVE, width=2.4), symbol="o",
                                     symbolSize=8, symbolBrush=_CURVE, name="private model")
        self.plot.addItem(self.curve)
        self.baseline_line = pg.InfiniteLine(angle=0, movable=False,
                                             pen=pg.mkPen(_BASELINE, width=1.6,
                                                          style=Qt.PenStyle.DashLine))
        self.baseline_line.setVisible(False)
        self.plot.addItem(self.baseline_line)
        # The legend's entry for the non-private line (an InfiniteLine has none of its own).
        self._baseline_key = pg.PlotDataItem([], [], pen=pg.mkPen(
            _BASELINE, width=1.6, style=Qt.PenStyle.DashLine), name="non-private model")
        self.plot.addItem(self._baseline_key)
        self.chosen = pg.ScatterPlotItem(size=13, brush=pg.mkBrush("#cf222e"),
                                         pen=pg.mkPen("w", width=1.5), name="at the form's ε")
        self.plot.addItem(self.chosen)
        col.addWidget(self.plot, 3)
        run_row = QHBoxLayout()
        self.progress = QProgressBar(right)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.cancel_button = QPushButton("Cancel", right)
        self.cancel_button.setToolTip("Stop the training runs; the plot keeps what it showed.")
        self.cancel_button.setEnabled(False)
        self.rerun_button = QPushButton("Train Again", right)
        self.rerun_button.setToolTip("Run the curve again at the form's settings.")
        run_row.addWidget(self.progress, 1)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.rerun_button)
        col.addLayout(run_row)
        self.status = QLabel(right)
        self.status.setWordWrap(True)
        col.addWidget(self.status)
        col.addWidget(QLabel("Coefficients at the form's ε (in feature units)", right))
        self.coefficients = QTableWidget(0, 2, right)
        self.coefficients.setHorizontalHeaderLabels(["feature", "coefficient"])
        self.coefficients.horizontalHeader().setStretchLastSection(True)
        self.coefficients.verticalHeader().setVisible(False)
        self.coefficients.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        col.addWidget(self.coefficients, 1)

        split = QSplitter(self)
        split.addWidget(scroll)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([self._form_width, 700])
        split.setCollapsible(0, False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

        self._later = Coalescer(lambda _=None: self.recompute(), 60, self)
        self.form.changed.connect(self._later)
        self.metric_box.currentIndexChanged.connect(lambda _i: self._draw())
        self.cancel_button.clicked.connect(self.cancel)
        self.rerun_button.clicked.connect(self.recompute)
        self.jobs.ready.connect(self._ready)
        self.jobs.failed.connect(self._failed)
        self.jobs.busy_changed.connect(self._busy)
        self.jobs.progress.connect(self._progress)
        session.changed.connect(self._session_changed)
        self.form.set_schema(session.schema)

    # -- public ----------------------------------------------------------------------

    def recompute(self) -> None:
        """Submit the form's run (a running one is superseded: the newest request wins)."""
        dataset = self.session.dataset
        req = self.form.request()
        if dataset is None:
            self._say("open a dataset to train a model on it")
            return
        from dpstudio.ui.folder_open import is_folder

        if is_folder(dataset):  # the window holds its first rows only: never train on them
            self.jobs.cancel()
            self._say("training reads every row into memory: a folder's models train with "
                      "dpstudio train on one file for now")
            return
        if isinstance(req, str):
            self.jobs.cancel()
            self._say(req)
            return
        self._say("")
        self.jobs.submit(req, dataset.frame, self.session.schema)

    def cancel(self) -> None:
        self.jobs.cancel()
        self.progress.setFormat("cancelled")
        self._say("cancelled: the plot shows the last finished run; Train Again to resume")

    def shutdown(self) -> None:
        self._later._timer.stop()
        self.jobs.shutdown()

    # -- reactions -------------------------------------------------------------------

    def _session_changed(self, aspect: str) -> None:
        if aspect in ("dataset", "schema", "column"):
            self.form.set_schema(self.session.schema)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.form.problem.setText("")

    def _busy(self, busy: bool) -> None:
        self.cancel_button.setEnabled(busy)
        if busy:
            self.progress.setValue(0)
            self.progress.setFormat("training…")

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(round(1000 * fraction)))
        self.progress.setFormat(message or "training…")

    def _failed(self, message: str) -> None:
        self.progress.setFormat("")
        self.progress.setValue(0)
        self.form.problem.setText(message)

    def _ready(self, result: CurveResult) -> None:
        self.result = result
        self.progress.setValue(1000)
        self.progress.setFormat("done")
        self.form.problem.setText("")
        kept = self.metric_box.currentData()
        self.metric_box.blockSignals(True)
        self.metric_box.clear()
        for m in result.values:
            self.metric_box.addItem(_METRIC_SHORT[m], m)
        i = self.metric_box.findData(kept)
        self.metric_box.setCurrentIndex(max(i, 0))
        self.metric_box.blockSignals(False)
        self._draw()
        self._fill_coefficients(result.at_epsilon.get("coefficients") or [])
        req = result.request
        variant = "" if req.fed_variant == "none" else f" · FedAvg {req.fed_variant}"
        self.caption.setText(f"<span style='color:{_BASELINE}'>{METHOD_TEXT[req.method]}"
                             f"{variant} · simulation · seed {req.seed}</span>")
        at = result.at_epsilon
        if at.get("epsilon") is not None:
            self._say(f"At ε = {at['epsilon']:.3g}, δ = {at['delta']:g} ({at['accountant']}): "
                      f"{_summary(at, result.metric)}. Held-out rows, seeded noise: a "
                      "simulation, not a release; nothing is charged.")
        else:
            self._say(f"Non-private: {_summary(at, result.metric)}. No guarantee: a "
                      "baseline, never a release.")

    def _draw(self) -> None:
        r = self.result
        if r is None:
            return
        metric = self.metric_box.currentData() or r.metric
        self.plot.setLabel("left", _METRIC_TEXT[metric])
        eps = np.asarray(r.epsilons, dtype=float)
        # Ticks at the grid's ε only: log mode's minor labels run into each other.
        # The form's ε, not the accountant's (a hair below it for DP-SGD's search).
        ticks = sorted({*r.epsilons, *([r.request.epsilon]
                                        if r.at_epsilon.get("epsilon") else [])})
        self.plot.getAxis("bottom").setTicks([[(np.log10(e), f"{e:g}") for e in ticks], []])
        self.curve.setData(eps, np.asarray(r.values[metric], dtype=float))
        self.baseline_line.setPos(r.baseline[metric])
        self.baseline_line.setVisible(True)
        self._baseline_key.setData([], [])
        at = r.at_epsilon
        if at.get("epsilon") is not None and metric in at:
            self.chosen.setData([np.log10(r.request.epsilon)], [at[metric]])
        else:
            self.chosen.setData([], [])
        # A fixed scale, so a difference of a few thousandths does not fill the plot:
        # accuracy and AUC from below chance (0.5) to 1, RMSE from 0.
        shown = [*r.values[metric], r.baseline[metric],
                 *([at[metric]] if metric in at else [])]
        finite = [v for v in shown if np.isfinite(v)]
        if metric == "rmse":
            self.plot.setYRange(0.0, 1.1 * max(finite or [1.0]), padding=0)
        else:
            self.plot.setYRange(min([0.5, *finite]) - 0.02, 1.0, padding=0)
        self.plot.enableAutoRange(axis="x")

    def _fill_coefficients(self, rows: list[dict[str, Any]]) -> None:
        self.coefficients.setRowCount(len(rows))
        for i, row in enumerate(rows):
            self.coefficients.setItem(i, 0, QTableWidgetItem(str(row["feature"])))
            value = QTableWidgetItem(f"{row['coefficient']:.4g}")
            value.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.coefficients.setItem(i, 1, value)


def _summary(at: dict[str, Any], metric: str) -> str:
    base = at["baseline"]
    return ", ".join(f"{k} {at[k]:.3g} (non-private {base[k]:.3g})"
                     for k in ("accuracy", "auc", "rmse") if k in at)
