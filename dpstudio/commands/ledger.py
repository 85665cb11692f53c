"""``dpstudio ledger``: a project's datasets, their budgets and every release."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from dpstudio.commands._common import EXIT_OK, Parser, fail

__all__ = ["parser", "run"]


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="dpstudio ledger",
        description="Print a project's privacy ledger: each dataset's budget, what is spent "
        "and left, and every release (done, aborted or pending) with its files.",
        epilog="Aborted releases stay charged (their noise was drawn) and list no files. "
        "Opening the project first recovers any interrupted release. The ledger is "
        "hash-chained and checked against the release manifests it can reach: if it was "
        "changed outside DP Studio (a release deleted, an ε lowered, a budget raised), "
        "this says what changed, exits with code 2, and new releases are refused until "
        "--acknowledge.",
    )
    p.add_argument("project", metavar="P.dpstudio", help="project file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--acknowledge", action="store_true",
                   help="acknowledge changes made to the ledger outside DP Studio: keep the "
                   "pessimistic charges (the largest ε and δ recorded anywhere; deleted "
                   "releases restored and still charged; raised budgets lowered back), record "
                   "the acknowledgement in the ledger, and allow releases again")
    return p


def run(argv: Sequence[str]) -> int:
    from dpstudio.project import Project, ProjectError

    args = parser().parse_args(argv)
    acknowledged: list[str] = []
    try:
        with Project.open(args.project) as project:
            if args.acknowledge:
                acknowledged = project.acknowledge()
            data = project.to_dict()
            recovery = project.last_recovery
    except ProjectError as err:
        return fail(str(err))
    problems = data["integrity"]["problems"]
    if args.acknowledge:
        print(f"acknowledged {len(acknowledged)} change(s) made outside DP Studio, with "
              "the pessimistic charges: " + "; ".join(acknowledged) if acknowledged else
              "nothing to acknowledge: the ledger is as DP Studio wrote it",
              file=sys.stderr)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))
        return _tampered(args.project, problems)
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
        print(f"\ndataset #{ds['id']} {ds['name']}  {ds['fingerprint']}")
        if ds.get("budget_of") is not None:
            print(f"  shares the budget of dataset #{ds['budget_of']} (a version of it)")
        print(f"  path      {ds['path']}")
        print(f"  budget    ε = {e['budget_epsilon']}, δ = {e['budget_delta']} ({ds['relation']}, "
              f"{ds['accountant']} accountant)")
        print(f"  spent     ε = {e['spent_epsilon']}, δ = {e['spent_delta']}")
        print(f"  remaining ε = {e['remaining_epsilon']}, δ = {e['remaining_delta']}")
        by = ds.get("spent_by_accountant") or {}
        if ds["releases"] and by:
            _accountant_table(by, ds["accountant"])
        if ds["releases"]:
            print(f"  {'#':>4}  {'time (UTC)':<20}  {'status':<8}  {'ε':>8}  {'δ':>8}  release")
        for r in ds["releases"]:
            print(f"  {r['id']:>4}  {r['time']:<20}  {r['status']:<8}  {r['epsilon_exact']:>8}  "
                  f"{r['delta_exact']:>8}  {r['query']} of {r['column']} ({r['mechanism']}, "
                  f"{len(r['files'])} files)")
    return _tampered(args.project, problems)


def _accountant_table(by: dict, own: str) -> None:
    """ε spent under every accountant, side by side, at the same δ (Σδᵢ); the dataset's
    own accountant (the one its budget counts) marked."""
    delta = next(iter(by.values()))["delta_exact"]
    print(f"  spent under each accountant (δ = {delta}):")
    print("    " + "  ".join(f"{name + ('*' if name == own else ''):>10}" for name in by))
    print("    " + "  ".join(f"{_up(v['epsilon_exact']):>10}" for v in by.values()))
    print("    (* this dataset's accountant: its remaining budget follows it)")


def _up(text: str, digits: int = 4) -> str:
    """A spent ε to ``digits`` significant digits, rounded up (never shown below what
    was spent)."""
    from decimal import ROUND_CEILING, Decimal

    d = Decimal(text)
    if d == 0 or not d.is_finite():
        return str(d)
    q = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return format(d.quantize(q, rounding=ROUND_CEILING).normalize(), "f")


def _tampered(project: str, problems: list[str]) -> int:
    """Exit 0 for an intact ledger; else say what changed, in one line, and exit 2."""
    if not problems:
        return EXIT_OK
    from pathlib import Path

    from dpstudio.project.project import tamper_message

    return fail(tamper_message(Path(project), problems))
