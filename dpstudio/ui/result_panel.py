"""Result preview: one *simulated* release at the current settings beside the true value.

A number is drawn as a point with its confidence interval and the true value as a
vertical line; a histogram as grouped bars from zero (noisy with intervals, true in grey);
the discovered words of a heavy-hitters query as horizontal bars, most frequent on top, with
their intervals (true counts as grey diamonds) and listed above the plot. With
"hide true values" on, nothing computed from the raw data is drawn or written. Where
clamping to the declared bounds biases the release (the utility job measures it on the
data), the interval says it covers the clamped statistic, not the true one. The
"Release…" button makes a real release (with a project open; see
:mod:`dpstudio.ui.project_controller`), which enables it and says why when it cannot.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from dpstudio.analysis.bias import MATERIAL_FRACTION
from dpstudio.analysis.curves import Preview
from dpstudio.engine.local.respond import OTHER_LABEL
from dpstudio.ui.folder_open import BIAS_NOT_MEASURED
from dpstudio.ui.plots import foreground, linear_ticks, style_plot
from dpstudio.ui.readout import clamping_warning_at
from dpstudio.ui.style import MUTED, current_palette
from dpstudio.ui.texts import QUERY_LABELS, TRUST_MODELS
from dpstudio.ui.utility_plot import trust_colour

__all__ = ["RESULT_TOOLTIP", "RELEASE_TOOLTIP", "ResultPanel"]

TRUE_COLOUR = "#4b5563"
RESULT_TOOLTIP = ("One simulated release at the current settings (a seeded generator, not "
                  "the secure one): what a published number could look like.")
RELEASE_TOOLTIP = ("Open or create a project (File ▸ New Project… or Open Project…) to make "
                   "real releases: each is charged to a budget and recorded in its ledger.")


def _fmt(v: float) -> str:
    return f"{v:,.4g}" if abs(v) < 1e5 else f"{v:,.0f}"


#: Discovered words listed in the summary (all of them are drawn).
WORDS_LISTED = 6


def shift_line(query: str, shift: float) -> str:
    """The analyst-only line saying how far imputing moves the statistic."""
    return (f"analyst only: imputing moves the {query} by {shift:+.4g} from the {query} of "
            "the present values")


class ResultPanel(QWidget):
    """The preview; ``plotted()`` returns what is drawn (tests)."""

    updated = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.preview: Preview | None = None
        self.hide_true = False
        self.column = ""
        self.header = QLabel(self)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.header.setToolTip(RESULT_TOOLTIP)
        self.summary = QLabel(self)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notes = QLabel(self)
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        self.plot = pg.PlotWidget(self)
        style_plot(self.plot, "", "", "", RESULT_TOOLTIP)
        self.plot.setMinimumHeight(150)
        self.plot.getPlotItem().setContentsMargins(4, 0, 8, 4)
        self.draw_again = QPushButton("Draw again", self)
        self.draw_again.setToolTip("Simulate another release at the same settings")
        self.release_button = QPushButton("Release…", self)
        self.release_button.setEnabled(False)
        self.release_button.setToolTip(RELEASE_TOOLTIP)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.draw_again)
        buttons.addWidget(self.release_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addWidget(self.header)
        layout.addWidget(self.summary)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.notes)
        layout.addLayout(buttons)
        self._plotted: dict = {}
        self.clamping: dict | None = None
        self.clear_data("")
        # Clamping is measured by the utility job: follow the analysis of the view holding
        # this panel, if any.
        analysis = getattr(parent, "analysis", None)
        if analysis is not None and hasattr(analysis, "lines_ready"):
            analysis.lines_ready.connect(self._lines_ready)

    # -- state ---------------------------------------------------------------------------

    def plotted(self) -> dict:
        """What is drawn: value, ci_low, ci_high, labels and truth (None when hidden)."""
        return dict(self._plotted)

    def set_release_state(self, enabled: bool, tooltip: str) -> None:
        """Enable the Release… button or not, and say why (its tooltip)."""
        self.release_button.setEnabled(bool(enabled))
        self.release_button.setToolTip(tooltip)

    def clear_data(self, message: str) -> None:
        self.preview = None
        self.clamping = None
        self._plotted = {}
        self.plot.clear()
        self.plot.setTitle("")
        self.plot.hide()
        self.header.setText("<b>Result preview</b>")
        self.summary.setText(f"<span style='color:{MUTED}'>{message}</span>" if message else "")
        self.notes.setText("")
        self.draw_again.setEnabled(False)
        self.updated.emit()

    def set_clamping(self, clamping: dict | None) -> None:
        """Say (or stop saying) that the interval covers the clamped statistic.

        Parameters
        ----------
        clamping : dict or None
            The utility result's ``clamping`` (None when clamping is not material).
        """
        clamping = clamping or None
        if clamping != self.clamping:
            self.clamping = clamping
            if self.preview is not None:
                self.set_preview(self.preview, self.column)

    def _lines_ready(self, result) -> None:
        self.set_clamping(getattr(result, "clamping", None))


    def set_hide_true(self, hide: bool) -> None:
        self.hide_true = bool(hide)
        if self.preview is not None:
            self.set_preview(self.preview, self.column)

    def set_preview(self, preview: Preview, column: str = "") -> None:
        self.preview, self.column = preview, column
        self.draw_again.setEnabled(True)
        self.plot.show()
        self.plot.setTitle("")
        show_truth = not self.hide_true
        colour = trust_colour(preview.trust_model)
        model = TRUST_MODELS.get(preview.trust_model, {}).get("label", preview.trust_model)
        self.header.setText(
            f"<b>Result preview</b> &nbsp;<span style='background:#fff4e5; color:#7a4a00; "
            f"padding:1px 4px;'>&nbsp;simulation&nbsp;</span> "
            f"<span style='color:{MUTED}'>{model} model · seed {preview.seed}</span>")
        self.header.setToolTip(f"{RESULT_TOOLTIP}\nRandom source: {preview.source}")
        what = QUERY_LABELS.get(preview.query, preview.query)
        # A truth not known (a folder under the local model, a folder's quantile): none
        # drawn, no error against it.
        known = preview.truth is not None and bool(np.any(np.isfinite(preview.truth)))
        truth = preview.truth if show_truth and known else None
        self._plotted = {"labels": preview.labels, "value": preview.value,
                         "ci_low": preview.ci_low, "ci_high": preview.ci_high,
                         "truth": truth}
        self.plot.clear()
        reports = (f" &nbsp;·&nbsp; n = {preview.n:,} reports (one per row)"
                   if preview.n is not None else "")
        if preview.query == "heavy_hitters":
            text = self._draw_words(preview, truth, colour, column, reports)
        elif preview.labels is None:
            self._draw_number(preview, truth, colour)
            text = (f"{what} of <b>{html.escape(column)}</b>: "
                    f"<b>{_fmt(float(preview.value[0]))}</b>")
            if preview.ci_low is not None:
                # A biased release's interval covers the clamped statistic, not the truth.
                of = interval_of(preview, self.clamping, self.hide_true)
                text += (f" &nbsp;({preview.confidence:.0%} interval{of} "
                         f"{_fmt(float(preview.ci_low[0]))} – {_fmt(float(preview.ci_high[0]))})")
            if truth is not None:
                err = float(preview.value[0] - truth[0])
                # A folder's aggregates hold the clamped values' statistic only.
                clamped_only = any(n.startswith(BIAS_NOT_MEASURED) for n in preview.notes)
                name = "clamped values' statistic" if clamped_only else "true value"
                text += (f" &nbsp;·&nbsp; {name} {_fmt(float(truth[0]))} "
                         f"(error {err:+.3g}"
                         + (f"; {BIAS_NOT_MEASURED})" if clamped_only else ")"))
                if preview.imputation_shift is not None:  # part of that error
                    text += (f"<br><span style='color:{MUTED}'>"
                             f"{shift_line(preview.query, preview.imputation_shift)}</span>")
        else:
            self._draw_histogram(preview, truth, colour)
            n = len(preview.labels)
            text = f"{what} of <b>{html.escape(column)}</b>: {n} noisy counts"
            if preview.ci_low is not None:
                half = float(np.median(preview.ci_high - preview.value))
                text += f", each ± {_fmt(half)} ({preview.confidence:.0%} interval)"
            if truth is not None:
                err = float(np.sqrt(np.mean((preview.value - truth) ** 2)))
                text += f" &nbsp;·&nbsp; RMSE against the true counts {_fmt(err)}"
        if preview.query != "heavy_hitters":
            text += reports
        self.summary.setText(text)
        notes = list(preview.notes)
        outside, amber = (_outside_note(preview) if show_truth and preview.clamped
                          else ("", False))
        if outside:
            notes.insert(0, outside)
        # Many values piled into a numeric histogram's end bins: amber, as the readout's
        # clamping warning is.
        # Only the colour: presentation mode scales the sheet's font size.
        colour = current_palette().warning if amber else MUTED
        sheet = self.notes.styleSheet()
        recoloured = re.sub(r"(?<![-\w])color:\s*[^;]+;", f"color: {colour};", sheet, count=1)
        if recoloured != sheet:
            self.notes.setStyleSheet(recoloured)
        self.notes.setText(notes[0] if notes else "")
        self.notes.setToolTip("\n".join(notes))
        self.updated.emit()

    # -- drawing -------------------------------------------------------------------------

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if (self.preview is not None and self.preview.labels is not None
                and self.preview.query != "heavy_hitters"):
            self._fit_labels()

    def _fit_labels(self) -> None:
        """Category labels shortened (and thinned) to the width each bar has."""
        labels = getattr(self, "_labels", [])
        n = max(len(labels), 1)
        width = max(self.plot.width() - 70, 100)
        chars = max(3, int(width / n / 7))
        step = 1 if chars >= 4 else int(np.ceil(4 / chars))
        ticks = [(float(i), _short(labels[i], chars * step)) for i in range(0, n, step)]
        self.plot.getPlotItem().getAxis("bottom").setTicks([ticks, []])

    def _draw_number(self, p: Preview, truth, colour: str) -> None:
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([[(0.0, "release")] +
                                       ([(1.0, "true")] if truth is not None else []), []])
        v = float(p.value[0])
        xs = [v]
        if p.ci_low is not None:
            lo, hi = float(p.ci_low[0]), float(p.ci_high[0])
            xs += [lo, hi]
            bar = pg.ErrorBarItem(x=np.array([v]), y=np.array([0.0]),
                                  left=np.array([v - lo]), right=np.array([hi - v]),
                                  beam=0.25, pen=pg.mkPen(colour, width=2.5))
            self.plot.addItem(bar)
        self.plot.addItem(pg.ScatterPlotItem([v], [0.0], size=13, brush=pg.mkBrush(colour),
                                             pen=pg.mkPen("w", width=1.5)))
        if truth is not None:
            t = float(truth[0])
            xs.append(t)
            self.plot.addItem(pg.ScatterPlotItem([t], [1.0], size=13, symbol="d",
                                                 brush=pg.mkBrush(TRUE_COLOUR),
                                                 pen=pg.mkPen("w", width=1.5)))
            line = pg.InfiniteLine(t, angle=90, pen=pg.mkPen(TRUE_COLOUR, width=1.2,
                                                              style=Qt.PenStyle.DashLine))
            self.plot.addItem(line)
        lo, hi = min(xs), max(xs)
        pad = (hi - lo) * 0.15 or abs(v) * 0.05 or 1.0
        self.plot.getPlotItem().getAxis("bottom").setTicks(
            linear_ticks(lo - pad, hi + pad, 6))
        self.plot.setXRange(lo - pad, hi + pad, padding=0)
        self.plot.setYRange(-0.6, 1.6 if truth is not None else 0.6, padding=0)

    def _draw_histogram(self, p: Preview, truth, colour: str) -> None:
        labels = list(p.labels or [])
        n = len(labels)
        x = np.arange(n, dtype=float)
        width = 0.38 if truth is not None else 0.6
        shift = width / 2 if truth is not None else 0.0
        noisy = pg.BarGraphItem(x=x - shift, y0=0.0, height=p.value, width=width,
                                brush=pg.mkBrush(colour), pen=pg.mkPen("w", width=0.5))
        self.plot.addItem(noisy)
        tops = [np.max(p.value)]
        if p.ci_low is not None:
            bars = pg.ErrorBarItem(x=x - shift, y=p.value, top=p.ci_high - p.value,
                                   bottom=p.value - p.ci_low, beam=width * 0.5,
                                   pen=pg.mkPen(foreground(), width=1.2))
            self.plot.addItem(bars)
            tops.append(np.max(p.ci_high))
        if truth is not None:
            self.plot.addItem(pg.BarGraphItem(x=x + shift, y0=0.0, height=truth, width=width,
                                              brush=pg.mkBrush("#c9ced6"),
                                              pen=pg.mkPen(TRUE_COLOUR, width=0.8)))
            tops.append(np.max(truth))
        self._labels = labels
        self._fit_labels()
        item = self.plot.getPlotItem()
        # The axis starts at zero, where the bars do (an interval reaching below zero is
        # cut there: a count is not negative); below only if a noisy count itself is.
        low = min(0.0, float(np.min(p.value)) * 1.08)
        top = float(max(tops)) * 1.08 or 1.0
        if low < 0:
            self.plot.addItem(pg.InfiniteLine(0.0, angle=0, pen=pg.mkPen(foreground(),
                                                                         width=1.0)))
        item.getAxis("left").setTicks(linear_ticks(low, top, 4))
        self.plot.setXRange(-0.6, n - 0.4, padding=0)
        self.plot.setYRange(low, top, padding=0)
        legend = [f"<span style='color:{colour}'>■</span> simulated release"]
        if truth is not None:
            legend.append("<span style='color:#9aa1a9'>■</span> true counts")
        self.plot.setTitle("&nbsp;&nbsp;".join(legend), size="9pt", color=foreground())


    def _draw_words(self, p: Preview, truth, colour: str, column: str, reports: str) -> str:
        """Discovered words as horizontal bars (most frequent on top); returns the summary."""
        words = list(p.labels or [])
        head = f"Heavy hitters of <b>{html.escape(column)}</b>"
        if not words:
            self.plot.hide()
            return (f"{head}: no word was frequent enough to be discovered at ε = "
                    f"{p.epsilon:.3g} (raise ε, or collect more reports){reports}")
        k = len(words)
        y = np.arange(k, dtype=float)[::-1]  # the first (most frequent) word on top
        self.plot.addItem(pg.BarGraphItem(x0=0.0, y=y, height=0.6, width=p.value,
                                          brush=pg.mkBrush(colour),
                                          pen=pg.mkPen("w", width=0.5)))
        right = [float(np.max(p.value))]
        if p.ci_low is not None:
            self.plot.addItem(pg.ErrorBarItem(x=p.value, y=y, left=p.value - p.ci_low,
                                              right=p.ci_high - p.value, beam=0.3,
                                              pen=pg.mkPen(foreground(), width=1.2)))
            right.append(float(np.max(p.ci_high)))
        if truth is not None and len(truth):
            self.plot.addItem(pg.ScatterPlotItem(truth, y, size=10, symbol="d",
                                                 brush=pg.mkBrush("#c9ced6"),
                                                 pen=pg.mkPen(TRUE_COLOUR, width=1.0)))
            right.append(float(np.max(truth)))
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([[(float(y[i]), _short(w, 14))
                                        for i, w in enumerate(words)], []])
        top = max(right) * 1.08 or 1.0
        low = min(0.0, float(np.min(p.value)) * 1.08)  # bars from zero, as the histogram's
        item.getAxis("bottom").setTicks(linear_ticks(low, top, 5))
        self.plot.setXRange(low, top, padding=0)
        self.plot.setYRange(-0.6, k - 0.4, padding=0)
        legend = [f"<span style='color:{colour}'>■</span> simulated counts"]
        if truth is not None:
            legend.append("<span style='color:#9aa1a9'>◆</span> true counts")
        self.plot.setTitle("&nbsp;&nbsp;".join(legend), size="9pt", color=foreground())
        rows = []
        for i, w in enumerate(words[:WORDS_LISTED]):
            cells = [f"<b>{html.escape(_short(w, 24))}</b>", _fmt(float(p.value[i]))]
            if p.ci_low is not None:
                cells.append(f"[{_fmt(float(p.ci_low[i]))},&nbsp;{_fmt(float(p.ci_high[i]))}]")
            if truth is not None:
                cells.append(f"true {_fmt(float(truth[i]))}")
            rows.append("<tr>" + "".join(f"<td style='padding-right:10px; "
                                          f"white-space:nowrap'>{c}</td>"
                                          for c in cells) + "</tr>")
        more = (f"<br><span style='color:{MUTED}'>… and {k - WORDS_LISTED} more (in the "
                "plot)</span>" if k > WORDS_LISTED else "")
        level = f"{p.confidence:.0%} interval" if p.ci_low is not None else ""
        return (f"{head}: {k} word{'s' if k != 1 else ''} discovered (estimated count, "
                f"{level}){reports}<table>{''.join(rows)}</table>{more}")


def interval_of(p: Preview, clamping: dict | None, hide_true: bool) -> str:
    """What a preview's interval covers where that is not the statistic itself, for every
    trust model alike: " of the clamped mean" when the release clamped values and the
    bias is material at its ε; " of the mean with missing values filled in" when the
    missing values sent in their place cause it; "" otherwise, and with true values
    hidden (nothing computed from the data is said).

    Parameters
    ----------
    p : Preview
    clamping : dict or None
        The chosen release's clamping report (``UtilityResult.clamping``).
    hide_true : bool

    Returns
    -------
    str
        HTML-escaped words to put after "interval".
    """
    if hide_true or p.query not in ("sum", "mean", "variance") or not clamping_warning_at(
            clamping, p.epsilon):
        return ""
    query = html.escape(p.query)
    if p.clamped > 0:
        return f" of the clamped {query}"
    if clamping.get("cause") == "missing" and clamping.get("missing_value") is not None:
        return f" of the {query} with missing values filled in"
    return ""


def _short(label: str, chars: int = 12) -> str:
    """A bin label like "[18, 26.2)" shown as its lower edge "18"; long categories cut."""
    if label.startswith("[") and label.endswith(")") and ", " in label:
        return label[1:-1].split(", ", 1)[0]
    return label if len(label) <= chars else label[: max(chars - 1, 2)] + "…"


def _bin_bounds(labels: list[str]) -> tuple[float, float] | None:
    """The declared bounds of a numeric histogram, from its bins' labels ("[18, 19.2)" …
    "[28.8, 30)"), or None for categories."""
    try:
        if not all(s.startswith("[") and s.endswith(")") and ", " in s for s in labels):
            return None
        return float(labels[0][1:-1].split(", ")[0]), float(labels[-1][1:-1].split(", ")[1])
    except (IndexError, ValueError):
        return None


def _outside_note(preview: Preview) -> tuple[str, bool]:
    """What happened to the values outside the declaration, in the right words, and
    whether it is a warning (amber): numbers outside the bounds are clamped (into a
    numeric histogram's end bins, a warning when more than 5% of them); values that are
    not declared categories are not "clamped" but counted in the "other or missing" cell,
    or left out of the counts."""
    n = f"{preview.clamped:,}"
    if preview.labels is None:
        return (f"{n} values lie outside the declared bounds and were clamped (only you see "
                "this)", False)
    bounds = _bin_bounds(preview.labels)
    if bounds is not None:
        counted = float(np.sum(preview.truth)) if preview.truth is not None else 0.0
        share = preview.clamped / counted if counted > 0 else 0.0
        where = f"lie outside {bounds[0]:g}–{bounds[1]:g}: counted in the end bins"
        if share > MATERIAL_FRACTION:
            return (f"{share:.0%} of values ({n}) {where}, which they inflate; widen the "
                    "bounds (only you see this)", True)
        return f"{n} values {where} (only you see this)", False
    if OTHER_LABEL in preview.labels:
        return (f"{n} values are not among the declared categories: counted in the "
                f"\u201c{OTHER_LABEL}\u201d cell (only you see this)", False)
    return (f"{n} values are not among the declared categories: left out of the counts "
            "(only you see this)", False)
