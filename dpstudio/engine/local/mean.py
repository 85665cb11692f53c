"""Local randomizers for means of bounded numbers: Laplace, Gaussian, Duchi et al.

In the local model each user's value alone is the "dataset", so the sensitivity of the
identity on ``[lower, upper]`` is ``upper − lower`` (Bellet's lecture: the query ``f(x)``
has sensitivity 1 on ``[0, 1]``).

* ``local_laplace`` / ``local_gaussian``: each user clamps their value, snaps it to a
  fine power-of-two grid by unbiased randomized rounding and adds *exact* discrete
  Laplace / Gaussian noise on that grid (:mod:`dpstudio.engine.additive`), so the report
  is ``(steps + noise)·grid`` and no floating-point artefact leaks (Mironov 2012). The
  mean of the reports is unbiased for the mean of the clamped values.
* ``duchi`` (Duchi, Jordan & Wainwright 2013/2018): the value, rescaled to
  ``x ∈ [−1, 1]``, is rounded to ±1 (``+1`` with probability ``(1 + x)/2``) and sent
  through binary randomized response with an exact ``e^ε/(e^ε+1)`` coin; the collector
  reads the bit as ``±B``, ``B = (e^ε + 1)/(e^ε − 1)``. ``P(+B) = 1/2 +
  x(e^ε − 1)/(2(e^ε + 1))``: Duchi et al.'s one-dimensional mechanism, unbiased, one bit
  per user, per-user variance ``B² − x²``.

Variances are over the randomizers' coins with the data fixed. The rounding to the grid
adds at most ``grid²/4`` per user (included: an upper bound by ~2^-30 of the noise's).
Duchi's exact variance needs the users' mean of ``x²``; without it ``B²/n`` (an upper
bound) is returned.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.additive import IntegerNoise, NoiseFamily
from dpstudio.engine.calibration import validate_delta
from dpstudio.engine.checks import bounds_pair
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.local._coins import rr_keep_coin
from dpstudio.engine.local.base import MeanOracle, validate_local_epsilon
from dpstudio.engine.local.tally import ValueTally, bernoulli_totals, simulation_generator

__all__ = ["DuchiMean", "LocalGaussian", "LocalLaplace", "check_numeric_values"]


def _bounds(bounds) -> tuple[float, float]:
    if bounds is None:
        raise ParameterError("a local mean needs declared bounds (e.g. --bounds 0,100)")
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ParameterError(f"bounds must be two numbers; got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise ParameterError(f"bounds must be finite with lower < upper; got {bounds!r}")
    return bounds_pair((lo, hi))  # the engine-wide limits on the bounds' scale


def check_numeric_values(values) -> np.ndarray:
    """``values`` as a finite float64 array; QueryError on NaN, infinities or text.

    Parameters
    ----------
    values : array_like
        Numbers (flattened to 1-D).

    Returns
    -------
    numpy.ndarray of float64, shape (n,)

    Raises
    ------
    QueryError
        For text, NaN or infinities.
    """
    try:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise QueryError("a local mean needs numeric values") from None
    if v.size and not np.all(np.isfinite(v)):
        raise QueryError("values must be finite numbers; found NaN or infinity "
                         "(drop missing values first)")
    return v


@functools.lru_cache(maxsize=512)
def _calibrated(name: str, family: str, sensitivity: int, grid: float, epsilon: float,
                delta: float) -> IntegerNoise:
    """The grid noise for these parameters, calibrated once: the discrete Gaussian's exact
    δ takes ~0.1 s per ε, and every curve rebuilds the same randomizers (IntegerNoise is
    frozen, so one object may serve them all)."""
    return NoiseFamily(name, family, integer_grid=False).calibrate(sensitivity, grid,
                                                                   epsilon, delta)


def _uniform53(size: int, source) -> np.ndarray:
    return (source.uint64(size) >> np.uint64(11)).astype(np.float64) * 2.0**-53


class _GridNoise(MeanOracle):
    """Clamp, snap to the grid, add exact integer noise: Laplace or Gaussian.

    Parameters
    ----------
    epsilon : float
        The per-user ε, in (0, 700].
    bounds : tuple of float
        ``(lower, upper)``, finite with ``lower < upper``; the sensitivity is their width.
    delta : float
        The per-user δ (Gaussian only, required > 0; ignored for Laplace).

    Attributes
    ----------
    lower, upper : float
        The bounds.
    grid : float
        The power-of-two grid the values are snapped to (value units).
    noise : IntegerNoise
        The calibrated noise, in grid steps (:mod:`dpstudio.engine.additive`).

    Raises
    ------
    ParameterError
        For missing or bad bounds, ε or δ.
    """

    family = ""

    def __init__(self, epsilon: float, bounds, delta: float = 0.0) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        self.lower, self.upper = _bounds(bounds)
        gaussian = self.family == "gaussian"
        self.delta = validate_delta(delta, required=gaussian) if gaussian else 0.0
        fam = NoiseFamily(self.name, self.family, integer_grid=False)
        sens = self.upper - self.lower
        self.grid = fam.grid(sens, self.epsilon, self.delta)
        self.lo_step = math.floor(self.lower / self.grid)
        self.hi_step = math.ceil(self.upper / self.grid)
        self.noise = _calibrated(self.name, self.family, self.hi_step - self.lo_step,
                                 self.grid, self.epsilon, self.delta)
        self.messages_bits = 64

    def randomize(self, values, source) -> np.ndarray:
        """Each user's noisy value ``(steps + noise)·grid``.

        Parameters
        ----------
        values : array_like of float, shape (n,)
            Finite numbers; clamped to the bounds.
        source : Source
            The random source.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
            The reports, in the values' units (multiples of ``grid``).

        Raises
        ------
        QueryError
            For text, NaN or infinities.
        """
        v = np.clip(check_numeric_values(values), self.lower, self.upper) / self.grid
        base = np.floor(v)
        up = _uniform53(v.size, source) < (v - base)  # unbiased rounding (not a privacy step)
        steps = np.clip(base.astype(np.int64) + up, self.lo_step, self.hi_step)
        return (steps + self.noise.sample(v.size, source)).astype(np.float64) * self.grid

    def estimate(self, reports, n: int | None = None) -> float:
        """The mean of the reports: unbiased for the mean of the clamped values.

        Parameters
        ----------
        reports : array_like of float
            What :meth:`randomize` returned.
        n : int, optional
            The number of users; by default the number of reports.

        Returns
        -------
        float

        Raises
        ------
        QueryError
            For no reports.
        """
        r = np.asarray(reports, dtype=np.float64)
        if r.size == 0:
            raise QueryError("no reports to estimate from")
        return float(r.sum() / (r.size if n is None else n))

    def report_steps(self, reports) -> int:
        """The sum of the reports in grid steps, exactly (it adds over partitions).

        Every report is ``(steps + noise)·grid`` with ``grid`` a power of two, so dividing
        by the grid gives back the integer exactly.

        Parameters
        ----------
        reports : array_like of float
            What :meth:`randomize` returned.

        Returns
        -------
        int
        """
        r = np.asarray(reports, dtype=np.float64)
        return int(np.rint(r / self.grid).astype(np.int64).sum(dtype=np.int64))

    def estimate_from_steps(self, total: int, n: int) -> float:
        """:meth:`estimate` from :meth:`report_steps` (added over partitions): the same
        number while the sum stays below 2^53 steps, exact beyond.

        Parameters
        ----------
        total : int
            The reports' sum in grid steps.
        n : int
            The number of users (> 0).

        Returns
        -------
        float

        Raises
        ------
        QueryError
            For no users.
        """
        if int(n) <= 0:
            raise QueryError("no reports to estimate from")
        return float(float(total) * self.grid / int(n))

    def sample_estimates(self, tally: ValueTally, reps: int, source) -> np.ndarray:
        """``reps`` draws of ``estimate(randomize(values))`` without randomizing each record
        (for simulations only: the draws are seeded numpy ones, not exact coins).

        The estimate is ``grid·(Σ steps + Σ noise)/n``. A record's steps are ``⌊v⌋`` plus
        a Bernoulli(v − ⌊v⌋) (``v`` = its clamped value over the grid), so the records
        holding one value add a binomial draw. The sum of n discrete Laplace draws of
        scale t is the difference of two negative binomials NB(n, 1 − e^{−1/t}) (each
        draw is a difference of two geometric ones). The sum of n discrete Gaussians of
        σ ≥ 2¹⁵ steps (always so here) is the discrete Gaussian of σ√n to within a total
        variation of order n·e^{−π²σ²/2}, i.e. exactly in floating point. The cost is
        in the tally's entries, not in n.

        Parameters
        ----------
        tally : ValueTally
            The users' values, grouped (:func:`~dpstudio.engine.local.tally.tally_values`).
        reps : int
            Number of simulated releases.
        source : Source
            The simulation's random source.

        Returns
        -------
        numpy.ndarray of float64, shape (reps,)
            The simulated estimates, in the values' units.

        Raises
        ------
        QueryError
            For no users, or values that are not finite numbers.
        """
        n, reps = int(tally.n), int(reps)
        if n == 0:
            raise QueryError("no reports to estimate from")
        gen = simulation_generator(source)
        v = np.clip(check_numeric_values(tally.values), self.lower, self.upper) / self.grid
        base = np.floor(v)
        # Steps counted from lo_step: small non-negative integers, exact in int64.
        fixed = int(np.dot((base - self.lo_step).astype(np.int64), tally.counts))
        ups = bernoulli_totals(v - base, tally.counts, reps, gen)
        t = self.noise.scale
        if self.family == "laplace":
            p = -math.expm1(-1.0 / t)
            noise = gen.negative_binomial(n, p, reps) - gen.negative_binomial(n, p, reps)
        else:
            noise = sampling.discrete_gaussian(t * math.sqrt(n), reps, source)
        total = (fixed + ups + noise).astype(np.float64)
        return self.grid * (self.lo_step + total / n)

    def variance(self, n: int, second_moment: float | None = None) -> float:
        """``(noise variance + grid²/4)/n``: an upper bound by the rounding's ``grid²/4``.

        Parameters
        ----------
        n : int
            The number of users.
        second_moment : float, optional
            Ignored (the noise does not depend on the data).

        Returns
        -------
        float
            In squared units of the values.
        """
        return (self.noise.variance + self.grid**2 / 4.0) / float(n)

    def report_keys(self, reports, against=None) -> np.ndarray:
        return np.rint(np.asarray(reports) / self.grid).astype(np.int64)

    def to_records(self, reports) -> dict[str, np.ndarray]:
        return {"report": np.asarray(reports, dtype=np.float64)}

    def describe(self):
        return super().describe() | {"bounds": [self.lower, self.upper],
                                     "noise_scale": self.noise.noise_scale, "grid": self.grid}


class LocalLaplace(_GridNoise):
    """Each user adds exact Laplace noise of scale ``(upper − lower)/ε`` (pure ε-LDP).

    The noise is discrete Laplace on the grid (the Laplace mechanism of Dwork, McSherry,
    Nissim & Smith 2006), drawn exactly by :mod:`dpstudio.engine.sampling`.

    Parameters
    ----------
    epsilon : float
        The per-user ε.
    bounds : tuple of float
        ``(lower, upper)``.
    delta : float
        Ignored: the guarantee is pure ε-LDP.
    """

    name = "local_laplace"
    label = "Local Laplace"
    family = "laplace"


class LocalGaussian(_GridNoise):
    """Each user adds exact Gaussian noise calibrated to ``upper − lower``, ε and δ.

    σ from the analytic Gaussian calibration (Balle & Wang 2018), checked against the
    discrete Gaussian's exact δ (Canonne, Kamath & Steinke 2020).

    Parameters
    ----------
    epsilon : float
        The per-user ε.
    bounds : tuple of float
        ``(lower, upper)``.
    delta : float
        The per-user δ, > 0.
    """

    name = "local_gaussian"
    label = "Local Gaussian"
    family = "gaussian"


class DuchiMean(MeanOracle):
    """Duchi et al.'s one-bit mean randomizer on ``[lower, upper]`` (pure ε-LDP).

    Duchi, Jordan & Wainwright (2018, JASA, "Minimax optimal procedures for locally
    private estimation"), the one-dimensional mechanism.

    Parameters
    ----------
    epsilon : float
        The per-user ε, in (0, 700].
    bounds : tuple of float
        ``(lower, upper)``, finite with ``lower < upper``.

    Attributes
    ----------
    lower, upper : float
        The bounds.
    B : float
        ``(e^ε + 1)/(e^ε − 1)``: a report reads as ``±B`` on the ``[−1, 1]`` scale.

    Raises
    ------
    ParameterError
        For missing or bad bounds, or a bad ε.
    """

    name = "duchi"
    label = "Duchi et al. one-bit mean"
    output_kind = "categorical"

    def __init__(self, epsilon: float, bounds) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        self.lower, self.upper = _bounds(bounds)
        self._keep = rr_keep_coin(self.epsilon, 1)
        ee = math.exp(self.epsilon)
        self.B = (ee + 1.0) / (ee - 1.0)
        self.messages_bits = 1

    def scaled(self, values) -> np.ndarray:
        """Values clamped and rescaled to ``[−1, 1]``.

        Parameters
        ----------
        values : array_like of float
            Finite numbers.

        Returns
        -------
        numpy.ndarray of float64

        Raises
        ------
        QueryError
            For text, NaN or infinities.
        """
        v = np.clip(check_numeric_values(values), self.lower, self.upper)
        return 2.0 * (v - self.lower) / (self.upper - self.lower) - 1.0

    def randomize(self, values, source) -> np.ndarray:
        """Each user's bit (1 for ``+B``, 0 for ``−B``).

        Parameters
        ----------
        values : array_like of float, shape (n,)
            Finite numbers; clamped to the bounds.
        source : Source
            The random source.

        Returns
        -------
        numpy.ndarray of uint8, shape (n,)

        Raises
        ------
        QueryError
            For text, NaN or infinities.
        """
        x = self.scaled(values)
        # Rounding to ±1 is a randomized pre-processing of the user's own value: any
        # probability in [0, 1] keeps ε-LDP, so a 53-bit float comparison is fine here.
        t = _uniform53(x.size, source) < (1.0 + x) / 2.0
        keep = self._keep.flip(x.size, source)
        return (t == keep).astype(np.uint8)  # 1 ↔ +B

    def estimate(self, reports, n: int | None = None) -> float:
        """The mean of ``±B`` mapped back to the bounds: unbiased for the clamped mean.

        Parameters
        ----------
        reports : array_like of int
            The bits :meth:`randomize` returned.
        n : int, optional
            The number of users; by default the number of reports.

        Returns
        -------
        float
            In the values' units (not clamped to the bounds).

        Raises
        ------
        QueryError
            For no reports.
        """
        r = np.asarray(reports)
        if r.size == 0:
            raise QueryError("no reports to estimate from")
        return self.estimate_from_ones(int(r.sum()), r.size if n is None else n)

    def estimate_from_ones(self, ones: int, n: int) -> float:
        """:meth:`estimate` from the number of ``+B`` bits (added over partitions).

        Parameters
        ----------
        ones : int
            Reports equal to 1.
        n : int
            The number of users (> 0).

        Returns
        -------
        float

        Raises
        ------
        QueryError
            For no users.
        """
        if int(n) <= 0:
            raise QueryError("no reports to estimate from")
        z = self.B * (2.0 * int(ones) / int(n) - 1.0)  # mean of ±B
        return self.lower + (self.upper - self.lower) * (z + 1.0) / 2.0

    def sample_estimates(self, tally: ValueTally, reps: int, source) -> np.ndarray:
        """``reps`` draws of ``estimate(randomize(values))`` without randomizing each record
        (for simulations only: the draws are seeded numpy ones, not exact coins).

        A user of rescaled value x reports 1 with probability
        ``k(1 + x)/2 + (1 − k)(1 − x)/2`` (k = the keep coin's probability), independently:
        the records holding one value add a binomial draw. The cost is in the tally's
        entries, not in n.

        Parameters
        ----------
        tally : ValueTally
            The users' values, grouped (:func:`~dpstudio.engine.local.tally.tally_values`).
        reps : int
            Number of simulated releases.
        source : Source
            The simulation's random source.

        Returns
        -------
        numpy.ndarray of float64, shape (reps,)
            The simulated estimates, in the values' units.

        Raises
        ------
        QueryError
            For no users, or values that are not finite numbers.
        """
        n = int(tally.n)
        if n == 0:
            raise QueryError("no reports to estimate from")
        x = self.scaled(tally.values)
        k = self._keep.value
        ones = bernoulli_totals(k * (1.0 + x) / 2.0 + (1.0 - k) * (1.0 - x) / 2.0,
                                tally.counts, int(reps), simulation_generator(source))
        z = self.B * (2.0 * ones / n - 1.0)
        return self.lower + (self.upper - self.lower) * (z + 1.0) / 2.0

    def variance(self, n: int, second_moment: float | None = None) -> float:
        """``((upper − lower)/2)² (B² − mean x²)/n`` with ``x`` the rescaled values
        (``second_moment`` = mean of ``x²``; default 0, an upper bound).

        Parameters
        ----------
        n : int
            The number of users.
        second_moment : float, optional
            The users' mean of ``x²`` on the ``[−1, 1]`` scale.

        Returns
        -------
        float
            In squared units of the values.
        """
        s = 0.0 if second_moment is None else float(second_moment)
        return ((self.upper - self.lower) / 2.0) ** 2 * (self.B**2 - s) / float(n)

    def report_keys(self, reports, against=None) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)

    def to_records(self, reports) -> dict[str, np.ndarray]:
        return {"report": np.asarray(reports, dtype=np.uint8)}

    def describe(self):
        return super().describe() | {"bounds": [self.lower, self.upper], "B": self.B}
