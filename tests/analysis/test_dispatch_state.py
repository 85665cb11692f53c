"""The one dispatch hands the job's state to the long runs: a local protocol, secure
aggregation's masking, and a training run report progress and stop when cancelled."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from dpstudio.analysis import AnalysisSpec, resolve, run
from dpstudio.analysis.training import describe_training
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SimulationSource
from dpstudio.jobs import Cancelled

RNG = np.random.default_rng(2)
LABELS = np.array(["a", "b", "c"] * 700, dtype=object)
AGES = RNG.uniform(20, 60, 300)


class Recording:
    """Records progress; cancelled after ``after`` reports (never when None)."""

    def __init__(self, after=None):
        self.after, self.fractions = after, []

    def progress(self, fraction, message=""):
        self.fractions.append(fraction)

    def cancelled(self):
        return self.after is not None and len(self.fractions) >= self.after


def _local():
    return AnalysisSpec("local", QuerySpec("histogram", "krr", 1.0, column="c",
                                           categories=("a", "b", "c")))


def _secagg():
    return AnalysisSpec("distributed", QuerySpec("sum", "secagg_gaussian", 1.0, delta=1e-6,
                                                 bounds=(0.0, 100.0), column="age"))


def _training():
    declared = {"a": SimpleNamespace(bounds=(0.0, 10.0), categories=None, type=None),
                "y": SimpleNamespace(bounds=None, categories=None, type=None)}
    spec = describe_training("y", ("a",), "logistic", "dpsgd", 1.0, delta=1e-5,
                             params={"epochs": 3})
    spec, _ = resolve(spec, declared)
    a = RNG.uniform(0, 10, 400)
    return spec, {"a": a, "y": np.where(a + RNG.logistic(size=400) > 5, "yes", "no")}


CASES = {"local": lambda: (_local(), LABELS), "secagg": lambda: (_secagg(), AGES),
         "training": _training}


@pytest.mark.parametrize("name", list(CASES))
def test_progress_reaches_the_long_runs_and_the_result_is_unchanged(name):
    analysis, values = CASES[name]()
    state = Recording()
    with_state = run(analysis, values, SimulationSource(4), state=state)
    without = run(analysis, values, SimulationSource(4))
    assert state.fractions, "no progress was reported"
    assert all(0 <= f <= 1 for f in state.fractions)
    # The random stream is the same with or without a state: one seed, one answer.
    assert with_state.fields == without.fields


@pytest.mark.parametrize("name", list(CASES))
def test_a_cancel_stops_the_run_and_returns_nothing(name):
    analysis, values = CASES[name]()
    with pytest.raises(Cancelled):
        run(analysis, values, SimulationSource(4), state=Recording(after=0))
