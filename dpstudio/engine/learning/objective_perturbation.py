"""Objective perturbation: a random linear term in the objective, then its exact minimizer.

On rows with ‖x‖₂ ≤ 1 and labels ±1, logistic regression minimizes

    J(θ) = (1/n) Σᵢ ℓ(yᵢθᵀxᵢ) + (λ/2)‖θ‖² + (Δₙ/2)‖θ‖² + (1/n) bᵀθ,

with ℓ(z) = log(1 + e^{−z}): |ℓ′| ≤ 1 (ζ = 1, the gradient's norm bound) and
0 ≤ ℓ″ ≤ c = 1/4, the Hessian ℓ″·xxᵀ of rank one. Neighbours: one record replaced, n
public (the papers' relation).

Pure ε (δ = 0): Chaudhuri, Monteleoni & Sarwate 2011 (JMLR 12), Algorithm 2 and
Theorem 9, with Λ = λ:
    ε′ = ε₁ − log(1 + 2c/(nλ) + c²/(n²λ²));
    if ε′ > 0, Δ = 0; else Δ = c/(n(e^{ε₁/4} − 1)) − λ and ε′ = ε₁/2;
    b has density ∝ exp(−β‖b‖) with β = ε′/2 (its norm is Gamma(p, 1/β), its direction
    uniform); Δₙ = Δ.
(ε, δ): Kifer, Smith & Thakurta 2012 (COLT), Algorithm 1 and Theorem 2 (the GLM case,
rank-one Hessian with eigenvalue ≤ c):
    Δ = 2c/ε₁ (the least their condition Δ ≥ 2c/ε allows), Δₙ = Δ/n;
    b ~ N(0, σ_b² I) with σ_b² = ζ²(8 log(2/δ₁) + 4ε₁)/ε₁².
Both need λ > 0 here (the solver's certificate needs strong convexity), ‖x‖₂ ≤ 1 (the
features' declared bounds give it) and a loss with bounded slope and curvature: ridge
regression's squared loss has an unbounded slope on unbounded θ, so it is refused.

The solver's tolerance
----------------------
The theorems are about the exact minimizer θ*; the solver returns θ̂ with a certified
‖∇J(θ̂)‖₂ ≤ g_tol, so ‖θ̂ − θ*‖₂ ≤ r = g_tol/(λ + Δₙ) (strong convexity). The release is
snap(θ̂) + Z on a lattice gℤᵖ, Z discrete Laplace of S/ε₂ steps per coordinate with
S = ⌈√p·r/g⌉ + p ≥ ‖snap(θ̂) − snap(θ*)‖₁ in steps. snap(θ*) + Z is (ε₁, δ₁)-DP
(post-processing), and for every b the two outputs' probabilities are within e^{ε₂} of each
other, so the release is (ε₁ + 2ε₂, e^{ε₂}δ₁)-DP. Here ε₂ = ε/200 and δ₁ = δe^{−ε₂}: the
guarantee is exactly the (ε, δ) asked for. b is drawn from the source's bits in floating
point (inverse CDFs on 53-bit uniforms); the papers' proofs assume a continuous b.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from dpstudio.engine.additive import IntegerNoise, fine_grid
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.entry import DELTA, EPSILON, MechanismInfo, Param
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.learning.features import _validate_lambda
from dpstudio.engine.learning.logistic import gradient_tolerance
from dpstudio.engine.learning.newton import minimize_logistic
from dpstudio.engine.learning.output_perturbation import snap
from dpstudio.engine.rng import Source, require_secure
from dpstudio.engine.special import gammaincinv, ndtri

__all__ = [
    "ENTRIES",
    "ObjectiveERM",
    "LOGISTIC_SMOOTHNESS",
    "ObjectivePerturbation",
    "ObjectiveRelease",
    "calibrate_objective_perturbation",
    "draw_linear_term",
    "release_objective_logistic",
    "simulate_objective_logistic",
]

LOGISTIC_SMOOTHNESS = 0.25  # c: ℓ″(z) = σ(z)σ(−z) ≤ 1/4
LOGISTIC_LIPSCHITZ = 1.0  # ζ: |ℓ′| ≤ 1 and ‖x‖ ≤ 1
_TOLERANCE_SHARE = 1.0 / 200.0  # ε₂ = ε/200, spent twice (see the module's docstring)


@dataclass(frozen=True)
class ObjectivePerturbation:
    """The calibrated perturbation, from p, n, λ, ε and δ alone.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee of the release.
    epsilon_objective, delta_objective : float
        ε₁ = ε − 2ε₂ and δ₁ = δe^{−ε₂}, given to the paper's algorithm.
    family : str
        ``"gamma-norm"`` (δ = 0, CMS Algorithm 2) or ``"gaussian"`` (KST Algorithm 1).
    dimension, n : int
        p and n.
    lam : float
        λ.
    smoothness : float
        c, the bound on ℓ″.
    extra_regularization : float
        Δ in the paper's own scale (CMS: added as (Δ/2)‖θ‖²; KST: as (Δ/2n)‖θ‖²).
    regularization_added : float
        Δₙ, the coefficient added to the mean objective's (·/2)‖θ‖².
    epsilon_prime : float or None
        CMS's ε′ (β = ε′/2); None for the Gaussian form.
    beta : float or None
        The Gamma-norm rate β; None for the Gaussian form.
    sigma_b : float or None
        KST's per-coordinate std of b; None for the pure form.
    tolerance_radius : float
        r = g_tol/(λ + Δₙ), the certified distance from θ̂ to θ*.
    output_noise : IntegerNoise
        The lattice noise that covers r (discrete Laplace, ε₂).
    """

    epsilon: float
    delta: float
    epsilon_objective: float
    delta_objective: float
    family: str
    dimension: int
    n: int
    lam: float
    smoothness: float
    extra_regularization: float
    regularization_added: float
    epsilon_prime: float | None
    beta: float | None
    sigma_b: float | None
    tolerance_radius: float
    output_noise: IntegerNoise

    def to_dict(self) -> dict:
        """The plan as a plain dict (for JSON and manifests)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "output_noise"}
        out["output_noise"] = self.output_noise.to_dict()
        return out


def calibrate_objective_perturbation(dimension: int, n: int, lam: float, epsilon: float,
                                     delta: float = 0.0, loss: str = "logistic"
                                     ) -> ObjectivePerturbation:
    """Calibrate objective perturbation (see the module's docstring for the formulas).

    Parameters
    ----------
    dimension : int
        p, the number of coefficients (features plus intercept).
    n : int
        Number of records (public under replace-one).
    lam : float
        λ > 0.
    epsilon : float
        ε > 0.
    delta : float, optional
        0 for CMS's pure form; in (0, 1) for KST's Gaussian form.
    loss : {"logistic", "squared"}, optional
        The model's loss; only the logistic loss meets the conditions.

    Returns
    -------
    ObjectivePerturbation

    Raises
    ------
    QueryError
        If the loss does not meet the conditions, or n < 1.
    ParameterError
        If ε, δ or λ is out of range.
    """
    if loss != "logistic":
        raise QueryError("objective perturbation needs a loss with a bounded slope; the "
                         "squared loss of linear regression has none, so train it with "
                         "DP-SGD")
    eps = validate_epsilon(epsilon)
    dl = validate_delta(delta)
    try:
        lam = _validate_lambda(lam)
    except ParameterError:
        raise ParameterError("objective perturbation needs λ > 0: the regularizer makes "
                             "the objective strongly convex, which its privacy proof "
                             "and solver rely on") from None
    n, p = int(n), int(dimension)
    if n < 1:
        raise QueryError("no records to fit")
    c = LOGISTIC_SMOOTHNESS
    eps2 = eps * _TOLERANCE_SHARE
    eps1 = eps - 2.0 * eps2
    if dl == 0:
        # CMS 2011, Algorithm 2, steps 1–3.
        eps_prime = eps1 - math.log1p(2.0 * c / (n * lam) + c * c / (n * lam) ** 2)
        if eps_prime > 0:
            big_delta = 0.0
        else:
            big_delta = c / (n * math.expm1(eps1 / 4.0)) - lam
            eps_prime = eps1 / 2.0
        beta = eps_prime / 2.0
        added, sigma_b, d1, family = big_delta, None, 0.0, "gamma-norm"
    else:
        # KST 2012, Algorithm 1: Δ ≥ 2c/ε and b ~ N(0, ζ²(8 log(2/δ) + 4ε)/ε² · I).
        d1 = dl * math.exp(-eps2)
        big_delta = 2.0 * c / eps1
        sigma_b = LOGISTIC_LIPSCHITZ * math.sqrt(8.0 * math.log(2.0 / d1) + 4.0 * eps1) / eps1
        added, eps_prime, beta, family = big_delta / n, None, None, "gaussian"
    radius = gradient_tolerance(n) / (lam + added)
    shift = math.sqrt(p) * radius
    grid = fine_grid(shift)
    steps = math.ceil(shift / grid * (1.0 + 1e-12)) + p  # ℓ₁ of the snapped difference
    noise = IntegerNoise("objective_perturbation", "laplace", steps / eps2, grid, steps, 1,
                         eps2, 0.0, "covers the solver's certified tolerance")
    return ObjectivePerturbation(eps, dl, eps1, d1, family, p, n, lam, c, big_delta, added,
                                 eps_prime, beta, sigma_b, radius, noise)


def _uniforms(source: Source, size: int) -> np.ndarray:
    """Uniforms in (0, 1) from 53-bit words (the centre of each cell, never 0 or 1)."""
    words = source.uint64(size) >> np.uint64(11)
    return (words.astype(np.float64) + 0.5) * 2.0 ** -53


def draw_linear_term(plan: ObjectivePerturbation, source: Source, size: int = 1
                     ) -> np.ndarray:
    """Draws of b: Gamma(p, 1/β) norm times a uniform direction, or N(0, σ_b² I).

    Parameters
    ----------
    plan : ObjectivePerturbation
        The calibration.
    source : Source
        Random bits.
    size : int, optional
        Number of draws.

    Returns
    -------
    numpy.ndarray, shape (size, p)
    """
    p = plan.dimension
    normals = ndtri(_uniforms(source, size * p)).reshape(size, p)
    if plan.family == "gaussian":
        return normals * plan.sigma_b
    norms = gammaincinv(float(p), _uniforms(source, size)) / plan.beta
    lengths = np.linalg.norm(normals, axis=1)
    return normals / lengths[:, None] * norms[:, None]


def _minimize(X, y, mu, b) -> np.ndarray:
    """The shared certified Newton solver on J, to ‖∇J‖ ≤ g_tol/2 (:mod:`.newton`)."""
    return minimize_logistic(X, y, mu, gradient_tolerance(X.shape[0]), b=b)[0]


@dataclass(frozen=True)
class ObjectiveRelease:
    """Logistic-regression coefficients released by objective perturbation.

    Attributes
    ----------
    theta : numpy.ndarray, shape (p,)
        The released coefficients (normalized feature space, intercept last), on the
        lattice.
    plan : ObjectivePerturbation
        The calibration.
    epsilon, delta : float
        The guarantee.
    simulated : bool
        True unless drawn from the OS CSPRNG as a release.
    utility : dict
        Analyst-only figures read off the data without noise; never published.
    """

    theta: np.ndarray
    plan: ObjectivePerturbation
    epsilon: float
    delta: float
    simulated: bool
    utility: dict = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """What an export may publish: coefficients, the calibration and the guarantee.

        Returns
        -------
        dict
        """
        return {"normalized_theta": [float(t) for t in self.theta], "epsilon": self.epsilon,
                "delta": self.delta, "simulated": self.simulated,
                "plan": self.plan.to_dict()}


def _run(X, y, lam, epsilon, delta, source, simulated) -> ObjectiveRelease:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise QueryError("the rows and the labels differ in length")
    if np.any(np.einsum("ij,ij->i", X, X) > 1.0 + 1e-12):
        raise QueryError("objective perturbation needs rows with ‖x‖₂ ≤ 1: map the "
                         "features by their declared bounds (design_matrix)")
    if not np.isin(y, (-1.0, 1.0)).all():
        raise QueryError("the labels must be ±1 (binary_labels)")
    plan = calibrate_objective_perturbation(X.shape[1], X.shape[0], lam, epsilon, delta)
    b = draw_linear_term(plan, source)[0]
    theta_hat = _minimize(X, y, lam + plan.regularization_added, b)
    noise = plan.output_noise
    released = (snap(theta_hat, noise.grid) + noise.sample(theta_hat.size, source)
                ).astype(np.float64) * noise.grid
    utility = {"accuracy_private": float(np.mean(np.sign(X @ released) == y)),
               "linear_term_norm": float(np.linalg.norm(b))}
    return ObjectiveRelease(released, plan, plan.epsilon, plan.delta, simulated, utility)


def release_objective_logistic(X: np.ndarray, y: np.ndarray, lam: float, epsilon: float,
                               delta: float, source: Source) -> ObjectiveRelease:
    """Release logistic regression by objective perturbation; ``source`` must be secure.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, p)
        Rows with ‖x‖₂ ≤ 1 (:func:`~dpstudio.engine.learning.features.design_matrix`).
    y : numpy.ndarray, shape (n,)
        Labels ±1.
    lam : float
        λ > 0.
    epsilon : float
        ε > 0.
    delta : float
        0 (CMS, pure) or in (0, 1) (KST, Gaussian).
    source : SecureSource
        The OS CSPRNG.

    Returns
    -------
    ObjectiveRelease
        With ``simulated=False``.

    Raises
    ------
    InsecureSourceError
        If ``source`` is not the OS CSPRNG.
    QueryError, ParameterError
        As :func:`calibrate_objective_perturbation`, or rows outside the unit ball.
    EngineError
        If the solver cannot certify its tolerance.
    """
    require_secure(source)
    return _run(X, y, lam, epsilon, delta, source, False)


def simulate_objective_logistic(X: np.ndarray, y: np.ndarray, lam: float, epsilon: float,
                                delta: float, source: Source) -> ObjectiveRelease:
    """As :func:`release_objective_logistic` with any source (seeded for simulation).

    Parameters
    ----------
    X, y, lam, epsilon, delta
        As :func:`release_objective_logistic`.
    source : Source
        Any source.

    Returns
    -------
    ObjectiveRelease
        With ``simulated=True``.

    Raises
    ------
    QueryError, ParameterError, EngineError
        As :func:`release_objective_logistic`.
    """
    return _run(X, y, lam, epsilon, delta, source, True)


# ---------------------------------------------------------------------------- registry

@dataclass(frozen=True)
class ObjectiveERM:
    """What ``REGISTRY.get("dp_objective_logistic").build(...)`` returns.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee (δ = 0: CMS's pure form; δ > 0: KST's Gaussian form).
    lam : float
        Regularization strength λ > 0.
    """

    epsilon: float
    delta: float
    lam: float

    def calibrate(self, dimension: int, n: int, loss: str = "logistic"
                  ) -> ObjectivePerturbation:
        """:func:`calibrate_objective_perturbation` with this entry's ε, δ and λ.

        Parameters
        ----------
        dimension : int
            p, the number of coefficients.
        n : int
            Number of records.
        loss : str, optional
            The model's loss (only ``"logistic"`` meets the conditions).

        Returns
        -------
        ObjectivePerturbation
        """
        return calibrate_objective_perturbation(dimension, n, self.lam, self.epsilon,
                                                self.delta, loss)

    def release(self, X: np.ndarray, y: np.ndarray, source: Source) -> ObjectiveRelease:
        """:func:`release_objective_logistic` with this entry's ε, δ and λ.

        Parameters
        ----------
        X, y, source
            As :func:`release_objective_logistic`.

        Returns
        -------
        ObjectiveRelease
        """
        return release_objective_logistic(X, y, self.lam, self.epsilon, self.delta, source)

    def simulate(self, X: np.ndarray, y: np.ndarray, source: Source) -> ObjectiveRelease:
        """:func:`simulate_objective_logistic` with this entry's ε, δ and λ.

        Parameters
        ----------
        X, y, source
            As :func:`simulate_objective_logistic`.

        Returns
        -------
        ObjectiveRelease
        """
        return simulate_objective_logistic(X, y, self.lam, self.epsilon, self.delta, source)


#: The registry entries of this module (registered by :mod:`dpstudio.engine.mechanisms`).
ENTRIES = (
    MechanismInfo(
        name="dp_objective_logistic",
        label="DP logistic regression (objective perturbation)",
        description="Adds a random linear term to the regularized logistic objective "
        "and releases its minimizer.",
        trust_models=("central",),
        value_types=("numeric", "integer", "boolean"),
        kind="model",
        params=(
            EPSILON,
            # δ = 0 selects CMS's pure-ε form; δ > 0 KST's Gaussian form.
            replace(DELTA, default=0.0, low_open=False, log_scale=False,
                    help="0: Chaudhuri–Monteleoni–Sarwate, pure ε-DP; above 0: "
                    "Kifer–Smith–Thakurta's Gaussian form, (ε, δ)-DP. Keep δ well "
                    "below 1/n."),
            Param("lambda", "float", 0.01,
                  "Regularization strength λ: larger λ means less extra regularization "
                  "and a smaller noise term, but a more shrunken model.",
                  low=0.0, low_open=True, high=100.0, log_scale=True, label="λ"),
        ),
        factory=lambda epsilon=1.0, delta=0.0, **kw: ObjectiveERM(
            epsilon, delta, kw.get("lambda", 0.01)),
        # No query of its own yet: ``dpstudio train`` and the analysis layer's training run
        # name the entry by method; a project release of a training run comes later.
        queries=(),
        references=("Chaudhuri, Monteleoni & Sarwate 2011",
                    "Kifer, Smith & Thakurta 2012"),
    ),
)
