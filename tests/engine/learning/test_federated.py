"""FedAvg and its privacy variants, asserted on numbers: FedAvg without privacy matches
centralized training; secure aggregation matches central DP-SGD at equal ε and local DP
is visibly worse (the lecture's point); CAPE is close to secure aggregation; the reported
ε is the accountant's for the parameters run; noise scales (with a power check);
release path, progress and cancellation."""

import math

import numpy as np
import pytest

from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.learning.dpsgd import plan_dpsgd, simulate_dpsgd
from dpstudio.engine.learning.federated import (
    TRUSTS,
    VARIANTS,
    _common_parts,
    _Draws,
    _site_message,
    train_federated,
)
from dpstudio.engine.learning.federated_plan import cape_factor, plan_aggregate
from dpstudio.engine.learning.models import fit_baseline, make_model
from dpstudio.engine.learning.sites import split_sites
from dpstudio.engine.rng import InsecureSourceError, SecureSource, SimulationSource
from dpstudio.jobs import Cancelled, NullState

N, P, DELTA = 6000, 10, 1e-5
FIT = {"rounds": 30, "local_steps": 5, "lr": 2.0, "batch_size": 32,
       # q declared (the noise depends on it, never on sizes): B = q·m̄, m̄ = 600
       "batch_rate": 32 * 10 / 6000}


def _task(n, p, seed=0):
    """Logistic data, rows in the unit ball, a constant feature as intercept."""
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, p - 1))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0) * 1.2
    X = np.hstack([X, np.full((n, 1), 0.5)])
    w = g.normal(size=p)
    w *= 8.0 / np.linalg.norm(w)
    y = np.where(g.random(n) < 1.0 / (1.0 + np.exp(-(X @ w))), 1.0, -1.0)
    return X, y


@pytest.fixture(scope="module")
def fed():
    X, y = _task(N + 4000, P)
    Xt, yt = X[N:], y[N:]
    X, y = X[:N], y[:N]
    model = make_model("logistic", P, 1e-4)
    sites = split_sites(y, 10, 1.0, seed=1)  # label-skewed, sizes from 115 to 1,274

    def acc(theta):
        return float(np.mean(np.where(Xt @ theta > 0, 1.0, -1.0) == yt))

    return X, y, sites, model, acc


def _mean_accuracy(fed, variant, eps, seeds=(0, 1, 2), **kw):
    X, y, sites, model, acc = fed
    out = [train_federated(X, y, sites, model, variant, epsilon=eps, delta=DELTA,
                           rng=np.random.default_rng(s), evaluate=acc, **{**FIT, **kw})
           .metrics[-1] for s in seeds]
    return float(np.mean(out))


def test_fedavg_without_privacy_is_within_two_points_of_centralized_training(fed):
    X, y, sites, model, acc = fed
    central = acc(fit_baseline(model, X, y).theta)
    res = train_federated(X, y, sites, model, "none", epsilon=None, delta=None,
                          rng=np.random.default_rng(0), evaluate=acc, **FIT)
    assert len(res.metrics) == FIT["rounds"]
    assert abs(res.metrics[-1] - central) <= 0.02, (res.metrics[-1], central)
    assert res.epsilon == math.inf and res.per_round is None and res.accountant == "none"


SEEDS8 = tuple(range(8))


def test_secagg_matches_central_dpsgd_and_local_is_visibly_worse(fed):
    # At ε = 0.1 (δ = 1e-5), 8 seeds each; central DP-SGD at the same rate and steps.
    # Since issue 13 every site samples at the declared q (0.053), where local used to be
    # calibrated at the smallest site's rate B/mᵢ (0.28): local pays only its √k more
    # noise now, so the gap shows at a smaller ε than the 0.5 this test used. Over 8 seeds
    # the accuracy's s.d. is 0.7 points (central, secagg), 1.7 (cape), 2.7 (local); the
    # mean gap local − secagg is −4.3 points. Eight seeds (a second in all) put the
    # means' s.e. at 0.6 points for cape, so its margin stays the 1.5 points it had.
    X, y, sites, model, acc = fed
    q = FIT["batch_rate"]
    steps = FIT["rounds"] * FIT["local_steps"]
    plan = plan_dpsgd(model.dimension, q, steps, 1.0, DELTA, epsilon=0.1,
                      learning_rate=FIT["lr"])
    central = np.mean([acc(simulate_dpsgd(model, X, y, plan, SimulationSource(s)).theta)
                       for s in SEEDS8])
    secagg = _mean_accuracy(fed, "secagg", 0.1, seeds=SEEDS8)
    local = _mean_accuracy(fed, "local", 0.1, seeds=SEEDS8)
    cape = _mean_accuracy(fed, "cape", 0.1, seeds=SEEDS8)
    assert abs(secagg - central) <= 0.015, (secagg, central)  # stated margin: 1.5 points
    assert local <= secagg - 0.03, (local, secagg)  # local: ≥ 3 points worse
    assert abs(cape - secagg) <= 0.015, (cape, secagg)
    # and local improves with ε (the noise, not the method, is what costs)
    assert _mean_accuracy(fed, "local", 4.0, seeds=SEEDS8) > local + 0.03


def test_reported_epsilon_is_the_accountants_for_the_run(fed):
    X, y, sites, model, _ = fed
    steps = FIT["rounds"] * FIT["local_steps"]
    kw = {**FIT, "rounds": 4}
    steps = 4 * FIT["local_steps"]
    for variant in ("secagg", "cape"):
        r = train_federated(X, y, sites, model, variant, epsilon=1.0, delta=DELTA,
                            rng=np.random.default_rng(0), **kw)
        d = r.details
        assert d["sample_rate"] == FIT["batch_rate"] and d["steps"] == steps
        acc = dpsgd_epsilon(d["noise_multiplier"], d["sample_rate"], steps, DELTA)
        assert r.epsilon == acc.epsilon and r.epsilon <= 1.0 and r.accountant == "pld"
        one = dpsgd_epsilon(d["noise_multiplier"], d["sample_rate"], FIT["local_steps"],
                            DELTA)
        assert r.per_round == (one.epsilon, DELTA)
    local = train_federated(X, y, sites, model, "local", epsilon=1.0, delta=DELTA,
                            rng=np.random.default_rng(0), **kw)
    # The declared rate q at every site, one σ from (q, T, ε, δ): before issue 13's fix
    # the rates were B/mᵢ and σ was calibrated at the smallest site's (private) size.
    q, sigma = local.details["sample_rate"], local.details["noise_multiplier"]
    assert q == FIT["batch_rate"]
    assert local.epsilon == dpsgd_epsilon(sigma, q, steps, DELTA).epsilon
    shuffled = train_federated(X, y, sites, model, "shuffle", epsilon=1.0, delta=DELTA,
                               rng=np.random.default_rng(0), **kw)
    assert shuffled.epsilon == local.epsilon  # no amplification credited
    assert "no amplification" in shuffled.trusts


def test_cape_factor_matches_the_cycle_laplacians_spectrum():
    # Σ̃ = I/h + κL, L the cycle's Laplacian (eigenvalues 2 − 2cos(2πk/h), Fourier
    # eigenvectors of equal weight 1/h at every site): (Σ̃⁻¹)ᵢᵢ = (1/h) Σₖ 1/(1/h + κλₖ).
    for h in (2, 3, 10, 25):
        for kappa in (0.5, 4.0, 100.0):
            lam = 2 - 2 * np.cos(2 * np.pi * np.arange(h) / h)
            expected = math.sqrt(np.sum(1.0 / (1.0 / h + kappa * lam)) / h)
            assert math.isclose(cape_factor(h, kappa), expected, rel_tol=1e-10)
            assert 1.0 <= cape_factor(h, kappa) <= math.sqrt(h)
    assert cape_factor(1, 10.0) == 1.0
    assert cape_factor(10, 1e6) < 1.0001  # the joint view costs nothing as κ grows


def test_message_and_sum_noise_have_the_planned_scales():
    h, d, reps = 6, 4, 4000
    plan = plan_aggregate("cape", 32 * h / 6000, h, d, 100, 5, 1.0, 1.0, DELTA,
                          cape_ratio=3.0)
    draws = _Draws(None, np.random.default_rng(5))
    zero = np.zeros((0, d))
    msgs = np.array([[_site_message(zero, plan, draws, d) for _ in range(h)]
                     for _ in range(reps)])  # (reps, h, d)
    msgs = msgs + np.array([_common_parts(plan, h, draws, d) for _ in range(reps)])
    sum_std = plan.sum_multiplier * plan.sensitivity
    msg_std = math.sqrt(plan.share_std ** 2 + 2 * plan.common_std ** 2)
    assert msg_std >= sum_std  # each message alone is at least as noisy as the sum
    # s.d. estimates from 16,000 (sum) and 96,000 (messages) normals: relative s.e.
    # ≤ 0.6%; 3% tolerance, while a sum missing the √h split would be off by 145%.
    assert abs(msgs.sum(axis=1).std() / sum_std - 1) < 0.03
    assert abs(msgs.std() / msg_std - 1) < 0.03
    assert abs(msgs.sum(axis=1).std() / (sum_std * math.sqrt(h)) - 1) > 0.5  # power
    # secagg: shares planned for the 7 honest sites of 10; the 10 shares' sum has at
    # least central DP-SGD's σΔ (7 of them exactly that), never more than √(10/7) of it.
    sec = plan_aggregate("secagg", 32 * 10 / 6000, 10, d, 100, 5, 1.0, 1.0, DELTA,
                         colluding=3)
    assert sec.honest == 7 and sec.common_std == 0.0 and sec.tau == 0.0
    assert math.isclose(sec.share_std, sec.noise_multiplier * sec.sensitivity / math.sqrt(7))
    honest = np.array([[_site_message(zero, sec, draws, d) for _ in range(7)]
                       for _ in range(reps)]).sum(axis=1)
    central = sec.noise_multiplier * sec.sensitivity
    assert abs(honest.std() / central - 1) < 0.03
    assert abs(honest.std() / (central * math.sqrt(7)) - 1) > 0.5  # power: no √h split


def test_release_draws_lattice_noise_whose_zero_sum_parts_cancel_exactly(fed):
    X, y, sites, model, acc = fed
    draws = _Draws(SecureSource(), None)
    plan = plan_aggregate("cape", 32 * 10 / N, 10, model.dimension, 10, 5, 1.0, 1.0, DELTA)
    parts = _common_parts(plan, 10, draws, model.dimension)
    assert parts.dtype == np.int64 and not parts.sum(axis=0).any() and parts.any()
    for variant in ("secagg", "cape", "local"):
        r = train_federated(X, y, sites, model, variant, epsilon=2.0, delta=DELTA,
                            source=SecureSource(), evaluate=acc,
                            **{**FIT, "rounds": 3})
        assert not r.simulated and np.isfinite(r.params).all()
    with pytest.raises(InsecureSourceError):
        train_federated(X, y, sites, model, "secagg", epsilon=1.0, delta=DELTA,
                        source=SimulationSource(1), **FIT)


def test_progress_and_cancel(fed):
    X, y, sites, model, _ = fed
    state = NullState()
    train_federated(X, y, sites, model, "secagg", epsilon=1.0, delta=DELTA,
                    rng=np.random.default_rng(0), state=state, **{**FIT, "rounds": 4})
    assert state.fractions == [0.25, 0.5, 0.75, 1.0]

    class StopAfterTwo(NullState):
        def cancelled(self):
            return len(self.fractions) >= 2

    stop = StopAfterTwo()
    with pytest.raises(Cancelled):
        train_federated(X, y, sites, model, "local", epsilon=1.0, delta=DELTA,
                        rng=np.random.default_rng(0), state=stop, **{**FIT, "rounds": 10})
    assert stop.fractions == [0.1, 0.2]


def test_fraction_of_sites_and_refusals(fed):
    X, y, sites, model, _ = fed
    r = train_federated(X, y, sites, model, "cape", epsilon=1.0, delta=DELTA,
                        rng=np.random.default_rng(0), fraction=0.35, **{**FIT, "rounds": 2})
    assert r.details["participants"] == 4  # ⌈0.35·10⌉
    assert set(TRUSTS) == set(VARIANTS) and all(TRUSTS[v].endswith(".") for v in VARIANTS)
    base = {"epsilon": 1.0, "delta": DELTA, "rng": np.random.default_rng(0), **FIT}
    with pytest.raises(ParameterError, match="variant"):
        train_federated(X, y, sites, model, "central", **base)
    with pytest.raises(ParameterError, match="at most 1"):
        train_federated(X, y, sites, model, "secagg", fraction=1.5, **base)
    with pytest.raises(ParameterError, match="exactly one"):
        train_federated(X, y, sites, model, "secagg", source=SecureSource(), **base)
    with pytest.raises(ParameterError, match="colluding"):
        train_federated(X, y, sites, model, "secagg", colluding=10, **base)
    with pytest.raises(QueryError, match="‖x‖"):
        train_federated(X * 2, y, sites, model, "local", **base)
    with pytest.raises(QueryError, match="differ in length"):
        train_federated(X, y, sites.codes[:-1], model, "local", **base)


def test_secure_total_is_the_exact_signed_sum_of_masked_messages():
    from dpstudio.engine.distributed import secagg
    from dpstudio.engine.learning.federated import secure_total

    g = np.random.default_rng(8)
    messages = g.integers(-(1 << 40), 1 << 40, size=(7, 11), dtype=np.int64)
    seen = []
    real_mask = secagg.SecAggSession.mask

    def spy(self, inputs, state=None):
        out = real_mask(self, inputs, state)
        seen.append(out)
        return out

    secagg.SecAggSession.mask = spy
    try:
        total = secure_total(messages, SecureSource())
    finally:
        secagg.SecAggSession.mask = real_mask
    np.testing.assert_array_equal(total, messages.sum(axis=0))
    # The server's view: masked words spread over all of 2^64, none equal to an input.
    masked = seen[0]
    assert masked.shape == messages.shape
    assert not np.any(masked == messages.view(np.uint64))
    assert masked.max() > np.uint64(1 << 62)


def test_a_secagg_release_aggregates_every_step_through_the_masking_protocol(fed,
                                                                              monkeypatch):
    from dpstudio.engine.learning import federated

    X, y, sites, model, acc = fed
    calls = []
    real = federated.secure_total
    monkeypatch.setattr(federated, "secure_total",
                        lambda m, source: calls.append(m.shape) or real(m, source))
    r = train_federated(X, y, sites, model, "secagg", epsilon=2.0, delta=DELTA,
                        source=SecureSource(), evaluate=acc, **{**FIT, "rounds": 3})
    assert len(calls) == 3 * FIT["local_steps"]  # R·E aggregations
    assert all(shape == (10, model.dimension) for shape in calls)
    assert not r.simulated and r.metrics[-1] > 0.6
    calls.clear()
    train_federated(X, y, sites, model, "secagg", epsilon=2.0, delta=DELTA,
                    rng=np.random.default_rng(0), **{**FIT, "rounds": 2})
    assert calls == []  # a simulation adds the messages: the masks would cancel anyway
