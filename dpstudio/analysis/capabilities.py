"""The one capability table: which trust models, queries and relations can be previewed
in the application, and released (charged to a ledger and exported) through a project.

The CLI's ``query`` runs whatever the engine supports (a simulation or a one-off release
that no ledger records); a project release, the application's Release… action and the
export go through :func:`release_refusal` so the three agree on what is releasable and say
so in the same sentence. The application asks :func:`releasable` (the table's refusal and
the mechanism's fit, before any data is read) and builds a release spec's query with
:func:`release_query`, so the rules it shows as tooltips are these rules.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Any

from dpstudio.analysis.request import MODEL_QUERIES, AnalysisSpec
from dpstudio.analysis.resolve import randomizer_privacy
from dpstudio.engine.errors import EngineError, QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.queries.partial import PARTIAL_QUERIES
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.trust_models import TRUST_MODELS, trust_model

__all__ = [
    "CAPABILITIES",
    "Capability",
    "capability",
    "mechanism_fits",
    "partitioned",
    "releasable",
    "releasable_trust_models",
    "release_fill",
    "release_query",
    "release_refusal",
    "release_relation",
    "require_release",
]

_CENTRAL_QUERIES = ("count", "sum", "mean", "variance", "median", "quantile", "histogram")
_LOCAL_QUERIES = ("histogram", "mean", "heavy_hitters")
_SHUFFLE_QUERIES = ("sum", "mean", "histogram")


@dataclass(frozen=True)
class Capability:
    """What the analysis layer does under one trust model (or for models: ``"model"``).

    Attributes
    ----------
    kind : str
        A trust model's name, or ``"model"`` for a fitted model.
    title : str
        How outputs name it ("local model", "secure aggregation").
    queries : tuple of str
        Queries an analysis runs under it (``dpstudio query``: a simulation or a one-off
        release that no ledger records).
    preview : tuple of str
        Queries the application previews (simulated releases, utility and trade-off).
    release : tuple of str
        Queries released through a project: charged to its ledger and exported.
    relations : tuple of str
        Neighbouring relations a release may be stated under.
    mechanism_kinds : tuple of str
        Registry kinds whose entries release under it.
    options : tuple of str
        Options that only make sense under it (``missing``: a missing-value treatment;
        ``records``: the reports the collector received; ``postprocess``; ``dropouts``).
        A release spec carries the ``missing`` treatment only where it is listed here.
    relation_why : str
        Why its guarantee is stated under only these relations, as a clause (the
        application says it when a dataset is budgeted under another relation).
    partitioned : tuple of str
        Queries computed where the data is (a folder of files, a Dask cluster): each
        partition returns exact integer aggregates (central: partial sums, the noise drawn
        once; local, shuffle, secure aggregation: its rows' reports or messages randomized
        there and aggregated, the estimator run once).
    lean : tuple of str
        Queries whose engine input is each row's presence (a count) or category code (a
        histogram of declared categories), read without a value per row.
    needs_delta : bool
        Whether every release under it is (ε, δ) with δ > 0 whatever its entry says (the
        protocols: a local randomizer's pure ε₀ becomes an approximate central ε when
        shuffled).
    """

    kind: str
    title: str
    queries: tuple[str, ...] = ()
    preview: tuple[str, ...] = ()
    release: tuple[str, ...] = ()
    relations: tuple[str, ...] = ("replace",)
    mechanism_kinds: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    relation_why: str = "its guarantee bounds changing one person's value"
    partitioned: tuple[str, ...] = ()
    lean: tuple[str, ...] = ()
    needs_delta: bool = False

    @property
    def chooses_relation(self) -> bool:
        """Whether the analyst chooses the relation (the guarantee holds under several).

        Where it does, a release spec carries the chosen relation; elsewhere a release
        states the row's only one (:func:`release_relation`).
        """
        return len(self.relations) > 1


CAPABILITIES: dict[str, Capability] = {c.kind: c for c in (
    Capability("central", "central model", _CENTRAL_QUERIES, _CENTRAL_QUERIES,
               _CENTRAL_QUERIES, ("add-remove", "replace"), ("additive", "selection"),
               ("missing",), partitioned=PARTIAL_QUERIES, lean=("count", "histogram")),
    # Local, shuffle and secure-aggregation queries run where the data is too: each
    # partition randomizes its own rows and returns its reports' (or messages') aggregate,
    # exact integers; the estimator runs once (heavy hitters read every report: not here).
    Capability("local", "local model", _LOCAL_QUERIES, _LOCAL_QUERIES, ("histogram", "mean"),
               ("replace",), ("randomizer",), ("records", "postprocess"),
               "ε-local DP bounds changing one person's value",
               partitioned=("histogram", "mean")),
    # Shuffle histograms: a local frequency oracle shuffled (each user at the ε₀ that
    # amplification by shuffling allows for the central ε).
    Capability("shuffle", "shuffle model", _SHUFFLE_QUERIES, _SHUFFLE_QUERIES,
               _SHUFFLE_QUERIES, ("replace",), ("randomizer",), partitioned=("sum", "mean"),
               needs_delta=True),
    Capability("distributed", "secure aggregation", ("sum", "mean"), ("sum", "mean"),
               ("sum", "mean"),
               ("replace",), ("randomizer",), ("dropouts",), partitioned=("sum", "mean"),
               needs_delta=True),
    Capability("model", "model", MODEL_QUERIES, (), MODEL_QUERIES, ("replace",), ("model",),
               relation_why="its noise bounds replacing one record, with n public"),
)}


def capability(kind: str) -> Capability:
    """The capability row of a trust model (or ``"model"``).

    A known trust model without a row (federated learning, for now) can do nothing yet.

    Parameters
    ----------
    kind : str
        A trust model's name, or ``"model"`` (:attr:`AnalysisSpec.kind`).

    Returns
    -------
    Capability
        Its row; an empty one for a trust model the table does not list.

    Raises
    ------
    ParameterError
        For a name that is neither a trust model nor ``"model"``.
    """
    if kind in CAPABILITIES:
        return CAPABILITIES[kind]
    tm = trust_model(kind)
    return Capability(tm.name, f"{tm.label.lower()} model")


def partitioned(analysis: AnalysisSpec) -> bool:
    """Whether ``analysis`` can be computed where the data is (folders, Dask).

    Parameters
    ----------
    analysis : AnalysisSpec
        The analysis.

    Returns
    -------
    bool
        True where its trust model's row lists the query as partitioned (models never).
    """
    if analysis.is_model:
        return False
    return analysis.query.query in capability(analysis.kind).partitioned


def releasable_trust_models() -> tuple[str, ...]:
    """Trust models with at least one query that a project releases.

    Returns
    -------
    tuple of str
        Their names, in the order of :data:`dpstudio.engine.trust_models.TRUST_MODELS`.
    """
    return tuple(t for t in TRUST_MODELS if capability(t).release)


def release_refusal(analysis: AnalysisSpec) -> str | None:
    """Why this analysis cannot be released through a project, in one sentence; or None.

    Only what the capability table decides (trust model, query); the mechanism's fit
    (:func:`mechanism_fits`), the budget, the dataset's relation and the declared schema
    are checked by the release itself (:func:`~dpstudio.analysis.resolve`).

    Parameters
    ----------
    analysis : AnalysisSpec
        The analysis as described (its ε, bounds and parameters are not read).

    Returns
    -------
    str or None
        One line naming what is releasable instead; None when the table allows it.

    Raises
    ------
    ParameterError
        When a query the row does not release names a mechanism the registry lacks.
    """
    if analysis.trust_model not in TRUST_MODELS:
        return (f"unknown trust model {analysis.trust_model!r} "
                f"({' or '.join(releasable_trust_models())})")
    row = capability(analysis.kind)
    if not row.release:
        return (f"{analysis.trust_model}-model releases are not supported yet "
                f"({' or '.join(releasable_trust_models())})")
    if analysis.is_model and analysis.trust_model != "central":
        return f"a {analysis.query.query} release is central-model only"
    if analysis.query.query not in row.release:
        info = REGISTRY.get(analysis.query.mechanism)
        tm = analysis.trust_model
        return (f"{info.label} cannot release a {tm} {analysis.query.query} ({tm} releases: "
                f"{' or '.join(q for q in row.release if q in info.queries) or 'none'})")
    return None


def require_release(analysis: AnalysisSpec) -> None:
    """Refuse an analysis the capability table does not release.

    Parameters
    ----------
    analysis : AnalysisSpec

    Raises
    ------
    QueryError
        With :func:`release_refusal`'s sentence, if it has one.
    """
    problem = release_refusal(analysis)
    if problem is not None:
        raise QueryError(problem)


def mechanism_fits(analysis: AnalysisSpec) -> bool:
    """Whether the analysis's mechanism releases under its row of the table.

    Its registry kind is one of the row's mechanism kinds (a local release takes a
    randomizer, a central one an additive or selection mechanism), it serves the trust
    model, and it answers the query.

    Parameters
    ----------
    analysis : AnalysisSpec

    Returns
    -------
    bool
        False too for a mechanism the registry does not know.
    """
    try:
        info = REGISTRY.get(analysis.query.mechanism)
    except EngineError:
        return False
    return (info.kind in capability(analysis.kind).mechanism_kinds
            and analysis.trust_model in info.trust_models
            and analysis.query.query in info.queries)


def releasable(analysis: AnalysisSpec) -> bool:
    """Whether a project can release this analysis as described (before any data is read).

    The application enables its Release… action and writes a release spec only then. A
    release may still be refused for its budget, its dataset's relation, the declared
    schema or its parameters.

    Parameters
    ----------
    analysis : AnalysisSpec

    Returns
    -------
    bool
        :func:`release_refusal` has nothing to say and :func:`mechanism_fits`.
    """
    try:
        refused = release_refusal(analysis)
    except EngineError:  # an unknown mechanism for a query its row does not release
        return False
    return refused is None and mechanism_fits(analysis)


def release_relation(analysis: AnalysisSpec) -> str:
    """The neighbouring relation a release of this analysis states its guarantee under.

    The analyst's choice where the row offers several (central: add-remove or replace);
    otherwise the row's only relation, whatever the choice says (ε-local DP bounds changing
    one person's value: ``replace``).

    Parameters
    ----------
    analysis : AnalysisSpec

    Returns
    -------
    str
        ``"add-remove"`` or ``"replace"``.

    Raises
    ------
    ParameterError
        For an unknown trust model.
    """
    row = capability(analysis.kind)
    if row.chooses_relation or not row.relations:
        return analysis.query.relation
    return row.relations[0]


def release_query(analysis: AnalysisSpec) -> QuerySpec:
    """The query a release spec records for a releasable analysis.

    Under :func:`release_relation`; and with a randomizer's own ε (randomized response
    with a chosen ``p`` is ln(p/(1−p))-DP whatever the stated ε says): what the release
    will charge. A randomizer that does not build yet keeps the stated ε (the release's
    resolution refuses it in one line).

    Parameters
    ----------
    analysis : AnalysisSpec
        An analysis that :func:`releasable` accepts.

    Returns
    -------
    QuerySpec
        ``analysis.query`` with the relation and ε a release states.

    Raises
    ------
    QueryError
        When the analysis is not releasable.
    """
    if not releasable(analysis):
        raise QueryError(release_refusal(analysis) or f"{analysis.query.mechanism} does not "
                         f"release a {analysis.query.query} under the "
                         f"{capability(analysis.kind).title}")
    query = replace(analysis.query, relation=release_relation(analysis))
    info = REGISTRY.get(query.mechanism)
    if info.kind == "randomizer":
        with contextlib.suppress(EngineError, TypeError, ValueError):
            eps, _ = randomizer_privacy(info, info.resolve(query.mechanism_params()), query)
            query = replace(query, epsilon=eps)
    return query


def release_fill(spec: Any, trust_model: str) -> float | None:
    """What a release of ``trust_model`` puts in place of a missing value, or None if it
    drops missing values.

    Where the analyst chooses the treatment (the ``"missing"`` option: central), the
    query's own imputation; elsewhere every row reports, a missing value as the middle
    of the declared bounds (the protocols' and randomizers' encoding).

    Parameters
    ----------
    spec : QuerySpec
        The query, with its declared bounds and missing-value treatment.
    trust_model : str
        A trust model's name.

    Returns
    -------
    float or None
    """
    if "missing" in capability(trust_model).options:
        return spec.impute_value()
    if spec.bounds is None:
        return None
    from dpstudio.engine.missing import midpoint

    return midpoint(float(spec.bounds[0]), float(spec.bounds[1]))
