"""The columns a training run reads, taken from a loaded table as the engine wants them.

Shared by ``dpstudio train`` and the application's Models tab, so both impute and refuse
alike: missing numeric features are set to the middle of their declared bounds (a
data-independent rule), a missing category is no indicator at all, and the label must
have no missing value.
"""

from __future__ import annotations

from typing import Any

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.errors import QueryError

__all__ = ["TrainingInput", "training_columns", "training_column_names"]


class TrainingInput:
    """The label and feature columns by name, and how many feature values were imputed.

    Attributes
    ----------
    columns : dict
        Column name → the engine's array (numbers as floats, categories as codes).
    imputed : int
        Feature values set to the middle of their declared bounds.
    """

    def __init__(self, columns: dict[str, Any], imputed: int) -> None:
        self.columns, self.imputed = columns, imputed


def training_column_names(analysis: AnalysisSpec) -> list[str]:
    """The columns a resolved training run reads, label first (to load no others).

    Parameters
    ----------
    analysis : AnalysisSpec
        A training run.

    Returns
    -------
    list of str
    """
    sites_by = (analysis.training.federated or {}).get("sites_by")
    return list(dict.fromkeys([analysis.query.column, *analysis.features,
                               *([sites_by] if sites_by else [])]))


def training_columns(frame: Any, analysis: AnalysisSpec) -> TrainingInput:
    """The label and feature columns of ``frame``, as the engine takes them.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (at least the columns of :func:`training_column_names`).
    analysis : AnalysisSpec
        A resolved training run (:func:`~dpstudio.analysis.training.resolve_training`).

    Returns
    -------
    TrainingInput

    Raises
    ------
    QueryError
        When the label has a missing value.
    """
    from dpstudio.data.columns import category_column, numeric_column
    from dpstudio.engine.missing import fill_missing, midpoint
    from dpstudio.engine.queries import present_mask

    label = analysis.query.column
    sites_by = (analysis.training.federated or {}).get("sites_by")
    columns: dict[str, Any] = {}
    imputed = 0
    for name in analysis.features:
        if name in (analysis.feature_bounds or {}):
            values = numeric_column(frame, name).copy()
            columns[name], missing, _ = fill_missing(
                values, midpoint(*analysis.feature_bounds[name]))
            imputed += missing
        else:
            columns[name] = category_column(frame, name)
    if analysis.training.model == "linear":
        y = numeric_column(frame, label)
        complete = bool((y == y).all())
    else:
        y = category_column(frame, label)
        complete = bool(present_mask(y).all())
    if not complete:
        raise QueryError(f"the label {label!r} has missing values; the model needs every "
                         "record labelled")
    columns[label] = y
    if sites_by:
        columns[sites_by] = category_column(frame, sites_by)
    return TrainingInput(columns, imputed)
