"""Rényi differential privacy (Mironov 2017): curves ε(α) over a grid of orders α > 1.

A mechanism is (α, ε_α)-RDP when D_α(M(D) ‖ M(D′)) ≤ ε_α for neighbours D, D′. Curves of
mechanisms run in sequence add order by order; an RDP curve converts to (ε, δ)-DP by the
bound of Canonne, Kamath & Steinke 2020 (Prop. 12) / Balle et al. 2020, minimized over
the orders. Every order gives a valid (ε, δ), so the minimum over any grid is sound; a
finer grid only tightens it.
"""

from __future__ import annotations

import math

import numpy as np

from dpstudio.engine.calibration import validate_delta, validate_sensitivity
from dpstudio.engine.checks import positive
from dpstudio.engine.checks import sample_rate as _check_rate
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.special import gammaln, gammasgn, log_ndtr

__all__ = [
    "DEFAULT_ORDERS",
    "rdp_compose",
    "rdp_epsilon",
    "rdp_epsilon_and_order",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_subsampled_gaussian",
]

# The usual grid (TF Privacy, Opacus, dp_accounting): fine near 1, integers to 63, then
# powers of two.
DEFAULT_ORDERS = np.array(
    [1 + x / 10 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024],
    dtype=np.float64,
)
DEFAULT_ORDERS.setflags(write=False)

# Terms of the fractional-order series below e^{-30} (relative to A_α ≥ 1) end the sum.
_SERIES_CUTOFF = -30.0
_SERIES_MAX_TERMS = 1 << 22


def _orders(orders) -> np.ndarray:
    if orders is None:
        return DEFAULT_ORDERS
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or (a <= 1).any():
        raise ParameterError("RDP orders must be finite numbers greater than 1")
    return a


def rdp_gaussian(sigma: float, orders=None, sensitivity: float = 1.0) -> np.ndarray:
    """RDP of the Gaussian mechanism: ε(α) = αΔ²/(2σ²) (Mironov 2017, Prop. 7).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    orders : array_like, optional
        Orders α > 1 (default :data:`DEFAULT_ORDERS`).
    sensitivity : float
        ℓ₂ sensitivity Δ.

    Returns
    -------
    numpy.ndarray
        ε(α) for each order.
    """
    s = positive("σ", sigma)
    d = validate_sensitivity(sensitivity)
    return _orders(orders) * d * d / (2.0 * s * s)


def rdp_laplace(scale: float, orders=None, sensitivity: float = 1.0) -> np.ndarray:
    """RDP of the Laplace mechanism (Mironov 2017, Prop. 6), with λ = b/Δ:

    ε(α) = 1/(α−1) · ln( α/(2α−1) · e^{(α−1)/λ} + (α−1)/(2α−1) · e^{−α/λ} ),

    evaluated in log space (it tends to 1/λ, the pure-DP ε, as α → ∞).

    Parameters
    ----------
    scale : float
        Laplace scale b > 0.
    orders : array_like, optional
        Orders α > 1.
    sensitivity : float
        ℓ₁ sensitivity Δ.

    Returns
    -------
    numpy.ndarray
    """
    lam = positive("scale", scale) / validate_sensitivity(sensitivity)
    a = _orders(orders)
    first = np.log(a / (2 * a - 1)) + (a - 1) / lam
    second = np.log((a - 1) / (2 * a - 1)) - a / lam
    return np.logaddexp(first, second) / (a - 1)


def _log_a_integer(alpha: int, q: float, sigma: float) -> float:
    """ln A_α for integer α: A_α = Σ_{i=0}^{α} C(α,i) q^i (1−q)^{α−i} e^{(i²−i)/(2σ²)}
    (Mironov, Talwar & Zhang 2019, Sec. 3.2); every term is positive."""
    i = np.arange(alpha + 1, dtype=np.float64)
    log_terms = (gammaln(alpha + 1) - gammaln(i + 1) - gammaln(alpha - i + 1)
                 + i * math.log(q) + (alpha - i) * math.log1p(-q)
                 + (i * i - i) / (2 * sigma * sigma))
    top = float(log_terms.max())
    return top + math.log(float(np.exp(log_terms - top).sum()))


def _log_a_fractional(alpha: float, q: float, sigma: float) -> float:
    """ln A_α for fractional α (Mironov, Talwar & Zhang 2019, Sec. 3.3).

    A_α = Σ_{i≥0} C(α,i) [q^i (1−q)^{α−i} e^{(i²−i)/(2σ²)} Φ(−(i − z₀)/σ)
                         + q^{α−i} (1−q)^i e^{((α−i)²−(α−i))/(2σ²)} Φ(−(z₀ − (α−i))/σ)],
    z₀ = σ² ln(1/q − 1) + 1/2. Past i = α the binomials alternate in sign and the terms
    shrink like i^{−α−2}: the series is summed (vectorized, in growing blocks) until the
    terms fall below e^{−30}, and the first omitted term is added as the bound on the
    remainder of an alternating series, so A_α is not understated.
    """
    log_q, log_1mq = math.log(q), math.log1p(-q)
    z0 = sigma * sigma * (math.log(1 / q - 1)) + 0.5
    inv2s2 = 1.0 / (2 * sigma * sigma)
    log_pos, log_neg = -np.inf, -np.inf
    start, block = 0, 256
    while True:
        i = np.arange(start, start + block, dtype=np.float64)
        j = alpha - i
        log_coef = gammaln(alpha + 1) - gammaln(i + 1) - gammaln(j + 1)
        sign = gammasgn(j + 1)
        s0 = (log_coef + i * log_q + j * log_1mq + (i * i - i) * inv2s2
              + log_ndtr(-(i - z0) / sigma))
        s1 = (log_coef + j * log_q + i * log_1mq + (j * j - j) * inv2s2
              + log_ndtr(-(z0 - j) / sigma))
        term = np.logaddexp(s0, s1)
        small = (term < _SERIES_CUTOFF) & (i > alpha + 1)
        stop = int(np.argmax(small)) if small.any() else term.size
        pos = term[:stop][sign[:stop] > 0]
        neg = term[:stop][sign[:stop] < 0]
        if pos.size:
            log_pos = float(np.logaddexp(log_pos, np.logaddexp.reduce(pos)))
        if neg.size:
            log_neg = float(np.logaddexp(log_neg, np.logaddexp.reduce(neg)))
        if stop < term.size:
            log_pos = float(np.logaddexp(log_pos, term[stop]))  # remainder bound
            break
        start += block
        block *= 4
        if start > _SERIES_MAX_TERMS:
            return math.inf  # not converged: the order is unusable (never optimistic)
    if log_neg >= log_pos:
        return math.inf
    return log_pos + math.log1p(-math.exp(log_neg - log_pos))


def rdp_subsampled_gaussian(sigma: float, sample_rate: float, orders=None,
                            sensitivity: float = 1.0) -> np.ndarray:
    """RDP of the Poisson-subsampled Gaussian mechanism (one DP-SGD step), add/remove.

    ε(α) = ln A_α / (α − 1) with A_α from Mironov, Talwar & Zhang 2019 (exact binomial
    sum for integer α, the two-sided series for fractional α), all in log space.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0 (the noise multiplier is σ/Δ).
    sample_rate : float
        Poisson sampling probability q in (0, 1].
    orders : array_like, optional
        Orders α > 1.
    sensitivity : float
        ℓ₂ norm bound Δ of one record's contribution.

    Returns
    -------
    numpy.ndarray
    """
    s = positive("σ", sigma) / validate_sensitivity(sensitivity)
    q = _check_rate(sample_rate)
    a = _orders(orders)
    if q == 1.0:
        return a / (2.0 * s * s)
    out = np.empty(a.size)
    for n, alpha in enumerate(a):  # one vectorized sum per order
        if float(alpha).is_integer():
            log_a = _log_a_integer(int(alpha), q, s)
        else:
            log_a = _log_a_fractional(float(alpha), q, s)
        out[n] = log_a / (alpha - 1)
    return out


def rdp_compose(*curves) -> np.ndarray:
    """RDP of mechanisms run in sequence: the curves (on the same orders) add.

    Parameters
    ----------
    *curves : array_like
        ε(α) arrays of equal length. To compose one curve k times, multiply it by k.

    Returns
    -------
    numpy.ndarray
    """
    if not curves:
        raise ParameterError("rdp_compose needs at least one curve")
    arrays = [np.asarray(c, dtype=np.float64) for c in curves]
    if len({c.shape for c in arrays}) != 1:
        raise ParameterError("RDP curves must be given on the same orders")
    return np.sum(arrays, axis=0)


def rdp_epsilon_and_order(rdp, delta: float, orders=None) -> tuple[float, float]:
    """(ε, α*) for (ε, δ)-DP from an RDP curve, minimized over the orders.

    ε = min_α [ ε_α − (ln δ + ln α)/(α − 1) + ln((α − 1)/α) ]
    (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21), which is
    never worse than the classical ε_α + ln(1/δ)/(α − 1).

    Parameters
    ----------
    rdp : array_like
        ε(α) on ``orders``.
    delta : float
        Target δ in (0, 1).
    orders : array_like, optional
        The orders of ``rdp`` (default :data:`DEFAULT_ORDERS`).

    Returns
    -------
    (float, float)
        ε ≥ 0 and the order attaining it.
    """
    d = validate_delta(delta, required=True)
    a = _orders(orders)
    r = np.asarray(rdp, dtype=np.float64)
    if r.shape != a.shape:
        raise ParameterError("the RDP curve and its orders differ in length")
    if np.isnan(r).any() or (r < 0).any():
        raise ParameterError("RDP values must be ≥ 0")
    eps = r - (math.log(d) + np.log(a)) / (a - 1) + np.log((a - 1) / a)
    best = int(np.argmin(eps))
    return max(float(eps[best]), 0.0), float(a[best])


def rdp_epsilon(rdp, delta: float, orders=None) -> float:
    """ε for (ε, δ)-DP from an RDP curve; see :func:`rdp_epsilon_and_order`.

    Parameters
    ----------
    rdp : array_like
        ε(α) on ``orders``.
    delta : float
        Target δ in (0, 1).
    orders : array_like, optional
        The orders of ``rdp`` (default :data:`DEFAULT_ORDERS`).

    Returns
    -------
    float
        ε ≥ 0.

    Raises
    ------
    ParameterError
        As :func:`rdp_epsilon_and_order`.
    """
    return rdp_epsilon_and_order(rdp, delta, orders)[0]
