"""A release checked before its charge: what it holds (:class:`Prepared`, for one
statistic and for a trained model alike) and the checks of one statistic — the dataset
identified, its budget, relation and accountant, its values read (in-process) or summed
where the data is (a folder, or Dask), the output folder.

A trained model is checked by :func:`~dpstudio.project.release_model.prepare_train`, a
plan by :mod:`dpstudio.project.release_plan`; all three with the checks of
:mod:`dpstudio.project.release_checks`.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from dpstudio.analysis import AnalysisSpec, release_refusal, resolve
from dpstudio.analysis.contribution import with_identifier
from dpstudio.analysis.partitioned import partition_kind
from dpstudio.analysis.resolve import reader_for
from dpstudio.data.columns import require_column
from dpstudio.data.fingerprint import ContentFingerprint
from dpstudio.data.folders import files_fingerprint, open_files
from dpstudio.data.schema import load_schema
from dpstudio.engine.queries import QuerySpec
from dpstudio.project.accountant import get_accountant
from dpstudio.project.errors import DatasetChangedError, ProjectError
from dpstudio.project.identity import declared_dict
from dpstudio.project.ledger_loss import planned_loss
from dpstudio.project.privacy_unit import check_unit
from dpstudio.project.records import DatasetRecord
from dpstudio.project.release_checks import budget_root, check_budget, identify_file
from dpstudio.project.release_files import (
    content_of_files,
    one_file,
    release_engine,
    sum_where_data_is,
)
from dpstudio.project.release_output import output_folder
from dpstudio.project.release_parties import protocol_charge, resolve_release, rows_of
from dpstudio.project.spec import ReleaseSpec
from dpstudio.project.store import absolute
from dpstudio.project.values import ModelInput, read_model_columns, read_values

__all__ = ["Prepared", "prepare_release", "spec_dict"]


@dataclass
class Prepared:
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


def prepare_release(project: Any, spec: ReleaseSpec, out_dir: str | os.PathLike[str],
                    create_out: bool, state: Any = None) -> Prepared:
    """Check a release of one statistic and read its values: nothing drawn, nothing
    charged.

    Parameters
    ----------
    project : Project
        The open project (its identity, budget and ledger methods).
    spec : ReleaseSpec
        One statistic (not a trained model: :func:`~dpstudio.project.release_model
        .prepare_train`).
    out_dir : str or os.PathLike
        The output folder.
    create_out : bool
        Create the output folder (a release) or only check it (a check).
    state : State, optional
        Progress and cancel of the sums of a folder or of Dask.

    Returns
    -------
    Prepared

    Raises
    ------
    ProjectError, DatasetChangedError, BudgetExceededError
        In one line, before anything is drawn.
    """
    trust_model = spec.trust_model
    analysis = AnalysisSpec(trust_model, spec.query, features=spec.features)
    refused = release_refusal(analysis)  # the capability table decides, in one sentence
    if refused is not None:
        raise ProjectError(refused)
    if spec.accountant is not None:  # None: the dataset's (or the project's default)
        get_accountant(spec.accountant)
    project._require_intact()  # an edited ledger: no release until it is acknowledged
    path = Path(absolute(spec.dataset))
    engine, multi = release_engine(spec, path)
    if multi:
        return _prepare_files(project, spec, analysis, path, engine, out_dir, create_out,
                              state)
    if not path.is_file():
        raise ProjectError(f"dataset {spec.dataset}: no such file")
    fingerprint, data, content, record, budget_of, identity_notes, declared = (
        identify_file(project, spec, path))
    if not spec.query.column:
        raise ProjectError("the spec names no column")
    require_column(data.frame, spec.query.column)
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
    return _settle(project, spec, analysis, path, fingerprint, content, record, budget_of,
                   notes, declared, declared_dict(data.declared), data.frame, sums, out_dir,
                   create_out)


def _prepare_files(project: Any, spec: ReleaseSpec, analysis: AnalysisSpec, path: Path,
                   engine: str, out_dir: str | os.PathLike[str], create_out: bool,
                   state: Any = None) -> Prepared:
    """:func:`prepare_release` for a folder or glob: its columns and declaration from
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
    record, budget_of, identity_notes = project._identify(
        path, fingerprint, content, spec.share_budget_with, spec.separate_budget)
    return _settle(project, spec, analysis, path, fingerprint, content, record, budget_of,
                   identity_notes + notes, declared, declared_dict(declared), None, sums,
                   out_dir, create_out, multi=True)


def _settle(project: Any, spec: ReleaseSpec, analysis: AnalysisSpec, path: Path,
            fingerprint: str, content: ContentFingerprint, record: DatasetRecord | None,
            budget_of: int | None, notes: list[str], declared: Any,
            declared_schema: dict[str, Any], frame: Any, sums: Any,
            out_dir: str | os.PathLike[str], create_out: bool, multi: bool = False
            ) -> Prepared:
    """The rest of :func:`prepare_release`: budget, relation and accountant checked, the
    values read (in-process), the output folder."""
    query, model_bounds = analysis.query, analysis.feature_bounds
    budget, relation, accountant, schema = budget_root(
        project, spec, path, record, budget_of, None, declared_schema)
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
    # see resolve_local_query); the charge checks them again against the result object.
    charge = acc.charge(query)
    # A protocol's (ε, δ) is its plan's at the public n: what its engine object states.
    charge = protocol_charge(analysis, rows_of(values, sums)) or charge
    planned = None if acc.name == "basic" else planned_loss(analysis)
    with project._db() as conn:
        of = record.id if record is not None else budget_of
        charges, losses = project._losses(conn, of) if of is not None else ([], [])
        check_unit(project, conn, of, analysis.identifier, path.name)  # row or person
    label = path.name
    if record is not None and record.fingerprint != fingerprint:
        label += f" (the same rows as registered dataset #{record.id}, {record.name})"
    elif record is not None and record.budget_of is not None or budget_of is not None:
        label += (f" (a version of dataset #{budget_of or record.budget_of}, sharing its "
                  "budget)")
    check_budget(acc, budget, charges, losses, charge, planned, label)
    out, created = output_folder(out_dir, create_out)
    return Prepared(spec, query, notes, path, fingerprint, path.name, schema, record, budget,
                    relation, accountant, charge, values, reader_for(query, declared),
                    out, created, spec.trust_model, model, content, budget_of, analysis,
                    sums, multi, planned, ids=ids)


def spec_dict(prep: Prepared) -> dict[str, Any]:
    """The full resolved spec as the ledger records it.

    Parameters
    ----------
    prep : Prepared

    Returns
    -------
    dict
    """
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
