"""DP-ERM by output perturbation: ℓ₂-regularized logistic regression (central model).

Model and objective
-------------------
Features are mapped by their *declared* bounds (never read off the data) to [−1, 1],
clipped, and divided by √p, where p = d + 1 counts the d features plus an intercept
feature of constant value 1/√p; so every row has ‖x‖₂ ≤ 1 and the intercept is a
coefficient like the others (inside the norm bound, and regularized). Labels are ±1
(given as −1/1, 0/1, no/yes or false/true). The solver minimizes

    F(θ; D) = (1/n) Σᵢ log(1 + exp(−yᵢ θᵀxᵢ)) + (λ/2) ‖θ‖₂²,

which is λ-strongly convex; the logistic loss is ‖x‖-Lipschitz, so L = 1.

Sensitivity
-----------
For replace-one neighbours D, D′ of the same size n, the exact minimizers satisfy
‖θ*(D) − θ*(D′)‖₂ ≤ 2L/(nλ) (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8; Bellet,
lecture 4). The solver returns an approximate minimizer θ̂, certified to satisfy
‖∇F(θ̂)‖₂ ≤ g_tol, a tolerance fixed in advance from n alone (:func:`gradient_tolerance`);
by strong convexity ‖θ̂ − θ*‖₂ ≤ ‖∇F(θ̂)‖₂/λ, so the released θ̂ has ℓ₂ sensitivity

    Δ₂ = 2L/(nλ) + 2·g_tol/λ     and ℓ₁ sensitivity Δ₁ = √p·Δ₂.

The certification computes ∇F(θ̂) with compensated (``math.fsum``) sums and asks for half
the tolerance, leaving the other half for floating-point error in that evaluation. If the
solver cannot certify the tolerance it refuses (an event that does not happen for this
smooth, strongly convex problem in double precision; were it to, the refusal would itself
depend on the data).

Noise on a lattice
------------------
θ̂ is first snapped to a grid g (a power of two, 2^−15 of both the noise scale and the
sensitivity or finer, see :func:`dpstudio.engine.additive.fine_grid`), so the outputs of
all datasets lie on one lattice gℤᵖ; snapping moves each coordinate by at most g/2, so
snapped neighbours differ by at most Δ₁/g + p grid steps in ℓ₁ and Δ₂/g + √p in ℓ₂
(rounded up to an integer S); as Δ/g ≥ 2^15, snapping costs a factor of at most
1 + (p+1)·2^−15 in noise. Integer noise is then added per coordinate, drawn exactly:

- δ = 0: discrete Laplace of scale S/ε steps (pure ε-DP: ℓ₁ shift ≤ S);
- δ > 0: discrete Gaussian of σ = S/√(2ρ) steps, which is ρ-zCDP for an ℓ₂ shift ≤ S
  (Canonne, Kamath & Steinke 2020), with ρ the largest value whose (ε, δ) conversion
  (:func:`~dpstudio.engine.accounting.zcdp.zcdp_to_epsilon`, CKS Cor. 13) is ≤ ε. This
  is pessimistic: the exact (ε, δ) of the discrete Gaussian is smaller.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import expit

from dpstudio.engine.accounting.zcdp import zcdp_gaussian, zcdp_to_epsilon
from dpstudio.engine.additive import IntegerNoise, fine_grid
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import bounds_pair, number
from dpstudio.engine.entry import DELTA, EPSILON, MechanismInfo, Param
from dpstudio.engine.errors import EngineError, ParameterError, QueryError
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

INTERCEPT = "(intercept)"
LIPSCHITZ = 1.0  # logistic loss with ‖x‖₂ ≤ 1
_MAX_NEWTON = 100
_POSITIVE = {"1", "1.0", "yes", "true", "y", "t"}
_NEGATIVE = {"-1", "-1.0", "0", "0.0", "no", "false", "n", "f"}


# ---------------------------------------------------------------------------- inputs

def _validate_lambda(lam: float) -> float:
    """λ as a float, finite and > 0, by the engine's one range validator."""
    return number("λ (regularization)", lam, low=0.0, low_open=True)


def binary_labels(values: np.ndarray) -> np.ndarray:
    """Labels as ±1 floats: −1/1, 0/1, no/yes, false/true (case-insensitive); else QueryError.

    Parameters
    ----------
    values : array_like, 1-d
        The label column: booleans, numbers in {−1, 0, 1}, or text (``1``/``yes``/``true``/
        ``y``/``t`` positive; ``-1``/``0``/``no``/``false``/``n``/``f`` negative).

    Returns
    -------
    numpy.ndarray of float64
        +1.0 for a positive label, −1.0 for a negative one.

    Raises
    ------
    QueryError
        If the column is not 1-d or holds any other value (missing ones included).
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise QueryError("the label must be one column")
    if arr.dtype == bool:
        return np.where(arr, 1.0, -1.0)
    if arr.dtype.kind in "iuf":
        a = arr.astype(np.float64)
        ok = (a == 1) | (a == -1) | (a == 0)
        if not ok.all():
            raise QueryError("the label must be binary: −1/1, 0/1, no/yes or false/true")
        return np.where(a == 1, 1.0, -1.0)
    text = np.array([str(v).strip().lower() for v in arr.tolist()], dtype=object)
    pos = np.isin(text, list(_POSITIVE))
    neg = np.isin(text, list(_NEGATIVE))
    if not (pos | neg).all():
        raise QueryError("the label must be binary: −1/1, 0/1, no/yes or false/true")
    return np.where(pos, 1.0, -1.0)


def design_matrix(columns: Mapping[str, np.ndarray], features: Sequence[str],
                  bounds: Mapping[str, tuple[float, float]]) -> np.ndarray:
    """Rows with ‖x‖₂ ≤ 1: each feature mapped by its declared bounds to [−1, 1] and
    clipped, plus a constant intercept feature, all divided by √(d+1).

    Parameters
    ----------
    columns : mapping of str to array_like
        The data's columns by name.
    features : sequence of str
        The d feature columns, in the order of the coefficients.
    bounds : mapping of str to (float, float)
        Declared (lower, upper) of every feature, in its own units; never read off the
        data.

    Returns
    -------
    numpy.ndarray of float64, shape (n, d + 1)
        The normalized design matrix; the last column is the intercept feature 1/√(d+1).

    Raises
    ------
    QueryError
        If no feature is given or one twice, a column or its bounds are missing, the
        bounds are invalid, a feature is not numeric or has missing (NaN) values, or the
        columns differ in length.
    """
    if not features:
        raise QueryError("choose at least one feature")
    if len(set(features)) != len(features):
        raise QueryError("a feature is listed twice")
    p = len(features) + 1
    out = []
    for name in features:
        if name not in columns:
            raise QueryError(f"no column {name!r}")
        if bounds is None or name not in bounds:
            raise QueryError(f"declare the bounds of feature {name!r} (e.g. 0,100); they are "
                             "never read off the data")
        lo, hi = bounds_pair(bounds[name])
        try:
            x = np.asarray(columns[name], dtype=np.float64)
        except (TypeError, ValueError):
            raise QueryError(f"feature {name!r} must be numeric") from None
        if np.isnan(x).any():
            raise QueryError(f"feature {name!r} has missing values: drop or impute them first")
        out.append(np.clip(2.0 * (x - lo) / (hi - lo) - 1.0, -1.0, 1.0))
    n = out[0].size
    if any(c.size != n for c in out):
        raise QueryError("the columns have different lengths")
    out.append(np.ones(n))
    return np.column_stack(out) / math.sqrt(p)


# ---------------------------------------------------------------------------- solver

def gradient_tolerance(n: int) -> float:
    """g_tol: the certified bound on ‖∇F(θ̂)‖₂, fixed from n alone (data-independent).

    min(1e−9, 1e−4/n), floored at 1e−12: the term 2·g_tol/λ it adds to Δ₂ is at most
    1e−4 of 2/(nλ) up to n = 1e8.

    Parameters
    ----------
    n : int
        Number of records, ≥ 1 (public under replace-one neighbours).

    Returns
    -------
    float
        g_tol, in the units of the gradient of F (normalized feature space).
    """
    return max(min(1e-9, 1e-4 / n), 1e-12)


def sensitivity_l2(n: int, lam: float) -> float:
    """Δ₂ = 2L/(nλ) + 2·g_tol/λ of the certified approximate minimizer.

    Chaudhuri, Monteleoni & Sarwate (2011), Cor. 8, plus the solver's certified tolerance
    (see the module's docstring).

    Parameters
    ----------
    n : int
        Number of records, ≥ 1.
    lam : float
        Regularization strength λ > 0.

    Returns
    -------
    float
        The ℓ₂ sensitivity of θ̂ under replace-one, in the normalized feature space.

    Raises
    ------
    ParameterError
        If λ is not finite and positive.
    """
    lam = _validate_lambda(lam)
    return 2.0 * LIPSCHITZ / (n * lam) + 2.0 * gradient_tolerance(n) / lam


def _objective(theta: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float) -> float:
    margins = y * (X @ theta)
    return float(np.mean(np.logaddexp(0.0, -margins)) + 0.5 * lam * theta @ theta)


def _gradient(theta: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    s = y * expit(-(y * (X @ theta)))
    return -(X.T @ s) / X.shape[0] + lam * theta


def _gradient_norm_exact(theta, X, y, lam) -> float:
    """‖∇F(θ)‖₂ with compensated sums (for the certificate)."""
    n = X.shape[0]
    s = y * expit(-(y * (X @ theta)))
    g = np.array([-math.fsum((X[:, j] * s).tolist()) / n + lam * theta[j]
                  for j in range(X.shape[1])])
    return float(math.sqrt(math.fsum((g * g).tolist())))


@dataclass(frozen=True)
class LogisticFit:
    """The certified approximate minimizer θ̂ of F (normalized feature space).

    Attributes
    ----------
    theta : numpy.ndarray, shape (p,)
        θ̂; the last coordinate is the intercept feature's.
    objective : float
        F(θ̂; D).
    gradient_norm : float
        ‖∇F(θ̂)‖₂ computed with compensated sums, at most ``tolerance / 2``.
    tolerance : float
        g_tol of :func:`gradient_tolerance`.
    iterations : int
        Newton steps taken.
    n : int
        Number of records.
    lam : float
        λ.
    """

    theta: np.ndarray
    objective: float
    gradient_norm: float
    tolerance: float
    iterations: int
    n: int
    lam: float


def fit_logistic(X: np.ndarray, y: np.ndarray, lam: float) -> LogisticFit:
    """Damped Newton's method (deterministic), certified to ‖∇F(θ̂)‖₂ ≤ g_tol/2.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, p)
        Rows with ‖x‖₂ ≤ 1 (:func:`design_matrix`).
    y : numpy.ndarray, shape (n,)
        Labels ±1 (:func:`binary_labels`).
    lam : float
        Regularization strength λ > 0.

    Returns
    -------
    LogisticFit
        The minimizer θ̂ and its certificate. It reads the data without noise: never
        release it as is (:func:`perturb` does).

    Raises
    ------
    ParameterError
        If λ is not finite and positive.
    QueryError
        If there are no records.
    EngineError
        If the gradient bound cannot be certified (not expected in double precision).
    """
    lam = _validate_lambda(lam)
    n, p = X.shape
    if n < 1:
        raise QueryError("no records to fit")
    tol = gradient_tolerance(n)
    theta = np.zeros(p)
    f = _objective(theta, X, y, lam)
    it = 0
    while it < _MAX_NEWTON:
        it += 1
        g = _gradient(theta, X, y, lam)
        if np.linalg.norm(g) <= tol / 8:
            break
        m = y * (X @ theta)
        w = expit(m) * expit(-m)
        H = (X.T * w) @ X / n + lam * np.eye(p)
        step = np.linalg.solve(H, -g)
        t = 1.0
        while True:  # Armijo backtracking
            cand = theta + t * step
            fc = _objective(cand, X, y, lam)
            if fc <= f + 1e-4 * t * float(g @ step) or t < 1e-10:
                break
            t *= 0.5
        if fc > f:  # no further progress in floating point
            break
        theta, f = cand, fc
    gnorm = _gradient_norm_exact(theta, X, y, lam)
    if gnorm > tol / 2:
        raise EngineError(f"the solver could not certify ‖∇F‖ ≤ {tol / 2:g} "
                          f"(reached {gnorm:.3g}); try a larger λ")
    return LogisticFit(theta, f, gnorm, tol, it, n, lam)


# ---------------------------------------------------------------------------- noise

@dataclass(frozen=True)
class OutputPerturbation:
    """Calibrated lattice noise for a p-coordinate minimizer.

    ``noise`` is the per-coordinate integer noise (grid units) whose ``sensitivity`` is
    the lattice sensitivity S (ℓ₁ steps for Laplace, ℓ₂ steps for Gaussian).

    Attributes
    ----------
    noise : IntegerNoise
        Per-coordinate integer noise and its grid.
    dimension : int
        p, the number of coefficients (features plus intercept).
    n : int
        Number of records.
    lam : float
        λ.
    sensitivity_l2, sensitivity_l1 : float
        Δ₂ and Δ₁ = √p·Δ₂ of θ̂ before snapping, in the normalized feature space (rounded
        up).
    epsilon, delta : float
        The guarantee of the release.
    rho : float or None
        The zCDP ρ of the Gaussian form; None for Laplace (δ = 0).
    """

    noise: IntegerNoise
    dimension: int
    n: int
    lam: float
    sensitivity_l2: float  # Δ₂ of θ̂ before snapping
    sensitivity_l1: float  # Δ₁ = √p·Δ₂
    epsilon: float
    delta: float
    rho: float | None  # zCDP ρ for the Gaussian form

    @property
    def grid(self) -> float:
        """The lattice's step g, in the units of θ."""
        return self.noise.grid

    @property
    def noise_scale(self) -> float:
        """Per-coordinate Laplace b or Gaussian σ in the units of θ."""
        return self.noise.noise_scale

    @property
    def family(self) -> str:
        """``"laplace"`` (δ = 0) or ``"gaussian"``."""
        return self.noise.family


def _up(x: float) -> float:
    return math.nextafter(x * (1.0 + 1e-12), math.inf)


def _rho_for(epsilon: float, delta: float) -> float:
    """Largest ρ (lower end of a 1e−12 bracket) with zcdp_to_epsilon(ρ, δ) ≤ ε."""
    lo, hi = 0.0, max(epsilon, 1e-3)
    while zcdp_to_epsilon(hi, delta) <= epsilon:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if zcdp_to_epsilon(mid, delta) <= epsilon else (lo, mid)
    if lo <= 0:
        raise ParameterError("ε and δ are too small for this mechanism")
    return lo


def calibrate_output_perturbation(dimension: int, n: int, lam: float, epsilon: float,
                                  delta: float = 0.0) -> OutputPerturbation:
    """Noise for releasing θ̂ ∈ ℝᵖ (p = ``dimension``) fitted on n records with λ.

    Reads no data: the noise depends on p, n, λ, ε and δ only (see the module's
    docstring for the lattice sensitivity and the zCDP conversion).

    Parameters
    ----------
    dimension : int
        p, the number of coefficients (features plus intercept).
    n : int
        Number of records, ≥ 1.
    lam : float
        Regularization strength λ > 0.
    epsilon : float
        ε > 0.
    delta : float, optional
        0 for discrete Laplace noise (pure ε-DP); in (0, 1) for discrete Gaussian noise.

    Returns
    -------
    OutputPerturbation

    Raises
    ------
    ParameterError
        If ε, δ or λ is out of range, or ε and δ are too small for any ρ.
    QueryError
        If n < 1.
    """
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta)
    lam = _validate_lambda(lam)
    if int(n) < 1:
        raise QueryError("no records to fit")
    p = int(dimension)
    d2 = _up(sensitivity_l2(int(n), lam))
    d1 = _up(math.sqrt(p) * d2)
    if d == 0:
        grid = min(fine_grid(d1), fine_grid(d1 / eps))
        steps = math.ceil(_up(d1 / grid)) + p  # ℓ₁ after snapping, in grid steps
        scale = steps / eps
        noise = IntegerNoise("dp_erm_logistic", "laplace", scale, grid, steps, 1, eps, 0.0,
                             "Δ₁/ε on the lattice, Δ₁ = √p·Δ₂ plus p grid steps")
        return OutputPerturbation(noise, p, int(n), lam, d2, d1, eps, 0.0, None)
    rho = _rho_for(eps, d)
    grid = min(fine_grid(d2), fine_grid(d2 / math.sqrt(2.0 * rho)))
    steps = math.ceil(_up(d2 / grid + math.sqrt(p)))  # ℓ₂ after snapping, in grid steps
    sigma = _up(steps / math.sqrt(2.0 * rho))
    rho_real = zcdp_gaussian(sigma, steps)
    eps_real = zcdp_to_epsilon(rho_real, d)
    if eps_real > eps:  # cannot happen with the margins above; never claim more
        raise EngineError("internal: Gaussian calibration overshot ε")
    noise = IntegerNoise("dp_erm_logistic", "gaussian", sigma, grid, steps, 1, eps, d,
                         "ρ = Δ₂²/(2σ²) zCDP on the lattice, converted to (ε, δ) (CKS Cor. 13)")
    return OutputPerturbation(noise, p, int(n), lam, d2, d1, eps, d, rho_real)


def snap(theta: np.ndarray, grid: float) -> np.ndarray:
    """θ in integer grid steps (round half to even; each coordinate moves ≤ g/2).

    Parameters
    ----------
    theta : array_like of float
        Coefficients, in the units of θ.
    grid : float
        The lattice's step g > 0, same units.

    Returns
    -------
    numpy.ndarray of int64
        round(θ / g), same shape.

    Raises
    ------
    ParameterError
        If a coordinate is 2**52 steps or more (or not finite), where rounding is no
        longer exact.
    """
    steps = np.asarray(theta, dtype=np.float64) / grid
    if not np.all(np.abs(steps) < 2.0 ** 52):
        raise ParameterError("the noise is too fine for these coefficients; lower ε or λ")
    return np.rint(steps).astype(np.int64)


def perturb(theta: np.ndarray, plan: OutputPerturbation, source: Source) -> np.ndarray:
    """Snapped θ plus per-coordinate lattice noise, in the units of θ.

    Parameters
    ----------
    theta : numpy.ndarray, shape (p,)
        The minimizer θ̂ (:attr:`LogisticFit.theta`).
    plan : OutputPerturbation
        The calibrated noise.
    source : Source
        Random bits; a release passes a :class:`~dpstudio.engine.rng.SecureSource`.

    Returns
    -------
    numpy.ndarray of float64, shape (p,)
        The noisy coefficients, on the lattice gℤᵖ.

    Raises
    ------
    ParameterError
        As :func:`snap`.
    """
    k = snap(theta, plan.grid) + plan.noise.sample(theta.size, source)
    return k.astype(np.float64) * plan.grid


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
