"""From a dataset and a resolved query to the values the engine sees.

Resolution against the declared schema is the analysis layer's
(:mod:`dpstudio.analysis.resolve`); this module reads the columns with pandas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpstudio.analysis.resolve import reader_for
from dpstudio.data.columns import category_column, numeric_column, yes_no_column
from dpstudio.data.schema import Schema
from dpstudio.engine.queries import QuerySpec

__all__ = ["ModelInput", "read_model_columns", "read_values"]


def read_values(frame: pd.DataFrame, spec: QuerySpec, declared: Schema | None) -> np.ndarray:
    """The column's values as the engine takes them for ``spec``."""
    reader = {"yes_no_column": yes_no_column, "category_column": category_column,
              "numeric_column": numeric_column}[reader_for(spec, declared)]
    return reader(frame, spec.column)


# ------------------------------------------------------------------------------ models

@dataclass(frozen=True)
class ModelInput:
    """A model release's columns as the engine takes them (``columns``: label and features,
    missing feature values already set to the middle of their declared bounds) and the
    declared feature bounds. ``imputed`` counts the values set so: a function of the raw
    data, analyst-only, never exported."""

    label: str
    features: tuple[str, ...]
    bounds: dict[str, tuple[float, float]]
    columns: dict[str, np.ndarray]
    imputed: int


def read_model_columns(frame: pd.DataFrame, label: str, features: tuple[str, ...],
                       bounds: dict[str, tuple[float, float]]) -> ModelInput:
    """The label and feature columns as ``dpstudio query`` prepares them for a model.

    Missing feature values are set to the middle of their declared bounds (a
    data-independent rule, so n stays the public number of records); the label must have
    no missing value and two classes.
    """
    from dpstudio.engine.errors import QueryError
    from dpstudio.engine.learning import binary_labels
    from dpstudio.engine.missing import fill_missing, midpoint
    from dpstudio.engine.queries import present_mask

    columns: dict[str, np.ndarray] = {}
    imputed = 0
    for name in features:
        values = numeric_column(frame, name).copy()
        columns[name], missing, _ = fill_missing(values, midpoint(*bounds[name]))
        imputed += missing
    y = category_column(frame, label)
    if not present_mask(y).all():
        raise QueryError(f"the label {label!r} has missing values; the model needs every "
                         "record labelled (n is public under replace-one)")
    binary_labels(y)  # two classes (yes/no, 0/1, true/false, -1/1), checked before charging
    columns[label] = y
    return ModelInput(label, tuple(features), dict(bounds), columns, imputed)
