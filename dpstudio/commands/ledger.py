"""``dpstudio ledger``: a project's datasets, their budgets and every release."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from dpstudio.commands._common import EXIT_OK, Parser, fail

__all__ = ["parser", "run"]


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="dpstudio ledger",
        description="Print a project's privacy ledger: each dataset's budget, what is spent "
        "and left, and every release (done, aborted or pending) with its files.",
        epilog="Aborted releases stay charged (their noise was drawn) and list no files. "
        "Opening the project first recovers any interrupted release.",
    )
    p.add_argument("project", metavar="P.dpstudio", help="project file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(argv: Sequence[str]) -> int:
    from dpstudio.project import Project, ProjectError

    args = parser().parse_args(argv)
    try:
        with Project.open(args.project) as project:
            data = project.to_dict()
            recovery = project.last_recovery
    except ProjectError as err:
        return fail(str(err))
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))
        return EXIT_OK
    print(f"project {data['project']} (schema version {data['schema_version']})")
    d = data["defaults"]
    if d["epsilon"] is not None:
        print(f"  default budget for new datasets: ε = {d['epsilon']:g}, δ = {d['delta']:g}, "
              f"{d['relation']}")
    if recovery.completed or recovery.aborted:
        print(f"  recovered interrupted releases: completed {recovery.completed or 'none'}, "
              f"aborted {recovery.aborted or 'none'}")
    if not data["datasets"]:
        print("  no datasets yet (the first release on a dataset registers it)")
    for ds in data["datasets"]:
        e = ds["exact"]
        print(f"\ndataset {ds['name']}  {ds['fingerprint']}")
        print(f"  path      {ds['path']}")
        print(f"  budget    ε = {e['budget_epsilon']}, δ = {e['budget_delta']} ({ds['relation']}, "
              f"{ds['accountant']} accountant)")
        print(f"  spent     ε = {e['spent_epsilon']}, δ = {e['spent_delta']}")
        print(f"  remaining ε = {e['remaining_epsilon']}, δ = {e['remaining_delta']}")
        if ds["releases"]:
            print(f"  {'#':>4}  {'time (UTC)':<20}  {'status':<8}  {'ε':>8}  {'δ':>8}  release")
        for r in ds["releases"]:
            print(f"  {r['id']:>4}  {r['time']:<20}  {r['status']:<8}  {r['epsilon_exact']:>8}  "
                  f"{r['delta_exact']:>8}  {r['query']} of {r['column']} ({r['mechanism']}, "
                  f"{len(r['files'])} files)")
    return EXIT_OK
