"""DP-SGD: clipping, Poisson sampling, the noise's scale, the accountant's ε, calibration,
and accuracy that grows with ε. Tolerances come from the known variances."""

import math

import numpy as np
import pytest

from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.learning.dpsgd import (
    _noisy_sum_float,
    _noisy_sum_lattice,
    clip_gradients,
    plan_dpsgd,
    poisson_batch,
    release_dpsgd,
    simulate_dpsgd,
    steps_for_epochs,
)
from dpstudio.engine.learning.models import LogisticModel, MLPModel
from dpstudio.engine.local.tally import simulation_generator
from dpstudio.engine.rng import InsecureSourceError, SecureSource, SimulationSource
from dpstudio.jobs import Cancelled, NullState


def _task(n=1000, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p)) / np.sqrt(p)
    w = np.array([3.0, -2.0, 2.0, 1.0, 0.0])[:p]
    y = np.where(X @ w * 4 + 0.3 * rng.logistic(size=n) > 0, 1.0, -1.0)
    return X, y


def test_clipping_bounds_every_norm_by_c_exactly():
    rng = np.random.default_rng(1)
    # Scales from 1e-3 to 1e6 times C, and rows exactly at C.
    G = rng.normal(size=(5000, 17)) * 10.0 ** rng.uniform(-3, 6, (5000, 1))
    G[:10] /= np.linalg.norm(G[:10], axis=1, keepdims=True) / 0.7
    for c in (0.7, 1.0, 1e-3, 3.3):
        norms = np.linalg.norm(clip_gradients(G, c), axis=1)
        assert np.all(norms <= c)  # no tolerance: ≤ C in floating point
    small = np.linalg.norm(G, axis=1) <= 0.7
    np.testing.assert_array_equal(clip_gradients(G, 0.7)[small], G[small])  # unchanged
    big = ~small
    np.testing.assert_allclose(np.linalg.norm(clip_gradients(G, 0.7)[big], axis=1), 0.7,
                               rtol=1e-11)


@pytest.mark.parametrize("path", ["release", "simulation"])
def test_poisson_batches_have_binomial_mean_and_variance(path):
    n, q, k = 2000, 0.05, 2000
    src = SimulationSource(3)
    gen = simulation_generator(src)
    sizes = np.array([poisson_batch(n, q, source=src).size if path == "release"
                      else poisson_batch(n, q, gen=gen).size for _ in range(k)])
    mean, var = n * q, n * q * (1 - q)
    # Mean within 4 standard errors; variance ratio within 4·√(2/(k−1)) (≈ 0.13) of 1.
    assert abs(sizes.mean() - mean) <= 4 * math.sqrt(var / k)
    assert abs(sizes.var(ddof=1) / var - 1) <= 4 * math.sqrt(2 / (k - 1))
    # Power: fixed-size shuffled batches (variance 0) or a rate q/2 would be rejected.
    assert abs(0.0 / var - 1) > 4 * math.sqrt(2 / (k - 1))
    assert abs(n * q / 2 - mean) > 4 * math.sqrt(var / k)


def test_poisson_membership_is_independent_per_example():
    src = SimulationSource(4)
    counts = np.zeros(50)
    for _ in range(4000):
        counts[poisson_batch(50, 0.3, source=src)] += 1
    # Each example's count is Binomial(4000, 0.3): sd ≈ 29; all within 4.5 sd.
    assert np.all(np.abs(counts - 1200) <= 4.5 * math.sqrt(4000 * 0.3 * 0.7))


@pytest.mark.parametrize("path", ["lattice", "float"])
def test_noise_per_step_has_std_sigma_s(path):
    plan = plan_dpsgd(400, 0.1, 10, 1.5, 1e-5, noise_multiplier=0.8)
    assert plan.noise_std == pytest.approx(0.8 * (1.5 + math.sqrt(400) * plan.grid / 2))
    zero = np.zeros((3, 400))
    src = SimulationSource(5)
    gen = simulation_generator(src)
    draws = np.concatenate([
        _noisy_sum_lattice(zero, plan, src) if path == "lattice"
        else _noisy_sum_float(zero, plan, gen) for _ in range(25)])
    m = draws.size  # 10,000 draws: the variance ratio has sd √(2/m) ≈ 0.014
    ratio = draws.var() / plan.noise_std ** 2
    assert abs(ratio - 1) <= 5 * math.sqrt(2 / m)
    assert abs(draws.mean()) <= 5 * plan.noise_std / math.sqrt(m)
    # Power: a std of σS/2 (ratio 4 to the truth) would be rejected.
    assert abs(draws.var() / (plan.noise_std / 2) ** 2 - 1) > 5 * math.sqrt(2 / m)


def test_lattice_sum_is_the_snapped_sum():
    plan = plan_dpsgd(3, 0.1, 10, 1.0, 1e-5, noise_multiplier=1e6)  # noise ≫, check mean
    g = np.array([[0.3, -0.2, 0.1], [0.5, 0.5, -0.5]])
    src = SimulationSource(6)
    mean = np.mean([_noisy_sum_lattice(g, plan, src) for _ in range(200)], axis=0)
    assert np.all(np.abs(mean - g.sum(0)) <= 5 * plan.noise_std / math.sqrt(200))
    out = _noisy_sum_lattice(g, plan, src)
    np.testing.assert_array_equal(np.rint(out / plan.grid) * plan.grid, out)  # on the lattice


def test_reported_epsilon_is_the_accountants_and_falls_with_sigma():
    X, y = _task(300)
    model = LogisticModel(5, 1e-3)
    previous = math.inf
    for sigma in (0.8, 1.2, 2.0):
        plan = plan_dpsgd(model.dimension, 0.1, 30, 1.0, 1e-5, noise_multiplier=sigma)
        res = simulate_dpsgd(model, X, y, plan, SimulationSource(7))
        acc = dpsgd_epsilon(sigma, 0.1, 30, 1e-5)
        assert res.epsilon == acc.epsilon and res.steps == 30 and res.delta == 1e-5
        assert res.epsilon < previous
        previous = res.epsilon


def test_calibrated_sigma_meets_the_target_and_is_not_much_more_than_needed():
    target = 1.0
    plan = plan_dpsgd(6, 0.05, 100, 1.0, 1e-5, epsilon=target)
    assert plan.epsilon <= target
    assert plan.epsilon == dpsgd_epsilon(plan.noise_multiplier, 0.05, 100, 1e-5).epsilon
    # Pessimistic, but tight: σ is within the bisection's relative 1e−4 (twice, for
    # safety) of the smallest σ meeting the target, and ε within 1% of the target.
    assert dpsgd_epsilon(plan.noise_multiplier * (1 - 2e-4), 0.05, 100, 1e-5).epsilon > target
    assert plan.epsilon >= 0.99 * target


def test_accuracy_improves_with_epsilon():
    X, y = _task(600, seed=8)
    Xt, yt = _task(2000, seed=9)
    model = LogisticModel(5, 1e-4)
    steps = steps_for_epochs(4, 0.1)

    def accuracy(sigma):
        plan = plan_dpsgd(model.dimension, 0.1, steps, 1.0, 1e-5, noise_multiplier=sigma,
                          learning_rate=2.0)
        return np.mean([np.mean((model.predict(simulate_dpsgd(
            model, X, y, plan, SimulationSource(s)).theta, Xt) > 0.5) == (yt > 0))
            for s in range(8)])

    loud, quiet = accuracy(40.0), accuracy(0.7)  # ε ≈ 0.05 vs ε ≈ 10 (δ = 1e−5)
    assert quiet > 0.9 and quiet > loud + 0.1


def test_release_runs_on_the_os_csprng_and_refuses_a_seeded_source():
    X, y = _task(200)
    model = MLPModel(5, 1e-3, hidden=4)
    plan = plan_dpsgd(model.dimension, 0.2, 10, 1.0, 1e-5, noise_multiplier=1.0)
    with pytest.raises(InsecureSourceError):
        release_dpsgd(model, X, y, plan, SimulationSource(1))
    state = NullState()
    res = release_dpsgd(model, X, y, plan, SecureSource(), state)
    assert not res.simulated and res.theta.shape == (model.dimension,)
    assert state.fractions[-1] == 1.0 and state.fractions == sorted(state.fractions)


def test_a_cancelled_run_stops_between_steps():
    class Cancel(NullState):
        def cancelled(self):
            return len(self.fractions) >= 3

    X, y = _task(200)
    model = LogisticModel(5, 1e-3)
    plan = plan_dpsgd(model.dimension, 0.1, 50, 1.0, 1e-5, noise_multiplier=1.0)
    state = Cancel()
    with pytest.raises(Cancelled):
        simulate_dpsgd(model, X, y, plan, SimulationSource(1), state)
    assert len(state.fractions) == 3


def test_bad_input_is_refused_in_one_sentence():
    with pytest.raises(ParameterError, match="either a target ε or a noise multiplier"):
        plan_dpsgd(3, 0.1, 10, 1.0, 1e-5)
    with pytest.raises(ParameterError, match="approximation"):
        plan_dpsgd(3, 0.1, 10, 1.0, 1e-5, noise_multiplier=1.0, accountant="gdp")
    with pytest.raises(ParameterError):
        plan_dpsgd(3, 1e-11, 10, 1.0, 1e-5, noise_multiplier=1.0)
    model = LogisticModel(2, 0.1)
    plan = plan_dpsgd(2, 0.5, 2, 1.0, 1e-5, noise_multiplier=1.0)
    with pytest.raises(QueryError, match="‖x‖₂ ≤ 1"):
        simulate_dpsgd(model, np.full((4, 2), 0.9), np.ones(4), plan, SimulationSource(0))
    with pytest.raises(ParameterError, match="another number of parameters"):
        simulate_dpsgd(LogisticModel(3, 0.1), np.zeros((4, 3)), np.ones(4), plan,
                       SimulationSource(0))
