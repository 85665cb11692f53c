"""The Models tab: train a model under several methods and trust models, see what each costs.

Left, the :class:`~dpstudio.ui.model_panel.ModelForm` (it scrolls); right, most of the
width, one of four views (the "Show" combo picks the metric of the first two):

- **Privacy–utility**: held-out accuracy, AUC or RMSE against ε for every ticked way of
  training (central output/objective perturbation and DP-SGD, FedAvg without privacy and
  under local DP, secure aggregation, correlated noise, shuffling), each the mean of R
  seeded runs with a band from their smallest to their largest value, the non-private
  line, and each site trained alone (dashed) when a federated variant is ticked;
- **Training curves**: the held-out metric after each FedAvg round at the form's ε;
- **Coefficients**: one way of training's model at the form's ε (the "Model" combo:
  the ticked ways), its coefficients with their noise bars and its held-out confusion
  matrix (:class:`~dpstudio.ui.model_detail.ModelDetailView`);
- **Membership attack**: that model's trade-off curve at its claimed (ε, δ), and a
  cancellable membership audit placed over it, in plain words
  (:class:`~dpstudio.ui.model_audit.ModelAuditView`).

A progress bar with Cancel; the newest request wins and slider moves are coalesced. The
choices are remembered per dataset in the app's settings (``last_choices["models"]``).
Everything shown is a seeded simulation on held-out rows ("simulation · seed N"): nothing
is released or charged to a ledger. The Release… button (:mod:`~dpstudio.ui.model_release`)
trains the chosen way anew for real, with noise from the OS CSPRNG, into the open project:
:meth:`ModelView.current_request` is the run it takes.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui.model_audit import ModelAuditView
from dpstudio.ui.model_detail import ModelDetailView
from dpstudio.ui.model_jobs import (
    EPSILON_GRID,
    CompareResult,
    ModelJobs,
    ModelRequest,
    variant_request,
)
from dpstudio.ui.model_panel import ModelForm
from dpstudio.ui.model_plots import (
    BASELINE_COLOUR,
    METRIC_SHORT,
    Drawn,
    draw_overlay,
    draw_rounds,
    new_plot,
)
from dpstudio.ui.model_variants import variant
from dpstudio.ui.style import configure_pyqtgraph
from dpstudio.ui.worker import Coalescer

__all__ = ["VIEWS", "ModelView"]

#: The right-hand views, in the combo's order.
VIEWS = ("Privacy–utility", "Training curves", "Coefficients", "Membership attack")
#: The views that show one way of training (the "Model" combo picks it).
_ONE_WAY = (2, 3)
#: ``settings.last_choices`` key of the tab's remembered choices (per dataset name).
MEMORY_KEY = "models"
#: The form's width at most (the plot takes the rest of the tab).
_FORM_WIDTH = 260


class ModelView(QWidget):
    """The tab. ``jobs`` runs the comparison; ``plot`` / ``rounds_plot`` and their
    :class:`~dpstudio.ui.model_plots.Drawn` items (``drawn``, ``drawn_rounds``), the
    ``detail`` and ``audit`` views are what a person sees (tests read them). ``settings`` (an
    :class:`~dpstudio.ui.settings.AppSettings`; by default the parent's) keeps the form's
    choices per dataset."""

    def __init__(self, session: Any, parent: QWidget | None = None,
                 settings: Any = None) -> None:
        super().__init__(parent)
        self.session = session
        self.settings = settings if settings is not None else getattr(parent, "settings",
                                                                      None)
        self.result: CompareResult | None = None
        self.drawn = Drawn()
        self.drawn_rounds = Drawn()
        self._pending = False
        #: The ε values of the curves (the form's ε is trained too).
        self.grid: tuple[float, ...] = EPSILON_GRID
        self.jobs = ModelJobs(self)
        self.form = ModelForm(self)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.form)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # The tab must not need more width than the Analysis tab (a wider centre raises
        # the window's minimum, or tabifies its docks): the form scrolls.
        scroll.setMinimumWidth(160)

        right = QWidget(self)
        col = QVBoxLayout(right)
        col.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        self.view_box = QComboBox(right)
        self.view_box.addItems(list(VIEWS))
        # Combos sized by a few characters, not their longest item: the tab's minimum
        # width is the window's (the Analysis tab's is under 400 px).
        self.view_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.view_box.setMinimumContentsLength(10)
        self.view_box.setToolTip("Privacy–utility: the metric against ε for every ticked way "
                                 "of training; Training curves: FedAvg's rounds at the form's "
                                 "ε; Coefficients: one model's, with its noise and confusion "
                                 "matrix; Membership attack: what an attacker can tell of one "
                                 "record, with an audit.")
        self.way_label = QLabel("Model", right)
        self.way_box = QComboBox(right)
        self.way_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.way_box.setMinimumContentsLength(10)
        self.way_box.setToolTip("Which ticked way of training this view shows (at the "
                                "form's ε), and which one Release… releases.")
        self.metric_box = QComboBox(right)
        self.metric_box.setMinimumContentsLength(6)
        self.metric_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.metric_box.setToolTip("What the curves show, measured on held-out rows without "
                                   "noise (for the analyst, not for publication).")
        top.addWidget(self.view_box)
        self.metric_label = QLabel("Show", right)
        top.addWidget(self.metric_label)
        top.addWidget(self.metric_box)
        top.addWidget(self.way_label)
        top.addWidget(self.way_box)
        top.addStretch(1)
        col.addLayout(top)
        self.caption = QLabel(right)
        self.caption.setWordWrap(True)
        # Room for the lines the texts take: the plot below yields the height.
        small = self.caption.font()
        small.setPointSizeF(max(small.pointSizeF() - 1.0, 7.0))
        self.caption.setFont(small)
        self.caption.setMinimumHeight(3 * self.caption.fontMetrics().lineSpacing() + 2)
        line = self.fontMetrics().lineSpacing()
        col.addWidget(self.caption)
        configure_pyqtgraph()
        self.stack = QStackedWidget(right)
        self.plot = new_plot(right, "ε (privacy-loss budget; smaller is more private)")
        self.rounds_plot = new_plot(right, "FedAvg round")
        self.detail = ModelDetailView(right)
        self.audit = ModelAuditView(right)
        self._audited: Any = None  # the request the audit view was last given
        for w in (self.plot, self.rounds_plot, self.detail, self.audit):
            w.setMinimumHeight(200)
            self.stack.addWidget(w)
        col.addWidget(self.stack, 1)
        run_row = QHBoxLayout()
        self.progress = QProgressBar(right)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.cancel_button = QPushButton("Cancel", right)
        self.cancel_button.setToolTip("Stop the training runs; the plot keeps what it showed.")
        self.cancel_button.setEnabled(False)
        self.rerun_button = QPushButton("Train", right)
        self.rerun_button.setToolTip("Run the comparison at the form's settings (finished "
                                     "points are kept: the noise is seeded).")
        self.release_button = QPushButton("Release…", right)
        self.release_button.setEnabled(False)
        from dpstudio.ui.result_panel import RELEASE_TOOLTIP

        self.release_button.setToolTip(RELEASE_TOOLTIP)
        #: The Release… logic, once the window's project controller is attached.
        self.release: Any = None
        run_row.addWidget(self.progress, 1)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.rerun_button)
        run_row.addWidget(self.release_button)
        col.addLayout(run_row)
        self.status = QLabel(right)
        #: What the comparison says, then where a release stands (each kept on its own).
        self._runs_said = self._release_said = ""
        self.status.setWordWrap(True)
        self.status.setMinimumHeight(3 * line + 4)
        self.status.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        col.addWidget(self.status)

        # The plot side scrolls sideways below ~360 px rather than raising the window's
        # minimum width (a wider centre tabifies the docks): at 1400 px it never does.
        right_scroll = QScrollArea(self)
        right_scroll.setWidgetResizable(True)
        right_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        right_scroll.setWidget(right)
        right_scroll.setMinimumWidth(200)
        split = QSplitter(self)
        split.addWidget(scroll)
        split.addWidget(right_scroll)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([_FORM_WIDTH, 1000])
        split.setCollapsible(0, False)
        split.setCollapsible(1, False)
        self.splitter = split
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

        # Slider drags and typing come in bursts: one run after the last edit.
        self._later = Coalescer(lambda _=None: self.recompute(), 150, self)
        self.form.changed.connect(self._later)
        self.form.changed.connect(self._remember)
        self.view_box.currentIndexChanged.connect(self._view_changed)
        self._view_changed(self.view_box.currentIndex())  # which combos the view uses
        self.way_box.currentIndexChanged.connect(lambda _i: self._way_changed())
        self.metric_box.currentIndexChanged.connect(self._metric_changed)
        self.cancel_button.clicked.connect(self.cancel)
        self.rerun_button.clicked.connect(lambda: self.recompute(force=True))
        self.jobs.ready.connect(self._ready)
        self.jobs.failed.connect(self._failed)
        self.jobs.busy_changed.connect(self._busy)
        self.jobs.progress.connect(self._progress)
        session.changed.connect(self._session_changed)
        self._schema_seen = session.schema
        self.form.set_schema(session.schema, self._remembered(), fresh=True)

    # -- public ----------------------------------------------------------------------

    def current_request(self, key: str | None = None) -> ModelRequest | str:
        """The single training run the form describes, for a Release… action: variant
        ``key`` (default: the current ticked row of the compare list, else the first
        ticked), one run, its δ resolved; or one sentence saying what is missing."""
        req = self.form.request()
        if isinstance(req, str):
            return req
        key = key or self.form.primary()
        if key is None:
            return "tick at least one way of training to compare"
        single = variant_request(req, key)
        from dataclasses import replace

        return replace(single, runs=1)

    def selected_way(self) -> str | None:
        """The way of training the Coefficients and Membership views show and Release…
        releases: the "Model" combo's, else the form's primary one."""
        key = self.way_box.currentData()
        ticked = self.form.ticked_variants()
        return key if key in ticked else self.form.primary()

    def attach_projects(self, projects: Any) -> None:
        """Give the tab the window's project controller: its Release… button works."""
        from dpstudio.ui.model_release import ModelRelease

        self.release = ModelRelease(self, projects)
        self.form.changed.connect(self.release.update_state)
        self.jobs.ready.connect(lambda _r: self.release.update_state())

    def release_status(self, text: str) -> None:
        """Say where a release stands (under the plot, after what the runs say): a
        comparison that finishes after the release must not wipe out its "Released as"."""
        self._release_said = text
        self._show_status()

    def _show_status(self) -> None:
        self.status.setText("\n".join(t for t in (self._runs_said, self._release_said) if t))

    def recompute(self, force: bool = False) -> None:
        """Submit the form's comparison (a running one is superseded: the newest wins);
        while the tab is hidden, only once it is shown (``force``: now)."""
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
        if not (force or self.isVisible()):
            self._pending = True  # no training for a tab nobody looks at
            return
        self._pending = False
        self._say("")
        from dataclasses import replace

        self.jobs.submit(replace(req, grid=tuple(self.grid)), dataset.frame,
                         self.session.schema)

    def cancel(self) -> None:
        self.jobs.cancel()
        self.progress.setFormat("cancelled")
        self._say("cancelled: the plot shows the last finished run; Train to resume "
                  "(finished points are kept)")

    def shutdown(self) -> None:
        self._later._timer.stop()
        self.jobs.shutdown()
        self.audit.shutdown()

    # -- remembering -----------------------------------------------------------------

    def _memory(self) -> dict[str, Any] | None:
        if self.settings is None:
            return None
        memory = self.settings.last_choices.setdefault(MEMORY_KEY, {})
        return memory if isinstance(memory, dict) else None

    def _remembered(self) -> dict[str, Any] | None:
        memory, dataset = self._memory(), self.session.dataset
        if memory is None or dataset is None:
            return None
        got = memory.get(dataset.name)
        return got if isinstance(got, dict) else None

    def _remember(self) -> None:
        memory, dataset = self._memory(), self.session.dataset
        if memory is not None and dataset is not None:
            memory[dataset.name] = self.form.choices()

    # -- reactions -------------------------------------------------------------------

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._pending:
            self._later()

    def _session_changed(self, aspect: str) -> None:
        schema = self.session.schema
        if aspect == "dataset":
            self.jobs.forget()
            self._audited = None
            self.release_status("")  # a release of the last dataset is not this one's
            self._schema_seen = schema
            self.form.set_schema(schema, self._remembered(), fresh=True)
        elif aspect in ("schema", "column") and schema is not self._schema_seen:
            # New declarations (a column picked in the Analysis panel changes nothing here).
            self.jobs.forget()  # the declarations decide every point
            self._schema_seen = schema
            self.form.set_schema(schema)

    def _say(self, text: str) -> None:
        self._runs_said = text
        self._show_status()
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

    def _view_changed(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        # The metric applies to the curves, the way to one model: only one pair is shown,
        # which also keeps the row narrow enough for the plot side at 1400 px with both
        # docks open.
        for w in (self.metric_label, self.metric_box):
            w.setVisible(index not in _ONE_WAY)
        for w in (self.way_label, self.way_box):
            w.setVisible(index in _ONE_WAY)
        if index == VIEWS.index("Membership attack"):
            self._feed_audit()
        if self.result is not None:
            grey = f"<span style='color:{BASELINE_COLOUR}'>"
            self.caption.setText(f"{grey}{self._captions(self.result)[index]}</span>")

    def _ready(self, result: CompareResult) -> None:
        self.result = result
        self.progress.setValue(1000)
        self.progress.setFormat("done")
        self.form.problem.setText("")
        # AUC first for a classifier: on unbalanced labels accuracy sits at the majority
        # class's share for every model and hides the differences.
        kept = self.metric_box.currentData() or ("auc" if "auc" in result.names else None)
        self.metric_box.blockSignals(True)
        self.metric_box.clear()
        for m in result.names:
            self.metric_box.addItem(METRIC_SHORT[m], m)
        i = self.metric_box.findData(kept)
        self.metric_box.setCurrentIndex(max(i, 0))
        self.metric_box.blockSignals(False)
        self._draw()
        self._fill_ways(result)
        self._view_changed(self.view_box.currentIndex())

    def _captions(self, r: CompareResult) -> tuple[str, str, str, str]:
        req = r.request
        shown = [k for k in r.points if k not in r.skipped]
        band = (f"line: mean of R = {req.runs} seeded runs, band: their min to max"
                if req.runs > 1 else "one seeded run per point (R = 1: no band)")
        alone = (f"; dotted: each site alone at the same ε, mean of {r.sites_count} sites"
                 if r.sites_alone else "")
        tail = f" · simulation · seed {req.seed}"
        return (f"{len(shown)} ways × {len(r.epsilons)} ε points · {band}{alone} · big "
                f"markers: the form's ε{tail}",
                f"{METRIC_SHORT[self._metric(r)]} on held-out rows after each FedAvg round at ε = "
                f"{req.epsilon:g} (the first of the R runs){tail}",
                f"{self._way_label()} at ε = {req.epsilon:g}: coefficients in the features' "
                f"units and the held-out confusion matrix (the first of the R runs){tail}",
                f"{self._way_label()} at ε = {req.epsilon:g}: what an attacker can learn of "
                f"one record, by the guarantee and by a membership audit{tail}")

    def _summary(self, r: CompareResult, metric: str) -> str:
        """Two lines under the plot (the best and the worst way at the form's ε; every
        way's figure in the tooltip)."""
        from dpstudio.ui.model_jobs import _stats

        figures: list[tuple[float, str]] = []
        lines = []
        for key, at in r.at_epsilon.items():
            if key in r.skipped:
                continue
            m, _lo, _hi = _stats(at, metric)
            label = variant(key).label
            lines.append(f"{label}: {at['error']}" if "error" in at else f"{label} {m:.3g}")
            if "error" not in at and m == m:  # not NaN
                figures.append((m, label))
        base = r.baseline.get(metric)
        lower_better = metric == "rmse"
        figures.sort(reverse=not lower_better)
        name = METRIC_SHORT[metric]
        mean = " (mean of the R runs)" if r.request.runs > 1 else ""
        if len(figures) > 2:
            said = (f"best {figures[0][1]} {figures[0][0]:.3g}, worst {figures[-1][1]} "
                    f"{figures[-1][0]:.3g}")
        else:
            said = "; ".join(f"{label} {m:.3g}" for m, label in figures)
        text = (f"At ε = {r.request.epsilon:g}, {name}{mean}: {said}"
                + (f"; non-private {base:.3g}" if base is not None else "") + ". ")
        for key, why in r.skipped.items():
            text += f"{variant(key).label} not shown: {why}. "
        self.status.setToolTip("\n".join(lines))
        return text + "Simulated on held-out rows: nothing released or charged."

    def _metric_changed(self, _index: int) -> None:
        self._draw()
        self._view_changed(self.view_box.currentIndex())  # its caption names the metric

    def _metric(self, r: CompareResult) -> str:
        return self.metric_box.currentData() or r.metric

    def _draw(self) -> None:
        r = self.result
        if r is None:
            return
        metric = self.metric_box.currentData() or r.metric
        self.drawn = draw_overlay(self.plot, r, metric)
        self.drawn_rounds = draw_rounds(self.rounds_plot, r, metric)
        self._say(self._summary(r, metric))

    def _way_label(self) -> str:
        key = self.selected_way()
        return variant(key).label if key else "no way of training"

    def _fill_ways(self, r: CompareResult) -> None:
        """The "Model" combo: the ways the result holds (the current one kept)."""
        keep = self.way_box.currentData() or self.form.primary()
        self.way_box.blockSignals(True)
        self.way_box.clear()
        for k in r.at_epsilon:
            self.way_box.addItem(variant(k).label, k)
        i = self.way_box.findData(keep)
        self.way_box.setCurrentIndex(max(i, 0))
        self.way_box.blockSignals(False)
        self._show_detail()

    def _way_changed(self) -> None:
        self._show_detail()
        if self.stack.currentWidget() is self.audit:
            self._feed_audit()
        if self.result is not None:
            self._view_changed(self.view_box.currentIndex())
        if self.release is not None:
            self.release.update_state()

    def _show_detail(self) -> None:
        r, key = self.result, self.way_box.currentData()
        if r is None or key is None or key not in r.at_epsilon:
            return
        self.detail.show_result(r.at_epsilon[key])
        if "error" in r.at_epsilon[key]:
            self.detail.note.setVisible(True)
            self.detail.note.setText(f"{variant(key).label}: {r.at_epsilon[key]['error']}.")

    def _feed_audit(self) -> None:
        """The audit view follows the chosen way at the form's ε (its curve recomputed only
        when the run it stands for changed)."""
        dataset = self.session.dataset
        req = self.current_request(self.selected_way())
        if dataset is None or isinstance(req, str):
            return
        from dataclasses import replace

        req = replace(req, grid=())
        if req == self._audited:
            return
        self._audited = req
        self.audit.set_request(req, dataset.frame, self.session.schema)
