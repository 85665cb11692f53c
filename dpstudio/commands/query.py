"""``dpstudio query``: release one differentially private statistic of a column."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

from dpstudio.commands._common import EXIT_OK, Parser

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
    from dpstudio.engine.queries import QUERIES, RELATIONS
    from dpstudio.engine.registry import REGISTRY

    central = [m.name for m in REGISTRY.select(trust_model="central")]
    p = Parser(
        prog="dpstudio query",
        description="Release one differentially private statistic of a column.",
        epilog="Negative bounds: write --bounds=-5,5. Bounds and categories must be declared "
        "(on the command line or in DATA.schema.json), never read off the data.",
    )
    p.add_argument("data", help="CSV, TSV, Parquet or Excel file")
    p.add_argument("--column", required=True, help="column to query")
    p.add_argument("--query", required=True, choices=QUERIES)
    p.add_argument("--mechanism", required=True, choices=central,
                   help="; ".join(f"{m.name}: {m.description}"
                                  for m in REGISTRY.select(trust_model="central")))
    p.add_argument("--epsilon", required=True, type=float, help="privacy-loss bound ε > 0")
    p.add_argument("--delta", type=float, default=0.0,
                   help="failure probability δ in [0, 1) (Gaussian mechanisms need δ > 0)")
    p.add_argument("--bounds", type=_bounds, help="declared LOWER,UPPER of the values")
    p.add_argument("--categories", help="declared categories for a histogram: a,b,c")
    p.add_argument("--bins", type=int, help="number of equal-width bins for a numeric histogram")
    p.add_argument("--quantile", type=float, help="q in [0,1] for --query quantile")
    p.add_argument("--relation", choices=RELATIONS, default="add-remove",
                   help="neighbouring datasets differ by adding/removing one record "
                   "(default) or by replacing one record's value")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="level of the reported confidence interval (default 0.95)")
    p.add_argument("--calibration", choices=("analytic", "classical"),
                   help="Gaussian calibration (default analytic)")
    p.add_argument("--candidates", type=int, help="candidate values for quantiles (default 1024)")
    p.add_argument("--simulate", type=int, metavar="SEED",
                   help="draw noise from a seeded generator: a simulation, NOT a release")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _declared(data_path: str, column: str) -> Any:
    """The column's declaration from the dataset's sidecar schema, if there is one."""
    from dpstudio.data.schema import schema_for

    schema = schema_for(data_path)
    return None if schema is None else schema.get(column)


def run(argv: Sequence[str]) -> int:
    from dpstudio.data.columns import category_column, numeric_column, yes_no_column
    from dpstudio.data.loading import load_table
    from dpstudio.data.schema import ColumnType
    from dpstudio.engine.queries import QuerySpec, run_query
    from dpstudio.engine.rng import SecureSource, SimulationSource

    args = parser().parse_args(argv)
    frame = load_table(args.data)
    declared = _declared(args.data, args.column)
    notes = []
    bounds, categories = args.bounds, None
    if args.categories is not None:
        categories = tuple(c.strip() for c in args.categories.split(",") if c.strip())
    if bounds is None and declared is not None and declared.lower is not None:
        bounds = (declared.lower, declared.upper)
        notes.append(f"bounds {bounds[0]:g},{bounds[1]:g} as declared in the dataset's schema")
    if args.query == "histogram" and categories is None and args.bins is None:
        if declared is not None and declared.categories:
            categories = tuple(declared.categories)
            notes.append("categories as declared in the dataset's schema")
    params: dict[str, Any] = {}
    if args.calibration:
        params["calibration"] = args.calibration
    if args.candidates:
        params["candidates"] = args.candidates
    spec = QuerySpec(
        query=args.query, mechanism=args.mechanism, epsilon=args.epsilon, delta=args.delta,
        bounds=bounds, categories=categories, bins=args.bins, quantile=args.quantile,
        relation=args.relation, confidence=args.confidence, params=params, column=args.column,
    ).validated()
    categorical = args.query == "histogram" and categories is not None
    if categorical and declared is not None and declared.type is ColumnType.BOOLEAN:
        values = yes_no_column(frame, args.column)
    elif categorical or args.query == "count":
        values = category_column(frame, args.column)
    else:
        values = numeric_column(frame, args.column)
    source = SimulationSource(args.simulate) if args.simulate is not None else SecureSource()
    result = run_query(values, spec, source)
    result.notes = notes + result.notes
    if args.json:
        out = result.to_dict()
        analyst = {"clamped": out.pop("clamped")}
        out["analyst_only"] = analyst
        print(json.dumps(out, indent=2, allow_nan=False, default=_json_default))
    else:
        _print_release(result)
    return EXIT_OK


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _fmt(x: float) -> str:
    return f"{x:.6g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _print_release(r: Any) -> None:
    kind = "SIMULATION (seeded generator, not a release)" if r.simulated else "release"
    print(f"{r.query} of {r.column!r} — {kind}")
    if isinstance(r.value, dict):
        width = max(len(k) for k in r.value)
        for label, v in r.value.items():
            print(f"  {label:<{width}}  {_fmt(v):>12}   [{_fmt(r.ci_low[label])}, "
                  f"{_fmt(r.ci_high[label])}]")
    else:
        print(f"  value        {_fmt(r.value)}")
        if r.ci_low is not None:
            print(f"  {r.confidence:.0%} interval [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]")
    print(f"  mechanism    {r.mechanism} ({r.relation}), ε = {r.epsilon:g}, δ = {r.delta:g}")
    print(f"  sensitivity  {_fmt(r.sensitivity)}")
    if r.noise_scale is not None:
        print(f"  noise scale  {_fmt(r.noise_scale)}")
    for note in r.notes:
        print(f"  note: {note}")
    if r.clamped:
        print(f"  analyst only (not released): {r.clamped} values outside the declaration")
    print(f"  randomness   {r.source}")


