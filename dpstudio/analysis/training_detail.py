"""What a trained model's detail view shows: its coefficients, each one's noise and the
confusion matrix.

The coefficients in the features' own units (:func:`coefficients`), and two figures a
training run adds to its fields (:func:`~dpstudio.analysis.training.run_training`):

- ``noise_sd`` on each coefficient row: the standard deviation of the noise the method
  adds to that coefficient, in the coefficient's own units, computed from the engine's
  calibrated noise (its scale and lattice), never from the data. Only output
  perturbation adds noise to the coefficients themselves; DP-SGD (noise on every step's
  gradient) and objective perturbation (noise in the objective) have no such per-
  coefficient figure, and the rows then carry none.
- ``confusion``: the held-out confusion matrix of a classifier (counts, the threshold
  P(y = 1) > 0.5), read off the data without noise: for the analyst, never published.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["coefficients", "coordinate_noise_sd", "coefficient_noise_sd", "confusion_counts"]


def coefficients(theta: np.ndarray, names: Sequence[str],
                 bounds: Mapping[str, tuple[float, float]],
                 label_bounds: tuple[float, float] | None) -> list[dict[str, Any]]:
    """θ (normalized space) in the features' own units, the intercept last (as
    :class:`~dpstudio.engine.learning.erm.ModelRelease` gives them); a regression's in the
    label's units.

    Parameters
    ----------
    theta : numpy.ndarray
        The parameters in the design's space, the intercept's last.
    names : sequence of str
        The design's feature names (indicators expanded), in order.
    bounds : mapping of str to (float, float)
        Their declared bounds.
    label_bounds : (float, float) or None
        A regression label's declared bounds.

    Returns
    -------
    list of dict
        ``feature`` and ``coefficient`` per feature, then the intercept's row.
    """
    from dpstudio.engine.learning.features import INTERCEPT

    root = math.sqrt(theta.size)
    los = np.array([bounds[f][0] for f in names])
    his = np.array([bounds[f][1] for f in names])
    coef = theta[:-1] * 2.0 / ((his - los) * root)
    intercept = (theta[-1] - np.sum(theta[:-1] * (2.0 * los / (his - los) + 1.0))) / root
    if label_bounds is not None:  # ŷ in [−1, 1] ↦ the label's units
        lo, hi = label_bounds
        coef = coef * (hi - lo) / 2.0
        intercept = lo + (intercept + 1.0) * (hi - lo) / 2.0
    rows = [{"feature": f, "coefficient": float(c)} for f, c in zip(names, coef, strict=True)]
    return rows + [{"feature": INTERCEPT, "coefficient": float(intercept)}]



def coordinate_noise_sd(noise: Any) -> float | None:
    """The standard deviation of one coordinate of an engine's integer lattice noise.

    Parameters
    ----------
    noise : IntegerNoise
        The calibrated noise (``family``, ``scale`` in grid steps, ``grid``).

    Returns
    -------
    float or None
        √Var in the units of the values: the discrete Laplace of scale t has variance
        2r/(1 − r)² with r = e^{−1/t} (closed form); the discrete Gaussian of parameter σ
        has variance σ² up to a relative e^{−2π²σ²} (Canonne, Kamath & Steinke 2020,
        Prop. 19), far below double precision at the lattice's σ ≥ 2^15 steps. None for
        another family.
    """
    family = getattr(noise, "family", None)
    t, grid = float(noise.scale), float(noise.grid)
    if family == "laplace":
        r = math.exp(-1.0 / t)
        one_minus = -math.expm1(-1.0 / t)
        return math.sqrt(2.0 * r) / one_minus * grid
    if family == "gaussian":
        return t * grid
    return None


def coefficient_noise_sd(engine: Any, names: Sequence[str],
                         bounds: Mapping[str, tuple[float, float]],
                         label_bounds: tuple[float, float] | None) -> list[float] | None:
    """Each coefficient's noise standard deviation, in its own units, intercept last.

    The coefficients are θ mapped back from the normalized design space (as
    :func:`coefficients` does): coefficient j is
    θ_j·2/((hi_j − lo_j)√p) and the intercept (θ_p − Σ_j θ_j c_j)/√p with
    c_j = 2lo_j/(hi_j − lo_j) + 1. With independent noise of standard deviation s on each
    θ_j, coefficient j's noise has s·2/((hi_j − lo_j)√p) and the intercept's
    s·√(1 + Σ_j c_j²)/√p; a regression's are scaled by (hi − lo)/2 of the label.

    Parameters
    ----------
    engine : object
        The engine object of the run; its ``plan.noise`` (output perturbation's
        :class:`~dpstudio.engine.additive.IntegerNoise`) is read.
    names : sequence of str
        The design's feature names (indicators expanded), in order.
    bounds : mapping of str to (float, float)
        Their declared bounds.
    label_bounds : (float, float) or None
        A regression label's declared bounds.

    Returns
    -------
    list of float or None
        One standard deviation per coefficient then the intercept's; None when the method
        adds no noise to the coefficients themselves.
    """
    noise = getattr(getattr(engine, "plan", None), "noise", None)
    if noise is None:
        return None
    s = coordinate_noise_sd(noise)
    if s is None:
        return None
    root = math.sqrt(len(names) + 1)
    los = np.array([bounds[f][0] for f in names], dtype=np.float64)
    his = np.array([bounds[f][1] for f in names], dtype=np.float64)
    coef = s * 2.0 / ((his - los) * root)
    c = 2.0 * los / (his - los) + 1.0
    intercept = s * math.sqrt(1.0 + float(np.sum(c * c))) / root
    if label_bounds is not None:
        scale = (label_bounds[1] - label_bounds[0]) / 2.0
        coef, intercept = coef * scale, intercept * scale
    return [float(v) for v in coef] + [float(intercept)]


def confusion_counts(y: np.ndarray, probability: np.ndarray) -> dict[str, int]:
    """A classifier's confusion matrix on held-out rows (predicted positive: P > 0.5).

    Parameters
    ----------
    y : numpy.ndarray
        The held-out labels, positive class > 0.
    probability : numpy.ndarray
        The model's P(y = 1) on those rows (NaN counts as 0.5: a negative prediction).

    Returns
    -------
    dict
        ``tn``, ``fp``, ``fn``, ``tp`` (counts; they sum to the held-out rows).
    """
    truth = np.asarray(y, dtype=np.float64) > 0
    pred = np.nan_to_num(np.asarray(probability, dtype=np.float64), nan=0.5) > 0.5
    return {"tn": int(np.sum(~truth & ~pred)), "fp": int(np.sum(~truth & pred)),
            "fn": int(np.sum(truth & ~pred)), "tp": int(np.sum(truth & pred))}
