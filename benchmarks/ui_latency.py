"""Latency of the analysis view: from an ε change to both plots redrawn, on 100,000 rows.

Prints ONE JSON object:

* ``epsilon_change_ms``: over ``CHANGES`` separate ε changes (log-uniform in [0.05, 50],
  ≥ 40 ms apart, as separate user actions), the time from ``session.set_epsilon`` (what
  the slider and the spin box call) to the moment *both* plots have their new data: the
  utility plot's marker (synchronous) and the trade-off plot's curves (a worker job).
  ``median``/``p95``/``max`` for data received, ``painted_median``/``painted_p95`` when
  both plots have also been repainted;
* ``drag``: the slider dragged one step every 16 ms for about a second: redraws of the
  trade-off plot delivered during the drag and the lag after the last step;
* ``start_to_interactive_s``: from the start of this script (before Qt is imported) to
  the main window shown with the 100,000-row dataset and its event loop turning;
  ``first_curves_s``: until every first computation (curves, Monte-Carlo, preview) ended;
* ``first_frame``: ``dpstudio`` as ``make run`` starts it (the survey sample), in a fresh
  process, ``FIRST_FRAME_RUNS`` times: ``first_frame_s`` from launching the process to
  the main window's first paint (the median; ``runs`` lists each), ``first_frame_cpu_s``
  the UI thread's processor time until then (less sensitive to other programs' load),
  ``first_curves_drawn_s`` until every plot is drawn, ``max_stall_ms`` the longest
  wait of the event loop in between;
* ``open_1m_csv`` (``benchmarks/load_csv.py`` makes the file) and ``open_10m_parquet``
  (1,000,000 and 10,000,000 rows, 10 columns; cached in the temp folder): File ▸ Open
  until the dataset is on screen (``open_to_shown_s``), until every plot is drawn
  (``all_plots_drawn_s``: no job left), each job's end (``jobs_done_s``), the longest
  event-loop stall (``max_stall_ms``, the UI thread busy or waiting) and the part of it
  spent taking the dataset in (``ui_thread_set_dataset_s``);
* ``open_1m_csv_numeric`` and ``open_10m_parquet_numeric``: the same files with a schema
  sidecar declaring ``age`` numeric with public bounds, so the analysis opens on a
  numeric column: ``cases`` lists File ▸ Open with the mean, then the sum, then the
  local and the shuffle trust models once each, every one timed until every plot is
  drawn (``all_plots_drawn_s``) with its ``target_s`` and ``met``;
* targets and whether they are met (median < 50 ms, p95 < 100 ms, first frame < 2 s,
  1M-row CSV shown with every plot < 3 s, 10M rows from Parquet < 10 s, and each
  numeric case within the same targets).

Run: ``python benchmarks/ui_latency.py`` (``--rows``, ``--changes``, ``--no-csv``,
``--no-parquet``, ``--only-open``).
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("DPSTUDIO_CONFIG_DIR", tempfile.mkdtemp(prefix="dpstudio_bench_cfg_"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

CHANGES = 60
FIRST_FRAME_RUNS = 3
TARGETS = {"median_ms": 50.0, "p95_ms": 100.0, "start_s": 2.0, "open_1m_s": 3.0,
           "first_frame_s": 2.0, "open_1m_all_plots_s": 3.0,
           "open_10m_parquet_all_plots_s": 10.0}


def make_dataset(rows: int) -> Path:
    """A synthetic survey of ``rows`` rows with a declared schema (cached in /tmp)."""
    folder = Path(tempfile.gettempdir())
    path = folder / f"dpstudio_ui_bench_{rows}.csv"
    sidecar = Path(str(path) + ".schema.json")
    if not (path.is_file() and sidecar.is_file()):
        rng = np.random.default_rng(7)
        frame = pd.DataFrame({
            "age": rng.integers(18, 90, rows),
            "income": np.where(rng.random(rows) < 0.05, np.nan,
                               rng.gamma(2.0, 20000.0, rows).round(2)),
            "smoker": rng.choice(["yes", "no"], rows, p=[0.2, 0.8]),
            "region": rng.choice(["North", "South", "East", "West"], rows),
        })
        frame.to_csv(path, index=False)
        sidecar.write_text(json.dumps({"schema_version": 1, "columns": [
            {"name": "age", "type": "numeric", "lower": 18, "upper": 100},
            {"name": "income", "type": "numeric", "lower": 0, "upper": 200000},
            {"name": "smoker", "type": "boolean"},
            {"name": "region", "type": "categorical",
             "categories": ["North", "South", "East", "West"]},
        ]}), encoding="utf-8")
    return path


def pump(app, until, timeout: float = 60.0) -> bool:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        app.processEvents()
        if until():
            return True
        time.sleep(0.0005)
    return False


def measure_changes(app, window, changes: int) -> dict:
    session = window.session
    got: dict[str, float] = {}
    window.tradeoff_plot.updated.connect(lambda: got.setdefault("tradeoff",
                                                                time.perf_counter()))
    window.utility_plot.updated.connect(
        lambda kind: kind == "marker" and got.setdefault("utility", time.perf_counter()))
    rng = np.random.default_rng(3)
    received, painted = [], []
    for eps in np.round(10 ** rng.uniform(np.log10(0.05), np.log10(50), changes), 3):
        if abs(eps - session.epsilon) < 1e-9:
            continue
        got.clear()
        start = time.perf_counter()
        session.set_epsilon(float(eps))
        if not pump(app, lambda: "tradeoff" in got and "utility" in got, 30.0):
            raise RuntimeError(f"no redraw after ε = {eps}")
        received.append(max(got.values()) - start)
        window.tradeoff_plot.viewport().repaint()
        window.utility_plot.viewport().repaint()
        painted.append(time.perf_counter() - start)
        window.analysis.wait_idle(30)
        pump(app, lambda: False, 0.04)  # separate user actions
    ms = np.array(received) * 1000
    pms = np.array(painted) * 1000
    return {"n": int(ms.size), "median": round(float(np.median(ms)), 2),
            "p95": round(float(np.percentile(ms, 95)), 2), "max": round(float(ms.max()), 2),
            "painted_median": round(float(np.median(pms)), 2),
            "painted_p95": round(float(np.percentile(pms, 95)), 2)}


def measure_drag(app, window) -> dict:
    slider = window.analysis_panel.epsilon.slider
    updates: list[float] = []
    window.tradeoff_plot.updated.connect(lambda: updates.append(time.perf_counter()))
    slider.setValue(150)
    window.analysis.wait_idle(30)
    updates.clear()
    start = time.perf_counter()
    steps = 60
    for i in range(steps):
        slider.setValue(150 + 2 * (i + 1))
        step_end = start + (i + 1) * 0.016
        pump(app, lambda t=step_end: time.perf_counter() >= t, 1.0)
    last = time.perf_counter()
    window.analysis.wait_idle(30)
    pump(app, lambda: False, 0.05)
    final = window.tradeoff_plot.result.epsilon
    return {"steps": steps, "duration_s": round(last - start, 3),
            "redraws_during_drag": sum(1 for t in updates if t <= last),
            "lag_after_last_step_ms": round((max(updates) - last) * 1000, 2) if updates else None,
            "final_epsilon_matches": bool(abs(final - window.session.epsilon) < 1e-9)}


def _load_csv_module():
    bench = Path(__file__).with_name("load_csv.py")
    spec = importlib.util.spec_from_file_location("dpstudio_bench_load_csv", bench)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_parquet(rows: int) -> Path:
    """The columns of ``load_csv.make_csv`` as a Parquet file of ``rows`` rows, written a
    million rows at a time (cached in the temp folder)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(tempfile.gettempdir()) / f"dpstudio_bench_{rows}x10.parquet"
    if path.is_file():
        return path
    rng = np.random.default_rng(1)
    tmp = path.with_suffix(".tmp")
    writer = None
    for start in range(0, rows, 1_000_000):
        m = min(1_000_000, rows - start)
        table = pa.table({
            "respondent_id": np.char.add("R", np.arange(start, start + m).astype(str)),
            "faculty": rng.choice(["Arts", "Business", "Engineering", "Law", "Medicine",
                                   "Science"], m),
            "region": rng.choice(["North", "South", "East", "West"], m),
            "smoker": rng.choice(["yes", "no"], m),
            "age": rng.integers(18, 90, m),
            "income": np.where(rng.random(m) < 0.05, np.nan,
                               rng.gamma(2.0, 20000.0, m).round(2)),
            "bmi": rng.normal(26, 4, m).round(1),
            "hours": rng.integers(0, 60, m),
            "score": rng.random(m).round(4),
            "visits": rng.poisson(3, m),
        })
        if writer is None:
            writer = pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table)
    writer.close()
    os.replace(tmp, path)
    return path


def open_file(app, window, path: Path, rows: int, timeout: float = 120.0) -> dict:
    """File ▸ Open of ``path`` until it is shown and until every plot is drawn."""
    from PySide6.QtCore import QTimer

    window.analysis.wait_idle(timeout)
    shown: list[float] = []
    jobs: dict[str, float] = {}
    ticks: list[float] = []
    set_dataset = [0.0]
    original = window.set_dataset

    def timed_set_dataset(dataset) -> None:
        begin = time.perf_counter()
        original(dataset)
        set_dataset[0] += time.perf_counter() - begin

    def on_busy(key: str, busy: bool) -> None:
        if not busy and shown:
            jobs[key] = time.perf_counter()

    window.set_dataset = timed_set_dataset
    window.dataset_changed.connect(lambda _d: shown.append(time.perf_counter()))
    window.analysis.busy_changed.connect(on_busy)
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    start = time.perf_counter()
    try:
        window.open_path(path)
        if not pump(app, lambda: bool(shown), timeout):
            return {"error": f"not loaded within {timeout:g} s"}
        if not window.analysis.wait_idle(timeout):
            return {"error": f"plots not all drawn within {timeout:g} s"}
        end = time.perf_counter()
    finally:
        timer.stop()
        window.analysis.busy_changed.disconnect(on_busy)
        del window.set_dataset
    ticks = [start] + [t for t in ticks if t <= end] + [end]
    stall = max(b - a for a, b in zip(ticks, ticks[1:], strict=False))
    return {"rows": rows, "columns": 10, "file_mb": round(path.stat().st_size / 1e6, 1),
            "column": window.session.column, "query": window.session.query,
            "open_to_shown_s": round(shown[0] - start, 3),
            "all_plots_drawn_s": round(end - start, 3),
            "jobs_done_s": {k: round(t - start, 3) for k, t in sorted(jobs.items(),
                                                                     key=lambda kv: kv[1])},
            "max_stall_ms": round(stall * 1000, 1),
            "ui_thread_set_dataset_s": round(set_dataset[0], 3)}


def open_csv(app, window) -> dict | None:
    if not Path(__file__).with_name("load_csv.py").is_file() or not hasattr(window, "loader"):
        return None
    return open_file(app, window, _load_csv_module().make_csv(1_000_000), 1_000_000)


def open_parquet(app, window, rows: int = 10_000_000) -> dict:
    return open_file(app, window, make_parquet(rows), rows, timeout=300.0)


#: The column declared numeric (with public bounds) in the numeric cases' sidecar.
NUMERIC_COLUMN = {"name": "age", "type": "numeric", "lower": 18, "upper": 90}


def declared_copy(path: Path) -> Path:
    """``path`` under another name (a hard link: no copy of the data) with a schema
    sidecar declaring :data:`NUMERIC_COLUMN`, so the window opens on that column."""
    copy = path.with_name(path.stem + "_declared" + path.suffix)
    if not copy.is_file():
        try:
            os.link(path, copy)
        except OSError:  # another file system: a symbolic link reads the same
            copy.symlink_to(path)
    Path(str(copy) + ".schema.json").write_text(json.dumps(
        {"schema_version": 1, "columns": [NUMERIC_COLUMN]}), encoding="utf-8")
    return copy


def _timed_change(app, window, change, timeout: float) -> float | None:
    """Seconds from ``change()`` (what a combo box calls) until no job is left."""
    window.analysis.wait_idle(timeout)
    start = time.perf_counter()
    change()
    app.processEvents()
    if not window.analysis.wait_idle(timeout):
        return None
    return time.perf_counter() - start


def open_numeric(app, window, path: Path, rows: int, target: float,
                 timeout: float = 120.0) -> dict:
    """The declared numeric column: File ▸ Open (the mean), then the sum, then the local
    and the shuffle trust models, each until every plot is drawn."""
    session = window.session
    # The window remembers the last choices: start each file from the central mean.
    session.set_trust_model("central")
    session.set_query("mean")
    opened = open_file(app, window, declared_copy(path), rows, timeout)
    if session.query != "mean":
        session.set_query("mean")
        window.analysis.wait_idle(timeout)
    cases = [{"case": f"open, {session.trust_model} {session.query}",
              "column": session.column,
              "all_plots_drawn_s": opened.get("all_plots_drawn_s"),
              "jobs_done_s": opened.get("jobs_done_s")}]
    for label, change in (("sum", lambda: session.set_query("sum")),
                          ("local", lambda: session.set_trust_model("local")),
                          ("shuffle", lambda: session.set_trust_model("shuffle"))):
        seconds = _timed_change(app, window, change, timeout)
        cases.append({"case": f"{label}: {session.trust_model} {session.query}",
                      "column": session.column,
                      "all_plots_drawn_s": None if seconds is None else round(seconds, 3)})
    for case in cases:
        case["target_s"] = target
        case["met"] = _below(case["all_plots_drawn_s"], target)
    return {**opened, "cases": cases,
            "all_met": all(case["met"] for case in cases)}


#: Run in a fresh process: ``dpstudio`` as ``make run`` starts it; prints, as JSON, the
#: wall-clock times of the main window's first paint and of its plots all drawn.
_FIRST_FRAME_DRIVER = """
import json, sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([sys.argv[0]])
marks, ticks = {}, []
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if (event.type() == QEvent.Type.Paint and "paint" not in marks
                and isinstance(obj, QMainWindow)):
            marks["paint"] = time.time()
            marks["cpu"] = time.thread_time()  # the UI thread's own processor time
            watch.start()
        return False
def check():
    ticks.append(time.time())
    windows = [w for w in QApplication.topLevelWidgets() if hasattr(w, "analysis")]
    if windows and windows[0].analysis.is_idle():
        marks["idle"] = time.time()
        stall = max((b - a for a, b in zip(ticks, ticks[1:])), default=0.0)
        print(json.dumps({"paint": marks["paint"], "idle": marks["idle"], "stall": stall,
                          "cpu": marks["cpu"]}))
        for w in windows:
            w.analysis.shutdown()
            w.close()
        app.quit()
spy = FirstPaint()
app.installEventFilter(spy)
watch = QTimer()
watch.setInterval(10)
watch.timeout.connect(check)
from dpstudio.cli import main
main(sys.argv[1:])
"""


def first_frame(runs: int = FIRST_FRAME_RUNS) -> dict:
    """Launch ``dpstudio`` (the survey sample) ``runs`` times: launch → first paint."""
    env = dict(os.environ)
    results = []
    for _ in range(runs):
        launched = time.time()
        out = subprocess.run([sys.executable, "-c", _FIRST_FRAME_DRIVER], env=env,
                             capture_output=True, text=True, timeout=120)
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
        if not lines:
            return {"error": (out.stderr.strip().splitlines() or ["no output"])[-1]}
        got = json.loads(lines[-1])
        results.append((got["paint"] - launched, got["idle"] - launched, got["stall"],
                        got["cpu"]))
    paint = sorted(r[0] for r in results)
    return {"first_frame_s": round(paint[len(paint) // 2], 3),
            "first_frame_cpu_s": round(sorted(r[3] for r in results)[len(results) // 2], 3),
            "first_curves_drawn_s": round(sorted(r[1] for r in results)[len(results) // 2],
                                          3),
            "max_stall_ms": round(max(r[2] for r in results) * 1000, 1),
            "runs": [round(r[0], 3) for r in results]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=CHANGES)
    parser.add_argument("--no-csv", action="store_true", help="skip the 1M-row CSV")
    parser.add_argument("--no-parquet", action="store_true",
                        help="skip the 10M-row Parquet file")
    parser.add_argument("--only-open", action="store_true",
                        help="only the start-up and the big files (no ε changes or drag)")
    args = parser.parse_args(argv)

    before = time.perf_counter()
    path = make_dataset(args.rows)
    prepared = time.perf_counter() - before  # writing the file (first run) is not start-up
    start = time.perf_counter()
    from dpstudio.data.dataset import open_dataset
    from dpstudio.ui.app import _application
    from dpstudio.ui.main_window import MainWindow

    app = _application()
    window = MainWindow(open_dataset(path))
    window.resize(1400, 900)
    window.show()
    app.processEvents()
    interactive = time.perf_counter() - T0 - prepared  # since the script started
    window.analysis.wait_idle(120)
    first_curves = time.perf_counter() - start

    if args.only_open:
        latency = {"n": 0, "median": None, "p95": None}
        drag = None
    else:
        latency = measure_changes(app, window, args.changes)
        drag = measure_drag(app, window)
    csv = None if args.no_csv else open_csv(app, window)
    parquet = None if args.no_parquet else open_parquet(app, window)
    csv_numeric = None if csv is None else open_numeric(
        app, window, _load_csv_module().make_csv(1_000_000), 1_000_000,
        TARGETS["open_1m_all_plots_s"])
    parquet_numeric = None if args.no_parquet else open_numeric(
        app, window, make_parquet(10_000_000), 10_000_000,
        TARGETS["open_10m_parquet_all_plots_s"], timeout=300.0)
    window.analysis.shutdown()
    launch = first_frame()  # last: its processes must not compete with the window's jobs

    out = {
        "rows": args.rows,
        "column": window.session.column if csv is None else "age",
        "epsilon_change_ms": latency,
        "drag": drag,
        "start_to_interactive_s": round(interactive, 3),
        "first_curves_s": round(first_curves, 3),
        "first_frame": launch,
        "dataset_preparation_s": round(prepared, 3),
        "open_1m_csv": csv,
        "open_10m_parquet": parquet,
        "open_1m_csv_numeric": csv_numeric,
        "open_10m_parquet_numeric": parquet_numeric,
        "targets": TARGETS,
        "meets": {
            "median": _below(latency["median"], TARGETS["median_ms"]),
            "p95": _below(latency["p95"], TARGETS["p95_ms"]),
            "start": interactive < TARGETS["start_s"],
            "first_frame": _below(launch.get("first_frame_s"), TARGETS["first_frame_s"]),
            "open_1m": _below((csv or {}).get("open_to_shown_s"), TARGETS["open_1m_s"]),
            "open_1m_all_plots": _below((csv or {}).get("all_plots_drawn_s"),
                                        TARGETS["open_1m_all_plots_s"]),
            "open_10m_parquet_all_plots": _below(
                (parquet or {}).get("all_plots_drawn_s"),
                TARGETS["open_10m_parquet_all_plots_s"]),
            "open_1m_numeric_all_cases": None if csv_numeric is None else (
                csv_numeric["all_met"]),
            "open_10m_parquet_numeric_all_cases": None if parquet_numeric is None else (
                parquet_numeric["all_met"]),
        },
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": sys.platform},
    }
    print(json.dumps(out))
    return 0


def _below(value: float | None, target: float) -> bool | None:
    """Whether a measured ``value`` meets ``target`` (``None``: not measured)."""
    return None if value is None else value < target


if __name__ == "__main__":
    sys.exit(main())
