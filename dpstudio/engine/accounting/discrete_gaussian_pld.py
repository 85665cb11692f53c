"""The privacy-loss distribution of the discrete Gaussian, built in slices.

A central sum's discrete Gaussian is tens of thousands of grid steps wide (the engine's
fine grid keeps σ between 2¹⁵ and 2¹⁶ steps), so its pmf on ±38σ has millions of points.
Built in one piece (every output's p and q, then their log ratio) that costs hundreds of
megabytes; here the outputs are taken a slice at a time, each slice's atoms discretized
onto the loss grid (connect-the-dots, pessimistic) and added up — the same PLD, since the
discretization of a set of atoms is the sum of the discretizations of its parts.

N_Z(0, σ²) against N_Z(Δ, σ²): at output k the loss is exactly
ln p(k)/q(k) = ((k − Δ)² − k²)/(2σ²) = Δ(Δ − 2k)/(2σ²), computed from that closed form
(not as a difference of two rounded logarithms). The pair is symmetric under k ↦ Δ − k,
so one direction is the whole PLD. Outputs beyond ±38σ carry mass < e^{−38²/2} ≈ 10⁻³¹⁴,
below what a double distinguishes from 0 beside δ; the outputs where q = 0 < p (the Δ
lowest) go to +∞, pessimistically.
"""

from __future__ import annotations

import math

import numpy as np

from dpstudio.engine.accounting.pld import (
    DEFAULT_TAIL_MASS_TRUNCATION,
    DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
    PLD,
    _interval,
    _Pmf,
    _pmf_from_atoms,
    _trim,
)
from dpstudio.engine.checks import positive
from dpstudio.engine.errors import ParameterError

__all__ = ["MAX_OUTPUTS", "discrete_gaussian_pld"]

#: Outputs (2·⌈38σ⌉ + 1) beyond which no exact PLD is built (σ ≳ 220,000 steps); the
#: caller then accounts the release by its (ε, δ) claim.
MAX_OUTPUTS = 1 << 24
_WIDTH = 38.0
_SLICE = 1 << 20
_THETA_SIGMA = 4.0


def discrete_gaussian_pld(sigma: float, sensitivity: int, *,
                          value_discretization_interval: float =
                          DEFAULT_VALUE_DISCRETIZATION_INTERVAL) -> PLD | None:
    """PLD of one coordinate of the discrete Gaussian N_Z(0, σ²), shift Δ (grid steps).

    Parameters
    ----------
    sigma : float
        σ, in grid steps (> 0).
    sensitivity : int
        Δ, in grid steps (≥ 1).
    value_discretization_interval : float
        The loss grid step h.

    Returns
    -------
    PLD or None
        Pessimistic (connect-the-dots); None when the pmf would have more than
        :data:`MAX_OUTPUTS` points.

    Raises
    ------
    ParameterError
        For σ ≤ 0 or Δ < 1.
    """
    sigma = positive("σ", sigma)
    if isinstance(sensitivity, bool) or int(sensitivity) != sensitivity or sensitivity < 1:
        raise ParameterError(f"the sensitivity must be a whole number of steps ≥ 1, got "
                             f"{sensitivity!r}")
    sens = int(sensitivity)
    h = _interval(value_discretization_interval)
    half = int(math.ceil(_WIDTH * sigma))
    if 2 * half + 1 > MAX_OUTPUTS:
        return None
    two_var = 2.0 * sigma * sigma

    def weights(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        k = np.arange(lo, hi, dtype=np.float64)
        return k, np.exp(-(k * k) / two_var)

    if sigma >= _THETA_SIGMA:
        # Poisson summation: Σₖ e^{−k²/2σ²} = σ√(2π)·(1 + 2Σₘ e^{−2π²σ²m²}); from σ = 4 on
        # the correction is below e^{−315}, nothing beside 1 in a double (one pass fewer
        # over millions of outputs).
        z = sigma * math.sqrt(2.0 * math.pi)
    else:  # slice by slice (pairwise sums, then an exact sum of the slices')
        z = math.fsum(float(np.sum(weights(a, min(a + _SLICE, half + 1))[1]))
                      for a in range(-half, half + 1, _SLICE))
    # Outputs k < Δ − half have q(k) = 0 < p(k): loss +∞.
    stop_inf = min(sens - half, half + 1)
    inf_mass = math.fsum(float(np.sum(weights(a, min(a + _SLICE, stop_inf))[1]))
                         for a in range(-half, stop_inf, _SLICE)) / z
    pieces: list[_Pmf] = []
    for a in range(max(sens - half, -half), half + 1, _SLICE):
        k, w = weights(a, min(a + _SLICE, half + 1))
        losses = sens * (sens - 2.0 * k) / two_var
        pieces.append(_pmf_from_atoms(h, losses, w / z, 0.0, "connect-dots"))
    if not pieces:
        return PLD(_Pmf(h, 0, np.zeros(1), min(1.0, inf_mass * (1 + 1e-12))), None,
                   DEFAULT_TAIL_MASS_TRUNCATION)
    lo = min(p.offset for p in pieces)
    hi = max(p.offset + p.probs.size for p in pieces)
    probs = np.zeros(hi - lo)
    for p in pieces:
        probs[p.offset - lo:p.offset - lo + p.probs.size] += p.probs
    return PLD(_trim(_Pmf(h, lo, probs, inf_mass)), None, DEFAULT_TAIL_MASS_TRUNCATION)
