"""Privacy-loss descriptions of the shuffle and secure-aggregation sums.

A ledger stores, per release, what was drawn (:mod:`~dpstudio.engine.accounting.loss`).
The two sum protocols are described here, each never below the (ε, δ) its engine result
states (what basic composition charges):

* **Secure aggregation, discrete Gaussian shares** (``secagg_gaussian``). The server,
  colluding with up to ⌊γn⌋ clients, sees the sum with the shares of the H honest clients
  sure to survive the declared dropouts (``honest_clients``): the noise it cannot remove
  is the sum of H shares N_Z(0, σ_c²). That sum is not a discrete Gaussian, but its pmf is
  within a factor e^{±τ} of N_Z(0, Hσ_c²), τ = 10·Σ_{k<H} exp(−2π²σ_c²·k/(k+1))
  (Kairouz, Liu & Steinke 2021, the closeness behind their Theorem 1). When τ is below
  float resolution relative to the loss (:data:`TAU_NEGLIGIBLE`), the release is
  described as ``discrete_gaussian`` of σ = σ_c·√H and Δ = p grid steps; the change of
  every privacy loss, at most 2τ, is inside the accountants' round-off allowance.
  Otherwise (a few clients with σ_c near 1) it is ``approx`` of its (ε, δ), pessimistic.
  σ_c is the one the engine drew the shares from (the result's ``share_sigma_steps``),
  read, never recomputed; it is used only where the engine's own bound (KLS21 Theorem 1,
  :func:`~dpstudio.engine.distributed.noise.distributed_gaussian_epsilon`) shows that H
  shares of it meet the stated (ε, δ). A result without it, or whose σ_c falls short of
  its claim, is ``approx`` of its (ε, δ): never a description tighter than what it states.
* **Secure aggregation, Skellam shares** (``skellam``) and **shuffle protocols**
  (``cloak``, ``blanket``): ``approx`` of their (ε, δ). The Skellam sum's (ε, δ) is the
  engine's exact δ of the Skellam law plus the shares' sampling error; the shuffle
  protocols' comes from an amplification or blanket bound, and no tighter description of
  their shuffled messages is proven. The worst-case (ε, δ) pair these enter the
  accountants as dominates every (ε, δ)-DP mechanism.
"""

from __future__ import annotations

import math
from typing import Any

from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.errors import ParameterError

__all__ = ["TAU_NEGLIGIBLE", "secure_sum_loss", "shuffle_loss"]

#: Largest τ (relative to the sum's ρ = Δ²/(2Hσ_c²), and absolutely) for which the sum of
#: discrete Gaussian shares is described as one discrete Gaussian.
TAU_NEGLIGIBLE = 1e-15


def _approx(epsilon: float, delta: float) -> LossDescription:
    eps, dlt = float(epsilon), float(delta)
    if not math.isfinite(eps):
        raise ParameterError("a release without a finite ε has no loss description")
    if dlt > 0:
        return LossDescription("approx", epsilon=eps, delta=dlt)
    return LossDescription("pure", epsilon=eps)


def shuffle_loss(result: Any) -> LossDescription:
    """The description of a shuffle-model sum: ``approx`` of its (ε, δ).

    Parameters
    ----------
    result : ShuffleResult
        Read by its ``epsilon`` and ``delta``.

    Returns
    -------
    LossDescription

    Raises
    ------
    ParameterError
        When ε is not finite (a cloak without a pre-randomizer).
    """
    return _approx(result.epsilon, result.delta)


def secure_sum_loss(result: Any) -> LossDescription:
    """The description of a secure-aggregation sum (module docstring).

    Parameters
    ----------
    result : SecureSumResult
        Read by its ``noise`` family, ``precision`` (Δ in grid steps),
        ``honest_clients`` (H), ``share_sigma_steps`` (σ_c drawn), ``epsilon`` and
        ``delta``.

    Returns
    -------
    LossDescription
        ``discrete_gaussian`` of σ = σ_c·√H for discrete Gaussian shares where τ is
        negligible and H shares of σ_c meet (ε, δ) by KLS21, else ``approx`` of (ε, δ);
        never claiming less than (ε, δ).

    Raises
    ------
    ParameterError
        When ε is not finite.
    """
    from dpstudio.engine.distributed.noise import distributed_gaussian_epsilon, kls21_tau

    fallback = _approx(result.epsilon, result.delta)
    honest = int(getattr(result, "honest_clients", 0) or 0)
    sigma_c = float(getattr(result, "share_sigma_steps", 0.0) or 0.0)
    if (getattr(result, "noise", "") != "gaussian" or honest < 1 or result.delta <= 0
            or not 0.0 < sigma_c < math.inf):
        return fallback
    sens = int(result.precision)
    try:
        # The drawn σ_c must honour the claim by the bound the engine calibrated with
        # (its calibration returns a σ_c that meets it exactly): a σ_c short of it would
        # describe less noise than (ε, δ) was stated for.
        if distributed_gaussian_epsilon(sigma_c, honest, sens, result.delta) > result.epsilon:
            return fallback
        tau = kls21_tau(sigma_c, honest)
        rho = sens * sens / (2.0 * honest * sigma_c * sigma_c)
        if tau > TAU_NEGLIGIBLE * min(1.0, rho):
            return fallback
        return LossDescription("discrete_gaussian", epsilon=float(result.epsilon),
                               delta=float(result.delta),
                               scale=sigma_c * math.sqrt(honest), sensitivity=sens)
    except ParameterError:  # the claim check refused it: keep the stated (ε, δ)
        return fallback
