"""From a dataset and a query to the values the engine sees (as ``dpstudio query`` does).

Bounds and categories come from the spec, or else from the dataset's *declared* schema
(its sidecar file) — never from the data. Delta is dropped for pure-ε mechanisms, so the
ledger charges what the mechanism actually spends.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from dpstudio.data.columns import category_column, numeric_column, yes_no_column
from dpstudio.data.schema import ColumnType, Schema
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY

__all__ = ["read_values", "reader_for", "resolve_query"]

_NUMERIC = ("sum", "mean", "variance", "quantile", "median")


def resolve_query(spec: QuerySpec, declared: Schema | None) -> tuple[QuerySpec, list[str]]:
    """The spec completed from the declared schema, validated; and notes on what was filled."""
    notes: list[str] = []
    column = declared.get(spec.column) if declared is not None and spec.column else None
    bounds, categories = spec.bounds, spec.categories
    if column is not None:
        wants_bounds = spec.query in _NUMERIC or (spec.query == "histogram" and spec.bins)
        if bounds is None and wants_bounds and column.bounds is not None:
            bounds = column.bounds
            notes.append(f"bounds {bounds[0]:g},{bounds[1]:g} as declared in the dataset's "
                         "schema")
        if (spec.query == "histogram" and categories is None and spec.bins is None
                and column.categories):
            categories = tuple(column.categories)
            notes.append("categories as declared in the dataset's schema")
    params = {"delta"} & {p.name for p in REGISTRY.get(spec.mechanism).params}
    delta = spec.delta if params else 0.0
    if delta != spec.delta:
        notes.append(f"{spec.mechanism} is pure ε-DP: δ set to 0")
    out = replace(spec, bounds=bounds, categories=categories, delta=delta)
    return out.validated(), notes


def reader_for(spec: QuerySpec, declared: Schema | None) -> str:
    """Which :mod:`dpstudio.data` function reads the column for this query."""
    column = declared.get(spec.column) if declared is not None and spec.column else None
    categorical = spec.query == "histogram" and spec.categories is not None
    if categorical and column is not None and column.type is ColumnType.BOOLEAN:
        return "yes_no_column"
    if categorical or spec.query == "count":
        return "category_column"
    return "numeric_column"


def read_values(frame: pd.DataFrame, spec: QuerySpec, declared: Schema | None) -> np.ndarray:
    """The column's values as the engine takes them for ``spec``."""
    reader = {"yes_no_column": yes_no_column, "category_column": category_column,
              "numeric_column": numeric_column}[reader_for(spec, declared)]
    return reader(frame, spec.column)
