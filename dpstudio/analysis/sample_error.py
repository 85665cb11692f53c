"""The error of simulated releases: one (point, low, high) over replications.

Shared by the utility curves of a row-level release (:mod:`dpstudio.analysis.utility`)
and of a user-level one (:mod:`dpstudio.analysis.contribution_utility`), so that the two
draw their points the same way without importing each other.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["error_of_samples"]


def error_of_samples(samples: np.ndarray, truth: np.ndarray, metric: str
                     ) -> tuple[float, float, float]:
    """(point, low, high) over replications, as the engine's Monte-Carlo curve computes it.

    Parameters
    ----------
    samples : numpy.ndarray
        One simulated release per row (a scalar release is a column of one).
    truth : numpy.ndarray
        The statistic the releases estimate (a scalar or one value per cell).
    metric : str
        ``"rmse"``, ``"relative"`` (the RMSE over the mean absolute truth) or ``"tv"``
        (total variation of a histogram over the total count, at least 1).

    Returns
    -------
    (float, float, float)
        The error and its ≈95% interval: ±2 standard errors of the mean squared error
        (of the TV distance for ``"tv"``) over the replications, then the square root.
    """
    t = np.atleast_1d(truth).astype(np.float64)
    x = samples.reshape(samples.shape[0], -1)
    if metric == "tv":
        per = 0.5 * np.abs(x - t).sum(axis=1) / max(float(t.sum()), 1.0)
        m, se = per.mean(), per.std(ddof=1) / math.sqrt(per.size)
        return float(m), float(m - 2 * se), float(m + 2 * se)
    sq = ((x - t) ** 2).mean(axis=1)
    mse, se = sq.mean(), sq.std(ddof=1) / math.sqrt(sq.size)
    point, low, high = (math.sqrt(max(v, 0.0)) for v in (mse, mse - 2 * se, mse + 2 * se))
    if metric == "relative":
        scale = float(np.abs(t).mean()) or 1.0
        return point / scale, low / scale, high / scale
    return point, low, high
