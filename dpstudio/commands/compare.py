"""``dpstudio compare``: each trust model's expected error on one column, like with like.

The headless twin of the application's privacy–utility comparison: for each trust model
and its default mechanism (``--mechanism`` pins one), the expected error at ε (RMSE in the
column's units) = √(noise² + bias²), with the bias of clamping measured on the data, and
the assumptions each number rests on — from :mod:`dpstudio.analysis.compare`, the very
functions the plot and its readout use. It releases nothing and draws no real noise; the
bias is read off the raw data, so its output is for the analyst's eyes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from dpstudio.commands._common import EXIT_OK, CliError, Parser

__all__ = ["parser", "run"]


def _bounds(text: str) -> tuple[float, float]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected LOWER,UPPER (e.g. 0,100), got {text!r}")
    try:
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise argparse.ArgumentTypeError(f"bounds must be numbers, got {text!r}") from None


def parser() -> argparse.ArgumentParser:
    from dpstudio.engine.queries import RELATIONS
    from dpstudio.engine.registry import DELTA, EPSILON, REGISTRY

    p = Parser(
        prog="dpstudio compare",
        description="Expected error of each trust model's release of one statistic, at the "
        "same ε, δ, neighbouring relation and treatment of n: RMSE = √(noise² + bias²) in "
        "the column's units, the bias of clamping measured on the data. Releases nothing "
        "and draws no real noise; for the analyst's eyes only.",
        epilog="Negative bounds: write --bounds=-5,5. Bounds and categories are declared "
        "(here or in DATA.schema.json), never read off the data.",
    )
    p.add_argument("data", help="CSV, TSV, Parquet or Excel file")
    p.add_argument("--no-header", dest="header", action="store_false",
                   help="the file's first line is data, not column names")
    p.add_argument("--column", required=True, help="the column")
    p.add_argument("--query", required=True, choices=("mean", "sum", "count", "variance",
                                                      "histogram"))
    group = p.add_mutually_exclusive_group()
    group.add_argument("--bounds", type=_bounds, help="declared LOWER,UPPER of the values")
    group.add_argument("--categories", help="declared categories for a histogram: a,b,c")
    p.add_argument("--bins", type=int, default=10,
                   help="equal-width bins of a numeric histogram (default 10)")
    p.add_argument("--epsilon", required=True, type=float,
                   help=f"{EPSILON.help} ({EPSILON.label} > 0)")
    p.add_argument("--delta", type=float, default=DELTA.default,
                   help=f"{DELTA.help} The same δ for every model (pure mechanisms meet it "
                   f"with δ = 0). Default {DELTA.default:g}.")
    p.add_argument("--relation", choices=RELATIONS, default="replace",
                   help="neighbouring relation of the comparison (default replace: the one "
                   "every trust model can be stated under, with n known; under add-remove "
                   "only the central model follows, the others say so)")
    p.add_argument("--mechanism", choices=REGISTRY.names(),
                   help="pin this mechanism for its trust model (the others keep their "
                   "default; central's default is the best central mechanism at (ε, δ))")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    return _run(args)


def _column(args: argparse.Namespace) -> tuple[Any, Any, tuple | None, tuple | None, str]:
    """The frame's column as the dataset declares it: values, declaration, bounds,
    categories and the column type (the way ``dpstudio query`` reads a dataset)."""
    from dpstudio.analysis import declared_fill
    from dpstudio.data.columns import category_column, column_values, numeric_column
    from dpstudio.data.loading import load_table
    from dpstudio.data.schema import schema_for

    frame = load_table(args.data, header=args.header, columns=[args.column])  # it alone
    for note in frame.attrs.get("load_notes", ()):  # for the analyst, never in the output
        print(f"dpstudio: note: {note}", file=sys.stderr)
    schema = schema_for(args.data)
    declared = None if schema is None else schema.get(args.column)
    categories = None
    if args.categories is not None:
        categories = tuple(c.strip() for c in args.categories.split(",") if c.strip())
    numeric = declared is None or declared.type.value == "numeric"
    bins = args.bins if categories is None and numeric else None
    bounds, categories, _ = declared_fill(args.query, declared, args.bounds, categories, bins)
    if declared is not None and declared.type.value != "text":
        kind = declared.type.value
        values = column_values(frame, declared)
    elif categories is not None:
        kind, values = "categorical", category_column(frame, args.column)
    else:
        kind, values = "numeric", numeric_column(frame, args.column)
    if kind in ("categorical", "boolean"):
        if categories is None:
            categories = ("yes", "no") if kind == "boolean" else None
        if categories is None:
            raise CliError(f"a histogram of {args.column!r} needs declared categories "
                           "(--categories a,b,c)")
    elif bounds is None:
        raise CliError(f"a {args.query} of {args.column!r} needs declared bounds "
                       "(e.g. --bounds 0,100)")
    return values, declared, bounds, categories, kind


def _run(args: argparse.Namespace) -> int:
    from dpstudio.analysis.choices import Choices, registry_value_types
    from dpstudio.analysis.compare import comparison_at
    from dpstudio.analysis.footing import delta_text
    from dpstudio.engine.calibration import validate_delta, validate_epsilon
    from dpstudio.engine.registry import REGISTRY

    epsilon, delta = validate_epsilon(args.epsilon), validate_delta(args.delta)
    values, _, bounds, categories, kind = _column(args)
    query = "histogram" if kind in ("categorical", "boolean") and args.query != "count" \
        else args.query
    if args.mechanism and query not in REGISTRY.get(args.mechanism).queries:
        raise CliError(f"{args.mechanism} does not answer a {query} (it answers "
                       f"{', '.join(REGISTRY.get(args.mechanism).queries)})")
    s = Choices(column=args.column, column_type=kind,
                value_types=registry_value_types(kind, values), trust_model="central",
                query=query, mechanism="laplace", epsilon=epsilon, delta=delta,
                bounds=bounds if kind == "numeric" else None, categories=categories,
                bins=args.bins, relation=args.relation)
    report = comparison_at(s, values, epsilon, args.mechanism)
    rows = report["models"]
    if not any(r["rmse"] is not None for r in rows):
        raise CliError(f"no trust model has an error model for a {query} of this column")
    out = {"models": rows, "analyst_only": True, "note": report["note"], "released": False,
           "column": args.column, "query": query, "n": int(len(values)),
           "epsilon": epsilon, "delta": delta, "relation": args.relation,
           "footing": report["footing"], "clamping": report["clamping"]}
    clamping = report["clamping"]
    if args.json:
        print(json.dumps(out, indent=2, allow_nan=False, default=_json_default))
        return EXIT_OK
    print(f"compare: {query} of {args.column!r} at ε = {epsilon:g}, δ = {delta_text(delta)} "
          f"({args.relation}) — FOR THE ANALYST'S EYES ONLY")
    print(f"  {out['note']}")
    print(f"  {'trust model':<12} {'mechanism':<18} {'RMSE':>10} {'noise':>10} {'bias':>10}"
          "   assumptions")
    for r in rows:
        if r["rmse"] is None:  # listed with why, not silently dropped
            print(f"  {r['trust_model']:<12} {r['mechanism']:<18} {'—':>10} {'—':>10} "
                  f"{_fmt(r['bias']):>10}   {r['reason']}")
            continue
        print(f"  {r['trust_model']:<12} {r['mechanism']:<18} {_fmt(r['rmse']):>10} "
              f"{_fmt(r['noise']):>10} {_fmt(r['bias']):>10}   {r['assumptions']}")
    print(f"  compared at: {out['footing']}")
    if clamping is not None and clamping.get("warning"):
        print(f"  warning: {clamping['warning']}")
    return EXIT_OK


def _fmt(x: float) -> str:
    return f"{x:.4g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")
