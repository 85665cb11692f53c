"""The analysis a user describes: a trust model, a query of a column, a mechanism and its
parameters, and the few options that belong to one trust model.

:class:`AnalysisSpec` is what every client (the CLI's ``query``, a project's release, the
application's preview) hands to :func:`dpstudio.analysis.run`. The statistic itself is the
engine's :class:`~dpstudio.engine.queries.QuerySpec`; this class adds who is trusted and
what a model or a protocol needs besides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY, MechanismInfo

__all__ = ["MODEL_QUERIES", "TRAIN_QUERY", "AnalysisSpec", "Training", "describe"]

#: Queries that fit a model on declared features (the spec's column is the label) and that
#: a project releases.
MODEL_QUERIES = ("logistic_regression",)

#: The query of a training run (:class:`Training`): any model, method and held-out split.
TRAIN_QUERY = "train"


@dataclass(frozen=True)
class Training:
    """What a training run adds to a model analysis (``query.query == "train"``).

    Attributes
    ----------
    model : str
        ``"logistic"``, ``"linear"`` (ridge regression) or ``"mlp"`` (one hidden layer).
    method : str
        ``"nonprivate"``, ``"output"`` or ``"objective"`` (perturbation) or ``"dpsgd"``.
    hidden : int
        The MLP's width.
    test_fraction : float
        Share of the rows held out for the metrics, in (0, 1).
    split_seed : int
        Seed of the held-out split (a public choice of rows, not noise).
    audit : int
        Trainings per neighbouring dataset of a membership audit; 0 for none.
    label_bounds : (float, float), optional
        A regression label's declared bounds (filled by resolution from the schema).
    feature_categories : mapping, optional
        Categorical features' declared categories (one indicator column each; filled by
        resolution).
    fed_variant : str
        ``"none"`` for centralized training; otherwise federated averaging under
        ``"local"``, ``"secagg"``, ``"cape"`` or ``"shuffle"`` (with ``federated``).
    federated : mapping, optional
        Federated runs: ``sites_by`` (a column) or ``sites`` and ``imbalance`` (a random,
        label-skewed split), ``rounds``, ``local_steps``, ``fraction``; None when
        centralized.
    runs : int
        How many times the private training is repeated (a simulation) for the spread of
        its metrics; 1 for one run.
    sites_alone : bool
        Federated runs: also train each site alone, at the same (ε, δ), on its own rows.
    """

    model: str = "logistic"
    method: str = "output"
    hidden: int = 16
    test_fraction: float = 0.25
    split_seed: int = 0
    audit: int = 0
    label_bounds: tuple[float, float] | None = None
    feature_categories: Mapping[str, tuple[str, ...]] | None = field(default=None,
                                                                     compare=False)
    fed_variant: str = "none"
    federated: Mapping[str, Any] | None = field(default=None, compare=False)
    runs: int = 1
    sites_alone: bool = False


@dataclass(frozen=True)
class AnalysisSpec:
    """One analysis, as described (and, after :func:`~dpstudio.analysis.resolve`, resolved).

    Attributes
    ----------
    trust_model : str
        ``"central"``, ``"local"``, ``"shuffle"`` or ``"distributed"``
        (:data:`dpstudio.engine.trust_models.TRUST_MODELS`).
    query : QuerySpec
        The statistic, mechanism, ε, δ, relation, declared bounds or categories, and the
        mechanism's parameters.
    postprocess : str
        Local histograms: ``"none"`` (unbiased), ``"clip"`` or ``"simplex"``.
    dropouts : int
        Distributed: clients that drop out after masking (in a simulation).
    features : tuple of str, optional
        Models: the feature columns (``query.column`` is the label).
    feature_bounds : mapping, optional
        Models: each feature's declared bounds (filled by resolution, never read off data).
    training : Training, optional
        A training run's model, method, split and audit (``query.query == "train"``).
    identifier : str, optional
        The column identifying a person: the release is user-level
        (:mod:`dpstudio.analysis.contribution`).
    max_rows : int, optional
        The declared maximum of rows per person (filled from the schema by resolution).
    """

    trust_model: str
    query: QuerySpec
    postprocess: str = "none"
    dropouts: int = 0
    features: tuple[str, ...] | None = None
    feature_bounds: Mapping[str, tuple[float, float]] | None = field(default=None,
                                                                    compare=False)
    training: Training | None = None
    identifier: str | None = None
    max_rows: int | None = None

    @property
    def info(self) -> MechanismInfo:
        """The mechanism's registry entry."""
        return REGISTRY.get(self.query.mechanism)

    @property
    def is_model(self) -> bool:
        """Whether this analysis fits a model (rather than releasing a statistic)."""
        return (self.query.query in MODEL_QUERIES or self.features is not None
                or self.training is not None)

    @property
    def kind(self) -> str:
        """The row of the capability table it falls under: ``"model"`` or the trust model."""
        return "model" if self.is_model else self.trust_model

    @property
    def reads_labels(self) -> bool:
        """Whether the column is read as labels (categories) rather than as numbers."""
        q = self.query
        if self.is_model:
            return False
        if self.trust_model == "local":
            return q.query != "mean"
        if self.trust_model == "central":
            return q.query == "count" or (q.query == "histogram" and q.categories is not None)
        return self.trust_model == "shuffle" and q.query == "histogram"  # oracle shuffled

    def params(self) -> dict[str, Any]:
        """The mechanism's parameters other than ε and δ, as given.

        Returns
        -------
        dict
            A copy of ``query.params``.
        """
        return dict(self.query.params)


def describe(trust_model: str, query: str, mechanism: str, epsilon: float, *,
             delta: float = 0.0, bounds: tuple[float, float] | None = None,
             categories: tuple[str, ...] | None = None, bins: int | None = None,
             quantile: float | None = None, relation: str = "add-remove",
             confidence: float = 0.95, params: Mapping[str, Any] | None = None,
             column: str | None = None, missing: str = "drop", impute: float | None = None,
             postprocess: str = "none", dropouts: int = 0, identifier: str | None = None,
             max_rows: int | None = None) -> AnalysisSpec:
    """The analysis a user describes field by field (as the command line does), shaped
    for its trust model.

    The central model takes every field and validates the query. A local protocol states
    its guarantee under ``replace`` (a report bounds its sender's value) and reads bounds
    for a mean only; shuffle and secure-aggregation sums state theirs under ``replace``.

    Parameters
    ----------
    trust_model : str
        ``"central"``, ``"local"``, ``"shuffle"`` or ``"distributed"``.
    query : str
        The statistic (``"mean"``, ``"histogram"``, …).
    mechanism : str
        A registry name.
    epsilon : float
        The privacy-loss bound ε.
    delta : float
        δ (0 for pure ε-DP mechanisms).
    bounds : tuple of float, optional
        Declared ``(lower, upper)`` of the values.
    categories : tuple of str, optional
        Declared categories of a histogram.
    bins : int, optional
        Number of equal-width bins of a numeric histogram (central).
    quantile : float, optional
        The quantile's level, in (0, 1) (central).
    relation : str
        ``"add-remove"`` or ``"replace"`` (central; the protocols state ``replace``).
    confidence : float
        Level of the intervals, in (0, 1).
    params : mapping, optional
        The mechanism's other parameters.
    column : str, optional
        The column's name.
    missing : str
        What a central sum, mean or variance does with missing values: ``"drop"`` or
        ``"impute"``.
    impute : float, optional
        The constant imputed (``missing="impute"``); None: the middle of the bounds.
    postprocess : str
        Local histograms: ``"none"``, ``"clip"`` or ``"simplex"``.
    dropouts : int
        Distributed: clients that drop out after masking.
    identifier : str, optional
        The column identifying a person (a user-level release).
    max_rows : int, optional
        The declared maximum of rows per person.

    Returns
    -------
    AnalysisSpec

    Raises
    ------
    QueryError, ParameterError
        In one line, for a field the trust model cannot take.
    """
    build = _BUILDERS.get(trust_model, _protocol)
    out = build(trust_model, dict(
        query=query, mechanism=mechanism, epsilon=epsilon, delta=delta, bounds=bounds,
        categories=categories, bins=bins, quantile=quantile, relation=relation,
        confidence=confidence, params=dict(params or {}), column=column, missing=missing,
        impute=impute), postprocess, dropouts)
    if identifier is None and max_rows is None:
        return out
    from dataclasses import replace

    return replace(out, identifier=identifier, max_rows=max_rows)


def _central(trust: str, f: dict[str, Any], postprocess: str, dropouts: int) -> AnalysisSpec:
    return AnalysisSpec(trust, QuerySpec(**f).validated())


def _local(trust: str, f: dict[str, Any], postprocess: str, dropouts: int) -> AnalysisSpec:
    from dpstudio.analysis.resolve import check_randomizer_epsilon  # resolve imports this
    from dpstudio.engine.errors import QueryError

    info = REGISTRY.get(f["mechanism"])
    if f["query"] not in info.queries:
        raise QueryError(f"{info.name} answers {' or '.join(info.queries)} queries, not "
                         f"{f['query']} (local protocols answer histogram or mean queries, "
                         "and heavy_hitters on a text column with --mechanism sfp)")
    if f["query"] == "mean" and f["bounds"] is None:
        raise QueryError("a local mean needs declared bounds (e.g. --bounds 0,100)")
    if f["query"] == "heavy_hitters" and f["categories"] is not None:
        raise QueryError("heavy_hitters discovers the frequent words without a dictionary: "
                         "drop --categories (a histogram counts declared categories)")
    if f["delta"] and "delta" not in {p.name for p in info.params}:
        info.resolve({**f["params"], "delta": f["delta"]})  # names the parameter it lacks
    spec = QuerySpec(f["query"], f["mechanism"], f["epsilon"], delta=f["delta"],
                     bounds=f["bounds"] if f["query"] == "mean" else None,
                     categories=f["categories"], relation="replace",
                     confidence=f["confidence"], params=f["params"], column=f["column"])
    info.resolve(spec.mechanism_params())  # unknown or bad parameters, in one line
    check_randomizer_epsilon(spec, f["params"])
    return AnalysisSpec(trust, spec, postprocess=postprocess)


def _protocol(trust: str, f: dict[str, Any], postprocess: str, dropouts: int) -> AnalysisSpec:
    # A histogram is a local frequency oracle shuffled: its declared categories, no bounds.
    histogram = f["query"] == "histogram"
    spec = QuerySpec(f["query"], f["mechanism"], f["epsilon"], delta=f["delta"],
                     bounds=None if histogram else f["bounds"],
                     categories=f["categories"] if histogram else None, relation="replace",
                     confidence=f["confidence"], params=f["params"], column=f["column"])
    return AnalysisSpec(trust, spec, dropouts=dropouts,
                        **({"postprocess": postprocess} if histogram else {}))


_BUILDERS = {"central": _central, "local": _local}
