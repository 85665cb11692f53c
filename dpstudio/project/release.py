"""The release transaction: prepare, charge, write, confirm; and the helpers it needs.

Transaction design (a release is in the ledger if and only if its files are written)
-----------------------------------------------------------------------------------
A release runs under the project's inter-process lock (``<project>.lock``, see
:class:`~dpstudio.project._fs.ProjectLock`) in three steps:

1. **Charge.** In one ``BEGIN IMMEDIATE`` transaction: re-check the budget, insert the
   release as ``pending``, draw the noise, render every output file *in memory*, record
   the files' names, sizes and SHA-256, commit. If anything fails before the commit, the
   transaction rolls back: nothing is charged and nothing has been written — the noise
   drawn existed only in this process's memory and was never observed.
2. **Write.** Each file goes to a temporary name (``.NAME.UID.tmp``), is fsynced and
   renamed into place; then the folder is fsynced. Nothing is written before step 1
   commits, so every file in the output folder belongs to a recorded release.
3. **Confirm.** Mark the release ``done`` (one autocommit statement).

Recovery (every open that can take the lock, and before every release): a ``pending``
release belongs to a process that died — the lock proves no live process is inside a
release. If all its files are present with their recorded hashes, step 2 completed and it
becomes ``done``. Otherwise its files and temporary files are deleted (folder fsynced)
and only then is it marked ``aborted`` with no files, in one transaction; if recovery is
itself interrupted, the release is still ``pending`` and the next recovery finishes the
job (deleting is idempotent). Renames are atomic, so a final name never holds a partial
file. The ledger and the folder therefore agree after recovery whatever the interleaving.
A pending release whose output folder is missing altogether (an unplugged drive) is left
pending, never guessed at.

An ``aborted`` release stays charged: its noise was drawn and some of its files may have
been written — and read, copied or synced — before the interruption. It is not a release
(it lists no files, shows no value), but its ε and δ count against the budget.

Where the pieces are
--------------------
This module holds the transaction (:class:`ReleaseTransaction`: check, release, the
charge's draw and rendering, the write and the confirmation). Below it, and shared by
every kind of release (one statistic, a trained model in
:mod:`~dpstudio.project.release_model`, a plan in :mod:`~dpstudio.project.release_plan`):
the checks before the draw (:mod:`~dpstudio.project.release_checks`), the output folder
and file stem (:mod:`~dpstudio.project.release_output`), a statistic's checked release
(:mod:`~dpstudio.project.release_prepare`) and the charge's ledger steps
(:mod:`~dpstudio.project.release_charge`).

The analyst's copy of the report
--------------------------------
A release that writes a report also gets the analyst's copy (figures measured on the raw
data at release time, in :func:`_charge`). It is not a release file: never in the output
folder, the manifest or the ledger's list of files. Once the release is done (and the lock
released), it is written to the project's private folder
(:mod:`~dpstudio.project.analyst_copy`); the record :meth:`ReleaseTransaction.release`
returns names it (``analyst_report``), and :meth:`ReleaseTransaction.analyst_report` finds
it later. Failing to write it never undoes the release.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from dpstudio.analysis import AnalysisResult, capability
from dpstudio.analysis import run as run_analysis
from dpstudio.data.atomic import fsync_dir, write_durably
from dpstudio.engine.accounting.budget import exact
from dpstudio.engine.rng import SecureSource
from dpstudio.project import _chain
from dpstudio.project._fs import pause, tmp_name
from dpstudio.project.analyst_copy import (
    ReleasedRecord,
    analyst_folder,
    analyst_report_name,
    write_analyst_copy,
)
from dpstudio.project.errors import ProjectError
from dpstudio.project.ledger_loss import release_loss
from dpstudio.project.records import ReleaseRecord
from dpstudio.project.release_charge import (
    RELEASE_WAIT,
    insert_pending,
    open_charge,
    record_drawn,
    record_output,
)
from dpstudio.project.release_files import (
    NO_RECORDS,
    execution_of,
    figures_from_partial,
    is_local_tallies,
)
from dpstudio.project.release_model import draw_train, prepare_train, train_file_names
from dpstudio.project.release_output import free_stem
from dpstudio.project.release_parties import noise_of, protocol_notes, public_of, rows_of
from dpstudio.project.release_plan import check_plan, release_plan
from dpstudio.project.release_prepare import Prepared, prepare_release, spec_dict
from dpstudio.project.spec import ReleaseSpec
from dpstudio.project.store import now

__all__ = ["ReleaseTransaction"]


def _is_plan(spec: Any) -> bool:
    """A release plan (:class:`~dpstudio.project.spec_plan.PlanSpec`), not one statistic."""
    return hasattr(spec, "plan") and not hasattr(spec, "query")


class ReleaseTransaction:
    """Releasing, mixed into :class:`~dpstudio.project.project.Project`: :meth:`check`
    and :meth:`release` (the three steps of the module docstring)."""

    def check(self, spec: ReleaseSpec, out_dir: str | os.PathLike[str],
              state: Any = None) -> dict[str, Any]:
        """Everything :meth:`release` checks first, without drawing noise or writing.

        Returns the resolved query, the charge, the budget left and the notes; raises
        like :meth:`release` would (BudgetExceededError, DatasetChangedError, …).
        ``state`` (progress and cancel) follows the sums of a folder or of Dask.
        """
        if _is_plan(spec):  # schema_version = 2: several statistics, one charge
            return check_plan(self, spec, out_dir)
        prep = self._prepare(spec, out_dir, create_out=False, state=state)
        remaining = prep.budget if prep.record is None else self.remaining(prep.record)
        return {"query": prep.query, "epsilon": prep.charge[0], "delta": prep.charge[1],
                "registers_dataset": prep.record is None, "dataset": prep.name,
                "notes": prep.notes + protocol_notes(prep.analysis,
                                                     rows_of(prep.values, prep.sums)),
                "budget": prep.budget, "remaining": remaining}

    def release(self, spec: ReleaseSpec, out_dir: str | os.PathLike[str],
                state: Any = None) -> ReleasedRecord:
        """Perform a release: charge the budget, write the files, record them; then write
        the analyst's copy of its report (if it has one) to the project's private folder.

        Raises BudgetExceededError (nothing charged, nothing written), DatasetChangedError,
        SpecError/ProjectError/DataError/EngineError for bad input (likewise), or
        ProjectError when writing fails after charging (files removed, budget charged).
        ``state`` (progress and cancel, :mod:`dpstudio.jobs`) follows the sums of a folder
        or of Dask; a cancel before the charge raises
        :class:`~dpstudio.jobs.Cancelled` with nothing drawn, charged or written.
        """
        from dpstudio.jobs import check as check_state

        if _is_plan(spec):  # schema_version = 2: several statistics, one charge
            return release_plan(self, spec, out_dir, state)
        with self._lock.held(RELEASE_WAIT):
            self._recover_locked()
            pause("start")
            prep = self._prepare(spec, out_dir, create_out=True, state=state)
            try:
                check_state(state)  # the last moment a cancel costs nothing
                release_id, uid, files, bundle = self._charge(prep)
            except BaseException:
                prep.cleanup_dirs()
                raise
            record = self._write(release_id, uid, files, prep.out)
        return write_analyst_copy(self.path, record, bundle)

    @property
    def analyst_folder(self) -> Path:
        """The project's private folder for the analyst's copies of its reports.

        Returns
        -------
        pathlib.Path
            ``<project stem>.analyst`` beside the project file (it may not exist yet).
        """
        return analyst_folder(self.path)

    def analyst_report(self, release_id: int) -> Path | None:
        """Where release ``release_id``'s analyst's copy of its report is, if it exists.

        Parameters
        ----------
        release_id : int

        Returns
        -------
        pathlib.Path or None
            The HTML file in :attr:`analyst_folder`; None when there is none (no report,
            a model release, a release made before analyst's copies existed, or removed).
        """
        path = self.analyst_folder / analyst_report_name(release_id)
        return path if path.is_file() else None

    def _prepare(self, spec: ReleaseSpec, out_dir: str | os.PathLike[str], create_out: bool,
                 state: Any = None) -> Prepared:
        if spec.training is not None:  # a trained model (query = "train"): its own checks
            return prepare_train(self, spec, out_dir, create_out, state)
        return prepare_release(self, spec, out_dir, create_out, state)

    def _stem(self, release_id: int, prep: Prepared, uid: str) -> str:
        from dpstudio.export.bundle import file_names

        def names(stem: str) -> list[str]:
            if prep.spec.training is not None:  # coefficients or weights, a model card
                return train_file_names(stem, prep.spec)
            records = ("records" in capability(prep.trust_model).options
                       and not (prep.sums is not None and is_local_tallies(prep.sums.total)))
            return file_names(stem, prep.spec.formats, prep.spec.report, prep.spec.script,
                              records=records, script_format=prep.spec.script_format)

        return free_stem(prep.out, uid, release_id,
                         prep.spec.name or f"{prep.query.query}-{prep.query.column}", names)

    def _charge(self, prep: Prepared) -> tuple[int, str, list, Any]:
        """Step 1: check, draw, render, record as pending — one transaction (its ledger
        steps, shared with a plan's, in :mod:`~dpstudio.project.release_charge`).

        Returns the release's id, uid and rendered files, and the bundle they were
        rendered from, with the analyst's figures measured on the values the release read
        (for the analyst's copy, written after the release is done).
        """
        from dpstudio.export.bundle import BundleInput, render_bundle
        from dpstudio.export.manifest_contributions import contributions_section
        from dpstudio.export.report_analyst import measure_clamping

        uid = uuid.uuid4().hex
        created_at = now()
        identifier = None if prep.analysis is None else prep.analysis.identifier
        with self._transaction() as conn:
            dataset_id, charges, losses = open_charge(self, conn, prep, identifier,
                                                      prep.planned)
            q = prep.query
            release_id = insert_pending(conn, prep, uid, dataset_id, created_at,
                                        (q.query, q.column, q.mechanism, prep.trust_model),
                                        spec_dict(prep))
            public, records, result = _draw(prep)  # the noise
            # What is charged, written and shown is the (ε, δ) of the engine object that drew
            # the noise, never the spec's; what was drawn, as the ledger keeps it (never
            # claiming less than the charge).
            charge = (exact(float(result.epsilon)), exact(float(result.delta)))
            record_drawn(conn, prep, release_id, (charges, losses), charge,
                         release_loss(result), prep.planned)
            history = self._history(conn, dataset_id, release_id)
            public["notes"] = prep.notes + list(public.get("notes", []))
            stem = self._stem(release_id, prep, uid)
            # The report and the script read ε and δ off the spec they are given: give them
            # the engine object's, like the manifest and the ledger.
            shown = prep.query
            if (float(shown.epsilon), float(shown.delta)) != (float(result.epsilon),
                                                               float(result.delta)):
                shown = replace(shown, epsilon=float(result.epsilon),
                                delta=float(result.delta))
            # The analyst's figures, from the very values the noise was drawn for: only for
            # a report (its analyst's copy) and never for a model (its utility is its own).
            # Summed where the data is: the figures come from the integer counts (no value
            # of a record ever reached this process).
            analyst = None if not prep.spec.report or prep.model is not None else (
                measure_clamping(shown, prep.values, prep.trust_model) if prep.sums is None
                else figures_from_partial(shown, prep.sums.total))
            bundle = BundleInput(
                release_id=release_id, uid=uid, created_at=created_at, stem=stem,
                dataset_name=prep.name, dataset_path=str(prep.path),
                fingerprint=prep.fingerprint, schema=prep.schema, spec=shown,
                public=public, epsilon=charge[0], delta=charge[1],
                accountant=prep.accountant, budget_epsilon=prep.budget[0],
                budget_delta=prep.budget[1], formats=prep.spec.formats,
                report=prep.spec.report, script=prep.spec.script,
                script_format=prep.spec.script_format, reader=prep.reader,
                history=history, trust_model=prep.trust_model, records=records,
                records_note=NO_RECORDS if prep.sums is not None and is_local_tallies(
                    prep.sums.total) else None,
                header=prep.spec.header, analyst=analyst,
                execution=execution_of(prep.sums),
                dataset_files=None if not prep.multi else [
                    f.to_dict() for f in prep.sums.files],
                contributions=None if prep.analysis is None else contributions_section(
                    prep.analysis.identifier, prep.analysis.max_rows))
            files = render_bundle(bundle)
            record_output(conn, release_id, files, noise_of(result, public), public)
            pause("before-charge-commit")
        pause("charged")
        return release_id, uid, files, bundle

    def _history(self, conn: sqlite3.Connection, dataset_id: int, this_id: int
                 ) -> list[dict[str, Any]]:
        _, members = self._group(conn, dataset_id)
        marks = ", ".join("?" * len(members))
        rows = conn.execute("SELECT id, created_at, query, column_name, mechanism, epsilon, "
                            f"delta, status FROM releases WHERE dataset_id IN ({marks}) ORDER "
                            "BY id", tuple(sorted(members))).fetchall()
        return [{"id": r[0], "time": r[1], "query": r[2], "column": r[3], "mechanism": r[4],
                 "epsilon": float(_chain.amount(r[5]) or 0), "delta": float(
                     _chain.amount(r[6]) or 0),
                 "status": "this release" if r[0] == this_id else r[7]} for r in rows]

    def _write(self, release_id: int, uid: str, files: list, out: Path) -> ReleaseRecord:
        """Steps 2 and 3: write each file durably under a temporary name, rename, confirm."""
        current = ""
        # write_atomic's two steps, spelled out: recovery must find each temporary under the
        # release's own name, the crash tests pause between the steps, and one folder fsync
        # covers every file.
        try:
            for f in files:
                current = f.name
                tmp = out / tmp_name(f.name, uid)
                write_durably(tmp, f.data)
                pause("tmp-written")
                os.replace(tmp, out / f.name)
                pause("renamed")
            fsync_dir(out)
            pause("folder-synced")
        except BaseException as exc:
            note = (f"aborted: could not write {current}"
                    + (f" ({exc.strerror or exc})" if isinstance(exc, OSError) else
                       f" ({type(exc).__name__})"))
            self._abort(release_id, uid, out, [f.name for f in files], note)
            if isinstance(exc, OSError):
                raise ProjectError(f"release #{release_id} aborted: could not write {current} "
                                   f"in {out} ({exc.strerror or exc}); its files were removed "
                                   "and its budget stays charged") from None
            raise
        try:
            with self._db() as conn:
                conn.execute("UPDATE releases SET status = 'done', finished_at = ? WHERE id = ? "
                             "AND status = 'pending'", (now(), release_id))
        except ProjectError as exc:
            raise ProjectError(f"release #{release_id} was written to {out} but the ledger "
                               f"could not confirm it ({exc}); reopening the project confirms "
                               "it") from None
        pause("done")
        return self.release_record(release_id)


def _draw(prep: Prepared) -> tuple[dict[str, Any], dict[str, Any] | None, AnalysisResult]:
    """Draw the release's noise, fresh from the OS CSPRNG: the one call into the engine,
    through the analysis layer's dispatch.

    Returns the public fields (value, intervals, noise scale…), the records the untrusted
    collector received (a local release; None otherwise), and the result, whose ε and δ
    (the engine object's) are charged.
    """
    if prep.spec.training is not None:  # a trained model: one training from the OS CSPRNG
        return draw_train(prep)
    if prep.sums is not None and is_local_tallies(prep.sums.total):
        # Randomized where the data is (each task from its own OS CSPRNG): the estimator,
        # once, here, on the tallies; nothing is left to draw, and no report to export.
        result = prep.sums.finish(prep.sums.total, prep.sums.plan, SecureSource())
        if result.simulated:  # pragma: no cover - SecureSource is never simulated
            raise ProjectError("a release needs the OS CSPRNG")
        return public_of(result), None, result
    if prep.sums is not None:  # the exact integers summed where the data is; noise once, here
        from dpstudio.execution.run import result_from_sums

        result = result_from_sums(prep.analysis, prep.sums.total, SecureSource())
        return public_of(result, rows=int(prep.sums.total.size)), None, result
    values = prep.model if prep.model is not None else prep.values
    user_level = {} if prep.ids is None else {"ids": prep.ids}  # each row's person
    result = run_analysis(prep.analysis, values, SecureSource(), **user_level)
    if result.simulated:  # pragma: no cover - SecureSource is never simulated
        raise ProjectError("a release needs the OS CSPRNG")
    records = result.records() if result.records is not None else None
    # n is exported where the engine makes it public (imputed values under replace-one).
    rows = None if prep.model is not None else int(np.asarray(prep.values).size)
    return public_of(result, rows=rows), records, result
