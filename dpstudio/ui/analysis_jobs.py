"""The analysis view's live computations: :class:`Analysis` turns each change of a
:class:`~dpstudio.ui.session.Session` into jobs for the worker threads.

The jobs are the headless analysis layer's (:mod:`dpstudio.analysis.utility`,
:mod:`~dpstudio.analysis.privacy`, :mod:`~dpstudio.analysis.preview`): slow utility curves
on one runner (cached by :meth:`~dpstudio.analysis.choices.Choices.utility_key`, so moving
ε never recomputes them), the per-ε trade-off and preview on another, throttled so a
slider drag updates live.

The jobs' own modules are imported by the jobs, in the worker thread: the first frame
does not wait for them. A new dataset's jobs start once the window has taken the dataset
in (the table, the column list, remembered choices): started at once, they would compete
with that for the interpreter and the window would freeze while installing a big table.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from dpstudio.ui.folder_open import is_folder
from dpstudio.ui.throttle import Throttle
from dpstudio.ui.worker import Coalescer, JobRunner

if TYPE_CHECKING:
    from dpstudio.analysis.choices import Choices
    from dpstudio.analysis.curves import Preview, TradeoffResult, UtilityResult
    from dpstudio.ui.session import Session

__all__ = ["Analysis"]


class Analysis(QObject):
    """Runs the analysis view's jobs for a :class:`Session` and hands results to views.

    Two worker threads: ``slow`` for the utility curves (analytic lines, then the
    cancellable Monte-Carlo job with progress), ``fast`` for the per-ε trade-off and
    preview jobs. Utility results are cached by their key, so changing ε, k, the
    confidence or display options never recomputes them.
    """

    lines_ready = Signal(object)      # UtilityResult (analytic curves)
    compare_ready = Signal(object)    # UtilityResult (planned protocols' curves)
    points_ready = Signal(object)     # UtilityResult (Monte-Carlo points)
    tradeoff_ready = Signal(object)   # TradeoffResult
    preview_ready = Signal(object)    # Preview
    cleared = Signal(str)             # nothing to compute; the reason
    failed = Signal(str, str)         # job key, one-line message
    busy_changed = Signal(str, bool)  # job key, running
    progress = Signal(str, float, str)
    mc_cancelled = Signal()
    #: A folder's sums were computed: the manifest-like ``execution`` dict (engine, cluster).
    execution_changed = Signal(object)

    KEYS = ("folder", "lines", "montecarlo", "compare", "tradeoff", "preview")
    #: Overlay the shuffle and secure-aggregation protocols' planned errors (their plans
    #: calibrate noise numerically: up to a second per ε the first time, then cached).
    planned_comparisons = True

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.slow = JobRunner(self)
        self.fast = JobRunner(self)
        self._busy: set[str] = set()
        self._lines_cache: dict[tuple, UtilityResult] = {}
        self._points_cache: dict[tuple, UtilityResult] = {}
        self._compare_cache: dict[tuple, UtilityResult] = {}
        self._shown: dict[str, Any] = {}
        self._submitted: dict[str, Any] = {}
        self.preview_seed = 1
        self.mc_was_cancelled = False
        #: A folder: where its sums run (the Execution setting) and what was computed.
        self.engine = "auto"
        self.scheduler = ""
        self.execution: dict[str, Any] | None = None
        self.folder_was_cancelled = False
        self._cancelled_key: tuple | None = None
        self._folder_sums: dict[tuple, Any] = {}
        self._closed = False
        for runner in (self.slow, self.fast):
            runner.sig_finished.connect(self._finished)
            runner.sig_failed.connect(self._failed)
            runner.sig_busy.connect(self._busy_changed)
            runner.sig_progress.connect(self.progress)
        self._utility_later = Coalescer(lambda _=None: self._submit_utility(), 30, self)
        self._fast_later = Throttle(self._submit_fast, 30, self)
        # A new dataset's first jobs: on the next turn of the event loop, after the
        # window has installed the dataset (see the module's note).
        self._dataset_later = QTimer(self)
        self._dataset_later.setSingleShot(True)
        self._dataset_later.setInterval(0)
        self._dataset_later.timeout.connect(self._submit_all)
        # A folder's pass done: what it unlocks is submitted on the next turn, once the
        # runner has said the pass ended (a job submitted under the same key from inside
        # its finished signal would be marked idle by that very signal).
        self._folder_later = QTimer(self)
        self._folder_later.setSingleShot(True)
        self._folder_later.setInterval(0)
        self._folder_later.timeout.connect(self._after_folder)
        session.changed.connect(self._on_changed)

    # -- public ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Recompute whatever the current settings need (e.g. after construction)."""
        self._on_changed("refresh")

    def cancel_montecarlo(self) -> None:
        """Stop the Monte-Carlo job (and a folder's sums: their Dask futures are cancelled
        at once); whatever they still return is dropped."""
        if "folder" in self._busy or self._submitted.get("folder") is not None:
            self.slow.cancel("folder")
            self._submitted["folder"] = None
            self.folder_was_cancelled = True
            # The choices on screen (a pass may have started before their curves were
            # asked for: a local preview's): not computed again until asked or changed.
            s = self.session.settings()
            self._cancelled_key = (s.utility_key() if s is not None
                                   else self._shown.get("utility"))
            self.mc_cancelled.emit()
        if "montecarlo" in self._busy or self._submitted.get("montecarlo") is not None:
            self.slow.cancel("montecarlo")
            self._submitted["montecarlo"] = None
            self.mc_was_cancelled = True
            self.mc_cancelled.emit()

    def recompute_montecarlo(self) -> None:
        self.mc_was_cancelled = False
        s = self.session.settings()
        if s is None or self._closed:
            return
        if self.is_folder:  # "Simulate on the data (slow)", or "Compute again"
            if self.folder_was_cancelled or self._sums_for(s) is None:
                self.folder_was_cancelled = False
                self._submit_folder(s)
            else:  # Monte-Carlo on every row: passes over every file at each ε
                self._submit_folder_points(s)
            return
        self._submit_points(s, force=True)

    def set_execution(self, engine: str, scheduler: str) -> None:
        """Where a folder's sums run from now on; an open folder is summed again there."""
        if (engine, scheduler) == (self.engine, self.scheduler):
            return
        self.engine, self.scheduler = engine, scheduler
        self.execution = None
        if self.is_folder:
            self._drop_jobs()
            self._folder_sums.clear()
            self._lines_cache.clear()
            self._points_cache.clear()
            self.folder_was_cancelled = False
            self._cancelled_key = None
            self.refresh()

    @property
    def is_folder(self) -> bool:
        """Whether the session's dataset is a folder (its numbers from all its files)."""
        return is_folder(self.session.dataset)

    def folder_local(self) -> bool:
        """Whether the folder's analysis is a local randomizer's (its line needs no pass;
        its preview is one)."""
        s = self.session.settings()
        return self.is_folder and s is not None and self._local(s)

    def has_folder_sums(self) -> bool:
        """Whether the folder's aggregates for the current choices are in."""
        s = self.session.settings()
        return self.is_folder and s is not None and self._sums_for(s) is not None

    def draw_again(self) -> None:
        """A new simulated release at the same settings (another seed)."""
        self.preview_seed += 1
        self._submitted.pop("preview", None)
        self._submit_fast()

    def is_idle(self) -> bool:
        return (not self._busy and not self._fast_later.pending()
                and not self._utility_later._timer.isActive()
                and not self._dataset_later.isActive()
                and not self._folder_later.isActive())

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """Process events until every job has finished (screenshots, tests, benchmarks)."""
        deadline = time.monotonic() + timeout_s
        app = QCoreApplication.instance()
        while time.monotonic() < deadline:
            if app is not None:
                app.processEvents()
            if self.is_idle():
                if app is not None:
                    app.processEvents()
                if self.is_idle():
                    return True
            time.sleep(0.002)
        return False

    def busy(self) -> set[str]:
        return set(self._busy)

    def shutdown(self) -> None:
        """Stop for good (window closing): pending timers die, running jobs are dropped."""
        if self._closed:
            return
        self._closed = True
        self._fast_later.stop()
        self._utility_later._timer.stop()
        self._dataset_later.stop()
        self._folder_later.stop()
        self.slow.shutdown()
        self.fast.shutdown()

    # -- scheduling ----------------------------------------------------------------------

    def _on_changed(self, aspect: str) -> None:
        if self._closed:
            return
        if aspect == "dataset":
            # The old dataset's results are of no use; the new one's jobs start on the
            # next turn, reading the settings as the window leaves them (the column list
            # and remembered choices change them again in this turn).
            self._drop_jobs()
            # The caches' keys describe the settings, not the data: another file with a
            # column of the same name and declaration must not get this one's curves.
            self._lines_cache.clear()
            self._points_cache.clear()
            self._compare_cache.clear()
            self._folder_sums.clear()
            self.folder_was_cancelled = False
            self._dataset_later.start()
        s = self.session.settings()
        if s is None:
            self._drop_jobs()
            self.cleared.emit(self.session.problem() or "")
            return
        if aspect in ("hide_true", "budget") or self._dataset_later.isActive():
            return  # display only, or the dataset's jobs are about to start
        if s.utility_key() != self._shown.get("utility"):
            if aspect == "refresh":
                self._submit_utility()
            else:
                self._utility_later()
        self._fast_later()

    def _drop_jobs(self) -> None:
        """Cancel every job under way; whatever they still return is not shown."""
        for runner, key in ((self.slow, "folder"), (self.slow, "lines"),
                            (self.slow, "montecarlo"),
                            (self.slow, "compare"), (self.fast, "tradeoff"),
                            (self.fast, "preview")):
            if self._submitted.get(key) is not None:
                runner.cancel(key)
        self._submitted.clear()
        self._shown.clear()

    def _submit_all(self) -> None:
        s = self.session.settings()
        if s is None or self._closed:
            return
        if s.utility_key() != self._shown.get("utility"):
            self._submit_utility()
        self._submit_fast()

    def _submit_utility(self) -> None:
        s = self.session.settings()
        if s is None or self._closed:
            return
        key = s.utility_key()
        self._shown["utility"] = key
        self.mc_was_cancelled = False
        if self.is_folder:
            if key != self._cancelled_key:
                self.folder_was_cancelled = False  # a new choice: its sums are wanted
            self._submit_folder(s)
            return
        if key in self._lines_cache:
            self._submitted["lines"] = None
            self.lines_ready.emit(self._lines_cache[key])
        elif self._submitted.get("lines") != key:
            self._submitted["lines"] = key
            self.slow.submit("lines", _lines_job, s, self.session.values)
        # The comparison curves before the Monte-Carlo job (one worker runs them in
        # order): the lines are all drawn while the simulation's points still arrive.
        if self.planned_comparisons:
            self._submit_compare(s)
        self._submit_points(s)

    def _submit_compare(self, s: Choices) -> None:
        key = s.utility_key()
        if key in self._compare_cache:
            self._submitted["compare"] = None
            self.compare_ready.emit(self._compare_cache[key])
        elif self._submitted.get("compare") != key:
            self._submitted["compare"] = key
            self.slow.submit("compare", _compare_job, s, self.session.values)

    def _submit_points(self, s: Choices, force: bool = False) -> None:
        key = s.utility_key()
        if key in self._points_cache and not force:
            self._submitted["montecarlo"] = None
            if "montecarlo" in self._busy:
                self.slow.cancel("montecarlo")
            self.points_ready.emit(self._points_cache[key])
        elif force or self._submitted.get("montecarlo") != key:
            self._submitted["montecarlo"] = key
            self.slow.submit("montecarlo", _points_job, s, self.session.values)

    def _submit_fast(self) -> None:
        s = self.session.settings()
        if s is None or self._closed:
            return
        t_key = (s.utility_key(), s.epsilon, s.effective_delta, s.compositions, s.confidence)
        if self._submitted.get("tradeoff") != t_key:
            self._submitted["tradeoff"] = t_key
            self.fast.submit("tradeoff", _tradeoff_job, s)
        p_key = (t_key, self.preview_seed)
        if self.is_folder and self._local(s):
            self._submit_local(s)  # the preview is the pass itself: one per ε and draw
            return
        if self.is_folder:
            sums = self._sums_for(s)
            if sums is not None and self._submitted.get("preview") != p_key:
                from dpstudio.ui.folder_numbers import folder_preview

                self._submitted["preview"] = p_key
                self.fast.submit("preview", folder_preview, s, sums, self.preview_seed)
            return
        if self._submitted.get("preview") != p_key:
            self._submitted["preview"] = p_key
            self.fast.submit("preview", _preview_job, s, self.session.values,
                             self.preview_seed)

    # -- a folder: its aggregates first, then every number from them ----------------------

    def _sums_for(self, s: Choices) -> Any:
        from dpstudio.ui.folder_numbers import sums_key

        if self._local(s):
            from dpstudio.ui.folder_local import local_key

            return self._folder_sums.get(local_key(s, self.preview_seed))
        return self._folder_sums.get(sums_key(s))

    def _local(self, s: Choices) -> bool:
        """Whether ``s`` on the folder is a local randomizer's (reports tallied per file)."""
        from dpstudio.ui.folder_local import is_local_choice

        return is_local_choice(s)

    def _folder_rows(self, s: Choices) -> int | None:
        """The folder's rows: from its files' metadata, else counted by a pass."""
        rows = getattr(self.session.dataset, "total_rows", None)
        if rows is None:
            runs = [r for r in self._folder_sums.values() if hasattr(r, "preview")]
            rows = runs[-1].n if runs else None
        return rows

    def _submit_local_lines(self, s: Choices) -> None:
        """The local line at n, once per choice (not again at every ε: the Monte-Carlo
        points drawn over it stay)."""
        from dpstudio.ui.folder_local import local_utility

        key = s.utility_key()
        rows = self._folder_rows(s)
        if rows is None or self._shown.get("lines") == key:
            return  # the rows are counted by the first pass (CSV files), or shown
        if key in self._lines_cache:
            self._submitted["lines"] = None
            self._shown["lines"] = key
            self.lines_ready.emit(self._lines_cache[key])
        elif self._submitted.get("lines") != key:
            self._submitted["lines"] = key
            self.slow.submit("lines", local_utility, s, rows)

    def _submit_local(self, s: Choices) -> None:
        """A local analysis of a folder: its analytic line at n (no pass needed where the
        files' metadata count the rows), and the preview — one simulated release over every
        row, on the engine of the Execution setting, with progress and Cancel (cached by
        ε and seed: a change of display reuses it, a new ε or draw is a new pass)."""
        from dpstudio.ui.folder_local import local_job, local_key

        self._submit_local_lines(s)
        run_key = local_key(s, self.preview_seed)
        run = self._folder_sums.get(run_key)
        if run is not None:
            if self._submitted.get("preview") != run_key:
                self._submitted["preview"] = run_key
                self.preview_ready.emit(run.preview)
            return
        if self.folder_was_cancelled or self._submitted.get("folder") == run_key:
            return  # cancelled: computed again only when asked (Simulate / a new choice)
        dataset = self.session.dataset
        self._submitted["folder"] = run_key
        self.slow.submit("folder", local_job, s, dataset.files, self.session.spec,
                         self.engine, self.scheduler,
                         bool(dataset.frame.attrs.get("header", True)), self.preview_seed)

    def _submit_folder(self, s: Choices) -> None:
        """The folder's exact aggregates for ``s`` (cached): one pass over every file, on
        the engine of the Execution setting, with progress and Cancel; then the lines."""
        from dpstudio.ui.folder_numbers import folder_utility, sums_job, sums_key

        if self._local(s):
            self._submit_local(s)
            return
        key = s.utility_key()
        sums = self._sums_for(s)
        if sums is not None:
            if key in self._lines_cache:
                self._submitted["lines"] = None
                self.lines_ready.emit(self._lines_cache[key])
            elif self._submitted.get("lines") != key:
                self._submitted["lines"] = key
                self.slow.submit("lines", folder_utility, s, sums)
            return
        if self.folder_was_cancelled or self._submitted.get("folder") == sums_key(s):
            return  # cancelled: computed again only when asked (Simulate / a new choice)
        dataset = self.session.dataset
        self._submitted["folder"] = sums_key(s)
        self.slow.submit("folder", sums_job, s, dataset.files, self.session.spec,
                         self.engine, self.scheduler,
                         bool(dataset.frame.attrs.get("header", True)))

    def _submit_folder_points(self, s: Choices) -> None:
        from dpstudio.ui.folder_local import local_montecarlo
        from dpstudio.ui.folder_numbers import folder_montecarlo

        dataset = self.session.dataset
        self.mc_was_cancelled = False
        self._submitted["montecarlo"] = s.utility_key()
        job = local_montecarlo if self._local(s) else folder_montecarlo
        self.slow.submit("montecarlo", job, s, dataset.files, self.session.spec,
                         self.engine, self.scheduler,
                         bool(dataset.frame.attrs.get("header", True)))

    def _folder_done(self, sums: Any) -> None:
        self._submitted["folder"] = None
        self._folder_sums[sums.key] = sums
        self.execution = sums.execution
        self.execution_changed.emit(sums.execution)
        self._folder_later.start()

    def _after_folder(self) -> None:
        s = self.session.settings()
        if s is None or self._closed or not self.is_folder:
            return
        if self._local(s):
            self._submit_local(s)
            return
        self._submit_folder(s)
        self._submit_fast()

    # -- results ---------------------------------------------------------------------------

    def _finished(self, key: str, result: Any) -> None:
        if key == "folder":
            self._folder_done(result)
        elif key == "lines":
            self._lines_cache[result.key] = result
            self._submitted["lines"] = None
            if result.key == self._shown.get("utility"):
                self._shown["lines"] = result.key
                self.lines_ready.emit(result)
        elif key == "montecarlo":
            self._points_cache[result.key] = result
            self._submitted["montecarlo"] = None
            if result.key == self._shown.get("utility"):
                self.points_ready.emit(result)
        elif key == "compare":
            self._compare_cache[result.key] = result
            self._submitted["compare"] = None
            if result.key == self._shown.get("utility"):
                self.compare_ready.emit(result)
        elif self._submitted.get(key) is None:
            return  # cleared since (e.g. a bad imputed value): a stale result, not shown
        elif key == "tradeoff":
            self.tradeoff_ready.emit(result)
        elif key == "preview":
            self.preview_ready.emit(result)

    def _failed(self, key: str, message: str) -> None:
        self._submitted[key] = None
        self.failed.emit(key, message)

    def _busy_changed(self, key: str, busy: bool) -> None:
        if busy:
            self._busy.add(key)
        else:
            self._busy.discard(key)
        self.busy_changed.emit(key, busy)


# Jobs: module-level so they hold no reference to Qt objects. Each imports what it runs
# (in the worker thread, once): the first frame does not wait for those modules.


def _lines_job(s: Choices, values: np.ndarray, state=None) -> UtilityResult:
    from dpstudio.analysis.choices import VIEW_TRUST_MODELS
    from dpstudio.analysis.utility import PLANNED_MODELS, utility

    fast = tuple(m for m in VIEW_TRUST_MODELS if m not in PLANNED_MODELS)
    return utility(s, values, state, simulate=False, compare=fast)


def _compare_job(s: Choices, values: np.ndarray, state=None
                 ) -> UtilityResult:
    from dpstudio.analysis.utility import PLANNED_MODELS, utility

    return utility(s, values, state, simulate=False, analytic=False,
                   compare=PLANNED_MODELS)


def _points_job(s: Choices, values: np.ndarray, state=None) -> UtilityResult:
    from dpstudio.analysis.utility import utility

    return utility(s, values, state, analytic=False, compare=False)


def _tradeoff_job(s: Choices, state=None) -> TradeoffResult:
    from dpstudio.analysis.privacy import tradeoff

    return tradeoff(s, state)


def _preview_job(s: Choices, values: np.ndarray, seed: int, state=None
                 ) -> Preview:
    from dpstudio.analysis.preview import preview

    return preview(s, values, state, seed=seed)
