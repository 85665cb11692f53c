"""A federated run's loss description states exactly the (ε, δ) the run states, and its
noise honours that claim.

With every site in every round the subsampled Gaussian the plan ran is described, at the
δ its accountant ran at (= the result's). With a fraction of the sites per round the
accountant ran at δ′ = δ/P(a site joins) and the result states the credited δ; no
subsampled Gaussian of the plan's (σ, q, T) meets (ε, δ), so the run is described by its
(ε, δ) alone. The local plan is one DP-SGD plan run at every site, with a ``noise`` field
like the aggregate plan's.
"""

import math
from dataclasses import replace

import numpy as np
import pytest

from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon
from dpstudio.engine.accounting.ledger import spent
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.learning.federated import train_federated
from dpstudio.engine.learning.federated_plan import LocalPlan, plan_local
from dpstudio.engine.learning.federated_trust import federated_loss
from dpstudio.engine.learning.models import make_model
from dpstudio.engine.learning.site_sampling import site_sampling
from dpstudio.engine.learning.sites import split_sites

N, P, DELTA, SITES = 2000, 4, 1e-5, 10
FIT = {"rounds": 3, "local_steps": 2, "lr": 2.0, "batch_size": 20,
       "batch_rate": 20 * SITES / N, "epsilon": 1.0, "delta": DELTA,
       "accountant": "rdp"}  # quicker to calibrate than PLD (test_federated_trust_models: PLD)


@pytest.fixture(scope="module")
def fed():
    # Only the descriptions are checked: any rows of norm ≤ 1 (4 coordinates in ±½) do.
    g = np.random.default_rng(0)
    X = g.uniform(-0.5, 0.5, size=(N, P))
    y = np.sign(X[:, 0] + 0.1)
    return X, y, split_sites(y, SITES, 1.0, seed=1), make_model("logistic", P, 1e-4)


def _own_epsilon(desc):
    """The accountant's ε of the described subsampled Gaussian at the claimed δ."""
    return dpsgd_epsilon(desc.scale / desc.sensitivity, desc.sample_rate, desc.steps,
                         desc.delta, "rdp").epsilon


@pytest.mark.parametrize("variant", ["local", "secagg", "cape", "shuffle"])
def test_with_every_site_the_plan_is_described_at_the_results_claim(fed, variant):
    X, y, sites, model = fed
    r = train_federated(X, y, sites, model, variant, rng=np.random.default_rng(0), **FIT)
    desc = r.loss_description()
    assert desc.mechanism == "subsampled_gaussian" and desc.steps == 6
    assert (desc.epsilon, desc.delta) == (r.epsilon, r.delta) and r.delta == DELTA
    # Its noise meets the claim (an independent accountant call at the claimed δ).
    assert _own_epsilon(desc) <= r.epsilon * (1 + 1e-9)


@pytest.mark.parametrize("variant", ["local", "secagg", "cape"])
def test_sampled_sites_describe_the_credited_claim_only(fed, variant):
    X, y, sites, model = fed
    r = train_federated(X, y, sites, model, variant, fraction=0.3,
                        rng=np.random.default_rng(0), **FIT)
    sampled = site_sampling(SITES, 3, 3, DELTA)  # independent: 3 of 10 sites, 3 rounds
    assert sampled.credited and r.delta == sampled.delta <= DELTA
    assert r.details["sampling_delta"] == sampled.accounted_delta > 1.5 * DELTA
    desc = r.loss_description()
    assert (desc.epsilon, desc.delta) == (r.epsilon, r.delta)
    # The plan's subsampled Gaussian at the credited δ has a larger ε than the run
    # states (its accountant ran at δ′): claiming (ε, δ) for it would understate its own
    # noise's loss, so the description is the claim alone.
    q = FIT["batch_rate"]
    sigma = r.details["noise_multiplier"]
    assert dpsgd_epsilon(sigma, q, 6, r.delta, "rdp").epsilon > r.epsilon * 1.01
    assert desc.mechanism == "approx"
    assert spent([desc], "pld", delta=r.delta).epsilon >= r.epsilon


def test_the_local_plan_is_one_plan_with_a_noise_field(fed):
    plan = plan_local(P, 0.1, 6, 2, 1.0, 1.0, DELTA, 0.5, "rdp", sites=SITES)
    assert plan.noise == "gaussian" and len(plan.sites) == SITES
    assert all(s is plan.site for s in plan.sites)
    other = plan_local(P, 0.2, 6, 2, 1.0, 1.0, DELTA, 0.5, "rdp").site
    with pytest.raises(ParameterError, match="the same at every site"):
        LocalPlan((plan.site, other), plan.epsilon, plan.delta, plan.per_round)
    with pytest.raises(ParameterError, match="the same at every site"):
        LocalPlan((), plan.epsilon, plan.delta, plan.per_round)
    with pytest.raises(ParameterError, match="Gaussian noise only"):
        replace(plan, noise="skellam")
    # The description is that plan's, at the plan's claim.
    run = type("Run", (), {"variant": "local", "epsilon": plan.epsilon,
                           "delta": plan.delta})()
    desc = federated_loss(run, plan)
    assert (desc.scale, desc.sensitivity, desc.sample_rate, desc.steps) == (
        plan.site.noise_std, plan.site.sensitivity, 0.1, 6)
    assert math.isclose(_own_epsilon(desc), plan.epsilon, rel_tol=1e-9)
    # A run stating another (ε, δ) than the plan's accountant is described by it alone.
    stated = type("Run", (), {"variant": "local", "epsilon": plan.epsilon,
                              "delta": plan.delta / 2})()
    assert federated_loss(stated, plan).mechanism == "approx"
