"""How good a trained model is on held-out rows, and how much that varies over runs.

A private model is random: two trainings on the same data give two models. Every metric
here therefore accepts one run (a 1-d array of scores) or many at once (a 2-d array,
one row per run, the same held-out rows in each) and returns one value per run;
:func:`summarize` turns those into a mean with its spread, which is what a plot or a
model card shows (never a single run's number presented as *the* accuracy).

- :func:`accuracy`: share of rows whose predicted class (score above a threshold) is the
  label's;
- :func:`auc`: the area under the ROC curve, computed from ranks (Mann–Whitney U) with
  tied scores given their mid-rank, i.e. a tie counts one half, exactly as the pairwise
  definition P(score₊ > score₋) + ½·P(score₊ = score₋);
- :func:`rmse`: root mean squared error of a regression;
- :func:`excess_risk`: mean loss of the model minus that of the non-private baseline on
  the same rows (the DP-ERM literature's utility measure; it may be negative on a finite
  held-out split).

Labels are ±1 as :func:`~dpstudio.engine.learning.features.binary_labels` gives them
(0/1 and booleans are accepted too: anything positive is the positive class).
Everything is vectorized: no loop over rows or runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from dpstudio.engine.errors import ParameterError

__all__ = [
    "Summary",
    "accuracy",
    "auc",
    "excess_risk",
    "logistic_loss",
    "rmse",
    "summarize",
]


def _runs(values, name: str) -> np.ndarray:
    """``values`` as a float 2-d array (runs × rows); one run for a 1-d input."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] == 0:
        raise ParameterError(f"{name} must be a non-empty 1-d array (one run) or 2-d "
                             "array (one row per run)")
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{name} must be finite numbers (no NaN or infinity)")
    return a


def _labels(y, rows: int) -> np.ndarray:
    """Labels as booleans (positive class True), one per held-out row."""
    a = np.asarray(y)
    if a.ndim != 1 or a.size != rows:
        raise ParameterError(f"the labels must be one value per held-out row ({rows}), "
                             f"got shape {a.shape}")
    return a.astype(np.float64) > 0


def _out(per_run: np.ndarray, was_1d: bool):
    return float(per_run[0]) if was_1d else per_run


def accuracy(y, scores, threshold: float = 0.0):
    """Share of rows classified correctly: positive predicted when score > ``threshold``.

    Parameters
    ----------
    y : array_like, shape (n,)
        Labels, positive class > 0 (±1, 0/1 or booleans).
    scores : array_like, shape (n,) or (runs, n)
        Decision values (logits: threshold 0) or probabilities (threshold 0.5).
    threshold : float, optional
        The decision threshold.

    Returns
    -------
    float or numpy.ndarray
        The accuracy in [0, 1]; one per run for 2-d ``scores``.

    Raises
    ------
    ParameterError
        For empty, non-finite or mismatched inputs.
    """
    s = _runs(scores, "the scores")
    pos = _labels(y, s.shape[1])
    return _out(np.mean((s > threshold) == pos, axis=1), np.ndim(scores) == 1)


def auc(y, scores):
    """Area under the ROC curve from ranks, ties counted one half (Mann–Whitney U).

    AUC = (R₊ − n₊(n₊+1)/2)/(n₊·n₋), where R₊ is the sum of the positives' mid-ranks
    among all scores: the probability that a random positive scores above a random
    negative, plus half the probability of a tie.

    Parameters
    ----------
    y : array_like, shape (n,)
        Labels, positive class > 0; both classes must be present.
    scores : array_like, shape (n,) or (runs, n)
        Scores, larger meaning "more likely positive".

    Returns
    -------
    float or numpy.ndarray
        The AUC in [0, 1]; one per run for 2-d ``scores``.

    Raises
    ------
    ParameterError
        For empty, non-finite or mismatched inputs, or labels of one class only.
    """
    s = _runs(scores, "the scores")
    pos = _labels(y, s.shape[1])
    n_pos = int(pos.sum())
    n_neg = pos.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ParameterError("the AUC needs both classes among the held-out labels")
    ranks = rankdata(s, method="average", axis=1)
    u = ranks[:, pos].sum(axis=1) - n_pos * (n_pos + 1) / 2.0
    return _out(u / (n_pos * n_neg), np.ndim(scores) == 1)


def rmse(y, predictions):
    """Root mean squared error of regression predictions.

    Parameters
    ----------
    y : array_like, shape (n,)
        The true values.
    predictions : array_like, shape (n,) or (runs, n)
        Predicted values.

    Returns
    -------
    float or numpy.ndarray
        √(mean (prediction − y)²); one per run for 2-d ``predictions``.

    Raises
    ------
    ParameterError
        For empty, non-finite or mismatched inputs.
    """
    p = _runs(predictions, "the predictions")
    t = np.asarray(y, dtype=np.float64)
    if t.ndim != 1 or t.size != p.shape[1]:
        raise ParameterError(f"the true values must be one per held-out row ({p.shape[1]}), "
                             f"got shape {t.shape}")
    return _out(np.sqrt(np.mean((p - t) ** 2, axis=1)), np.ndim(predictions) == 1)


def logistic_loss(y, scores):
    """Per-row logistic loss log(1 + exp(−y·score)), computed without overflow.

    Parameters
    ----------
    y : array_like, shape (n,)
        Labels, positive class > 0 (mapped to ±1).
    scores : array_like, shape (n,) or (runs, n)
        Logits.

    Returns
    -------
    numpy.ndarray
        The losses, the shape of ``scores``.

    Raises
    ------
    ParameterError
        For empty, non-finite or mismatched inputs.
    """
    s = _runs(scores, "the scores")
    sign = np.where(_labels(y, s.shape[1]), 1.0, -1.0)
    loss = np.logaddexp(0.0, -sign * s)
    return loss[0] if np.ndim(scores) == 1 else loss


def excess_risk(losses, baseline_losses):
    """Mean loss of the model minus the non-private baseline's, on the same rows.

    Parameters
    ----------
    losses : array_like, shape (n,) or (runs, n)
        Per-row losses of the model (e.g. :func:`logistic_loss`, or squared errors).
    baseline_losses : array_like, shape (n,)
        Per-row losses of the non-private model on the same rows.

    Returns
    -------
    float or numpy.ndarray
        mean(losses) − mean(baseline_losses); one per run for 2-d ``losses``. On a
        held-out split it can be slightly negative (the baseline minimizes the training
        loss, not this one).

    Raises
    ------
    ParameterError
        For empty, non-finite or mismatched inputs.
    """
    a = _runs(losses, "the losses")
    b = _runs(baseline_losses, "the baseline losses")
    if b.shape != (1, a.shape[1]):
        raise ParameterError("the baseline losses must be one per held-out row, as the "
                             "model's")
    return _out(a.mean(axis=1) - b.mean(), np.ndim(losses) == 1)


@dataclass(frozen=True)
class Summary:
    """A metric over repeated runs: its mean and how much it varies.

    Attributes
    ----------
    mean : float
        Mean over the runs.
    std : float
        Standard deviation over the runs (ddof = 1): the spread one run shows; 0 for a
        single run.
    se : float
        Standard error of the mean, std/√runs.
    low, high : float
        Smallest and largest value seen.
    runs : int
        Number of runs.
    """

    mean: float
    std: float
    se: float
    low: float
    high: float
    runs: int

    def to_dict(self) -> dict:
        """JSON-ready: the attributes by name.

        Returns
        -------
        dict
            ``mean``, ``std``, ``se``, ``low``, ``high``, ``runs``.
        """
        return {"mean": self.mean, "std": self.std, "se": self.se, "low": self.low,
                "high": self.high, "runs": self.runs}


def summarize(values) -> Summary:
    """Mean and spread of one metric over repeated runs.

    Parameters
    ----------
    values : array_like, 1-d
        One value per run (e.g. what :func:`accuracy` returns for 2-d scores).

    Returns
    -------
    Summary

    Raises
    ------
    ParameterError
        If there is no value or one is not finite.
    """
    v = np.ravel(np.asarray(values, dtype=np.float64))
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ParameterError("a summary needs at least one finite value per run")
    std = float(v.std(ddof=1)) if v.size > 1 else 0.0
    return Summary(float(v.mean()), std, std / math.sqrt(v.size), float(v.min()),
                   float(v.max()), int(v.size))
