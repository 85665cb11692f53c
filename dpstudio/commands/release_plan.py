"""``dpstudio release PLAN.toml``: a release plan (spec ``schema_version = 2``) — every
statistic in one ledger transaction, one manifest, one report, one script."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from typing import Any

from dpstudio.commands._common import EXIT_OK, fail

__all__ = ["neighbours", "run_plan"]


def _fmt(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def neighbours(plan: dict[str, Any]) -> str:
    """The plan's neighbouring relation in words, for the summary's header.

    Parameters
    ----------
    plan : dict
        The ledger entry's ``result["plan"]`` (``relation``; ``identifier`` and
        ``max_rows`` for a user-level plan).

    Returns
    -------
    str
        ``"neighbours: add or remove one person (identifier 'id', at most k rows)"`` for
        a user-level plan, else the row relation.
    """
    k = plan.get("max_rows")
    if plan.get("identifier") is not None and k is not None:
        # The guarantee is about people: saying so only in a note would let a reader take
        # the ε of the header for a per-row one.
        return (f"neighbours: add or remove one person (identifier {plan['identifier']!r}, "
                f"at most {k} row{'s' if k != 1 else ''})")
    if plan.get("relation") == "replace":
        return "neighbours: replace one row (the number of rows is public)"
    return "neighbours: add or remove one row"


def run_plan(spec: Any, args: argparse.Namespace) -> int:
    """Release the plan ``spec`` into ``args.project`` / ``args.out``; print the entry.

    Parameters
    ----------
    spec : PlanSpec
    args : argparse.Namespace
        ``dpstudio release``'s arguments.

    Returns
    -------
    int
        The exit code (0, 2 bad input, 3 budget exceeded).
    """
    from dpstudio.commands._common import EXIT_BUDGET
    from dpstudio.export.errors import ExportError
    from dpstudio.project import BudgetExceededError, Project, ProjectError

    try:
        if args.engine == "dask" or args.scheduler:
            raise ProjectError("a release plan is computed in this process: leave out "
                               "--engine dask and --scheduler")
        if args.share_budget_with is not None or args.separate_budget:
            spec = replace(spec, share_budget_with=args.share_budget_with,
                           separate_budget=bool(args.separate_budget))
        with Project.open(args.project) as project:
            record = project.release(spec, args.out)
            budget = project.budget(record.dataset_id)
            name = project.dataset(record.dataset_id).name
    except BudgetExceededError as err:
        print(f"dpstudio: error: {err}", file=sys.stderr)
        return EXIT_BUDGET
    except (ProjectError, ExportError) as err:
        return fail(str(err))
    if args.json:
        out = record.to_dict() | {"dataset": name, "budget": budget.to_dict()}
        print(json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False))
        return EXIT_OK
    result = record.result or {}
    stats = result.get("statistics", [])
    print(f"release #{record.id} {record.status}: plan of {len(stats)} statistics "
          f"(ε = {_fmt(float(record.epsilon))}, δ = {_fmt(float(record.delta))}, one charge)")
    print(f"  {neighbours(result.get('plan') or {})}")
    for s in stats:
        share = f"ε = {_fmt(s['epsilon'])}" + (f", δ = {_fmt(s['delta'])}" if s["delta"]
                                                 else "")
        print(f"  {s['label']}  ({share})")
        value = s["value"]
        if isinstance(value, dict):
            for label, v in value.items():
                print(f"    {label:<20} {_fmt(v):>12}   [{_fmt(s['ci_low'][label])}, "
                      f"{_fmt(s['ci_high'][label])}]")
        else:
            print(f"    value {_fmt(value)}   [{_fmt(s['ci_low'])}, {_fmt(s['ci_high'])}]")
    for note in result.get("notes", []):
        print(f"  note: {note}")
    print(f"  files in {record.out_dir}:")
    for f in record.files:
        print(f"    {f.name}")
    print(f"  budget of {name}: {budget.describe()}")
    return EXIT_OK
