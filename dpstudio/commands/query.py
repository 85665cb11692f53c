"""``dpstudio query``: release one differentially private statistic of a column."""

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



#: Said in every output: a query is never recorded in a project's ledger.
LEDGER_NOTE = ("not charged to any ledger: dpstudio query records nothing; publish through "
               "a project (dpstudio release) to charge a dataset's budget")


def _lean(trust: str, query: str) -> str | None:
    """``query`` when the engine takes its column as presence or codes under ``trust``
    (:attr:`~dpstudio.analysis.capabilities.Capability.lean`), else None."""
    from dpstudio.analysis.capabilities import capability

    return query if query in capability(trust).lean else None


def _queryable() -> list[Any]:
    """The registry entries ``dpstudio query`` runs: those answering a query (training
    methods such as DP-SGD answer none here: ``dpstudio train`` runs them)."""
    from dpstudio.engine.registry import REGISTRY

    return [info for info in REGISTRY if info.queries]


def _mechanism_params() -> dict[str, list[tuple[str, Any]]]:
    """Every parameter of the entries ``dpstudio query`` runs except ε and δ:
    name → [(mechanism, Param)]."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for info in _queryable():
        for param in info.params:
            if param.name not in ("epsilon", "delta"):
                found.setdefault(param.name, []).append((info.name, param))
    return found


def parser() -> argparse.ArgumentParser:
    from dpstudio.analysis.dispatch import runnable_trust_models
    from dpstudio.engine.queries import QUERIES, RELATIONS
    from dpstudio.engine.registry import DELTA, EPSILON, REGISTRY

    queries = sorted(set(QUERIES) | {q for m in REGISTRY for q in m.queries})
    p = Parser(
        prog="dpstudio query",
        description="Release one differentially private statistic of a column, under the "
        "central, local, shuffle or distributed (secure aggregation) trust model.",
        epilog="Negative bounds: write --bounds=-5,5. Bounds and categories must be declared "
        "(on the command line or in DATA.schema.json), never read off the data.",
    )
    p.add_argument("data", help="CSV, TSV, Parquet or Excel file, a folder or glob of "
                   "Parquet or CSV files (declared schema: FOLDER.schema.json), or "
                   "sample:NAME for a bundled sample (sample:survey, sample:health)")
    p.add_argument("--no-header", dest="header", action="store_false",
                   help="the file's first line is data, not column names (columns are "
                   "then named 1, 2, …)")
    p.add_argument("--column", required=True, help="column to query")
    p.add_argument("--query", required=True, choices=queries)
    p.add_argument("--mechanism", required=True, choices=[m.name for m in _queryable()],
                   help="; ".join(f"{m.name} [{', '.join(m.trust_models)}]: {m.description}"
                                  for m in _queryable()))
    p.add_argument("--trust-model", choices=runnable_trust_models(),
                   help="who is trusted (default: the mechanism's own trust model)")
    p.add_argument("--epsilon", required=True, type=float,
                   help=f"{EPSILON.help} ({EPSILON.label} > 0)")
    p.add_argument("--delta", type=float, default=0.0,
                   help=f"{DELTA.help} Default 0; Gaussian mechanisms need δ > 0.")
    p.add_argument("--bounds", type=_bounds, help="declared LOWER,UPPER of the values")
    p.add_argument("--categories", help="declared categories for a histogram: a,b,c")
    p.add_argument("--bins", type=int, help="number of equal-width bins for a numeric histogram")
    p.add_argument("--quantile", type=float, help="q in [0,1] for --query quantile")
    p.add_argument("--relation", choices=RELATIONS, default="add-remove",
                   help="neighbouring datasets differ by adding/removing one record "
                   "(default) or by replacing one record's value")
    p.add_argument("--missing", choices=("drop", "impute"),
                   help="central sum, mean, variance: drop missing values (empty, NaN, ±inf; "
                   "default; under replace the sensitivity then covers a value appearing) or "
                   "impute a declared constant (then every row counts and, under replace, "
                   "n is public: a mean uses the whole budget on its sum)")
    p.add_argument("--impute", type=float, metavar="VALUE",
                   help="the constant imputed for missing values, inside the bounds "
                   "(implies --missing impute; default: the midpoint of the bounds)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="level of the reported confidence interval (default 0.95)")
    p.add_argument("--postprocess", choices=("none", "clip", "simplex"), default="none",
                   help="local histograms: keep unbiased estimates (default), clip negatives "
                   "and renormalize, or project onto the simplex")
    p.add_argument("--dropouts", type=int, default=0,
                   help="distributed: clients that drop out after masking (default 0; "
                   "more than the declared --max-dropouts is refused: the noise is planned "
                   "before anyone drops)")
    p.add_argument("--features", help="models: the feature columns, a,b,c (--column is the "
                   "yes/no label); their bounds come from the dataset's declared schema")
    p.add_argument("--identifier", metavar="COL",
                   help="central: the column identifying a person; the release protects "
                   "people (add or remove one person with up to --max-rows rows). Default: "
                   "the identifier column the dataset's schema declares, if any")
    p.add_argument("--max-rows", type=int, metavar="K",
                   help="with --identifier: the declared maximum of rows per person (rows "
                   "beyond it are dropped at random first; default: the schema's max_rows)")
    p.add_argument("--export-records", metavar="FILE.csv",
                   help="local: write the privatized records, exactly what the collector gets")
    group = p.add_argument_group("mechanism parameters (from the registry)")
    for name, users in _mechanism_params().items():
        param = users[0][1]
        group.add_argument("--" + name.replace("_", "-"), dest="param_" + name,
                           metavar=param.kind.upper(),
                           help=f"{param.help} [{', '.join(m for m, _ in users)}]")
    p.add_argument("--engine", choices=("pandas", "dask", "auto"), default="auto",
                   help="where the sums are computed: pandas in this process, dask on a "
                   "cluster (one task per file; central count, sum, mean, variance, "
                   "histogram), or auto (default: dask for a folder larger than an eighth of "
                   "memory when Dask is installed, else pandas)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing Dask scheduler (tcp://host:8786); without it the dask "
                   "engine starts a local cluster and closes it afterwards")
    p.add_argument("--simulate", type=int, metavar="SEED",
                   help="draw noise from a seeded generator: a simulation, NOT a release")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--analyst", action="store_true",
                   help="also print analyst-only numbers read off the raw data without noise "
                   "(values clamped, missing values): for your eyes, never to publish")
    return p


def _schema(data_path: str) -> Any:
    """The dataset's sidecar schema, if there is one (a folder's or glob's:
    ``FOLDER.schema.json``, beside it)."""
    from dpstudio.data.folders import folder_sidecar_path, is_multi_file
    from dpstudio.data.schema import load_schema, schema_for

    if is_multi_file(data_path):
        sidecar = folder_sidecar_path(data_path)
        return load_schema(sidecar) if sidecar.is_file() else None
    return schema_for(data_path)


def _declared(data_path: str, column: str) -> Any:
    """The column's declaration from the dataset's sidecar schema, if there is one."""
    schema = _schema(data_path)
    return None if schema is None else schema.get(column)


def _identifier(args: argparse.Namespace, schema: Any) -> str | None:
    """The identifier column of a user-level query: --identifier, else the one the
    schema declares (a declared identifier makes every query user-level); or None."""
    declared = [c.name for c in (schema or ()) if c.type == "identifier"]
    name = args.identifier or (declared[0] if declared else None)
    if name is None and args.max_rows is not None:
        raise CliError("--max-rows K bounds each person's rows: it goes with --identifier COL")
    return name


def run(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    return _run(args)


def _missing(args: argparse.Namespace, trust: str) -> str:
    """The missing-value treatment asked for: --impute implies impute; central only."""
    from dpstudio.analysis import capability

    if args.impute is not None and args.missing == "drop":
        raise CliError("--impute VALUE imputes missing values: it cannot go with "
                       "--missing drop")
    missing = "impute" if args.impute is not None else (args.missing or "drop")
    if missing == "impute" and "missing" not in capability(trust).options:
        raise CliError("--missing impute / --impute apply to central-model queries")
    return missing


def _run(args: argparse.Namespace) -> int:
    from dpstudio.analysis import capability, declared_fill
    from dpstudio.analysis import run as run_analysis
    from dpstudio.data.loading import load_table
    from dpstudio.data.samples import data_argument
    from dpstudio.engine.registry import REGISTRY
    from dpstudio.engine.rng import SecureSource, SimulationSource

    info = REGISTRY.get(args.mechanism)
    trust = args.trust_model or info.trust_models[0]
    if trust not in info.trust_models:
        raise CliError(f"{args.mechanism} belongs to the {', '.join(info.trust_models)} "
                       f"trust model, not {trust}")
    row = capability(trust)
    if args.query == "heavy_hitters" and args.query not in row.queries:
        raise CliError("heavy_hitters is a local protocol: use --mechanism sfp")
    if args.export_records and "records" not in row.options:
        raise CliError("--export-records applies to local protocols (the records they send)")
    args.missing = _missing(args, trust)
    args.data = data_argument(args.data)  # sample:NAME → the bundled file, sidecar beside it
    files, engine = _engine(args)
    if engine == "dask" and args.export_records:
        raise CliError("--export-records needs every report, and on the dask engine each "
                       "file returns only its reports' aggregate: use --engine pandas")
    schema = _schema(args.data)
    declared = None if schema is None else schema.get(args.column)
    args.identifier = _identifier(args, schema)
    if args.identifier is not None and engine == "dask":  # e.g. auto on a large folder
        raise CliError("a user-level query (identifier) bounds each person's rows in this "
                       "process: use --engine pandas")
    categories = None
    if args.categories is not None:
        categories = tuple(c.strip() for c in args.categories.split(",") if c.strip())
    bounds, categories, notes = declared_fill(args.query, declared, args.bounds, categories,
                                              args.bins)
    if engine == "dask":
        frame = None
    elif files is not None:  # a folder that fits: read into this process, file by file
        frame = _folder_frame(files, args)
    elif (info.kind != "model" and _lean(trust, args.query) == "histogram"
          and categories is not None and args.identifier is None):
        frame = None  # read straight into codes by _Context.values, never as texts
    else:
        frame = load_table(args.data, header=args.header, columns=_columns_read(args))
    for note in getattr(frame, "attrs", {}).get("load_notes", ()):  # the analyst's only
        print(f"dpstudio: note: {note}", file=sys.stderr)
    params = {name: getattr(args, "param_" + name) for name in _mechanism_params()
              if getattr(args, "param_" + name) is not None}
    source = SimulationSource(args.simulate) if args.simulate is not None else SecureSource()
    context = _Context(args, frame, declared, bounds, categories, params, source, notes)
    execution: dict[str, Any] = {"engine": "pandas"}
    if engine == "dask":
        if info.kind == "model":
            raise CliError("the dask engine runs central-model count, sum, mean, variance "
                           "and histogram for now; use --engine pandas for a model")
        result, execution = _run_dask(_analysis(context, trust), files, declared, source,
                                      notes, args)
    else:
        ids = None
        if info.kind == "model":
            if args.identifier is not None:
                raise CliError("a user-level release (identifier) runs under the central "
                               "model's count, sum, mean, variance and histogram, not a model")
            analysis, values = _model(context)
            notes = []  # a model states its own relation and imputation
        else:
            analysis = _analysis(context, trust)
            if args.identifier is not None:  # user-level: checked, rows bounded by person
                from dpstudio.analysis.contribution import resolve_user_level
                from dpstudio.data.columns import category_column

                analysis, more = resolve_user_level(analysis, schema)
                notes = notes + more
                ids = category_column(frame, args.identifier)
            # A central count or histogram takes presence or codes, not a text per row.
            values = context.values(analysis.reads_labels,
                                    lean=bool(_lean(trust, args.query)) and ids is None)
        result = run_analysis(analysis, values, source, notes=notes, ids=ids)
    out = result.to_dict(analyst=True)
    out["execution"] = execution
    if args.export_records:
        _write_records(args.export_records, result.records())
        out["records_file"] = args.export_records
    if not args.json:
        _PRINTERS[result.shape](result, out, f"{args.query} of {args.column!r}, "
                                f"{capability(result.analysis.kind).title}", args.analyst)
    if not args.analyst:  # numbers read off the raw data, without noise: only when asked
        out.pop("analyst_only", None)
    out["charged"] = False
    out["ledger"] = LEDGER_NOTE
    if args.json:
        print(json.dumps(out, indent=2, allow_nan=False, default=_json_default))
    else:
        print(f"  engine       {_engine_text(execution)}")
        print(f"  ledger       {LEDGER_NOTE}")
    return EXIT_OK


def _engine(args: argparse.Namespace) -> tuple[Any, str]:
    """The dataset's files (None for one file) and the engine that runs the query."""
    from dpstudio.data.folders import is_multi_file, open_files
    from dpstudio.execution.engines import choose_engine, require_dask

    if args.scheduler and args.engine == "pandas":
        raise CliError("--scheduler names a Dask cluster: it goes with --engine dask (or auto)")
    files = open_files(args.data, header=args.header) if is_multi_file(args.data) else None
    if args.engine == "dask" or args.scheduler:
        require_dask()
        engine = "dask"
    elif files is None:
        engine = "pandas"  # one file is one partition: nothing to spread
    else:
        engine = choose_engine(args.engine, files.total_bytes)
    if engine == "dask" and files is None:  # one file: one partition
        from pathlib import Path

        from dpstudio.data.folders import FileDataset
        from dpstudio.data.loading import load_table

        p = Path(args.data)
        if not p.is_file():
            load_table(p)  # the loader's one-line message (not found, a folder, …)
        fmt = "parquet" if p.suffix.lower() in (".parquet", ".pq") else "csv"
        files = FileDataset(str(p), (p,), fmt, (), {}, p.stat().st_size)
    return files, engine


def _folder_frame(files: Any, args: argparse.Namespace) -> Any:
    """The columns a query reads from every file of a folder, in one frame (pandas)."""
    import pandas as pd

    from dpstudio.data.loading import load_table

    frames = [load_table(f, header=args.header, columns=_columns_read(args))
              for f in files.files]
    return pd.concat(frames, ignore_index=True)


def _run_dask(analysis: Any, files: Any, declared: Any, source: Any, notes: list[str],
              args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The analysis's sums on Dask, one task per file; the noise drawn here, once."""
    from dpstudio.execution.run import run_on_files

    run = run_on_files(analysis, files, source, scheduler=args.scheduler, declared=declared,
                       header=args.header, seed=args.simulate, notes=notes)
    return run.result, run.execution


def _engine_text(execution: dict[str, Any]) -> str:
    if execution.get("engine") != "dask":
        return "pandas (in this process)"
    from dpstudio.execution.engines import LOCAL_SCHEDULER

    where = ("a local cluster" if execution.get("scheduler") == LOCAL_SCHEDULER
             else f"the cluster at {execution.get('scheduler')}")
    return (f"dask on {where}: {execution.get('workers')} workers, "
            f"{execution.get('threads')} threads, {execution.get('partitions')} files")


def _columns_read(args: argparse.Namespace) -> list[str]:
    """The columns a query reads: its column, and a model's features. Only these are
    loaded (a one-column mean of a wide table reads one column's bytes, not the table's)."""
    features = [f.strip() for f in (args.features or "").split(",") if f.strip()]
    identifier = [args.identifier] if getattr(args, "identifier", None) else []
    return list(dict.fromkeys([args.column, *features, *identifier]))


class _Context:
    """What an analysis needs from the command line."""

    def __init__(self, args, frame, declared, bounds, categories, params, source, notes):
        self.args, self.frame, self.declared = args, frame, declared
        self.bounds, self.categories, self.params = bounds, categories, params
        self.source, self.notes = source, notes

    def values(self, categorical: bool, lean: bool = False):
        """The column as the analysis reads it; ``lean`` (a central count or histogram):
        presence, or codes into a dictionary of texts, never one text per row."""
        from dpstudio.data.columns import (
            category_codes,
            category_column,
            count_column,
            numeric_column,
            yes_no_column,
        )
        from dpstudio.data.file_codes import load_category_codes
        from dpstudio.data.schema import ColumnType

        column = self.args.column
        yes_no = categorical and self.declared is not None and \
            self.declared.type is ColumnType.BOOLEAN
        if categorical and lean:
            from dpstudio.engine.queries.codes import dictionary_codes

            if self.args.query == "count" and not yes_no:
                return count_column(self.frame, column)
            if self.frame is not None:  # a folder's files, read into one frame
                return dictionary_codes(*category_codes(self.frame, column, yes_no=yes_no))
            codes, dictionary, attrs = load_category_codes(
                self.args.data, column, header=self.args.header, yes_no=yes_no)
            for note in attrs.get("load_notes", ()):  # the analyst's only
                print(f"dpstudio: note: {note}", file=sys.stderr)
            return dictionary_codes(codes, dictionary)
        if yes_no:
            return yes_no_column(self.frame, column)
        if categorical:
            return category_column(self.frame, column)
        return numeric_column(self.frame, column)


def _analysis(c: _Context, trust: str) -> Any:
    """The analysis the command line describes (a statistic under any trust model)."""
    from dpstudio.analysis.request import describe

    a = c.args
    return describe(trust, a.query, a.mechanism, a.epsilon, delta=a.delta, bounds=c.bounds,
                    categories=c.categories, bins=a.bins, quantile=a.quantile,
                    relation=a.relation, confidence=a.confidence, params=c.params,
                    column=a.column, missing=a.missing, impute=a.impute,
                    postprocess=a.postprocess, dropouts=a.dropouts,
                    identifier=a.identifier, max_rows=a.max_rows)


def _model(c: _Context) -> tuple[Any, Any]:
    """DP logistic regression: --column is the label, --features the declared features."""
    from dpstudio.analysis import AnalysisSpec
    from dpstudio.analysis.resolve import resolve_model_query
    from dpstudio.data.schema import schema_for
    from dpstudio.engine.queries import QuerySpec
    from dpstudio.project.values import read_model_columns

    a = c.args
    if a.query != "logistic_regression":
        raise CliError(f"{a.mechanism} fits a model: use --query logistic_regression")
    if not a.features:
        raise CliError("a model needs --features a,b,c (numeric columns with declared bounds)")
    features = tuple(f.strip() for f in a.features.split(",") if f.strip())
    spec = QuerySpec(a.query, a.mechanism, a.epsilon, delta=a.delta, relation="replace",
                     params=c.params, column=a.column)
    query, _, bounds = resolve_model_query(spec, features, schema_for(a.data))
    # The same columns a project release reads: missing features at the middle of their
    # bounds (a data-independent rule, so n stays the public number of records).
    model_input = read_model_columns(c.frame, a.column, features, bounds)
    return AnalysisSpec("central", query, features=features, feature_bounds=bounds), model_input


def _print_heavy_hitters(result: Any, out: dict[str, Any], title: str, analyst: bool) -> None:
    """The discovered words, most frequent first, with their counts and intervals."""
    title = title.replace("heavy_hitters of", "heavy hitters of")
    kind = "SIMULATION (seeded generator, not a release)" if out.get("simulated") else "release"
    print(f"{title} — {kind}")
    items = out.get("items") or []
    if not items:
        print("  no word was frequent enough to be discovered")
    width = max((len(i["item"]) for i in items), default=4)
    level = f"{out['confidence']:.0%}"
    for i in items:
        print(f"  {i['item']:<{width}}  {_fmt(i['count']):>12}   {level} interval "
              f"[{_fmt(i['ci_low'])}, {_fmt(i['ci_high'])}]")
    print(f"  n            {out['n']}")
    print(f"  mechanism    {out['mechanism']}, ε = {out['epsilon']:g}, δ = 0")
    for note in out.get("notes", []):
        print(f"  note: {note}")
    if analyst:
        _print_analyst(out.get("analyst_only", {}))


def _print_model(result: Any, out: dict[str, Any], title: str, analyst: bool) -> None:
    r, a = result.engine, result.analysis
    kind = "SIMULATION (seeded generator, not a release)" if r.simulated else "release"
    print(f"logistic regression of {a.query.column!r} on {', '.join(a.features)} — {kind}")
    for feature, coef in r.to_table():
        print(f"  {feature:<24} {coef:>12.6g}")
    print(f"  mechanism    {a.query.mechanism}, ε = {r.epsilon:g}, δ = {r.delta:g}, "
          f"noise scale {r.noise_scale:.4g} ({r.noise_family})")
    if analyst:
        print(f"  analyst only (not released): accuracy "
              f"{r.utility['accuracy_private']:.3f} (non-private "
              f"{r.utility['accuracy_nonprivate']:.3f})")


def _write_records(path: str, columns: dict[str, Any]) -> None:
    """Write the collector's records as CSV, atomically (:mod:`dpstudio.data.atomic`)."""
    import os

    import pandas as pd

    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CliError(f"cannot write {path}: no such folder")
    from dpstudio.export.writers import neutralize, neutralize_cells

    # Spreadsheet formula injection: the same neutralization as every other export.
    frame = pd.DataFrame({neutralize(str(name)): neutralize_cells(
        list(col) if getattr(col, "ndim", 1) > 1 else col) for name, col in columns.items()})
    from dpstudio.data.atomic import atomic_path

    with atomic_path(path) as tmp:  # the temporary ends .tmp: pandas infers no compression
        frame.to_csv(tmp, index=False, encoding="utf-8")


def _print_estimate(result: Any, out: dict[str, Any], title: str, analyst: bool) -> None:
    kind = "SIMULATION (seeded generator, not a release)" if out.get("simulated") else "release"
    print(f"{title} — {kind}")
    estimate = out.get("estimate")
    if isinstance(estimate, dict) and "mean" not in estimate:
        width = max((len(k) for k in estimate), default=4)
        for label, v in estimate.items():
            print(f"  {label:<{width}}  {_fmt(v):>12}  ± {_fmt(out['stderr'][label])} (s.e.)")
    else:
        print(f"  value        {_fmt(out.get('value'))}  ± {_fmt(out.get('stderr'))} (s.e.)")
    for key in ("error_bound", "messages_per_user", "bits_per_message", "n"):
        if out.get(key) is not None:
            print(f"  {key.replace('_', ' '):<12} {_fmt(out[key])}")
    print(f"  mechanism    {out['mechanism']}, ε = {out['epsilon']:g}, "
          f"δ = {out.get('delta', 0.0):g}")
    for note in out.get("notes", []):
        print(f"  note: {note}")
    if analyst:
        _print_analyst(out.get("analyst_only", {}))


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _fmt(x: float) -> str:
    return f"{x:.6g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _print_release(result: Any, out: dict[str, Any], title: str, analyst: bool) -> None:
    r = result.engine
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
    if len(r.sensitivities) > 1:
        print("  each part    " + ", ".join(f"{k} {_fmt(float(v))}"
                                            for k, v in r.sensitivities.items()))
    for note in r.notes:
        print(f"  note: {note}")
    if analyst:
        _print_analyst({"clamped": r.clamped, "missing": r.missing_count,
                        "non_finite": r.non_finite_count})
    print(f"  randomness   {r.source}")


def _print_analyst(counts: dict[str, Any]) -> None:
    """The analyst-only counts (--analyst): read off the raw data, never released."""
    print(f"  analyst only (not released): {counts.get('clamped', 0)} values outside the "
          "declaration" + (f"; {counts['missing']} missing" if "missing" in counts else "")
          + (f" ({counts['non_finite']} of them ±inf)" if counts.get("non_finite") else ""))




#: How each shape of result is printed (:attr:`AnalysisResult.shape`).
_PRINTERS = {"statistic": _print_release, "estimate": _print_estimate,
             "heavy_hitters": _print_heavy_hitters, "model": _print_model}
