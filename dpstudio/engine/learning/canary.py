"""The canary of a membership audit: which record to test, and how to score it.

An audit (:mod:`dpstudio.engine.learning.membership`) is only as strong as its canary: a
record that moves the model little certifies little. :func:`corner_canary` picks a
worst-case-ish one: a corner of the declared bounds (a design row of norm exactly 1),
labelled against a reference model. :func:`canary_logistic_loss` is the usual score of a
linear classifier on it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dpstudio.engine.checks import bounds_pair, count
from dpstudio.engine.errors import ParameterError

__all__ = ["Canary", "canary_logistic_loss", "corner_canary"]

# Corners enumerated exhaustively up to this many features; beyond, a fixed sample.
_MAX_ENUMERATED = 12
_SAMPLED_CORNERS = 4096


@dataclass(frozen=True)
class Canary:
    """The record whose membership an audit tests.

    Attributes
    ----------
    x : numpy.ndarray, shape (p,)
        Its row in the learner's design space
        (:func:`~dpstudio.engine.learning.features.design_matrix`).
    y : float
        Its label, in the learner's units (±1 for classification).
    values : dict or None
        Its features in their own units (each at a declared bound), when the features
        and bounds were given.
    reason : str
        Why this record, in one sentence, for reports.
    """

    x: np.ndarray
    y: float
    values: dict | None
    reason: str


def corner_canary(dimension: int, decision: Callable[[np.ndarray], np.ndarray] | None = None,
                  *, features: Sequence[str] | None = None,
                  bounds: Mapping[str, tuple[float, float]] | None = None,
                  label_bounds: tuple[float, float] | None = None) -> Canary:
    """A worst-case-ish canary: a corner of the declared box, labelled against the model.

    Every learner here bounds its sensitivity on rows with ‖x‖₂ ≤ 1; a corner of the
    declared bounds (every feature at its lower or upper bound) is a row of norm exactly
    1, where one record's gradient can be largest. Among the corners, it takes the one a
    reference model (``decision``, e.g. the non-private model's logit) is most confident
    about, and gives it the *other* label: its loss, hence its pull on the model, is then
    as large as a record's can be, which is what a tight audit needs. Without a reference
    model it takes the all-upper-bounds corner with the negative label (reads no data).

    For a regression (``label_bounds`` given) the corner is the one whose prediction is
    farthest from the middle of the label's declared range, and the label the declared
    bound on the other side.

    Parameters
    ----------
    dimension : int
        p = d + 1, the design matrix's columns (d features and the intercept feature).
    decision : callable, optional
        Vectorized rows (k, p) ↦ decision values (k,) of a reference model. Reading the
        data through it is fine: an audit is an analyst's simulation, never a release.
    features : sequence of str, optional
        The d feature names, to report the canary in their units.
    bounds : mapping of str to (float, float), optional
        Their declared bounds (with ``features``).
    label_bounds : (float, float), optional
        Declared bounds of a regression label; None for classification.

    Returns
    -------
    Canary

    Raises
    ------
    ParameterError
        If the dimension is below 2, the decision gives the wrong shape, or the
        features do not match the dimension.
    """
    p = count("dimension", dimension)
    if p < 2:
        raise ParameterError("the design has at least one feature and the intercept (p ≥ 2)")
    d = p - 1
    if d <= _MAX_ENUMERATED:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=d)))
    else:  # a fixed sample: the choice of a record, not noise, so a fixed seed is fine
        gen = np.random.default_rng(0)
        signs = np.vstack([np.ones(d), gen.choice((1.0, -1.0), (_SAMPLED_CORNERS, d))])
    rows = np.column_stack([signs, np.ones(signs.shape[0])]) / math.sqrt(p)
    if decision is None:
        i, value = 0, None
    else:
        value = np.asarray(decision(rows), dtype=np.float64)
        if value.shape != (rows.shape[0],) or not np.all(np.isfinite(value)):
            raise ParameterError("the reference model must give one finite value per row")
    if label_bounds is None:
        if value is not None:
            i = int(np.argmax(np.abs(value)))
        y = -1.0 if value is None or value[i] >= 0 else 1.0
        why = ("the corner of the declared bounds the reference model is most confident "
               "about, with the other label" if value is not None else
               "the corner of the declared upper bounds with the negative label (no "
               "reference model)")
    else:
        lo, hi = bounds_pair(label_bounds)
        mid = 0.5 * (lo + hi)
        if value is not None:
            i = int(np.argmax(np.abs(value - mid)))
        y = lo if value is None or value[i] >= mid else hi
        why = ("the corner of the declared bounds predicted farthest from the label's "
               "middle, with the label's bound on the other side")
    values = None
    if features is not None:
        names = list(features)
        if len(names) != d or bounds is None:
            raise ParameterError(f"give the bounds of the {d} features of the design")
        values = {f: bounds_pair(bounds[f])[1 if s > 0 else 0]
                  for f, s in zip(names, signs[i], strict=True)}
    return Canary(rows[i], float(y), values, why)


def canary_logistic_loss(model, x, y) -> float:
    """The logistic loss log(1 + exp(−y·θᵀx)) of a linear model on one record.

    A ``score`` for :func:`audit_membership`: members have lower loss.

    Parameters
    ----------
    model : array_like or object with ``theta``
        The coefficients θ (normalized design space).
    x : array_like, shape (p,)
        The record's design row.
    y : float
        Its label, ±1.

    Returns
    -------
    float
    """
    theta = np.asarray(getattr(model, "theta", model), dtype=np.float64)
    return float(np.logaddexp(0.0, -float(y) * float(theta @ np.asarray(x, np.float64))))
