"""Client-side encoding shared by the distributed and shuffle protocols.

Each client maps its value from the declared bounds [lower, upper] to [0, 1] (clamping
what lies outside), then to an integer in {0, …, p} by unbiased randomized rounding at
precision 1/p. The protocols sum these integers; the analyzer maps the (noisy) integer
sum back: ``sum = n·lower + (upper − lower)·S/p``. Neighbouring datasets differ in one
client's value (*replace-one*; the number of clients is public in both trust models, as
the server or the shuffler sees every client's messages), so the integer sum has
sensitivity p grid steps whatever the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstudio.engine.calibration import analytic_gaussian_sigma
from dpstudio.engine.checks import bounds_pair
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.missing import fill_missing, midpoint
from dpstudio.engine.rng import Source

__all__ = [
    "Encoded",
    "auto_precision_bits",
    "bernstein_half_width",
    "check_bounds",
    "check_precision_bits",
    "encode_values",
    "randomized_round",
    "unit_values",
]

# Automatic precision: the central noise, in grid steps, stays below 2^13 (so the exact
# accounting stays fast) and at least 1 step.
_TARGET_NOISE_STEPS = 2.0**13
MAX_PRECISION_BITS = 20


def check_bounds(bounds) -> tuple[float, float]:
    """The declared bounds of a protocol sum, checked.

    Parameters
    ----------
    bounds : tuple of float or None
        Declared (lower, upper).

    Returns
    -------
    tuple of float
        (lower, upper) as floats.

    Raises
    ------
    QueryError
        For missing, non-finite, reversed or out-of-range bounds.
    """
    if bounds is None:
        raise QueryError("a sum or mean needs declared bounds (e.g. --bounds 0,100)")
    return bounds_pair(bounds)


def randomized_round(u: np.ndarray, p: int, source: Source) -> np.ndarray:
    """Round each u·p to its floor or ceiling, up with probability equal to the fraction.

    Unbiased (E = u·p), and always in {0, …, p}; the coin is a 53-bit uniform drawn only
    for values off the grid.

    Parameters
    ----------
    u : numpy.ndarray
        Values in [0, 1] (clipped there first).
    p : int
        Grid points per unit: the precision.
    source : Source
        Randomness of the rounding coins.

    Returns
    -------
    numpy.ndarray
        int64 integers in {0, …, p}, of the shape of ``u``.
    """
    x = np.clip(np.asarray(u, dtype=np.float64), 0.0, 1.0) * float(p)
    base = np.floor(x)
    frac = x - base
    up = np.zeros(x.shape, dtype=bool)
    fractional = frac > 0
    count = int(np.count_nonzero(fractional))
    if count:
        w = (source.uint64(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        up[fractional] = w < frac[fractional]
    return np.minimum(base.astype(np.int64) + up, int(p))


@dataclass
class Encoded:
    """Clients' values as integers in {0, …, p}, and what the analyzer needs to decode.

    Attributes
    ----------
    steps : numpy.ndarray
        One integer in {0, …, p} per client.
    lower, upper : float
        The declared bounds.
    precision : int
        p: grid steps across the bounds.
    clamped : int
        Values outside the bounds, clamped (analyst-only).
    missing : int
        Missing or non-finite values, sent as the middle of the bounds (analyst-only).
    """

    steps: np.ndarray
    lower: float
    upper: float
    precision: int
    clamped: int
    missing: int = 0  # sent as the middle of the bounds; analyst-only

    @property
    def n(self) -> int:
        """Number of clients."""
        return int(self.steps.size)

    @property
    def step_value(self) -> float:
        """Width of one grid step in the units of the values."""
        return (self.upper - self.lower) / self.precision

    def decode_sum(self, integer_sum: float, n: int | None = None) -> float:
        """The sum, in value units, of ``n`` clients whose grid sum is ``integer_sum``."""
        count = self.n if n is None else int(n)
        return count * self.lower + integer_sum * self.step_value


MISSING_NOTE = ("every client sends a message: a missing or non-finite value is sent as the "
                "middle of the declared bounds, so n is the number of rows and who answered "
                "is not revealed")


def unit_values(values, bounds) -> tuple[np.ndarray, float, float, int, int]:
    """Values clamped to the bounds and scaled to [0, 1].

    Every row is a client, and every client sends a message: a missing or non-finite
    value is sent as the middle of the declared bounds (u = 1/2). Dropping such clients
    would make n, which the server or the shuffler sees, reveal how many of them there
    are, and a missing/present pair would then not be replace-neighbours at sensitivity
    one grid width. How many values were clamped or missing is for the analyst only.

    Parameters
    ----------
    values : array_like
        The column (floats with NaN for missing).
    bounds : tuple of float
        Declared (lower, upper).

    Returns
    -------
    tuple
        (u, lower, upper, clamped, missing): one u in [0, 1] per row, the bounds, and
        how many values were clamped or missing.

    Raises
    ------
    QueryError
        For bad bounds, a non-numeric column or an empty one.
    """
    lo, hi = check_bounds(bounds)
    try:
        x, missing, _ = fill_missing(values, midpoint(lo, hi))
    except (TypeError, ValueError):
        raise QueryError("a sum or mean needs a numeric column") from None
    if x.size == 0:
        raise QueryError("the column is empty")
    clamped = int(np.count_nonzero((x < lo) | (x > hi)))
    return (np.clip(x, lo, hi) - lo) / (hi - lo), lo, hi, clamped, missing


def encode_values(values, bounds, precision: int, source: Source) -> Encoded:
    """Clamp finite values to the bounds, scale to [0, 1] and round to {0, …, p}.

    Parameters
    ----------
    values : array_like
        The column; missing or non-finite values are sent as the middle of the bounds.
    bounds : tuple of float
        Declared (lower, upper).
    precision : int
        p: grid steps across the bounds.
    source : Source
        Randomness of the rounding.

    Returns
    -------
    Encoded
        The clients' integers and what decoding needs.

    Raises
    ------
    QueryError
        As :func:`unit_values`.
    """
    u, lo, hi, clamped, missing = unit_values(values, bounds)
    return Encoded(randomized_round(u, int(precision), source), lo, hi, int(precision),
                   clamped, missing)


def auto_precision_bits(epsilon: float, delta: float) -> int:
    """Bits k of the grid p = 2^k chosen automatically for a guarantee.

    The largest k with central Gaussian noise (sensitivity p) below 2^13 steps, so that
    rounding (variance ≤ n/4 steps²) is negligible against the noise for up to ~10⁶
    clients while the exact accounting stays fast.

    Parameters
    ----------
    epsilon, delta : float
        The guarantee the noise is planned for.

    Returns
    -------
    int
        k in [0, 16].
    """
    c = analytic_gaussian_sigma(1.0, epsilon, delta)
    k = math.floor(math.log2(_TARGET_NOISE_STEPS / c))
    return int(min(max(k, 0), 16))


def check_precision_bits(bits: int) -> int:
    """The precision bits a user set, checked (0 means automatic).

    Parameters
    ----------
    bits : int
        Bits of the grid, 0 … :data:`MAX_PRECISION_BITS`.

    Returns
    -------
    int

    Raises
    ------
    ParameterError
        Outside that range.
    """
    b = int(bits)
    if not 0 <= b <= MAX_PRECISION_BITS:
        raise ParameterError(f"precision bits must be in [0, {MAX_PRECISION_BITS}], got {bits}")
    return b


def bernstein_half_width(variance: float, bound: float, beta: float) -> float:
    """Half-width t of a Bernstein interval for a sum of bounded independent errors.

    t with P(|Σ X_i| ≥ t) ≤ β for independent zero-mean X_i with |X_i| ≤ ``bound`` and
    Σ Var X_i ≤ ``variance`` (Bernstein: 2·exp(−t²/(2(V + bt/3))) ≤ β).

    Parameters
    ----------
    variance : float
        V, an upper bound on the sum's variance.
    bound : float
        b, a bound on each term's magnitude.
    beta : float
        β, the probability left outside, in (0, 1).

    Returns
    -------
    float
        t ≥ 0 (0 when the variance is 0).
    """
    if variance <= 0:
        return 0.0
    L = math.log(2.0 / beta)
    b = bound / 3.0
    # t² − 2bLt − 2VL = 0
    return b * L + math.sqrt((b * L) ** 2 + 2.0 * variance * L)
