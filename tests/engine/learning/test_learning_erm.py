"""DP-ERM by output perturbation: sensitivity, calibration, audit, utility, refusals."""

import dataclasses
import math

import numpy as np
import pytest

from dpstudio.engine.accounting.zcdp import zcdp_to_epsilon
from dpstudio.engine.audit import epsilon_lower_bound
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.learning import (
    INTERCEPT,
    calibrate_output_perturbation,
    design_matrix,
    fit_logistic,
    release_logistic,
    sensitivity_l2,
    simulate_logistic,
)
from dpstudio.engine.learning.erm import snap
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import InsecureSourceError, SecureSource, SimulationSource

BOUNDS = {"a": (0.0, 10.0), "b": (-5.0, 5.0)}


def _data(n, seed=0, noise=0.0):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0, 10, n), rng.uniform(-5, 5, n)
    score = (a - 5) + b + noise * rng.normal(size=n)
    return {"a": a, "b": b, "y": np.where(score > 0, 1, -1)}


def _fit(cols, lam):
    X = design_matrix(cols, ["a", "b"], BOUNDS)
    y = cols["y"].astype(float)
    return fit_logistic(X, y, lam).theta


def _neighbour(cols, rng):
    """Replace one record by a random one, often a corner of the box with a flipped label."""
    new = {k: v.copy() for k, v in cols.items()}
    i = rng.integers(len(new["y"]))
    if rng.random() < 0.5:
        new["a"][i], new["b"][i] = rng.choice([0.0, 10.0]), rng.choice([-5.0, 5.0])
    else:
        new["a"][i], new["b"][i] = rng.uniform(0, 10), rng.uniform(-5, 5)
    new["y"][i] = -new["y"][i] if rng.random() < 0.7 else new["y"][i]
    return new


@pytest.mark.parametrize("n,lam", [(30, 0.05), (200, 0.01)])
def test_sensitivity_bound_holds_on_random_neighbours(n, lam):
    cols = _data(n, seed=n, noise=2.0)
    theta = _fit(cols, lam)
    bound = sensitivity_l2(n, lam)
    lap = calibrate_output_perturbation(3, n, lam, 1.0, 0.0)
    gau = calibrate_output_perturbation(3, n, lam, 1.0, 1e-6)
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(300):
        theta2 = _fit(_neighbour(cols, rng), lam)
        dist = float(np.linalg.norm(theta - theta2))
        assert dist <= bound
        worst = max(worst, dist / bound)
        # Snapped neighbours stay within the lattice sensitivity S.
        k = snap(theta, lap.grid) - snap(theta2, lap.grid)
        assert np.abs(k).sum() <= lap.noise.sensitivity
        k = snap(theta, gau.grid) - snap(theta2, gau.grid)
        assert math.sqrt(float(k @ k)) <= gau.noise.sensitivity
    assert worst > 0.05  # the neighbours probe the bound, not just its interior


@pytest.mark.parametrize("n,lam,eps", [(1000, 0.01, 1.0), (50_000, 0.1, 0.3), (10, 1.0, 8.0)])
def test_noise_scale_equals_closed_form(n, lam, eps):
    p = 4
    d2 = 2.0 / (n * lam) + 2.0 * max(min(1e-9, 1e-4 / n), 1e-12) / lam
    lap = calibrate_output_perturbation(p, n, lam, eps, 0.0)
    assert lap.sensitivity_l2 == pytest.approx(d2, rel=1e-11)
    g = lap.grid
    assert math.log2(g) == int(math.log2(g))
    assert lap.noise.sensitivity == math.ceil(math.sqrt(p) * lap.sensitivity_l2 / g) + p
    assert lap.noise_scale == pytest.approx(lap.noise.sensitivity * g / eps, rel=1e-15)
    cont = math.sqrt(p) * d2 / eps  # the continuous Laplace scale Δ₁/ε
    assert cont <= lap.noise_scale <= cont * (1 + (p + 1) * 2.0**-15)
    gau = calibrate_output_perturbation(p, n, lam, eps, 1e-6)
    s = gau.noise.sensitivity
    assert s == math.ceil(gau.sensitivity_l2 / gau.grid + math.sqrt(p))
    assert gau.rho == pytest.approx(s * s / (2 * gau.noise.scale**2), rel=1e-15)
    eps_real = zcdp_to_epsilon(gau.rho, 1e-6)
    assert eps * (1 - 1e-6) <= eps_real <= eps
    rho = gau.rho
    assert gau.noise_scale == pytest.approx(d2 / math.sqrt(2 * rho), rel=(p + 1) * 2.0**-15)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_empirical_audit_on_one_coordinate_and_its_power(delta):
    eps, n, lam = 1.0, 100, 0.05
    plan = calibrate_output_perturbation(3, n, lam, eps, delta)
    src = SimulationSource(5)
    m = 100_000
    # Real neighbours: the coordinate that moves most.
    cols = _data(n, seed=3, noise=1.0)
    t1 = snap(_fit(cols, lam), plan.grid)
    t2 = snap(_fit(_neighbour(cols, np.random.default_rng(9)), lam), plan.grid)
    j = int(np.argmax(np.abs(t1 - t2)))
    real = epsilon_lower_bound(t1[j] + plan.noise.sample(m, src),
                               t2[j] + plan.noise.sample(m, src), delta=delta)
    assert real.epsilon_lower <= eps
    # Worst case: the whole lattice sensitivity S on that one coordinate.
    noise = plan.noise
    worst = epsilon_lower_bound(noise.sample(m, src), noise.sensitivity + noise.sample(m, src),
                                delta=delta)
    assert worst.epsilon_lower <= eps
    weak = dataclasses.replace(noise, scale=noise.scale / 3)
    caught = epsilon_lower_bound(weak.sample(m, src), weak.sensitivity + weak.sample(m, src),
                                 delta=delta)
    assert caught.epsilon_lower > eps


def test_accuracy_approaches_the_nonprivate_fit_as_epsilon_grows():
    cols = {k: v for k, v in _data(3000, seed=4).items()}
    gaps, risks = [], []
    for eps in (0.02, 0.2, 2.0, 50.0):
        g, r = [], []
        for seed in range(5):
            rel = simulate_logistic(cols, "y", ["a", "b"], BOUNDS, eps, 0.0, 0.01,
                                    SimulationSource(seed))
            g.append(rel.utility["accuracy_nonprivate"] - rel.utility["accuracy_private"])
            r.append(rel.utility["excess_empirical_risk"])
        gaps.append(np.mean(g))
        risks.append(np.mean(r))
    assert rel.utility["accuracy_nonprivate"] > 0.97
    assert all(x >= 0 for x in risks)
    assert risks == sorted(risks, reverse=True)
    assert gaps[0] > 0.05 and abs(gaps[-1]) <= 0.005


def test_release_table_and_export_dict():
    cols = _data(500, seed=2)
    cols["y"] = np.where(cols["y"] > 0, "Yes", "no")
    rel = release_logistic(cols, "y", ["a", "b"], BOUNDS, 2.0, 1e-7, 0.01, SecureSource())
    rows = rel.to_table()
    assert [r[0] for r in rows] == ["a", "b", INTERCEPT]
    # Table coefficients reproduce the model's logit in original units.
    logit = rows[2][1] + rows[0][1] * cols["a"] + rows[1][1] * cols["b"]
    assert np.allclose(logit, rel.decision_function(cols))
    d = rel.to_dict()
    assert d["epsilon"] == 2.0 and d["delta"] == 1e-7 and d["n"] == 500 and not d["simulated"]
    assert d["noise_family"] == "gaussian" and d["rho"] > 0
    assert "utility" not in d and "accuracy" not in str(d)
    # Released coefficients lie on the lattice.
    assert np.all(rel.theta / rel.grid == np.rint(rel.theta / rel.grid))


def test_release_refuses_a_simulation_source():
    with pytest.raises(InsecureSourceError):
        release_logistic(_data(50), "y", ["a", "b"], BOUNDS, 1.0, 0.0, 0.01,
                         SimulationSource(0))


@pytest.mark.parametrize("change,error", [
    ({"epsilon": 0}, ParameterError), ({"epsilon": -1}, ParameterError),
    ({"epsilon": float("nan")}, ParameterError), ({"lam": 0}, ParameterError),
    ({"lam": -0.1}, ParameterError), ({"delta": 1.0}, ParameterError),
    ({"bounds": {"a": (0, 10)}}, QueryError), ({"bounds": {"a": (0, 10), "b": (5, -5)}},
                                               QueryError),
    ({"label": "c"}, QueryError), ({"features": []}, QueryError),
    ({"label": "a", "features": ["b"]}, QueryError),
])
def test_bad_input_gives_one_line_errors(change, error):
    cols = _data(50)
    cols["c"] = np.arange(50) % 3  # not binary
    args = {"label": "y", "features": ["a", "b"], "bounds": BOUNDS, "epsilon": 1.0,
            "delta": 0.0, "lam": 0.01} | change
    with pytest.raises(error) as err:
        simulate_logistic(cols, args["label"], args["features"], args["bounds"],
                          args["epsilon"], args["delta"], args["lam"], SimulationSource(0))
    assert "\n" not in str(err.value)


def test_registry_entry():
    info = REGISTRY.get("dp_erm_logistic")
    assert info.kind == "model" and info.trust_models == ("central",)
    assert info.queries == ("logistic_regression",)
    assert {p.name for p in info.params} == {"epsilon", "delta", "lambda"}
    model = info.build(**info.resolve({"epsilon": 0.5, "lambda": 0.1}))
    assert (model.epsilon, model.delta, model.lam) == (0.5, 0.0, 0.1)
    plan = model.calibrate(3, 1000)
    assert plan.family == "laplace" and plan.epsilon == 0.5
    with pytest.raises(ParameterError):
        info.resolve({"lambda": 0})
    rel = model.simulate(_data(100), "y", ["a", "b"], BOUNDS, SimulationSource(1))
    assert rel.simulated and rel.lam == 0.1


def test_fit_logistic_certifies_where_the_objective_stops_improving_in_floating_point():
    # All labels +1 on nearly equal rows: F flattens out in double precision before ‖∇F‖
    # reaches the tolerance (this raised "could not certify" before the final steps).
    from dpstudio.engine.learning.logistic import _gradient_norm_exact, fit_logistic

    X = np.full((200, 1), 0.3)
    X[-1] = 0.15
    fit = fit_logistic(X, np.ones(200), 0.1)
    assert _gradient_norm_exact(fit.theta, X, np.ones(200), 0.1) <= fit.tolerance / 2
