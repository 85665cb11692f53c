"""One certified Newton solver for logistic regression and objective perturbation: both
paths give the same minimizer for b = 0, and with b ≠ 0 the solution meets the first-order
condition of the perturbed objective (∇F = −b/n), checked with the plain fit's gradient."""

import numpy as np

from dpstudio.engine.learning.logistic import _gradient_norm_exact, fit_logistic
from dpstudio.engine.learning.newton import gradient_norm_exact, minimize_logistic
from dpstudio.engine.learning.objective_perturbation import _minimize


def _task(n=400, p=5, seed=3):
    g = np.random.default_rng(seed)
    X = g.uniform(-1, 1, (n, p)) / np.sqrt(p)
    y = np.where(X @ g.normal(size=p) * 4 + g.logistic(size=n) > 0, 1.0, -1.0)
    return X, y


def test_both_paths_give_identical_minimizers_for_a_zero_linear_term():
    for seed, lam in ((3, 0.1), (4, 1e-3), (5, 2.0)):
        X, y = _task(seed=seed)
        plain = fit_logistic(X, y, lam).theta
        perturbed = _minimize(X, y, lam, np.zeros(X.shape[1]))
        np.testing.assert_allclose(perturbed, plain, rtol=0, atol=1e-12)
        assert np.linalg.norm(plain) > 0.01  # a real fit, not the starting point


def test_the_linear_term_enters_as_b_over_n():
    X, y = _task()
    n, lam = X.shape[0], 0.05
    b = np.array([3.0, -1.0, 0.5, 2.0, -4.0])
    theta, gnorm, _ = minimize_logistic(X, y, lam, 1e-10, b=b)
    assert gnorm <= 0.5e-10
    # ∇J = ∇F + b/n = 0 at the minimizer: F's own gradient there is −b/n, by the plain
    # fit's separate (pre-existing) gradient code path.
    s = y / (1.0 + np.exp(y * (X @ theta)))
    grad_f = -(X.T @ s) / n + lam * theta
    np.testing.assert_allclose(grad_f, -b / n, rtol=0, atol=1e-9)
    assert np.linalg.norm(b / n) > 1e-3  # the term is not negligible: the test can fail
    # The certificate measures J's gradient, not F's.
    assert gradient_norm_exact(theta, X, y, lam, b) <= 0.5e-10
    assert _gradient_norm_exact(theta, X, y, lam) > 1e-3
