"""DP-SGD's and FedAvg's step divisor: a declared expected batch B, never one read off n.

Under add/remove-one n is private. Two neighbouring datasets (one record removed) run
with the same seed and the same Poisson draws (fixed here, the removed record never
sampled) must give the *same* model when B is declared: the step is then post-processing
of the noisy sums. Without B, a simulation divides by q·n and the two models differ by
exactly the factor n/(n−1) in their updates — the power check that these tests see the
leak the declaration removes.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from dpstudio.analysis import resolve
from dpstudio.analysis.training import describe_training
from dpstudio.engine.learning import dpsgd, federated
from dpstudio.engine.learning.models import make_model
from dpstudio.engine.learning.sites import sites_from_column
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SimulationSource

N, KEEP, Q = 60, 12, 0.2


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + rng.logistic(size=n) > 0, 1.0, -1.0)
    return X, y


@pytest.fixture
def fixed_draws(monkeypatch):
    """Every Poisson batch is the first KEEP records (of the data, or of each site): the
    last record, the one removed from the neighbour, is never sampled, and the draws
    consume no randomness, so both neighbours draw the same noise."""

    def first(n, q, source=None, gen=None):
        return np.arange(min(KEEP, int(n)), dtype=np.int64)

    monkeypatch.setattr(dpsgd, "poisson_batch", first)
    monkeypatch.setattr(federated, "poisson_batch", first)


def _central(X, y, expected_batch, steps=1):
    model = make_model("logistic", 3, 0.0)
    plan = dpsgd.plan_dpsgd(model.dimension, Q, steps, 1.0, 1e-5, epsilon=2.0,
                            expected_batch=expected_batch)
    start = model.init(0)
    result = dpsgd.simulate_dpsgd(model, X, y, plan, SimulationSource(7))
    return start, result.theta


def test_central_neighbours_give_the_same_model_when_b_is_declared(fixed_draws):
    X, y = _data()
    _, a = _central(X, y, 12.0, steps=5)
    _, b = _central(X[:-1], y[:-1], 12.0, steps=5)
    assert np.array_equal(a, b)


def test_central_without_b_the_divisor_reads_n(fixed_draws):
    # Power: one step with λ = 0 moves θ by −η·(noisy sum)/divisor; the same noisy sum on
    # both neighbours, so the updates' ratio is the divisors' q·n / q·(n−1).
    X, y = _data()
    s, a = _central(X, y, None)
    _, b = _central(X[:-1], y[:-1], None)
    assert np.allclose((b - s) / (a - s), N / (N - 1), rtol=1e-9)
    s, a = _central(X, y, 12.0)
    _, b = _central(X[:-1], y[:-1], 12.0)
    assert np.allclose((a - s), (b - s), rtol=0, atol=0)


def test_the_divisor_used_is_the_declared_b(fixed_draws, monkeypatch):
    # A spy on the noisy sum: the step is exactly −η·(noisy/B) with λ = 0.
    seen = []
    real = dpsgd._noisy_sum_float

    def spy(clipped, plan, gen):
        seen.append(real(clipped, plan, gen))
        return seen[-1]

    monkeypatch.setattr(dpsgd, "_noisy_sum_float", spy)
    X, y = _data()
    s, a = _central(X, y, 7.5)
    assert np.allclose(a - s, -0.5 * seen[0] / 7.5, rtol=1e-12)


@pytest.mark.parametrize("variant", ["local", "secagg", "cape"])
def test_federated_neighbours_give_the_same_model_with_a_declared_b(fixed_draws, variant):
    X, y = _data(90)
    site = np.repeat(np.array(["a", "b", "c"]), 30)
    model = make_model("logistic", 3, 1e-3)

    def train(rows):
        return federated.train_federated(
            X[rows], y[rows], site[rows], model, variant, epsilon=4.0, delta=1e-5,
            rounds=2, local_steps=2, lr=0.5, batch_size=6.5, batch_rate=Q,
            rng=np.random.default_rng(3)).params

    full = np.arange(90)
    neighbour = np.delete(full, 29)  # site a's last record: never sampled
    assert np.array_equal(train(full), train(neighbour))


def _fed_spec():
    spec = describe_training("outcome", ("a", "b"), "logistic", "dpsgd", 4.0, delta=1e-5,
                             params={"batch_rate": 0.1}, fed_variant="secagg",
                             federated={"sites": 2, "rounds": 1, "local_steps": 1})
    bounds = SimpleNamespace(bounds=(0.0, 1.0), categories=None, type=None)
    return resolve(spec, {"a": bounds, "b": bounds})[0]


def _fed_divisor(monkeypatch, a, n):
    """The batch_size the analysis layer passes to the engine for n training rows."""
    from dpstudio.analysis.federated_run import train_sites

    seen = {}
    monkeypatch.setattr(federated, "train_federated",
                        lambda *args, **kw: seen.update(kw))
    X, y = _data(n)
    sites = sites_from_column(np.where(np.arange(n) % 2 == 0, "a", "b").astype(object))
    train_sites(a, make_model("logistic", 3, 0.0), X, y, {}, np.arange(n),
                SimulationSource(1), False, None, None, sites=sites)
    return seen["batch_size"]


def test_federated_without_b_the_simulations_divisor_reads_n(monkeypatch):
    # Power: q·n/S = 0.1·110/2 = 5.5 rounds to 6, and 0.1·109/2 = 5.45 to 5.
    a = _fed_spec()
    assert (_fed_divisor(monkeypatch, a, 110), _fed_divisor(monkeypatch, a, 109)) == (6, 5)
    declared = replace(a, query=replace(a.query, params={**a.query.params,
                                                         "expected_batch": 5.25}))
    assert _fed_divisor(monkeypatch, declared, 110) == 5.25
    assert _fed_divisor(monkeypatch, declared, 109) == 5.25


def test_the_registry_entry_declares_b():
    info = REGISTRY.get("dp_sgd")
    p = info.param("expected_batch")
    assert p.default == 0.0 and p.help.endswith(".") and "release" in p.help
    undeclared = info.build(**info.resolve({})).calibrate(4)
    assert undeclared.expected_batch is None
    declared = info.build(**info.resolve({"expected_batch": 20})).calibrate(4)
    assert declared.expected_batch == 20.0
    assert declared.noise_multiplier == undeclared.noise_multiplier  # σ, ε: never from B
