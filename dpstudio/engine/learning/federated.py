"""Federated averaging (McMahan et al. 2017) and its privacy variants.

FedAvg, as in the lecture: R rounds; in each, a fraction of the S sites (chosen at
random, the same number every round) start from the global parameters θ, run E local
steps of minibatch SGD (batch B, learning rate η: θ ← θ − η(mean gradient + λθ)) and
the server moves θ by the site-size-weighted average of their updates. Rows must have
‖x‖₂ ≤ 1 (features mapped by their declared bounds) for every private variant.

The private variants read no site size and no record count for anything but the data
itself: every record is Poisson-sampled at the declared rate q (``batch_rate``) at its
site, σ comes from (q, T, ε, δ) (:mod:`.federated_plan`), each noisy sum is divided by a
public divisor — the declared expected batch B of one site (``batch_size``), B·h for the
sum of h surviving sites — and the server averages the participants' updates with equal
weights 1/k (k declared). A site's sum of about q·mᵢ clipped gradients divided by B
≈ q·m̄ weighs it by mᵢ/m̄ on its own, so equal weights still average by size in
expectation, without reading mᵢ. (Dividing by q·mᵢ, or weighting by mᵢ/Σm, would make
the update a function of private sizes: not post-processing of the noisy sums.)

Variants (``variant``), all record-level DP (add/remove one example) and calibrated to
the same target (ε, δ) — their plans and accounting are in :mod:`.federated_plan`:

``none``
    Plain FedAvg: uniform minibatches of min(B, mᵢ) rows without replacement; no DP.
``local``
    Each site runs DP-SGD on its own rows (Poisson rate q, clipping C, Gaussian
    noise on every local step): its update is DP by itself, against everyone including
    the aggregator. Noise is added S times over, once per site, hence the utility cost.
``secagg``
    Each site's message for a step is the sum of its records' clipped gradients (rate
    q for every record), snapped to a lattice and carrying a discrete-Gaussian share;
    secure aggregation (Bonawitz et al. 2017, :mod:`dpstudio.engine.distributed.secagg`)
    lets the server learn only the integer sum, whose noise is central DP-SGD's. A
    record moves the whole trajectory of multi-step local training, so an update after
    several local steps is *not* a sum of per-record terms of norm ≤ C; each of the E
    steps of a round is therefore aggregated on its own (R·E aggregations: distributed
    DP-SGD), which keeps the sensitivity C. A release runs the masking protocol itself
    for every aggregation (:func:`~dpstudio.engine.distributed.secagg.setup_session`,
    seeds from the OS CSPRNG, integers modulo 2⁶⁴, which hold these sums without
    wrapping): the server holds only masked messages and unmasks their sum. A simulation
    adds the messages directly: the masks cancel exactly, so its view is the same sum.
    ``noise="skellam"`` draws Skellam shares instead of discrete-Gaussian ones;
    ``dropouts=u`` plans the shares for the honest survivors and drops u random sites
    of every aggregation after masking (the protocol recovers the survivors' sum).
``cape``
    Correlated noise from common randomness (Imtiaz & Sarwate, CAPE): the same messages
    as secagg, each carrying an independent part and a zero-sum part (wᵢ − wᵢ₊₁) from
    randomness the sites share; every message is protected alone, the zero-sum parts
    cancel in the sum, and the ε reported is for the aggregator's view of *all*
    messages (:func:`~dpstudio.engine.learning.federated_plan.cape_factor`) — and of
    the ``colluding`` sites' secrets when some are declared
    (:mod:`~dpstudio.engine.learning.cape_collusion`).
``shuffle``
    The local variant's messages (each pre-weighted by the public 1/k)
    pass through a shuffler, so the server sees them without their senders. The
    amplification bound of :mod:`dpstudio.engine.shuffle.amplification` (Feldman,
    McMillan & Talwar 2021) is for n users each holding one input and applying an
    ε₀-LDP randomizer to it; a site's message is DP per *record*, not per site (any two
    site datasets are not ε₀-indistinguishable), and with a few sites there are no
    clones to hide among. The bound does not apply, so no amplification is credited:
    the ε reported is the local variant's, pessimistic; the utility is local's too.

Sampling a fraction of the sites per round credits δ only
(:mod:`~dpstudio.engine.learning.site_sampling`); the result says so in ``notes``.

Randomness: ``source`` (the OS CSPRNG, :class:`~dpstudio.engine.rng.SecureSource`) for a
release — Poisson bits and exact discrete-Gaussian lattice noise, as :mod:`.dpsgd`; or
``rng`` (a seeded numpy generator) for a simulation — continuous Gaussian noise of the
same scale on the unsnapped sums. The variant ``none`` draws its minibatches from a
numpy generator in both cases (it promises no privacy).

Cancellable with progress (``state``, :mod:`dpstudio.jobs`): progress after each round,
cancellation between sites.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import count, positive, sample_rate
from dpstudio.engine.errors import EngineError, ParameterError, QueryError
from dpstudio.engine.learning.dpsgd import (
    _noisy_sum_float,
    _noisy_sum_lattice,
    clipped_batch,
    poisson_batch,
)
from dpstudio.engine.learning.federated_plan import (
    AggregatePlan,
    LocalPlan,
    plan_aggregate,
    plan_local,
)
from dpstudio.engine.learning.federated_trust import TRUSTS, federated_loss, trusts
from dpstudio.engine.learning.models import Model
from dpstudio.engine.learning.site_sampling import site_sampling
from dpstudio.engine.learning.sites import Sites, sites_from_column
from dpstudio.engine.local.tally import simulation_generator
from dpstudio.engine.rng import Source, require_secure
from dpstudio.jobs import State, check

__all__ = ["TRUSTS", "VARIANTS", "FederatedResult", "secure_total", "train_federated",
           "trusts"]

VARIANTS = ("none", "local", "secagg", "cape", "shuffle")



@dataclass(frozen=True)
class FederatedResult:
    """A finished federated run.

    Attributes
    ----------
    params : numpy.ndarray, shape (d,)
        The global parameters after R rounds.
    metrics : list
        ``evaluate(params)`` after each round (empty without ``evaluate``).
    epsilon, delta : float
        The accountant's guarantee for the whole run (ε = inf for ``none``).
    accountant : str
        How ε was obtained (``"none"`` for the non-private variant).
    variant : str
        One of :data:`VARIANTS`.
    trusts : str
        What the variant trusts, in one sentence.
    per_round : tuple of float or None
        (ε, δ) of one round; None for ``none``.
    simulated : bool
        False only for a release drawn from the OS CSPRNG.
    details : dict
        The plan: rates, noise multipliers, steps, participants (for JSON and tests).
    notes : tuple of str
        Sentences the result must carry (the δ credited for sampling sites).
    description : LossDescription or None
        What :meth:`loss_description` returns (None for ``none``).
    """

    params: np.ndarray
    metrics: list
    epsilon: float
    delta: float
    accountant: str
    variant: str
    trusts: str
    per_round: tuple | None
    simulated: bool = True
    details: dict = field(default_factory=dict, repr=False)
    notes: tuple = ()
    description: Any = field(default=None, repr=False, compare=False)

    def loss_description(self) -> LossDescription:
        """What this run drew, for a ledger's tight accountants.

        secagg with Gaussian shares, cape, local and shuffle: the Poisson-subsampled
        Gaussian their accountant composed (noise std σΔ of the weakest view the
        guarantee covers, sensitivity Δ, the declared rate q and T = R·E steps), so a
        pld ledger composes it exactly; secagg with Skellam shares: ``approx`` (its
        (ε, δ) only).

        Returns
        -------
        LossDescription

        Raises
        ------
        EngineError
            For the non-private variant, which drew no noise.
        """
        if self.description is None:
            raise EngineError("a non-private federated run drew no noise: it has no "
                              "privacy loss to describe")
        return self.description

    def to_dict(self) -> dict:
        """What an export may publish.

        Returns
        -------
        dict
            ``params``, ``epsilon``, ``delta``, ``accountant``, ``variant``, ``trusts``,
            ``per_round``, ``simulated``, ``details``, ``notes``.
        """
        return {"params": [float(t) for t in self.params], "epsilon": self.epsilon,
                "delta": self.delta, "accountant": self.accountant,
                "variant": self.variant, "trusts": self.trusts,
                "per_round": None if self.per_round is None else list(self.per_round),
                "simulated": self.simulated, "details": self.details,
                "notes": list(self.notes)}


class _Draws:
    """Release (secure source) or simulation (numpy generator) randomness."""

    def __init__(self, source: Source | None, rng: np.random.Generator | None):
        if (source is None) == (rng is None):
            raise ParameterError("give a source (release) or a generator (simulation), "
                                 "exactly one")
        self.release = source is not None
        if self.release:
            require_secure(source)
            self.source = source
            self.gen = simulation_generator(source)  # only for the non-private variant
        else:
            self.source = None
            self.gen = rng

    def choose_sites(self, sites: int, k: int) -> np.ndarray:
        if k >= sites:
            return np.arange(sites)
        perm = (sampling.permutation(sites, self.source) if self.release
                else self.gen.permutation(sites))
        return np.sort(perm[:k])

    def poisson(self, n: int, q: float) -> np.ndarray:
        if self.release:
            return poisson_batch(n, q, source=self.source)
        return poisson_batch(n, q, gen=self.gen)

    def normal(self, std: float, size: int) -> np.ndarray:
        return self.gen.normal(0.0, std, size)

    def lattice(self, std_steps: float, size: int) -> np.ndarray:
        return sampling.discrete_gaussian(std_steps, size, self.source)

    def skellam(self, variance_steps: float, size: int) -> np.ndarray:
        """Sk(v) in grid steps: exact-law Poisson draws (release) or numpy's (simulation)."""
        lam = variance_steps / 2.0
        if self.release:
            from dpstudio.engine.distributed.noise import poisson

            return poisson(lam, size, self.source) - poisson(lam, size, self.source)
        return self.gen.poisson(lam, size) - self.gen.poisson(lam, size)

    def dropped(self, participants: int, dropouts: int) -> np.ndarray:
        """Positions (among the participants) of the sites that drop out this step."""
        if dropouts <= 0:
            return np.zeros(0, np.int64)
        perm = (sampling.permutation(participants, self.source) if self.release
                else self.gen.permutation(participants))
        return np.sort(perm[:dropouts])


def _data(X, y, sites, private: bool) -> tuple[np.ndarray, np.ndarray, Sites]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise QueryError("the rows and the labels differ in length")
    if X.shape[0] == 0:
        raise QueryError("no records to train on")
    if private and np.any(np.einsum("ij,ij->i", X, X) > 1.0 + 1e-12):
        raise QueryError("rows must have ‖x‖₂ ≤ 1: map the features by their declared "
                         "bounds (design_matrix)")
    if not isinstance(sites, Sites):
        sites = sites_from_column(sites)
    if sites.codes.shape != (X.shape[0],):
        raise QueryError("the site column and the rows differ in length")
    return X, y, sites


def _local_update(model: Model, theta, X, y, steps: int, lr: float, batch: int,
                  gen: np.random.Generator) -> np.ndarray:
    """E steps of minibatch SGD from θ (non-private)."""
    m = X.shape[0]
    b = min(batch, m)
    for _ in range(steps):
        idx = gen.choice(m, b, replace=False) if b < m else np.arange(m)
        g = model.gradient(theta, X[idx], y[idx])
        theta = theta - lr * g
    return theta


def _local_dp_update(model: Model, theta, X, y, steps: int, lr: float, plan,
                     draws: _Draws, divisor: float) -> np.ndarray:
    """E steps of DP-SGD at one site (the plan: q, σ, lattice), each noisy sum divided by
    the public ``divisor`` (the declared expected batch B, never q·mᵢ: mᵢ is private)."""
    m = X.shape[0]
    denominator = float(divisor)
    for _ in range(steps):
        idx = draws.poisson(m, plan.sample_rate)
        clipped = clipped_batch(model, theta, X, y, idx, plan.clip)
        if draws.release:
            noisy = _noisy_sum_lattice(clipped, plan, draws.source)
        else:
            noisy = _noisy_sum_float(clipped, plan, draws.gen)
        theta = theta - lr * (noisy / denominator + model.lam * theta)
    return theta


def _site_message(clipped: np.ndarray, plan: AggregatePlan, draws: _Draws,
                  dimension: int) -> np.ndarray:
    """One site's message: its clipped sum plus its independent share.

    Release: integer lattice steps (int64); simulation: value units (float64).
    """
    skellam = getattr(plan, "noise", "gaussian") == "skellam"
    if draws.release:
        steps = np.rint(clipped / plan.grid).astype(np.int64)
        total = steps.sum(axis=0) if steps.shape[0] else np.zeros(dimension, np.int64)
        if skellam:
            return total + draws.skellam(plan.share_variance, dimension)
        return total + draws.lattice(plan.share_std / plan.grid, dimension)
    if skellam:  # the Skellam law itself, in value units
        return clipped.sum(axis=0) + draws.skellam(plan.share_variance,
                                                   dimension) * plan.grid
    return clipped.sum(axis=0) + draws.normal(plan.share_std, dimension)


def _common_parts(plan: AggregatePlan, h: int, draws: _Draws, dimension: int) -> np.ndarray:
    """CAPE's zero-sum parts eᵢ = wᵢ − wᵢ₊₁ (cyclic) for h sites, shape (h, d)."""
    if h == 1:
        return np.zeros((1, dimension), np.int64 if draws.release else np.float64)
    if draws.release:
        w = draws.lattice(plan.common_std / plan.grid, h * dimension).reshape(h, dimension)
    else:
        w = draws.normal(plan.common_std, h * dimension).reshape(h, dimension)
    return w - np.roll(w, -1, axis=0)


def secure_total(messages: np.ndarray, source: Source,
                 survivors: np.ndarray | None = None) -> np.ndarray:
    """The sum of the sites' integer messages as secure aggregation gives it to the server.

    Every site masks its message (pairwise and self masks from seeds drawn from
    ``source``, integers modulo 2⁶⁴); the server receives only the masked messages of the
    survivors and unmasks their sum (the survivors reveal the dropped sites' pair seeds).
    Two's complement makes the signed sum exact while it stays within ±2⁶³ (lattice steps
    of clipped gradients and their noise are far below that).

    Parameters
    ----------
    messages : numpy.ndarray of int64, shape (h, d)
        Each site's message: its clipped sum on the lattice plus its noise share.
    source : Source
        The OS CSPRNG of the release (the key agreement's and masks' seeds).
    survivors : numpy.ndarray of int, optional
        The sites whose masked messages arrive (all when omitted).

    Returns
    -------
    numpy.ndarray of int64, shape (d,)
        Σ of the survivors' messages, as unmasked by the server.

    Raises
    ------
    QueryError
        If too few sites survive for the protocol to recover the dropped sites' masks.
    """
    from dpstudio.engine.distributed.secagg import setup_session

    m = np.asarray(messages, dtype=np.int64)
    alive = np.arange(m.shape[0]) if survivors is None else np.asarray(survivors, np.int64)
    if m.shape[0] < 2:  # one site: nothing to hide its message among
        return m[alive].sum(axis=0)
    session = setup_session(m.shape[0], 64, m.shape[1], source)
    return session.aggregate(m, alive).view(np.int64)


def _aggregate_step(model: Model, theta, parts, plan: AggregatePlan, variant: str,
                    draws: _Draws, lr: float, divisor: float) -> np.ndarray:
    """One aggregated DP-SGD step over the participating sites' (X, y) parts; the noisy
    sum is divided by ``divisor`` (B) times the number of surviving sites (public)."""
    d = model.dimension
    messages = []
    for Xs, ys in parts:
        idx = draws.poisson(Xs.shape[0], plan.sample_rate)
        clipped = clipped_batch(model, theta, Xs, ys, idx, plan.clip)
        messages.append(_site_message(clipped, plan, draws, d))
    messages = np.array(messages)
    if variant == "cape":
        messages = messages + _common_parts(plan, len(parts), draws, d)
    # Declared dropouts happen: that many sites vanish after masking, and the protocol
    # recovers the sum of the survivors (whose shares were planned to protect it alone).
    gone = draws.dropped(len(parts), getattr(plan, "dropouts", 0))
    alive = np.setdiff1d(np.arange(len(parts)), gone)
    # The server (through secure aggregation, or adding the CAPE messages) gets the sum.
    if draws.release and variant == "secagg":
        total = (secure_total(messages, draws.source) if gone.size == 0
                 else secure_total(messages, draws.source, alive))
    else:
        total = messages[alive].sum(axis=0)
    if draws.release:
        total = total.astype(np.float64) * plan.grid
    # B per surviving site: public (B declared, the survivors' count known to the server);
    # q·Σmᵢ would make the step a function of private sizes.
    denominator = float(divisor) * alive.size
    return theta - lr * (total / denominator + model.lam * theta)


def train_federated(X, y, sites, model: Model, variant: str, *, epsilon: float | None,
                    delta: float | None, rounds: int, local_steps: int, lr: float,
                    batch_size: int, batch_rate: float | None = None,
                    fraction: float = 1.0, clip: float = 1.0,
                    source: Source | None = None, rng: np.random.Generator | None = None,
                    evaluate: Callable | None = None, state: State | None = None,
                    colluding: int = 0, cape_ratio: float = 10.0, init_seed: int = 0,
                    accountant: str = "pld", noise: str = "gaussian",
                    dropouts: int = 0) -> FederatedResult:
    """Train with FedAvg under one privacy variant (see the module's docstring).

    Parameters
    ----------
    X : numpy.ndarray, shape (n, p)
        Rows (‖x‖₂ ≤ 1 for the private variants).
    y : numpy.ndarray, shape (n,)
        Labels (±1, or in [−1, 1] for regression).
    sites : Sites or array_like
        The site of each row (:mod:`.sites`), or a column of site ids.
    model : Model
        From :func:`~dpstudio.engine.learning.models.make_model`.
    variant : {"none", "local", "secagg", "cape", "shuffle"}
        The trust model.
    epsilon, delta : float or None
        The target (ε, δ) of the whole run (ignored, may be None, for ``none``).
    rounds : int
        R.
    local_steps : int
        E, local steps per round (aggregated one by one under secagg and cape).
    lr : float
        η.
    batch_size : int or float
        B: the local minibatch of ``none`` (an integer); for the private variants the
        declared expected batch of one site (> 0, may be fractional), the public divisor
        of every noisy sum (it sets the step's scale, never the noise).
    batch_rate : float, optional
        q, the declared Poisson rate of every record at its site; required by the private
        variants (their σ and ε depend on it and on no size).
    fraction : float, optional
        The fraction of sites per round, in (0, 1]; ⌈fraction·S⌉ sites join each round.
    clip : float, optional
        C, the per-example gradient norm bound.
    source : Source, optional
        The OS CSPRNG, for a release.
    rng : numpy.random.Generator, optional
        A seeded generator, for a simulation. Exactly one of ``source`` and ``rng``.
    evaluate : callable, optional
        ``evaluate(params)`` after each round, collected in ``metrics``.
    state : State, optional
        Progress and cancellation.
    colluding : int, optional
        Sites per round that may collude with the server: their shares are not counted on
        (secagg); the guarantee covers what is left of the noise in their view (cape,
        :mod:`.cape_collusion`, refused where that leaves a site its own share only).
    cape_ratio : float, optional
        κ, the zero-sum part's variance over the sum's noise variance (cape), ≥ ½.
    noise : {"gaussian", "skellam"}, optional
        secagg's noise shares: distributed discrete Gaussian (default) or Skellam.
    dropouts : int, optional
        Sites of a round that may drop out after masking (secagg): the noise is planned
        for the honest survivors, and that many drop out of every aggregation.
    init_seed : int, optional
        The model's public starting point.
    accountant : {"pld", "rdp"}, optional
        The accountant.

    Returns
    -------
    FederatedResult

    Raises
    ------
    ParameterError
        For an unknown variant, a parameter out of range, or not exactly one of
        ``source`` and ``rng``.
    InsecureSourceError
        If ``source`` is not the OS CSPRNG.
    QueryError
        For rows outside the unit ball, mismatched lengths or no records.
    Cancelled
        If the state says so.
    """
    if variant not in VARIANTS:
        raise ParameterError(f"the federated variant must be one of {', '.join(VARIANTS)}, "
                             f"got {variant!r}")
    private = variant != "none"
    X, y, sites = _data(X, y, sites, private)
    r = count("the number of rounds", rounds)
    e = count("the number of local steps", local_steps)
    # ``none`` draws minibatches of B rows (an integer); the private variants only divide
    # by the declared expected batch B, which may be fractional (q × a public count).
    b = (positive("the expected batch", batch_size) if private
         else count("the batch size", batch_size))
    eta = positive("the learning rate", lr)
    f = positive("the fraction of sites per round", fraction)
    if f > 1:
        raise ParameterError(f"the fraction of sites per round must be at most 1, got {f:g}")
    c = positive("the clipping norm C", clip)
    draws = _Draws(source, rng)
    sizes = sites.sizes
    if np.any(sizes == 0):
        raise QueryError("a site has no records")
    k = max(1, math.ceil(f * sites.count - 1e-9))
    parts = [(X[i], y[i]) for i in sites.indices()]
    d = model.dimension

    plan: LocalPlan | AggregatePlan | None = None
    sampled = None
    if private:
        eps = validate_epsilon(epsilon)
        dl = validate_delta(delta, required=True)
        if batch_rate is None:
            raise ParameterError("a private federated run needs its Poisson rate q "
                                 "(batch_rate): the noise is calibrated from it, never "
                                 "from the sites' sizes")
        rate = sample_rate(batch_rate)
        if variant not in ("secagg", "cape") and (noise != "gaussian" or colluding
                                                  or dropouts):
            raise ParameterError(f"Skellam noise, colluding sites and dropouts are "
                                 f"declared for secagg or cape, not for {variant}")
        if variant == "cape" and dropouts:
            raise ParameterError("CAPE's correlated parts cancel only when every site's "
                                 "message arrives: use secagg to tolerate dropouts")
        # Sampling k of S sites credits δ only (:mod:`.site_sampling`): the accountant
        # runs at δ′ = δ/P(a site joins at least one round).
        sampled = site_sampling(sites.count, k, r, dl)
        acc_delta = sampled.accounted_delta
        if variant in ("local", "shuffle"):
            plan = plan_local(d, rate, r * e, e, c, eps, acc_delta, eta, accountant,
                              sites.count)
        else:
            plan = plan_aggregate(variant, rate, k, d, r * e, e, c,
                                  eps, acc_delta, colluding=colluding,
                                  cape_ratio=cape_ratio, accountant=accountant,
                                  noise=noise, dropouts=dropouts)
    elif noise != "gaussian" or colluding or dropouts:
        raise ParameterError("the non-private variant draws no noise: Skellam noise, "
                             "colluding sites and dropouts do not apply")

    theta = model.init(init_seed)
    metrics = []
    for rnd in range(r):
        check(state)
        chosen = draws.choose_sites(sites.count, k)
        # Size weights for plain FedAvg only; the private variants weigh each update 1/k
        # (public): the sizes are private (module docstring).
        weights = (sizes[chosen] / sizes[chosen].sum() if not private
                   else np.full(chosen.size, 1.0 / chosen.size))
        if variant in ("secagg", "cape"):
            for _ in range(e):
                check(state)
                theta = _aggregate_step(model, theta, [parts[i] for i in chosen], plan,
                                        variant, draws, eta, b)
        else:
            updates = []
            for i in chosen:
                check(state)
                Xs, ys = parts[i]
                if variant == "none":
                    new = _local_update(model, theta, Xs, ys, e, eta, b, draws.gen)
                else:
                    new = _local_dp_update(model, theta, Xs, ys, e, eta, plan.sites[i],
                                           draws, b)
                updates.append(new - theta)
            weighted = np.asarray(updates) * weights[:, None]  # each site pre-weights
            if variant == "shuffle":
                order = (sampling.permutation(len(weighted), draws.source) if draws.release
                         else draws.gen.permutation(len(weighted)))
                weighted = weighted[order]  # the server sees them without senders
            theta = theta + weighted.sum(axis=0)
        if evaluate is not None:
            metrics.append(evaluate(theta))
        if state is not None:
            state.progress((rnd + 1) / r, f"round {rnd + 1} of {r}")

    details = {"rounds": r, "local_steps": e, "participants": k, "sites": sites.count,
               "batch_size": b, "learning_rate": eta, "clip": c}
    if private:
        details["batch_rate"] = rate
    if plan is None:
        return FederatedResult(theta, metrics, math.inf, 0.0, "none", variant,
                               TRUSTS[variant], None, not draws.release, details)
    details.update(plan.to_dict())
    details.update(site_participation=sampled.round_probability,
                   run_participation=sampled.run_probability,
                   sampling_delta=sampled.accounted_delta)
    details.setdefault("accounted_delta", sampled.accounted_delta)
    per_round = (plan.per_round[0], sampled.round_delta(plan.per_round[1]))
    notes = tuple(x for x in (sampled.note(),) if x)
    result = FederatedResult(theta, metrics, plan.epsilon, sampled.delta, accountant,
                             variant, trusts(variant, colluding, dropouts), per_round,
                             not draws.release, details, notes)
    return replace(result, description=federated_loss(result, plan))
