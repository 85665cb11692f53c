"""Secure sums end to end: registry entries, dropouts, reported errors that hold."""

import math

import numpy as np
import pytest

from dpstudio.engine.distributed import plan_secure_sum, run_secure_sum
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SimulationSource


def test_registry_entries_describe_themselves():
    for name in ("secagg_gaussian", "skellam", "cloak", "blanket"):
        info = REGISTRY.get(name)
        d = info.to_dict()
        assert d["needs_delta"] and set(d["queries"]) == {"sum", "mean"}
        assert d["description"].endswith(".") and len(d["description"]) < 120
        assert info.resolve({}) == {p.name: p.default for p in info.params}
    assert {m.name for m in REGISTRY.select(trust_model="distributed")} >= {
        "secagg_gaussian", "skellam"}
    assert {m.name for m in REGISTRY.select(trust_model="shuffle", query="mean")} >= {
        "cloak", "blanket"}


@pytest.mark.parametrize("mechanism", ["secagg_gaussian", "skellam"])
def test_error_matches_the_stated_noise(mechanism):
    n, bits, reps = 30, 4, 400
    p = 1 << bits
    values = np.random.default_rng(1).integers(0, p + 1, n).astype(float)  # on the grid
    src = SimulationSource(2)
    errors = np.empty(reps)
    for r in range(reps):
        out = run_secure_sum(values, (0, p), mechanism, 1.0, 1e-6, src, precision_bits=bits)
        errors[r] = out.value - values.sum()
    var = out.noise_variance
    assert abs(errors.mean()) < 5 * math.sqrt(var / reps)
    assert abs(errors.var() - var) < 5 * var * math.sqrt(2 / reps)
    assert out.stderr**2 >= var and out.epsilon == 1.0 and out.delta == 1e-6
    assert np.mean(np.abs(errors) <= out.error_bound) >= 0.95 - 5 * math.sqrt(0.05 * .95 / reps)
    assert out.messages_per_user == 1 and out.overflow_probability < 2**-40


@pytest.mark.parametrize("mechanism", ["secagg_gaussian", "skellam"])
def test_dropouts_sum_the_survivors(mechanism):
    values = np.full(60, 3.0)
    out = run_secure_sum(values, (0, 10), mechanism, 1.0, 1e-6, SimulationSource(3),
                         dropouts=7, max_dropouts=10)
    assert out.n == 53 and out.dropouts == 7 and out.n_clients == 60
    assert abs(out.value - 3.0 * 53) <= out.error_bound
    # Planned for 60 − ⌊0.1·60⌋ − 10 = 44 honest survivors; at worst 53 − 6 = 47 are there.
    assert out.epsilon == 1.0 and out.honest_clients == 44 and out.corrupt_clients == 6
    assert any("dropped" in note for note in out.notes)
    # Dropouts not declared in advance: refused, never planned for after the fact.
    with pytest.raises(ParameterError, match="planned for at most 0"):
        run_secure_sum(values, (0, 10), mechanism, 1.0, 1e-6, SimulationSource(3),
                       dropouts=7)


def test_plan_matches_run_and_mean():
    values = np.linspace(0, 100, 80)
    run = run_secure_sum(values, (0, 100), "skellam", 0.5, 1e-7, SimulationSource(4),
                         query="mean")
    plan = plan_secure_sum(80, (0, 100), "skellam", 0.5, 1e-7, query="mean")
    assert run.stderr == pytest.approx(plan.stderr)
    assert run.bits_per_message == plan.bits_per_message
    assert abs(run.value - 50.0) <= run.error_bound
    assert plan.value is None
    # The honest clients' noise is the central model's up to the grid (SE within 1% of
    # the central DG's); the released sum carries all 80 shares, planned for the 72
    # honest ones (⌊0.1·80⌋ = 8 may collude).
    assert plan.honest_clients == 72
    assert math.sqrt(plan.honest_noise_variance) == pytest.approx(plan.central_stderr,
                                                                  rel=0.01)
    assert plan.noise_variance == pytest.approx(plan.honest_noise_variance * 80 / 72,
                                                rel=1e-12)


def test_bad_inputs():
    src = SimulationSource(0)
    with pytest.raises(ParameterError, match="survivors"):
        run_secure_sum(np.ones(10), (0, 1), "skellam", 1.0, 1e-6, src, max_dropouts=6)
    with pytest.raises(ParameterError, match="survivors"):
        run_secure_sum(np.ones(10), (0, 1), "skellam", 1.0, 1e-6, src, dropouts=6)
    with pytest.raises(ParameterError):
        run_secure_sum(np.ones(10), (0, 1), "skellam", 1.0, 1e-6, src, dropouts=-1)
    with pytest.raises(QueryError):
        run_secure_sum(np.ones(10), (0, 1), "cloak", 1.0, 1e-6, src)
    with pytest.raises(QueryError):
        run_secure_sum(np.ones(10), (2, 1), "skellam", 1.0, 1e-6, src)
    with pytest.raises(QueryError):
        run_secure_sum(np.ones(1), (0, 1), "skellam", 1.0, 1e-6, src)
    with pytest.raises(ParameterError):
        run_secure_sum(np.ones(10), (0, 1), "skellam", 1.0, 1e-6, src, prf="rc4")
    with pytest.raises(ParameterError):
        run_secure_sum(np.ones(10), (0, 1), "skellam", 1.0, 1e-6, src, modulus_bits=4)
    with pytest.raises(ParameterError):
        plan_secure_sum(10, (0, 1), "nope", 1.0, 1e-6)


@pytest.mark.parametrize("mechanism", ["secagg_gaussian", "skellam"])
def test_twenty_thousand_clients_on_the_sparse_graph(mechanism):
    # Scaling, asserted on results only: one client per record, masks over the sparse
    # graph with the vectorized ChaCha20 (the old pairwise loop would need 2·10⁸ PRF calls).
    n = 20_000
    values = np.random.default_rng(13).uniform(0, 40, n)
    out = run_secure_sum(values, (0, 40), mechanism, 1.0, 1e-6, SimulationSource(14))
    assert out.n == out.n_clients == n and out.dropouts == 0
    assert abs(out.value - values.sum()) <= 2 * out.error_bound  # 95% bound, doubled
    assert any("regular graph" in note for note in out.notes)
    constant = np.full(n, 3.0)
    out = run_secure_sum(constant, (0, 10), mechanism, 1.0, 1e-6, SimulationSource(15),
                         dropouts=400, max_dropouts=500)
    assert out.n == n - 400 and out.dropouts == 400
    assert abs(out.value - 3.0 * out.n) <= 2 * out.error_bound


def test_registry_defaults_for_the_masks():
    params = {p.name: p for p in REGISTRY.get("skellam").params}
    assert params["prf"].default == "chacha20" and "chacha20" in params["prf"].choices
    assert params["corrupt_fraction"].default == 0.1
    with pytest.raises(ParameterError):
        run_secure_sum(np.ones(10), (0, 1), "skellam", 1.0, 1e-6, SimulationSource(0),
                       corrupt_fraction=0.5)
