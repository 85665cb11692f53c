"""Federated averaging (McMahan et al. 2017) and its privacy variants.

FedAvg, as in the lecture: R rounds; in each, a fraction of the S sites (chosen at
random, the same number every round) start from the global parameters θ, run E local
steps of minibatch SGD (batch B, learning rate η: θ ← θ − η(mean gradient + λθ)) and
the server moves θ by the site-size-weighted average of their updates. Rows must have
‖x‖₂ ≤ 1 (features mapped by their declared bounds) for every private variant.

Variants (``variant``), all record-level DP (add/remove one example) and calibrated to
the same target (ε, δ) — their plans and accounting are in :mod:`.federated_plan`:

``none``
    Plain FedAvg: uniform minibatches of min(B, mᵢ) rows without replacement; no DP.
``local``
    Each site runs DP-SGD on its own rows (Poisson rate qᵢ = B/mᵢ, clipping C, Gaussian
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
``cape``
    Correlated noise from common randomness (Imtiaz & Sarwate, CAPE): the same messages
    as secagg, each carrying an independent part and a zero-sum part (wᵢ − wᵢ₊₁) from
    randomness the sites share; every message is protected alone, the zero-sum parts
    cancel in the sum, and the ε reported is for the aggregator's view of *all*
    messages (:func:`~dpstudio.engine.learning.federated_plan.cape_factor`).
``shuffle``
    The local variant's messages (each site pre-weights its update by its public size)
    pass through a shuffler, so the server sees them without their senders. The
    amplification bound of :mod:`dpstudio.engine.shuffle.amplification` (Feldman,
    McMillan & Talwar 2021) is for n users each holding one input and applying an
    ε₀-LDP randomizer to it; a site's message is DP per *record*, not per site (any two
    site datasets are not ε₀-indistinguishable), and with a few sites there are no
    clones to hide among. The bound does not apply, so no amplification is credited:
    the ε reported is the local variant's, pessimistic; the utility is local's too.

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
from dataclasses import dataclass, field

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import count, positive
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.learning.dpsgd import (
    _noisy_sum_float,
    _noisy_sum_lattice,
    clip_gradients,
    poisson_batch,
)
from dpstudio.engine.learning.federated_plan import (
    AggregatePlan,
    LocalPlan,
    plan_aggregate,
    plan_local,
)
from dpstudio.engine.learning.models import Model
from dpstudio.engine.learning.sites import Sites, sites_from_column
from dpstudio.engine.local.tally import simulation_generator
from dpstudio.engine.rng import Source, require_secure
from dpstudio.jobs import State, check

__all__ = ["TRUSTS", "VARIANTS", "FederatedResult", "secure_total", "train_federated"]

VARIANTS = ("none", "local", "secagg", "cape", "shuffle")

TRUSTS = {
    "none": "Trusts the aggregator and every site with the exact updates: no privacy.",
    "local": "Trusts no one: each site's noisy update protects its records against the "
             "aggregator and the other sites.",
    "secagg": "Trusts the secure-aggregation protocol and that at most the declared "
              "number of sites collude with the server: the server sees only the noisy "
              "sum.",
    "cape": "Trusts that the common randomness is generated honestly and that no site "
            "colludes with the aggregator: each message is protected alone, and only "
            "the sum is as accurate as central DP.",
    "shuffle": "Trusts the shuffler to hide which site sent which update; no "
               "amplification is credited for it, so the guarantee is the local one.",
}


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

    def to_dict(self) -> dict:
        """What an export may publish.

        Returns
        -------
        dict
            ``params``, ``epsilon``, ``delta``, ``accountant``, ``variant``, ``trusts``,
            ``per_round``, ``simulated``, ``details``.
        """
        return {"params": [float(t) for t in self.params], "epsilon": self.epsilon,
                "delta": self.delta, "accountant": self.accountant,
                "variant": self.variant, "trusts": self.trusts,
                "per_round": None if self.per_round is None else list(self.per_round),
                "simulated": self.simulated, "details": self.details}


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
                     draws: _Draws) -> np.ndarray:
    """E steps of DP-SGD at one site (its own plan: qᵢ, σᵢ, lattice)."""
    m = X.shape[0]
    denominator = plan.sample_rate * m
    for _ in range(steps):
        idx = draws.poisson(m, plan.sample_rate)
        clipped = clip_gradients(model.per_example_gradients(theta, X[idx], y[idx]),
                                 plan.clip)
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
    if draws.release:
        steps = np.rint(clipped / plan.grid).astype(np.int64)
        total = steps.sum(axis=0) if steps.shape[0] else np.zeros(dimension, np.int64)
        return total + draws.lattice(plan.share_std / plan.grid, dimension)
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


def secure_total(messages: np.ndarray, source: Source) -> np.ndarray:
    """The sum of the sites' integer messages as secure aggregation gives it to the server.

    Every site masks its message (pairwise and self masks from seeds drawn from
    ``source``, integers modulo 2⁶⁴); the server receives only the masked messages and
    unmasks their sum. Two's complement makes the signed sum exact while it stays within
    ±2⁶³ (lattice steps of clipped gradients and their noise are far below that).

    Parameters
    ----------
    messages : numpy.ndarray of int64, shape (h, d)
        Each site's message: its clipped sum on the lattice plus its noise share.
    source : Source
        The OS CSPRNG of the release (the key agreement's and masks' seeds).

    Returns
    -------
    numpy.ndarray of int64, shape (d,)
        Σ messages, as unmasked by the server.
    """
    from dpstudio.engine.distributed.secagg import setup_session

    m = np.asarray(messages, dtype=np.int64)
    if m.shape[0] < 2:  # one site: nothing to hide its message among
        return m.sum(axis=0)
    session = setup_session(m.shape[0], 64, m.shape[1], source)
    return session.aggregate(m, np.arange(m.shape[0])).view(np.int64)


def _aggregate_step(model: Model, theta, parts, plan: AggregatePlan, variant: str,
                    draws: _Draws, lr: float) -> np.ndarray:
    """One aggregated DP-SGD step over the participating sites' (X, y) parts."""
    d = model.dimension
    messages = []
    for Xs, ys in parts:
        idx = draws.poisson(Xs.shape[0], plan.sample_rate)
        clipped = clip_gradients(model.per_example_gradients(theta, Xs[idx], ys[idx]),
                                 plan.clip)
        messages.append(_site_message(clipped, plan, draws, d))
    messages = np.array(messages)
    if variant == "cape":
        messages = messages + _common_parts(plan, len(parts), draws, d)
    # The server (through secure aggregation, or adding the CAPE messages) gets the sum.
    if draws.release and variant == "secagg":
        total = secure_total(messages, draws.source)
    else:
        total = messages.sum(axis=0)
    if draws.release:
        total = total.astype(np.float64) * plan.grid
    denominator = plan.sample_rate * sum(p[0].shape[0] for p in parts)
    return theta - lr * (total / denominator + model.lam * theta)


def train_federated(X, y, sites, model: Model, variant: str, *, epsilon: float | None,
                    delta: float | None, rounds: int, local_steps: int, lr: float,
                    batch_size: int, fraction: float = 1.0, clip: float = 1.0,
                    source: Source | None = None, rng: np.random.Generator | None = None,
                    evaluate: Callable | None = None, state: State | None = None,
                    colluding: int = 0, cape_ratio: float = 10.0, init_seed: int = 0,
                    accountant: str = "pld") -> FederatedResult:
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
    batch_size : int
        B: the local minibatch (expected size of the Poisson batch of a site of average
        size for secagg and cape; of each site for local and shuffle).
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
        Sites per round that may collude with the server (secagg): their shares are not
        counted on.
    cape_ratio : float, optional
        κ, the zero-sum part's variance over the sum's noise variance (cape), ≥ ½.
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
    b = count("the batch size", batch_size)
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
    if private:
        eps = validate_epsilon(epsilon)
        dl = validate_delta(delta, required=True)
        if variant in ("local", "shuffle"):
            plan = plan_local(sizes, d, b, r * e, e, c, eps, dl, eta, accountant)
        else:
            plan = plan_aggregate(variant, X.shape[0], sites.count, k, d, b, r * e, e, c,
                                  eps, dl, colluding=colluding, cape_ratio=cape_ratio,
                                  accountant=accountant)

    theta = model.init(init_seed)
    metrics = []
    for rnd in range(r):
        check(state)
        chosen = draws.choose_sites(sites.count, k)
        weights = sizes[chosen] / sizes[chosen].sum()
        if variant in ("secagg", "cape"):
            for _ in range(e):
                check(state)
                theta = _aggregate_step(model, theta, [parts[i] for i in chosen], plan,
                                        variant, draws, eta)
        else:
            updates = []
            for i in chosen:
                check(state)
                Xs, ys = parts[i]
                if variant == "none":
                    new = _local_update(model, theta, Xs, ys, e, eta, b, draws.gen)
                else:
                    new = _local_dp_update(model, theta, Xs, ys, e, eta, plan.sites[i],
                                           draws)
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
    if plan is None:
        return FederatedResult(theta, metrics, math.inf, 0.0, "none", variant,
                               TRUSTS[variant], None, not draws.release, details)
    details.update(plan.to_dict())
    return FederatedResult(theta, metrics, plan.epsilon, plan.delta, accountant, variant,
                           TRUSTS[variant], tuple(plan.per_round), not draws.release,
                           details)
