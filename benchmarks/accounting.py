"""Speed and values of the DP-SGD accountants.

Prints one JSON object: for DP-SGD with q = 0.01, σ = 1.1, δ = 1e-5 at T = 1,000 and
10,000 steps, the ε and the best-of-3 wall time of the PLD accountant (build the one-step
PLD, compose T times by one FFT power, read ε) and of the RDP accountant (subsampled-
Gaussian RDP over the default orders, ×T, convert). Targets: PLD < 0.1 s at either T (its
cost must not grow with T), RDP < 0.05 s; ``targets_met`` says whether all hold.
Run: ``python benchmarks/accounting.py``.
"""

from __future__ import annotations

import json
import platform
import time

import numpy as np
import scipy

from dpstudio.engine.accounting import dpsgd_epsilon

Q, SIGMA, DELTA = 0.01, 1.1, 1e-5
STEPS = (1_000, 10_000)
REPEATS = 3
TARGET_SECONDS = {"pld": 0.1, "rdp": 0.05}


def best_time(fn, repeats: int = REPEATS) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> dict:
    report: dict = {"sample_rate": Q, "sigma": SIGMA, "delta": DELTA, "repeats": REPEATS,
                    "python": platform.python_version(), "numpy": np.__version__,
                    "scipy": scipy.__version__, "targets_seconds": TARGET_SECONDS}
    met = True
    for method in ("pld", "rdp"):
        rows = {}
        for steps in STEPS:
            seconds, result = best_time(lambda m=method, t=steps: dpsgd_epsilon(SIGMA, Q, t,
                                                                                DELTA, m))
            ok = seconds < TARGET_SECONDS[method]
            met &= ok
            rows[str(steps)] = {"epsilon": round(result.epsilon, 6),
                                "seconds": round(seconds, 4), "meets_target": ok}
        report[method] = rows
    report["targets_met"] = bool(met)
    return report


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
