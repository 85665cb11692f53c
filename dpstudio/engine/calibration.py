"""Noise calibration: the scale each additive mechanism needs for a target (ε, δ).

Every function here answers the question "how much noise?" from the privacy side; the
samplers in :mod:`dpstudio.engine.sampling` answer "how to draw it". Calibrations that
need a numerical search return the *upper* end of the bracket, so the guarantee claimed
is never better than the one computed.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from dpstudio.engine.checks import number, positive
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.special import log_ndtr

__all__ = [
    "analytic_gaussian_delta",
    "analytic_gaussian_sigma",
    "check_budget_use",
    "classical_gaussian_sigma",
    "discrete_gaussian_delta",
    "discrete_gaussian_sigma",
    "laplace_scale",
    "refuse_unused_delta",
    "validate_epsilon",
    "validate_delta",
    "validate_sensitivity",
]


def validate_epsilon(epsilon: float) -> float:
    """ε as a float, checked by the engine's one range validator
    (:func:`dpstudio.engine.checks.number`, as ``Param.validate`` is).

    Parameters
    ----------
    epsilon : float
        The privacy-loss bound; any finite ε > 0 (the forms' cap of 100 is
        :data:`dpstudio.engine.entry.EPSILON`'s, not the engine's).

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        Unless 0 < ε < ∞ (one line).
    """
    return positive("ε", epsilon)


def validate_delta(delta: float, *, required: bool = False) -> float:
    """δ as a float, checked by the engine's one range validator
    (:func:`dpstudio.engine.checks.number`).

    Parameters
    ----------
    delta : float
        The probability that the ε bound may fail: 0 ≤ δ < 1.
    required : bool
        The mechanism needs δ > 0 (Gaussian noise).

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        Unless 0 ≤ δ < 1, or when δ = 0 and ``required`` (one line).
    """
    d = number("δ", delta, low=0.0, high=1.0, high_open=True)
    if required and d == 0:
        raise ParameterError("this mechanism needs δ > 0 (e.g. --delta 1e-6)")
    return d


def refuse_unused_delta(mechanism: str, delta: float, takes_delta: bool) -> None:
    """Refuse a δ > 0 offered to a mechanism that takes none (pure ε-DP).

    Accepting it silently would make the release say δ = 0 in one place and the split
    δ in another (and a ledger could charge a δ that bought nothing): one clear line
    instead.

    Parameters
    ----------
    mechanism : the mechanism's registry name, for the message.
    delta : the δ offered (already validated as a number in [0, 1)).
    takes_delta : whether the mechanism has a δ parameter.

    Raises
    ------
    ParameterError
        When ``delta > 0`` and the mechanism takes no δ.
    """
    if not takes_delta and float(delta) > 0:
        raise ParameterError(f"{mechanism} is pure ε-DP: drop --delta (it uses no δ, "
                             f"got δ = {float(delta):g})")


#: Smallest ε a central release accepts. Below about 1e-12 the noise of a statistic one
#: grid step wide exceeds the 10^12 grid steps the exact samplers draw (int64 noise), and
#: the release would end in a crash; 1e-9 keeps a margin for Gaussian factors and δ.
MIN_RELEASE_EPSILON = 1e-9


def check_budget_use(info: Any, epsilon: float, delta: float) -> None:
    """The (ε, δ) checks of a central release beyond their ranges: ε large enough for the
    exact samplers, and no δ offered to a pure mechanism (:func:`refuse_unused_delta`).

    Parameters
    ----------
    info : the mechanism's registry entry (its ``name`` and ``params`` are read).
    epsilon, delta : the budget the release is asked to spend.

    Raises
    ------
    ParameterError
        With a one-line message.
    """
    eps = validate_epsilon(epsilon)
    if eps < MIN_RELEASE_EPSILON:
        raise ParameterError(f"ε = {eps:g} is too small to release with exact noise "
                             f"(use ε ≥ {MIN_RELEASE_EPSILON:g})")
    refuse_unused_delta(info.name, delta, any(p.name == "delta" for p in info.params))


def validate_sensitivity(sensitivity: float) -> float:
    """Return Δ as a float, or raise unless 0 < Δ < ∞.

    Parameters
    ----------
    sensitivity : float
        The query's sensitivity Δ, in the units of its values.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        Unless 0 < Δ < ∞ (one line).
    """
    return positive("sensitivity", sensitivity)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Laplace scale b = Δ₁/ε for ε-DP (Dwork, McSherry, Nissim & Smith 2006).

    Parameters
    ----------
    sensitivity : float
        ℓ₁ sensitivity Δ₁ > 0, in the units of the values.
    epsilon : float
        ε > 0.

    Returns
    -------
    float
        The scale b, in the units of the values.

    Raises
    ------
    ParameterError
        If Δ₁ or ε is not finite and positive.
    """
    return validate_sensitivity(sensitivity) / validate_epsilon(epsilon)


def classical_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Classical Gaussian calibration σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1).

    The theorem holds only for ε < 1; larger ε raises :class:`ParameterError`
    (use :func:`analytic_gaussian_sigma`, valid for every ε).

    Parameters
    ----------
    sensitivity : float
        ℓ₂ sensitivity Δ₂ > 0, in the units of the values.
    epsilon : float
        0 < ε < 1.
    delta : float
        0 < δ < 1.

    Returns
    -------
    float
        σ, in the units of the values.

    Raises
    ------
    ParameterError
        If Δ₂ or ε is not finite and positive, δ is outside (0, 1), or ε ≥ 1.
    """
    sens = validate_sensitivity(sensitivity)
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, required=True)
    if eps >= 1:
        raise ParameterError(
            f"the classical Gaussian calibration holds only for ε < 1 (got ε = {eps:g}); "
            "use the analytic calibration"
        )
    return sens * math.sqrt(2.0 * math.log(1.25 / d)) / eps


def analytic_gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism with noise σ and ℓ₂ sensitivity Δ.

    Balle & Wang 2018, Theorem 8:
    δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ), evaluated in log space so that tiny δ
    and large ε keep their precision.

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0, in the units of the values.
    sensitivity : float
        ℓ₂ sensitivity Δ > 0, same units.
    epsilon : float
        ε ≥ 0.

    Returns
    -------
    float
        δ(ε) in [0, 1] (clipped at 0 against rounding). The arguments are not validated.
    """
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = np.exp(log_ndtr(a - b))
    second = np.exp(epsilon + log_ndtr(-a - b))
    return float(max(first - second, 0.0))


def _bisect_sigma(delta_of_sigma, target: float, guess: float, rel_tol: float = 1e-12) -> float:
    """Smallest σ (to ``rel_tol``) with ``delta_of_sigma(σ) ≤ target``; δ decreasing in σ.

    Returns the upper end of the final bracket, which satisfies the condition.
    """
    lo = hi = guess
    while delta_of_sigma(hi) > target:
        lo, hi = hi, hi * 2.0
    while delta_of_sigma(lo) <= target:
        lo, hi = lo / 2.0, lo
        if lo < 1e-300:
            return hi
    while hi - lo > rel_tol * hi:
        mid = 0.5 * (lo + hi)
        if delta_of_sigma(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ with (ε, δ)-DP for ℓ₂ sensitivity Δ, any ε > 0 (Balle & Wang 2018).

    Found by bisection on :func:`analytic_gaussian_delta` to 1e-12 relative; the value
    returned is on the private side of the bracket.

    Parameters
    ----------
    sensitivity : float
        ℓ₂ sensitivity Δ > 0, in the units of the values.
    epsilon : float
        ε > 0.
    delta : float
        0 < δ < 1.

    Returns
    -------
    float
        σ, in the units of the values, with ``analytic_gaussian_delta(σ, Δ, ε) <= δ``.

    Raises
    ------
    ParameterError
        If Δ or ε is not finite and positive, or δ is outside (0, 1).
    """
    sens = validate_sensitivity(sensitivity)
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, required=True)
    guess = sens * math.sqrt(2.0 * math.log(1.25 / d)) / eps
    return _bisect_sigma(lambda s: analytic_gaussian_delta(s, sens, eps), d, guess)


def _discrete_gaussian_pmf_table(sigma: float, half_width: int) -> np.ndarray:
    """Normalized pmf of N_Z(0, σ²) on −half_width..half_width (mass outside < 1e-30)."""
    k = np.arange(-half_width, half_width + 1, dtype=np.float64)
    w = np.exp(-(k * k) / (2.0 * sigma * sigma))
    return w / w.sum()


def discrete_gaussian_delta(
    sigma: float, sensitivity: int, epsilon: float, coordinates: int = 1
) -> float:
    """Exact δ(ε) of discrete Gaussian noise N_Z(0, σ²) on an integer-valued query.

    Neighbouring outputs differ by ``sensitivity`` (an integer) in each of ``coordinates``
    independent coordinates (1 for a scalar or an add/remove histogram, 2 for a histogram
    under replace-one, where one count rises and another falls). δ is computed as
    Σ_y max(0, P(y) − e^ε Q(y)) over the privacy-loss distribution (Canonne, Kamath &
    Steinke 2020, Thm 7, generalized by convolution), on a window of ±12σ per coordinate
    where the neglected mass is below 1e-30.

    Parameters
    ----------
    sigma : float
        The discrete Gaussian's scale σ > 0, in integer steps.
    sensitivity : int
        Integer shift Δ ≥ 1 of each changing coordinate, in integer steps.
    epsilon : float
        ε ≥ 0 (not validated).
    coordinates : int, optional
        1 or 2 coordinates changing between neighbours.

    Returns
    -------
    float
        δ(ε).

    Raises
    ------
    ParameterError
        If Δ < 1 or ``coordinates`` is not 1 or 2.
    """
    sens = int(sensitivity)
    if sens < 1 or coordinates not in (1, 2):
        raise ParameterError("discrete Gaussian: sensitivity ≥ 1 and 1 or 2 coordinates")
    # Loss of output y (noise k = y): ln P(k)/Q(k) with Q shifted by Δ per coordinate is
    # (Δ² − 2kΔ)/(2σ²) per coordinate; for two coordinates shifted by +Δ and −Δ it depends
    # on s = k₁ − k₂ only, whose pmf is the self-convolution of the symmetric pmf.
    if coordinates == 1:
        half = int(math.ceil(12.0 * sigma)) + sens + 1
        pmf = _discrete_gaussian_pmf_table(sigma, half)
    elif sigma < 50.0:
        half1 = int(math.ceil(12.0 * sigma)) + sens + 1
        pmf1 = _discrete_gaussian_pmf_table(sigma, half1)
        pmf, half = np.convolve(pmf1, pmf1), 2 * half1
    else:
        # Poisson summation: the pmf of k₁ − k₂ is N_Z(0, 2σ²) times a factor that varies
        # by less than 4·e^{−π²σ²} (< 1e-300 here), so the convolution is not needed.
        half = int(math.ceil(12.0 * math.sqrt(2.0) * sigma)) + sens + 1
        pmf = _discrete_gaussian_pmf_table(math.sqrt(2.0) * sigma, half)
    s = np.arange(-half, half + 1, dtype=np.float64)
    loss = coordinates * sens * sens / (2.0 * sigma * sigma) - sens * s / (sigma * sigma)
    gap = -np.expm1(np.minimum(epsilon - loss, 0.0))  # 1 − e^{ε−L} where L > ε, else 0
    return float(np.sum(pmf * gap))


@functools.lru_cache(maxsize=256)
def discrete_gaussian_sigma(
    sensitivity: int, epsilon: float, delta: float, coordinates: int = 1,
    at_least: float = 0.0,
) -> float:
    """σ ≥ ``at_least`` whose discrete Gaussian meets (ε, δ), within 1e-9 of the smallest
    such σ above the continuous analytic one (which is returned when it suffices).

    Starts from the continuous analytic σ, to which the discrete one is very close once
    σ ≳ 1 (Canonne, Kamath & Steinke 2020, Fig. 1), so the bracket is found in a few
    steps of growing size; cached because releases repeat the same calibration.

    Parameters
    ----------
    sensitivity : int
        Integer shift Δ ≥ 1 per changing coordinate, in integer steps.
    epsilon : float
        ε > 0.
    delta : float
        0 < δ < 1.
    coordinates : int, optional
        1 or 2 coordinates changing between neighbours (see
        :func:`discrete_gaussian_delta`).
    at_least : float, optional
        A floor on σ, e.g. the continuous calibration already chosen.

    Returns
    -------
    float
        σ in integer steps with ``discrete_gaussian_delta(σ, Δ, ε, coordinates) <= δ``.

    Raises
    ------
    ParameterError
        If ε is not finite and positive, δ is outside (0, 1), Δ < 1, or ``coordinates``
        is not 1 or 2.
    """
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, required=True)
    l2 = float(sensitivity) * math.sqrt(coordinates)
    start = max(analytic_gaussian_sigma(l2, eps, d), at_least, 1e-3)

    def meets(s: float) -> bool:
        return discrete_gaussian_delta(s, sensitivity, eps, coordinates) <= d

    if meets(start):
        return float(start)
    step = 1e-7
    while not meets(start * (1 + step)):
        step *= 8
    lo, hi = start * (1 + step / 8), start * (1 + step)
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return hi
