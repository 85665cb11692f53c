"""Gaussian differential privacy (Dong, Roth & Su 2019).

A mechanism is μ-GDP when distinguishing neighbours is no easier than distinguishing
N(0, 1) from N(μ, 1). The Gaussian mechanism is exactly (Δ/σ)-GDP, compositions are
exactly √(Σμᵢ²)-GDP, and δ(ε) of μ-GDP is the Gaussian mechanism's: these are exact.
For Poisson-subsampled Gaussians the central limit theorem gives an *approximation*
that may understate privacy loss; it is flagged ``approximate=True`` wherever returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstudio.engine.calibration import validate_delta, validate_sensitivity
from dpstudio.engine.checks import count, positive
from dpstudio.engine.checks import sample_rate as _check_rate
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.special import log_ndtr

__all__ = ["GDPEstimate", "gdp_compose", "gdp_delta", "gdp_epsilon", "gdp_gaussian",
           "gdp_subsampled_gaussian_clt"]


@dataclass(frozen=True)
class GDPEstimate:
    """A μ and whether it is only an approximation (CLT), not a guarantee.

    Attributes
    ----------
    mu : float
        The GDP parameter μ > 0.
    approximate : bool
        True when μ comes from the central limit theorem and may understate the loss.
    """

    mu: float
    approximate: bool


def gdp_gaussian(sigma: float, sensitivity: float = 1.0) -> float:
    """μ = Δ/σ of the Gaussian mechanism (exact; Dong, Roth & Su 2019).

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0.
    sensitivity : float, optional
        ℓ₂ sensitivity Δ > 0, in the same units as σ.

    Returns
    -------
    float
        μ.

    Raises
    ------
    ParameterError
        If σ or Δ is not finite and positive.
    """
    return validate_sensitivity(sensitivity) / positive("σ", sigma)


def gdp_compose(*mus: float) -> float:
    """μ of GDP mechanisms run in sequence: √(Σμᵢ²) (Dong, Roth & Su 2019, Cor. 3.3).

    Parameters
    ----------
    *mus : float
        Each μᵢ > 0.

    Returns
    -------
    float
    """
    if not mus:
        raise ParameterError("gdp_compose needs at least one μ")
    return math.sqrt(math.fsum(positive("μ", m) ** 2 for m in mus))


def gdp_delta(mu: float, epsilon):
    """Exact δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2019,
    Cor. 2.13), evaluated in log space.

    Parameters
    ----------
    mu : float
        μ > 0.
    epsilon : float or array_like
        Any real ε.

    Returns
    -------
    float or numpy.ndarray
    """
    m = positive("μ", mu)
    eps = np.asarray(epsilon, dtype=np.float64)
    if np.isnan(eps).any():
        raise ParameterError("ε must not be NaN")
    with np.errstate(over="ignore", invalid="ignore"):
        first = np.exp(log_ndtr(-eps / m + m / 2))
        second = np.exp(eps + log_ndtr(-eps / m - m / 2))
        out = np.where(np.isposinf(eps), 0.0, np.clip(first - second, 0.0, 1.0))
    return float(out) if out.ndim == 0 else out


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` for μ-GDP (exact, to the last few ulps; the
    value returned is checked to meet δ).

    Parameters
    ----------
    mu : float
        μ > 0.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
    """
    m = positive("μ", mu)
    d = validate_delta(delta, required=True)
    if gdp_delta(m, 0.0) <= d:
        return 0.0
    hi = max(1.0, m * m)
    while gdp_delta(m, hi) > d:
        hi *= 2.0
    from scipy.optimize import brentq  # here: importing it costs every command ~0.2 s

    eps = brentq(lambda e: gdp_delta(m, e) - d, 0.0, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    step = max(eps, 1e-300) * 4e-16
    while gdp_delta(m, eps) > d:  # land on the private side of the root
        eps += step
        step *= 2.0
    return float(eps)


def gdp_subsampled_gaussian_clt(sigma: float, sample_rate: float, steps: int
                                ) -> GDPEstimate:
    """CLT approximation μ ≈ q√(T(e^{1/σ²} − 1)) for T Poisson-subsampled Gaussian steps
    with noise multiplier σ (Bu, Dong, Long & Su 2020, Cor. 5). An approximation only
    (exact as T → ∞ with q√T fixed); it can understate the true privacy loss.

    Parameters
    ----------
    sigma : float
        Noise multiplier σ > 0.
    sample_rate : float
        Poisson sampling probability q in (0, 1].
    steps : int
        Number of steps T ≥ 1.

    Returns
    -------
    GDPEstimate
        With ``approximate=True``.
    """
    s = positive("σ", sigma)
    q = _check_rate(sample_rate)
    t = count("steps", steps)
    with np.errstate(over="ignore"):
        growth = math.expm1(1.0 / (s * s)) if 1.0 / (s * s) < 700 else math.inf
    mu = q * math.sqrt(t * growth)
    if not math.isfinite(mu):
        raise ParameterError(f"σ = {s:g} is too small for the CLT approximation")
    return GDPEstimate(mu=mu, approximate=True)
