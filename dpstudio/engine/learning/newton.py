"""The certified Newton solver shared by logistic regression and objective perturbation.

Both minimize, on rows with ‖x‖₂ ≤ 1 and labels ±1,

    J(θ) = (1/n) Σᵢ log(1 + exp(−yᵢθᵀxᵢ)) + (μ/2)‖θ‖₂² + (1/n) bᵀθ,

with μ > 0 (λ for the plain fit; λ + Δₙ and the random b of objective perturbation),
which is μ-strongly convex. :func:`minimize_logistic` runs damped Newton steps, then
finishes with full Newton steps on the correctly rounded gradient (each coordinate one
``math.fsum``), kept only while its norm falls, until ‖∇J(θ̂)‖₂ ≤ g_tol/2 — the
certificate both callers' sensitivity analyses rest on.

With b = 0 every value is the one the plain fit computed before this module existed:
adding the linear term's 0.0 changes no float, and a correctly rounded sum does not
depend on the order of its terms.
"""

from __future__ import annotations

import math

import numpy as np

from dpstudio.engine.errors import EngineError
from dpstudio.engine.special import expit

__all__ = ["gradient_norm_exact", "minimize_logistic", "objective"]

_MAX_NEWTON = 100
_MAX_POLISH = 8


def objective(theta: np.ndarray, X: np.ndarray, y: np.ndarray, mu: float,
              b: np.ndarray | None = None) -> float:
    """J(θ) in floating point.

    Parameters
    ----------
    theta : numpy.ndarray, shape (p,)
        The point.
    X : numpy.ndarray, shape (n, p)
        Rows.
    y : numpy.ndarray, shape (n,)
        Labels ±1.
    mu : float
        The ridge coefficient μ > 0.
    b : numpy.ndarray, shape (p,), optional
        The linear term (0 when omitted).

    Returns
    -------
    float
    """
    n = X.shape[0]
    out = np.mean(np.logaddexp(0.0, -(y * (X @ theta)))) + 0.5 * mu * theta @ theta
    if b is not None:
        out = out + b @ theta / n
    return float(out)


def _gradient(theta, X, y, mu, b) -> np.ndarray:
    n = X.shape[0]
    s = y * expit(-(y * (X @ theta)))
    g = -(X.T @ s) / n + mu * theta
    return g if b is None else g + b / n


def _gradient_exact(theta, X, y, mu, b) -> np.ndarray:
    """∇J with each coordinate's sum correctly rounded (math.fsum): no cancellation error
    between the data term and the large ``b/n`` and ``μθ`` terms a small ε brings."""
    n = X.shape[0]
    s = y * expit(-(y * (X @ theta)))
    extra = np.zeros(X.shape[1]) if b is None else b / n
    return np.array([math.fsum([*(-X[:, j] * s / n).tolist(), mu * theta[j], extra[j]])
                     for j in range(X.shape[1])])


def gradient_norm_exact(theta: np.ndarray, X: np.ndarray, y: np.ndarray, mu: float,
                        b: np.ndarray | None = None) -> float:
    """‖∇J(θ)‖₂ with compensated sums (the certificate's measure).

    Parameters
    ----------
    theta, X, y, mu, b
        As :func:`objective`.

    Returns
    -------
    float
    """
    g = _gradient_exact(theta, X, y, mu, b)
    return float(math.sqrt(math.fsum((g * g).tolist())))


def _hessian(theta, X, y, mu) -> np.ndarray:
    m = y * (X @ theta)
    w = expit(m) * expit(-m)
    return (X.T * w) @ X / X.shape[0] + mu * np.eye(X.shape[1])


def minimize_logistic(X: np.ndarray, y: np.ndarray, mu: float, tol: float,
                      b: np.ndarray | None = None, what: str = "∇J",
                      hint: str = "try a larger λ") -> tuple[np.ndarray, float, int]:
    """Damped Newton (deterministic), certified to ‖∇J(θ̂)‖₂ ≤ tol/2.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, p)
        Rows with ‖x‖₂ ≤ 1, n ≥ 1.
    y : numpy.ndarray, shape (n,)
        Labels ±1.
    mu : float
        μ > 0.
    tol : float
        g_tol, fixed in advance from n alone by the caller.
    b : numpy.ndarray, shape (p,), optional
        The linear term (objective perturbation's noise); none for the plain fit.
    what : str, optional
        How the refusal names the gradient.
    hint : str, optional
        What the refusal suggests.

    Returns
    -------
    theta : numpy.ndarray, shape (p,)
        θ̂.
    gnorm : float
        ‖∇J(θ̂)‖₂ by compensated sums, ≤ tol/2.
    iterations : int
        Newton steps taken (damped and finishing).

    Raises
    ------
    EngineError
        If the tolerance cannot be certified (not expected in double precision).
    """
    p = X.shape[1]
    theta = np.zeros(p)
    f = objective(theta, X, y, mu, b)
    it = 0
    while it < _MAX_NEWTON:
        it += 1
        g = _gradient(theta, X, y, mu, b)
        if np.linalg.norm(g) <= tol / 8:
            break
        step = np.linalg.solve(_hessian(theta, X, y, mu), -g)
        t = 1.0
        while True:  # Armijo backtracking
            cand = theta + t * step
            fc = objective(cand, X, y, mu, b)
            if fc <= f + 1e-4 * t * float(g @ step) or t < 1e-10:
                break
            t *= 0.5
        if fc > f:  # no further progress in floating point
            break
        theta, f = cand, fc
    gnorm = gradient_norm_exact(theta, X, y, mu, b)
    # J's decrease can vanish below a float's resolution before ∇J reaches the tolerance
    # (a small ε makes b, and so θ and J, large): finish with full Newton steps on the
    # correctly rounded gradient, kept only while its norm falls.
    for _ in range(_MAX_POLISH):
        if gnorm <= tol / 2:
            break
        cand = theta + np.linalg.solve(_hessian(theta, X, y, mu),
                                       -_gradient_exact(theta, X, y, mu, b))
        gc = gradient_norm_exact(cand, X, y, mu, b)
        if not gc < gnorm:
            break
        theta, gnorm, it = cand, gc, it + 1
    if gnorm > tol / 2:
        raise EngineError(f"the solver could not certify ‖{what}‖ ≤ {tol / 2:g} (reached "
                          f"{gnorm:.3g}); {hint}")
    return theta, gnorm, it
