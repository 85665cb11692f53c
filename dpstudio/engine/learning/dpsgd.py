"""DP-SGD (Abadi et al. 2016): Poisson-sampled, clipped, noisy gradient steps.

Algorithm
---------
For t = 1 … T, on rows with ‖x‖₂ ≤ 1 and any :mod:`.models` model:

1. **Poisson sampling**: each of the n examples joins the batch independently with
   probability q (not shuffled fixed-size batches: the accountant's subsampled Gaussian
   assumes this). A release decides each example from 32 fresh bits of the OS CSPRNG,
   ``u < ⌊q·2³²⌋``, so the rate run is q′ = ⌊q·2³²⌋/2³² ≤ q; a smaller rate only
   amplifies more, so the ε accounted at q is an upper bound.
2. **Clipping**: each example's loss gradient gᵢ becomes gᵢ·min(1, C/‖gᵢ‖₂), with a
   margin so that ‖ḡᵢ‖₂ ≤ C holds in floating point, not only in exact arithmetic
   (:func:`clip_gradients`).
3. **Noise**: the sum of the clipped gradients gets N(0, σ²S²) per coordinate, where S is
   the sum's ℓ₂ sensitivity under add/remove-one (below) and σ the noise multiplier.
4. **Step**: θ ← θ − η·(noisy sum/B + λθ), B the expected batch. σ, q, T and ε depend on
   no size (:func:`plan_dpsgd` takes q, T, C, δ and ε only), so neighbouring datasets get
   the same plan. The divisor B is the plan's ``expected_batch`` when the analyst
   declares it (public: the step is then post-processing of the noisy sums alone);
   without it B = q·n, which reads n — under add/remove n is private, so declare
   ``expected_batch`` for a release whose steps must not depend on n. λθ reads no data.

Release noise on a lattice
--------------------------
A release draws nothing in floating point (Mironov 2012): every clipped gradient is
snapped to a grid g (a power of two with σC/g in [2¹⁵, 2¹⁶), :func:`~dpstudio.engine
.additive.fine_grid`) and the snapped integers are summed exactly (int64); snapping moves
each coordinate by at most g/2, so one example changes the integer sum by at most
S = C + √d·g/2 in ℓ₂ (value units). The noise is the engine's exact discrete Gaussian of
σ·S/g grid steps per coordinate (:func:`~dpstudio.engine.sampling.discrete_gaussian`,
from the release's :class:`~dpstudio.engine.rng.SecureSource`). The accountant
(:func:`~dpstudio.engine.accounting.dpsgd.dpsgd_epsilon`, PLD of the Poisson-subsampled
Gaussian, add/remove neighbours) is asked about noise multiplier σ relative to that S,
so snapping is paid for. At ≥ 2¹⁵ grid steps per σ the discrete Gaussian is accounted as
the continuous one of the same σ: its zCDP is the same, ρ = 1/(2σ²) per step (Canonne,
Kamath & Steinke 2020, multivariate discrete Gaussian), but the PLD is the continuous
Gaussian's, an approximation at this resolution, not a proven bound.

A simulation (:func:`simulate_dpsgd`) runs the same steps with a seeded numpy generator
(:func:`~dpstudio.engine.local.tally.simulation_generator`): Bernoulli(q) membership and
continuous N(0, σ²S²) noise on the unsnapped sum, the same S; its numbers are for
planning and tests, never a release.

The run is a job ``run(params, state)`` (:func:`run`, :mod:`dpstudio.jobs`): progress
after each step, cancellation between steps.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from dpstudio.engine.accounting.dpsgd import DPSGD_METHODS, dpsgd_epsilon, dpsgd_sigma
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.additive import fine_grid
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import count, positive
from dpstudio.engine.checks import sample_rate as _check_rate
from dpstudio.engine.entry import DELTA, EPSILON, MechanismInfo, Param
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.local.tally import simulation_generator
from dpstudio.engine.rng import Source, require_secure
from dpstudio.engine.sampling import discrete_gaussian
from dpstudio.jobs import State, check

if TYPE_CHECKING:  # the registry loads this module's entry: no scipy.optimize at startup
    from dpstudio.engine.learning.models import Model

__all__ = [
    "ENTRIES",
    "DPSGDTrainer",
    "DPSGDJob",
    "DPSGDPlan",
    "DPSGDResult",
    "clip_gradients",
    "clipped_batch",
    "plan_dpsgd",
    "plan_loss",
    "poisson_batch",
    "release_dpsgd",
    "run",
    "simulate_dpsgd",
    "steps_for_epochs",
]

# Clipping scales by C/‖g‖·(1 − 2⁻⁴⁰): the product's rounding (a few ulp) cannot push the
# norm back above C.
_CLIP_MARGIN = 1.0 - 2.0 ** -40
_RATE_BITS = 32  # bits per Poisson decision in a release
_MIN_RATE = 2.0 ** -_RATE_BITS


def steps_for_epochs(epochs: float, sample_rate: float) -> int:
    """T = ⌈epochs/q⌉: the steps that visit each example ``epochs`` times on average.

    Parameters
    ----------
    epochs : float
        Passes over the data, > 0.
    sample_rate : float
        Poisson rate q in (0, 1].

    Returns
    -------
    int
        T ≥ 1.

    Raises
    ------
    ParameterError
        If epochs or q is out of range.
    """
    e = positive("epochs", epochs)
    q = _check_rate(sample_rate)
    return max(1, math.ceil(e / q - 1e-9))


@dataclass(frozen=True)
class DPSGDPlan:
    """Everything fixed before the data is read: rate, steps, clipping, noise, guarantee.

    Attributes
    ----------
    sample_rate : float
        Poisson rate q.
    steps : int
        T.
    noise_multiplier : float
        σ: the noise std over the sensitivity S.
    clip : float
        C, the per-example gradient norm bound.
    dimension : int
        d, the number of parameters.
    grid : float
        The release lattice's step g (value units).
    sensitivity : float
        S = C + √d·g/2, the noisy sum's ℓ₂ sensitivity (add/remove one example).
    noise_std : float
        σ·S, the noise std per coordinate of the sum.
    learning_rate : float
        η.
    epsilon, delta : float
        The accountant's ε for (q, σ, T) at δ: the guarantee of the whole run.
    accountant : str
        ``"pld"`` (default) or ``"rdp"``.
    expected_batch : float or None
        B, the declared expected batch: the public divisor of each noisy sum (None: q·n,
        which reads n; see the module's docstring).
    """

    sample_rate: float
    steps: int
    noise_multiplier: float
    clip: float
    dimension: int
    grid: float
    sensitivity: float
    noise_std: float
    learning_rate: float
    epsilon: float
    delta: float
    accountant: str
    expected_batch: float | None = None

    def to_dict(self) -> dict:
        """The fields as a plain dict (for JSON and manifests)."""
        return asdict(self)


def plan_dpsgd(dimension: int, sample_rate: float, steps: int, clip: float, delta: float, *,
               epsilon: float | None = None, noise_multiplier: float | None = None,
               learning_rate: float = 0.5, accountant: str = "pld",
               expected_batch: float | None = None) -> DPSGDPlan:
    """Plan a run: σ calibrated to a target ε, or the ε of a given σ.

    With ``epsilon``, σ is the smallest (to a relative 1e−4, by bisection) whose
    accountant ε for (q, σ, T) is ≤ the target
    (:func:`~dpstudio.engine.accounting.dpsgd.dpsgd_sigma`): the guarantee errs on the
    pessimistic side. Either way the plan's ``epsilon`` is the accountant's for the
    (q, σ, T) that will run.

    Parameters
    ----------
    dimension : int
        d, the model's number of parameters.
    sample_rate : float
        Poisson rate q in [2⁻³², 1].
    steps : int
        T ≥ 1 (see :func:`steps_for_epochs`).
    clip : float
        C > 0.
    delta : float
        δ in (0, 1).
    epsilon : float, optional
        Target ε > 0; give this or ``noise_multiplier``.
    noise_multiplier : float, optional
        σ > 0; give this or ``epsilon``.
    learning_rate : float, optional
        η > 0.
    accountant : {"pld", "rdp"}, optional
        The accountant (both upper bounds; the GDP approximation is refused here).
    expected_batch : float, optional
        B > 0, the declared expected batch, the public divisor of each noisy sum (None:
        q·n at run time). It sets the step's scale only, never σ or ε.

    Returns
    -------
    DPSGDPlan

    Raises
    ------
    ParameterError
        If a parameter is out of range, both or neither of ε and σ is given, or no σ
        reaches ε.
    """
    d = count("the number of parameters", dimension)
    q = _check_rate(sample_rate)
    if q < _MIN_RATE:
        raise ParameterError(f"the sampling rate must be at least 2⁻³² ({_MIN_RATE:.3g})")
    t = count("steps", steps)
    c = positive("the clipping norm C", clip)
    dl = validate_delta(delta, required=True)
    eta = positive("the learning rate", learning_rate)
    if accountant not in DPSGD_METHODS or accountant == "gdp":
        raise ParameterError("the accountant must be pld or rdp (gdp is an approximation, "
                             "not a guarantee)")
    if (epsilon is None) == (noise_multiplier is None):
        raise ParameterError("give either a target ε or a noise multiplier σ, not both")
    if epsilon is not None:
        acc = dpsgd_sigma(validate_epsilon(epsilon), dl, q, t, accountant)
    else:
        acc = dpsgd_epsilon(positive("the noise multiplier σ", noise_multiplier), q, t, dl,
                            accountant)
    sigma = acc.sigma
    grid = fine_grid(sigma * c)
    sens = c + math.sqrt(d) * grid / 2.0
    batch = None if expected_batch is None else positive("the expected batch",
                                                           expected_batch)
    return DPSGDPlan(sample_rate=q, steps=t, noise_multiplier=sigma, clip=c, dimension=d,
                     grid=grid, sensitivity=sens, noise_std=sigma * sens,
                     learning_rate=eta, epsilon=acc.epsilon, delta=dl,
                     accountant=accountant, expected_batch=batch)


def plan_loss(plan: DPSGDPlan) -> LossDescription:
    """The loss description of a DP-SGD plan (see :meth:`DPSGDResult.loss_description`).

    Parameters
    ----------
    plan : DPSGDPlan
        The plan that ran.

    Returns
    -------
    LossDescription
    """
    return LossDescription("subsampled_gaussian", epsilon=plan.epsilon, delta=plan.delta,
                           scale=plan.noise_std, sensitivity=plan.sensitivity,
                           sample_rate=plan.sample_rate, steps=plan.steps)


def clip_gradients(grads: np.ndarray, clip: float) -> np.ndarray:
    """Each row scaled to ℓ₂ norm ≤ C (rows already within C are left as they are).

    Parameters
    ----------
    grads : numpy.ndarray, shape (b, d)
        Per-example gradients.
    clip : float
        C > 0.

    Returns
    -------
    numpy.ndarray, shape (b, d)
        Rows with ‖ḡᵢ‖₂ ≤ C in floating point.

    Raises
    ------
    ParameterError
        If C is not positive, or a gradient is not finite.
    """
    c = positive("the clipping norm C", clip)
    g = np.asarray(grads, dtype=np.float64)
    if not np.isfinite(g).all():
        raise ParameterError("a gradient is not finite; lower the learning rate")
    norms = np.linalg.norm(g, axis=1)
    scale = np.where(norms > c, c / np.maximum(norms, np.finfo(float).tiny) * _CLIP_MARGIN,
                     1.0)
    return g * scale[:, None]


def clipped_batch(model: Model, theta: np.ndarray, X: np.ndarray, y: np.ndarray,
                  idx: np.ndarray, clip: float) -> np.ndarray:
    """The clipped per-example gradients of the rows ``idx`` (none for an empty batch).

    An empty Poisson batch is an ordinary outcome (probability (1 − q)ⁿ): it contributes
    a zero sum, and the noise is drawn as for any other step.

    Parameters
    ----------
    model : Model
        The model.
    theta : numpy.ndarray
        The current parameters.
    X, y : numpy.ndarray
        All rows and labels.
    idx : numpy.ndarray of int
        The batch.
    clip : float
        C.

    Returns
    -------
    numpy.ndarray, shape (len(idx), d)
    """
    if idx.size == 0:  # not every model's per-example gradients take zero rows
        return np.zeros((0, model.dimension))
    return clip_gradients(model.per_example_gradients(theta, X[idx], y[idx]), clip)


def poisson_batch(n: int, sample_rate: float, source: Source | None = None,
                  gen: np.random.Generator | None = None) -> np.ndarray:
    """Indices of one Poisson batch: each of n examples in it independently w.p. q.

    Parameters
    ----------
    n : int
        Number of examples.
    sample_rate : float
        q in [2⁻³², 1].
    source : Source, optional
        For a release: decisions ``u < ⌊q·2³²⌋`` on 32-bit words (rate ≤ q).
    gen : numpy.random.Generator, optional
        For a simulation: ``uniform < q``. Exactly one of ``source`` and ``gen``.

    Returns
    -------
    numpy.ndarray of int64
        The chosen indices, increasing.

    Raises
    ------
    ParameterError
        If q is out of range or not exactly one of ``source`` and ``gen`` is given.
    """
    q = _check_rate(sample_rate)
    if (source is None) == (gen is None):
        raise ParameterError("give a source (release) or a generator (simulation)")
    if gen is not None:
        return np.flatnonzero(gen.random(int(n)) < q)
    if q >= 1.0:
        return np.arange(int(n))
    threshold = np.uint32(math.floor(q * 2.0 ** _RATE_BITS))
    return np.flatnonzero(source.uint32(int(n)) < threshold)


@dataclass
class DPSGDJob:
    """The parameters of one run (``run(params, state)``).

    Attributes
    ----------
    model : Model
        The model (:mod:`.models`).
    X : numpy.ndarray, shape (n, p)
        Rows with ‖x‖₂ ≤ 1.
    y : numpy.ndarray, shape (n,)
        Labels (±1, or in [−1, 1] for regression).
    plan : DPSGDPlan
        From :func:`plan_dpsgd`, for this model's dimension.
    source : Source
        The random source: the OS CSPRNG for a release, a seeded one for a simulation.
    release : bool
        True: Poisson bits and lattice noise from ``source`` (must be secure); False: a
        seeded numpy generator drawn from ``source``.
    init_seed : int
        Seed of the model's starting point (public).
    """

    model: Model
    X: np.ndarray
    y: np.ndarray
    plan: DPSGDPlan
    source: Source
    release: bool = False
    init_seed: int = 0


@dataclass(frozen=True)
class DPSGDResult:
    """A finished run.

    Attributes
    ----------
    theta : numpy.ndarray, shape (d,)
        The trained parameters (the release, for a release).
    plan : DPSGDPlan
        The plan that ran.
    epsilon, delta : float
        The accountant's guarantee for the (q, σ, T) run (= the plan's).
    steps : int
        T, all of them (a cancelled run raises instead of returning).
    simulated : bool
        True unless drawn from the OS CSPRNG as a release.
    batch_sizes : numpy.ndarray of int64
        The size of each Poisson batch (analyst-only: it depends on the data's n).
    """

    theta: np.ndarray
    plan: DPSGDPlan
    epsilon: float
    delta: float
    steps: int
    simulated: bool
    batch_sizes: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """What an export may publish: parameters, the plan and the guarantee.

        Returns
        -------
        dict
            ``theta``, ``epsilon``, ``delta``, ``steps``, ``simulated`` and ``plan``.
        """
        return {"theta": [float(t) for t in self.theta], "epsilon": self.epsilon,
                "delta": self.delta, "steps": self.steps, "simulated": self.simulated,
                "plan": self.plan.to_dict()}

    def loss_description(self) -> LossDescription:
        """What this run drew, for a ledger's tight accountants: the Poisson-subsampled
        Gaussian of noise std σS on a sum of ℓ₂ sensitivity S, rate q, T steps.

        A pld ledger composes it exactly as the accountant did (its ε at the plan's δ is
        the plan's ε); the claim is the accountant's (ε, δ).

        Returns
        -------
        LossDescription
            Family ``subsampled_gaussian`` with ``scale`` = σS, ``sensitivity`` = S,
            ``sample_rate`` = q and ``steps`` = T.
        """
        return plan_loss(self.plan)


def _noisy_sum_lattice(clipped: np.ndarray, plan: DPSGDPlan, source: Source) -> np.ndarray:
    """Σ snapped ḡᵢ (exact int64) + discrete Gaussian of σS/g steps, in value units."""
    steps = np.rint(clipped / plan.grid).astype(np.int64)
    total = steps.sum(axis=0) if steps.shape[0] else np.zeros(plan.dimension, np.int64)
    noise = discrete_gaussian(plan.noise_std / plan.grid, plan.dimension, source)
    return (total + noise).astype(np.float64) * plan.grid


def _noisy_sum_float(clipped: np.ndarray, plan: DPSGDPlan,
                     gen: np.random.Generator) -> np.ndarray:
    """Σ ḡᵢ + N(0, (σS)²) per coordinate (simulation)."""
    return clipped.sum(axis=0) + gen.normal(0.0, plan.noise_std, plan.dimension)


def _validate(job: DPSGDJob) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(job.X, dtype=np.float64)
    y = np.asarray(job.y, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise QueryError("the rows and the labels differ in length")
    if X.shape[0] == 0:
        raise QueryError("no records to train on")
    if job.plan.dimension != job.model.dimension:
        raise ParameterError("the plan was made for a model with another number of "
                             "parameters")
    if np.any(np.einsum("ij,ij->i", X, X) > 1.0 + 1e-12):
        raise QueryError("rows must have ‖x‖₂ ≤ 1: map the features by their declared "
                         "bounds (design_matrix)")
    return X, y


def run(params: DPSGDJob, state: State | None = None) -> DPSGDResult:
    """Run DP-SGD as a job: progress after each step, cancellation between steps.

    Parameters
    ----------
    params : DPSGDJob
        The model, data, plan and source.
    state : State, optional
        Progress and cancellation (:mod:`dpstudio.jobs`); None for none.

    Returns
    -------
    DPSGDResult

    Raises
    ------
    InsecureSourceError
        If ``params.release`` and the source is not the OS CSPRNG.
    QueryError
        For rows outside the unit ball or no records.
    ParameterError
        If the plan does not fit the model, or a gradient overflows.
    Cancelled
        If the state says so (between steps).
    """
    job = params
    if job.release:
        require_secure(job.source)
    X, y = _validate(job)
    plan, model = job.plan, job.model
    n = X.shape[0]
    gen = None if job.release else simulation_generator(job.source)
    theta = model.init(job.init_seed)
    # The declared expected batch when given (public); else q·n, which reads n (module
    # docstring). σ and ε never depend on n.
    denominator = (plan.expected_batch if plan.expected_batch is not None
                   else plan.sample_rate * n)
    sizes = np.empty(plan.steps, dtype=np.int64)
    every = max(1, plan.steps // 200)  # at most ~200 progress reports
    for t in range(plan.steps):
        check(state)
        if job.release:
            idx = poisson_batch(n, plan.sample_rate, source=job.source)
        else:
            idx = poisson_batch(n, plan.sample_rate, gen=gen)
        sizes[t] = idx.size
        clipped = clipped_batch(model, theta, X, y, idx, plan.clip)
        if job.release:
            noisy = _noisy_sum_lattice(clipped, plan, job.source)
        else:
            noisy = _noisy_sum_float(clipped, plan, gen)
        theta = theta - plan.learning_rate * (noisy / denominator + model.lam * theta)
        if state is not None and ((t + 1) % every == 0 or t + 1 == plan.steps):
            state.progress((t + 1) / plan.steps, f"step {t + 1} of {plan.steps}")
    return DPSGDResult(theta=theta, plan=plan, epsilon=plan.epsilon, delta=plan.delta,
                       steps=plan.steps, simulated=not job.release, batch_sizes=sizes)


def release_dpsgd(model: Model, X: np.ndarray, y: np.ndarray, plan: DPSGDPlan,
                  source: Source, state: State | None = None,
                  init_seed: int = 0) -> DPSGDResult:
    """Train and release with DP-SGD; ``source`` must be the OS CSPRNG.

    Parameters
    ----------
    model : Model
        The model.
    X : numpy.ndarray, shape (n, p)
        Rows with ‖x‖₂ ≤ 1.
    y : numpy.ndarray, shape (n,)
        Labels.
    plan : DPSGDPlan
        From :func:`plan_dpsgd`.
    source : SecureSource
        The OS CSPRNG.
    state : State, optional
        Progress and cancellation.
    init_seed : int, optional
        The model's public starting point.

    Returns
    -------
    DPSGDResult
        With ``simulated=False``.

    Raises
    ------
    InsecureSourceError, QueryError, ParameterError, Cancelled
        As :func:`run`.
    """
    return run(DPSGDJob(model, X, y, plan, source, True, init_seed), state)


def simulate_dpsgd(model: Model, X: np.ndarray, y: np.ndarray, plan: DPSGDPlan,
                   source: Source, state: State | None = None,
                   init_seed: int = 0) -> DPSGDResult:
    """As :func:`release_dpsgd` with a seeded numpy generator drawn from ``source``.

    Parameters
    ----------
    model, X, y, plan, state, init_seed
        As :func:`release_dpsgd`.
    source : Source
        Any source (a seeded :class:`~dpstudio.engine.rng.SimulationSource` reproduces
        the run).

    Returns
    -------
    DPSGDResult
        With ``simulated=True``.

    Raises
    ------
    QueryError, ParameterError, Cancelled
        As :func:`run`.
    """
    return run(DPSGDJob(model, X, y, plan, source, False, init_seed), state)


# ---------------------------------------------------------------------------- registry

@dataclass(frozen=True)
class DPSGDTrainer:
    """What ``REGISTRY.get("dp_sgd").build(...)`` returns: DP-SGD's settings.

    Attributes
    ----------
    epsilon, delta : float
        The target guarantee (δ > 0); the plan's ε is the accountant's for what runs.
    lam : float
        λ ≥ 0 of the regularizer (applied after the noise: it reads no data).
    epochs : float
        Passes over the data (T = ⌈epochs/q⌉ steps).
    batch_rate : float
        Poisson rate q.
    clip : float
        C, the per-example gradient norm bound.
    learning_rate : float
        η.
    expected_batch : float
        B, the declared expected batch (the public divisor of each noisy sum); 0 when
        not declared (a simulation then divides by q·n; a release is refused upstream).
    """

    epsilon: float
    delta: float
    lam: float
    epochs: float
    batch_rate: float
    clip: float
    learning_rate: float
    expected_batch: float = 0.0

    def calibrate(self, dimension: int, n: int | None = None) -> DPSGDPlan:
        """:func:`plan_dpsgd` for a model of ``dimension`` parameters (σ from the target ε).

        Parameters
        ----------
        dimension : int
            d, the model's number of parameters.
        n : int, optional
            Unused: the plan depends on q, T, C and δ only (kept for the entries' common
            ``calibrate(dimension, n)`` shape).

        Returns
        -------
        DPSGDPlan
        """
        steps = steps_for_epochs(self.epochs, self.batch_rate)
        return plan_dpsgd(dimension, self.batch_rate, steps, self.clip, self.delta,
                          epsilon=self.epsilon, learning_rate=self.learning_rate,
                          expected_batch=self.expected_batch or None)


#: The registry entries of this module (registered by :mod:`dpstudio.engine.mechanisms`).
ENTRIES = (
    MechanismInfo(
        name="dp_sgd",
        label="DP-SGD (gradient perturbation)",
        description="Trains by Poisson-sampled, clipped, noisy gradient steps; ε from "
        "the PLD accountant.",
        trust_models=("central",),
        value_types=("numeric", "integer", "boolean"),
        kind="model",
        params=(
            EPSILON,
            DELTA,
            Param("lambda", "float", 1e-4,
                  "Regularization strength λ ≥ 0, applied after the noise (it reads "
                  "no data).", low=0.0, high=100.0, label="λ"),
            Param("epochs", "float", 5.0,
                  "Passes over the data: T = ⌈epochs/q⌉ noisy steps; more steps cost "
                  "more ε, so σ grows.", low=0.0, low_open=True, high=1000.0,
                  log_scale=True, label="epochs"),
            Param("batch_rate", "float", 0.05,
                  "Poisson sampling rate q: each record joins a step's batch with "
                  "probability q.", low=0.0, low_open=True, high=1.0, log_scale=True,
                  label="q", shown_low=1e-4),
            Param("clip", "float", 1.0,
                  "Clipping norm C: each record's gradient is scaled to norm ≤ C.",
                  low=0.0, low_open=True, high=100.0, log_scale=True, label="C"),
            Param("learning_rate", "float", 0.5, "Learning rate η of each step.",
                  low=0.0, low_open=True, high=100.0, log_scale=True, label="η"),
            # 0 stands for "not declared" (a Param's default must be a valid value):
            # under add/remove n is private, so a release needs a declared B.
            Param("expected_batch", "float", 0.0,
                  "Expected batch B, the public divisor of each noisy gradient sum (e.g. "
                  "q × a public row count; per site for FedAvg); 0 leaves it undeclared, "
                  "which a simulation replaces by q·n and a release refuses.",
                  low=0.0, high=1e9, label="B", shown_high=1e6),
        ),
        factory=lambda epsilon=1.0, delta=1e-6, **kw: DPSGDTrainer(
            epsilon, delta, kw.get("lambda", 1e-4), kw.get("epochs", 5.0),
            kw.get("batch_rate", 0.05), kw.get("clip", 1.0),
            kw.get("learning_rate", 0.5), kw.get("expected_batch", 0.0)),
        needs_delta=True,
        # No query of its own yet: ``dpstudio train`` and the analysis layer's training run
        # name the entry by method; a project release of a training run comes later.
        queries=(),
        references=("Abadi et al. 2016", "Koskela, Jälkö & Honkela 2020"),
    ),
)
