"""Projects, releases and release specs in the main window.

:class:`ProjectController` holds the open :class:`~dpstudio.project.Project`, keeps the
Release… button, the budget panel (the project's budget for the session's dataset) and
the Ledger tab up to date, and runs a release:

1. **Check** (worker thread): :meth:`Project.check` — the budget, the dataset's
   fingerprint, the query — without drawing noise. A refusal (budget exceeded, dataset
   changed, …) is shown and nothing else happens.
2. **Confirm**: :class:`~dpstudio.ui.project_dialogs.ReleaseDialog` shows what will be
   released, what it charges and what is left before and after, and the output options.
3. **Release** (worker thread, never the UI thread): :meth:`Project.release` — noise from
   the OS CSPRNG, charged and written as one transaction (nothing half-done: see
   :mod:`dpstudio.project.project`). Then the released value and its files.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox

from dpstudio.engine.accounting import budget as exact_budget
from dpstudio.project import (
    BudgetExceededError,
    BudgetState,
    DatasetChangedError,
    DatasetRecord,
    DatasetVersionError,
    LedgerTamperedError,
    Project,
    ProjectError,
    ReleaseRecord,
    ReleaseSpec,
)
from dpstudio.project.release_files import NO_RECORDS
from dpstudio.ui.budget_figures import budget_figures
from dpstudio.ui.folder_open import is_folder
from dpstudio.ui.ledger_view import LedgerData
from dpstudio.ui.project_dialogs import (
    PROJECT_FILTER,
    NewProjectDialog,
    ReleaseDialog,
    ReleaseDoneDialog,
)
from dpstudio.ui.release_jobs import (
    CANCELLED_TEXT,
    Outcome,
    ReleaseCancelled,
    ReleaseState,
    check_job,
    hash_job,
    release_job,
    tamper_text,
)
from dpstudio.ui.release_rules import (
    OVER_BUDGET_TEXT,
    RELEASE_READY,
    RELEASE_TEXT,
    release_problem,
)
from dpstudio.ui.session import ProjectBudget
from dpstudio.ui.spec_actions import SPEC_FILTER, SpecActions
from dpstudio.ui.worker import JobRunner

__all__ = ["SPEC_FILTER", "ProjectController"]


def _short(x: float) -> str:
    return "0" if x == 0 else f"{x:.4g}"


class ProjectController(QObject, SpecActions):
    """The open project of one :class:`~dpstudio.ui.main_window.MainWindow`.

    ``busy`` is ``"check"`` or ``"release"`` while a job runs, else ``None``.
    ``done_dialog`` is the last release's result dialog (tests). Release specs (the
    session as a spec, saved, opened and applied) come from the mixed-in
    :class:`~dpstudio.ui.spec_actions.SpecActions`; the worker jobs are in
    :mod:`dpstudio.ui.release_jobs`, the Release… button's rules in
    :mod:`dpstudio.ui.release_rules`.
    """

    project_changed = Signal(object)     # Project | None
    release_done = Signal(object)        # ReleaseRecord
    release_refused = Signal(str)        # the one-line reason
    busy_changed = Signal(bool)
    plan_checked = Signal(object)        # Outcome of a release plan's check (plan_view)

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.session = window.session
        self.settings = window.settings
        self.project: Project | None = None
        self.busy: str | None = None
        self.done_dialog: ReleaseDoneDialog | None = None
        self.version_box: QMessageBox | None = None  # whose budget? (a version)
        self._record: DatasetRecord | None = None
        #: (dataset, its byte and content hashes) once the worker has computed them.
        self._hashes: tuple[Any, tuple[str, ...]] | None = None
        self._hashing: Any = None  # the dataset whose hashes the worker is computing
        self._ledger_key: str | None = None   # a dataset chosen in the Ledger tab
        self._pending_spec: ReleaseSpec | None = None
        self._spec: ReleaseSpec | None = None
        self._out: Path | None = None
        self._stale = False
        #: The release under way: its progress and Cancel (None when none runs).
        self.release_state: ReleaseState | None = None
        #: What was changed in the open project's ledger outside DP Studio ([] if intact).
        self.tamper: list[str] = []
        self.runner = JobRunner(self)
        self.runner.sig_finished.connect(self._job_finished)
        self.runner.sig_failed.connect(self._job_failed)
        self.session.changed.connect(self._session_changed)
        # A spec waiting for its dataset is applied once the whole window holds it (the
        # Columns panel too, which takes the spec's declarations), not when the session does.
        self.window.dataset_changed.connect(self._apply_pending_spec)
        window.ledger_view.dataset_chosen.connect(self._ledger_dataset_chosen)
        window.ledger_view.acknowledge_requested.connect(self.acknowledge_changes)
        window.result_panel.release_button.clicked.connect(self.start_release)

    # -- opening and closing ---------------------------------------------------------------

    def _start_folder(self) -> Path:
        if self.project is not None:
            return self.project.path.parent
        if self.session.dataset is not None:
            return self.session.dataset.path.parent
        return Path.home()

    def new_project(self) -> bool:
        """Ask where and with which default budget, then create the project and open it."""
        if self.busy:
            return False
        dialog = NewProjectDialog(self.window, self._start_folder())
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return False
        return self.create_project(**dialog.values(), accountant=dialog.chosen_accountant())

    def create_project(self, path: str | os.PathLike[str], epsilon: float, delta: float,
                       relation: str = "add-remove", accountant: str = "basic") -> bool:
        try:
            project = Project.create(path, epsilon=epsilon, delta=delta, relation=relation,
                                     accountant=accountant)
        except ProjectError as exc:
            QMessageBox.critical(self.window, "Could not create the project", str(exc))
            return False
        self.set_project(project)
        self.window.statusBar().showMessage(f"Created {project.path}", 5000)
        return True

    def open_project(self, path: str | os.PathLike[str] | None = None) -> bool:
        """Open a project file (ask which if ``path`` is None); on error keep the current one."""
        if self.busy:
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.window, "Open project",
                                                  str(self._start_folder()), PROJECT_FILTER)
            if not path:
                return False
        try:
            project = Project.open(path)
        except (ProjectError, OSError) as exc:
            if not Path(path).exists():
                self.settings.remove_recent_project(path)
                self.settings.save()
            message = str(exc) if isinstance(exc, ProjectError) else (
                f"cannot open {Path(path).name} ({exc.strerror or exc})")
            QMessageBox.critical(self.window, "Could not open the project", message)
            return False
        self.set_project(project)
        report = project.last_recovery
        if report.completed or report.aborted:
            self.window.statusBar().showMessage(
                f"Recovered interrupted releases: {len(report.completed)} completed, "
                f"{len(report.aborted)} aborted (their budget stays charged)", 10000)
        if self.tamper:
            tabs = getattr(self.window, "tabs", None)
            if tabs is not None:  # the Ledger tab lists the changes and offers to acknowledge
                tabs.setCurrentWidget(self.window.ledger_view)
            self._warn_tampered()
        return True

    def _warn_tampered(self) -> None:
        from dpstudio.project.project import tamper_message

        assert self.project is not None
        QMessageBox.warning(self.window, "The ledger was changed outside DP Studio",
                            tamper_text(tamper_message(self.project.path, self.tamper)))

    def acknowledge_changes(self) -> bool:
        """Acknowledge an edited ledger (after asking): the pessimistic charges are kept,
        the acknowledgement recorded, and releases allowed again."""
        if self.project is None or self.busy or not self.tamper:
            return False
        answer = QMessageBox.question(
            self.window, "Acknowledge the changes to the ledger",
            "Acknowledge these changes made outside DP Studio?\n\n• "
            + "\n• ".join(self.tamper) + "\n\nDP Studio keeps the pessimistic charges: the "
            "largest ε and δ the ledger, its hash chain or a release manifest records "
            "(deleted releases are restored and stay charged; a raised budget is lowered "
            "back). The acknowledgement is recorded in the ledger.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        if answer != QMessageBox.StandardButton.Yes:
            return False
        try:
            done = self.project.acknowledge()
        except ProjectError as exc:
            QMessageBox.critical(self.window, "Could not acknowledge the changes", str(exc))
            return False
        self.refresh()
        self.window.statusBar().showMessage(
            f"Acknowledged {len(done)} change(s) to the ledger; releases are allowed again",
            10000)
        return True

    def close_project(self) -> bool:
        if self.busy or self.project is None:
            return False
        self.set_project(None)
        return True

    def set_project(self, project: Project | None) -> None:
        old, self.project = self.project, project
        if old is not None and old is not project:
            old.close()
        self._ledger_key = None
        if project is not None:
            self.settings.add_recent_project(project.path)
            self.settings.save()
        self.refresh()
        self.window.update_title()
        self.project_changed.emit(project)

    def shutdown(self) -> None:
        """The window closes: let a running release finish (never cut it), then close."""
        self.runner.shutdown()
        if self.project is not None:
            self.project.close()
            self.project = None

    # -- state -------------------------------------------------------------------------------

    def _session_changed(self, aspect: str) -> None:
        if aspect == "epsilon":
            # The hot path of a slider drag: only whether this release fits the budget.
            if self.project is not None:
                self.update_release_state()
            return
        if aspect == "dataset":
            self._ledger_key = None
            self.refresh()
            return
        self.update_release_state()

    def _find_record(self) -> DatasetRecord | None:
        """The session dataset's record: by its path here (one query); moved, or the same
        rows under another name or encoding, by its hashes — computed once per opened
        dataset in the worker (a second for a million rows), never on the UI thread. Until
        they are known this returns None and :meth:`_identified` refreshes when they are."""
        d = self.session.dataset
        if self.project is None or d is None:
            return None
        with contextlib.suppress(ProjectError):
            return self.project.dataset(str(d.path.resolve()))
        cached = self._hashes
        if cached is None or cached[0] is not d:
            if self._hashing is not d:
                self._hashing = d
                self.runner.submit("identify", hash_job, d)
            return None
        for key in cached[1]:
            with contextlib.suppress(ProjectError):  # not registered under this hash
                return self.project.dataset(key)
        return None

    def _identified(self, outcome: Outcome) -> None:
        """The worker's hashes of the session dataset: keep them, and look it up again."""
        d, self._hashing = self._hashing, None
        if outcome.error is not None:  # an unreadable file: it is looked up by path alone
            self.window.statusBar().showMessage(
                f"Could not fingerprint the dataset: {outcome.error}", 10000)
            self._hashes = (d, ())
        else:
            self._hashes = (d, outcome.value)
        if d is self.session.dataset:
            self.refresh()

    def refresh(self) -> None:
        """Re-read the project: the dataset's record, the budget panel, the Ledger tab."""
        if self.busy == "release":
            self._stale = True  # the ledger is being written; read it when done
            return
        self._stale = False
        try:
            self.tamper = self.project.integrity() if self.project is not None else []
        except ProjectError as exc:
            self.tamper = [str(exc)]
        self._record = self._find_record()
        self.session.set_project_budget(self._project_budget())
        self.window.ledger_view.set_data(self._ledger_data())
        self.update_release_state()

    def _project_budget(self) -> ProjectBudget | None:
        p, d = self.project, self.session.dataset
        if p is None or d is None:
            return None
        if self._record is not None:
            b = p.budget(self._record)
            # The exact decimals too: "use the remaining ε" sets exactly what is left.
            return ProjectBudget(p.path.name, d.name, float(b.total_epsilon),
                                 float(b.total_delta), float(b.spent_epsilon),
                                 float(b.spent_delta), len(p.ledger(self._record)), True,
                                 b.accountant, (b.total_epsilon, b.total_delta),
                                 (b.spent_epsilon, b.spent_delta),
                                 None if b.accountant == "basic"
                                 else tuple(p.losses(self._record)))
        defaults = p.defaults()
        if defaults["epsilon"] is None:
            return None  # the session's budget registers it (see current_spec)
        total = (exact_budget.exact(defaults["epsilon"]), exact_budget.exact(defaults["delta"]))
        return ProjectBudget(p.path.name, d.name, float(defaults["epsilon"]),
                             float(defaults["delta"]), accountant=defaults["accountant"],
                             exact_total=total)

    def _ledger_data(self) -> LedgerData | None:
        p = self.project
        if p is None:
            return None
        records = p.datasets()
        names = [r.name for r in records]
        datasets = [(str(r.id), r.name if names.count(r.name) == 1 else f"{r.name} (#{r.id})")
                    for r in records]
        shown: DatasetRecord | None = None
        if self._ledger_key is not None:
            shown = next((r for r in records if str(r.id) == self._ledger_key), None)
        if shown is None:
            shown = self._record
        d = self.session.dataset
        if shown is None and d is None and records:
            shown = records[0]
        data = LedgerData(project=p.path.name, datasets=datasets, problems=list(self.tamper))
        if shown is not None:
            data.current, data.dataset = str(shown.id), shown.name
            # As charged: while the ledger is edited, a deleted release that still counts
            # in "Remaining" is listed and plotted too (status "deleted").
            data.releases = p.charged_ledger(shown)
            data.points = p.cumulative_epsilon(shown)
            data.budget = p.budget(shown)
            data.spent_by_accountant = p.spent_by_accountant(shown)
            if not data.releases:
                data.message = f"No releases of {shown.name} yet."
            return data
        if d is None:
            data.message = "No dataset registered yet: open a dataset and release from it."
            return data
        data.dataset = d.name
        defaults = p.defaults()
        if defaults["epsilon"] is not None:
            data.budget = BudgetState(defaults["epsilon"], defaults["delta"], 0, 0,
                                      defaults["accountant"])
            data.message = (f"No releases of {d.name} yet: its first release registers it "
                            f"with the project's default budget ε = "
                            f"{_short(float(defaults['epsilon']))}, δ = "
                            f"{_short(float(defaults['delta']))}.")
        else:
            data.message = (f"No releases of {d.name} yet: its first release registers it "
                            "with the session's budget (the project has no default).")
        return data

    def _ledger_dataset_chosen(self, key: str) -> None:
        self._ledger_key = key
        if self.project is not None:
            self.window.ledger_view.set_data(self._ledger_data())

    def release_problem(self) -> str | None:
        """Why the current analysis cannot be released now (one line), or None."""
        return release_problem(self.session, self.project, self._record, busy=self.busy,
                               tamper=self.tamper, budget=budget_figures(self.session))

    def update_release_state(self) -> None:
        """The Release… button: enabled, or disabled with the reason as its tooltip; while
        the release does not fit the budget, its text says so too."""
        figures = budget_figures(self.session)
        problem = release_problem(self.session, self.project, self._record, busy=self.busy,
                                  tamper=self.tamper, budget=figures)
        panel = self.window.result_panel
        panel.set_release_state(problem is None, problem or RELEASE_READY)
        over = problem is not None and problem == figures.shortfall()
        text = OVER_BUDGET_TEXT if over else RELEASE_TEXT
        if panel.release_button.text() != text:
            panel.release_button.setText(text)

    def _set_busy(self, busy: str | None) -> None:
        self.busy = busy
        self.update_release_state()
        self.busy_changed.emit(busy is not None)

    def default_out_dir(self) -> Path:
        assert self.project is not None
        return self.project.path.parent / f"{self.project.path.stem}-releases"

    # -- releasing -------------------------------------------------------------------------------

    def start_release(self) -> bool:
        """The Release… button: check in the worker, then confirm, then release."""
        self.refresh()  # another process (dpstudio release) may have used the project
        if self.release_problem() is not None or self.project is None:
            return False
        spec = self.current_spec()
        if spec is None:
            return False
        self._spec, self._out = spec, self.default_out_dir()
        self._set_busy("check")
        self.window.statusBar().showMessage("Checking the budget…")
        self.runner.submit("check", check_job, self.project, spec, self._out)
        return True

    def _job_failed(self, key: str, message: str) -> None:  # a bug in a job: say so
        if key == "identify":
            self._identified(Outcome(error=RuntimeError(message)))
            return
        self._set_busy(None)
        self.refresh()
        self.window.statusBar().clearMessage()
        QMessageBox.critical(self.window, "Release failed", message)

    def _job_finished(self, key: str, outcome: Outcome) -> None:
        if key == "identify":
            self._identified(outcome)
            return
        self._set_busy(None)
        self.window.statusBar().clearMessage()
        if key == "check":
            if outcome.error is not None:
                self._refused(outcome.error)
                return
            self._confirm(outcome.value)
        elif key == "plan-check":  # the plan view confirms and calls start_plan_release
            self.plan_checked.emit(outcome)
        elif key == "release":
            self.release_state = None
            self.refresh()
            if isinstance(outcome.error, ReleaseCancelled):
                self.window.statusBar().showMessage(CANCELLED_TEXT, 15000)
                self.release_refused.emit(CANCELLED_TEXT)
                return
            if outcome.error is not None:
                self._refused(outcome.error)
                return
            self._released(outcome.value)

    def _refused(self, error: Exception) -> None:
        message = str(error)
        if isinstance(error, DatasetVersionError) and self._ask_whose_budget(error):
            return
        if isinstance(error, BudgetExceededError):
            title = "Budget exceeded"
        elif isinstance(error, DatasetChangedError):
            title = "The dataset has changed"
        elif isinstance(error, LedgerTamperedError):
            title = "The ledger was changed outside DP Studio"
            message = tamper_text(message)
            self.refresh()
        else:
            title = "Cannot release"
            if isinstance(error, OSError):
                message = f"{error.strerror or error}"
        self.release_refused.emit(message)
        QMessageBox.warning(self.window, title, message)

    def _ask_whose_budget(self, error: DatasetVersionError) -> bool:
        """A file that looks like a version of a registered dataset: ask whose budget it
        spends, and check again with the answer. False: the analyst cancelled."""
        assert self._spec is not None and self._out is not None
        rid, name = error.registered
        box = QMessageBox(QMessageBox.Icon.Warning, "Whose budget does this file spend?",
                          f"This file looks like a version of registered dataset #{rid} "
                          f"({name}). Releasing it on a budget of its own would let the same "
                          "people's data be released again.", parent=self.window)
        # The engine's sentence without its command-line advice (the buttons are the advice).
        box.setInformativeText(str(error).removeprefix("warning: ").split(" — ")[0])
        share = box.addButton(f"Share the budget of #{error.budget_of}",
                              QMessageBox.ButtonRole.AcceptRole)
        share.setToolTip("Releases of this file are charged to the registered dataset's "
                         "budget: the safe choice when it holds the same people.")
        separate = None
        if error.separable:
            separate = box.addButton("It holds other people", QMessageBox.ButtonRole.ActionRole)
            separate.setToolTip("Declare that this file is about other people: it gets a "
                                "budget of its own (recorded in the ledger).")
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(share)
        self.version_box = box
        box.exec()
        clicked = box.clickedButton()
        if clicked is share:
            self._spec = replace(self._spec, share_budget_with=error.budget_of)
        elif separate is not None and clicked is separate:
            self._spec = replace(self._spec, separate_budget=True)
        else:
            return False
        self._set_busy("check")
        self.window.statusBar().showMessage("Checking the budget…")
        self.runner.submit("check", check_job, self.project, self._spec, self._out)
        return True

    def _confirm(self, check: dict[str, Any]) -> None:
        assert self._spec is not None and self._out is not None and self.project is not None
        dialog = ReleaseDialog(self._spec, check, project=self.project.path.name,
                               out_dir=self._out, choices=self._choices(), parent=self.window)
        self.release_dialog = dialog
        if dialog.trust_label is not None and is_folder(self.session.dataset):
            # A folder's local release keeps no collector's records (the manifest says so
            # too): the randomized reports never leave their files.
            dialog.trust_label.setText(f"local model: {NO_RECORDS}")
        if dialog.exec() != QDialog.DialogCode.Accepted or self.project is None:
            return
        v = dialog.values()
        self._remember(v["formats"], v["report"], v["script"])
        spec = replace(self._spec, formats=v["formats"], report=v["report"],
                       script=v["script"])
        self._submit_release(spec, v["out_dir"])

    def start_plan_check(self, spec: Any, out: Path) -> bool:
        """A release plan's check (:mod:`dpstudio.ui.plan_view`): in the worker, answered
        by :attr:`plan_checked`; the plan view confirms, then :meth:`start_plan_release`."""
        self.refresh()  # another process may have used the project
        if self.project is None or self.busy or self.tamper:
            return False
        self._spec, self._out = spec, out
        self._set_busy("check")
        self.window.statusBar().showMessage("Checking the budget…")
        self.runner.submit("plan-check", check_job, self.project, spec, out)
        return True

    def start_plan_release(self, spec: Any, out: Path) -> bool:
        """Release a confirmed plan as any release: progress, Cancel, one-line refusals."""
        if self.project is None or self.busy:
            return False
        self._submit_release(spec, out)
        return True

    def _submit_release(self, spec: Any, out: Path) -> None:
        self.release_state = ReleaseState()
        self._set_busy("release")
        self.window.statusBar().showMessage("Releasing (noise from the OS CSPRNG)…")
        self.runner.submit("release", release_job, self.project, spec, out,
                           self.release_state)

    def cancel_release(self) -> bool:
        """The release's Cancel: stop summing its files. A release cancelled before its
        noise is drawn charges nothing (the project's guarantee) and says so; one whose
        noise was already drawn finishes and is shown as released."""
        if self.release_state is None or self.busy != "release":
            return False
        self.release_state.cancel()
        return True

    def _released(self, record: ReleaseRecord) -> None:
        budget = ""
        if self.project is not None:
            try:
                budget = (f"Budget of {self.project.dataset(record.dataset_id).name}: "
                          f"{self.project.budget(record.dataset_id).describe()}")
            except ProjectError:
                budget = ""
        self.window.statusBar().showMessage(
            f"Release #{record.id} written to {record.out_dir}", 10000)
        if self.done_dialog is not None:
            self.done_dialog.close()
            self.done_dialog = None
        self.done_dialog = ReleaseDoneDialog(record, budget, self.window)
        self.done_dialog.show()
        self.release_done.emit(record)
