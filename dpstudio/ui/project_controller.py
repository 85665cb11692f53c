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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox

from dpstudio.analysis.resolve import LOCAL_QUERIES, randomizer_privacy
from dpstudio.data.errors import DataError
from dpstudio.engine.errors import EngineError
from dpstudio.engine.local.entries import HISTOGRAM_RANDOMIZERS, MEAN_RANDOMIZERS
from dpstudio.engine.registry import REGISTRY
from dpstudio.export.errors import ExportError
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
    SpecError,
    load_spec,
    save_spec,
)
from dpstudio.ui.ledger_view import LedgerData
from dpstudio.ui.project_dialogs import (
    PROJECT_FILTER,
    NewProjectDialog,
    ReleaseDialog,
    ReleaseDoneDialog,
)
from dpstudio.ui.result_panel import RELEASE_TOOLTIP
from dpstudio.ui.session import ProjectBudget
from dpstudio.ui.texts import TRUST_MODELS
from dpstudio.ui.worker import JobRunner

__all__ = ["SPEC_FILTER", "ProjectController"]

#: Local randomizers a release may use (with a histogram or a mean).
LOCAL_MECHANISMS = HISTOGRAM_RANDOMIZERS + MEAN_RANDOMIZERS
SPEC_FILTER = "Release specs (*.toml);;All files (*)"
#: Errors a check or release reports to the user (one line each); anything else is a bug.
_EXPECTED = (ProjectError, DataError, EngineError, ExportError, OSError)
RELEASE_READY = ("Release this statistic for real: noise from the OS CSPRNG, charged to "
                 "the project's budget and recorded in its ledger (you confirm first).")


@dataclass
class _Outcome:
    """What a worker job returns: its value, or the expected error it raised."""

    value: Any = None
    error: Exception | None = None


def _check_job(project: Project, spec: ReleaseSpec, out: Path, state: Any = None) -> _Outcome:
    try:
        return _Outcome(project.check(spec, out))
    except _EXPECTED as exc:
        return _Outcome(error=exc)


def _release_job(project: Project, spec: ReleaseSpec, out: Path, state: Any = None
                 ) -> _Outcome:
    try:
        return _Outcome(project.release(spec, out))
    except _EXPECTED as exc:
        return _Outcome(error=exc)


def _tamper_text(message: str) -> str:
    """The engine's tamper sentence for the application: what changed, without its
    command-line advice (``dpstudio ledger … --acknowledge``), and the app's way on."""
    return (message.split(" — ")[0] + ". New releases are refused until you acknowledge "
            "the changes: the Ledger tab lists them, and its “Acknowledge the changes…” "
            "button keeps the pessimistic charges.")


def _hash_job(dataset: Any, state: Any = None) -> _Outcome:
    """The dataset's byte hash and content hash (worker thread): the keys a project finds
    a moved or re-encoded dataset by."""
    from dpstudio.data.fingerprint import content_fingerprint

    try:
        return _Outcome((dataset.sha256, content_fingerprint(dataset.frame).digest))
    except (ProjectError, OSError, DataError) as exc:
        return _Outcome(error=exc)


def _short(x: float) -> str:
    return "0" if x == 0 else f"{x:.4g}"


class ProjectController(QObject):
    """The open project of one :class:`~dpstudio.ui.main_window.MainWindow`.

    ``busy`` is ``"check"`` or ``"release"`` while a job runs, else ``None``.
    ``done_dialog`` is the last release's result dialog (tests).
    """

    project_changed = Signal(object)     # Project | None
    release_done = Signal(object)        # ReleaseRecord
    release_refused = Signal(str)        # the one-line reason
    busy_changed = Signal(bool)

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
        return self.create_project(**dialog.values())

    def create_project(self, path: str | os.PathLike[str], epsilon: float, delta: float,
                       relation: str = "add-remove") -> bool:
        try:
            project = Project.create(path, epsilon=epsilon, delta=delta, relation=relation)
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
                            _tamper_text(tamper_message(self.project.path, self.tamper)))

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
            return  # the hot path of a slider drag; nothing here depends on ε
        if aspect == "dataset":
            self._ledger_key = None
            self.refresh()
            return
        self.update_release_state()

    def _apply_pending_spec(self, _dataset: Any = None) -> None:
        if self._pending_spec is not None:
            spec, self._pending_spec = self._pending_spec, None
            if self._same_dataset(spec):
                self._apply_spec(spec)

    def _same_dataset(self, spec: ReleaseSpec) -> bool:
        """Whether the session holds the spec's dataset, read the way the spec reads it
        (a headerless file read with a header has lost its first row to the names)."""
        d = self.session.dataset
        return (d is not None and Path(spec.dataset).resolve() == d.path.resolve()
                and bool(d.frame.attrs.get("header", True)) == bool(spec.header))

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
                self.runner.submit("identify", _hash_job, d)
            return None
        for key in cached[1]:
            with contextlib.suppress(ProjectError):  # not registered under this hash
                return self.project.dataset(key)
        return None

    def _identified(self, outcome: _Outcome) -> None:
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
            return ProjectBudget(p.path.name, d.name, float(b.total_epsilon),
                                 float(b.total_delta), float(b.spent_epsilon),
                                 float(b.spent_delta), len(p.ledger(self._record)), True,
                                 b.accountant)
        defaults = p.defaults()
        if defaults["epsilon"] is None:
            return None  # the session's budget registers it (see current_spec)
        return ProjectBudget(p.path.name, d.name, float(defaults["epsilon"]),
                             float(defaults["delta"]), accountant=defaults["accountant"])

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
        s = self.session
        if self.project is None:
            return RELEASE_TOOLTIP
        if self.busy == "release":
            return "A release is under way…"
        if self.busy == "check":
            return "Checking the budget…"
        if self.tamper:
            return (f"The ledger of {self.project.path.name} was changed outside DP Studio "
                    f"({self.tamper[0]}{'; …' if len(self.tamper) > 1 else ''}): new releases "
                    "are refused until you acknowledge it in the Ledger tab.")
        problem = s.problem()
        if problem:
            return f"Nothing to release: {problem}."
        relation = (self._record.relation if self._record is not None
                    else self.project.defaults()["relation"])
        if s.trust_model == "local":
            if s.query not in LOCAL_QUERIES or s.mechanism not in LOCAL_MECHANISMS:
                return ("Local-model releases are histograms or means with a local "
                        "randomizer; choose one to release.")
            if relation != "replace":
                return (f"{s.dataset.name if s.dataset else 'This dataset'} is budgeted under "
                        f"the {relation} relation in {self.project.path.name}: ε-local DP "
                        "bounds changing one person's value, so local releases need a dataset "
                        "budgeted under the replace relation.")
            return None
        if s.trust_model != "central":
            label = TRUST_MODELS[s.trust_model]["label"]
            return (f"{label}-model releases are not in the project format yet: shuffle and "
                    "distributed releases cannot be recorded in a ledger. Choose the central "
                    "or local model to release.")
        if s.relation != relation:
            return (f"{s.dataset.name if s.dataset else 'This dataset'} is budgeted under the "
                    f"{relation} relation in {self.project.path.name}: choose that "
                    "neighbouring relation (Analysis panel) to release.")
        return None

    def update_release_state(self) -> None:
        problem = self.release_problem()
        self.window.result_panel.set_release_state(problem is None, problem or RELEASE_READY)

    def _set_busy(self, busy: str | None) -> None:
        self.busy = busy
        self.update_release_state()
        self.busy_changed.emit(busy is not None)

    # -- specs -----------------------------------------------------------------------------------

    def _choices(self) -> dict[str, Any]:
        choices = self.settings.last_choices.get("release")
        return dict(choices) if isinstance(choices, dict) else {}

    def _remember(self, formats: tuple[str, ...], report: bool, script: bool) -> None:
        self.settings.last_choices["release"] = {"formats": list(formats), "report": report,
                                                 "script": script}
        self.settings.save()

    def current_spec(self) -> ReleaseSpec | None:
        """The session's analysis as a release spec (None when nothing can be released)."""
        s = self.session
        settings = s.settings()
        if settings is None or s.dataset is None or s.trust_model not in ("central", "local"):
            return None
        query = settings.spec()
        if s.trust_model == "local":
            if s.query not in LOCAL_QUERIES or s.mechanism not in LOCAL_MECHANISMS:
                return None
            # ε-local DP bounds changing one person's value: the replace relation.
            query = replace(query, relation="replace")
            # The spec carries the randomizer's own ε (randomized response with a chosen p
            # is ln(p/(1−p))-DP whatever the slider says): that is what will be charged.
            with contextlib.suppress(EngineError, TypeError, ValueError):
                info = REGISTRY.get(query.mechanism)
                eps, _ = randomizer_privacy(info, info.resolve(query.mechanism_params()), query)
                query = replace(query, epsilon=eps)
        choices = self._choices()
        formats = tuple(f for f in choices.get("formats", ()) if isinstance(f, str))
        # A [budget] registers the dataset on its first release: the session's totals
        # when no project default will (no project open, or one without defaults).
        budget: tuple[float | None, float | None] = (s.total_epsilon, s.total_delta)
        accountant = "basic"
        if self.project is not None:
            defaults = self.project.defaults()
            accountant = (self._record.accountant if self._record is not None
                          else defaults["accountant"])
            if self._record is not None or defaults["epsilon"] is not None:
                budget = (None, None)
        return ReleaseSpec(
            dataset=str(s.dataset.path.resolve()), query=query, trust_model=s.trust_model,
            formats=formats or ("csv", "json"), report=bool(choices.get("report", False)),
            script=bool(choices.get("script", False)), budget_epsilon=budget[0],
            budget_delta=budget[1], accountant=accountant,
            header=bool(s.dataset.frame.attrs.get("header", True)))

    def default_out_dir(self) -> Path:
        assert self.project is not None
        return self.project.path.parent / f"{self.project.path.stem}-releases"

    def save_spec(self, path: str | os.PathLike[str] | None = None) -> Path | None:
        """Write the current analysis as a TOML release spec (ask where if ``path`` is None)."""
        spec = self.current_spec()
        if spec is None:
            problem = self.session.problem()
            QMessageBox.information(
                self.window, "Save release spec",
                f"Nothing to save: {problem}." if problem else
                "Only central- and local-model analyses (local: histograms and means) can "
                "be saved as release specs.")
            return None
        if path is None:
            d = self.session.dataset
            start = d.path.parent / f"{spec.query.query}-{spec.query.column}.toml"
            path, _ = QFileDialog.getSaveFileName(self.window, "Save release spec",
                                                  str(start), SPEC_FILTER)
            if not path:
                return None
            if not path.lower().endswith(".toml"):
                path += ".toml"
        target = Path(path)
        data = Path(spec.dataset)
        folder = target.resolve().parent
        if data.is_relative_to(folder):  # portable with its data
            spec = replace(spec, dataset=data.relative_to(folder).as_posix())
        if self.project is not None and self._record is not None:
            spec = replace(spec, fingerprint=self._record.fingerprint)
        try:
            written = save_spec(spec, target)
        except SpecError as exc:
            QMessageBox.critical(self.window, "Could not save the release spec", str(exc))
            return None
        self.window.statusBar().showMessage(f"Release spec saved to {written}", 5000)
        return written

    def open_spec(self, path: str | os.PathLike[str] | None = None) -> bool:
        """Load a release spec into the session (its dataset is opened if another)."""
        if path is None:
            start = self._start_folder()
            path, _ = QFileDialog.getOpenFileName(self.window, "Open release spec",
                                                  str(start), SPEC_FILTER)
            if not path:
                return False
        try:
            spec = load_spec(path)
        except SpecError as exc:
            QMessageBox.critical(self.window, "Could not open the release spec", str(exc))
            return False
        self._remember(spec.formats, spec.report, spec.script)
        if self._same_dataset(spec):
            self._apply_spec(spec)
            return True
        if not Path(spec.dataset).is_file():
            QMessageBox.critical(self.window, "Could not open the release spec",
                                 f"{Path(path).name}: its dataset {spec.dataset} does not exist")
            return False
        self._pending_spec = spec
        if not self.window.open_path(spec.dataset, header=spec.header):
            self._pending_spec = None
            return False
        return True

    def _apply_spec(self, spec: ReleaseSpec) -> list[str]:
        """Set the session to the spec's choices; the ones it cannot take are reported."""
        from dpstudio.ui.schema_parsing import format_bound, format_categories

        s, q = self.session, spec.query
        problems: list[str] = []
        s.set_trust_model(spec.trust_model)
        if s.trust_model != spec.trust_model:
            problems.append(f"the {spec.trust_model} model is not offered for this dataset")
        columns = [c.name for c in s.analysable_columns()]
        if q.column not in columns:
            problems.append(f"no column '{q.column}' to analyse in {s.dataset.name}")
        else:
            s.set_column(q.column)
            panel = self.window.schema_panel
            declared = s.schema[q.column] if s.schema is not None else None
            if q.bounds is not None and declared is not None and declared.bounds != q.bounds:
                if not panel.edit(q.column, "bounds", (format_bound(q.bounds[0]),
                                                       format_bound(q.bounds[1]))):
                    problems.append(f"bounds {q.bounds[0]:g} – {q.bounds[1]:g}: "
                                    f"{panel.message_text()}")
            if (q.categories is not None and declared is not None
                    and tuple(declared.categories) != tuple(q.categories)):
                if not panel.edit(q.column, "categories", format_categories(q.categories)):
                    problems.append(f"categories: {panel.message_text()}")
            s.set_query(q.query)
            if s.query != q.query:
                problems.append(f"no {q.query} of '{q.column}'")
            if q.bins is not None:
                s.set_query_param("bins", int(q.bins))
            if q.quantile is not None and q.query == "quantile":
                s.set_query_param("quantile", float(q.quantile))
            s.set_mechanism(q.mechanism)
            if s.mechanism != q.mechanism:
                problems.append(f"mechanism {q.mechanism} is not offered for this query")
            else:
                names = {p.name for p in s.info.params} if s.info is not None else set()
                for key, value in q.params.items():
                    if key in names:
                        s.set_param(key, value)
                    else:
                        problems.append(f"parameter {key} is not one of {q.mechanism}'s")
            if spec.trust_model == "central":
                s.set_relation(q.relation)
                s.set_missing(q.missing, q.impute)  # drop / impute with the declared value
            s.set_confidence(q.confidence)
            s.set_budget(q.epsilon, q.delta if q.delta > 0 else None)
            if abs(s.epsilon - q.epsilon) > 1e-12 * max(q.epsilon, 1.0):
                problems.append(f"ε = {q.epsilon:g} is outside the slider's range "
                                f"(ε = {s.epsilon:g} set)")
        if spec.fingerprint and s.dataset is not None and s.dataset.sha256 != spec.fingerprint:
            problems.append(f"{s.dataset.name} is not the file the spec names (its SHA-256 "
                            "differs): dpstudio release would refuse this spec")
        name = Path(spec.source or "spec").name
        if problems:
            QMessageBox.warning(self.window, "Release spec applied in part",
                                f"{name}: " + "; ".join(problems) + ".")
        else:
            self.window.statusBar().showMessage(f"Release spec {name} loaded", 5000)
        self.update_release_state()
        return problems

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
        self.runner.submit("check", _check_job, self.project, spec, self._out)
        return True

    def _job_failed(self, key: str, message: str) -> None:  # a bug in a job: say so
        if key == "identify":
            self._identified(_Outcome(error=RuntimeError(message)))
            return
        self._set_busy(None)
        self.refresh()
        self.window.statusBar().clearMessage()
        QMessageBox.critical(self.window, "Release failed", message)

    def _job_finished(self, key: str, outcome: _Outcome) -> None:
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
        elif key == "release":
            self.refresh()
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
            message = _tamper_text(message)
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
        self.runner.submit("check", _check_job, self.project, self._spec, self._out)
        return True

    def _confirm(self, check: dict[str, Any]) -> None:
        assert self._spec is not None and self._out is not None and self.project is not None
        dialog = ReleaseDialog(self._spec, check, project=self.project.path.name,
                               out_dir=self._out, choices=self._choices(), parent=self.window)
        self.release_dialog = dialog
        if dialog.exec() != QDialog.DialogCode.Accepted or self.project is None:
            return
        v = dialog.values()
        self._remember(v["formats"], v["report"], v["script"])
        spec = replace(self._spec, formats=v["formats"], report=v["report"],
                       script=v["script"])
        self._set_busy("release")
        self.window.statusBar().showMessage("Releasing (noise from the OS CSPRNG)…")
        self.runner.submit("release", _release_job, self.project, spec, v["out_dir"])

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
        self.done_dialog = ReleaseDoneDialog(record, budget, self.window)
        self.done_dialog.show()
        self.release_done.emit(record)
