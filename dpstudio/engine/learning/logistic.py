"""The logistic-regression solver: objective, certified minimizer and its sensitivity.

Objective
---------
On rows with ‖x‖₂ ≤ 1 and labels ±1 (:mod:`dpstudio.engine.learning.features`), the
solver minimizes

    F(θ; D) = (1/n) Σᵢ log(1 + exp(−yᵢ θᵀxᵢ)) + (λ/2) ‖θ‖₂²,

which is λ-strongly convex; the logistic loss is ‖x‖-Lipschitz, so L = 1.

Sensitivity
-----------
For replace-one neighbours D, D′ of the same size n, the exact minimizers satisfy
‖θ*(D) − θ*(D′)‖₂ ≤ 2L/(nλ) (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8; Bellet,
lecture 4). The solver returns an approximate minimizer θ̂, certified to satisfy
‖∇F(θ̂)‖₂ ≤ g_tol, a tolerance fixed in advance from n alone (:func:`gradient_tolerance`);
by strong convexity ‖θ̂ − θ*‖₂ ≤ ‖∇F(θ̂)‖₂/λ, so the released θ̂ has ℓ₂ sensitivity

    Δ₂ = 2L/(nλ) + 2·g_tol/λ     and ℓ₁ sensitivity Δ₁ = √p·Δ₂.

The certification computes ∇F(θ̂) with compensated (``math.fsum``) sums and asks for half
the tolerance, leaving the other half for floating-point error in that evaluation. If the
solver cannot certify the tolerance it refuses (an event that does not happen for this
smooth, strongly convex problem in double precision; were it to, the refusal would itself
depend on the data).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.learning.features import _validate_lambda
from dpstudio.engine.learning.newton import gradient_norm_exact, minimize_logistic, objective

__all__ = ["LIPSCHITZ", "LogisticFit", "fit_logistic", "gradient_tolerance", "sensitivity_l2"]

LIPSCHITZ = 1.0  # logistic loss with ‖x‖₂ ≤ 1


def gradient_tolerance(n: int) -> float:
    """g_tol: the certified bound on ‖∇F(θ̂)‖₂, fixed from n alone (data-independent).

    min(1e−9, 1e−4/n), floored at 1e−12: the term 2·g_tol/λ it adds to Δ₂ is at most
    1e−4 of 2/(nλ) up to n = 1e8.

    Parameters
    ----------
    n : int
        Number of records, ≥ 1 (public under replace-one neighbours).

    Returns
    -------
    float
        g_tol, in the units of the gradient of F (normalized feature space).
    """
    return max(min(1e-9, 1e-4 / n), 1e-12)


def sensitivity_l2(n: int, lam: float) -> float:
    """Δ₂ = 2L/(nλ) + 2·g_tol/λ of the certified approximate minimizer.

    Chaudhuri, Monteleoni & Sarwate (2011), Cor. 8, plus the solver's certified tolerance
    (see the module's docstring).

    Parameters
    ----------
    n : int
        Number of records, ≥ 1.
    lam : float
        Regularization strength λ > 0.

    Returns
    -------
    float
        The ℓ₂ sensitivity of θ̂ under replace-one, in the normalized feature space.

    Raises
    ------
    ParameterError
        If λ is not finite and positive.
    """
    lam = _validate_lambda(lam)
    return 2.0 * LIPSCHITZ / (n * lam) + 2.0 * gradient_tolerance(n) / lam


def _objective(theta: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float) -> float:
    """F(θ; D) (:mod:`.newton`'s J without a linear term)."""
    return objective(theta, X, y, lam)


def _gradient_norm_exact(theta, X, y, lam) -> float:
    """‖∇F(θ)‖₂ with compensated sums (the certificate's measure, :mod:`.newton`)."""
    return gradient_norm_exact(theta, X, y, lam)


@dataclass(frozen=True)
class LogisticFit:
    """The certified approximate minimizer θ̂ of F (normalized feature space).

    Attributes
    ----------
    theta : numpy.ndarray, shape (p,)
        θ̂; the last coordinate is the intercept feature's.
    objective : float
        F(θ̂; D).
    gradient_norm : float
        ‖∇F(θ̂)‖₂ computed with compensated sums, at most ``tolerance / 2``.
    tolerance : float
        g_tol of :func:`gradient_tolerance`.
    iterations : int
        Newton steps taken.
    n : int
        Number of records.
    lam : float
        λ.
    """

    theta: np.ndarray
    objective: float
    gradient_norm: float
    tolerance: float
    iterations: int
    n: int
    lam: float


def fit_logistic(X: np.ndarray, y: np.ndarray, lam: float) -> LogisticFit:
    """Damped Newton's method (deterministic), certified to ‖∇F(θ̂)‖₂ ≤ g_tol/2.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, p)
        Rows with ‖x‖₂ ≤ 1 (:func:`~dpstudio.engine.learning.features.design_matrix`).
    y : numpy.ndarray, shape (n,)
        Labels ±1 (:func:`~dpstudio.engine.learning.features.binary_labels`).
    lam : float
        Regularization strength λ > 0.

    Returns
    -------
    LogisticFit
        The minimizer θ̂ and its certificate. It reads the data without noise: never
        release it as is
        (:func:`~dpstudio.engine.learning.output_perturbation.perturb` does).

    Raises
    ------
    ParameterError
        If λ is not finite and positive.
    QueryError
        If there are no records.
    EngineError
        If the gradient bound cannot be certified (not expected in double precision).
    """
    lam = _validate_lambda(lam)
    n, p = X.shape
    if n < 1:
        raise QueryError("no records to fit")
    tol = gradient_tolerance(n)
    theta, gnorm, it = minimize_logistic(X, y, lam, tol, what="∇F")
    f = objective(theta, X, y, lam)
    return LogisticFit(theta, f, gnorm, tol, it, n, lam)
