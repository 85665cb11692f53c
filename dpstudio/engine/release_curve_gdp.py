"""The Gaussian-DP curve that goes with a trade-off curve or an (ε, δ) pair.

:func:`tightest_mu` (the tightest G_μ below a curve) and :func:`matching_mu` (the μ of the
Gaussian mechanism exactly (ε, δ)-DP); re-exported by :mod:`dpstudio.engine.release_curve`.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.release_curve_base import DEFAULT_ALPHA
from dpstudio.engine.special import ndtr, ndtri
from dpstudio.engine.tradeoff import (
    gaussian_epsilon,
)

__all__ = ["matching_mu", "tightest_mu"]

def tightest_mu(beta: np.ndarray, alpha: np.ndarray = DEFAULT_ALPHA) -> float | None:
    """Smallest μ with G_μ ≤ f on the grid: the tightest Gaussian-DP curve under f.

    Parameters
    ----------
    beta : numpy.ndarray
        The curve f at ``alpha``.
    alpha : numpy.ndarray, optional
        Its type I errors (default :data:`DEFAULT_ALPHA`).

    Returns
    -------
    float or None
        μ to about 1e-12 relative (bisection, the upper end: G_μ ≤ f + 1e-12 at every
        α of the grid strictly between 0 and 1), or None when no μ ≤ 64 is.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    inner = (alpha > 0) & (alpha < 1)
    a, f = alpha[inner], np.asarray(beta)[inner]

    def below(mu: float) -> bool:
        return bool(np.all(ndtr(-ndtri(a) - mu) <= f + 1e-12))

    lo, hi = 0.0, 1.0
    while not below(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 64:
            return None
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if below(mid) else (mid, hi)
    return hi


def matching_mu(epsilon: float, delta: float) -> float:
    """μ of the Gaussian mechanism that is exactly (ε, δ)-DP.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        The μ (bisection, the lower end: G_μ is at least (ε, δ)-DP) with
        :func:`~dpstudio.engine.tradeoff.gaussian_epsilon` (μ, δ) = ε, at most 1024.

    Raises
    ------
    ParameterError
        If δ is not in (0, 1).
    """
    lo, hi = 0.0, 1.0
    while gaussian_epsilon(hi, delta) < epsilon and hi < 1e3:
        lo, hi = hi, 2.0 * hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gaussian_epsilon(mid, delta) < epsilon else (lo, mid)
    return lo

