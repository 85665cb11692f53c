"""Release specs in the main window: the session's analysis as a spec, saved, opened and
applied back to the session.

:class:`SpecActions` is one part of :class:`~dpstudio.ui.project_controller.
ProjectController` (which mixes it in): it reads the controller's window, session,
settings, project and the session dataset's record. What a spec carries for a trust model
(its relation, a randomizer's own ε, a missing-value treatment) is the analysis layer's
capability table, not a rule of its own here.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog, QMessageBox

from dpstudio.analysis.capabilities import capability, releasable, release_query
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.errors import ParameterError
from dpstudio.project import DatasetRecord, Project, ReleaseSpec, SpecError, load_spec, save_spec

__all__ = ["SPEC_FILTER", "SpecActions"]

SPEC_FILTER = "Release specs (*.toml);;All files (*)"


class SpecActions:
    """Save, open and apply release specs; part of the project controller.

    The controller provides the attributes annotated here and :meth:`_start_folder` and
    :meth:`update_release_state`.
    """

    window: Any
    session: Any
    settings: Any
    project: Project | None
    _record: DatasetRecord | None
    _pending_spec: ReleaseSpec | None

    def _start_folder(self) -> Path:  # the controller's
        raise NotImplementedError

    def update_release_state(self) -> None:  # the controller's
        raise NotImplementedError

    # -- the output choices the last release used ------------------------------------------

    def _choices(self) -> dict[str, Any]:
        choices = self.settings.last_choices.get("release")
        return dict(choices) if isinstance(choices, dict) else {}

    def _remember(self, formats: tuple[str, ...], report: bool, script: bool) -> None:
        self.settings.last_choices["release"] = {"formats": list(formats), "report": report,
                                                 "script": script}
        self.settings.save()

    # -- the session as a spec ----------------------------------------------------------------

    def current_spec(self) -> ReleaseSpec | None:
        """The session's analysis as a release spec.

        Returns
        -------
        ReleaseSpec or None
            None when nothing can be computed or the capability table does not release it.
        """
        s = self.session
        settings = s.settings()
        if settings is None or s.dataset is None:
            return None
        analysis = AnalysisSpec(s.trust_model, settings.spec())
        if not releasable(analysis):
            return None
        # The relation and ε the release states (a local randomizer's own ε is what will
        # be charged, whatever the slider says).
        query = release_query(analysis)
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
            formats=formats or ("csv", "json"), report=bool(choices.get("report", True)),
            script=bool(choices.get("script", False)), budget_epsilon=budget[0],
            budget_delta=budget[1], accountant=accountant,
            header=bool(s.dataset.frame.attrs.get("header", True)),
            # Where the sums run: the Execution setting (Tools ▸ Execution…), as the
            # command line's --engine and --scheduler.
            engine=self.settings.engine, scheduler=self.settings.scheduler or None)

    def save_spec(self, path: str | os.PathLike[str] | None = None) -> Path | None:
        """Write the current analysis as a TOML release spec.

        Parameters
        ----------
        path : path-like, optional
            Where; the analyst is asked when None.

        Returns
        -------
        Path or None
            The file written; None when nothing was (refused, cancelled or failed, and
            said so).
        """
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

    # -- a spec into the session ----------------------------------------------------------------

    def open_spec(self, path: str | os.PathLike[str] | None = None) -> bool:
        """Load a release spec into the session (its dataset is opened if another).

        Parameters
        ----------
        path : path-like, optional
            The spec; the analyst is asked when None.

        Returns
        -------
        bool
            Whether it was applied, or its dataset is opening (it is applied then).
        """
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
            # Only what the spec's trust model lets the analyst choose (the capability
            # table): the relation where it offers several, the missing-value treatment.
            row = capability(spec.trust_model)
            if row.chooses_relation:
                s.set_relation(q.relation)
            if "missing" in row.options:
                s.set_missing(q.missing, q.impute)  # drop / impute with the declared value
            s.set_confidence(q.confidence)
            # Exactly the spec's ε and δ, beyond the slider's range too (never the nearest
            # end of it): the spec's checks are the engine's, so they are valid.
            try:
                if q.delta > 0:
                    s.use_delta(q.delta)
                s.use_epsilon(q.epsilon)
            except ParameterError as exc:
                problems.append(str(exc))
        from dpstudio.ui.folder_open import is_folder

        # A folder's files are fingerprinted by the release that reads them.
        if (spec.fingerprint and s.dataset is not None and not is_folder(s.dataset)
                and s.dataset.sha256 != spec.fingerprint):
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
