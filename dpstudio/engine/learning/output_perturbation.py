"""Output perturbation: the minimizer snapped to a lattice, plus exact integer noise.

The minimizer θ̂ ∈ ℝᵖ and its sensitivities Δ₂ and Δ₁ = √p·Δ₂ come from the solver
(:mod:`dpstudio.engine.learning.logistic`); the calibration reads Δ₂ from
:func:`~dpstudio.engine.learning.logistic.sensitivity_l2` and nothing from the data.

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
from dataclasses import dataclass

import numpy as np

from dpstudio.engine.accounting.zcdp import zcdp_gaussian, zcdp_to_epsilon
from dpstudio.engine.additive import IntegerNoise, fine_grid
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.errors import EngineError, ParameterError, QueryError
from dpstudio.engine.learning.features import _validate_lambda
from dpstudio.engine.learning.logistic import sensitivity_l2
from dpstudio.engine.rng import Source

__all__ = ["OutputPerturbation", "calibrate_output_perturbation", "perturb", "snap"]


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
        The minimizer θ̂ (:attr:`~dpstudio.engine.learning.logistic.LogisticFit.theta`).
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
