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

``--dask`` (issue 16: ``python benchmarks/scale.py --dask --rows 1e8``) benchmarks data
larger than a process should hold instead. A Parquet folder of ``--rows`` rows × 4 number
columns (``income`` float64 of continuous values — off every grid, the randomized
rounding's worst case —, ``age`` int32, ``hours`` float32, ``visits`` int64) is generated
once, file by file, into ``--files`` files of ``--row-group``-row groups (a temporary
folder removed afterwards, or ``--data-dir``, kept and reused while its parameters
match). A client process then starts a ``LocalCluster`` of ``--workers`` processes × 1
thread (``--memory-limit`` each) and runs count, sum, mean, variance and a 20-bin histogram
of ``income`` (bounds 0, 200; Laplace, ε = 1) through
:func:`dpstudio.execution.run.run_on_files`, the release path: every task rounds with a
fresh OS-CSPRNG source and the noise is drawn once on the client. Per query: ``seconds``,
``rows_per_second``, ``client_peak_mib`` (the client, scheduler included), each worker's
``workers_peak_mib`` and ``cluster_peak_mib`` (client + workers + nannies); the peaks
are reset before each query (``/proc/<pid>/clear_refs``; ``peaks_per_query`` says so).
``mean_fingerprinted`` is the mean as a project release runs it (each file read whole
and hashed from the bytes it parses: one task per file). ``workers_cpu_s`` is the CPU
time the workers spent on a query, and
``rows_per_second_cpu_bound`` the rows per second it gives when every worker has a core
to itself: an estimate, for a machine busy with other work.
``cli_mean`` is the same mean as a user runs it (``dpstudio query FOLDER --engine
dask``: a fresh process, its own cluster started and closed). ``pandas`` runs the five
queries through ``dpstudio query --engine pandas`` on the first files holding 10⁷, 2·10⁷,
5·10⁷ rows (``--pandas-rows``), each query until it passes 1 GB: ``largest_that_fits``.
``opendp_mean`` is OpenDP's time for the same mean on the same files when ``opendp`` and
``polars`` are installed (never a dependency), else null with the reason. Targets:
≥ 2·10⁷ rows/s per query, client < 1 GB, cluster < 6 GB (``meets_targets``). Timings
are only as quiet as the machine: ``load_average_before``/``_after`` say how busy it was.
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


# --------------------------------------------------------------------------- Dask mode
#: Bumped when the generated dataset changes, so an old folder is never reused.
DASK_DATA_VERSION = 1
#: The queries of the Dask mode, on the float column ``income`` (continuous values: every
#: record is off the grid, the randomized rounding's worst case); bounds declared.
DASK_QUERIES = {
    "count": dict(query="count"),
    "sum": dict(query="sum", bounds=(0.0, 200.0)),
    "mean": dict(query="mean", bounds=(0.0, 200.0)),
    "variance": dict(query="variance", bounds=(0.0, 200.0)),
    "histogram": dict(query="histogram", bounds=(0.0, 200.0), bins=20),
}
DASK_COLUMN = "income"
#: Targets of issue 16, printed beside the figures.
TARGETS = {"rows_per_second_per_query": 2e7, "client_peak_mib": 1000 / 1.048576,
           "cluster_peak_mib": 6000 / 1.048576}
_GIB = 2**30


def _generate_folder(folder: Path, rows: int, files: int, row_group: int) -> bool:
    """``files`` Parquet files of ``rows`` rows in all, four numeric columns, written file
    by file (one file's columns in memory at a time) into ``folder``; a ``_params.json``
    (not data: its name starts with ``_``) says what was generated, for reuse. True when
    the folder was reused as it was."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    params = {"version": DASK_DATA_VERSION, "rows": rows, "files": files,
              "row_group": row_group}
    marker = folder / "_params.json"
    if marker.is_file() and json.loads(marker.read_text()) == params:
        return True
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("part-*.parquet"):
        old.unlink()
    sizes = [rows // files + (i < rows % files) for i in range(files)]
    for i, n in enumerate(sizes):
        rng = np.random.default_rng([DASK_DATA_VERSION, i])
        table = pa.table({
            "income": rng.gamma(4.0, 10.0, n),                       # float64, off grid
            "age": rng.integers(0, 100, n, dtype=np.int32),          # int32, on the grid
            "hours": rng.uniform(0.0, 80.0, n).astype(np.float32),   # float32
            "visits": rng.poisson(3.0, n).astype(np.int64),          # int64
        })
        pq.write_table(table, folder / f"part-{i:05d}.parquet", row_group_size=row_group)
        del table
    marker.write_text(json.dumps(params))
    return False


def _hwm_kib(pid: int | str = "self") -> int:
    """A process's peak resident memory (VmHWM) in KiB, from ``/proc``."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _reset_hwm() -> bool:
    """Reset this process's peak resident memory to its current one (Linux ≥ 4.0), so a
    peak is that of one query; False where it cannot be reset (then peaks accumulate)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _cpu_seconds() -> float:
    """This process's CPU time (user + system), in seconds."""
    t = os.times()
    return t.user + t.system


def _warm_worker() -> None:
    """Import what a task needs (a fresh worker pays it once, in its first task)."""
    import importlib

    for module in ("numpy", "pandas", "pyarrow.parquet", "dpstudio.engine.rng",
                   "dpstudio.data.columns", "dpstudio.execution.partitions"):
        importlib.import_module(module)


def _dask_spec(name: str):
    from dpstudio.analysis import AnalysisSpec
    from dpstudio.engine.queries import QuerySpec

    return AnalysisSpec("central", QuerySpec(mechanism="laplace", epsilon=1.0,
                                             column=DASK_COLUMN, **DASK_QUERIES[name]))


def _dask_client_run(folder: str, queries: list[str], workers: int, memory_limit: str,
                     repeats: int) -> None:
    """The client process: a LocalCluster (processes, ``workers`` × 1 thread), then each
    query through :func:`dpstudio.execution.run.run_on_files` — the release path: every
    task rounds with a fresh OS-CSPRNG source, the noise drawn once here — with its wall
    time, this process's peak RSS and each worker's, reset before every query."""
    import distributed

    from dpstudio.data.folders import open_files
    from dpstudio.engine.rng import SecureSource
    from dpstudio.execution.run import run_on_files

    ds = open_files(folder)
    start = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       memory_limit=memory_limit, host="127.0.0.1",
                                       dashboard_address="127.0.0.1:0")
    client = distributed.Client(cluster)
    out: dict = {"cluster_start_s": round(time.perf_counter() - start, 3)}
    try:
        start = time.perf_counter()
        client.run(_warm_worker)  # what every task imports, once per worker
        out["worker_imports_s"] = round(time.perf_counter() - start, 3)
        nannies = [int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
                   for pid in client.run(os.getpid).values()]
        runs = {}
        # The five queries as ``dpstudio query`` runs them, then the mean as a project
        # release runs it: every file read whole and hashed from the bytes it parses.
        runs_of = [(name, name, False) for name in queries]
        if "mean" in queries:
            runs_of.append(("mean_fingerprinted", "mean", True))
        for name, query, fingerprint in runs_of:
            best: dict | None = None
            for _ in range(repeats):
                exact = _reset_hwm() & all(client.run(_reset_hwm).values())
                cpu = sum(client.run(_cpu_seconds).values())
                start = time.perf_counter()
                run = run_on_files(_dask_spec(query), ds, SecureSource(),
                                   scheduler=cluster.scheduler_address,
                                   fingerprint=fingerprint)
                seconds = time.perf_counter() - start
                cpu = sum(client.run(_cpu_seconds).values()) - cpu
                worker_kib = list(client.run(_hwm_kib).values())
                nanny_kib = [_hwm_kib(p) for p in nannies]
                client_kib = _hwm_kib()
                total = run.total
                this = {"seconds": round(seconds, 3),
                        "rows_per_second": round(total.size / seconds),
                        "client_peak_mib": round(client_kib / 1024, 1),
                        "workers_peak_mib": [round(k / 1024, 1) for k in worker_kib],
                        "cluster_peak_mib": round((client_kib + sum(worker_kib)
                                                   + sum(nanny_kib)) / 1024, 1),
                        # CPU the workers spent, and the throughput it gives when each
                        # worker has a core to itself (an estimate for a busy machine).
                        "workers_cpu_s": round(cpu, 3),
                        "rows_per_second_cpu_bound": round(total.size * workers / cpu)
                        if cpu > 0 else None,
                        "peaks_per_query": exact, "partitions": run.execution["partitions"],
                        "value": run.result.fields.get("value")}
                if best is None or this["seconds"] < best["seconds"]:
                    best = this
            runs[name] = best
            print(json.dumps({name: best}), file=sys.stderr)  # progress
        out["queries"] = runs
        out["nannies_mib"] = [round(_hwm_kib(p) / 1024, 1) for p in nannies]
        out["cluster"] = {"workers": workers, "threads_per_worker": 1,
                          "memory_limit": memory_limit, "processes": True}
    finally:
        client.close()
        cluster.close()
    print(json.dumps(out))


def _pandas_path(folder: Path, files: list[Path], rows_per_file: list[int], sizes: list[int],
                 queries: list[str], work: Path) -> dict:
    """The pandas path (``dpstudio query FOLDER --engine pandas``, a fresh process per
    query) on the first files holding each size, ascending. A query runs at the next size
    only while it stayed under the client target (1 GB) and succeeded: per query, the
    largest size within it is ``largest_that_fits`` (None: not even the smallest)."""
    out: dict = {"runs": [], "largest_that_fits": {q: None for q in queries}}
    active = list(queries)
    for size in sizes:
        if not active:
            break
        total, k = 0, 0
        while k < len(files) and total < size:
            total += rows_per_file[k]
            k += 1
        sub = work / f"pandas_{total}"
        sub.mkdir(exist_ok=True)
        for f in files[:k]:
            link = sub / f.name
            if not link.exists():
                link.symlink_to(f)
        for name in list(active):
            q = DASK_QUERIES[name]
            args = ["--engine", "pandas", "--column", DASK_COLUMN, "--query", q["query"],
                    "--mechanism", "laplace"]
            if "bounds" in q:
                args += ["--bounds", "{:g},{:g}".format(*q["bounds"])]
            if "bins" in q:
                args += ["--bins", str(q["bins"])]
            run = run_query(sub, args)
            run.update(rows=total, files=k, query=name,
                       rows_per_second=round(total / run["seconds"]))
            out["runs"].append(run)
            print(json.dumps(run), file=sys.stderr)  # progress
            if run["exit_code"] == 0 and run["peak_rss_mb"] < TARGETS["client_peak_mib"]:
                out["largest_that_fits"][name] = total
            else:
                active.remove(name)
    return out


_OPENDP_MEAN = """
import json, sys, time
import opendp.prelude as dp
import polars as pl
dp.enable_features("contrib")
folder, rows = sys.argv[1], int(sys.argv[2])
lf = pl.scan_parquet(folder + "/*.parquet").select(pl.col("income"))
context = dp.Context.compositor(
    data=lf, privacy_unit=dp.unit_of(contributions=1), privacy_loss=dp.loss_of(epsilon=1.0),
    split_evenly_over=1, margins=[dp.polars.Margin(by=(), max_length=rows)])
start = time.perf_counter()
value = context.query().select(
    pl.col("income").fill_null(0.0).dp.mean(bounds=(0.0, 200.0))).release().collect()
print(json.dumps({"seconds": round(time.perf_counter() - start, 3),
                  "value": float(value.item())}))
"""


def _opendp_mean(folder: Path, rows: int) -> dict:
    """OpenDP's time for the same mean on the same files, when it is installed (optional:
    never a dependency), in its own process."""
    import importlib.util

    if importlib.util.find_spec("opendp") is None or importlib.util.find_spec("polars") is None:
        return {"seconds": None, "reason": "opendp with polars is not installed "
                                           "(optional; pip install 'opendp[polars]')"}
    proc = subprocess.run([sys.executable, "-c", _OPENDP_MEAN, str(folder), str(rows)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return {"seconds": None, "reason": f"opendp failed: {lines[-1] if lines else ''}"}
    return json.loads(proc.stdout)


def dask_main(args: argparse.Namespace) -> None:
    """``--dask``: the 10⁸-row benchmark of issue 16 (see the module's docstring)."""
    import shutil

    rows, files = int(float(args.rows)), args.files
    queries = [q for q in args.queries.split(",") if q] if args.queries else list(DASK_QUERIES)
    unknown = sorted(set(queries) - set(DASK_QUERIES))
    if unknown:
        raise SystemExit(f"unknown --dask queries: {', '.join(unknown)} "
                         f"(choose from {', '.join(DASK_QUERIES)})")
    owned = args.data_dir is None
    root = Path(tempfile.mkdtemp(prefix="dpstudio_dask_")) if owned else Path(args.data_dir)
    folder = root / f"v{DASK_DATA_VERSION}_{rows}_{files}_{args.row_group}"
    report: dict = {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_before": round(os.getloadavg()[0], 2), "targets": TARGETS}
    try:
        start = time.perf_counter()
        # In a helper process: this one's memory stays that of an orchestrator.
        reused = subprocess.run([sys.executable, __file__, "--generate", str(folder), str(rows),
                                 str(files), str(args.row_group)], check=True,
                                capture_output=True, text=True).stdout.strip() == "reused"
        data_files = sorted(folder.glob("part-*.parquet"))
        report["data"] = {
            "rows": rows, "files": len(data_files), "row_group_rows": args.row_group,
            "columns": {"income": "float64", "age": "int32", "hours": "float32",
                        "visits": "int64"},
            "bytes_on_disk": sum(f.stat().st_size for f in data_files),
            "raw_column_mib": round(rows * 8 / 2**20, 1),
            "prepare_s": round(time.perf_counter() - start, 3), "reused": reused}
        client = subprocess.run(
            [sys.executable, __file__, "--dask-client", str(folder), ",".join(queries),
             str(args.workers), args.memory_limit, str(args.repeats)],
            check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
        report["dask"] = json.loads(client.stdout.strip().splitlines()[-1])
        per = report["dask"]["queries"]
        report["dask"]["meets_targets"] = {
            name: {"throughput": r["rows_per_second"] >= TARGETS["rows_per_second_per_query"],
                   "client": r["client_peak_mib"] < TARGETS["client_peak_mib"],
                   "cluster": r["cluster_peak_mib"] < TARGETS["cluster_peak_mib"]}
            for name, r in per.items()}
        # As a user runs it: a fresh process, a LocalCluster started and closed in it.
        cli = run_query(folder, ["--engine", "dask", "--column", DASK_COLUMN, "--query",
                                 "mean", "--mechanism", "laplace", "--bounds", "0,200"])
        report["cli_mean"] = {**cli, "rows_per_second": round(rows / cli["seconds"]),
                              "what": "dpstudio query FOLDER --engine dask (mean): wall time "
                                      "with the cluster's start; peak RSS of the largest "
                                      "of the command and the workers it reaped"}
        report["opendp_mean"] = _opendp_mean(folder, rows)
        if args.pandas_rows:
            import pyarrow.parquet as pq

            counts = [pq.ParquetFile(f).metadata.num_rows for f in data_files]
            sizes = sorted(int(float(s)) for s in args.pandas_rows.split(",") if s)
            report["pandas"] = _pandas_path(folder, data_files, counts, sizes, queries, root)
    finally:
        if owned:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for sub in root.glob("pandas_*"):
                shutil.rmtree(sub, ignore_errors=True)
    report["load_average_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(report, indent=2))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--max-rows", type=int, default=SIZES[-1],
                   help="largest table (default 10,000,000)")
    p.add_argument("--formats", default=",".join(FORMATS), help="csv,parquet")
    p.add_argument("--queries", default=None,
                   help=f"{','.join(QUERIES)} (with --dask: {','.join(DASK_QUERIES)})")
    p.add_argument("--fresh", action="store_true", help="regenerate the cached tables")
    p.add_argument("--startup-repeats", type=int, default=7,
                   help="start-up timings are the best of this many runs (default 7; 0: skip)")
    dask = p.add_argument_group("the Dask benchmark (--dask)")
    dask.add_argument("--dask", action="store_true",
                      help="count, sum, mean, variance and a 20-bin histogram of a generated "
                           "Parquet folder on a Dask LocalCluster, and the pandas path")
    dask.add_argument("--rows", default="1e8", help="rows in all (default 1e8)")
    dask.add_argument("--files", type=int, default=50, help="Parquet files (default 50)")
    dask.add_argument("--row-group", type=int, default=1 << 20,
                      help="rows per Parquet row group (default 1048576)")
    dask.add_argument("--data-dir", default=None,
                      help="generate the folder here and keep it (reused when its parameters "
                           "match); default: a temporary folder removed afterwards")
    dask.add_argument("--workers", type=int, default=2, help="worker processes (1 thread each)")
    dask.add_argument("--memory-limit", default="2GiB", help="per worker (default 2GiB)")
    dask.add_argument("--repeats", type=int, default=1,
                      help="each query's figures are the fastest of this many runs")
    dask.add_argument("--pandas-rows", default="1e7,2e7,5e7",
                      help="sizes for the pandas path; each query stops once it passes "
                           "1 GB (empty: skip)")
    p.add_argument("--prepare", nargs=2, metavar=("ROWS", "FORMAT"), help=argparse.SUPPRESS)
    p.add_argument("--generate", nargs=4, help=argparse.SUPPRESS)
    p.add_argument("--dask-client", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.prepare:
        _prepare_here(int(args.prepare[0]), args.prepare[1], args.fresh)
        return
    if args.generate:
        folder, rows, files, group = args.generate
        reused = _generate_folder(Path(folder), int(rows), int(files), int(group))
        print("reused" if reused else "generated")
        return
    if args.dask_client:
        folder, names, workers, limit, repeats = args.dask_client
        _dask_client_run(folder, names.split(","), int(workers), limit, int(repeats))
        return
    if args.dask:
        dask_main(args)
        return
    formats = [f for f in args.formats.split(",") if f]
    queries = [q for q in (args.queries or ",".join(QUERIES)).split(",") if q]
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
