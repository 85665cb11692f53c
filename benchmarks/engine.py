"""Throughput of the exact, secure noise samplers against numpy's (insecure, inexact) ones.

Prints one JSON object: draws per second of ``discrete_laplace`` and ``discrete_gaussian``
on the OS CSPRNG (``SecureSource``) for 10 million values at scales in the release range
[256, 512), beside ``numpy.random.default_rng().laplace`` / ``.normal`` timed in the same
run (best of 3 each), the ratios, and whether the targets are met:
at least 5 million values/s and at most 5x numpy's time for the same kind of noise.
Secondary figures: table build time for a new scale, and throughput outside the release
range (target 1 million values/s). Run: ``python benchmarks/engine.py``.
"""

from __future__ import annotations

import json
import platform
import time

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.rng import SecureSource

N = 10_000_000
REPEATS = 3
RELEASE_SCALES = (256.0, 383.5, 511.9)
MIN_RATE = 5e6
MAX_RATIO = 5.0
OTHER_N = 1_000_000
OTHER_MIN_RATE = 1e6


def best_time(fn, repeats: int = REPEATS) -> float:
    """Best wall time of ``repeats`` calls (the first call also warms caches)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def build_ms(builder, scale: float) -> float:
    """Milliseconds to build the exact table for a scale not seen before."""
    builder.cache_clear()
    start = time.perf_counter()
    builder(scale)
    return 1e3 * (time.perf_counter() - start)


def main() -> dict:
    source = SecureSource()
    gen = np.random.default_rng()
    numpy_time = {
        "laplace": best_time(lambda: gen.laplace(size=N)),
        "gaussian": best_time(lambda: gen.normal(size=N)),
    }
    samplers = {"laplace": sampling.discrete_laplace, "gaussian": sampling.discrete_gaussian}
    report: dict = {"n": N, "repeats": REPEATS, "python": platform.python_version(),
                    "numpy": np.__version__}
    met = True
    for kind, sample in samplers.items():
        per_scale = {}
        for scale in RELEASE_SCALES:
            seconds = best_time(lambda sample=sample, scale=scale: sample(scale, N, source))
            per_scale[str(scale)] = {"seconds": round(seconds, 4), "per_second": round(N / seconds)}
        worst = max(v["seconds"] for v in per_scale.values())
        ratio = worst / numpy_time[kind]
        ok = N / worst >= MIN_RATE and ratio <= MAX_RATIO
        met &= ok
        report[kind] = {
            "scales": list(RELEASE_SCALES),
            "secure_seconds_worst": round(worst, 4),
            "secure_per_second_worst": round(N / worst),
            "by_scale": per_scale,
            "numpy_seconds": round(numpy_time[kind], 4),
            "numpy_per_second": round(N / numpy_time[kind]),
            "ratio_secure_over_numpy": round(ratio, 3),
            "meets_target": ok,
        }
    report["table_build_ms"] = {
        "gaussian_sigma_511.9": round(build_ms(sampling._gauss_table, 511.9), 1),
        "laplace_scale_511.9": round(build_ms(sampling._laplace_table, 511.9), 1),
    }
    other = {}
    for kind, scale in (("laplace", 1e6), ("gaussian", 1e6), ("laplace", 2.5),
                        ("gaussian", 0.75)):
        seconds = best_time(lambda kind=kind, scale=scale: samplers[kind](scale, OTHER_N, source))
        other[f"{kind}_{scale:g}"] = {"per_second": round(OTHER_N / seconds),
                                      "meets_target": OTHER_N / seconds >= OTHER_MIN_RATE}
    report["other_scales_1M_values"] = other
    report["targets"] = {"min_per_second": MIN_RATE, "max_ratio_to_numpy": MAX_RATIO,
                         "other_scales_min_per_second": OTHER_MIN_RATE}
    report["targets_met"] = met and all(v["meets_target"] for v in other.values())
    return report


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
