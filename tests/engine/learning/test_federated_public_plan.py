"""FedAvg's noise and ε are functions of public parameters only (issue 13).

Under add/remove-one-record (FedAvg's relation) the number of records and the sites'
sizes are private. Before the fix the plans derived the Poisson rate from them (local:
qᵢ = B/mᵢ with σ calibrated at the smallest site; secagg and cape: q = B·S/n), so
removing one record at the smallest site changed q, σ and ε: the release leaked the
sizes. Now q is the analyst's declared ``batch_rate``: neighbouring datasets get exactly
the same plan, and its ε is the PLD accountant's for (q, σ, T), recomputed here.
"""

import math

import numpy as np
import pytest

from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.learning.federated import train_federated
from dpstudio.engine.learning.models import make_model
from dpstudio.engine.learning.sites import sites_from_column

N, P, DELTA, Q = 1200, 5, 1e-5, 0.05
RUN = {"rounds": 2, "local_steps": 2, "lr": 1.0, "batch_size": 12, "batch_rate": Q,
       "epsilon": 1.0, "delta": DELTA}
VARIANTS = (("local", {}), ("shuffle", {}), ("secagg", {}), ("cape", {}),
            ("secagg", {"noise": "skellam"}), ("secagg", {"colluding": 1, "dropouts": 1}))


@pytest.fixture(scope="module")
def neighbours():
    """D and D′ = D less one record of its smallest site (sizes 40, 200, 400, 560)."""
    g = np.random.default_rng(3)
    X = g.normal(size=(N, P - 1))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0) * 1.2
    X = np.hstack([X, np.full((N, 1), 0.5)])
    y = np.where(X @ g.normal(size=P) + g.logistic(size=N) > 0, 1.0, -1.0)
    site = np.repeat(np.array(["a", "b", "c", "d"], dtype=object), [40, 200, 400, 560])
    drop = np.ones(N, bool)
    drop[0] = False  # a record of "a", the smallest site
    return (X, y, site), (X[drop], y[drop], site[drop])


def _plan(data, variant, extra):
    X, y, site = data
    r = train_federated(X, y, sites_from_column(site), make_model("logistic", P, 1e-4),
                        variant, rng=np.random.default_rng(0), **RUN, **extra)
    d = r.details
    return (d["sample_rate"], d["noise_multiplier"], d["steps"], r.epsilon, r.delta,
            d.get("share_std"), d.get("sum_multiplier"), d.get("accounted_delta")), r


@pytest.mark.parametrize(("variant", "extra"), VARIANTS)
def test_neighbouring_datasets_get_exactly_the_same_plan(neighbours, variant, extra):
    d, d_prime = neighbours
    plan, r = _plan(d, variant, extra)
    plan_prime, _ = _plan(d_prime, variant, extra)
    assert plan == plan_prime  # exactly: not a float of either dataset enters
    q, sigma, steps = plan[:3]
    assert q == Q and steps == RUN["rounds"] * RUN["local_steps"]
    # ε is the accountant's for (q, σ, T), at the δ it was run at (every site joins every
    # round here, so the only δ taken out is the Skellam draws' total variation).
    at = r.details.get("accounted_delta", DELTA)
    assert at <= DELTA and (extra.get("noise") == "skellam" or at == DELTA)
    assert r.epsilon == dpsgd_epsilon(sigma, q, steps, at, "pld").epsilon
    assert r.epsilon <= RUN["epsilon"] and math.isfinite(sigma)


def test_the_declared_rate_sets_the_noise_and_sizes_do_not():
    # The power check: the plan does move with q (what it depends on), so the equality
    # above is not a plan that ignores its inputs.
    g = np.random.default_rng(1)
    X = np.hstack([g.uniform(-0.5, 0.5, size=(300, 2)), np.full((300, 1), 0.5)])
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    site = np.repeat(np.array(["a", "b", "c"], dtype=object), [20, 80, 200])
    model = make_model("logistic", 3, 1e-4)
    base = {**RUN, "batch_rate": 0.05}
    sigmas = [train_federated(X, y, sites_from_column(site), model, "secagg",
                              rng=np.random.default_rng(0), **{**base, "batch_rate": q})
              .details["noise_multiplier"] for q in (0.05, 0.2)]
    assert sigmas[1] > 1.5 * sigmas[0]
    with pytest.raises(ParameterError, match="Poisson rate q"):
        train_federated(X, y, sites_from_column(site), model, "local",
                        rng=np.random.default_rng(0),
                        **{k: v for k, v in base.items() if k != "batch_rate"})


def test_central_dpsgd_divides_by_the_declared_expected_batch():
    # One step at q = 1 with noise of std σC = 10⁻⁴: θ₁ = θ₀ − η·Σ clipped gᵢ / B up to
    # ησC/B ≤ 2.5·10⁻⁶ per coordinate; a wrong divisor (50 vs 20) moves each by ≥ 6·10⁻³.
    # The plan depends on (q, T, C, δ, σ) only; the declared B replaces q·n (reads n).
    from dpstudio.engine.learning.dpsgd import clip_gradients, plan_dpsgd, simulate_dpsgd
    from dpstudio.engine.rng import SimulationSource

    g = np.random.default_rng(4)
    X = np.hstack([g.uniform(-0.5, 0.5, size=(50, 2)), np.full((50, 1), 0.5)])
    y = np.where(g.random(50) < 0.5, 1.0, -1.0)
    model = make_model("logistic", 3, 0.0)
    theta0 = model.init(0)
    total = clip_gradients(model.per_example_gradients(theta0, X, y), 1.0).sum(axis=0)
    for batch, divisor in ((None, 50.0), (20.0, 20.0)):
        plan = plan_dpsgd(3, 1.0, 1, 1.0, DELTA, noise_multiplier=1e-4, learning_rate=0.5,
                          expected_batch=batch)
        theta = simulate_dpsgd(model, X, y, plan, SimulationSource(0)).theta
        np.testing.assert_allclose(theta, theta0 - 0.5 * total / divisor, rtol=0, atol=2e-5)
    with pytest.raises(ParameterError):
        plan_dpsgd(3, 0.5, 1, 1.0, DELTA, epsilon=1.0, expected_batch=0.0)
