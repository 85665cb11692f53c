"""Additive noise mechanisms of the central model: Laplace, Gaussian and their discrete forms.

All four add **integer** noise to an **integer-valued** statistic: a query first snaps its
values to a grid of width ``grid`` (a power of two), so the statistic is an exact integer
count of grid steps and its sensitivity an exact integer. The release is
``(statistic + noise) · grid``: outputs of neighbouring inputs lie on the same lattice, so
the low bits of a release carry nothing about the input (Mironov 2012), and the noise is
drawn exactly by :mod:`dpstudio.engine.sampling`.

- ``laplace`` / ``gaussian`` choose a fine grid, 2^-15 of the noise scale or finer, so
  their behaviour is that of the continuous mechanisms (OpenDP's approach).
- ``discrete_laplace`` / ``discrete_gaussian`` stay on the integers (grid 1, or a power
  of two above 1 when the noise is wider than 2^16), for integer-valued queries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.calibration import (
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
    validate_delta,
    validate_epsilon,
)
from dpstudio.engine.entry import DELTA, EPSILON, MechanismInfo, Param
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import Source

__all__ = ["ENTRIES", "FINE_STEPS_LOG2", "IntegerNoise", "NoiseFamily", "fine_grid"]

# Noise scale in grid units is at least 2^15: rounding to the grid then adds a variance
# below 1/(8·2^30) of the noise's per record (with randomized rounding), i.e. nothing.
FINE_STEPS_LOG2 = 15

QUERIES = ("count", "sum", "mean", "variance", "histogram")


def fine_grid(scale: float) -> float:
    """The power of two 2^k with scale/2^k in [2^15, 2^16).

    Parameters
    ----------
    scale : float
        The continuous mechanism's noise scale (Laplace b or Gaussian σ), in the units of
        the values.

    Returns
    -------
    float
        The grid width 2^k, same units.

    Raises
    ------
    ParameterError
        If ``scale`` is not finite and positive.
    """
    if not math.isfinite(scale) or scale <= 0:
        raise ParameterError(f"noise scale must be finite and positive, got {scale!r}")
    exponent = math.frexp(scale)[1] - 1  # scale in [2^e, 2^(e+1))
    return math.ldexp(1.0, exponent - FINE_STEPS_LOG2)


@dataclass(frozen=True)
class IntegerNoise:
    """Calibrated integer noise for one integer-valued statistic.

    Attributes
    ----------
    family : ``"laplace"`` (P(k) ∝ e^{−|k|/scale}) or ``"gaussian"`` (P(k) ∝ e^{−k²/2scale²}).
    scale : noise scale in grid units (Laplace scale or Gaussian σ).
    grid : width of one integer step in the units of the values.
    sensitivity : integer sensitivity in grid units (ℓ₁ for Laplace; per coordinate for
        Gaussian, with ``coordinates`` coordinates changing between neighbours).
    epsilon, delta : the guarantee this noise gives for that sensitivity.
    mechanism : registry name of the mechanism that calibrated it (``"laplace"``, …).
    coordinates : how many coordinates change between neighbours (1, or 2 for a
        replace-one histogram).
    calibration : how the scale was found, for reports (``"Δ₁/ε"``, ``"analytic …"``).
    """

    mechanism: str
    family: str
    scale: float
    grid: float
    sensitivity: int
    coordinates: int
    epsilon: float
    delta: float
    calibration: str

    @property
    def noise_scale(self) -> float:
        """Noise scale (Laplace b or Gaussian σ) in the units of the values."""
        return self.scale * self.grid

    @property
    def sensitivity_value(self) -> float:
        """Sensitivity in the units of the values (ℓ₁ for Laplace, ℓ₂ for Gaussian)."""
        if self.family == "gaussian":
            return self.sensitivity * self.grid * math.sqrt(self.coordinates)
        return self.sensitivity * self.grid * self.coordinates

    def sample(self, size: int, source: Source) -> np.ndarray:
        """``size`` draws of integer noise (grid units) from ``source``.

        Parameters
        ----------
        size : int
            Number of draws.
        source : Source
            Random bits (a :class:`~dpstudio.engine.rng.SecureSource` for a release).

        Returns
        -------
        numpy.ndarray of int64, shape (size,)
        """
        if self.family == "laplace":
            return sampling.discrete_laplace(self.scale, size, source)
        return sampling.discrete_gaussian(self.scale, size, source)

    def pmf(self, k: np.ndarray) -> np.ndarray:
        """Exact probability of integer noise value(s) ``k``.

        Parameters
        ----------
        k : array_like of int
            Noise values, in grid units.

        Returns
        -------
        numpy.ndarray
            P(noise = k), same shape as ``k``.
        """
        if self.family == "laplace":
            return sampling.discrete_laplace_pmf(k, self.scale)
        return sampling.discrete_gaussian_pmf(k, self.scale)

    @property
    def variance(self) -> float:
        """Variance of the noise in value units² (exact, of the discrete distribution)."""
        if self.family == "laplace":
            var = sampling.discrete_laplace_variance(self.scale)
        else:
            var = sampling.discrete_gaussian_variance(self.scale)
        return var * self.grid * self.grid

    def half_width(self, confidence: float) -> float:
        """Smallest h on the grid with P(|noise| ≤ h) ≥ confidence, in value units.

        Parameters
        ----------
        confidence : float
            Coverage, in (0, 1).

        Returns
        -------
        float
            h, a whole number of grid steps.
        """
        if self.family == "laplace":
            k = sampling.discrete_laplace_quantile_abs(confidence, self.scale)
        else:
            k = sampling.discrete_gaussian_quantile_abs(confidence, self.scale)
        return float(k) * self.grid

    def to_dict(self) -> dict:
        """The noise as JSON-ready values, in the units of the values (releases, reports).

        Returns
        -------
        dict
            ``mechanism``, ``family``, ``noise_scale``, ``scale_steps``, ``grid``,
            ``sensitivity`` (value units), ``epsilon``, ``delta``, ``calibration``.
        """
        return {
            "mechanism": self.mechanism,
            "family": self.family,
            "noise_scale": self.noise_scale,
            "scale_steps": self.scale,
            "grid": self.grid,
            "sensitivity": self.sensitivity_value,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "calibration": self.calibration,
        }


class NoiseFamily:
    """What a registry entry of kind ``"additive"`` builds: grid choice plus calibration.

    Parameters
    ----------
    name : str
        The registry name, copied into each :class:`IntegerNoise`.
    family : {"laplace", "gaussian"}
        The noise distribution.
    integer_grid : bool
        Stay on the integers (the discrete mechanisms) instead of a fine grid.
    calibration : {"exact", "analytic", "classical"}, optional
        Gaussian calibration: ``"classical"`` is Dwork & Roth's (ε < 1); any other value
        uses the analytic one of Balle & Wang (2018). Ignored for Laplace.

    Attributes
    ----------
    name, family, integer_grid, calibration
        As given.
    """

    def __init__(self, name: str, family: str, integer_grid: bool, calibration: str = "exact"):
        self.name = name
        self.family = family
        self.integer_grid = integer_grid
        self.calibration = calibration

    def continuous_scale(
        self, sensitivity: float, epsilon: float, delta: float, coordinates: int = 1
    ) -> float:
        """Scale of the continuous mechanism for this sensitivity (value units).

        ``sensitivity`` is per coordinate; ℓ₂ = sensitivity·√coordinates, ℓ₁ =
        sensitivity·coordinates.

        Parameters
        ----------
        sensitivity : float
            Per-coordinate sensitivity, in the units of the values.
        epsilon, delta : float
            The target guarantee (δ is used by the Gaussian only, and must be > 0 there).
        coordinates : int, optional
            Coordinates changing between neighbours.

        Returns
        -------
        float
            Laplace b = Δ₁/ε, or the Gaussian σ, in the units of the values.

        Raises
        ------
        ParameterError
            If ε, δ or the sensitivity is out of range, or the classical calibration is
            asked for ε ≥ 1.
        """
        eps = validate_epsilon(epsilon)
        if self.family == "laplace":
            return sensitivity * coordinates / eps
        l2 = sensitivity * math.sqrt(coordinates)
        if self.calibration == "classical":
            return classical_gaussian_sigma(l2, eps, delta)
        return analytic_gaussian_sigma(l2, eps, delta)

    def grid(self, sensitivity: float, epsilon: float, delta: float, coordinates: int = 1) -> float:
        """Grid width for a statistic with this (per-coordinate) sensitivity in value units.

        Parameters
        ----------
        sensitivity : float
            Per-coordinate sensitivity, in the units of the values.
        epsilon, delta : float
            The target guarantee.
        coordinates : int, optional
            Coordinates changing between neighbours.

        Returns
        -------
        float
            A power of two: :func:`fine_grid` of the continuous scale, at least 1 for the
            integer mechanisms.

        Raises
        ------
        ParameterError
            As :meth:`continuous_scale`.
        """
        fine = fine_grid(self.continuous_scale(sensitivity, epsilon, delta, coordinates))
        # Integer mechanisms stay on the integers, coarsening (by powers of two) only when the
        # noise is so wide that the scale would exceed 2^16 steps: exact δ stays cheap.
        return max(1.0, fine) if self.integer_grid else fine

    def calibrate(
        self, sensitivity: int, grid: float, epsilon: float, delta: float, coordinates: int = 1
    ) -> IntegerNoise:
        """Noise for an integer statistic with integer per-coordinate ``sensitivity``.

        Laplace takes scale Δ₁/ε, exact for the discrete Laplace. The Gaussian starts from
        the continuous calibration and raises σ until the exact δ of the discrete Gaussian
        meets the target (:func:`~dpstudio.engine.calibration.discrete_gaussian_sigma`).

        Parameters
        ----------
        sensitivity : int
            Per-coordinate sensitivity in grid steps, ≥ 1.
        grid : float
            The grid width chosen by :meth:`grid`, in the units of the values.
        epsilon, delta : float
            The target guarantee; the Gaussian needs δ > 0.
        coordinates : int, optional
            Coordinates changing between neighbours (1, or 2 for the Gaussian on a
            replace-one histogram).

        Returns
        -------
        IntegerNoise

        Raises
        ------
        ParameterError
            If ε or δ is out of range, or the sensitivity is below one grid step.
        """
        eps = validate_epsilon(epsilon)
        sens = int(sensitivity)
        if sens < 1:
            raise ParameterError("the statistic's sensitivity must be at least one grid step")
        if self.family == "laplace":
            d = validate_delta(delta)
            scale = sens * coordinates / eps  # ℓ₁ sensitivity over ε: exact for DLap
            return IntegerNoise(self.name, "laplace", scale, grid, sens, coordinates, eps, d,
                                "Δ₁/ε")
        d = validate_delta(delta, required=True)
        sigma = self.continuous_scale(sens, eps, d, coordinates)
        # The continuous calibration is the floor; the exact discrete δ decides.
        sigma = discrete_gaussian_sigma(sens, eps, d, coordinates, at_least=sigma)
        label = "classical" if self.calibration == "classical" else "analytic (Balle & Wang)"
        return IntegerNoise(self.name, "gaussian", sigma, grid, sens, coordinates, eps, d,
                            label + ", checked on the discrete Gaussian")


def discrete_gaussian_epsilon_delta_check(noise: IntegerNoise) -> float:
    """The exact δ at ``noise.epsilon`` for a Gaussian IntegerNoise (for tests and reports)."""
    return discrete_gaussian_delta(noise.scale, noise.sensitivity, noise.epsilon,
                                   noise.coordinates)


_CAL = Param("calibration", "choice", "analytic",
             "Analytic (Balle & Wang 2018, tight, any ε) or classical (Dwork & Roth, ε < 1).",
             choices=("analytic", "classical"))

#: The registry entries of this module (registered by :mod:`dpstudio.engine.mechanisms`).
ENTRIES = (
    MechanismInfo(
        name="laplace",
        label="Laplace",
        description="Adds Laplace noise of scale Δ₁/ε, drawn exactly on a fine grid "
                    "(pure ε-DP).",
        trust_models=("central",),
        value_types=("numeric", "integer", "boolean", "categorical"),
        kind="additive",
        params=(EPSILON,),
        factory=lambda **kw: NoiseFamily("laplace", "laplace", integer_grid=False),
        queries=QUERIES,
        references=("Dwork, McSherry, Nissim & Smith 2006", "Mironov 2012 (floating point)"),
    ),
    MechanismInfo(
        name="gaussian",
        label="Gaussian",
        description="Adds Gaussian noise calibrated to Δ₂, ε and δ, drawn exactly on a fine "
                    "grid.",
        trust_models=("central",),
        value_types=("numeric", "integer", "boolean", "categorical"),
        kind="additive",
        params=(EPSILON, DELTA, _CAL),
        factory=lambda calibration="analytic", **kw: NoiseFamily(
            "gaussian", "gaussian", integer_grid=False, calibration=calibration),
        needs_delta=True,
        queries=QUERIES,
        references=("Balle & Wang 2018", "Dwork & Roth 2014, Thm A.1"),
    ),
    MechanismInfo(
        name="discrete_laplace",
        label="Discrete Laplace",
        description="Adds two-sided geometric noise to integer-valued statistics (pure ε-DP).",
        trust_models=("central",),
        value_types=("integer", "boolean", "categorical"),
        kind="additive",
        params=(EPSILON,),
        factory=lambda **kw: NoiseFamily("discrete_laplace", "laplace", integer_grid=True),
        queries=QUERIES,
        references=("Ghosh, Roughgarden & Sundararajan 2009",),
    ),
    MechanismInfo(
        name="discrete_gaussian",
        label="Discrete Gaussian",
        description="Adds discrete Gaussian noise to integer-valued statistics; exact (ε, δ).",
        trust_models=("central",),
        value_types=("integer", "boolean", "categorical"),
        kind="additive",
        params=(EPSILON, DELTA, _CAL),
        factory=lambda calibration="analytic", **kw: NoiseFamily(
            "discrete_gaussian", "gaussian", integer_grid=True, calibration=calibration),
        needs_delta=True,
        queries=QUERIES,
        references=("Canonne, Kamath & Steinke 2020",),
    ),
)
