"""The privacy plans of the federated variants: noise scales and the accountant's (ε, δ).

Everything here is fixed before any record is read: the site *sizes* are treated as
public (as DP-SGD treats n), the rest is the analyst's parameters. Each plan holds the
accountant's ε for the (q, σ, T) that :mod:`.federated` will run, so the reported ε is
the accountant's for the parameters run, not a target.

All variants protect one **record** (add/remove one example, anywhere in the
federation). A record at a site takes part in at most R·E noisy steps (R rounds, E
steps each); when only a fraction of the sites join a round we still count every
round (site sampling is not credited: it correlates the inclusion of a site's records,
so the Poisson-subsampling accountant does not apply to it) — pessimistic.

Plans
-----
local / shuffle
    Site i runs DP-SGD on its own rows: Poisson rate qᵢ = min(1, B/mᵢ), T = R·E steps,
    one noise multiplier σ for every site, calibrated by the PLD accountant to the
    target ε at the largest rate (the smallest site; ε grows with q, so every other
    site's ε is below it) (:func:`~dpstudio.engine.learning.dpsgd.plan_dpsgd`). A record
    lives at one site, so the federation's ε is the largest site's (parallel
    composition).
secagg
    One Poisson rate q = min(1, B·S/n) for every record; each aggregated step's sum of
    clipped gradients gets central-DP-SGD noise σ·Δ, split into h = participants −
    colluding discrete-Gaussian shares of σ·Δ/√h each (Kairouz, Liu & Steinke 2021).
    The shares are ≥ 2¹⁵ grid steps wide, so KLS21's τ is 0 in floating point and their
    ε̃ = Δ/(√h σ_c) is that of the continuous Gaussian of the same total σ: the step is
    accounted as the subsampled Gaussian of multiplier σ, as :mod:`.dpsgd` accounts its
    lattice noise (the continuous PLD at this resolution: an approximation, not a
    proven bound, like there).
cape
    The same rate q. Each of the h participating sites adds zᵢ ~ N(0, σ̃²Δ²/h) and a
    correlated eᵢ = wᵢ − wᵢ₊₁ (cyclic, wⱼ ~ N(0, κσ̃²Δ²) from common randomness), so
    Σ eᵢ = 0 and the sum carries only N(0, σ̃²Δ²). The aggregator sees every message,
    not only the sum: per coordinate the noise across sites has covariance
    σ̃²Δ²·Σ̃, Σ̃ = I/h + κ·DDᵀ (D = I − cyclic shift), and one record at site i moves
    the mean by a vector of norm ≤ Δ along eᵢ, so the joint view is a Gaussian
    mechanism of multiplier σ̃/√(Σ̃⁻¹)ᵢᵢ (worst i). σ̃ is raised by that factor
    (→ 1 as κ grows) so the joint view meets the target: the accountant is then the
    subsampled Gaussian's, exactly, for a simulation. Each message alone has noise
    σ̃·√(1/h + 2κ) ≥ σ̃ (κ ≥ ½): it protects its site's records by itself.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon, dpsgd_sigma
from dpstudio.engine.additive import fine_grid
from dpstudio.engine.distributed.noise import kls21_tau
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.learning.dpsgd import plan_dpsgd

__all__ = ["AggregatePlan", "LocalPlan", "cape_factor", "plan_aggregate", "plan_local"]

_TAU_LIMIT = 1e-12  # KLS21's τ above this would have to be accounted; never at 2¹⁵ steps


@dataclass(frozen=True)
class LocalPlan:
    """Per-site DP-SGD plans (local and shuffle variants).

    Attributes
    ----------
    sites : tuple of DPSGDPlan
        One plan per site (rate qᵢ, σᵢ, T, lattice).
    epsilon, delta : float
        The federation's guarantee: the largest site ε, at δ.
    per_round : tuple of float
        (ε, δ) of one round (E steps), the largest over sites.
    """

    sites: tuple
    epsilon: float
    delta: float
    per_round: tuple

    def to_dict(self) -> dict:
        """Rates, multipliers and steps of each site, for JSON.

        Returns
        -------
        dict
            ``sample_rate``, ``noise_multiplier`` (lists, per site), ``steps``.
        """
        return {"sample_rate": [p.sample_rate for p in self.sites],
                "noise_multiplier": [p.noise_multiplier for p in self.sites],
                "steps": self.sites[0].steps}


@dataclass(frozen=True)
class AggregatePlan:
    """The noise on the aggregate (secagg and cape variants).

    Attributes
    ----------
    sample_rate : float
        q, every record's Poisson rate.
    steps : int
        T = R·E aggregated steps.
    noise_multiplier : float
        σ the accountant was asked about (the joint view's, for cape).
    sum_multiplier : float
        σ̃ of the noise left in the sum (= σ for secagg, ≥ σ for cape).
    clip : float
        C.
    grid : float
        The release lattice's step g.
    sensitivity : float
        Δ = C + √d·g/2 (ℓ₂, value units).
    participants : int
        Sites per round.
    honest : int
        Shares the guarantee rests on (participants − colluding; secagg).
    share_std : float
        Std of each site's independent share (value units).
    common_std : float
        Std of each wⱼ of the common randomness (cape; 0 for secagg).
    epsilon, delta : float
        The accountant's guarantee for (q, σ, T).
    per_round : tuple of float
        (ε, δ) of one round (E steps).
    tau : float
        KLS21's τ at the share width (secagg; 0 to floating point).
    """

    sample_rate: float
    steps: int
    noise_multiplier: float
    sum_multiplier: float
    clip: float
    grid: float
    sensitivity: float
    participants: int
    honest: int
    share_std: float
    common_std: float
    epsilon: float
    delta: float
    per_round: tuple
    tau: float

    def to_dict(self) -> dict:
        """The fields as a plain dict (for JSON).

        Returns
        -------
        dict
        """
        return asdict(self)


def plan_local(sizes, dimension: int, batch_size: int, steps: int, local_steps: int,
               clip: float, epsilon: float, delta: float, lr: float,
               accountant: str = "pld") -> LocalPlan:
    """One DP-SGD plan per site, each calibrated to ε (see the module's docstring).

    Parameters
    ----------
    sizes : array_like of int
        mᵢ, the sites' sizes (public).
    dimension : int
        d.
    batch_size : int
        B, the expected local batch.
    steps : int
        T = R·E.
    local_steps : int
        E (for the per-round ε).
    clip, epsilon, delta, lr : float
        C, the target (ε, δ), η.
    accountant : str, optional
        ``"pld"`` or ``"rdp"``.

    Returns
    -------
    LocalPlan

    Raises
    ------
    ParameterError
        For a parameter out of range.
    """
    rates = [min(1.0, batch_size / max(int(m), 1)) for m in np.asarray(sizes, np.int64)]
    top = max(rates)
    # One σ for every site, calibrated at the largest rate (the smallest site): ε grows
    # with q, so every site meets the target and the smallest exactly; one calibration
    # instead of one per site size.
    first = plan_dpsgd(dimension, top, steps, clip, delta, epsilon=epsilon,
                       learning_rate=lr, accountant=accountant)
    # The other sites run at their own rate with the same σ (grid and Δ depend on σ, C
    # and d only); their plans keep the calibrated ε, an upper bound on theirs.
    plans = [replace(first, sample_rate=q) for q in rates]
    eps = first.epsilon
    per_round = dpsgd_epsilon(first.noise_multiplier, top, local_steps, delta,
                              accountant).epsilon
    return LocalPlan(tuple(plans), eps, float(delta), (per_round, float(delta)))


def cape_factor(participants: int, ratio: float) -> float:
    """√max_i (Σ̃⁻¹)ᵢᵢ, Σ̃ = I/h + κ·DDᵀ: how much the joint view of all messages sharpens
    the sum's noise (1 for one site; → 1 as κ grows; ≤ √h).

    Parameters
    ----------
    participants : int
        h, the sites whose messages the aggregator sees.
    ratio : float
        κ, the common part's variance over the sum's.

    Returns
    -------
    float
        The factor ≥ 1.
    """
    h = int(participants)
    if h == 1:
        return 1.0
    d = np.eye(h) - np.roll(np.eye(h), 1, axis=1)  # (Dw)ᵢ = wᵢ − wᵢ₊₁
    cov = np.eye(h) / h + ratio * d @ d.T
    return float(math.sqrt(np.max(np.diag(np.linalg.inv(cov)))))


def plan_aggregate(variant: str, n: int, sites: int, participants: int, dimension: int,
                   batch_size: int, steps: int, local_steps: int, clip: float,
                   epsilon: float, delta: float, *, colluding: int = 0,
                   cape_ratio: float = 10.0, accountant: str = "pld") -> AggregatePlan:
    """The noise of the secagg or cape variant, calibrated to ε (module docstring).

    Parameters
    ----------
    variant : {"secagg", "cape"}
        The variant.
    n : int
        Records in the federation (public, as DP-SGD's n).
    sites : int
        S.
    participants : int
        Sites per round.
    dimension : int
        d.
    batch_size : int
        B: the expected batch of a site of average size.
    steps : int
        T = R·E.
    local_steps : int
        E.
    clip, epsilon, delta : float
        C and the target (ε, δ).
    colluding : int, optional
        Sites that may hand their shares to the server (secagg).
    cape_ratio : float, optional
        κ ≥ ½ (cape).
    accountant : str, optional
        ``"pld"`` or ``"rdp"``.

    Returns
    -------
    AggregatePlan

    Raises
    ------
    ParameterError
        If no honest site is left, κ < ½, or a parameter is out of range.
    """
    q = min(1.0, batch_size * sites / n)
    acc = dpsgd_sigma(epsilon, delta, q, steps, accountant)
    sigma = acc.sigma
    one = dpsgd_epsilon(sigma, q, local_steps, delta, accountant).epsilon
    h = participants
    if variant == "secagg":
        if colluding < 0:
            raise ParameterError("the number of colluding sites must be ≥ 0")
        h = participants - int(colluding)
        if h < 1:
            raise ParameterError(f"with {colluding} colluding sites of {participants} per "
                                 "round no honest share is left to protect the sum")
        total, common = sigma, 0.0
    else:
        if not cape_ratio >= 0.5:
            raise ParameterError("the correlated noise's ratio κ must be at least ½, so "
                                 "that each message protects its site alone")
        total = sigma * cape_factor(participants, cape_ratio)
        common = math.sqrt(cape_ratio) * total
    grid = fine_grid(total * clip / math.sqrt(h))
    sens = clip + math.sqrt(dimension) * grid / 2.0
    share = total * sens / math.sqrt(h)
    tau = kls21_tau(share / grid, h) if variant == "secagg" else 0.0
    if tau > _TAU_LIMIT:
        raise ParameterError("the distributed noise's shares are too narrow for KLS21's "
                             "bound to vanish; use fewer sites per round")
    return AggregatePlan(sample_rate=q, steps=steps, noise_multiplier=sigma,
                         sum_multiplier=total, clip=clip, grid=grid, sensitivity=sens,
                         participants=participants, honest=h, share_std=share,
                         common_std=common * sens, epsilon=acc.epsilon, delta=float(delta),
                         per_round=(one, float(delta)), tau=tau)
