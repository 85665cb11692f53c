"""Releasing a plan: every statistic of a :class:`~dpstudio.analysis.plan.ReleasePlan` in
ONE ledger transaction — one charge of the plan's total, one manifest, one report, one
script — with the transaction machinery of :mod:`dpstudio.project.release` (charge, then
write, then confirm; recovery from the recorded files) and the charge's ledger steps every
release shares (:mod:`dpstudio.project.release_charge`).

The charge is the plan's total: its stated ε and δ with a weights split (never less than
the exact sum of the shares), the sum of the targets' ε with an accuracy split. What the
ledger stores as drawn is the ``composed`` privacy-loss description of the parts, each
statistic's own (:mod:`dpstudio.project.ledger_loss`), so a tight accountant composes
them; its claim is the charge. A plan reads one file (a folder or Dask comes later) and
is central-model only.

A plan on a dataset with an identifier column (the schema's, or the spec's ``identifier``
and ``max_rows``) is user-level: each person's rows are bounded to k ONCE, from the
release's OS CSPRNG, before every statistic; every sensitivity is k × a row's
(:mod:`dpstudio.analysis.plan_user`); the manifest states the person relation and a
``contributions`` section; the budget's unit of privacy is checked (a plan is one release
in its unit); how many rows were dropped is written nowhere.
"""

from __future__ import annotations

import math
import os
import uuid
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from dpstudio.analysis import AnalysisSpec
from dpstudio.analysis import run as run_analysis
from dpstudio.analysis.plan import ReleasePlan
from dpstudio.analysis.plan_resolve import resolve_plan
from dpstudio.analysis.plan_split import half_width
from dpstudio.analysis.plan_user import bound_plan_rows, plan_identifier, run_bounded_statistic
from dpstudio.analysis.resolve import reader_for
from dpstudio.data.columns import category_column, require_column
from dpstudio.engine.accounting.budget import as_float, exact
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.contribution import person_relation
from dpstudio.engine.errors import EngineError
from dpstudio.engine.queries.grouped import grouped_release
from dpstudio.engine.rng import SecureSource
from dpstudio.project.accountant import get_accountant
from dpstudio.project.analyst_copy import ReleasedRecord
from dpstudio.project.errors import ProjectError
from dpstudio.project.identity import declared_dict
from dpstudio.project.ledger_loss import release_loss
from dpstudio.project.privacy_unit import check_unit
from dpstudio.project.release_charge import (
    RELEASE_WAIT,
    insert_pending,
    open_charge,
    record_drawn,
    record_output,
)
from dpstudio.project.release_checks import budget_root, check_budget, identify_file
from dpstudio.project.release_output import free_stem, output_folder
from dpstudio.project.spec_plan import PlanSpec
from dpstudio.project.store import absolute, now
from dpstudio.project.values import read_values

__all__ = ["check_plan", "release_plan"]


@dataclass
class _PreparedPlan:
    spec: PlanSpec
    plan: ReleasePlan
    notes: list[str]
    path: Path
    fingerprint: str
    content: Any
    record: Any
    budget_of: int | None
    budget: tuple[Decimal, Decimal]
    relation: str
    accountant: str
    schema: dict[str, Any]
    charge: tuple[Decimal, Decimal]
    shares: list[tuple[float, float]]
    inputs: list[tuple[Any, list[np.ndarray] | None, str]]
    out: Path
    created_dirs: list[Path]
    #: A user-level plan: the identifier column, k and each row's identifier.
    identifier: str | None = None
    max_rows: int | None = None
    ids: Any = None


def _charge_of(plan: ReleasePlan, shares: list[tuple[float, float]]
               ) -> tuple[Decimal, Decimal]:
    """The plan's total as exact decimals, never below the exact sum of its shares."""
    eps, dlt = plan.total()
    summed = (sum((exact(e) for e, _ in shares), Decimal(0)),
              sum((exact(d) for _, d in shares), Decimal(0)))
    return max(exact(eps), summed[0]), max(exact(dlt), summed[1])


def _prepare(project: Any, spec: PlanSpec, out_dir: str | os.PathLike[str],
             create_out: bool) -> _PreparedPlan:
    if spec.accountant is not None:
        get_accountant(spec.accountant)
    project._require_intact()
    path = Path(absolute(spec.dataset))
    if not path.is_file():
        raise ProjectError(f"dataset {spec.dataset}: no such file (a plan reads one file)")
    fingerprint, data, content, record, budget_of, notes, declared = identify_file(
        project, spec, path)
    budget, relation, accountant, schema = budget_root(
        project, spec, path, record, budget_of,
        spec.plan.relation if spec.relation_given else None, declared_dict(data.declared))
    if spec.relation_given and spec.plan.relation != relation:
        raise ProjectError(f"{path.name} is budgeted under the {relation} relation; set "
                           f"relation = \"{relation}\" in the spec (ε under one relation "
                           "does not bound the other)")
    for s in spec.plan.statistics:
        for name in (s.column, *s.by):
            require_column(data.frame, name)
    try:
        identifier, max_rows, id_notes = plan_identifier(spec.identifier, spec.max_rows,
                                                         declared)
    except EngineError as exc:
        raise ProjectError(str(exc)) from None
    ids = None
    if identifier is not None:
        require_column(data.frame, identifier)
        for s in spec.plan.statistics:
            if identifier in (s.column, *s.by):
                raise ProjectError(f"{identifier!r} identifies people: release and group by "
                                   "other columns")
        ids = category_column(data.frame, identifier)
    try:
        plan, plan_notes = resolve_plan(replace(spec.plan, relation=relation,
                                                max_rows=max_rows), declared)
        plan_notes = id_notes + plan_notes
        shares = plan.shares()
        specs = [plan.query_spec(i, e, d).validated() for i, (e, d) in enumerate(shares)]
    except EngineError as exc:
        raise ProjectError(str(exc)) from None
    inputs = []
    for s, q in zip(plan.statistics, specs, strict=True):
        values = read_values(data.frame, q, declared)
        keys = [category_column(data.frame, b) for b in s.by] if s.by else None
        inputs.append((values, keys, reader_for(q, declared)))
    if any(s.query == "mean" for s in plan.statistics) and any(
            s.target is not None for s in plan.statistics):
        plan_notes.append("a target is the half-width the error stays within at the stated "
                          "confidence, planned from the noise alone; a mean's interval is "
                          "guaranteed by interval arithmetic over its noisy sum and count, "
                          "so it may be wider")
    charge = _charge_of(plan, shares)
    acc = get_accountant(accountant)
    with project._db() as conn:
        of = record.id if record is not None else budget_of
        charges, losses = project._losses(conn, of) if of is not None else ([], [])
        check_unit(project, conn, of, identifier, path.name)  # one release in its unit
    check_budget(acc, budget, charges, losses, charge, None, path.name)
    out, created = output_folder(out_dir, create_out)
    return _PreparedPlan(spec, plan, notes + plan_notes, path, fingerprint, content, record,
                         budget_of, budget, relation, accountant, schema, charge, shares,
                         inputs, out, created, identifier, max_rows, ids)


def check_plan(project: Any, spec: PlanSpec, out_dir: str | os.PathLike[str]
               ) -> dict[str, Any]:
    """Everything :func:`release_plan` checks, without drawing noise or writing.

    Parameters
    ----------
    project : Project
    spec : PlanSpec
    out_dir : str or os.PathLike

    Returns
    -------
    dict
        ``epsilon``, ``delta`` (the charge), ``shares``, ``notes``, ``budget``,
        ``remaining``, ``dataset``.
    """
    prep = _prepare(project, spec, out_dir, create_out=False)
    remaining = prep.budget if prep.record is None else project.remaining(prep.record)
    return {"epsilon": prep.charge[0], "delta": prep.charge[1], "shares": prep.shares,
            "notes": prep.notes, "budget": prep.budget, "remaining": remaining,
            "dataset": prep.path.name}


def _draw(prep: _PreparedPlan) -> tuple[list[dict[str, Any]], list[LossDescription]]:
    """Every statistic's noise, fresh from the OS CSPRNG; their public fields and losses."""
    plan = prep.plan
    out, losses = [], []
    k = prep.max_rows
    keep = None
    if k is not None:  # once for the whole plan, before every statistic
        try:
            keep = bound_plan_rows(prep.ids, k, SecureSource())
        except EngineError as exc:
            raise ProjectError(str(exc)) from None
    for i, (s, (values, keys, reader)) in enumerate(zip(plan.statistics, prep.inputs,
                                                        strict=True)):
        e, d = prep.shares[i]
        q = plan.query_spec(i, e, d)
        if keep is not None:
            values = np.asarray(values)[keep]
            keys = None if keys is None else [np.asarray(c)[keep] for c in keys]
        if s.by:
            key_lists = tuple(plan.keys[b] for b in s.by)
            result = grouped_release(values, keys, key_lists, q, SecureSource(), by=s.by,
                                     max_rows=plan.k)
            if k is not None:
                result.relation = person_relation(k)
            public = result.public()
            loss = result.loss_description()
            drawn = (result.epsilon, result.delta)
        elif k is not None:
            result = run_bounded_statistic(q, values, prep.identifier, k, SecureSource())
            public = result.public()  # never the rows kept: it tells how many were dropped
            loss = release_loss(result)
            drawn = (float(result.epsilon), float(result.delta))
            key_lists = ()
        else:
            result = run_analysis(AnalysisSpec("central", q), values, SecureSource())
            if result.simulated:  # pragma: no cover - SecureSource is never simulated
                raise ProjectError("a release needs the OS CSPRNG")
            public = result.public(rows=int(np.asarray(values).size))
            loss = release_loss(result)
            drawn = (float(result.epsilon), float(result.delta))
            key_lists = ()
        planned = half_width(q, bool(s.by), plan.group_rows(i), plan.k)
        out.append({
            "label": s.label, "column": s.column, "query": s.query, "by": list(s.by),
            "bounds": None if q.bounds is None else [float(b) for b in q.bounds],
            "categories": None if q.categories is None else list(q.categories),
            "keys": key_lists, "mechanism": q.mechanism, "epsilon": drawn[0],
            "delta": drawn[1], "target": s.target,
            "planned_half_width": None if math.isnan(planned) else planned,
            "confidence": q.confidence, "value": public.get("value"),
            "ci_low": public.get("ci_low"), "ci_high": public.get("ci_high"),
            "notes": list(public.get("notes", [])), "spec": q, "reader": reader,
            **({} if k is None else {"relation": person_relation(k)})})
        losses.append(loss)
    return out, losses


def _plan_dict(prep: _PreparedPlan) -> dict[str, Any]:
    p = prep.plan
    return {"method": p.method, "weights": None if p.weights is None else list(p.weights),
            "epsilon": p.epsilon, "delta": p.delta, "confidence": p.confidence,
            "relation": p.relation, "rows": p.rows, "mechanism": p.mechanism,
            "keys": {k: list(v) for k, v in p.keys.items()},
            "charged": {"epsilon": str(prep.charge[0]), "delta": str(prep.charge[1])},
            **({} if prep.identifier is None else {"identifier": prep.identifier,
                                                     "max_rows": prep.max_rows})}


def _stem(prep: _PreparedPlan, release_id: int, uid: str) -> str:
    from dpstudio.export.plan_bundle import plan_file_names

    return free_stem(prep.out, uid, release_id, prep.spec.name or "plan",
                     lambda stem: plan_file_names(stem, prep.spec.formats, prep.spec.report,
                                                  prep.spec.script))


def _charge(project: Any, prep: _PreparedPlan) -> tuple[int, str, list]:
    """One transaction: check, record as pending, draw every statistic, render, record."""
    from dpstudio.export.plan_bundle import PlanBundle, render_plan_bundle

    uid = uuid.uuid4().hex
    created_at = now()
    columns = ", ".join(dict.fromkeys(s.column for s in prep.plan.statistics))
    with project._transaction() as conn:
        dataset_id, charges, losses = open_charge(project, conn, prep, prep.identifier)
        spec_dict = {"dataset": str(prep.path), "fingerprint": prep.fingerprint,
                     "content_hash": None if prep.content is None else prep.content.digest,
                     "plan": _plan_dict(prep), "accountant": prep.accountant,
                     "formats": list(prep.spec.formats), "report": prep.spec.report,
                     "script": prep.spec.script, "name": prep.spec.name,
                     "identifier": prep.identifier, "max_rows": prep.max_rows,
                     "statistics": [{"column": s.column, "query": s.query, "by": list(s.by),
                                     "target": s.target} for s in prep.plan.statistics]}
        release_id = insert_pending(conn, prep, uid, dataset_id, created_at,
                                    ("plan", columns, "plan", "central"), spec_dict)
        stats, parts = _draw(prep)  # the noise
        drawn = (sum((exact(s["epsilon"]) for s in stats), Decimal(0)),
                 sum((exact(s["delta"]) for s in stats), Decimal(0)))
        charge = (max(prep.charge[0], drawn[0]), max(prep.charge[1], drawn[1]))
        loss = LossDescription("composed", epsilon=as_float(charge[0]), delta=as_float(charge[1]),
                               parts=tuple(parts))
        # Checked as drawn by a tight accountant (nothing was planned before the draw).
        record_drawn(conn, prep, release_id, (charges, losses), charge, loss)
        stem = _stem(prep, release_id, uid)
        bundle = PlanBundle(
            release_id=release_id, uid=uid, created_at=created_at, stem=stem,
            dataset_name=prep.path.name, fingerprint=prep.fingerprint, schema=prep.schema,
            epsilon=charge[0], delta=charge[1], accountant=prep.accountant,
            budget_epsilon=prep.budget[0], budget_delta=prep.budget[1],
            plan=_plan_dict(prep), statistics=stats, formats=prep.spec.formats,
            report=prep.spec.report, script=prep.spec.script, header=prep.spec.header,
            notes=list(prep.notes), identifier=prep.identifier, max_rows=prep.max_rows,
            dataset_path=str(prep.path))
        files = render_plan_bundle(bundle)
        public = {"plan": _plan_dict(prep), "statistics": [
            {k: v for k, v in s.items() if k not in ("spec", "reader", "keys")}
            for s in stats], "notes": list(prep.notes)}
        record_output(conn, release_id, files, {"parts": [p.to_dict() for p in parts]},
                      public)
    return release_id, uid, files


def release_plan(project: Any, spec: PlanSpec, out_dir: str | os.PathLike[str],
                 state: Any = None) -> ReleasedRecord:
    """Release every statistic of a plan: one charge, one manifest, one report, one script.

    Parameters
    ----------
    project : Project
        The open project (its lock, ledger and recovery are used).
    spec : PlanSpec
        The plan and what to write.
    out_dir : str or os.PathLike
        The output folder.
    state : State, optional
        Cancel before the charge costs nothing (:mod:`dpstudio.jobs`).

    Returns
    -------
    ReleasedRecord
        The one ledger entry (``query = "plan"``).

    Raises
    ------
    BudgetExceededError
        Nothing charged, nothing written.
    ProjectError
        For bad input (one sentence), or when writing fails after charging.
    """
    from dpstudio.jobs import check as check_state

    with project._lock.held(RELEASE_WAIT):
        project._recover_locked()
        prep = _prepare(project, spec, out_dir, create_out=True)
        try:
            check_state(state)
            release_id, uid, files = _charge(project, prep)
        except BaseException:
            for d in reversed(prep.created_dirs):
                try:
                    d.rmdir()
                except OSError:
                    pass
            raise
        record = project._write(release_id, uid, files, prep.out)
    done = {f.name: getattr(record, f.name) for f in fields(record)
            if f.name not in ("analyst_report", "analyst_note")}
    return ReleasedRecord(**done)
