"""From a dataset and a query to the values the engine sees (as ``dpstudio query`` does).

Bounds and categories come from the spec, or else from the dataset's *declared* schema
(its sidecar file) — never from the data. Delta is dropped for pure-ε mechanisms, so the
ledger charges what the mechanism actually spends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dpstudio.data.columns import category_column, numeric_column, yes_no_column
from dpstudio.data.schema import ColumnType, Schema
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY

__all__ = [
    "LOCAL_QUERIES",
    "MODEL_QUERIES",
    "ModelInput",
    "read_model_columns",
    "read_values",
    "reader_for",
    "resolve_local_query",
    "resolve_model_query",
    "resolve_query",
]

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


#: Queries a local-model release answers (declared categories / declared bounds).
LOCAL_QUERIES = ("histogram", "mean")


def resolve_local_query(spec: QuerySpec, declared: Schema | None
                        ) -> tuple[QuerySpec, list[str]]:
    """A local-model query completed from the declared schema and checked.

    Histograms need declared categories (the collector cannot learn the domain from data
    it never sees), means declared bounds. The relation is ``replace``: ε-local DP bounds
    what a report says about its sender's value; whether a person sent one shows in the
    number of reports. δ is kept only for mechanisms that take one (``local_gaussian``).
    """
    from dpstudio.engine.calibration import validate_delta, validate_epsilon
    from dpstudio.engine.errors import ParameterError, QueryError
    from dpstudio.engine.queries import check_bounds

    notes: list[str] = []
    info = REGISTRY.get(spec.mechanism)
    if info.kind != "randomizer" or "local" not in info.trust_models:
        raise QueryError(f"{spec.mechanism} is not a local randomizer (rr, krr, sue, oue, olh, "
                         "hadamard, cms, local_laplace, local_gaussian, duchi)")
    if spec.query not in LOCAL_QUERIES or spec.query not in info.queries:
        raise QueryError(f"{info.label} cannot release a local {spec.query} (local releases: "
                         f"{' or '.join(q for q in LOCAL_QUERIES if q in info.queries)})")
    if spec.relation != "replace":
        raise QueryError("a local-model release bounds changing one person's value: set "
                         "relation = \"replace\" (the number of reports shows who sent one)")
    if not 0.0 < float(spec.confidence) < 1.0:
        raise QueryError(f"confidence must lie strictly between 0 and 1, got {spec.confidence}")
    validate_epsilon(spec.epsilon)
    validate_delta(spec.delta)
    column = declared.get(spec.column) if declared is not None and spec.column else None
    bounds, categories = spec.bounds, spec.categories
    if spec.query == "histogram":
        if spec.bins is not None:
            raise QueryError("a local histogram releases declared categories, not bins")
        if categories is None and column is not None and column.categories:
            categories = tuple(column.categories)
            notes.append("categories as declared in the dataset's schema")
        if categories is None:
            raise QueryError("a local histogram needs declared categories: the collector "
                             "cannot learn the domain from data it never sees")
        bounds = None
    else:
        if bounds is None and column is not None and column.bounds is not None:
            bounds = column.bounds
            notes.append(f"bounds {bounds[0]:g},{bounds[1]:g} as declared in the dataset's "
                         "schema")
        if bounds is None:
            raise QueryError("a local mean needs declared bounds [lower, upper]")
        check_bounds(bounds)
        categories = None
    takes_delta = "delta" in {p.name for p in info.params}
    delta = spec.delta if takes_delta else 0.0
    if delta != spec.delta:
        notes.append(f"{spec.mechanism} is pure ε-LDP: δ set to 0")
    if info.needs_delta and not delta > 0:
        raise ParameterError(f"{info.label} needs δ > 0 (e.g. delta = 1e-6)")
    out = replace(spec, bounds=bounds, categories=categories, delta=delta, quantile=None)
    resolved = info.resolve(out.mechanism_params())
    eps, dlt = randomizer_privacy(info, resolved, out)
    refuse_disagreeing_epsilon(info, eps, out.epsilon, out.params)
    # ε and δ charged, written and shown are the randomizer's own, not the spec's.
    return replace(out, epsilon=eps, delta=dlt), notes


def refuse_disagreeing_epsilon(info, true_epsilon: float, stated: float,
                               params: dict) -> None:
    """Refuse, in one line, a stated ε that is not the randomizer's own (randomized response
    with ``p = 0.75`` is ln 3-DP whatever ε says): the CLI and releases alike."""
    from dpstudio.engine.errors import QueryError

    if math.isclose(true_epsilon, stated, rel_tol=EPSILON_AGREEMENT, abs_tol=0.0):
        return
    given = ", ".join(f"{k} = {v:g}" for k, v in sorted(params.items())
                      if isinstance(v, int | float) and not isinstance(v, bool))
    raise QueryError(f"epsilon = {stated:g} disagrees with {given}: that "
                     f"{info.label.lower()} is {true_epsilon:.12g}-local DP; set epsilon = "
                     f"{true_epsilon:.12g} (or leave it out) or change the parameters")


#: How far a spec's ε may be from its randomizer's own (e.g. ln 3 written as 1.098612).
EPSILON_AGREEMENT = 1e-6


def randomizer_privacy(info, resolved: dict, spec: QuerySpec) -> tuple[float, float]:
    """(ε, δ) of the randomizer the engine builds for ``spec`` (nothing is drawn).

    Randomized response with a chosen ``p`` is ln(p/(1−p))-DP whatever ε says; the
    object's own ``epsilon`` is the claim that holds.
    """
    # Before categories are resolved, k = 2: these randomizers' ε does not depend on k.
    k = len(spec.categories) if spec.categories is not None else 2
    context = {"bounds": spec.bounds} if spec.query == "mean" else {"k": k}
    oracle = info.build(**resolved, **context)
    return float(oracle.epsilon), float(getattr(oracle, "delta", 0.0) or 0.0)


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


# ------------------------------------------------------------------------------ models

#: Queries that fit a model on declared features (the spec's column is the label).
MODEL_QUERIES = ("logistic_regression",)


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


def resolve_model_query(spec: QuerySpec, features: tuple[str, ...] | None,
                        declared: Schema | None
                        ) -> tuple[QuerySpec, list[str], dict[str, tuple[float, float]]]:
    """A model query checked, with each feature's bounds from the declared schema.

    The bounds are never read off the data; a feature without declared bounds is refused.
    The relation is ``replace`` (replace-one neighbours, n public), as the mechanism's
    sensitivity 2/(nλ) assumes.
    """
    from dpstudio.engine.calibration import validate_delta, validate_epsilon
    from dpstudio.engine.errors import QueryError

    info = REGISTRY.get(spec.mechanism)
    if info.kind != "model" or spec.query not in info.queries:
        raise QueryError(f"{spec.mechanism} does not fit a {spec.query} model (use mechanism "
                         "= \"dp_erm_logistic\")")
    if not features:
        raise QueryError(f"a {spec.query} release needs features = [\"a\", \"b\"]")
    if spec.relation != "replace":
        raise QueryError("a model release bounds replacing one record (n public): set "
                         "relation = \"replace\"")
    if spec.bounds is not None or spec.categories is not None or spec.bins is not None:
        raise QueryError("a model release takes its feature bounds from the dataset's "
                         "declared schema")
    validate_epsilon(spec.epsilon)
    validate_delta(spec.delta)
    bounds: dict[str, tuple[float, float]] = {}
    for name in features:
        column = declared.get(name) if declared is not None else None
        if column is None or column.bounds is None:
            raise QueryError(f"declare the bounds of feature {name!r} in the dataset's schema "
                             "(they are never read off the data)")
        bounds[name] = (float(column.bounds[0]), float(column.bounds[1]))
    out = replace(spec, quantile=None)
    info.resolve(out.mechanism_params())
    notes = ["feature bounds as declared in the dataset's schema",
             "neighbours differ in one record (replace-one, n public); missing feature "
             "values set to the middle of their declared bounds"]
    return out, notes, bounds


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
