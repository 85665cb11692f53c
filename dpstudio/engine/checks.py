"""Parameter checks shared by the whole engine: each raises a one-line ParameterError."""

from __future__ import annotations

import math

import numpy as np

from dpstudio.engine.errors import ParameterError, QueryError

__all__ = [
    "MAX_BOUND", "MIN_BOUNDS_WIDTH", "bounds_pair", "count", "non_negative", "number",
    "positive", "sample_rate",
]


#: Largest magnitude of a declared bound. Releases snap values to a power-of-two grid and
#: report noise variances and intervals in the values' units; a variance query squares the
#: bounds, its noise variance squares them again, and the delta-method error of a ratio
#: multiplies such terms once more (with ε as small as 1e-9). Within ±2^100 every one of
#: those numbers is a finite float with hundreds of binary orders to spare; bounds like
#: 1e300 would overflow them to inf (a crash when printed as JSON).
MAX_BOUND = 2.0**100
#: Smallest width upper − lower: keeps the grid, and the squares of a variance query, far
#: from the subnormal floats, where dividing by the power-of-two grid stops being exact.
MIN_BOUNDS_WIDTH = 2.0**-100


def number(name: str, value: float, *, low: float | None = None, low_open: bool = False,
           high: float | None = None, high_open: bool = False) -> float:
    """Return ``value`` as a finite float within the given limits, or raise ParameterError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    too_low = low is not None and (v < low or (low_open and v == low))
    too_high = high is not None and (v > high or (high_open and v == high))
    if not math.isfinite(v) or too_low or too_high:
        if low == 0 and high is None:
            rule = "greater than 0" if low_open else "≥ 0"
            raise ParameterError(f"{name} must be a finite number {rule}, got {value!r}")
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        low_text = "-∞" if low is None else f"{low:g}"
        high_text = "∞" if high is None else f"{high:g}"
        span = f"{lo}{low_text}, {high_text}{hi}"
        raise ParameterError(f"{name} must be a finite number in {span}, got {value!r}")
    return v


def positive(name: str, value: float) -> float:
    """``value`` as a float, finite and > 0."""
    return number(name, value, low=0.0, low_open=True)


def non_negative(name: str, value: float) -> float:
    """``value`` as a float, finite and ≥ 0."""
    return number(name, value, low=0.0)


def sample_rate(value: float) -> float:
    """The sampling probability q as a float, 0 < q ≤ 1."""
    return number("sample rate", value, low=0.0, low_open=True, high=1.0)


def count(name: str, value: int) -> int:
    """``value`` as an int, an integer ≥ 1."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ParameterError(f"{name} must be an integer ≥ 1, got {value!r}")
    return int(value)


def bounds_pair(bounds) -> tuple[float, float]:
    """Declared (lower, upper) as floats; QueryError if missing, non-finite or reversed."""
    if bounds is None:
        raise QueryError("declare the values' bounds (e.g. --bounds 0,100)")
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise QueryError(f"bounds must be two numbers, got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise QueryError(f"bounds must be finite, got {lo:g}, {hi:g}")
    if lo >= hi:
        raise QueryError(f"bounds are reversed or empty: lower {lo:g} must be below upper {hi:g}")
    if max(abs(lo), abs(hi)) > MAX_BOUND:
        raise QueryError(f"bounds {lo:g}, {hi:g} are too large for exact noise (at most "
                         f"±2^100 ≈ {MAX_BOUND:.3g}): declare the values in larger units")
    if hi - lo < MIN_BOUNDS_WIDTH:
        raise QueryError(f"bounds {lo:g}, {hi:g} are too close for exact noise (at least "
                         f"2^-100 ≈ {MIN_BOUNDS_WIDTH:.3g} apart): declare the values in "
                         "smaller units")
    return lo, hi
