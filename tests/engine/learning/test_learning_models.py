"""The models' gradients against finite differences, and the non-private baselines against
independent solutions (scipy.optimize on the same objective; ridge's closed form)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.learning.models import (
    LinearModel,
    LogisticModel,
    MLPModel,
    fit_baseline,
    make_model,
    regression_labels,
)


def _rows(n=40, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p)) / np.sqrt(p)  # ‖x‖ ≤ 1, as design_matrix makes them
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return X, y


MODELS = [
    LogisticModel(4, 0.05),
    LinearModel(4, 0.05),
    MLPModel(4, 0.05, hidden=5, activation="tanh"),
    MLPModel(4, 0.0, hidden=3, activation="relu"),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.name}-{getattr(m, 'activation', '')}")
def test_per_example_gradients_match_finite_differences(model):
    X, y = _rows()
    if model.task == "regression":
        y = np.random.default_rng(1).uniform(-1, 1, y.size)
    rng = np.random.default_rng(2)
    theta = model.init(3) + 0.3 * rng.normal(size=model.dimension)
    G = model.per_example_gradients(theta, X, y)
    assert G.shape == (X.shape[0], model.dimension)
    h = 1e-6
    eye = np.eye(model.dimension) * h
    fd = np.stack([(model.losses(theta + e, X, y) - model.losses(theta - e, X, y)) / (2 * h)
                   for e in eye], axis=1)
    # Central differences err by O(h²·ℓ‴) ≈ 1e-12 plus rounding ≈ 1e-16/h = 1e-10.
    np.testing.assert_allclose(G, fd, atol=1e-8, rtol=0)
    # The averaged gradient (built without the n × d matrix) is the mean plus λθ.
    np.testing.assert_allclose(model.gradient(theta, X, y), G.mean(0) + model.lam * theta,
                               atol=1e-14, rtol=0)


def test_finite_difference_check_catches_a_wrong_gradient():
    # Power check of the finite-difference test: a wrong gradient (say, ×1.01) fails it.
    X, y = _rows()
    model = LogisticModel(4, 0.05)
    theta = np.array([0.3, -0.2, 0.5, 0.1])
    G = 1.01 * model.per_example_gradients(theta, X, y)
    h = 1e-6
    fd = np.stack([(model.losses(theta + e, X, y) - model.losses(theta - e, X, y)) / (2 * h)
                   for e in np.eye(4) * h], axis=1)
    assert np.abs(G - fd).max() > 1e-5


def test_logistic_baseline_is_scipys_minimum_of_the_same_objective():
    X, y = _rows(200, 5, seed=4)
    model = LogisticModel(5, 0.01)

    def f(t):
        return np.mean(np.logaddexp(0, -y * (X @ t))) + 0.005 * t @ t

    ref = minimize(f, np.zeros(5), method="BFGS", options={"gtol": 1e-12}).x
    base = fit_baseline(model, X, y)
    assert base.solver == "newton"
    np.testing.assert_allclose(base.theta, ref, atol=1e-6)
    assert base.objective <= f(ref) + 1e-12


def test_ridge_baseline_is_the_closed_form():
    rng = np.random.default_rng(5)
    X, _ = _rows(300, 6, seed=5)
    y = np.clip(X @ rng.normal(size=6) + 0.1 * rng.normal(size=300), -1, 1)
    model = LinearModel(6, 0.02)
    closed = np.linalg.solve(X.T @ X / 300 + 0.02 * np.eye(6), X.T @ y / 300)
    base = fit_baseline(model, X, y)
    # Strong convexity λ: ‖θ − θ*‖ ≤ ‖∇F(θ)‖/λ, and L-BFGS stops at ‖∇F‖∞ ≤ 1e-10.
    assert np.linalg.norm(base.theta - closed) <= base.gradient_norm / 0.02 + 1e-12
    np.testing.assert_allclose(base.theta, closed, atol=1e-7)
    np.testing.assert_allclose(model.closed_form(X, y), closed)


def test_mlp_baseline_is_seeded_and_reaches_a_stationary_point():
    X, y = _rows(150, 3, seed=6)
    y = np.where(np.sum(X**2, axis=1) > np.median(np.sum(X**2, axis=1)), 1.0, -1.0)
    model = MLPModel(3, 1e-4, hidden=6, activation="relu")
    a, b = fit_baseline(model, X, y, seed=7), fit_baseline(model, X, y, seed=7)
    np.testing.assert_array_equal(a.theta, b.theta)
    start = model.objective(model.init(7), X, y)
    assert a.objective < start
    assert a.gradient_norm < 1e-2  # ReLU is not smooth: L-BFGS ends near a kink
    # A radial label is beyond a linear model: the MLP fits it better than logistic does.
    lin = fit_baseline(LogisticModel(3, 1e-4), X, y)
    acc_mlp = np.mean((model.predict(a.theta, X) > 0.5) == (y > 0))
    acc_lin = np.mean((LogisticModel(3, 1e-4).predict(lin.theta, X) > 0.5) == (y > 0))
    assert acc_mlp > acc_lin + 0.2


def test_bad_input_is_refused_in_one_sentence():
    with pytest.raises(ParameterError, match="logistic, linear or mlp"):
        make_model("svm", 3, 0.1)
    with pytest.raises(ParameterError, match="activation"):
        MLPModel(3, 0.1, activation="sigmoid")
    with pytest.raises(ParameterError, match="parameters"):
        LogisticModel(3, 0.1).losses(np.zeros(4), np.zeros((2, 3)), np.ones(2))
    with pytest.raises(QueryError, match="missing"):
        regression_labels(np.array([1.0, np.nan]), (0, 2))
    np.testing.assert_allclose(regression_labels(np.array([0.0, 1.0, 5.0]), (0, 2)),
                               [-1.0, 0.0, 1.0])
