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

import contextlib
import json
import os
import re
import sqlite3
import tempfile
import uuid
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from dpstudio.analysis import AnalysisResult, AnalysisSpec, capability, release_refusal, resolve
from dpstudio.analysis import run as run_analysis
from dpstudio.analysis.contribution import with_identifier
from dpstudio.analysis.partitioned import partition_kind
from dpstudio.analysis.resolve import reader_for
from dpstudio.data.atomic import fsync_dir, write_durably
from dpstudio.data.columns import require_column
from dpstudio.data.dataset import open_dataset
from dpstudio.data.fingerprint import ContentFingerprint, content_fingerprint, sha256_file
from dpstudio.data.folders import files_fingerprint, open_files
from dpstudio.data.schema import Schema, load_schema
from dpstudio.engine.accounting.budget import exact
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SecureSource
from dpstudio.project import _chain
from dpstudio.project._fs import pause, tmp_name
from dpstudio.project.accountant import BASIC, get_accountant
from dpstudio.project.analyst_copy import (
    ReleasedRecord,
    analyst_folder,
    analyst_report_name,
    write_analyst_copy,
)
from dpstudio.project.errors import (
    BudgetExceededError,
    DatasetChangedError,
    LedgerTamperedError,
    ProjectError,
)
from dpstudio.project.identity import declared_dict
from dpstudio.project.ledger_loss import charge_loss, loss_json, planned_loss, release_loss
from dpstudio.project.privacy_unit import check_unit
from dpstudio.project.records import DatasetRecord, ReleaseRecord, dec_text
from dpstudio.project.recovery import tamper_message
from dpstudio.project.release_files import (
    NO_RECORDS,
    content_of_files,
    execution_of,
    figures_from_partial,
    is_local_tallies,
    one_file,
    release_engine,
    sum_where_data_is,
)
from dpstudio.project.release_parties import (
    noise_of,
    protocol_charge,
    protocol_notes,
    public_of,
    resolve_release,
    rows_of,
)
from dpstudio.project.spec import ReleaseSpec
from dpstudio.project.store import absolute, now
from dpstudio.project.values import ModelInput, read_model_columns, read_values

__all__ = ["RELEASE_WAIT", "ReleaseTransaction"]

# How long a release waits for the project lock while other releases go first. Releases
# queue on it one at a time; a hundred started at once on a busy machine can wait well
# beyond a minute, and each must end with a definitive answer (released, or budget
# exceeded), never "busy". The bound only ends a wait behind a holder that is alive but
# stuck (a dead holder's lock is dropped by the kernel at once).
RELEASE_WAIT = 900.0


def _is_plan(spec: Any) -> bool:
    """A release plan (:class:`~dpstudio.project.spec_plan.PlanSpec`), not one statistic."""
    return hasattr(spec, "plan") and not hasattr(spec, "query")


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s[:48].strip("-.") or "release"


@dataclass
class _Prepared:
    """A release checked and ready to charge: nothing drawn, nothing charged yet."""

    spec: ReleaseSpec
    query: QuerySpec
    notes: list[str]
    path: Path
    fingerprint: str
    name: str
    schema: dict[str, Any]
    record: DatasetRecord | None
    budget: tuple[Decimal, Decimal]
    relation: str
    accountant: str
    charge: tuple[Decimal, Decimal]
    values: Any
    reader: str
    out: Path
    created_dirs: list[Path]
    trust_model: str = "central"
    #: A model release (``logistic_regression``): its prepared columns and feature bounds.
    model: ModelInput | None = None
    #: The rows as parsed; and, for a new version of a registered dataset, whose budget.
    content: ContentFingerprint | None = None
    budget_of: int | None = None
    #: The resolved analysis the noise is drawn for (:func:`dpstudio.analysis.run`).
    analysis: AnalysisSpec | None = None
    #: Sums computed where the data is (a folder, or Dask): the exact integers the noise
    #: is added to, the manifest's ``execution`` and each file's entry (None: in-process).
    sums: Any = None
    #: A folder or glob: its files (the manifest lists them; ``files-sha256-v1``).
    multi: bool = False
    #: A tight accountant's gate before the draw: the description the release will draw
    #: (from the spec alone, :func:`planned_loss`); None: its charge's pure/approx one.
    planned: Any = None
    #: A user-level release: each row's identifier (its person's rows bounded first).
    ids: Any = None

    def cleanup_dirs(self) -> None:
        """Remove output folders this release created, if they are still empty."""
        for d in reversed(self.created_dirs):
            with contextlib.suppress(OSError):
                d.rmdir()


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
            from dpstudio.project.release_plan import check_plan

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
            from dpstudio.project.release_plan import release_plan

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
                 state: Any = None) -> _Prepared:
        if spec.training is not None:  # a trained model (query = "train"): its own checks
            from dpstudio.project.release_model import prepare_train

            return prepare_train(self, spec, out_dir, create_out, state)
        trust_model = spec.trust_model
        analysis = AnalysisSpec(trust_model, spec.query, features=spec.features)
        refused = release_refusal(analysis)  # the capability table decides, in one sentence
        if refused is not None:
            raise ProjectError(refused)
        if spec.accountant is not None:  # None: the dataset's (or the project's default)
            get_accountant(spec.accountant)
        self._require_intact()  # an edited ledger: no release until it is acknowledged
        path = Path(absolute(spec.dataset))
        engine, multi = release_engine(spec, path)
        if multi:
            return self._prepare_files(spec, analysis, path, engine, out_dir, create_out,
                                       state)
        if not path.is_file():
            raise ProjectError(f"dataset {spec.dataset}: no such file")
        fingerprint, data = _read_file(path, spec.header, spec.fingerprint)
        # A dataset is its rows as parsed: the same rows re-encoded or reordered spend the
        # same budget (the byte hash still names the exact file, in the manifest).
        content = content_fingerprint(data.frame)
        record, budget_of, identity_notes = self._identify(
            path, fingerprint, content, spec.share_budget_with, spec.separate_budget)
        if not spec.query.column:
            raise ProjectError("the spec names no column")
        require_column(data.frame, spec.query.column)
        declared = data.declared
        if declared is None and record is not None:  # moved without its sidecar
            with contextlib.suppress(Exception):
                declared = Schema.from_dict(record.schema)
        for feature in spec.features or ():
            require_column(data.frame, feature)
        # A named or declared identifier makes the release user-level (central only).
        analysis = with_identifier(analysis, spec.identifier, spec.max_rows, declared)
        if analysis.identifier is not None:
            require_column(data.frame, analysis.identifier)
            if engine == "dask":
                raise ProjectError("a user-level release (identifier) runs on the pandas "
                                   "engine for now: set engine = \"pandas\"")
        analysis, notes = (resolve(analysis, declared) if analysis.identifier is not None
                           else resolve_release(analysis, declared))
        notes = identity_notes + notes
        sums = None
        if engine == "dask":  # one file, one partition: read and hashed by its task
            sums = sum_where_data_is(spec, analysis, one_file(path), engine, declared,
                                     state)
            if sums.files[0].sha256 != fingerprint:
                raise DatasetChangedError(f"warning: {path.name} changed while it was being "
                                          "read; refusing to release")
        return self._settle(spec, analysis, path, fingerprint, content, record, budget_of,
                            notes, declared, declared_dict(data.declared), data.frame, sums,
                            out_dir, create_out)

    def _prepare_files(self, spec: ReleaseSpec, analysis: AnalysisSpec, path: Path,
                       engine: str, out_dir: str | os.PathLike[str], create_out: bool,
                       state: Any = None) -> _Prepared:
        """:meth:`_prepare` for a folder or glob: its columns and declaration from
        metadata and the sidecar, then one pass that reads, hashes and sums every file
        (on Dask, or file by file here); its identity is its files' fingerprint."""
        ds = open_files(path, header=spec.header)
        if not spec.query.column:
            raise ProjectError("the spec names no column")
        if spec.query.column not in ds.columns:
            raise ProjectError(f"{ds.name} has no column {spec.query.column!r} (its columns: "
                               f"{', '.join(ds.columns[:8])}{'…' if len(ds.columns) > 8 else ''})")
        sidecar = ds.sidecar
        declared = load_schema(sidecar) if sidecar.is_file() else None
        if with_identifier(analysis, spec.identifier, spec.max_rows, declared).identifier:
            raise ProjectError("a user-level release (identifier) reads one file for now, "
                               "not a folder or glob")
        analysis, notes = resolve_release(analysis, declared)
        if spec.script and partition_kind(analysis) == "reports":
            raise ProjectError("a local release on a folder has no script yet (the script "
                               "of a folder sums central statistics); set script = false")
        sums = sum_where_data_is(spec, analysis, ds, engine, declared, state)
        fingerprint = files_fingerprint(sums.files)
        if spec.fingerprint is not None and spec.fingerprint != fingerprint:
            raise DatasetChangedError(
                f"warning: {ds.name} is not the dataset the spec names (its files' "
                f"fingerprint {fingerprint[:12]}… is not {spec.fingerprint[:12]}…); refusing "
                "to release")
        content = content_of_files(ds, fingerprint, sums.total)
        record, budget_of, identity_notes = self._identify(
            path, fingerprint, content, spec.share_budget_with, spec.separate_budget)
        return self._settle(spec, analysis, path, fingerprint, content, record, budget_of,
                            identity_notes + notes, declared, declared_dict(declared), None,
                            sums, out_dir, create_out, multi=True)

    def _settle(self, spec: ReleaseSpec, analysis: AnalysisSpec, path: Path, fingerprint: str,
                content: ContentFingerprint, record: DatasetRecord | None,
                budget_of: int | None, notes: list[str], declared: Any,
                declared_schema: dict[str, Any], frame: Any, sums: Any,
                out_dir: str | os.PathLike[str], create_out: bool, multi: bool = False
                ) -> _Prepared:
        """The rest of :meth:`_prepare`: budget, relation and accountant checked, the
        values read (in-process), the output folder."""
        query, model_bounds = analysis.query, analysis.feature_bounds
        budget, relation, accountant, schema = _budget_root(
            self, spec, path, record, budget_of, None, declared_schema)
        if model_bounds is not None and relation != "replace":
            raise ProjectError(f"{path.name} is budgeted under the {relation} relation; a model "
                               "release needs a dataset budgeted under replace (its noise "
                               "bounds replacing one record, with n public)")
        if query.relation != relation:
            raise ProjectError(f"{path.name} is budgeted under the {relation} relation; set "
                               f"relation = \"{relation}\" in the spec (ε under one relation "
                               "does not bound the other)")
        model, values = None, None
        if model_bounds is not None:
            model = read_model_columns(frame, query.column, tuple(spec.features),
                                       model_bounds)
        elif frame is not None:
            values = read_values(frame, query, declared)
        ids = None  # user-level: each row's identifier (missing ones are left out)
        if analysis.identifier is not None:
            from dpstudio.data.columns import category_column

            ids = category_column(frame, analysis.identifier)
        acc = get_accountant(accountant)
        # The query's ε and δ are the engine's own (a local query's are its randomizer's,
        # see resolve_local_query); _charge checks them again against the result object.
        charge = acc.charge(query)
        # A protocol's (ε, δ) is its plan's at the public n: what its engine object states.
        charge = protocol_charge(analysis, rows_of(values, sums)) or charge
        planned = None if acc.name == "basic" else planned_loss(analysis)
        with self._db() as conn:
            of = record.id if record is not None else budget_of
            charges, losses = self._losses(conn, of) if of is not None else ([], [])
            check_unit(self, conn, of, analysis.identifier, path.name)  # row or person
        label = path.name
        if record is not None and record.fingerprint != fingerprint:
            label += f" (the same rows as registered dataset #{record.id}, {record.name})"
        elif record is not None and record.budget_of is not None or budget_of is not None:
            label += (f" (a version of dataset #{budget_of or record.budget_of}, sharing its "
                      "budget)")
        _check_budget(acc, budget, charges, losses, charge, planned, label)
        out, created = _output_folder(out_dir, create_out)
        return _Prepared(spec, query, notes, path, fingerprint, path.name, schema, record, budget,
                         relation, accountant, charge, values, reader_for(query, declared),
                         out, created, spec.trust_model, model, content, budget_of, analysis,
                         sums, multi, planned, ids=ids)

    def _stem(self, release_id: int, prep: _Prepared, uid: str) -> str:
        from dpstudio.export.bundle import file_names

        base = _slug(prep.spec.name or f"{prep.query.query}-{prep.query.column}")
        for stem in (f"r{release_id:04d}-{base}", f"r{release_id:04d}-{base}-{uid[:8]}"):
            records = ("records" in capability(prep.trust_model).options
                       and not (prep.sums is not None and is_local_tallies(prep.sums.total)))
            names = file_names(stem, prep.spec.formats, prep.spec.report, prep.spec.script,
                               records=records, script_format=prep.spec.script_format)
            if prep.spec.training is not None:  # coefficients or weights, a model card
                from dpstudio.project.release_model import train_file_names

                names = train_file_names(stem, prep.spec)
            if not any((prep.out / n).exists() or (prep.out / tmp_name(n, uid)).exists()
                       for n in names):
                return stem
        raise ProjectError(f"{prep.out} already holds files named like this release's; choose "
                           "another output folder")

    def _charge(self, prep: _Prepared) -> tuple[int, str, list, Any]:
        """Step 1: check, draw, render, record as pending — one transaction.

        Returns the release's id, uid and rendered files, and the bundle they were
        rendered from, with the analyst's figures measured on the values the release read
        (for the analyst's copy, written after the release is done).
        """
        from dpstudio.export.bundle import BundleInput, render_bundle
        from dpstudio.export.manifest_contributions import contributions_section
        from dpstudio.export.report_analyst import measure_clamping

        acc = get_accountant(prep.accountant)
        uid = uuid.uuid4().hex
        created_at = now()
        with self._transaction() as conn:
            if prep.record is None:
                dataset_id = self._insert_dataset(conn, prep.fingerprint, prep.path, prep.schema,
                                                  prep.budget, prep.relation, prep.accountant,
                                                  prep.content, prep.budget_of)
            else:
                dataset_id = prep.record.id
            problems = self._audit_locked(conn).problems  # edited since _prepare checked?
            if problems:
                raise LedgerTamperedError(tamper_message(self.path, problems), problems)
            charges, losses = self._losses(conn, dataset_id)
            check_unit(self, conn, dataset_id, None if prep.analysis is None
                       else prep.analysis.identifier, prep.name)
            _check_budget(acc, prep.budget, charges, losses, prep.charge, prep.planned,
                          prep.name)
            spec_dict = _spec_dict(prep)
            cur = conn.execute(
                "INSERT INTO releases (uid, dataset_id, status, created_at, query, column_name, "
                "mechanism, trust_model, epsilon, delta, accountant, spec_json, noise_json, "
                "out_dir) VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?)",
                (uid, dataset_id, created_at, prep.query.query, prep.query.column,
                 prep.query.mechanism, prep.trust_model, str(prep.charge[0]), str(prep.charge[1]),
                 prep.accountant, json.dumps(spec_dict, ensure_ascii=False), str(prep.out)))
            release_id = int(cur.lastrowid)
            history = self._history(conn, dataset_id, release_id)
            public, records, result = _draw(prep)  # the noise
            # What is charged, written and shown is the (ε, δ) of the engine object that drew
            # the noise, never the spec's. Nothing drawn has been seen yet: if it is more than
            # was checked, the budget is checked again and the transaction may still roll back.
            charge = (exact(float(result.epsilon)), exact(float(result.delta)))
            # What was drawn, as the ledger keeps it (never claiming less than the charge).
            loss = release_loss(result)
            if charge != prep.charge or (acc.name != "basic" and loss != prep.planned):
                # A tight accountant's decision is the composition with what was drawn
                # (a function of the spec, never of the noise): rolling back here shows
                # nothing.
                _check_budget(acc, prep.budget, charges, losses, charge, loss, prep.name)
            if charge != prep.charge:
                conn.execute("UPDATE releases SET epsilon = ?, delta = ? WHERE id = ?",
                             (str(charge[0]), str(charge[1]), release_id))
                history = self._history(conn, dataset_id, release_id)
            # Stored before the chain entry, so the chain covers it: a hand-edited scale
            # or sensitivity is tampering, like an edited ε.
            conn.execute("UPDATE releases SET loss = ? WHERE id = ?",
                         (loss_json(loss), release_id))
            _chain.record_release(conn, release_id)
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
            conn.executemany(
                "INSERT INTO release_files (release_id, name, role, sha256, bytes) VALUES "
                "(?, ?, ?, ?, ?)",
                [(release_id, f.name, f.role, f.sha256, len(f.data)) for f in files])
            noise = noise_of(result, public)
            conn.execute("UPDATE releases SET noise_json = ?, result_json = ? WHERE id = ?",
                         (json.dumps(noise, allow_nan=False),
                          json.dumps(public, allow_nan=False, ensure_ascii=False), release_id))
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


# ---------------------------------------------------------------------------- helpers


def _read_file(path: Path, header: Any, named: str | None) -> tuple[str, Any]:
    """``path`` hashed, read and hashed again: (its SHA-256, the dataset read). Refused
    (DatasetChangedError) if it is not the file the spec ``named``, or changed while read."""
    fingerprint = sha256_file(path)
    if named is not None and named != fingerprint:
        raise DatasetChangedError(
            f"warning: {path.name} is not the dataset the spec names (SHA-256 "
            f"{fingerprint[:12]}… is not {named[:12]}…); refusing to release")
    data = open_dataset(path, header=header)
    if sha256_file(path) != fingerprint:
        raise DatasetChangedError(f"warning: {path.name} changed while it was being read; "
                                  "refusing to release")
    return fingerprint, data


def _budget_root(project: Any, spec: Any, path: Path, record: DatasetRecord | None,
                 budget_of: int | None, relation: str | None,
                 declared_schema: dict[str, Any]) -> tuple[tuple[Decimal, Decimal], str, str,
                                                           dict[str, Any]]:
    """(budget, relation, accountant, schema) a release of ``path`` is checked against: a
    version of a dataset spends (and is accounted like) the dataset it shares; a new one is
    registered from the spec (``relation``: the one it asks for, None for the default).
    ProjectError if the spec names another accountant than the dataset's."""
    if record is not None or budget_of is not None:
        root = project.dataset(record.budget_root if record is not None else budget_of)
        budget = (root.budget_epsilon, root.budget_delta)
        relation, accountant = root.relation, root.accountant
        schema = record.schema if record is not None else declared_schema
    else:
        budget, relation, accountant = project._registration(
            spec.budget_epsilon, spec.budget_delta, relation, spec.accountant, path.name)
        schema = declared_schema
    if spec.accountant is not None and spec.accountant != accountant:
        raise ProjectError(f"{path.name} is accounted with the {accountant} accountant; the "
                           f"spec asks for {spec.accountant}")
    return budget, relation, accountant, schema


def _check_budget(acc, budget: tuple[Decimal, Decimal], charges: list, losses: list,
                  request: tuple[Decimal, Decimal], request_loss: Any, name: str) -> None:
    """BudgetExceededError unless the past releases (their ``charges`` and ``losses``) and
    this one (its charge and, for a tight accountant, its description) fit ``budget``."""
    if acc.fits_charged(budget, charges, losses, request, request_loss):
        return
    spent = acc.spent_losses(losses, BASIC.spent(charges))
    left = (budget[0] - spent[0], budget[1] - spent[1])
    shown = tuple(max(x, Decimal(0)) for x in left)
    if acc.name != "basic" and left[1] >= request[1]:
        # A tight accountant does not add this release's ε to the rest: say what the
        # composition with it comes to (δ, which does add up, fits).
        loss = charge_loss(*request) if request_loss is None else request_loss
        after = acc.spent_losses([*losses, loss], BASIC.spent([*charges, request]))
        raise BudgetExceededError(
            f"budget exceeded for {name}: with this release (ε = {dec_text(request[0])}, "
            f"δ = {dec_text(request[1])}) the {acc.name} accountant counts ε = "
            f"{float(after[0]):.4g} spent, over the budget ε = {dec_text(budget[0])} "
            f"(ε = {dec_text(shown[0])} is left before it)", left[0], left[1])
    raise BudgetExceededError(
        f"budget exceeded for {name}: this release needs ε = {dec_text(request[0])}, "
        f"δ = {dec_text(request[1])}, but only ε = {dec_text(shown[0])}, δ = "
        f"{dec_text(shown[1])} is left (of ε = {dec_text(budget[0])}, δ = "
        f"{dec_text(budget[1])}, {acc.name} accountant)", left[0], left[1])


def _output_folder(out_dir: str | os.PathLike[str], create: bool) -> tuple[Path, list[Path]]:
    """The output folder as an absolute path, created if asked (and which folders were
    created); ProjectError unless it is a writable folder."""
    out = Path(out_dir).expanduser().absolute()
    created: list[Path] = []
    if out.exists() and not out.is_dir():
        raise ProjectError(f"output folder {out} is a file, not a folder")
    if not out.exists():
        if not create:
            return out, created
        missing = [out] + [p for p in out.parents if not p.exists()]
        try:
            out.mkdir(parents=True)
        except OSError as exc:
            raise ProjectError(f"cannot create output folder {out} ({exc.strerror or exc})"
                               ) from None
        created = list(reversed(missing))
    try:
        # An unnamed temporary file (O_TMPFILE where available): proves we may create files
        # there, and leaves nothing behind even if the process is killed right now.
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        for d in reversed(created):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise ProjectError(f"output folder {out} is not writable ({exc.strerror or exc})"
                           ) from None
    return out, created


def _draw(prep: _Prepared) -> tuple[dict[str, Any], dict[str, Any] | None, AnalysisResult]:
    """Draw the release's noise, fresh from the OS CSPRNG: the one call into the engine,
    through the analysis layer's dispatch.

    Returns the public fields (value, intervals, noise scale…), the records the untrusted
    collector received (a local release; None otherwise), and the result, whose ε and δ
    (the engine object's) are charged.
    """
    if prep.spec.training is not None:  # a trained model: one training from the OS CSPRNG
        from dpstudio.project.release_model import draw_train

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


def _spec_dict(prep: _Prepared) -> dict[str, Any]:
    """The full resolved spec as recorded in the ledger."""
    q = prep.query
    out = {
        "dataset": str(prep.path), "fingerprint": prep.fingerprint,
        "content_hash": None if prep.content is None else prep.content.digest,
        "column": q.column,
        "query": q.query, "bounds": None if q.bounds is None else [float(b) for b in q.bounds],
        "categories": None if q.categories is None else list(q.categories), "bins": q.bins,
        "quantile": q.quantile, "mechanism": q.mechanism, "params": dict(q.params),
        "epsilon": float(q.epsilon), "delta": float(q.delta), "relation": q.relation,
        "confidence": float(q.confidence), "accountant": prep.accountant,
        "formats": list(prep.spec.formats), "report": prep.spec.report,
        "script": prep.spec.script, "script_format": prep.spec.script_format,
        "name": prep.spec.name, "trust_model": prep.trust_model,
        "header": prep.spec.header, "missing": q.missing,
        "impute": q.impute_value() if q.missing == "impute" else None,
    }
    if prep.analysis is not None and prep.analysis.identifier is not None:
        out["identifier"] = prep.analysis.identifier  # user-level: its declared bound
        out["max_rows"] = prep.analysis.max_rows
    if prep.model is not None:
        out["features"] = list(prep.model.features)
    if prep.spec.training is not None:  # the model, method and sites it was trained with
        out["train"] = dict(prep.spec.training)
    return out
