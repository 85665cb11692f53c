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
* ``open_1m_csv_s`` (when the background loader exists): File ▸ Open of a 1,000,000-row,
  10-column CSV until the dataset is on screen (``benchmarks/load_csv.py`` makes the file);
* targets and whether they are met (median < 50 ms, p95 < 100 ms, start < 2 s, 1M < 3 s).

Run: ``python benchmarks/ui_latency.py`` (``--rows``, ``--changes``, ``--no-csv``).
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("DPSTUDIO_CONFIG_DIR", tempfile.mkdtemp(prefix="dpstudio_bench_cfg_"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

CHANGES = 60
TARGETS = {"median_ms": 50.0, "p95_ms": 100.0, "start_s": 2.0, "open_1m_s": 3.0}


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


def open_csv(app, window) -> dict | None:
    bench = Path(__file__).with_name("load_csv.py")
    if not bench.is_file() or not hasattr(window, "loader"):
        return None
    spec = importlib.util.spec_from_file_location("dpstudio_bench_load_csv", bench)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = module.make_csv(1_000_000)
    shown: list[float] = []
    window.dataset_changed.connect(lambda _d: shown.append(time.perf_counter()))
    start = time.perf_counter()
    window.open_path(path)
    if not pump(app, lambda: bool(shown), 60.0):
        return {"error": "not loaded within 60 s"}
    opened = shown[0] - start
    window.analysis.wait_idle(60)
    return {"rows": 1_000_000, "columns": 10, "open_to_shown_s": round(opened, 3),
            "then_analysis_idle_s": round(time.perf_counter() - start, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=CHANGES)
    parser.add_argument("--no-csv", action="store_true", help="skip the 1M-row CSV")
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

    latency = measure_changes(app, window, args.changes)
    drag = measure_drag(app, window)
    csv = None if args.no_csv else open_csv(app, window)
    window.analysis.shutdown()

    out = {
        "rows": args.rows,
        "column": window.session.column if csv is None else "age",
        "epsilon_change_ms": latency,
        "drag": drag,
        "start_to_interactive_s": round(interactive, 3),
        "first_curves_s": round(first_curves, 3),
        "dataset_preparation_s": round(prepared, 3),
        "open_1m_csv": csv,
        "targets": TARGETS,
        "meets": {
            "median": latency["median"] < TARGETS["median_ms"],
            "p95": latency["p95"] < TARGETS["p95_ms"],
            "start": interactive < TARGETS["start_s"],
            "open_1m": None if not csv or "open_to_shown_s" not in csv
            else csv["open_to_shown_s"] < TARGETS["open_1m_s"],
        },
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": sys.platform},
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
