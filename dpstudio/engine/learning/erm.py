"""DP-ERM by output perturbation: ℓ₂-regularized logistic regression (central model).

The release and its registry entry. The parts live in modules named for what they hold,
each with the part of the derivation it implements:

- :mod:`~dpstudio.engine.learning.features`: declared bounds → rows with ‖x‖₂ ≤ 1,
  labels → ±1;
- :mod:`~dpstudio.engine.learning.logistic`: the objective F, the certified solver and
  its sensitivity Δ₂;
- :mod:`~dpstudio.engine.learning.output_perturbation`: the lattice, the calibrated
  integer noise and snapping.

:func:`release_logistic` maps the data, calibrates the noise from p, n, λ, ε and δ alone,
fits θ̂ and releases it perturbed, as a :class:`ModelRelease`. The names of those modules
stay importable from here, where earlier code imports them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import bounds_pair
from dpstudio.engine.entry import DELTA, EPSILON, MechanismInfo, Param
from dpstudio.engine.errors import QueryError
from dpstudio.engine.learning.features import (
    INTERCEPT,
    _validate_lambda,
    binary_labels,
    design_matrix,
)
from dpstudio.engine.learning.logistic import (
    LIPSCHITZ,
    LogisticFit,
    _objective,
    fit_logistic,
    gradient_tolerance,
    sensitivity_l2,
)
from dpstudio.engine.learning.output_perturbation import (
    OutputPerturbation,
    calibrate_output_perturbation,
    perturb,
    snap,
)
from dpstudio.engine.rng import Source, require_secure

__all__ = [
    "ENTRIES",
    "INTERCEPT",
    "LIPSCHITZ",
    "LogisticERM",
    "LogisticFit",
    "ModelRelease",
    "OutputPerturbation",
    "binary_labels",
    "calibrate_output_perturbation",
    "design_matrix",
    "fit_logistic",
    "gradient_tolerance",
    "release_logistic",
    "perturb",
    "sensitivity_l2",
    "simulate_logistic",
    "snap",
]


# ---------------------------------------------------------------------------- release

@dataclass(frozen=True)
class ModelRelease:
    """A DP logistic-regression model.

    ``theta`` are the released coefficients in the normalized space (last one: the
    intercept feature). :meth:`to_table` gives them in the units of the declared features,
    valid within the bounds: logit P(y = 1 | x) = intercept + Σⱼ coefficientⱼ·xⱼ (values
    outside their bounds are clipped to them first). ``utility`` is for the analyst only
    (it reads the data without noise) and is never part of :meth:`to_dict`/:meth:`to_table`.

    Attributes
    ----------
    mechanism : str
        ``"dp_erm_logistic"``.
    features : tuple of str
        The d features, in the order of the coefficients.
    bounds : tuple of (float, float)
        Declared bounds of each feature.
    theta : numpy.ndarray, shape (d + 1,)
        The released coefficients in the normalized space.
    epsilon, delta : float
        The guarantee.
    rho : float or None
        zCDP ρ of the Gaussian form; None for Laplace.
    noise_family : str
        ``"laplace"`` or ``"gaussian"``.
    noise_scale : float
        Per-coordinate Laplace b or Gaussian σ, in the units of θ.
    grid : float
        The lattice's step, in the units of θ.
    sensitivity_l2, sensitivity_l1 : float
        Δ₂ and Δ₁ of θ̂ before snapping.
    n : int
        Number of records (public).
    lam : float
        λ.
    calibration : str
        How the noise was calibrated, for reports.
    simulated : bool
        True when drawn by :func:`simulate_logistic` (not a release).
    utility : dict
        Analyst-only diagnostics read off the data without noise (excess empirical risk,
        objectives, accuracies, gradient norm, Newton steps).
    """

    mechanism: str
    features: tuple[str, ...]
    bounds: tuple[tuple[float, float], ...]
    theta: np.ndarray
    epsilon: float
    delta: float
    rho: float | None
    noise_family: str
    noise_scale: float
    grid: float
    sensitivity_l2: float
    sensitivity_l1: float
    n: int
    lam: float
    calibration: str
    simulated: bool
    utility: dict = field(repr=False, compare=False)

    @property
    def coefficients(self) -> np.ndarray:
        """Coefficient of each feature in its own units (length d)."""
        root = math.sqrt(self.theta.size)
        return np.array([t * 2.0 / ((hi - lo) * root)
                         for t, (lo, hi) in zip(self.theta[:-1], self.bounds, strict=True)])

    @property
    def intercept(self) -> float:
        """The intercept in the units of the declared features (logit scale)."""
        root = math.sqrt(self.theta.size)
        shift = sum(t * (2.0 * lo / (hi - lo) + 1.0)
                    for t, (lo, hi) in zip(self.theta[:-1], self.bounds, strict=True))
        return float((self.theta[-1] - shift) / root)

    def to_table(self) -> list[tuple[str, float]]:
        """Rows (feature, coefficient) for export; the intercept last, as ``(intercept)``."""
        rows = [(f, float(c)) for f, c in zip(self.features, self.coefficients, strict=True)]
        return rows + [(INTERCEPT, self.intercept)]

    def decision_function(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """The logit on new rows (features clipped to their bounds).

        Parameters
        ----------
        columns : mapping of str to array_like
            Columns holding at least the model's features.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
            logit P(y = 1 | x) for each row.

        Raises
        ------
        QueryError
            As :func:`design_matrix`.
        """
        X = design_matrix(columns, self.features, dict(zip(self.features, self.bounds,
                                                           strict=True)))
        return X @ self.theta

    def to_dict(self) -> dict:
        """What an export may publish: coefficients and the guarantee, no data-read utility.

        Returns
        -------
        dict
            JSON-ready: ``coefficients`` (feature, coefficient rows), ``normalized_theta``,
            ``bounds``, the guarantee and the noise's description.
        """
        return {
            "mechanism": self.mechanism,
            "model": "logistic_regression",
            "coefficients": [{"feature": f, "coefficient": c} for f, c in self.to_table()],
            "normalized_theta": [float(t) for t in self.theta],
            "bounds": {f: list(b) for f, b in zip(self.features, self.bounds, strict=True)},
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "noise_family": self.noise_family,
            "noise_scale": self.noise_scale,
            "grid": self.grid,
            "sensitivity_l2": self.sensitivity_l2,
            "sensitivity_l1": self.sensitivity_l1,
            "n": self.n,
            "lambda": self.lam,
            "calibration": self.calibration,
            "simulated": self.simulated,
        }


def _run(columns, label, features, bounds, epsilon, delta, lam, source, simulated):
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta)
    lam = _validate_lambda(lam)
    features = list(features)
    if label not in columns:
        raise QueryError(f"no label column {label!r}")
    if label in features:
        raise QueryError("the label cannot also be a feature")
    X = design_matrix(columns, features, bounds)
    y = binary_labels(columns[label])
    if y.size != X.shape[0]:
        raise QueryError("the label and feature columns have different lengths")
    if y.size == 0:
        raise QueryError("no records to fit")
    plan = calibrate_output_perturbation(X.shape[1], y.size, lam, eps, d)
    fit = fit_logistic(X, y, lam)
    released = perturb(fit.theta, plan, source)
    f_priv = _objective(released, X, y, lam)
    utility = {  # analyst-only: read off the data without noise
        "excess_empirical_risk": f_priv - fit.objective,
        "objective_private": f_priv,
        "objective_nonprivate": fit.objective,
        "accuracy_private": float(np.mean(np.sign(X @ released) == y)),
        "accuracy_nonprivate": float(np.mean(np.sign(X @ fit.theta) == y)),
        "gradient_norm": fit.gradient_norm,
        "newton_iterations": fit.iterations,
    }
    return ModelRelease(
        mechanism="dp_erm_logistic", features=tuple(features),
        bounds=tuple(bounds_pair(bounds[f]) for f in features), theta=released,
        epsilon=eps, delta=d, rho=plan.rho, noise_family=plan.family,
        noise_scale=plan.noise_scale, grid=plan.grid, sensitivity_l2=plan.sensitivity_l2,
        sensitivity_l1=plan.sensitivity_l1, n=int(y.size), lam=lam,
        calibration=plan.noise.calibration, simulated=simulated, utility=utility)


def release_logistic(frame_columns: Mapping[str, np.ndarray], label: str,
                     features: Sequence[str], bounds: Mapping[str, tuple[float, float]],
                     epsilon: float, delta: float, lam: float, source: Source) -> ModelRelease:
    """Release a DP logistic regression; ``source`` must be a SecureSource.

    ``delta = 0`` uses discrete Laplace noise (pure ε-DP); ``delta > 0`` discrete Gaussian
    noise with a zCDP → (ε, δ) conversion. Neighbours: one record replaced, n public.

    Parameters
    ----------
    frame_columns : mapping of str to array_like
        The data's columns by name.
    label : str
        The binary label column (see :func:`binary_labels`).
    features : sequence of str
        The feature columns; not the label.
    bounds : mapping of str to (float, float)
        Declared bounds of every feature.
    epsilon : float
        ε > 0.
    delta : float
        0, or δ in (0, 1).
    lam : float
        Regularization strength λ > 0.
    source : SecureSource
        The OS CSPRNG.

    Returns
    -------
    ModelRelease
        With ``simulated=False``.

    Raises
    ------
    InsecureSourceError
        If ``source`` is not a :class:`~dpstudio.engine.rng.SecureSource`.
    ParameterError
        If ε, δ or λ is out of range.
    QueryError
        For a bad label, feature, bound or column (see :func:`design_matrix`).
    EngineError
        If the solver cannot certify its tolerance.
    """
    require_secure(source)
    return _run(frame_columns, label, features, bounds, epsilon, delta, lam, source, False)


def simulate_logistic(frame_columns: Mapping[str, np.ndarray], label: str,
                      features: Sequence[str], bounds: Mapping[str, tuple[float, float]],
                      epsilon: float, delta: float, lam: float, source: Source) -> ModelRelease:
    """As :func:`release_logistic` with any source (seeded for simulation); not a release.

    Parameters
    ----------
    frame_columns, label, features, bounds, epsilon, delta, lam
        As :func:`release_logistic`.
    source : Source
        Any source, e.g. a seeded :class:`~dpstudio.engine.rng.SimulationSource`.

    Returns
    -------
    ModelRelease
        With ``simulated=True``.

    Raises
    ------
    ParameterError, QueryError, EngineError
        As :func:`release_logistic`.
    """
    return _run(frame_columns, label, features, bounds, epsilon, delta, lam, source, True)


# ---------------------------------------------------------------------------- registry

@dataclass(frozen=True)
class LogisticERM:
    """What ``REGISTRY.get("dp_erm_logistic").build(...)`` returns.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee (δ = 0 selects discrete Laplace noise).
    lam : float
        Regularization strength λ.
    """

    epsilon: float
    delta: float
    lam: float

    def calibrate(self, dimension: int, n: int) -> OutputPerturbation:
        """:func:`calibrate_output_perturbation` with this entry's ε, δ and λ.

        Parameters
        ----------
        dimension : int
            p, the number of coefficients.
        n : int
            Number of records.

        Returns
        -------
        OutputPerturbation
        """
        return calibrate_output_perturbation(dimension, n, self.lam, self.epsilon, self.delta)

    def release(self, columns, label, features, bounds, source) -> ModelRelease:
        """:func:`release_logistic` with this entry's ε, δ and λ.

        Parameters
        ----------
        columns, label, features, bounds, source
            As :func:`release_logistic`.

        Returns
        -------
        ModelRelease
        """
        return release_logistic(columns, label, features, bounds, self.epsilon, self.delta,
                                self.lam, source)

    def simulate(self, columns, label, features, bounds, source) -> ModelRelease:
        """:func:`simulate_logistic` with this entry's ε, δ and λ.

        Parameters
        ----------
        columns, label, features, bounds, source
            As :func:`simulate_logistic`.

        Returns
        -------
        ModelRelease
        """
        return simulate_logistic(columns, label, features, bounds, self.epsilon, self.delta,
                                 self.lam, source)


#: The registry entries of this module (registered by :mod:`dpstudio.engine.mechanisms`).
ENTRIES = (
    MechanismInfo(
        name="dp_erm_logistic",
        label="DP logistic regression (output perturbation)",
        description="Fits L2-regularized logistic regression and adds lattice noise to the "
        "model.",
        trust_models=("central",),
        value_types=("numeric", "integer", "boolean"),
        kind="model",
        params=(
            EPSILON,
            # δ = 0 is allowed and the default here: it selects discrete Laplace noise (pure
            # ε-DP) instead of the Gaussian form, so the range closes at 0 (no log slider,
            # which cannot show 0) and the help says what 0 means.
            replace(DELTA, default=0.0, low_open=False, log_scale=False,
                    help="0: discrete Laplace noise, pure ε-DP; above 0: discrete Gaussian "
                    "noise, (ε, δ)-DP via zCDP. Keep δ well below 1/n."),
            Param("lambda", "float", 0.01,
                  "Regularization strength λ: larger λ means less noise (Δ₂ = 2/(nλ)) "
                  "but a more shrunken model.",
                  low=0.0, low_open=True, high=100.0, log_scale=True, label="λ"),
        ),
        factory=lambda epsilon=1.0, delta=0.0, **kw: LogisticERM(
            epsilon, delta, kw.get("lambda", 0.01)),
        queries=("logistic_regression",),
        references=("Chaudhuri, Monteleoni & Sarwate 2011", "Canonne, Kamath & Steinke 2020"),
    ),
)
