"""The privacy plans of the federated variants: noise scales and the accountant's (ε, δ).

Everything here is fixed before any record is read, from the analyst's declared
parameters only: the Poisson rate q (``batch_rate``), the steps, C, the target (ε, δ) and
the declared numbers of sites, participants, colluding and dropped-out sites. The site
*sizes* and the number of records are **not** inputs: under add/remove-one-record (the
relation DP-SGD and FedAvg state) they are private, and a σ or q derived from them would
change between neighbouring datasets, so the released noise and ε would leak them. Each
plan holds the accountant's ε for the (q, σ, T) that :mod:`.federated` will run, so the
reported ε is the accountant's for the parameters run, not a target.

All variants protect one **record** (add/remove one example, anywhere in the
federation). A record at a site takes part in at most R·E noisy steps (R rounds, E
steps each); when only a fraction of the sites join a round we still count every
round for ε (site sampling correlates the inclusion of a site's records, so the
Poisson-subsampling accountant does not apply to it); only δ is credited for it, by
:mod:`.site_sampling`, which asks these plans for the δ′ the accountant runs at.

Plans
-----
local / shuffle
    Site i runs DP-SGD on its own rows: every record is sampled with the declared rate q
    at its site, T = R·E steps, one noise multiplier σ calibrated by the PLD accountant
    to the target ε at q (:func:`~dpstudio.engine.learning.dpsgd.plan_dpsgd`); the
    expected batch q·mᵢ is an outcome, not an input. A record lives at one site, so the
    federation's ε is that of one site (parallel composition).
secagg
    The same rate q for every record; each aggregated step's sum of
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
    σ̃·√(1/h + 2κ) ≥ σ̃ (κ ≥ ½): it protects its site's records by itself. Against an
    aggregator colluding with up to c sites, σ̃ is raised instead by what is left of the
    noise in the worst view (:mod:`.cape_collusion`), refused where a site keeps only
    its own share.

Skellam shares (secagg, ``noise="skellam"``)
    Each of the h honest survivors adds Sk(v/h) = Pois(v/2h) − Pois(v/2h) per
    coordinate (Agarwal, Kairouz & Liu 2021): the sum carries Sk(v) exactly, v =
    (σ̃·Δ·(1 + 10⁻³)/g)² grid steps² on a lattice with σΔ/g in [2¹¹, 2¹²) (the exact
    Skellam δ of :mod:`~dpstudio.engine.distributed.skellam` is evaluated up to 10⁹
    steps²). It is accounted, like the discrete Gaussian, as the continuous Gaussian of
    multiplier σ — an approximation at this resolution, checked at every plan: in one
    dimension, at the step's integer sensitivity ⌈Δ/g⌉, the Skellam's exact δ(ε) is at
    most the Gaussian's at ε = ½, 1, 2, 4 (the 10⁻³ wider law pays for the rounding up).
    The release's Poisson draws are within :func:`~dpstudio.engine.distributed.noise
    .poisson_tv` of Poisson in total variation: (1 + e^ε)·(draws)·tv is taken out of δ
    before the accountant is asked.

Dropouts (secagg)
    With u sites that may drop out of a round after masking, the masking protocol
    recovers the sum of the survivors; the shares are planned for h = participants −
    colluding − u (the honest survivors: pessimistic), and the protocol needs a majority
    of the participants to survive.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon, dpsgd_sigma
from dpstudio.engine.additive import fine_grid
from dpstudio.engine.checks import count
from dpstudio.engine.checks import sample_rate as _check_rate
from dpstudio.engine.distributed.noise import kls21_tau
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.learning.cape_collusion import check_collusion, information_multiplier
from dpstudio.engine.learning.dpsgd import DPSGDPlan, plan_dpsgd

__all__ = ["NOISES", "AggregatePlan", "LocalPlan", "cape_factor", "plan_aggregate", "plan_local"]

_TAU_LIMIT = 1e-12  # KLS21's τ above this would have to be accounted; never at 2¹⁵ steps
NOISES = ("gaussian", "skellam")
# Skellam lattice: 2⁴ coarser than fine_grid's, so σΔ/g lies in [2¹¹, 2¹²) and the exact
# Skellam δ (evaluated up to 10⁹ steps²) can check it.
_SKELLAM_COARSER = 16.0
# The Skellam's std is planned this much wider than the accounted Gaussian's: it pays for
# the check's integer sensitivity ⌈Δ/g⌉ ≤ (1 + 2⁻¹⁰)·Δ/g.
_SKELLAM_WIDER = 1e-3
_SKELLAM_CHECK_EPSILONS = (0.5, 1.0, 2.0, 4.0)
# poisson_tv is about 7e-16 at the means used here (≥ 10⁵); 1e-14 bounds it with margin
# and is checked in the tests.
_SKELLAM_TV_BOUND = 1e-14


@dataclass(frozen=True)
class LocalPlan:
    """Per-site DP-SGD plans (local and shuffle variants).

    Attributes
    ----------
    sites : tuple of DPSGDPlan
        One plan per site, all equal (rate q, σ, T, lattice: public parameters only).
    epsilon, delta : float
        The federation's guarantee: one site's ε (every site's), at δ.
    per_round : tuple of float
        (ε, δ) of one round (E steps).
    noise : str
        ``"gaussian"``: every site's DP-SGD noise (the field :class:`AggregatePlan` has
        too, so a reader asks either plan the same way).

    Raises
    ------
    ParameterError
        When the sites' plans differ or there is none.
    """

    sites: tuple
    epsilon: float
    delta: float
    per_round: tuple
    noise: str = "gaussian"

    def __post_init__(self) -> None:
        # The plan is one public DP-SGD plan run at every site (module docstring): the
        # federation's ε is that one plan's, so plans that differ have no single ε here.
        if not self.sites or any(p != self.sites[0] for p in self.sites[1:]):
            raise ParameterError("a local plan runs one DP-SGD plan, the same at every site")
        if self.noise != "gaussian":
            raise ParameterError("the local and shuffle variants draw Gaussian noise only")

    @property
    def site(self) -> DPSGDPlan:
        """The one DP-SGD plan every site runs (``sites[i]`` for any i).

        Returns
        -------
        DPSGDPlan
        """
        return self.sites[0]

    def to_dict(self) -> dict:
        """Rates, multipliers and steps of each site, for JSON.

        Returns
        -------
        dict
            ``sample_rate`` (q), ``noise_multiplier`` (σ), ``steps`` (T): every site's.
        """
        first = self.site
        return {"sample_rate": first.sample_rate, "noise_multiplier": first.noise_multiplier,
                "steps": first.steps}


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
    noise : str
        ``"gaussian"`` (discrete Gaussian shares) or ``"skellam"`` (secagg).
    colluding : int
        Sites per round that may collude with the server (declared).
    dropouts : int
        Sites that may drop out of a round (secagg; declared).
    view_multiplier : float
        σ of the weakest view the guarantee covers (the accountant's σ: the sum's for
        secagg, the worst colluding view's for cape).
    share_variance : float
        Variance of one Skellam share in grid steps² (0 for the Gaussian shares).
    accounted_delta : float
        δ the accountant was asked at (δ less the Poisson draws' total variation).
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
    noise: str = "gaussian"
    colluding: int = 0
    dropouts: int = 0
    view_multiplier: float = 0.0
    share_variance: float = 0.0
    accounted_delta: float = 0.0

    def to_dict(self) -> dict:
        """The fields as a plain dict (for JSON).

        Returns
        -------
        dict
        """
        return asdict(self)


def plan_local(dimension: int, sample_rate: float, steps: int, local_steps: int,
               clip: float, epsilon: float, delta: float, lr: float,
               accountant: str = "pld", sites: int = 1) -> LocalPlan:
    """One DP-SGD plan, the same at every site, calibrated to ε (module docstring).

    Parameters
    ----------
    dimension : int
        d.
    sample_rate : float
        q, the declared Poisson rate of every record at its site.
    steps : int
        T = R·E.
    local_steps : int
        E (for the per-round ε).
    clip, epsilon, delta, lr : float
        C, the target (ε, δ), η.
    accountant : str, optional
        ``"pld"`` or ``"rdp"``.
    sites : int, optional
        S, the declared number of sites (one plan each, all equal).

    Returns
    -------
    LocalPlan

    Raises
    ------
    ParameterError
        For a parameter out of range.
    """
    # σ from (q, T, ε, δ) only: no site size enters, so neighbouring datasets get the
    # same plan (the sizes are private under add/remove).
    plan = plan_dpsgd(dimension, sample_rate, steps, clip, delta, epsilon=epsilon,
                      learning_rate=lr, accountant=accountant)
    per_round = dpsgd_epsilon(plan.noise_multiplier, plan.sample_rate, local_steps, delta,
                              accountant).epsilon
    return LocalPlan((plan,) * count("the number of sites", sites), plan.epsilon,
                     float(delta), (per_round, float(delta)))


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


def plan_aggregate(variant: str, sample_rate: float, participants: int, dimension: int,
                   steps: int, local_steps: int, clip: float,
                   epsilon: float, delta: float, *, colluding: int = 0,
                   cape_ratio: float = 10.0, accountant: str = "pld",
                   noise: str = "gaussian", dropouts: int = 0) -> AggregatePlan:
    """The noise of the secagg or cape variant, calibrated to ε (module docstring).

    Parameters
    ----------
    variant : {"secagg", "cape"}
        The variant.
    sample_rate : float
        q, the declared Poisson rate of every record (no size enters the plan).
    participants : int
        Sites per round (declared: ⌈fraction·S⌉).
    dimension : int
        d.
    steps : int
        T = R·E.
    local_steps : int
        E.
    clip, epsilon, delta : float
        C and the target (ε, δ).
    colluding : int, optional
        Sites that may collude with the server: their shares are not counted on (secagg);
        the guarantee covers their view (cape).
    cape_ratio : float, optional
        κ ≥ ½ (cape).
    accountant : str, optional
        ``"pld"`` or ``"rdp"``.
    noise : {"gaussian", "skellam"}, optional
        The shares' family (secagg; cape draws Gaussian noise).
    dropouts : int, optional
        Sites that may drop out of a round (secagg).

    Returns
    -------
    AggregatePlan

    Raises
    ------
    ParameterError
        If no honest site is left, κ < ½, the collusion or dropouts are more than the
        variant tolerates, or a parameter is out of range.
    """
    if noise not in NOISES:
        raise ParameterError(f"the federated noise must be {' or '.join(NOISES)}, "
                             f"got {noise!r}")
    colluding, dropouts = int(colluding), int(dropouts)
    if colluding < 0 or dropouts < 0:
        raise ParameterError("the numbers of colluding and dropped-out sites must be ≥ 0")
    if variant == "cape":
        if noise != "gaussian":
            raise ParameterError("Skellam shares are for secure aggregation: CAPE's "
                                 "correlated parts are Gaussian (use --fed-variant secagg)")
        if dropouts:
            raise ParameterError("CAPE's correlated parts cancel only when every site's "
                                 "message arrives: use --fed-variant secagg to tolerate "
                                 "dropouts")
    # The declared rate: a rate derived from n or the site sizes would differ between
    # neighbouring datasets, and so would σ and ε.
    q = _check_rate(sample_rate)
    if q < 2.0 ** -32:  # a release decides each record from 32 bits (:mod:`.dpsgd`)
        raise ParameterError("the sampling rate must be at least 2⁻³²")
    h = participants
    info = 1.0
    if variant == "cape":  # refused before any calibration
        if not cape_ratio >= 0.5:
            raise ParameterError("the correlated noise's ratio κ must be at least ½, so "
                                 "that each message protects its site alone")
        info = check_collusion(participants, cape_ratio, colluding)
    if variant == "secagg":
        h = participants - colluding - dropouts
        if h < 1:
            raise ParameterError(f"with {colluding} colluding sites and {dropouts} dropouts "
                                 f"of {participants} per round no honest share is left to "
                                 "protect the sum")
        if dropouts and participants - dropouts < participants // 2 + 1:
            raise ParameterError(f"secure aggregation recovers dropped sites' masks from a "
                                 f"majority of the {participants} participants: at most "
                                 f"{participants - participants // 2 - 1} may drop out")
    # Every participant draws its share, the colluders' and dropped sites' included.
    draws = 2 * participants * dimension * steps if noise == "skellam" else 0
    acc_delta = float(delta)
    if draws:
        # Every Poisson draw is within tv of Poisson: (1 + e^ε)·draws·tv comes out of δ.
        acc_delta -= (1.0 + math.exp(epsilon)) * draws * _SKELLAM_TV_BOUND
        if acc_delta <= 0:
            raise ParameterError("δ is too small for the Skellam draws' total variation")
    acc = dpsgd_sigma(epsilon, acc_delta, q, steps, accountant)
    sigma = acc.sigma
    one = dpsgd_epsilon(sigma, q, local_steps, acc_delta, accountant).epsilon
    share_var = 0.0
    if variant == "secagg":
        total, common = sigma, 0.0
    else:
        total = information_multiplier(sigma, info)
        common = math.sqrt(cape_ratio) * total
    if noise == "skellam":
        grid = fine_grid(total * clip) * _SKELLAM_COARSER
        sens = clip + math.sqrt(dimension) * grid / 2.0
        std_steps = total * sens * (1.0 + _SKELLAM_WIDER) / grid
        _check_skellam(std_steps ** 2, sens / grid, total * sens / grid)
        share_var = std_steps ** 2 / h
        from dpstudio.engine.distributed.noise import poisson_tv

        if poisson_tv(share_var / 2.0) > _SKELLAM_TV_BOUND:  # the δ taken out covers it
            raise ParameterError("the Skellam shares are too narrow for their Poisson "
                                 "draws' accounting; use fewer sites per round")
        share = math.sqrt(share_var) * grid
        tau = 0.0
    else:
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
                         per_round=(one, float(delta)), tau=tau, noise=noise,
                         colluding=colluding, dropouts=dropouts, view_multiplier=sigma,
                         share_variance=share_var, accounted_delta=acc_delta)


def _check_skellam(variance: float, sensitivity_steps: float, sigma: float) -> None:
    """Refuse unless the Skellam of this variance is, in one dimension at ⌈Δ/g⌉, no less
    private than the Gaussian of std σ accounted for it, at Δ/g (module docstring)."""
    from dpstudio.engine.calibration import analytic_gaussian_delta
    from dpstudio.engine.distributed.skellam import skellam_delta

    for eps in _SKELLAM_CHECK_EPSILONS:
        exact = skellam_delta(variance, math.ceil(sensitivity_steps), eps)
        if exact > analytic_gaussian_delta(sigma, sensitivity_steps, eps):
            raise ParameterError("the Skellam shares do not match the Gaussian they are "
                                 "accounted as at this resolution; use the discrete "
                                 "Gaussian (--fed-noise gaussian)")
