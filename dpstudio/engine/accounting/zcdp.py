"""Zero-concentrated differential privacy (Bun & Steinke 2016).

ρ-zCDP means D_α(M(D) ‖ M(D′)) ≤ ρα for every α > 1; ρ adds under composition.
"""

from __future__ import annotations

import math

from dpstudio.engine.calibration import validate_delta, validate_epsilon, validate_sensitivity
from dpstudio.engine.checks import non_negative, positive
from dpstudio.engine.errors import ParameterError

__all__ = ["ZCDP_CONVERSIONS", "zcdp_compose", "zcdp_from_pure", "zcdp_gaussian",
           "zcdp_to_epsilon"]

ZCDP_CONVERSIONS = ("cks", "simple")


def _rho(value: float) -> float:
    return non_negative("ρ", value)


def zcdp_gaussian(sigma: float, sensitivity: float = 1.0) -> float:
    """ρ = Δ²/(2σ²) of the Gaussian mechanism (Bun & Steinke 2016, Prop. 1.6).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    sensitivity : float
        ℓ₂ sensitivity Δ.

    Returns
    -------
    float
    """
    s = positive("σ", sigma)
    d = validate_sensitivity(sensitivity)
    return d * d / (2.0 * s * s)


def zcdp_from_pure(epsilon: float) -> float:
    """ρ = ε²/2 for an ε-DP mechanism (Bun & Steinke 2016, Prop. 1.4).

    Parameters
    ----------
    epsilon : float
        ε > 0 of the pure-DP mechanism.

    Returns
    -------
    float
        ρ.

    Raises
    ------
    ParameterError
        If ε is not finite and positive.
    """
    eps = validate_epsilon(epsilon)
    return 0.5 * eps * eps


def zcdp_compose(*rhos: float) -> float:
    """ρ of mechanisms run in sequence: Σρᵢ (Bun & Steinke 2016, Lemma 2.3).

    Parameters
    ----------
    *rhos : float
        Each ρᵢ ≥ 0.

    Returns
    -------
    float
    """
    if not rhos:
        raise ParameterError("zcdp_compose needs at least one ρ")
    return math.fsum(_rho(r) for r in rhos)


def _cks_epsilon(alpha: float, rho: float, log_inv_delta: float) -> float:
    # Canonne, Kamath & Steinke 2020, Cor. 13, at one order α > 1 (valid for every α).
    return (alpha * rho + (log_inv_delta + (alpha - 1) * math.log1p(-1 / alpha)
                           - math.log(alpha)) / (alpha - 1))


def zcdp_to_epsilon(rho: float, delta: float, method: str = "cks") -> float:
    """ε such that ρ-zCDP implies (ε, δ)-DP.

    Parameters
    ----------
    rho : float
        ρ ≥ 0.
    delta : float
        δ in (0, 1).
    method : {"cks", "simple"}
        "simple": ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3). "cks" (default):
        ε = inf_{α>1} αρ + (ln(1/δ) + (α−1) ln(1 − 1/α) − ln α)/(α − 1) (Canonne, Kamath &
        Steinke 2020, Cor. 13), never larger than "simple". The infimum is found
        numerically; the bound holds at whatever α is found, so the value returned is
        valid even if the search stops short of the optimum.

    Returns
    -------
    float
    """
    r = _rho(rho)
    d = validate_delta(delta, required=True)
    if method not in ZCDP_CONVERSIONS:
        raise ParameterError(f"method must be one of {', '.join(ZCDP_CONVERSIONS)}, "
                             f"got {method!r}")
    log_inv = -math.log(d)
    simple = r + 2.0 * math.sqrt(r * log_inv)
    if method == "simple" or r == 0:
        return simple
    # The optimum is near α = 1 + √(ln(1/δ)/ρ); search log(α − 1) around it.
    centre = math.log(math.sqrt(log_inv / r))
    from scipy.optimize import minimize_scalar  # here: ~0.2 s to import, for every command

    res = minimize_scalar(lambda t: _cks_epsilon(1.0 + math.exp(t), r, log_inv),
                          bounds=(centre - 12.0, centre + 12.0), method="bounded",
                          options={"xatol": 1e-10})
    best = _cks_epsilon(1.0 + math.exp(float(res.x)), r, log_inv)
    return max(min(best, simple), 0.0)
