"""Long engine work accepts the job state: progress that rises to 1, cancellation that
stops the work part-way, and results that do not depend on whether a state listens.

Each long function is run three ways on a fixed seed: without a state, with a recording
state (the result must be identical and the progress non-decreasing, ending at 1), and
with a state that cancels once the first progress arrives (it must raise
:class:`~dpstudio.jobs.Cancelled` before reporting completion: the checks sit
between chunks, rounds and FFT stages, not only at the entry).
"""

import numpy as np
import pytest

from dpstudio.engine.accounting.pld import PLD
from dpstudio.engine.attack import simulate_attack
from dpstudio.engine.distributed.secagg import setup_session
from dpstudio.engine.local.run import run_local
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.utility import monte_carlo_curve
from dpstudio.jobs import Cancelled, NullState, check, scaled


class CancelAfter(NullState):
    """Records progress; says "cancelled" once ``reports`` progress reports arrived."""

    def __init__(self, reports: int = 1) -> None:
        super().__init__()
        self.reports = reports

    def cancelled(self) -> bool:
        return len(self.fractions) >= self.reports


def assert_rises_to_one(state: NullState) -> None:
    f = np.asarray(state.fractions)
    assert f.size >= 2, f  # more than a final "done": progress during the work
    assert np.all(np.diff(f) >= 0), f
    assert np.all((f >= 0) & (f <= 1)), f
    assert f[-1] == 1.0, f


def assert_stops_part_way(run) -> None:
    state = CancelAfter(1)
    with pytest.raises(Cancelled):
        run(state)
    # Cancelled at the first check after the first report, before the work was done.
    assert len(state.fractions) == 1 and state.fractions[0] < 1.0, state.fractions


# ------------------------------------------------------------------------- the protocol


def test_check_and_scaled_forward_to_the_job_state():
    check(None)
    check(NullState())
    with pytest.raises(Cancelled):
        check(CancelAfter(0))
    assert scaled(None, 0.2, 0.6) is None
    outer = NullState()
    inner = scaled(outer, 0.2, 0.6)
    for f in (0.0, 0.5, 1.0):
        inner.progress(f)
    assert outer.fractions == pytest.approx([0.2, 0.4, 0.6])
    assert not inner.cancelled()
    assert scaled(CancelAfter(0), 0.0, 1.0).cancelled()


# ------------------------------------------------------------------------- local model


def _words(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.choice(np.array(["apple", "pear", "plum", "fig"], dtype=object), size=n,
                      p=[0.4, 0.3, 0.2, 0.1])


LOCAL_CASES = {
    "histogram": (lambda: np.random.default_rng(0).choice(["a", "b", "c"], 400), "krr",
                  {"epsilon": 1.0}, {"categories": ["a", "b", "c"]}),
    "mean": (lambda: np.random.default_rng(1).uniform(0, 10, 400), "duchi",
             {"epsilon": 1.0}, {"bounds": (0.0, 10.0)}),
    "heavy_hitters": (lambda: _words(3000, 2), "sfp",
                      {"epsilon": 8.0, "hashes": 16, "buckets": 256}, {}),
}


@pytest.mark.parametrize("query", sorted(LOCAL_CASES))
def test_run_local_reports_progress_and_the_same_result(query):
    make, name, params, kw = LOCAL_CASES[query]
    values = make()
    plain = run_local(values, name, params, source=SimulationSource(5), **kw)
    state = NullState()
    watched = run_local(values, name, params, source=SimulationSource(5), state=state, **kw)
    assert_rises_to_one(state)
    assert watched.to_dict() == plain.to_dict()


@pytest.mark.parametrize("query", sorted(LOCAL_CASES))
def test_run_local_stops_when_cancelled(query):
    make, name, params, kw = LOCAL_CASES[query]
    values = make()
    assert_stops_part_way(lambda s: run_local(values, name, params,
                                              source=SimulationSource(5), state=s, **kw))


def test_heavy_hitters_check_once_per_hash_function():
    make, name, params, kw = LOCAL_CASES["heavy_hitters"]
    state = NullState()
    run_local(make(), name, params, source=SimulationSource(5), state=state, **kw)
    # Client side (0.5), one report per hash function of the fragment sketch (90% of the
    # server's half), the confirmation, the end.
    k = params["hashes"]
    per_hash = 0.5 + 0.5 * 0.9 * np.arange(1, k + 1) / k
    np.testing.assert_allclose(state.fractions, [0.5, *per_hash, 1.0, 1.0])
    # Cancelled after the third hash function: the fourth never runs.
    stopped = CancelAfter(4)
    with pytest.raises(Cancelled):
        run_local(make(), name, params, source=SimulationSource(5), state=stopped, **kw)
    np.testing.assert_allclose(stopped.fractions, [0.5, *per_hash[:3]])


# ------------------------------------------------------------------ secure aggregation


def _session(n: int = 100, dim: int = 1024):
    # dim = 1024 words: 128 ChaCha20 blocks per edge, 512 edges per chunk, so the 4950
    # edges of the complete graph on 100 clients take 10 chunks.
    src = SimulationSource(11)
    session = setup_session(n, 32, dim, src)
    inputs = (src.uint64(n * dim) % np.uint64(1000)).astype(np.int64).reshape(n, dim)
    survivors = np.sort(np.random.default_rng(3).permutation(n)[10:])
    return session, inputs, survivors


def test_secure_aggregation_round_reports_progress_and_the_true_sum():
    session, inputs, survivors = _session()
    state = NullState()
    total = session.aggregate(inputs, survivors, state)
    assert_rises_to_one(state)
    expected = inputs[survivors].sum(axis=0) % (1 << 32)
    assert np.array_equal(total, expected.astype(np.uint64))
    # The stage without a state gives the same messages (the state draws nothing).
    messages = session.mask(inputs)
    assert np.array_equal(session.unmask_sum(survivors, messages[survivors]), total)
    # Masking reports up to one half, then unmasking from there: ten edge chunks each.
    f = np.asarray(state.fractions)
    assert np.count_nonzero(f <= 0.5) >= 10 and f[f <= 0.5].max() == 0.5


@pytest.mark.parametrize("stage", ["aggregate", "mask", "unmask"])
def test_secure_aggregation_stops_when_cancelled(stage):
    session, inputs, survivors = _session()
    messages = session.mask(inputs)
    run = {"aggregate": lambda s: session.aggregate(inputs, survivors, s),
           "mask": lambda s: session.mask(inputs, s),
           "unmask": lambda s: session.unmask_sum(survivors, messages[survivors], s)}[stage]
    assert_stops_part_way(run)


# -------------------------------------------------------------------------------- PLD


PLDS = {
    "gaussian": (lambda: PLD.gaussian(1.0), 1000),
    "subsampled (two directions)": (lambda: PLD.subsampled_gaussian(1.0, 0.01), 1000),
    "laplace, two-stage": (lambda: PLD.laplace(1.0), 10**9),
}


@pytest.mark.parametrize("name", sorted(PLDS))
def test_self_composition_reports_progress_and_the_same_curve(name):
    make, k = PLDS[name]
    eps = np.linspace(0.0, 5.0, 11)
    plain = make().self_compose(k).delta(eps)
    state = NullState()
    watched = make().self_compose(k, state).delta(eps)
    assert_rises_to_one(state)
    np.testing.assert_array_equal(watched, plain)


@pytest.mark.parametrize("name", sorted(PLDS))
def test_self_composition_stops_when_cancelled(name):
    make, k = PLDS[name]
    pld = make()
    assert_stops_part_way(lambda s: pld.self_compose(k, s))


def test_composition_of_two_plds_reports_progress_and_stops_when_cancelled():
    a, b = PLD.subsampled_gaussian(1.0, 0.05), PLD.laplace(2.0)
    state = NullState()
    composed = a.compose(b, state)
    assert state.fractions == [0.5, 1.0]  # one convolution per direction
    eps = np.linspace(0.0, 3.0, 7)
    np.testing.assert_array_equal(composed.delta(eps), a.compose(b).delta(eps))
    assert_stops_part_way(lambda s: a.compose(b, s))


# ------------------------------------------------------------------------------ attack


ATTACKS = {
    "gaussian": {"sigma": 1.0},
    "laplace": {"scale": 1.0},
    "discrete_laplace": {"scale": 2.0},
    "krr": {"epsilon": 1.0, "k": 3},
}


@pytest.mark.parametrize("mechanism", sorted(ATTACKS))
def test_simulated_attack_reports_progress_and_the_same_points(mechanism):
    params = ATTACKS[mechanism]
    plain = simulate_attack(mechanism, params, 2000, SimulationSource(4))
    state = NullState()
    watched = simulate_attack(mechanism, params, 2000, SimulationSource(4), state=state)
    assert_rises_to_one(state)
    assert watched.to_dict() == plain.to_dict()


@pytest.mark.parametrize("mechanism", sorted(ATTACKS))
def test_simulated_attack_stops_when_cancelled(mechanism):
    assert_stops_part_way(lambda s: simulate_attack(mechanism, ATTACKS[mechanism], 2000,
                                                    SimulationSource(4), state=s))


# ----------------------------------------------------------------------------- utility


def test_monte_carlo_curve_reports_each_epsilon_and_stops_when_cancelled():
    values = np.random.default_rng(6).uniform(0, 100, 300)
    spec = QuerySpec("mean", "laplace", epsilon=1.0, bounds=(0.0, 100.0))
    eps = np.array([0.5, 1.0, 2.0, 4.0])
    plain = monte_carlo_curve(values, spec, eps, 50, SimulationSource(8))
    state = NullState()
    watched = monte_carlo_curve(values, spec, eps, 50, SimulationSource(8), state=state)
    assert state.fractions == pytest.approx([0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(watched.error, plain.error)
    assert_stops_part_way(lambda s: monte_carlo_curve(values, spec, eps, 50,
                                                      SimulationSource(8), state=s))
