"""The symmetric Skellam law and the exact privacy of adding it to an integer statistic.

Sk(v) = Pois(v/2) − Pois(v/2) has pmf P(k) = e^{−v} I_|k|(v) (modified Bessel function;
``scipy.special.ive``) and is log-concave, so δ(ε) = Σ_k max(0, P(k) − e^ε P(k − Δ)) is
summed on a window around 0 whose outside mass, bounded by the Chernoff bound
P(X ≥ t) ≤ exp(v(cosh λ − 1) − λt) at λ = asinh(t/v), is added in full: every δ here is
an upper bound, computed exactly rather than through the RDP bound of Agarwal, Kairouz &
Liu 2021. :func:`skellam_variance` inverts it: the smallest variance meeting (ε, δ).

The distributed shares that add up to such a law are planned in
:mod:`~dpstudio.engine.distributed.noise`, which re-exports these functions.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpstudio.engine import special
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.errors import ParameterError

__all__ = [
    "MAX_SKELLAM_VARIANCE",
    "skellam_delta",
    "skellam_delta_full",
    "skellam_pmf",
    "skellam_tail_bound",
    "skellam_variance",
]

# Window of the exact Skellam δ: outside mass below this (added to δ in full).
_SKELLAM_WINDOW_TAIL = 1e-40
# Relative allowance for floating-point error in the Skellam δ sums (Bessel values carry
# relative errors of a few 1e-16; the sum of positive terms adds a few ulps).
_FP_REL = 1e-12
#: Largest Skellam variance whose pmf scipy evaluates (ive returns NaN past ~1e9).
MAX_SKELLAM_VARIANCE = 1e9


def skellam_pmf(k, variance: float) -> np.ndarray:
    """pmf of the symmetric Skellam law of the given variance: e^{−v} I_|k|(v).

    Parameters
    ----------
    k : array_like of int
        Points of the support.
    variance : float
        v, the law's variance (the difference of two Pois(v/2)).

    Returns
    -------
    numpy.ndarray
        P(X = k), of the shape of ``k``.
    """
    return special.ive(np.abs(np.asarray(k, dtype=np.float64)), float(variance))


def skellam_tail_bound(t, variance: float):
    """Chernoff bound on P(X ≥ t) (= P(X ≤ −t)) for the symmetric Skellam of variance v.

    exp(√(v² + t²) − v − t·asinh(t/v)), the Chernoff bound at its best λ = asinh(t/v).

    Parameters
    ----------
    t : float or array_like
        Thresholds, ≥ 0.
    variance : float
        v > 0.

    Returns
    -------
    float or numpy.ndarray
        The bound at each threshold, at most 1.
    """
    v = float(variance)
    tt = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore"):
        out = np.exp(np.sqrt(v * v + tt * tt) - v - tt * np.arcsinh(tt / v))
    return np.where(tt <= 0, 1.0, np.minimum(out, 1.0))


def _skellam_window(variance: float, sensitivity: int,
                    tail: float = _SKELLAM_WINDOW_TAIL) -> int:
    """W with P(|X| > W − Δ) ≤ ``tail`` (1e-40 unless told) by the Chernoff bound."""
    if not 0 < variance <= MAX_SKELLAM_VARIANCE:
        raise ParameterError(
            f"Skellam noise of variance {variance:.3g} grid steps² is beyond what this "
            f"implementation evaluates ({MAX_SKELLAM_VARIANCE:g}); use fewer precision bits")
    # Start from the Gaussian tail's width and widen by 10% until the bound holds.
    w = max(int(math.ceil(math.sqrt(2.0 * variance * math.log(2.0 / tail)) + 20)), 1)
    while 2.0 * float(skellam_tail_bound(w, variance)) > tail:
        w = int(math.ceil(1.1 * w)) + 1
    return w + int(sensitivity)


def skellam_delta(variance: float, sensitivity: int, epsilon: float,
                  tail: float = _SKELLAM_WINDOW_TAIL) -> float:
    """Exact δ(ε) of adding symmetric Skellam noise of variance v to an integer statistic
    with integer sensitivity Δ (an upper bound: the mass outside the window is added).

    The privacy loss L(k) = ln P(k) − ln P(k − Δ) decreases in k (log-concavity), so only
    k below the point where it crosses ε contribute; the window stops there. The window
    starts where the Chernoff bound puts at most ``tail`` of the mass outside it, which
    is added to δ in full (a wider window only tightens the bound).

    Parameters
    ----------
    variance : float
        v, the total noise variance (grid steps²).
    sensitivity : int
        Δ, in grid steps.
    epsilon : float
        ε at which δ is read.
    tail : float
        Mass left outside the summed window (added in full).

    Returns
    -------
    float
        δ(ε), in [0, 1].

    Raises
    ------
    ParameterError
        For a variance outside (0, :data:`MAX_SKELLAM_VARIANCE`].
    """
    v, sens, eps = float(variance), int(sensitivity), float(epsilon)
    w = _skellam_window(v, sens, tail)
    # L(k) ≈ Δ(Δ − 2k)/(2v) for a near-Gaussian law: contributions stop near
    # k* = Δ/2 − εv/Δ; keep a margin past it. If the loss is still above ε at the stop,
    # the full window is summed instead, so the margin only matters for speed.
    stop = min(w, int(math.ceil(sens / 2.0 - eps * v / sens + 2.0 * math.sqrt(v)
                                + 2 * sens + 16)))
    k = np.arange(-w - sens, stop + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logpmf = np.log(skellam_pmf(k, v))
    logp, logq = logpmf[sens:], logpmf[:-sens] if sens else logpmf
    ok = np.isfinite(logp) & np.isfinite(logq)
    gap = -np.expm1(np.minimum(eps - (logp[ok] - logq[ok]), 0.0))
    inside = float(np.sum(np.exp(logp[ok]) * gap))
    if stop < w and gap.size and gap[-1] > 0:  # the loss was still above ε at the stop
        return skellam_delta_full(v, sens, eps, tail)
    # Mass of P outside the window and wherever the pmf underflowed (both tiny).
    lost = 2.0 * float(skellam_tail_bound(w - sens, v)) + float(np.sum(np.exp(logp[~ok])))
    return min(1.0, (inside + lost) * (1.0 + _FP_REL) + 1e-300)


def skellam_delta_full(variance: float, sensitivity: int, epsilon: float,
                       tail: float = _SKELLAM_WINDOW_TAIL) -> float:
    """:func:`skellam_delta` summed over the whole window (no early stop).

    Parameters
    ----------
    variance : float
        v, the total noise variance (grid steps²).
    sensitivity : int
        Δ, in grid steps.
    epsilon : float
        ε at which δ is read.
    tail : float
        Mass left outside the summed window (added in full).

    Returns
    -------
    float
        δ(ε), in [0, 1].

    Raises
    ------
    ParameterError
        For a variance outside (0, :data:`MAX_SKELLAM_VARIANCE`].
    """
    v, sens, eps = float(variance), int(sensitivity), float(epsilon)
    w = _skellam_window(v, sens, tail)
    k = np.arange(-w - sens, w + sens + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logpmf = np.log(skellam_pmf(k, v))
    logp, logq = logpmf[sens:], logpmf[:-sens] if sens else logpmf
    ok = np.isfinite(logp) & np.isfinite(logq)
    gap = -np.expm1(np.minimum(eps - (logp[ok] - logq[ok]), 0.0))
    inside = float(np.sum(np.exp(logp[ok]) * gap))
    lost = 2.0 * float(skellam_tail_bound(w - sens, v)) + float(np.sum(np.exp(logp[~ok])))
    return min(1.0, (inside + lost) * (1.0 + _FP_REL) + 1e-300)


# Relative width of the bracket skellam_variance returns the upper end of.
_VARIANCE_REL = 1e-7


@functools.lru_cache(maxsize=256)
def skellam_variance(sensitivity: int, epsilon: float, delta: float) -> float:
    """Smallest total Skellam variance (to 1e-7 relative) meeting (ε, δ) for sensitivity Δ.

    Returns the upper end hi of a bracket [lo, hi], hi − lo ≤ 1e-7·hi, with
    δ(hi) ≤ δ < δ(lo) by :func:`skellam_delta` (decreasing in v). The bracket is found by
    secant steps on ln δ against ln v from the analytic Gaussian σ² (ln δ is smooth and
    nearly linear there: about five evaluations), then checked on both sides; bisection
    takes over if the secant steps do not close it. δ is evaluated on a window whose
    outside mass is at most min(10⁻¹⁰, 10⁻⁹δ) (added in full, so every value is still an
    upper bound, and v moves by ~10⁻¹⁰ relative).

    Parameters
    ----------
    sensitivity : int
        Δ of the integer statistic, ≥ 1.
    epsilon, delta : float
        The guarantee; δ > 0.

    Returns
    -------
    float
        The total variance v (grid steps²).

    Raises
    ------
    ParameterError
        For a bad ε, δ or sensitivity, or when the variance needed exceeds
        :data:`MAX_SKELLAM_VARIANCE`.
    """
    from dpstudio.engine.calibration import analytic_gaussian_sigma

    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, required=True)
    sens = int(sensitivity)
    if sens < 1:
        raise ParameterError("the statistic's sensitivity must be at least one grid step")
    tail = min(1e-10, 1e-9 * d)
    lo, hi = 0.0, math.inf  # δ(lo) > d ≥ δ(hi), as far as evaluated

    def excess(v: float) -> float:
        """ln δ(v) − ln d, recording v on its side of the bracket."""
        nonlocal lo, hi
        if v > MAX_SKELLAM_VARIANCE:
            _skellam_window(v, sens)  # raises the one-line error
        f = math.log(skellam_delta(v, sens, eps, tail)) - math.log(d)
        if f <= 0:
            hi = min(hi, v)
        else:
            lo = max(lo, v)
        return f

    def closed() -> bool:
        return hi < math.inf and hi - lo <= _VARIANCE_REL * hi

    guess = max(analytic_gaussian_sigma(sens, eps, d) ** 2, 1e-2)
    x0, f0 = math.log(guess), excess(guess)
    x1 = x0 + (1e-3 if f0 > 0 else -1e-3)  # the two laws are close once v ≫ 1
    f1 = excess(math.exp(x1))
    for _ in range(8):
        if closed() or f1 == f0 or not (math.isfinite(f0) and math.isfinite(f1)):
            break
        step = -f1 * (x1 - x0) / (f1 - f0)
        step = max(-0.5, min(0.5, step))  # a secant step never more than ×e^±0.5
        x0, f0 = x1, f1
        x1 = x1 + step
        if abs(step) < 0.25 * _VARIANCE_REL and hi < math.inf and lo > 0:
            # At the root to ~1e-8: evaluate just past it on the side still open.
            v = math.exp(x1)
            excess(v * (1 + 0.4 * _VARIANCE_REL) if hi - v > v * 0.4 * _VARIANCE_REL
                   else v * (1 - 0.4 * _VARIANCE_REL))
            if closed():
                break
        f1 = excess(math.exp(x1))
    # Bisection from whatever bracket the secant steps left (widened if one side is open).
    if hi == math.inf:
        hi = max(lo, guess) * 1.25
        while excess(hi) > 0:
            hi *= 1.25
    if lo == 0.0:
        lo = hi / 1.25
        while lo > 1e-6 and excess(lo) <= 0:
            lo /= 1.25
    while not closed():
        excess(0.5 * (lo + hi))
    return hi
