"""What a training run learns from and is measured on: the design matrix, the labels and
the held-out split.

Every feature is mapped by its declaration (:func:`~dpstudio.analysis.training
.resolve_training` filled them from the schema): a number by its declared bounds, a
category as one 0/1 indicator per declared category, a yes/no answer as one indicator.
Nothing is read off the data. The split is a seeded permutation: the same seed holds out
the same rows, in a simulation and in a release alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.errors import QueryError

__all__ = ["design", "labels", "split_rows"]


def _indicators(values: np.ndarray, categories: tuple[str, ...]) -> list[np.ndarray]:
    if categories == ("__yes__",):
        from dpstudio.engine.learning.features import binary_labels

        present = np.array([v is not None and not (isinstance(v, float) and math.isnan(v))
                            for v in np.asarray(values, dtype=object).tolist()])
        out = np.zeros(present.size)
        if present.any():
            out[present] = binary_labels(np.asarray(values, dtype=object)[present]) > 0
        return [out]
    text = np.array([str(v) for v in np.asarray(values, dtype=object).tolist()], dtype=object)
    return [(text == c).astype(np.float64) for c in categories]


def design(a: AnalysisSpec, columns: Mapping[str, np.ndarray]
           ) -> tuple[np.ndarray, list[str], dict[str, tuple[float, float]]]:
    """The design matrix (‖x‖ ≤ 1), its feature names and their bounds.

    Parameters
    ----------
    a : AnalysisSpec
        A resolved training run (declared bounds and categories).
    columns : mapping of str to numpy.ndarray
        The feature columns by name.

    Returns
    -------
    (numpy.ndarray, list of str, dict)
        The rows mapped into the unit ball, the feature names (a category expanded to
        ``name=category`` indicators) and each one's bounds ((0, 1) for an indicator).

    Raises
    ------
    QueryError
        For a feature column the input does not hold.
    """
    from dpstudio.engine.learning.features import design_matrix

    cats = dict(a.training.feature_categories or {})
    expanded: dict[str, np.ndarray] = {}
    bounds: dict[str, tuple[float, float]] = {}
    for name in a.features or ():
        if name not in columns:
            raise QueryError(f"no column {name!r}")
        if name in cats:
            names = ([name] if cats[name] == ("__yes__",)
                     else [f"{name}={c}" for c in cats[name]])
            for n, col in zip(names, _indicators(columns[name], cats[name]), strict=True):
                expanded[n], bounds[n] = col, (0.0, 1.0)
        else:
            expanded[name] = columns[name]
            bounds[name] = tuple(a.feature_bounds[name])
    names = list(expanded)
    return design_matrix(expanded, names, bounds), names, bounds


def labels(a: AnalysisSpec, columns: Mapping[str, np.ndarray]) -> np.ndarray:
    """The label column as the model reads it.

    Parameters
    ----------
    a : AnalysisSpec
        A resolved training run (a regression's declared label bounds).
    columns : mapping of str to numpy.ndarray
        The label column by name.

    Returns
    -------
    numpy.ndarray
        ±1 for a classifier; for a regression the label mapped to [−1, 1] (clipped) by
        its declared bounds.

    Raises
    ------
    QueryError
        For a label column the input does not hold (or a classifier's label that is not
        yes/no).
    """
    from dpstudio.engine.learning.features import binary_labels
    from dpstudio.engine.learning.models import regression_labels

    label = a.query.column
    if label not in columns:
        raise QueryError(f"no label column {label!r}")
    if a.training.model == "linear":
        return regression_labels(columns[label], a.training.label_bounds)
    return binary_labels(columns[label])


def split_rows(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) row indices: a seeded permutation, ⌈fraction·n⌉ rows held out.

    Parameters
    ----------
    n : int
        The number of rows.
    fraction : float
        The share held out, in (0, 1).
    seed : int
        The split's seed (public: the split is no secret, the rows are).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The training and the held-out rows, each sorted.

    Raises
    ------
    QueryError
        When too few rows are left on either side.
    """
    test = math.ceil(fraction * n)
    if n - test < 2 or test < 1:
        raise QueryError(f"too few records ({n}) to hold out {fraction:g} of them and "
                         "train on the rest")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[test:]), np.sort(perm[:test])
