"""run_local: one column through a local protocol, as the CLI will call it."""

import math

import numpy as np
import pytest

from dpstudio.engine.errors import EngineError, ParameterError, QueryError
from dpstudio.engine.local import LocalResult, run_local
from dpstudio.engine.local.respond import OTHER_LABEL
from dpstudio.engine.rng import SecureSource, SimulationSource

CATS = ["red", "green", "blue", "other"]


def _colours(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.choice(CATS[:3] + ["purple"], size=n, p=[0.5, 0.3, 0.15, 0.05])


@pytest.mark.parametrize("mech", ["krr", "sue", "oue", "olh", "hadamard", "cms"])
def test_histogram(mech):
    col = _colours()
    res = run_local(col, mech, {"epsilon": 2.0}, categories=CATS, source=SimulationSource(1))
    assert isinstance(res, LocalResult)
    assert res.trust_model == "local" and res.mechanism == mech and res.epsilon == 2.0
    # Every row reports: n is the number of rows; "purple" goes to the extra cell.
    assert res.n == col.size and res.clamped == int(np.sum(col == "purple"))
    cells = CATS + [OTHER_LABEL]
    assert list(res.estimate) == cells and list(res.stderr) == cells
    for c in cells:
        true = int(np.sum(col == c)) if c != OTHER_LABEL else int(np.sum(col == "purple"))
        assert abs(res.estimate[c] - true) < 5 * res.stderr[c]
        assert res.ci_low[c] <= res.estimate[c] <= res.ci_high[c] or res.estimate[c] < 0
    assert res.central_stderr == pytest.approx(math.sqrt(0.5) / math.sinh(1.0), rel=1e-12)
    assert res.central_stderr < min(res.stderr.values())  # the price of the local model
    rec = res.records()
    assert all(len(v) == res.n for v in rec.values())
    d = res.to_dict()
    assert "reports" not in d and d["query"] == "histogram"


def test_rr_on_booleans_and_with_p():
    col = np.array([True] * 700 + [False] * 300)
    res = run_local(col, "rr", {"p": 0.8}, source=SimulationSource(2))
    assert list(res.estimate) == ["False", "True"]
    assert res.epsilon == pytest.approx(math.log(4), rel=1e-12)
    assert res.estimate["True"] + res.estimate["False"] == pytest.approx(1000, rel=1e-12)
    assert abs(res.estimate["True"] - 700) < 5 * res.stderr["True"]
    res01 = run_local(np.array([0, 1, 1, 0, 1]), "rr", {}, source=SimulationSource(2))
    assert list(res01.estimate) == ["0", "1"]


@pytest.mark.parametrize("mech", ["local_laplace", "local_gaussian", "duchi"])
def test_mean(mech):
    rng = np.random.default_rng(13)  # not 3: SimulationSource(3) draws the same stream
    col = rng.uniform(0, 100, 5000)
    col[::50] = np.nan
    res = run_local(col, mech, {"epsilon": 1.0}, bounds=(0, 100), source=SimulationSource(3),
                    postprocess="clip")
    # Missing values are sent as the middle of the bounds: n is the number of rows.
    x = np.where(np.isnan(col), 50.0, col)
    assert res.query == "mean" and res.n == col.size and res.missing == 100
    assert res.estimate == {"mean": res.value}
    assert abs(res.unbiased - x.mean()) < 5 * res.stderr
    assert 0 <= res.ci_low <= res.value <= res.ci_high <= 100
    assert res.central_stderr < res.stderr
    assert res.delta == (1e-6 if mech == "local_gaussian" else 0.0)
    assert len(res.records()["report"]) == col.size


def test_secure_source_is_a_release():
    res = run_local(_colours(500), "krr", {"epsilon": 1.0}, categories=CATS,
                    source=SecureSource())
    assert res.simulated is False
    sim = run_local(_colours(500), "krr", {"epsilon": 1.0}, categories=CATS,
                    source=SimulationSource(0))
    assert sim.simulated is True


@pytest.mark.parametrize("call,error", [
    (lambda s: run_local(_colours(), "krr", {"epsilon": 1}, source=s), QueryError),
    (lambda s: run_local(_colours(), "laplace", {"epsilon": 1}, categories=CATS, source=s),
     QueryError),
    (lambda s: run_local(_colours(), "nope", {}, categories=CATS, source=s), ParameterError),
    (lambda s: run_local(_colours(), "krr", {"epsilon": 0}, categories=CATS, source=s),
     ParameterError),
    (lambda s: run_local(_colours(), "krr", {"g": 3}, categories=CATS, source=s),
     ParameterError),
    (lambda s: run_local(_colours(), "krr", {}, categories=["a", "a"], source=s), QueryError),
    (lambda s: run_local(_colours(), "krr", {}, categories=["a", OTHER_LABEL], source=s),
     QueryError),
    (lambda s: run_local(_colours(), "krr", {}, query="mean", categories=CATS, source=s),
     QueryError),
    (lambda s: run_local(_colours(), "sfp", {}, categories=CATS, source=s), QueryError),
    (lambda s: run_local(_colours(), "cms", {}, query="heavy_hitters", categories=CATS,
                         source=s), QueryError),
    (lambda s: run_local(np.array([1.5, 2.0]), "sfp", {}, source=s), QueryError),
    (lambda s: run_local(_colours(), "rr", {}, categories=CATS, source=s), QueryError),
    (lambda s: run_local(np.array([]), "krr", {}, categories=CATS, source=s), QueryError),
    (lambda s: run_local(np.ones(5), "duchi", {}, source=s), ParameterError),
    (lambda s: run_local(np.array(["a", "b"]), "duchi", {}, bounds=(0, 1), source=s),
     QueryError),
    (lambda s: run_local(_colours(), "krr", {}, categories=CATS, source=s,
                         postprocess="round"), QueryError),
    (lambda s: run_local(np.ones(3), "local_gaussian", {"delta": 0}, bounds=(0, 1), source=s),
     ParameterError),
])
def test_errors_are_one_line(call, error):
    with pytest.raises(error) as err:
        call(SimulationSource(0))
    assert isinstance(err.value, EngineError) and "\n" not in str(err.value)
