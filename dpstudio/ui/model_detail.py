"""A trained model in detail: its coefficients with their noise, or its confusion matrix.

:class:`ModelDetailView` shows one training run (:func:`~dpstudio.analysis.training
.run_training`'s result, or its fields):

- for logistic and linear models, the coefficients (in each feature's own units) as
  horizontal bars with the noise the method adds to each as an error bar of ± one
  standard deviation, the calibrated noise's (``noise_sd``, from the engine's noise
  scale, never from the data); a method that adds no noise to the coefficients
  (DP-SGD, objective perturbation) shows the bars alone and says why in one sentence;
- for classifiers (logistic, MLP), the held-out confusion matrix: counts, and each as a
  share of its actual class.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui.plots import add_hint, style_plot
from dpstudio.ui.style import REFERENCE_PEN
from dpstudio.ui.utility_plot import trust_colour

__all__ = ["ModelDetailView", "noise_sentence"]

_TOOLTIP = ("Each coefficient released at this ε, in the feature's own units; the error bar "
            "is ± one standard deviation of the noise the method adds to it.")
_ERROR_PEN = "#111827"


def noise_sentence(fields: dict[str, Any]) -> str:
    """Why a run's coefficients have, or have no, noise bars, in one sentence.

    Parameters
    ----------
    fields : dict
        The training run's fields.

    Returns
    -------
    str
    """
    method = fields.get("method")
    coefs = fields.get("coefficients") or []
    if coefs and all("noise_sd" in c for c in coefs):
        return ("Error bars: ± one standard deviation of the noise added to each coefficient, "
                "as the method calibrates it from the declared bounds, n, λ and ε (not "
                "measured on the data).")
    if method == "nonprivate":
        return "Trained without privacy: no noise, no guarantee (a baseline, never a release)."
    if method == "dpsgd" or fields.get("fed_variant", "none") != "none":
        return ("No error bars: DP-SGD adds noise to every step's gradient, not to the "
                "coefficients, so no per-coefficient noise level is calibrated.")
    if method == "objective":
        return ("No error bars: objective perturbation adds noise to the objective, not to "
                "the coefficients, so no per-coefficient noise level is calibrated.")
    return "No per-coefficient noise level is known for this method."


def _fields(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return result
    return dict(getattr(result, "fields", {}) or {})


class ModelDetailView(QWidget):
    """Coefficients with noise bars (logistic, linear) and the confusion matrix (classifiers).

    Parameters
    ----------
    parent : QWidget, optional
        The Qt parent.

    Attributes
    ----------
    plot : pyqtgraph.PlotWidget
        The coefficients: ``bars`` (a BarGraphItem) and ``errors`` (an ErrorBarItem).
    confusion : QTableWidget
        2 × 2: actual class by row, predicted by column, "count (share of the row)".
    note : QLabel
        The noise bars' sentence.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fields: dict[str, Any] = {}
        self.plot = pg.PlotWidget(self)
        style_plot(self.plot, "Coefficients", "coefficient (feature's units)", "", _TOOLTIP)
        self.plot.setMinimumHeight(200)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)  # "(x0.001)" misleads here
        colour = trust_colour("central")
        self.bars = pg.BarGraphItem(x0=[], y=[], height=0.6, width=[],
                                    brush=pg.mkBrush(colour), pen=pg.mkPen(colour))
        self.errors = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), beam=0.25,
                                      pen=pg.mkPen(_ERROR_PEN, width=1.6))
        self.zero = pg.InfiniteLine(0.0, angle=90, pen=REFERENCE_PEN)
        for item in (self.zero, self.bars, self.errors):
            self.plot.addItem(item)
        self.hint = add_hint(self.plot, 0.0, 0.0, "Train a logistic or linear model to see "
                                                  "its coefficients.")
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.confusion_title = QLabel(self)
        # Wrapped: one long line held the whole tab's minimum width above 540 px.
        self.confusion_title.setWordWrap(True)
        self.confusion = QTableWidget(2, 2, self)
        self.confusion.setHorizontalHeaderLabels(["predicted no", "predicted yes"])
        self.confusion.setVerticalHeaderLabels(["actual no", "actual yes"])
        self.confusion.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.confusion.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.confusion.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.confusion.setMaximumHeight(120)
        self.confusion.setToolTip("The classifier on the held-out rows (no noise: for the "
                                  "analyst, not for publication); each share is of the row's "
                                  "actual class.")
        col = QVBoxLayout(self)
        col.addWidget(self.plot, 1)
        col.addWidget(self.note)
        col.addWidget(self.confusion_title)
        col.addWidget(self.confusion)
        self._show_confusion(None)

    # ----------------------------------------------------------------- public API

    def show_result(self, result: Any) -> None:
        """Show one training run.

        Parameters
        ----------
        result : AnalysisResult or dict
            :func:`~dpstudio.analysis.training.run_training`'s result, or its fields
            (``result.to_dict()``, e.g. the Models tab's ``CompareResult.at_epsilon``).
        """
        fields = _fields(result)
        self.fields = fields
        coefs = fields.get("coefficients") or []
        self._show_coefficients(coefs, fields)
        self._show_confusion(fields.get("confusion"))

    def coefficient_bars(self) -> dict[str, tuple[float, float | None]]:
        """What the plot shows: feature → (coefficient, half-length of its error bar).

        Returns
        -------
        dict
            The error bar's half-length is None where none is drawn.
        """
        names = getattr(self, "_names", [])
        widths = self.bars.opts.get("width")
        widths = [] if widths is None else list(np.atleast_1d(widths))
        sds = self._sds
        return {n: (float(w), None if sds is None else float(s))
                for n, w, s in zip(names, widths, sds if sds is not None else [None] * len(
                    names), strict=True)}

    def confusion_counts(self) -> dict[str, int] | None:
        """The counts the table shows (``tn``, ``fp``, ``fn``, ``tp``), or None.

        Returns
        -------
        dict or None
        """
        if self.confusion.isHidden():
            return None
        cells = {"tn": (0, 0), "fp": (0, 1), "fn": (1, 0), "tp": (1, 1)}
        return {k: int(self.confusion.item(r, c).data(Qt.ItemDataRole.UserRole))
                for k, (r, c) in cells.items()}

    # ------------------------------------------------------------------ internals

    def _show_coefficients(self, coefs: list[dict[str, Any]], fields: dict[str, Any]) -> None:
        self._names = [str(c["feature"]) for c in coefs]
        values = np.array([float(c["coefficient"]) for c in coefs], dtype=np.float64)
        have_sd = bool(coefs) and all("noise_sd" in c for c in coefs)
        self._sds = (np.array([float(c["noise_sd"]) for c in coefs]) if have_sd else None)
        y = np.arange(len(coefs), dtype=np.float64)[::-1]  # first feature on top
        self.plot.setVisible(bool(coefs))
        self.note.setVisible(bool(coefs))
        if not coefs:
            self.bars.setOpts(x0=np.zeros(0), y=np.zeros(0), width=np.zeros(0))
            self._no_errors()
            self.hint.show()
            return
        self.hint.hide()
        self.bars.setOpts(x0=np.zeros_like(values), y=y, width=values, height=0.6)
        if self._sds is not None:
            self.errors.setData(x=values, y=y, left=self._sds, right=self._sds, beam=0.25)
            self.errors.setVisible(True)
        else:
            self._no_errors()
            self.errors.setVisible(False)
        axis = self.plot.getAxis("left")
        axis.setTicks([[(float(v), n) for v, n in zip(y, self._names, strict=True)]])
        width = max(QFontMetrics(axis.font()).horizontalAdvance(n) for n in self._names)
        axis.setWidth(min(width + 16, 260))
        reach = np.abs(values) + (self._sds if self._sds is not None else 0.0)
        span = float(np.max(reach)) if reach.size and np.max(reach) > 0 else 1.0
        self.plot.setXRange(-span, span, padding=0.08)
        self.plot.setYRange(-0.6, len(coefs) - 0.4, padding=0.0)
        eps = fields.get("epsilon")
        title = "Coefficients" + (f" at ε = {float(eps):.3g}" if eps is not None else
                                  " (no privacy)")
        self.plot.setTitle(title)
        self.note.setText(noise_sentence(fields))

    def _no_errors(self) -> None:
        # setData merges into the item's options: the old bars' lengths must go too, or a
        # run without noise bars after one with them draws a broadcast error.
        empty = np.zeros(0)
        self.errors.setData(x=empty, y=empty, left=empty, right=empty)

    def _show_confusion(self, counts: dict[str, int] | None) -> None:
        shown = counts is not None
        self.confusion.setVisible(shown)
        self.confusion_title.setVisible(shown)
        if not shown:
            return
        total = sum(int(counts[k]) for k in ("tn", "fp", "fn", "tp"))
        right = int(counts["tn"]) + int(counts["tp"])
        self.confusion_title.setText(
            f"Held-out confusion matrix ({total} rows; right {right} times, "
            f"{right / total:.1%}; no noise: for the analyst)" if total else
            "Held-out confusion matrix (no rows)")
        for r, keys in enumerate((("tn", "fp"), ("fn", "tp"))):
            row = sum(int(counts[k]) for k in keys)
            for c, key in enumerate(keys):
                n = int(counts[key])
                share = f" ({n / row:.1%})" if row else ""
                item = QTableWidgetItem(f"{n}{share}")
                item.setData(Qt.ItemDataRole.UserRole, n)
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.confusion.setItem(r, c, item)
