"""Mironov 2012: textbook floating-point Laplace leaks the input through its low bits.

`value + np.random.laplace(b)` rounds the sum at the precision of `value`: with value 1.0
every output is a multiple of 2^-53, while with value 0.0 about a quarter of the outputs
are not. An attacker who sees an output off that lattice knows the input was 0 — an
infinite privacy loss, whatever ε was claimed. Our release path snaps the statistic to a
grid and adds integer noise, so the outputs of neighbouring inputs share one lattice and
their low bits are identically distributed.
"""

import numpy as np

from dpstudio.engine.audit import epsilon_lower_bound
from dpstudio.engine.queries import QuerySpec, run_query
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SimulationSource

N = 100_000


def _off_lattice(outputs: np.ndarray) -> np.ndarray:
    """1 where an output is not a multiple of 2^-53 (the lattice of values near 1.0)."""
    return ((outputs * 2.0**53) % 1.0 != 0).astype(np.int64)


def _low_bits(outputs: np.ndarray, grid: float) -> np.ndarray:
    """The lowest 6 bits of the output in grid steps (what a low-bit attacker looks at)."""
    steps = np.round(outputs / grid).astype(np.int64)
    assert np.all(steps * grid == outputs), "every output must lie on the grid"
    return steps & 63


def test_textbook_laplace_leaks_through_low_bits():
    rng = np.random.default_rng(2012)
    out_d = 0.0 + rng.laplace(scale=1.0, size=N)   # f(D) = 0, ε = 1 claimed
    out_d2 = 1.0 + rng.laplace(scale=1.0, size=N)  # f(D′) = 1
    assert _off_lattice(out_d2).sum() == 0
    assert _off_lattice(out_d).mean() > 0.2
    audit = epsilon_lower_bound(_off_lattice(out_d), _off_lattice(out_d2), categorical=True)
    assert audit.epsilon_lower > 5.0  # far beyond the claimed ε = 1


def test_our_release_path_keeps_neighbours_on_one_lattice():
    eps = 1.0
    info = REGISTRY.get("laplace")
    family = info.build(**info.resolve({"epsilon": eps}))
    grid = family.grid(1.0, eps, 0.0)
    noise = family.calibrate(round(1.0 / grid), grid, eps, 0.0)
    src = SimulationSource(2012)
    # The release computes (statistic + integer noise) · grid; statistic 0 vs 1 (one step Δ).
    out_d = (0 + noise.sample(N, src)) * grid
    out_d2 = (noise.sensitivity + noise.sample(N, src)) * grid
    assert _off_lattice(out_d).sum() == 0 and _off_lattice(out_d2).sum() == 0
    bits = epsilon_lower_bound(_low_bits(out_d, grid), _low_bits(out_d2, grid), categorical=True)
    assert bits.epsilon_lower < 0.1  # low bits carry (next to) nothing
    whole = epsilon_lower_bound(out_d, out_d2)
    assert whole.epsilon_lower <= eps


def test_run_query_outputs_lie_on_the_grid_for_neighbouring_datasets():
    values = np.array([0.1, 0.2, 0.7, 0.3])  # decimal fractions: not on any binary grid
    neighbour = np.append(values, 0.9)
    spec = QuerySpec("sum", "laplace", epsilon=1.0, bounds=(0.0, 1.0))
    src = SimulationSource(1)
    first = run_query(values, spec, src)
    grid = first.components[0]["grid"]
    outs = [run_query(v, spec, src).value for v in (values, neighbour) for _ in range(200)]
    steps = np.array(outs) / grid
    assert np.all(steps == np.round(steps))
