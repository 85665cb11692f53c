"""Missing values: what a record without a usable value contributes.

A missing value (empty, NaN) and a non-finite one (±inf) are the same thing to every
release: not a value inside the declared bounds. Where a release needs every record to
contribute (imputation under ``replace``, local reports, shuffle and secure-aggregation
messages, model features), the record contributes a declared constant — by default the
middle of the declared bounds, a rule that reads no data. One place for that rule, so the
trust models cannot drift apart.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fill_missing", "midpoint"]


def midpoint(lower: float, upper: float) -> float:
    """The middle of the declared bounds (halves first: no overflow near the float maximum).

    Parameters
    ----------
    lower, upper : float
        The declared bounds, in the units of the values.

    Returns
    -------
    float
        ``lower/2 + upper/2``.
    """
    return float(lower) / 2.0 + float(upper) / 2.0


def fill_missing(values, fill: float) -> tuple[np.ndarray, int, int]:
    """A float64 copy of ``values`` with every missing or non-finite entry set to ``fill``.

    Returns ``(x, missing, non_finite)``: how many entries were filled, and how many of
    those were ±inf — counts of the data, for the analyst only. Raises ``TypeError`` or
    ``ValueError`` when the values are not numbers.

    Parameters
    ----------
    values : array_like
        Numbers (NaN marks a missing value); flattened to one dimension.
    fill : float
        The constant a missing or non-finite record contributes, e.g. :func:`midpoint`.

    Returns
    -------
    x : numpy.ndarray of float64
        The filled values, 1-d.
    missing : int
        How many entries were filled (NaN and ±inf).
    non_finite : int
        How many of those were ±inf.

    Raises
    ------
    TypeError, ValueError
        When ``values`` cannot be read as float64 numbers.
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    bad = ~np.isfinite(x)
    return (np.where(bad, float(fill), x), int(np.count_nonzero(bad)),
            int(np.count_nonzero(np.isinf(x))))
