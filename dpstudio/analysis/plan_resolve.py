"""A release plan from a GUI table's rows, and completed from the declared schema.

:func:`plan_from_rows` builds a :class:`~dpstudio.analysis.plan.ReleasePlan` from one
mapping per statistic (what a plan table holds); :func:`resolve_plan` fills what the
dataset's declared schema states — bounds, categories, the keys of ``by`` columns, a
public number of rows — never anything read off the data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dpstudio.analysis.plan import PlanError, PlanStatistic, ReleasePlan

__all__ = ["plan_from_rows", "resolve_plan"]


def _declared_keys(declared: Any, column: str) -> tuple[str, ...] | None:
    col = declared.get(column) if declared is not None else None
    cats = getattr(col, "categories", None) if col is not None else None
    return tuple(str(c) for c in cats) if cats else None


def resolve_plan(plan: ReleasePlan, declared: Any) -> tuple[ReleasePlan, list[str]]:
    """The plan completed from the declared schema, never from the data; validated.

    Declared bounds fill a sum, mean or binned histogram without them, declared
    categories a histogram without categories or bins, the declared categories of every
    ``by`` column are its keys, and a schema that declares a public ``rows`` gives a plan
    without one its number of rows. A declared identifier column with its ``max_rows``
    makes a plan without ``max_rows`` user-level (every sensitivity × k).

    Parameters
    ----------
    plan : ReleasePlan
    declared : schema-like or None
        ``get(column)`` with ``bounds`` and ``categories``.

    Returns
    -------
    (ReleasePlan, list of str)
        The plan and a note for each thing filled.

    Raises
    ------
    PlanError
        In one sentence, for what cannot be released.
    """
    notes: list[str] = []
    stats = []
    keys = dict(plan.keys)
    for s in plan.statistics:
        col = declared.get(s.column) if declared is not None else None
        bounds, cats = s.bounds, s.categories
        wants_bounds = s.query in ("sum", "mean") or (s.query == "histogram" and s.bins)
        if bounds is None and wants_bounds and col is not None and col.bounds is not None:
            bounds = tuple(float(b) for b in col.bounds)
            notes.append(f"{s.label}: bounds {bounds[0]:g},{bounds[1]:g} as declared in the "
                         "dataset's schema")
        if s.query == "histogram" and cats is None and s.bins is None:
            cats = _declared_keys(declared, s.column)
            if cats is not None:
                notes.append(f"{s.label}: categories as declared in the dataset's schema")
        for b in s.by:
            if b not in keys:
                found = _declared_keys(declared, b)
                if found is not None:
                    keys[b] = found
        stats.append(replace(s, bounds=bounds, categories=cats))
    rows = plan.rows
    declared_rows = getattr(declared, "rows", None)  # a schema that declares a public n
    if rows is None and isinstance(declared_rows, int) and not isinstance(declared_rows,
                                                                          bool):
        rows = declared_rows
        notes.append(f"rows = {rows:,} as declared in the dataset's schema (public)")
    max_rows = plan.max_rows
    if max_rows is None:  # a declared identifier with its k makes the plan user-level
        from dpstudio.analysis.contribution import declared_identifier

        name = declared_identifier(declared)
        k = getattr(declared.get(name), "max_rows", None) if name is not None else None
        if isinstance(k, int) and not isinstance(k, bool):
            max_rows = k
            notes.append(f"user-level: each person ({name!r}) contributes at most {k} rows, "
                         "as declared in the dataset's schema; every error is planned for "
                         f"{k} × a row's sensitivity")
    out = replace(plan, statistics=tuple(stats), keys=keys, rows=rows, max_rows=max_rows)
    return out.validate(), notes


def plan_from_rows(rows: Sequence[Mapping[str, Any]], epsilon: float, delta: float = 0.0,
                   *, method: str = "weights", confidence: float = 0.95,
                   relation: str = "add-remove", mechanism: str = "laplace",
                   public_rows: int | None = None, declared: Any = None) -> ReleasePlan:
    """A plan from table rows (one dict per statistic), as a GUI plan table holds them.

    Parameters
    ----------
    rows : sequence of mapping
        Keys ``column``, ``query`` and optionally ``bounds``, ``categories``, ``by``,
        ``target``, ``weight``, ``mechanism``, ``bins``, ``missing``, ``impute``.
    epsilon, delta : float
        The total.
    method : str, optional
        ``weights`` (each row's ``weight``, default 1) or ``accuracy``.
    confidence, relation, mechanism : optional
        As :class:`ReleasePlan`.
    public_rows : int, optional
        The public number of rows (the plan's ``rows``).
    declared : schema-like, optional
        When given, the plan is resolved against it (:func:`resolve_plan`).

    Returns
    -------
    ReleasePlan

    Raises
    ------
    PlanError
        For a row without column or query, or (with ``declared``) as
        :func:`resolve_plan`.
    """
    stats, weights = [], []
    for i, r in enumerate(rows):
        if not r.get("column") or not r.get("query"):
            raise PlanError(f"row {i + 1} needs a column and a query")
        b = r.get("bounds")
        cats = r.get("categories")
        stats.append(PlanStatistic(
            column=str(r["column"]), query=str(r["query"]),
            bounds=None if b is None else (float(b[0]), float(b[1])),
            categories=None if cats is None else tuple(str(c) for c in cats),
            by=tuple(r.get("by") or ()),
            target=None if r.get("target") is None else float(r["target"]),
            mechanism=r.get("mechanism"), bins=r.get("bins"),
            missing=r.get("missing", "drop"), impute=r.get("impute")))
        weights.append(float(r.get("weight", 1.0)))
    plan = ReleasePlan(tuple(stats), float(epsilon), float(delta), method,
                       tuple(weights) if method == "weights" else None, confidence,
                       relation, mechanism, public_rows)
    if declared is not None:
        plan, _ = resolve_plan(plan, declared)
    return plan
