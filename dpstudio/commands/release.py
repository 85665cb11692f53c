"""``dpstudio release``: perform a release from a spec file, recorded in a project ledger.

Exit codes: 0 done, 2 bad input (spec, dataset, output folder, project), 3 budget
exceeded. Errors are one line; a refused release charges nothing and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from dpstudio.commands._common import EXIT_BUDGET, EXIT_OK, Parser, fail

__all__ = ["EXIT_BUDGET", "parser", "run"]



def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="dpstudio release",
        description="Perform the release a spec file describes, charge it to the dataset's "
        "budget in the project's ledger, and write its files (exports, manifest, and "
        "optionally a report and a reproducible script) to the output folder. A report also "
        "gets the analyst's copy (n and the clamping bias, measured on the data: not for "
        "publication), written to a private folder beside the project file "
        "(study.dpstudio → study.analyst/), never to the output folder.",
        epilog="Exit codes: 0 released, 2 bad input (or a ledger changed outside DP Studio: "
        "see dpstudio ledger --acknowledge), 3 budget exceeded. A dataset is its rows as "
        "parsed: a re-encoded or reordered copy spends the same budget, and a file that looks "
        "like a version of a registered dataset needs --share-budget-with or "
        "--separate-budget. Spec format: see "
        "dpstudio.project.spec (schema_version = 1; schema_version = 2 is a release plan: "
        "several [[statistics]] under one epsilon, split by [split] weights or accuracy "
        "targets, see dpstudio.project.spec_plan; dataset, column, query, mechanism, "
        "epsilon, …; trust_model = \"local\" for a local-model histogram or mean; "
        "trust_model = \"shuffle\" (cloak, blanket) or \"distributed\" (secagg_gaussian, "
        "skellam; [params] max_dropouts) for a sum or mean whose manifest says what each "
        "party sees and what is trusted; query = "
        "\"logistic_regression\" with features = [...] for a DP model; query = \"train\" with "
        "the keys of dpstudio train (label, features, model, method, epochs, sites_by, "
        "fed_variant, …) for a trained model, its coefficients or weights (.npz) and a "
        "model card, never its held-out metrics; accountant = basic, "
        "advanced, zcdp or pld, default the dataset's, or for its first release the "
        "project's). The ledger stores what each release drew, so a tight accountant "
        "composes it. The dataset may be a "
        "folder or glob of Parquet or CSV files (a central count, sum, mean, variance, "
        "histogram or quantile, or a local histogram or mean: each file's rows randomized "
        "where they are, no collector's records): each file is read and hashed once where "
        "it is, on Dask with engine = \"dask\" or file by file here, and the manifest "
        "lists every file's SHA-256.",
    )
    p.add_argument("spec", metavar="SPEC.toml", help="release spec (TOML)")
    p.add_argument("--project", required=True, metavar="P.dpstudio",
                   help="project file (create one with: dpstudio project init)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--json", action="store_true", help="print the ledger entry as JSON (with "
                   "analyst_report: the analyst's copy of the report, not for publication)")
    whose = p.add_mutually_exclusive_group()
    whose.add_argument("--share-budget-with", type=int, metavar="ID",
                       help="the spec's dataset is a version of registered dataset ID (the "
                       "same people): release it under that dataset's budget (spec key: "
                       "share_budget_with)")
    whose.add_argument("--separate-budget", action="store_true",
                       help="the spec's dataset looks like a version of a registered dataset "
                       "but holds other people: give it a budget of its own (spec key: "
                       "separate_budget)")
    p.add_argument("--engine", choices=("pandas", "dask", "auto"),
                   help="where the sums are computed (spec key: engine; default auto)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing Dask scheduler, tcp://host:8786 (spec key: scheduler; "
                   "default: a local cluster, closed afterwards)")
    return p


def _fmt(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _with_engine(spec: Any, args: argparse.Namespace) -> Any:
    """The spec with the command line's --engine / --scheduler, which win over its keys."""
    from dpstudio.project import SpecError

    engine = args.engine or (spec.engine if not args.scheduler else "dask")
    scheduler = args.scheduler or spec.scheduler
    if scheduler and engine == "pandas":
        raise SpecError("--scheduler names a Dask cluster: it goes with --engine dask (or auto)")
    if engine == "dask":
        from dpstudio.execution.engines import require_dask

        require_dask()  # one line now, before the project is opened and locked
    return replace(spec, engine=engine, scheduler=scheduler)


def run(argv: Sequence[str]) -> int:
    from dpstudio.export.errors import ExportError
    from dpstudio.project import BudgetExceededError, Project, ProjectError, load_spec

    args = parser().parse_args(argv)
    try:
        spec = load_spec(args.spec)
        if hasattr(spec, "plan"):  # schema_version = 2: a release plan
            from dpstudio.commands.release_plan import run_plan

            return run_plan(spec, args)
        if args.share_budget_with is not None or args.separate_budget:
            spec = replace(spec, share_budget_with=args.share_budget_with,
                           separate_budget=bool(args.separate_budget))
        spec = _with_engine(spec, args)
        with Project.open(args.project) as project:
            record = project.release(spec, args.out)
            budget = project.budget(record.dataset_id)
            name = project.dataset(record.dataset_id).name
    except BudgetExceededError as err:
        print(f"dpstudio: error: {err}", file=sys.stderr)
        return EXIT_BUDGET
    except (ProjectError, ExportError) as err:
        return fail(str(err))
    analyst, analyst_note = record.analyst_report, record.analyst_note
    if args.json:
        out = record.to_dict() | {"dataset": name, "budget": budget.to_dict(),
                                  "analyst_report": None if analyst is None else str(analyst)}
        print(json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False))
        return EXIT_OK
    r = record.result or {}
    print(f"release #{record.id} {record.status}: {record.query} of {record.column!r} "
          f"({record.mechanism}, ε = {_fmt(float(record.epsilon))}, δ = "
          f"{_fmt(float(record.delta))})")
    if r.get("query") == "train":  # a trained model: never its held-out metrics
        from dpstudio.project.release_model import summary_lines

        print("\n".join(summary_lines(r)))
    elif r.get("model") is not None:  # coefficients (log-odds), the intercept last
        for label, v in r["value"].items():
            print(f"  {label:<24} {_fmt(v):>12}")
        print(f"  noise        {r.get('noise_family')}, scale {_fmt(r.get('noise_scale'))} "
              f"(λ = {_fmt(r.get('lambda'))}, n = {r.get('n')})")
    elif isinstance(r.get("value"), dict):
        for label, v in r["value"].items():
            print(f"  {label:<16} {_fmt(v):>12}   [{_fmt(r['ci_low'][label])}, "
                  f"{_fmt(r['ci_high'][label])}]")
    else:
        print(f"  value        {_fmt(r.get('value'))}")
        if r.get("ci_low") is not None:
            print(f"  {r['confidence']:.0%} interval [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]")
    for note in r.get("notes", []):
        print(f"  note: {note}")
    print(f"  files in {record.out_dir}:")
    for f in record.files:
        print(f"    {f.name}")
    if analyst is not None:  # in the project's private folder, never among the files above
        print(f"  analyst's copy (do not publish): {analyst}")
    elif analyst_note:
        print(f"  note: {analyst_note}")
    print(f"  budget of {name}: {budget.describe()}")
    return EXIT_OK
