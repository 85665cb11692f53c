"""Composition theorems for k mechanisms that are each (ε, δ)-DP.

basic: (Σεᵢ, Σδᵢ). advanced: Dwork, Rothblum & Vadhan 2010. optimal: Kairouz, Oh &
Viswanath 2015 — the exact privacy region of k-fold (adaptive) composition of (ε, δ)-DP
mechanisms, which no other bound in terms of (ε, δ) alone can beat. Results are rounded
up: sums exactly (rational arithmetic, then to the float at or above), closed forms by a
relative 2⁻⁴⁰ margin over their floating-point evaluation error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from dpstudio.engine.accounting import budget
from dpstudio.engine.calibration import validate_delta
from dpstudio.engine.checks import count, non_negative
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.special import gammaln

__all__ = [
    "advanced_composition",
    "basic_composition",
    "optimal_composition",
    "optimal_composition_delta",
]

# Exact integer binomials up to this k (O(k) big-integer steps); above, log-gamma (~1e-13).
_EXACT_BINOMIALS = 10_000
_MARGIN = 2.0 ** -40


def _up(x: float) -> float:
    """``x`` raised by a relative margin covering its floating-point evaluation."""
    return x + abs(x) * _MARGIN


def _sum_up(values: Iterable[float]) -> float:
    """The smallest float ≥ the exact sum of ``values`` read as typed (see
    :func:`dpstudio.engine.accounting.budget.exact`): ten 0.1s make exactly 1.0."""
    exact = sum((Fraction(budget.exact(v)) for v in values), Fraction(0))
    s = float(exact)
    return s if Fraction(s) >= exact else float(np.nextafter(s, math.inf))


def _eps(value: float, name: str = "ε") -> float:
    return non_negative(name, value)


def basic_composition(epsilons: Iterable[float], deltas: Iterable[float] | None = None
                      ) -> tuple[float, float]:
    """(Σεᵢ, Σδᵢ) for mechanisms that are (εᵢ, δᵢ)-DP (Dwork, McSherry, Nissim & Smith
    2006; Dwork & Lei 2009), summed exactly as typed (decimal) and rounded up to a float.

    Parameters
    ----------
    epsilons : iterable of float
        Each εᵢ ≥ 0.
    deltas : iterable of float, optional
        Each δᵢ in [0, 1); default all 0.

    Returns
    -------
    (float, float)
    """
    eps = [_eps(e) for e in epsilons]
    if not eps:
        raise ParameterError("basic composition needs at least one mechanism")
    dels = [0.0] * len(eps) if deltas is None else [validate_delta(d) for d in deltas]
    if len(dels) != len(eps):
        raise ParameterError("give one δ per ε")
    return _sum_up(eps), min(_sum_up(dels), 1.0)


def advanced_composition(epsilon: float, delta: float, k: int, delta_slack: float
                         ) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20).

    k adaptively chosen (ε, δ)-DP mechanisms are (ε′, kδ + δ′)-DP with
    ε′ = ε√(2k ln(1/δ′)) + kε(e^ε − 1).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 of each mechanism.
    delta : float
        δ in [0, 1) of each mechanism.
    k : int
        Number of mechanisms, ≥ 1.
    delta_slack : float
        δ′ in (0, 1).

    Returns
    -------
    (float, float)
        (ε′, kδ + δ′).
    """
    e = _eps(epsilon)
    d = validate_delta(delta)
    kk = count("k", k)
    slack = validate_delta(delta_slack, required=True)
    eps_total = e * math.sqrt(2 * kk * math.log(1 / slack)) + kk * e * math.expm1(e)
    return _up(eps_total), min(_sum_up([d] * kk + [slack]), 1.0)


def _log_binomials(k: int) -> np.ndarray:
    """ln C(k, l) for l = 0..k: logs of exact integers up to :data:`_EXACT_BINOMIALS`."""
    if k > _EXACT_BINOMIALS:
        ell = np.arange(k + 1, dtype=np.float64)
        return gammaln(k + 1) - gammaln(ell + 1) - gammaln(k - ell + 1)
    half = [0.0] * (k // 2 + 1)
    c = 1
    for ell in range(k // 2):
        c = c * (k - ell) // (ell + 1)
        half[ell + 1] = math.log(c)
    out = np.empty(k + 1)
    out[: k // 2 + 1] = half
    out[k - k // 2:] = half[::-1]
    return out


class _KOV:
    """δ(ε_g) of the k-fold composition of the worst (ε, δ) pair (Kairouz, Oh & Viswanath
    2015): loss +∞ w.p. δ, else ±ε with odds e^ε : 1; after k runs the loss is (k − 2l)ε
    with probability (1 − δ)^k C(k, l) e^{(k−l)ε}/(1 + e^ε)^k, so

    δ(ε_g) = 1 − (1 − δ)^k + (1 − δ)^k Σ_{l: (k−2l)ε > ε_g} C(k,l)
             (e^{(k−l)ε} − e^{ε_g + lε}) / (1 + e^ε)^k,

    summed in log space from the exact binomials (Thm 3.3 is this at ε_g = (k − 2i)ε).
    """

    def __init__(self, epsilon: float, delta: float, k: int):
        self.eps, self.k = epsilon, k
        self.base = -math.expm1(k * math.log1p(-delta))
        self.log_w = k * math.log1p(-delta)
        ell = np.arange(k + 1, dtype=np.float64)
        self.loss = (k - 2 * ell) * epsilon
        self.log_mass = (_log_binomials(k) + (k - ell) * epsilon
                         - k * float(np.logaddexp(0.0, epsilon)))

    def delta(self, eps_g: float) -> float:
        active = self.loss > eps_g
        if not active.any():
            return self.base
        with np.errstate(divide="ignore"):
            terms = self.log_mass[active] + np.log(-np.expm1(eps_g - self.loss[active]))
        top = float(terms.max())
        log_sum = top + math.log(float(np.exp(terms - top).sum()))
        return min(_up(self.base + math.exp(self.log_w + log_sum)), 1.0)


def optimal_composition_delta(epsilon: float, delta: float, k: int, epsilon_total: float
                              ) -> float:
    """Smallest δ_total such that every k-fold composition of (ε, δ)-DP mechanisms is
    (ε_total, δ_total)-DP (Kairouz, Oh & Viswanath 2015, Thm 3.3, at any ε_total).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 of each mechanism.
    delta : float
        δ in [0, 1) of each mechanism.
    k : int
        Number of mechanisms, ≥ 1.
    epsilon_total : float
        ε_total ≥ 0.

    Returns
    -------
    float
    """
    return _KOV(_eps(epsilon), validate_delta(delta), count("k", k)).delta(
        _eps(epsilon_total, "ε_total"))


def optimal_composition(epsilon: float, delta: float, k: int, delta_total: float
                        ) -> tuple[float, float]:
    """Smallest ε_total such that k-fold composition of (ε, δ)-DP mechanisms is
    (ε_total, δ_total)-DP: the optimal composition theorem (Kairouz, Oh & Viswanath 2015).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 of each mechanism.
    delta : float
        δ in [0, 1) of each mechanism.
    k : int
        Number of mechanisms, ≥ 1.
    delta_total : float
        δ_total in [1 − (1 − δ)^k, 1).

    Returns
    -------
    (float, float)
        (ε_total, δ_total); for k = 1 and δ_total = δ this is (ε, δ).
    """
    kov = _KOV(_eps(epsilon), validate_delta(delta), count("k", k))
    target = validate_delta(delta_total)
    if target < kov.base:
        raise ParameterError(f"δ_total must be at least 1 − (1 − δ)^k = {kov.base:.6g}")
    if kov.delta(0.0) <= target:
        return 0.0, target
    # δ rises through the breakpoints (k − 2i)ε as i grows: find the last one that meets
    # the target (i = 0, ε_g = kε, always does), then the root just below it.
    i_max = (kov.k - 1) // 2  # the breakpoints > 0
    lo_i, hi_i = 0, i_max + 1
    while hi_i - lo_i > 1:
        mid = (lo_i + hi_i) // 2
        if kov.delta((kov.k - 2 * mid) * kov.eps) <= target:
            lo_i = mid
        else:
            hi_i = mid
    right = (kov.k - 2 * lo_i) * kov.eps
    left = max((kov.k - 2 * lo_i - 2) * kov.eps, 0.0)
    if kov.delta(right) <= target < kov.delta(left):
        from scipy.optimize import brentq  # here: importing it costs every command ~0.2 s

        eps_total = brentq(lambda x: kov.delta(x) - target, left, right, xtol=1e-14,
                           rtol=1e-15, maxiter=500)
    else:
        eps_total = right
    step = max(eps_total, 1e-300) * 4e-16
    while kov.delta(eps_total) > target:  # land on the private side of the root
        eps_total += step
        step *= 2.0
    return float(eps_total), target
