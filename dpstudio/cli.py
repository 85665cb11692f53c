"""The ``dpstudio`` command line: the GUI by default, headless commands by name.

    dpstudio [DATASET] [--screenshot FILE.png] [--size 1400x900]
    dpstudio query DATA --column C --query mean --bounds 0,100 --mechanism laplace --epsilon 1
    dpstudio mechanisms [--json]

Errors are one line on stderr with exit code 2; no tracebacks for bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["main"]

EXIT_OK, EXIT_USAGE = 0, 2


class CliError(Exception):
    """A user-facing one-line error; exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line, prefixed with the program name."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _fail(message: str) -> int:
    print(f"dpstudio: error: {message}", file=sys.stderr)
    return EXIT_USAGE


# ----------------------------------------------------------------------------- parsing


def _bounds(text: str) -> tuple[float, float]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected LOWER,UPPER (e.g. 0,100), got {text!r}")
    try:
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise argparse.ArgumentTypeError(f"bounds must be numbers, got {text!r}") from None


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected WIDTHxHEIGHT (e.g. 1400x900), got {text!r}") from None
    if not (100 <= w <= 10000 and 100 <= h <= 10000):
        raise argparse.ArgumentTypeError(f"size out of range: {text!r}")
    return w, h


def _query_parser() -> argparse.ArgumentParser:
    from dpstudio.engine.queries import QUERIES, RELATIONS
    from dpstudio.engine.registry import REGISTRY

    central = [m.name for m in REGISTRY.select(trust_model="central")]
    p = _Parser(
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


def _mechanisms_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dpstudio mechanisms", description="List the mechanism registry.")
    p.add_argument("--trust-model", help="only mechanisms of this trust model")
    p.add_argument("--json", action="store_true", help="print JSON")
    return p


def _gui_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="dpstudio",
        description="DP Studio: differential privacy across trust models. Starts the "
        "application; headless commands: " + ", ".join(COMMANDS) + " (dpstudio COMMAND -h).",
    )
    p.add_argument("dataset", nargs="?", help="dataset to open (default: the survey sample)")
    p.add_argument("--screenshot", metavar="FILE.png",
                   help="render the main window offscreen to a PNG and exit")
    p.add_argument("--size", type=_size, default=(1400, 900), metavar="WxH",
                   help="window size for --screenshot (default 1400x900)")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


# ---------------------------------------------------------------------------- commands


def _declared(data_path: str, column: str) -> Any:
    """The column's declaration from the dataset's sidecar schema, if there is one."""
    from dpstudio.data.schema import schema_for

    schema = schema_for(data_path)
    return None if schema is None else schema.get(column)


def _cmd_query(argv: Sequence[str]) -> int:
    from dpstudio.data.columns import category_column, numeric_column, yes_no_column
    from dpstudio.data.loading import load_table
    from dpstudio.data.schema import ColumnType
    from dpstudio.engine.queries import QuerySpec, run_query
    from dpstudio.engine.rng import SecureSource, SimulationSource

    args = _query_parser().parse_args(argv)
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


def _cmd_mechanisms(argv: Sequence[str]) -> int:
    from dpstudio.engine.registry import REGISTRY

    args = _mechanisms_parser().parse_args(argv)
    entries = [m for m in REGISTRY
               if args.trust_model is None or args.trust_model in m.trust_models]
    if args.json:
        print(json.dumps([m.to_dict() for m in entries], indent=2, ensure_ascii=False))
        return EXIT_OK
    for m in entries:
        print(f"{m.name:<18} [{', '.join(m.trust_models)}] {m.description}")
        for p in m.params:
            unit = f" {p.unit}" if p.unit else ""
            print(f"{'':<20}--{p.name} ({p.kind}, default {p.default}{unit}): {p.help}")
    return EXIT_OK


def _cmd_gui(argv: Sequence[str]) -> int:
    args = _gui_parser().parse_args(argv)
    if args.version:
        from dpstudio import __version__

        print(f"dpstudio {__version__}")
        return EXIT_OK
    from dpstudio.ui.app import run_app

    return run_app(args.dataset, screenshot=args.screenshot, size=args.size)


COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "query": _cmd_query,
    "mechanisms": _cmd_mechanisms,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``dpstudio``; returns the exit code."""
    from dpstudio.data.errors import DataError
    from dpstudio.engine.errors import EngineError

    argv = list(sys.argv[1:] if argv is None else argv)
    command = COMMANDS.get(argv[0]) if argv else None
    try:
        if command is not None:
            return command(argv[1:])
        return _cmd_gui(argv)
    except (EngineError, DataError, CliError) as err:
        return _fail(str(err))
    except SystemExit as stop:  # argparse's own exits (--help, usage errors)
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return _fail("interrupted")
    except OSError as err:
        return _fail(f"{err.strerror or err}: {err.filename}" if err.filename else str(err))
