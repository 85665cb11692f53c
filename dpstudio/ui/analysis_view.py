"""The "Analysis" tab: privacy–utility and trade-off plots above, result preview and budget
below, and the Monte-Carlo progress strip with its Cancel button. Each plot carries a
"computing" mark (:class:`~dpstudio.ui.busy_mark.BusyMark`) while its jobs run.

It connects an :class:`~dpstudio.ui.analysis_jobs.Analysis` (the jobs) to the plots; the
controls live in :class:`~dpstudio.ui.analysis_panel.AnalysisPanel`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui.analysis_jobs import Analysis
from dpstudio.ui.busy_mark import BusyMark
from dpstudio.ui.layout_data_area import (
    MIN_DATA_HEIGHT,
    PRESENTING_MIN_DATA_HEIGHT,
    DataAreaKeeper,
    PlotScrollArea,
)
from dpstudio.ui.result_panel import ResultPanel
from dpstudio.ui.session import Session
from dpstudio.ui.style import MUTED
from dpstudio.ui.tradeoff_plot import TradeoffPlot
from dpstudio.ui.utility_plot import UtilityPlot

__all__ = ["VIEWS", "WAITING", "AnalysisView"]

#: Names accepted by :meth:`AnalysisView.focus` (and ``--view`` for screenshots).
VIEWS = ("analysis", "utility", "tradeoff")

JOB_NAMES = {"folder": "sums over the folder's files", "lines": "error curves",
             "montecarlo": "Monte-Carlo simulation",
             "compare": "protocol comparisons",
             "tradeoff": "trade-off curves", "preview": "simulated release"}

#: The strip's button on a folder: Monte-Carlo on every row runs only when asked.
SIMULATE_FOLDER = "Simulate on the data (slow)"
#: The strip's sentence once a folder's numbers are in.
FOLDER_READY = ("Analytic error from the exact aggregates of every row; Monte-Carlo on the "
                "data only when asked.")
#: The same under the local model: the line needs only n; the preview was one pass.
FOLDER_LOCAL_READY = ("Analytic error at n = the folder's rows; the preview randomized every "
                      "row; Monte-Carlo only when asked.")

#: What a plot says while a new dataset's curves are computed (its mark spins meanwhile).
COMPUTING = "Computing the curves for this dataset…"

#: What the plots and the preview say while the column's declaration is missing (whole or
#: in part): what is missing is said once, beside the column, not again over each plot.
WAITING = "Waiting for the column to be declared"

#: Which plot each job draws (its "computing" mark: :attr:`AnalysisView.marks`).
JOB_PLOTS = {"folder": "utility", "lines": "utility", "montecarlo": "utility", "compare": "utility",
             "tradeoff": "tradeoff", "preview": "preview"}


class AnalysisView(QWidget):
    """Plots and preview for one session; ``status_changed`` says what is computing."""

    status_changed = Signal(str)

    def __init__(self, session: Session, analysis: Analysis,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session, self.analysis = session, analysis
        self.utility_plot = UtilityPlot(self)
        self.tradeoff_plot = TradeoffPlot(self)
        self.result_panel = ResultPanel(self)
        # Over the plots' title rows (left of the centred titles); the simulated release's
        # beside its Draw again button (the panel's text and legend fill the rest).
        self.marks = {
            "utility": BusyMark(self.utility_plot),
            "tradeoff": BusyMark(self.tradeoff_plot),
            "preview": BusyMark(self.result_panel, text="Simulating…",
                                beside=self.result_panel.draw_again),
        }

        # Progress of the Monte-Carlo job, under the utility plot.
        self.progress_bar = QProgressBar(self)
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setMaximumHeight(16)
        self.progress_bar.setTextVisible(False)
        self.progress_text = QLabel(self)
        self.progress_text.setStyleSheet(f"color: {MUTED};")
        # Wrapped, so a long sentence never widens the window past 1400 px.
        self.progress_text.setWordWrap(True)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop the Monte-Carlo simulation (analytic curves stay)")
        self.cancel_button.clicked.connect(analysis.cancel_montecarlo)
        self.recompute_button = QPushButton("Simulate", self)
        self.recompute_button.setToolTip("Run the Monte-Carlo simulation again")
        self.recompute_button.clicked.connect(analysis.recompute_montecarlo)
        self.progress_strip = QWidget(self)
        strip = QHBoxLayout(self.progress_strip)
        strip.setContentsMargins(6, 0, 6, 2)
        strip.addWidget(self.progress_text)
        strip.addWidget(self.progress_bar, 1)
        strip.addWidget(self.cancel_button)
        strip.addWidget(self.recompute_button)
        self._set_progress_visible(False)

        self.utility_box = QWidget(self)
        ubox = QVBoxLayout(self.utility_box)
        ubox.setContentsMargins(0, 0, 0, 0)
        ubox.setSpacing(2)
        ubox.addWidget(self.utility_plot, 1)
        ubox.addWidget(self.progress_strip)

        # Utility across the top (a wide plot), the square trade-off plot below it beside
        # the result preview.
        self.side = QFrame(self)
        self.side.setFrameShape(QFrame.Shape.StyledPanel)
        side = QVBoxLayout(self.side)
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.result_panel)

        self.bottom = QSplitter(Qt.Orientation.Horizontal, self)
        self.bottom.addWidget(self.tradeoff_plot)
        self.bottom.addWidget(self.side)
        self.bottom.setChildrenCollapsible(False)
        self.bottom.setStretchFactor(0, 1)
        self.bottom.setStretchFactor(1, 1)
        self.bottom.setSizes([550, 450])

        self.split = QSplitter(Qt.Orientation.Vertical, self)
        self.split.addWidget(self.utility_box)
        self.split.addWidget(self.bottom)
        self.split.setChildrenCollapsible(False)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([450, 550])
        # Both data areas equally tall and never below a usable height; on a screen too
        # short for both, the plots scroll rather than shrink to a line.
        self.data_areas = DataAreaKeeper(
            self.split, [(self.utility_box, self.utility_plot), (self.bottom, self.tradeoff_plot)])
        self.scroll = PlotScrollArea(self)
        self.scroll.setWidget(self.split)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.scroll)
        self.focused: str = "analysis"

        analysis.lines_ready.connect(self._lines_ready)
        analysis.points_ready.connect(self.utility_plot.set_points)
        analysis.compare_ready.connect(lambda r: self.utility_plot.set_lines(r, add=True))
        analysis.tradeoff_ready.connect(self._tradeoff_ready)
        analysis.preview_ready.connect(self._preview_ready)
        analysis.cleared.connect(self._cleared)
        analysis.failed.connect(self._failed)
        analysis.busy_changed.connect(self._busy_changed)
        analysis.progress.connect(self._progress)
        analysis.mc_cancelled.connect(self._mc_cancelled)
        self.result_panel.draw_again.clicked.connect(analysis.draw_again)
        session.epsilon_changed.connect(self.utility_plot.set_epsilon)
        session.changed.connect(self._session_changed)
        self.utility_plot.set_epsilon(session.epsilon)
        analysis.execution_changed.connect(lambda _e: self._folder_idle())

    # -- views -------------------------------------------------------------------------

    def focus(self, view: str) -> None:
        """Show everything ("analysis") or one plot filling the tab ("utility", "tradeoff")."""
        if view not in VIEWS:
            raise ValueError(f"unknown view {view!r} (choose from {', '.join(VIEWS)})")
        self.focused = view
        self.utility_box.setVisible(view in ("analysis", "utility"))
        self.bottom.setVisible(view in ("analysis", "tradeoff"))
        self.side.setVisible(view == "analysis")

    def reset_layout(self) -> None:
        """View ▸ Reset Layout: the plots share the height again, whatever the splitter's
        drags (their data areas equally tall, at least
        :data:`~dpstudio.ui.layout_data_area.MIN_DATA_HEIGHT`)."""
        self.data_areas.reset()

    def set_presenting(self, on: bool) -> None:
        """Presentation mode: smaller least data areas, so that on a small screen both
        plots and their captions stay in view (the type is larger)."""
        self.data_areas.set_min_data(PRESENTING_MIN_DATA_HEIGHT if on else MIN_DATA_HEIGHT)

    def _session_changed(self, aspect: str) -> None:
        if aspect == "hide_true":
            self.result_panel.set_hide_true(self.session.hide_true)
        elif aspect == "dataset" and self.session.settings() is not None:
            # Another file's curves must not stand for this one's while it computes.
            self.utility_plot.clear_data(COMPUTING)
            self.tradeoff_plot.clear_data(COMPUTING)
            self.result_panel.clear_data("Simulating a release…")

    # -- results -----------------------------------------------------------------------

    def _lines_ready(self, result) -> None:
        self.utility_plot.set_lines(result)
        if self.analysis.mc_was_cancelled:
            self.utility_plot.set_points(None)

    def _tradeoff_ready(self, result) -> None:
        self.tradeoff_plot.set_result(result, self.session.trust_model)

    def _preview_ready(self, preview) -> None:
        self.result_panel.hide_true = self.session.hide_true
        self.result_panel.set_preview(preview, self.session.column or "")

    def _cleared(self, reason: str) -> None:
        s = self.session
        if s.awaiting_declaration and reason and reason == s.column_problem:
            reason = WAITING
        self.utility_plot.clear_data(reason)
        self.tradeoff_plot.clear_data(reason)
        self.result_panel.clear_data(reason)
        self._set_progress_visible(False)

    def _failed(self, key: str, message: str) -> None:
        if key in ("folder", "lines", "montecarlo", "compare"):
            self.progress_text.setText(f"Could not compute the {JOB_NAMES[key]}: {message}")
            self.progress_strip.setVisible(True)
            self.progress_bar.hide()
            self.cancel_button.hide()
            if key == "folder":  # nothing computed: say why over the plot and the preview
                self.utility_plot.clear_data(message)
                self.result_panel.clear_data(message)
                self._show_simulate("Compute again")
        elif key == "tradeoff":
            self.tradeoff_plot.clear_data(message)
        elif key == "preview":
            self.result_panel.clear_data(f"Could not simulate a release: {message}")
        self.status_changed.emit(f"{JOB_NAMES.get(key, key)}: {message}")

    def _busy_changed(self, key: str, busy: bool) -> None:
        if key in JOB_PLOTS:
            self.marks[JOB_PLOTS[key]].set_running(key, JOB_NAMES[key] if busy else None)
        if key in ("montecarlo", "folder"):
            if busy:
                self.progress_bar.setValue(0)
                self.progress_text.setText(
                    "Monte-Carlo simulation…" if key == "montecarlo"
                    else "Randomizing every row of the folder's files…"
                    if self.analysis.folder_local() else "Summing the folder's files…")
                self._set_progress_visible(True)
            elif not (self.analysis.mc_was_cancelled or self.analysis.folder_was_cancelled):
                self._set_progress_visible(False)
                self._folder_idle()
            if busy and key == "montecarlo":
                self.utility_plot.set_points(None)
        running = [JOB_NAMES[k] for k in Analysis.KEYS if k in self.analysis.busy()]
        self.status_changed.emit(f"Computing {', '.join(running)}…" if running else "")

    def _progress(self, key: str, fraction: float, message: str) -> None:
        if key in ("montecarlo", "folder"):
            self.progress_bar.setValue(int(fraction * 1000))
            what = ("Monte-Carlo simulation" if key == "montecarlo"
                    else message or "Summing the folder")
            self.progress_text.setText(f"{what} {fraction:.0%}")

    def _folder_idle(self) -> None:
        """A folder whose sums are in: the strip offers the Monte-Carlo on every row."""
        if (self.analysis.has_folder_sums()
                and not self.analysis.busy() & {"folder", "montecarlo"}):
            self.progress_text.setText(FOLDER_LOCAL_READY if self.analysis.folder_local()
                                       else FOLDER_READY)
            self._show_simulate(SIMULATE_FOLDER)

    def _show_simulate(self, text: str) -> None:
        self.progress_strip.setVisible(True)
        self.progress_bar.hide()
        self.cancel_button.hide()
        self.recompute_button.setText(text)
        self.recompute_button.show()

    def _mc_cancelled(self) -> None:
        if self.analysis.folder_was_cancelled:
            self._show_simulate("Compute again")
            if self.analysis.folder_local():  # the line needs no pass: it stays
                self.progress_text.setText("Cancelled: the simulated release over the "
                                           "folder's files was stopped on every worker.")
            else:
                self.progress_text.setText("Cancelled: the folder's sums were stopped on "
                                           "every worker; nothing is shown.")
                self.utility_plot.clear_data("Cancelled")
            self.result_panel.clear_data("Cancelled")
            return
        self.progress_strip.setVisible(True)
        self.progress_bar.hide()
        self.cancel_button.hide()
        self.recompute_button.show()
        self.progress_text.setText("Simulation cancelled: the analytic curves are shown.")
        self.utility_plot.set_points(None)

    def _set_progress_visible(self, visible: bool) -> None:
        self.progress_strip.setVisible(visible)
        self.progress_bar.setVisible(visible)
        self.cancel_button.setVisible(visible)
        self.recompute_button.hide()
        self.recompute_button.setText("Simulate")
