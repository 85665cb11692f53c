"""Resolve an analysis against the dataset's *declared* schema, once, for every client.

Bounds and categories come from the analysis, or else from the declared schema (the
dataset's sidecar) — never from the data. δ is dropped for pure-ε mechanisms, so a ledger
charges what the mechanism actually spends; a local randomizer's ε is its own (randomized
response with ``p`` fixes it), and a stated ε that disagrees is refused in one line.

``declared`` is anything with ``get(column)`` returning ``None`` or a column declaration
with ``type``, ``bounds`` and ``categories`` (:class:`dpstudio.data.schema.Schema` is one);
this layer never imports the data layer, so it stays free of pandas.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY

__all__ = [
    "EPSILON_AGREEMENT",
    "LOCAL_QUERIES",
    "check_randomizer_epsilon",
    "declared_fill",
    "randomizer_privacy",
    "reader_for",
    "refuse_disagreeing_epsilon",
    "resolve",
    "resolve_local_query",
    "resolve_model_query",
    "resolve_query",
]

_NUMERIC = ("sum", "mean", "variance", "quantile", "median")


def resolve_query(spec: QuerySpec, declared: Any) -> tuple[QuerySpec, list[str]]:
    """The spec completed from the declared schema, validated; and notes on what was filled.

    Declared bounds fill a numeric query (or a binned histogram) that lacks them; declared
    categories fill a histogram that names neither categories nor bins; δ is set to 0 for
    a mechanism without a δ parameter.

    Parameters
    ----------
    spec : QuerySpec
        A central query as described.
    declared : schema-like or None
        The dataset's declared schema (``get(column)``).

    Returns
    -------
    (QuerySpec, list of str)
        The completed, validated spec and a note for each thing filled or changed.

    Raises
    ------
    QueryError, ParameterError
        From :meth:`QuerySpec.validated`, for a query that cannot be released.
    """
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


def resolve_local_query(spec: QuerySpec, declared: Any
                        ) -> tuple[QuerySpec, list[str]]:
    """A local-model query completed from the declared schema and checked.

    Histograms need declared categories (the collector cannot learn the domain from data
    it never sees), means declared bounds. The relation is ``replace``: ε-local DP bounds
    what a report says about its sender's value; whether a person sent one shows in the
    number of reports. δ is kept only for mechanisms that take one (``local_gaussian``).

    Parameters
    ----------
    spec : QuerySpec
        A local histogram or mean as described.
    declared : schema-like or None
        The dataset's declared schema (``get(column)``).

    Returns
    -------
    (QuerySpec, list of str)
        The spec with its categories or bounds filled and ε, δ set to the randomizer's own
        (:func:`randomizer_privacy`); notes on what was filled.

    Raises
    ------
    QueryError
        For a mechanism that is not a local randomizer, a query it cannot release, a
        relation other than ``replace``, a bad confidence, missing categories or bounds,
        or a stated ε that disagrees with the randomizer's (:func:`refuse_disagreeing_epsilon`).
    ParameterError
        For a bad ε, δ or parameter, or a missing δ where the mechanism needs one.
    """
    from dpstudio.engine.calibration import validate_delta, validate_epsilon
    from dpstudio.engine.errors import ParameterError
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
    with ``p = 0.75`` is ln 3-DP whatever ε says): the CLI and releases alike.

    Parameters
    ----------
    info : MechanismInfo
        The randomizer's registry entry (its label is named).
    true_epsilon : float
        The randomizer's own ε.
    stated : float
        The ε the analysis states.
    params : dict
        The parameters named in the message (their numbers only).

    Raises
    ------
    QueryError
        When the two differ by more than :data:`EPSILON_AGREEMENT` (relative).
    """

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

    Parameters
    ----------
    info : MechanismInfo
        The randomizer's registry entry.
    resolved : dict
        Its resolved parameters (``info.resolve(...)``).
    spec : QuerySpec
        The local query (its categories, or its bounds for a mean, build the randomizer).

    Returns
    -------
    (float, float)
        ε and δ of the randomizer.

    Raises
    ------
    ParameterError
        For parameters the randomizer refuses.
    """
    # Before categories are resolved, k = 2: these randomizers' ε does not depend on k.
    k = len(spec.categories) if spec.categories is not None else 2
    context = {"bounds": spec.bounds} if spec.query == "mean" else {"k": k}
    oracle = info.build(**resolved, **context)
    return float(oracle.epsilon), float(getattr(oracle, "delta", 0.0) or 0.0)


def reader_for(spec: QuerySpec, declared: Any) -> str:
    """Which :mod:`dpstudio.data` function reads the column for this query.

    Parameters
    ----------
    spec : QuerySpec
        The query.
    declared : schema-like or None
        The dataset's declared schema (a boolean column is read as yes/no).

    Returns
    -------
    str
        ``"yes_no_column"``, ``"category_column"`` or ``"numeric_column"``.
    """
    column = declared.get(spec.column) if declared is not None and spec.column else None
    categorical = spec.query == "histogram" and spec.categories is not None
    if categorical and column is not None and column.type == "boolean":
        return "yes_no_column"
    if categorical or spec.query == "count":
        return "category_column"
    return "numeric_column"




def resolve_model_query(spec: QuerySpec, features: tuple[str, ...] | None,
                        declared: Any
                        ) -> tuple[QuerySpec, list[str], dict[str, tuple[float, float]]]:
    """A model query checked, with each feature's bounds from the declared schema.

    The bounds are never read off the data; a feature without declared bounds is refused.
    The relation is ``replace`` (replace-one neighbours, n public), as the mechanism's
    sensitivity 2/(nλ) assumes.

    Parameters
    ----------
    spec : QuerySpec
        The model query (``query.column`` is the label).
    features : tuple of str or None
        The feature columns.
    declared : schema-like or None
        The dataset's declared schema.

    Returns
    -------
    (QuerySpec, list of str, dict)
        The checked spec, notes, and each feature's declared ``(lower, upper)``.

    Raises
    ------
    QueryError
        For a mechanism that fits no such model, no features, a relation other than
        ``replace``, bounds, categories or bins given in the query, or a feature without
        declared bounds.
    ParameterError
        For a bad ε, δ or parameter.
    """
    from dpstudio.engine.calibration import validate_delta, validate_epsilon

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




def declared_fill(query: str, column: Any, bounds: tuple[float, float] | None,
                  categories: tuple[str, ...] | None, bins: int | None
                  ) -> tuple[tuple[float, float] | None, tuple[str, ...] | None, list[str]]:
    """Bounds and categories not given, taken from the column's declaration (never the data).

    The command line's rule: declared bounds fill any query that lacks them; declared
    categories fill a histogram that names neither categories nor bins.

    Parameters
    ----------
    query : str
        The query asked.
    column : column declaration or None
        The declared column (``bounds``, ``categories``), if the dataset declares it.
    bounds, categories, bins
        What the analyst gave.

    Returns
    -------
    (bounds, categories, notes)
        The filled values and a note for each thing taken from the declaration.
    """
    notes: list[str] = []
    if bounds is None and column is not None and column.bounds is not None:
        bounds = (float(column.bounds[0]), float(column.bounds[1]))
        notes.append(f"bounds {bounds[0]:g},{bounds[1]:g} as declared in the dataset's schema")
    if query == "histogram" and categories is None and bins is None:
        if column is not None and column.categories:
            categories = tuple(column.categories)
            notes.append("categories as declared in the dataset's schema")
    return bounds, categories, notes


def check_randomizer_epsilon(spec: QuerySpec, given: dict[str, Any] | None = None) -> None:
    """Before any noise: refuse a stated ε that is not the local randomizer's own.

    Parameters
    ----------
    spec : QuerySpec
        A local histogram or mean (other queries are not checked).
    given : dict, optional
        The parameters the analyst gave (named in the message); default ``spec.params``.

    Raises
    ------
    QueryError
        When ``spec.epsilon`` disagrees with the randomizer built from the parameters.
    """
    if spec.query not in LOCAL_QUERIES:
        return
    info = REGISTRY.get(spec.mechanism)
    resolved = info.resolve(spec.mechanism_params())
    true_eps, _ = randomizer_privacy(info, resolved, spec)
    names = spec.params if given is None else given
    refuse_disagreeing_epsilon(info, true_eps, spec.epsilon,
                               {k: v for k, v in resolved.items() if k in names})


def resolve(analysis: AnalysisSpec, declared: Any) -> tuple[AnalysisSpec, list[str]]:
    """An analysis completed from the declared schema and checked, as a release needs it.

    Parameters
    ----------
    analysis : AnalysisSpec
        The analysis as described.
    declared : schema-like or None
        The dataset's declared schema (``get(column)``).

    Returns
    -------
    (AnalysisSpec, list of str)
        The resolved analysis (a local query's ε and δ are its randomizer's; a model's
        feature bounds are filled) and notes on what was filled.

    Raises
    ------
    QueryError, ParameterError
        In one line, for anything that cannot be released as described.
    """
    from dpstudio.analysis.capabilities import require_release

    if analysis.identifier is not None:  # user-level: its own checks (central only)
        from dpstudio.analysis.contribution import resolve_user_level

        resolved, notes = resolve_user_level(analysis, declared)
        require_release(resolved)
        return resolved, notes
    if analysis.training is not None:  # a training run: its own declarations and checks
        from dpstudio.analysis.training import resolve_training

        return resolve_training(analysis, declared)
    require_release(analysis)
    if analysis.is_model:
        query, notes, bounds = resolve_model_query(analysis.query, analysis.features, declared)
        return replace(analysis, query=query, feature_bounds=bounds), notes
    resolver = {"local": resolve_local_query}.get(analysis.trust_model, resolve_query)
    query, notes = resolver(analysis.query, declared)
    return replace(analysis, query=query), notes
