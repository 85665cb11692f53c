"""Federated variants under their declared trust: Skellam shares for secure aggregation
(variance with a power check, the exact 1-D check rejecting a too-narrow law), dropouts
(the survivors' sum exact, the survivors' noise alone at central scale), CAPE against
colluding sites (the noise left, by closed form and Monte Carlo; refusal), δ credited for
sampling sites (against an independent computation), and the loss descriptions a pld
ledger composes to the accountant's ε."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon
from dpstudio.engine.accounting.ledger import spent
from dpstudio.engine.errors import EngineError, ParameterError
from dpstudio.engine.learning.cape_collusion import cape_information
from dpstudio.engine.learning.dpsgd import plan_dpsgd, simulate_dpsgd
from dpstudio.engine.learning.federated import (
    _common_parts,
    _Draws,
    _site_message,
    secure_total,
    train_federated,
)
from dpstudio.engine.learning.federated_plan import _check_skellam, plan_aggregate
from dpstudio.engine.learning.models import make_model
from dpstudio.engine.learning.site_sampling import site_sampling
from dpstudio.engine.learning.sites import split_sites
from dpstudio.engine.rng import SecureSource, SimulationSource

N, P, DELTA = 3000, 6, 1e-5
FIT = {"rounds": 3, "local_steps": 2, "lr": 2.0, "batch_size": 32,
       # q declared (the noise depends on it, never on sizes): B = q·m̄, m̄ = 300
       "batch_rate": 32 * 10 / N}
PLD = "privacy-loss distributions composed by FFT (pessimistic)"
# One release: the ledger reports its PLD ε, or the claim when that is tighter by ~1e-10.
ONE = (PLD, "basic composition")


@pytest.fixture(scope="module")
def fed():
    g = np.random.default_rng(0)
    X = g.normal(size=(N, P - 1))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0) * 1.2
    X = np.hstack([X, np.full((N, 1), 0.5)])
    y = np.where(X @ g.normal(size=P) * 4 + g.logistic(size=N) > 0, 1.0, -1.0)
    return X, y, split_sites(y, 10, 1.0, seed=1), make_model("logistic", P, 1e-4)


# ------------------------------------------------------------------ Skellam shares

def test_skellam_shares_sum_to_the_planned_variance_and_a_wrong_scale_is_rejected():
    h, d, reps = 8, 4, 4000
    plan = plan_aggregate("secagg", 32 * 10 / 6000, 10, d, 100, 5, 1.0, 1.0, DELTA,
                          noise="skellam", dropouts=2)
    assert plan.noise == "skellam" and plan.honest == h
    std_steps = plan.sum_multiplier * plan.sensitivity / plan.grid
    assert 2 ** 11 <= std_steps < 2 ** 12 + 10
    assert math.isclose(plan.share_variance * h, (std_steps * 1.001) ** 2)
    draws = _Draws(None, np.random.default_rng(3))
    zero = np.zeros((0, d))
    sums = np.array([[_site_message(zero, plan, draws, d) for _ in range(h)]
                     for _ in range(reps)]).sum(axis=1) / plan.grid
    assert np.allclose(sums, np.rint(sums))  # integer lattice steps: a Skellam law
    # 16,000 draws: the s.d.'s relative s.e. is 0.56%; 3% tolerance, while shares not
    # split among the h survivors would be off by √8 − 1 = 183%.
    assert abs(sums.std() / (std_steps * 1.001) - 1) < 0.03
    assert abs(sums.std() / (std_steps * math.sqrt(h)) - 1) > 0.5  # power
    # The release draws exact-law Poisson differences from the OS CSPRNG: same scale.
    rel = _Draws(SecureSource(), None)
    one = np.array([_site_message(zero, plan, rel, d) for _ in range(500)])
    assert one.dtype == np.int64
    assert abs(one.std() / math.sqrt(plan.share_variance) - 1) < 0.1
    # The exact 1-D check: the planned law passes; a Skellam 1% narrower than the
    # Gaussian it is accounted as is rejected.
    sens = plan.sensitivity / plan.grid
    _check_skellam(plan.share_variance * h, sens, std_steps)
    with pytest.raises(ParameterError, match="Skellam"):
        _check_skellam((0.99 * std_steps) ** 2, sens, std_steps)


# ------------------------------------------------------------------ dropouts

def test_dropouts_leave_an_exact_survivors_sum_protected_by_the_survivors_noise(fed,
                                                                                monkeypatch):
    d, reps = 4, 4000
    plan = plan_aggregate("secagg", 32 * 10 / 6000, 10, d, 100, 5, 1.0, 1.0, DELTA,
                          dropouts=3)
    assert plan.honest == 7
    # The masking protocol recovers the survivors' sum exactly.
    g = np.random.default_rng(8)
    messages = g.integers(-(1 << 40), 1 << 40, size=(10, d), dtype=np.int64)
    alive = np.array([0, 2, 3, 5, 6, 8, 9])
    np.testing.assert_array_equal(secure_total(messages, SecureSource(), alive),
                                  messages[alive].sum(axis=0))
    # The 7 survivors' shares alone carry central DP-SGD's σΔ (planned for them).
    draws = _Draws(None, np.random.default_rng(5))
    zero = np.zeros((0, d))
    left = np.array([[_site_message(zero, plan, draws, d) for _ in range(7)]
                     for _ in range(reps)]).sum(axis=1)
    central = plan.noise_multiplier * plan.sensitivity
    assert abs(left.std() / central - 1) < 0.03
    assert abs(left.std() / (central * math.sqrt(7 / 10)) - 1) > 0.1  # power: not for 10
    # A release drops 3 sites of every aggregation and unmasks the 7 survivors' sum.
    from dpstudio.engine.learning import federated

    X, y, sites, model = fed
    seen = []
    real = federated.secure_total
    monkeypatch.setattr(federated, "secure_total",
                        lambda m, source, survivors=None: seen.append(
                            None if survivors is None else len(survivors))
                        or real(m, source, survivors))
    r = train_federated(X, y, sites, model, "secagg", epsilon=2.0, delta=DELTA,
                        source=SecureSource(), dropouts=3, noise="skellam", **FIT)
    assert seen == [7] * (FIT["rounds"] * FIT["local_steps"])
    assert np.isfinite(r.params).all() and r.details["honest"] == 7
    assert "3 sites drop out" in r.trusts and r.trusts.endswith(".")
    with pytest.raises(ParameterError, match="majority"):
        plan_aggregate("secagg", 32 * 10 / 6000, 10, d, 100, 5, 1.0, 1.0, DELTA, dropouts=5)
    with pytest.raises(ParameterError, match="CAPE"):
        plan_aggregate("cape", 32 * 10 / 6000, 10, d, 100, 5, 1.0, 1.0, DELTA, dropouts=1)


# ------------------------------------------------------------------ CAPE collusion

def test_cape_noise_left_to_colluders_by_closed_form_and_monte_carlo():
    for h in (3, 6, 10):
        # κ → ∞: the unknown draws leave only the honest sites' z's summed: h/(h − c).
        assert math.isclose(cape_information(h, 1e9, 0), 1.0, rel_tol=1e-6)
        assert math.isclose(cape_information(h, 1e9, 1), h / (h - 1), rel_tol=1e-6)
        # Two colluders around a site leave it its own share: information h.
        if h >= 3:
            assert cape_information(h, 3.0, 2) == pytest.approx(h, rel=1e-12)
    # Monte Carlo (h = 5, κ = 2, site 0 colluding): draw the ring's noise, subtract what
    # the colluder knows (w₀, w₁), invert the honest residuals' sample covariance.
    h, kappa, n = 5, 2.0, 200_000
    g = np.random.default_rng(11)
    z = g.normal(0, math.sqrt(1 / h), (n, h))
    w = g.normal(0, math.sqrt(kappa), (n, h))
    noise = z + w - np.roll(w, -1, axis=1)
    known = np.zeros_like(w)
    known[:, [0, 1]] = w[:, [0, 1]]
    residual = (noise - (known - np.roll(known, -1, axis=1)))[:, 1:]
    info = np.diag(np.linalg.inv(np.cov(residual, rowvar=False))).max()
    assert abs(info / cape_information(h, kappa, 1) - 1) < 0.02
    assert abs(info / cape_information(h, kappa, 0) - 1) > 0.1  # power: collusion shows


def test_cape_plan_covers_the_declared_collusion_and_its_noise_cancels(fed):
    h, d, reps = 10, 4, 3000
    plan = plan_aggregate("cape", 32 * h / 6000, h, d, 100, 5, 1.0, 1.0, DELTA,
                          cape_ratio=3.0, colluding=1)
    info = cape_information(h, 3.0, 1)
    assert math.isclose(plan.sum_multiplier, plan.noise_multiplier * math.sqrt(info))
    assert plan.colluding == 1 and plan.view_multiplier == plan.noise_multiplier
    draws = _Draws(None, np.random.default_rng(2))
    parts = np.array([_common_parts(plan, h, draws, d) for _ in range(reps)])
    assert np.abs(parts.sum(axis=1)).max() < 1e-9  # the correlated parts cancel
    zero = np.zeros((0, d))
    msgs = parts + np.array([[_site_message(zero, plan, draws, d) for _ in range(h)]
                             for _ in range(reps)])
    per_site = plan.sum_multiplier * plan.sensitivity * math.sqrt(1 / h + 2 * 3.0)
    assert math.isclose(math.sqrt(plan.share_std ** 2 + 2 * plan.common_std ** 2), per_site)
    assert abs(msgs.std() / per_site - 1) < 0.03  # 120,000 normals: s.e. 0.2%
    assert abs(msgs.std() / (plan.sum_multiplier * plan.sensitivity) - 1) > 0.5  # power
    assert abs(msgs.sum(axis=1).std() / (plan.sum_multiplier * plan.sensitivity) - 1) < 0.03
    with pytest.raises(ParameterError, match="CAPE cannot protect against 2"):
        plan_aggregate("cape", 32 * h / 6000, h, d, 100, 5, 1.0, 1.0, DELTA, colluding=2)
    X, y, sites, model = fed
    r = train_federated(X, y, sites, model, "cape", epsilon=1.0, delta=DELTA, colluding=1,
                        rng=np.random.default_rng(0), **FIT)
    assert "fewer than 2 sites" in r.trusts and r.trusts.endswith(".")
    assert r.details["colluding"] == 1


# ------------------------------------------------------------------ site sampling

def test_sampling_sites_credits_delta_only_by_the_participation_probability(fed):
    X, y, sites, model = fed
    k, s, rounds = 3, 10, FIT["rounds"]
    r = train_federated(X, y, sites, model, "secagg", epsilon=1.0, delta=DELTA,
                        fraction=0.3, rng=np.random.default_rng(0), **FIT)
    # Independently: P(a site joins at least one of R rounds), summed over patterns.
    p = k / s
    joins = sum(math.comb(rounds, j) * p ** j * (1 - p) ** (rounds - j)
                for j in range(1, rounds + 1))
    d = r.details
    assert d["participants"] == k and math.isclose(d["run_participation"], joins)
    assert math.isclose(d["sampling_delta"], DELTA / joins, rel_tol=1e-12)
    assert d["accounted_delta"] == d["sampling_delta"]  # Gaussian shares: no TV to take
    assert r.delta <= DELTA and math.isclose(r.delta, DELTA, rel_tol=1e-12)
    acc = dpsgd_epsilon(d["noise_multiplier"], d["sample_rate"], d["steps"], DELTA / joins)
    assert r.epsilon == acc.epsilon  # ε is the accountant's: no ε credit
    assert math.isclose(r.per_round[1], p * DELTA / joins)
    assert any("no amplification of ε" in n for n in r.notes)
    full = site_sampling(10, 10, rounds, DELTA)
    assert full.accounted_delta == DELTA and not full.credited and full.note() == ""
    # The joint-convexity step itself, numerically: a Gaussian mechanism run with
    # probability p has hockey-stick divergence p·δ(ε) (pattern seen) and at most that
    # (pattern hidden: the mixture).
    eps, mu = 1.0, 1.5
    delta = (stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps)
             * stats.norm.cdf(-mu / 2 - eps / mu))

    def hockey(density_p):
        return integrate.quad(lambda x: max(0.0, density_p(x) - math.exp(eps)
                                            * stats.norm.pdf(x)), -12, 14, limit=200)[0]

    mixture = hockey(lambda x: (1 - p) * stats.norm.pdf(x) + p * stats.norm.pdf(x, mu))
    assert mixture <= p * delta * (1 + 1e-6)
    assert hockey(lambda x: stats.norm.pdf(x, mu)) == pytest.approx(delta, rel=1e-6)


# ------------------------------------------------------------------ loss descriptions

def test_dpsgd_description_composes_to_the_accountants_epsilon(fed):
    X, y, _, model = fed
    plan = plan_dpsgd(model.dimension, 0.02, 150, 1.0, DELTA, epsilon=1.0)
    r = simulate_dpsgd(model, X, y, plan, SimulationSource(1))
    desc = r.loss_description()
    assert desc.mechanism == "subsampled_gaussian"
    assert (desc.sample_rate, desc.steps) == (0.02, 150)
    assert math.isclose(desc.scale / desc.sensitivity, plan.noise_multiplier)
    got = spent([desc], "pld", delta=DELTA)
    assert got.method in ONE and math.isclose(got.epsilon, r.epsilon, rel_tol=1e-6)
    # Two runs compose to the accountant's ε of 2T steps.
    two = spent([desc, desc], "pld", delta=2 * DELTA)
    ref = dpsgd_epsilon(plan.noise_multiplier, 0.02, 300, 2 * DELTA).epsilon
    assert two.method == PLD and math.isclose(two.epsilon, ref, rel_tol=1e-6)
    # Power: a description 10% less noisy composes to a visibly larger ε.
    from dataclasses import replace

    loose = replace(desc, scale=desc.scale * 0.9)
    assert spent([loose, loose], "pld", delta=2 * DELTA).epsilon > 1.05 * two.epsilon


def test_federated_descriptions_follow_the_noise_family(fed):
    X, y, sites, model = fed
    run = {"epsilon": 1.0, "delta": DELTA, "rng": np.random.default_rng(0), **FIT}
    for variant in ("secagg", "cape", "local"):
        r = train_federated(X, y, sites, model, variant, **run)
        desc = r.loss_description()
        assert desc.mechanism == "subsampled_gaussian" and desc.steps == 6
        got = spent([desc], "pld", delta=DELTA)
        assert got.method in ONE and math.isclose(got.epsilon, r.epsilon, rel_tol=1e-6)
        if variant == "secagg":  # composed for real, not by the claims' sum
            two = spent([desc, desc], "pld", delta=2 * DELTA)
            assert two.method == PLD and two.epsilon < 2 * r.epsilon
    sk = train_federated(X, y, sites, model, "secagg", noise="skellam", **run)
    assert sk.loss_description().mechanism == "approx"
    assert sk.loss_description().epsilon == sk.epsilon
    none = train_federated(X, y, sites, model, "none", epsilon=None, delta=None,
                           rng=np.random.default_rng(0), **FIT)
    with pytest.raises(EngineError, match="no privacy loss"):
        none.loss_description()
    with pytest.raises(ParameterError, match="secagg or cape"):
        train_federated(X, y, sites, model, "local", noise="skellam", **run)


# ------------------------------------------------------------------ headless

def _train(capsys, *argv):
    import json

    from dpstudio.cli import main

    code = main(["train", "sample:health", "--label", "diabetes", "--features", "age,bmi",
                 "--method", "dpsgd", "--epsilon", "2", "--delta", "1e-5", "--sites", "6",
                 "--rounds", "3", "--local-steps", "2", "--simulate", "1", "--json",
                 *argv])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 else out.err)


def test_train_takes_the_declared_trust_on_the_command_line(capsys):
    code, d = _train(capsys, "--fed-variant", "secagg", "--fed-noise", "skellam",
                     "--dropouts", "1", "--colluding", "1", "--fraction", "0.8")
    assert code == 0, d
    f = d["federated"]
    assert (f["noise"], f["dropouts"], f["colluding"], f["participants"]) == (
        "skellam", 1, 1, 5)
    assert f["honest"] == 3 and 0 < d["epsilon"] <= 2 and d["delta"] <= 1e-5
    assert "1 site per round colludes" in d["trusts"]
    assert any("no amplification of ε" in n for n in d["notes"])
    code, err = _train(capsys, "--fed-variant", "cape", "--colluding", "2")
    assert code != 0 and "CAPE cannot protect against 2 colluding sites" in err
    code, err = _train(capsys, "--fed-variant", "local", "--dropouts", "1")
    assert code != 0 and "dropouts are declared for secagg" in err
