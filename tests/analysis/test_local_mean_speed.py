"""A local mean's Monte-Carlo points without randomizing every record.

The simulated estimates are drawn from the law of the reports' sum over the grouped
values (``sample_estimates``): no per-record randomization, 200 releases per ε at any n,
and points that still sit on the analytic line.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from dpstudio.analysis.choices import MC_EPSILONS, Choices
from dpstudio.analysis.utility import MC_REPS, utility
from dpstudio.engine.local import mean


def _choice(mechanism: str) -> Choices:
    return Choices(column="age", column_type="numeric", value_types=("integer", "numeric"),
                   trust_model="local", query="mean", mechanism=mechanism,
                   bounds=(18.0, 90.0), relation="replace")


def _ages(n: int) -> np.ndarray:
    values = np.random.default_rng(9).integers(18, 91, n).astype(float)
    values[::100] = np.nan  # missing: sent as the bounds' middle
    return values


@pytest.mark.parametrize("mechanism", ["local_laplace", "local_gaussian", "duchi"])
def test_points_need_no_per_record_randomization(mechanism: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self, values, source):
        raise AssertionError("randomized every record")

    for cls in (mean.LocalLaplace, mean.LocalGaussian, mean.DuchiMean):
        monkeypatch.setattr(cls, "randomize", refuse)
    values = _ages(300_000)
    s = _choice(mechanism)
    eps = MC_EPSILONS[::4]
    points = utility(s, values, analytic=False, compare=False, mc_epsilons=eps)
    assert points.reps == MC_REPS
    assert f"simulation: {MC_REPS} simulated releases per ε" in " ".join(points.notes)
    sim = next(c for c in points.curves if c.kind == "simulation")
    line = next(c for c in utility(s, values, simulate=False, compare=False,
                                   line_epsilons=sim.epsilon).curves if c.primary)
    np.testing.assert_allclose(sim.error, line.error, rtol=0.2)


def test_two_million_rows_simulate_in_seconds() -> None:
    values = _ages(2_000_000)
    start = time.perf_counter()
    points = utility(_choice("local_laplace"), values, analytic=False, compare=False)
    # Per record this took ~12 s (10 releases of 2 million draws at each of 11 ε).
    assert time.perf_counter() - start < 4.0
    assert points.reps == MC_REPS
