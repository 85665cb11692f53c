"""Time and peak memory of ``dpstudio query`` as the table grows: the embedded (pandas) path.

Prints one JSON object. For each size (10⁵, 10⁶, 10⁷ rows; ``--max-rows`` stops earlier)
and each format (CSV, Parquet) one generated table of five columns is queried four times,
each in a fresh ``dpstudio query`` process, as a user runs it:

* ``count`` of ``value``; ``mean`` of ``value`` (bounds 0,100);
* ``histogram_short``: a histogram of ``group`` (six labels of a few characters);
* ``histogram_long``: a histogram of ``label``, the same labels but one of them 300
  characters long (it appears in one row in a thousand): a column is never to cost what
  its longest value costs on every row.

Each run reports ``seconds`` (wall), ``peak_rss_mb`` (the process's own peak resident
memory, from ``wait4``), ``bytes_per_row`` (peak RSS / rows), ``raw_column_mb`` (the
in-memory Arrow size of the one column the query needs: 8 bytes a row for ``value``,
offsets and text for the labels), ``peak_over_raw`` (peak RSS / raw column bytes) and
``added_over_raw`` (peak RSS less ``startup_rss_mb``, the peak of the same query on a
10-row file, over the raw column bytes: what the data itself costs). ``file_mb`` is the
size of the file read. The target of the lean path: ``added_over_raw`` at most about 3
for the 10⁷-row mean; ``added_over_raw_at_largest`` gathers it per case.

The tables are generated once and cached in the temporary folder (10⁷ rows take a
minute); ``--fresh`` regenerates them. They are generated, and their columns measured, in
a helper process: a child's peak RSS on Linux starts at its parent's (``exec`` keeps the
high-water mark of the memory it replaces), so this process stays small. The queries run
from the temporary folder, so the ``dpstudio`` imported is the one on ``sys.path`` there
(the installed or editable package, or a ``PYTHONPATH`` pointing at another checkout to
compare).

``startup`` gives the best-of-``--startup-repeats`` wall time of ``dpstudio mechanisms
--json`` and of the mean on a 10-row file (targets on a quiet machine: under 0.5 s and
1 s) and which heavy modules ``mechanisms --json`` imports (none of pandas, pyarrow and
``scipy.optimize``).

Run: ``python benchmarks/scale.py [--max-rows 1000000] [--formats csv,parquet]
[--queries mean,count]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (100_000, 1_000_000, 10_000_000)
FORMATS = ("csv", "parquet")
LABELS = ("Arts", "Business", "Engineering", "Law", "Medicine", "Science")
LONG_LABEL = "Interdisciplinary " + "x" * (300 - len("Interdisciplinary "))
#: Bumped when the generated table changes, so an old cached file is never reused.
TABLE_VERSION = 1

#: name → (the query's command-line arguments, the one column it reads).
QUERIES = {
    "count": (["--column", "value", "--query", "count", "--mechanism", "laplace"], "value"),
    "mean": (["--column", "value", "--query", "mean", "--mechanism", "laplace",
              "--bounds", "0,100"], "value"),
    "histogram_short": (["--column", "group", "--query", "histogram", "--mechanism", "laplace",
                         "--categories", ",".join(LABELS)], "group"),
    "histogram_long": (["--column", "label", "--query", "histogram", "--mechanism", "laplace",
                        "--categories", ",".join(LABELS + (LONG_LABEL,))], "label"),
}


def _table(rows: int):
    """The generated table as a pyarrow Table (ids, a number, two label columns, a code)."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(rows)
    group = rng.integers(0, len(LABELS), rows)
    labels = np.array(LABELS, dtype=object)
    long_labels = np.array(LABELS + (LONG_LABEL,), dtype=object)
    label = np.where(np.arange(rows) % 1000 == 7, len(LABELS), group)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "value": pa.array(np.round(rng.gamma(4.0, 10.0, rows), 2)),
        "group": pa.array(labels[group], type=pa.string()),
        "label": pa.array(long_labels[label], type=pa.string()),
        "code": pa.array(rng.integers(0, 10**9, rows)),
    })


def make_file(rows: int, fmt: str, fresh: bool = False) -> Path:
    """The ``rows``-row table in ``fmt``, generated once into the temporary folder."""
    path = Path(tempfile.gettempdir()) / f"dpstudio_scale_v{TABLE_VERSION}_{rows}.{fmt}"
    if path.is_file() and not fresh:
        return path
    table = _table(rows)
    tmp = path.with_name(path.name + ".tmp")
    if fmt == "csv":
        import pyarrow.csv as pcsv

        pcsv.write_csv(table, tmp)
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, tmp)
    os.replace(tmp, path)
    return path


def raw_column_bytes(path: Path, column: str) -> int:
    """In-memory Arrow size of one column of the file (what the query cannot avoid)."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    if path.suffix == ".parquet":
        table = pq.read_table(path, columns=[column])
    else:
        table = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(
            include_columns=[column]))
    return int(table.column(column).nbytes)


def run_query(path: Path, args: list[str]) -> dict:
    """One ``dpstudio query`` in a fresh process: wall time, its own peak RSS, exit code."""
    cmd = [sys.executable, "-c", "from dpstudio.cli import main; main()", "query", str(path),
           *args, "--epsilon", "1", "--json"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        message = err.read().decode("utf-8", "replace").strip().splitlines()
    result = {"seconds": round(seconds, 3),
              "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: kilobytes
              "exit_code": proc.returncode}
    if proc.returncode != 0:
        result["error"] = message[-1] if message else ""
    return result


def prepare(rows: int, fmt: str, fresh: bool) -> tuple[Path, dict[str, int]]:
    """The table's file and its columns' raw bytes, from a helper process (see above)."""
    cmd = [sys.executable, __file__, "--prepare", str(rows), fmt] + (["--fresh"] * fresh)
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return Path(out["path"]), out["raw"]


def _prepare_here(rows: int, fmt: str, fresh: bool) -> None:
    path = make_file(rows, fmt, fresh)
    raw = {column: raw_column_bytes(path, column) for _, column in QUERIES.values()}
    print(json.dumps({"path": str(path), "raw": raw}))


def startup_seconds(repeats: int) -> dict:
    """Best-of-``repeats`` wall time of ``dpstudio mechanisms --json`` and of a mean on a
    10-row CSV file, each in a fresh process (targets on a quiet machine: 0.5 s and 1 s)."""
    path, _ = prepare(10, "csv", False)
    commands = {"mechanisms_json": ["mechanisms", "--json"],
                "query_small_file": ["query", str(path), *QUERIES["mean"][0], "--epsilon", "1",
                                     "--json"]}
    out: dict = {}
    for name, argv in commands.items():
        cmd = [sys.executable, "-c", "from dpstudio.cli import main; main()", *argv]
        best = math.inf
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=tempfile.gettempdir())
            best = min(best, time.perf_counter() - start)
        out[name + "_s"] = round(best, 3)
    probe = ("import sys, io, contextlib\nfrom dpstudio.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()): main(['mechanisms', '--json'])\n"
             "print(sorted(m for m in ('pandas', 'pyarrow', 'scipy.optimize') "
             "if m in sys.modules))")
    out["mechanisms_imports"] = json.loads(subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True,
        cwd=tempfile.gettempdir()).stdout.replace("'", '"'))
    return out


def startup_rss(fmt: str) -> dict:
    """Each query on a 10-row file: what a process costs before the data does."""
    path, _ = prepare(10, fmt, False)
    return {name: run_query(path, args) for name, (args, _) in QUERIES.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--max-rows", type=int, default=SIZES[-1],
                   help="largest table (default 10,000,000)")
    p.add_argument("--formats", default=",".join(FORMATS), help="csv,parquet")
    p.add_argument("--queries", default=",".join(QUERIES), help=",".join(QUERIES))
    p.add_argument("--fresh", action="store_true", help="regenerate the cached tables")
    p.add_argument("--startup-repeats", type=int, default=7,
                   help="start-up timings are the best of this many runs (default 7; 0: skip)")
    p.add_argument("--prepare", nargs=2, metavar=("ROWS", "FORMAT"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.prepare:
        _prepare_here(int(args.prepare[0]), args.prepare[1], args.fresh)
        return
    formats = [f for f in args.formats.split(",") if f]
    queries = [q for q in args.queries.split(",") if q]
    unknown = sorted(set(formats) - set(FORMATS)) + sorted(set(queries) - set(QUERIES))
    if unknown:
        p.error(f"unknown: {', '.join(unknown)}")

    report: dict = {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average": os.getloadavg()[0], "runs": [], "startup_rss_mb": {}}
    if args.startup_repeats > 0:
        report["startup"] = startup_seconds(args.startup_repeats)
    for fmt in formats:
        tiny = startup_rss(fmt)
        report["startup_rss_mb"][fmt] = {q: tiny[q]["peak_rss_mb"] for q in queries}
        for rows in (s for s in SIZES if s <= args.max_rows):
            path, raws = prepare(rows, fmt, args.fresh)
            for name in queries:
                query_args, column = QUERIES[name]
                raw = raws[column]
                run = run_query(path, query_args)
                peak = run["peak_rss_mb"] * 2**20
                base = tiny[name]["peak_rss_mb"] * 2**20
                report["runs"].append({
                    "format": fmt, "rows": rows, "query": name, **run,
                    "file_mb": round(path.stat().st_size / 2**20, 1),
                    "raw_column_mb": round(raw / 2**20, 1),
                    "bytes_per_row": round(peak / rows, 1),
                    "peak_over_raw": round(peak / raw, 2),
                    "added_over_raw": round(max(peak - base, 0) / raw, 2),
                })
                print(json.dumps(report["runs"][-1]), file=sys.stderr)  # progress
    # The lean target in one place: memory the data adds over the column's raw bytes, per
    # case, at the largest size run (target: at most about 3).
    largest = max((r["rows"] for r in report["runs"]), default=0)
    report["added_over_raw_at_largest"] = {
        "rows": largest, "target": 3.0,
        **{f"{r['format']}_{r['query']}": r["added_over_raw"] for r in report["runs"]
           if r["rows"] == largest}}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
