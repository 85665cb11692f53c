"""Parameter checks shared by the whole engine: each raises a one-line ParameterError.

:func:`number` is the one range check; the others name common ranges (positive,
non-negative, a sampling rate, a count) or check a pair of declared bounds.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

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


def _show(x: float) -> str:
    """A limit as people read it: ``1e+09``, ``0.01``, and whole numbers in full
    (``1048576``) where the short form would round them."""
    short = f"{x:g}"
    if float(short) == x:
        return short
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _rule(low: float | None, low_open: bool, high: float | None, high_open: bool) -> str:
    """The allowed range as words after "must be a finite number": ``" greater than 0"``,
    ``" ≤ 1"``, ``" in (0, 1)"``, or nothing for the whole real line."""
    if low is None and high is None:
        return ""
    if high is None:
        return f" greater than {_show(low)}" if low_open else f" ≥ {_show(low)}"
    if low is None:
        return f" less than {_show(high)}" if high_open else f" ≤ {_show(high)}"
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    return f" in {lo}{_show(low)}, {_show(high)}{hi}"


def number(name: str, value: Any, *, low: float | None = None, low_open: bool = False,
           high: float | None = None, high_open: bool = False,
           what: str = "a finite number") -> float:
    """``value`` as a finite float within the given limits: the engine's one range check.

    Every numeric range of the engine and of its clients is checked here, so a range reads
    the same wherever it is refused ("ε must be a finite number in (0, 100], got 0").
    Callers that also check a type (a whole number, a spec's TOML value) do that first and
    pass ``what`` to name it.

    Parameters
    ----------
    name : str
        The parameter as the user knows it (``"ε"``, ``"sigma"``), for the message.
    value : Any
        The value as given: a number, numeric text, or a :class:`~decimal.Decimal`
        (compared exactly, without rounding to a float first).
    low, high : float or None
        The limits; None leaves that side open to infinity.
    low_open, high_open : bool
        Exclude the limit itself (``low=0, low_open=True`` is "greater than 0").
    what : str
        What the value must be, for the message (``"an integer"``).

    Returns
    -------
    float
        The value as a float.

    Raises
    ------
    ParameterError
        One line naming the parameter, the rule and the value given: "must be a number"
        for something that is not one, else "must be ``what`` ``rule``" for NaN, ±inf or a
        value outside the limits.
    """
    try:
        v = value if isinstance(value, Decimal) else float(value)
    except OverflowError:  # an int beyond the floats: infinite for the range check
        v = math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    finite = v.is_finite() if isinstance(v, Decimal) else math.isfinite(v)
    # Ordering a NaN Decimal raises: compare only once the value is known to be finite.
    if (not finite
            or (low is not None and (v < low or (low_open and v == low)))
            or (high is not None and (v > high or (high_open and v == high)))):
        rule = _rule(low, low_open, high, high_open)
        # A Decimal is shown as its digits (what was typed), not as Decimal('…').
        given = str(value) if isinstance(value, Decimal) else repr(value)
        raise ParameterError(f"{name} must be {what}{rule}, got {given}")
    return float(v)


def positive(name: str, value: Any) -> float:
    """``value`` as a float, finite and > 0.

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : Any
        The value as given.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        When ``value`` is not a finite number greater than 0.
    """
    return number(name, value, low=0.0, low_open=True)


def non_negative(name: str, value: Any) -> float:
    """``value`` as a float, finite and ≥ 0.

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : Any
        The value as given.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        When ``value`` is not a finite number ≥ 0.
    """
    return number(name, value, low=0.0)


def sample_rate(value: Any) -> float:
    """The sampling probability q as a float, 0 < q ≤ 1.

    Parameters
    ----------
    value : Any
        The rate as given.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        When ``value`` is not in (0, 1].
    """
    return number("sample rate", value, low=0.0, low_open=True, high=1.0)


def count(name: str, value: int) -> int:
    """``value`` as an int, an integer ≥ 1.

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : int
        An ``int`` or numpy integer (not a bool, not a float).

    Returns
    -------
    int

    Raises
    ------
    ParameterError
        When ``value`` is not an integer ≥ 1.
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ParameterError(f"{name} must be an integer ≥ 1, got {value!r}")
    number(name, value, low=1, what="an integer")
    return int(value)


def bounds_pair(bounds: Any) -> tuple[float, float]:
    """The declared bounds of a column's values, checked for exact noise.

    Parameters
    ----------
    bounds : pair of numbers or None
        The declared (lower, upper).

    Returns
    -------
    tuple of float
        (lower, upper), with lower < upper.

    Raises
    ------
    QueryError
        When the bounds are missing, not two finite numbers, reversed or empty, larger
        than ±:data:`MAX_BOUND` or closer than :data:`MIN_BOUNDS_WIDTH`.
    """
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
