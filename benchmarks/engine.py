"""Throughput of the exact, secure noise samplers against numpy's (insecure, inexact) ones.

Prints one JSON object. The headline figures (``secure_laplace_per_s``,
``secure_gaussian_per_s``, ``numpy_*_per_s``, ``ratio_*``, and the ``laplace`` /
``gaussian`` sections) are measured at the scales releases actually use: the release path
puts the noise scale at ``2**15 <= scale < 2**16`` grid steps, so ``discrete_laplace`` and
``discrete_gaussian`` run on the OS CSPRNG (``SecureSource``) for 10 million values at
three scales in that range (the worst is reported), beside
``numpy.random.default_rng().laplace`` / ``.normal`` timed in the same run (best of
``REPEATS`` each). Product target: at least 5 million values/s and at most 5x numpy's time
for the same kind of noise.

Secondary sections, so that no figure is read at a scale it was not measured at:

* ``table_range_256_512``: scales served by the cached CDF tables (``discrete_*``
  mechanisms may use any scale);
* ``large_scales``: 1e6 and 1e8 (the Gaussian's block sampler must reach 20 million
  values/s at the release scales and here);
* ``other_scales_1M_values``: small and large scales on 1 million values (target 1 million
  values/s);
* ``table_build_ms``: building the exact table for a scale not seen before (paid once per
  scale, included in the first call).

Run: ``python benchmarks/engine.py``.
"""

from __future__ import annotations

import json
import platform
import time

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.rng import SecureSource

N = 10_000_000
REPEATS = 5
RELEASE_SCALES = (32768.5, 40000.5, 65535.5)  # inside [2**15, 2**16) grid steps
TABLE_SCALES = (256.0, 383.5, 511.9)
LARGE_SCALES = (1e6, 1e8)
MIN_RATE = 5e6
MAX_RATIO = 5.0
BLOCK_MIN_RATE = 20e6  # discrete Gaussian above the table range (block proposals)
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


def section(sample, scales, source, numpy_seconds: float) -> dict:
    """Throughput at each scale, the worst one, and its ratio to numpy's time."""
    per_scale = {}
    for scale in scales:
        seconds = best_time(lambda scale=scale: sample(scale, N, source))
        per_scale[str(scale)] = {"seconds": round(seconds, 4), "per_second": round(N / seconds)}
    worst = max(v["seconds"] for v in per_scale.values())
    return {
        "scales": list(scales),
        "secure_seconds_worst": round(worst, 4),
        "secure_per_second_worst": round(N / worst),
        "by_scale": per_scale,
        "numpy_seconds": round(numpy_seconds, 4),
        "numpy_per_second": round(N / numpy_seconds),
        "ratio_secure_over_numpy": round(worst / numpy_seconds, 3),
    }


def main() -> dict:
    source = SecureSource()
    gen = np.random.default_rng()
    numpy_time = {
        "laplace": best_time(lambda: gen.laplace(size=N)),
        "gaussian": best_time(lambda: gen.normal(size=N)),
    }
    samplers = {"laplace": sampling.discrete_laplace, "gaussian": sampling.discrete_gaussian}
    report: dict = {"n": N, "repeats": REPEATS, "python": platform.python_version(),
                    "numpy": np.__version__, "release_scales": list(RELEASE_SCALES)}
    met = True
    for kind, sample in samplers.items():
        sec = section(sample, RELEASE_SCALES, source, numpy_time[kind])
        ok = (sec["secure_per_second_worst"] >= MIN_RATE
              and sec["ratio_secure_over_numpy"] <= MAX_RATIO)
        if kind == "gaussian":
            ok &= sec["secure_per_second_worst"] >= BLOCK_MIN_RATE
        sec["meets_target"] = ok
        met &= ok
        report[kind] = sec
        report[f"secure_{kind}_per_s"] = sec["secure_per_second_worst"]
        report[f"numpy_{kind}_per_s"] = sec["numpy_per_second"]
        report[f"ratio_{kind}_secure_over_numpy"] = sec["ratio_secure_over_numpy"]

    report["table_range_256_512"] = {
        kind: section(sample, TABLE_SCALES, source, numpy_time[kind])
        for kind, sample in samplers.items()
    }
    large = {kind: section(sample, LARGE_SCALES, source, numpy_time[kind])
             for kind, sample in samplers.items()}
    large["gaussian"]["meets_block_target"] = (
        large["gaussian"]["secure_per_second_worst"] >= BLOCK_MIN_RATE)
    report["large_scales"] = large

    j, sigma_b = sampling._block_params(RELEASE_SCALES[1])
    report["table_build_ms"] = {
        "gaussian_sigma_511.9": round(build_ms(sampling._gauss_table, 511.9), 1),
        "laplace_scale_511.9": round(build_ms(sampling._laplace_table, 511.9), 1),
        f"gaussian_blocks_sigma_{RELEASE_SCALES[1]}_half_table_{sigma_b}":
            round(build_ms(sampling._half_gauss_table, sigma_b), 1),
    }
    other = {}
    for kind, scale in (("laplace", 1e6), ("gaussian", 1e6), ("laplace", 2.5),
                        ("gaussian", 0.75), ("laplace", 1e9), ("gaussian", 1e12)):
        seconds = best_time(lambda kind=kind, scale=scale: samplers[kind](scale, OTHER_N, source))
        other[f"{kind}_{scale:g}"] = {"per_second": round(OTHER_N / seconds),
                                      "meets_target": OTHER_N / seconds >= OTHER_MIN_RATE}
    report["other_scales_1M_values"] = other
    report["targets"] = {"min_per_second": MIN_RATE, "max_ratio_to_numpy": MAX_RATIO,
                         "gaussian_block_min_per_second": BLOCK_MIN_RATE,
                         "other_scales_min_per_second": OTHER_MIN_RATE}
    report["targets_met"] = (met and large["gaussian"]["meets_block_target"]
                             and all(v["meets_target"] for v in other.values()))
    return report


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
