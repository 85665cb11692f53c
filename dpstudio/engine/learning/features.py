"""What a learner reads: features mapped into the unit ball, binary labels, and λ.

Kept apart from any one algorithm: every learner of this package bounds its sensitivity
on rows with ‖x‖₂ ≤ 1, so they share this mapping rather than each writing its own.

Features and labels
-------------------
Features are mapped by their *declared* bounds (never read off the data) to [−1, 1],
clipped, and divided by √p, where p = d + 1 counts the d features plus an intercept
feature of constant value 1/√p; so every row has ‖x‖₂ ≤ 1 and the intercept is a
coefficient like the others (inside the norm bound, and regularized). Labels are ±1
(given as −1/1, 0/1, no/yes or false/true).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from dpstudio.engine.checks import bounds_pair, number
from dpstudio.engine.errors import QueryError

__all__ = ["INTERCEPT", "binary_labels", "design_matrix"]

INTERCEPT = "(intercept)"
_POSITIVE = {"1", "1.0", "yes", "true", "y", "t"}
_NEGATIVE = {"-1", "-1.0", "0", "0.0", "no", "false", "n", "f"}


# Here, with the other inputs, because the solver, the noise calibration and the release
# all check the same λ.
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
