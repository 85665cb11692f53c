"""Version-1 specs of one release: :class:`ReleaseSpec`, read and written.

A spec of one statistic (or one ``logistic_regression`` model) is read here, key by key,
in the order its messages have always come in; :mod:`dpstudio.project.spec` hands it
over once the version is checked (its docstring shows the format), and
:mod:`dpstudio.project.train_spec` reads the keys a trained model shares with it through
:func:`parse_statistic_spec` too (the same checks, the same words).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpstudio.analysis.capabilities import releasable_trust_models
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.trust_models import DEFAULT_TRUST_MODEL, TRUST_MODELS
from dpstudio.engine.trust_models import trust_model as trust_model_row
from dpstudio.project.errors import SpecError
from dpstudio.project.spec_fields import (
    SPEC_VERSION,
    prefix,
    read_accountant,
    read_bool,
    read_bounds,
    read_categories,
    read_number,
    read_script_format,
    read_string,
    toml_key,
    toml_str,
    toml_value,
)

__all__ = ["DEFAULT_FORMATS", "MODEL_QUERIES", "ReleaseSpec", "parse_statistic_spec",
           "statistic_spec_text"]

DEFAULT_FORMATS = ("csv", "json")

_TOP = ("schema_version", "dataset", "fingerprint", "column", "query", "bounds", "categories",
        "bins", "quantile", "mechanism", "epsilon", "delta", "relation", "confidence",
        "accountant", "formats", "report", "script", "name", "trust_model", "features",
        "missing", "impute", "header")
#: Whose budget a new file spends (see :meth:`Project._identify <dpstudio.project.Project>`).
_TOP += ("share_budget_with", "separate_budget")
#: Where the sums are computed (:mod:`dpstudio.execution`); not part of what is released.
_TOP += ("engine", "scheduler")
#: How the reproducible script is written: a Python file or a Jupyter notebook.
_TOP += ("script_format",)
#: User-level releases: the column identifying a person and the declared rows per person.
_TOP += ("identifier", "max_rows")
_TABLES = ("params", "budget")
_REQUIRED = ("dataset", "column", "query", "mechanism", "epsilon")
#: Queries that fit a model on ``features`` (``column`` is the label).
MODEL_QUERIES = ("logistic_regression",)


@dataclass(frozen=True)
class ReleaseSpec:
    """A release to perform: the dataset, the query and what to write.

    ``dataset`` is a path (absolute, or relative to the current folder;
    :func:`~dpstudio.project.spec.load_spec` resolves it against the spec file's folder).
    ``budget_epsilon``/``budget_delta`` are used only when this release is the first on
    the dataset and registers it.
    """

    dataset: str
    query: QuerySpec
    formats: tuple[str, ...] = DEFAULT_FORMATS
    report: bool = False
    script: bool = False
    budget_epsilon: float | None = None
    budget_delta: float | None = None
    fingerprint: str | None = None
    #: None: the dataset's accountant, or for a dataset's first release the project's
    #: default (``dpstudio project init --accountant``).
    accountant: str | None = None
    name: str | None = None
    source: str = field(default="", compare=False)
    trust_model: str = "central"
    #: Model releases (``query = "logistic_regression"``): the feature columns, in order.
    features: tuple[str, ...] | None = None
    #: A new file that is a version of registered dataset #N spends N's budget.
    share_budget_with: int | None = None
    #: A new file that looks like a version of a registered dataset has its own budget.
    separate_budget: bool = False
    #: ``header = false``: the dataset's first line is data (columns named "1", "2", …).
    header: bool = True
    #: ``pandas``, ``dask`` or ``auto``: where the release's sums are computed.
    engine: str = "auto"
    #: A Dask scheduler's address (``tcp://host:8786``); None starts a local cluster.
    scheduler: str | None = None
    #: ``py`` (a Python script) or ``ipynb`` (the same code as a notebook).
    script_format: str = "py"
    #: A trained model (``query = "train"``): its model, method and sites
    #: (:mod:`dpstudio.project.train_spec`); None for every other release.
    training: dict[str, Any] | None = field(default=None, compare=False)
    #: User-level releases: the column identifying a person (None: the schema's declared
    #: identifier, if any) and the declared maximum of rows per person.
    identifier: str | None = None
    max_rows: int | None = None


def _features(data: dict, where: str) -> tuple[str, ...] | None:
    """The ``features`` list of a model spec, checked; None when absent."""
    query = data.get("query")
    value = data.get("features")
    if value is None:
        if query in MODEL_QUERIES:
            raise SpecError(f"{where}a {query} release needs features = [\"a\", \"b\"] "
                            "(numeric columns with declared bounds)")
        return None
    if query not in MODEL_QUERIES:
        raise SpecError(f"{where}features go with query = \"logistic_regression\", not "
                        f"{query!r}")
    if (not isinstance(value, list) or not value
            or not all(isinstance(f, str) and f.strip() for f in value)):
        raise SpecError(f"{where}features must be a non-empty list of column names, got "
                        f"{value!r}")
    features = tuple(f.strip() for f in value)
    if len(set(features)) != len(features):
        raise SpecError(f"{where}features lists a column twice")
    label = data.get("column")
    if isinstance(label, str) and label.strip() in features:
        raise SpecError(f"{where}the label column {label.strip()!r} cannot also be a feature")
    for key in ("bounds", "categories", "bins", "quantile"):
        if key in data:
            raise SpecError(f"{where}a model release takes no {key} (feature bounds come from "
                            "the dataset's declared schema, never from the data)")
    if data.get("trust_model", DEFAULT_TRUST_MODEL) != DEFAULT_TRUST_MODEL:
        raise SpecError(f"{where}a {query} release is central-model only (leave out "
                        "trust_model)")
    return features


def parse_statistic_spec(data: dict[str, Any], source: str = "", base: Path | None = None
                         ) -> ReleaseSpec:
    """A :class:`ReleaseSpec` of one statistic from parsed TOML, its version checked.

    Parameters
    ----------
    data : dict
        The parsed spec (``schema_version = 1``, checked by the caller).
    source : str, optional
        The spec file's name, for messages.
    base : pathlib.Path, optional
        The folder a relative ``dataset`` is relative to.

    Returns
    -------
    ReleaseSpec

    Raises
    ------
    SpecError
        In one line, for anything the spec gets wrong.
    """
    where = prefix(source)
    unknown = sorted(set(data) - set(_TOP) - set(_TABLES))
    if unknown:
        raise SpecError(f"{where}unknown key {unknown[0]!r} (known: {', '.join(_TOP)}, "
                        "[params], [budget])")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise SpecError(f"{where}[params] must be a table")
    for key in _REQUIRED:
        if key not in data and not (key == "epsilon" and _implied_epsilon(data, params, where)):
            raise SpecError(f"{where}missing required key {key!r}")
    dataset = read_string(data, "dataset", where)
    if base is not None and not os.path.isabs(dataset):
        dataset = str(base / dataset)
    bounds = read_bounds(data, where)
    categories = read_categories(data, where)
    budget = data.get("budget", {})
    if not isinstance(budget, dict):
        raise SpecError(f"{where}[budget] must be a table")
    extra = sorted(set(budget) - {"epsilon", "delta"})
    if extra:
        raise SpecError(f"{where}unknown key {extra[0]!r} in [budget] (epsilon, delta)")
    formats = data.get("formats", list(DEFAULT_FORMATS))
    if not isinstance(formats, list) or not formats or not all(isinstance(f, str)
                                                               for f in formats):
        raise SpecError(f"{where}formats must be a non-empty list such as [\"csv\", \"json\"]")
    from dpstudio.export.errors import ExportError
    from dpstudio.export.writers import normalize_format

    try:
        formats = tuple(dict.fromkeys(normalize_format(f) for f in formats))
    except ExportError as exc:
        raise SpecError(f"{where}{exc}") from None
    fingerprint = read_string(data, "fingerprint", where)
    if fingerprint is not None:
        fingerprint = fingerprint.lower()
        if len(fingerprint) != 64 or any(c not in "0123456789abcdef" for c in fingerprint):
            raise SpecError(f"{where}fingerprint must be 64 hexadecimal digits (a SHA-256)")
    trust_model = read_string(data, "trust_model", where, DEFAULT_TRUST_MODEL)
    releasable = releasable_trust_models()  # the analysis layer's capability table
    if trust_model in TRUST_MODELS and trust_model not in releasable:
        named = " or ".join(f'"{t}"' for t in releasable)
        raise SpecError(f"{where}{trust_model}-model releases are not supported yet (trust_model "
                        f"= {named})")
    if trust_model not in releasable:
        raise SpecError(f"{where}unknown trust_model {trust_model!r} "
                        f"({' or '.join(releasable)})")
    # ε-local DP bounds what one person's report says about their value, not whether they
    # sent one: local releases are budgeted under the replace relation by default.
    features = _features(data, where)
    # A model release bounds replacing one record (n stays public), like local releases.
    default_relation = ("replace" if features is not None
                        else trust_model_row(trust_model).relation)
    query = QuerySpec(
        query=read_string(data, "query", where),
        mechanism=read_string(data, "mechanism", where),
        epsilon=float(read_number(data, "epsilon", where,
                              _implied_epsilon(data, params, where))),
        delta=float(read_number(data, "delta", where, 0.0)),
        bounds=bounds,
        categories=categories,
        bins=read_number(data, "bins", where, integer=True),
        quantile=read_number(data, "quantile", where),
        relation=read_string(data, "relation", where, default_relation),
        # missing = "drop" | "impute"; impute = VALUE implies "impute" (checked by QuerySpec)
        missing=read_string(data, "missing", where,
                        "impute" if "impute" in data else "drop"),
        impute=read_number(data, "impute", where),
        confidence=float(read_number(data, "confidence", where, 0.95)),
        params=dict(params),
        column=read_string(data, "column", where),
    )
    share = read_number(data, "share_budget_with", where, integer=True, low=1,
                        what="a dataset id")
    separate = read_bool(data, "separate_budget", where, False)
    if separate and share is not None:
        raise SpecError(f"{where}share_budget_with and separate_budget = true contradict each "
                        "other: choose one")
    engine, scheduler = _engine(data, where)
    b_eps = read_number(budget, "epsilon", f"{where}[budget] ")
    b_delta = read_number(budget, "delta", f"{where}[budget] ")
    return ReleaseSpec(
        dataset=dataset, query=query, formats=formats,
        report=read_bool(data, "report", where, False),
        script=read_bool(data, "script", where, False),
        budget_epsilon=None if b_eps is None else float(b_eps),
        budget_delta=None if b_delta is None else float(b_delta),
        fingerprint=fingerprint, accountant=read_accountant(data, where),
        name=read_string(data, "name", where), source=source, trust_model=trust_model,
        features=features, share_budget_with=share, separate_budget=separate,
        header=read_bool(data, "header", where, True), engine=engine, scheduler=scheduler,
        script_format=read_script_format(data, where),
        identifier=read_string(data, "identifier", where),
        max_rows=read_number(data, "max_rows", where, integer=True, low=1,
                         what="a number of rows per person"),
    )


def _engine(data: dict, where: str) -> tuple[str, str | None]:
    """The spec's ``engine`` and ``scheduler``, checked (one sentence each)."""
    from dpstudio.execution.engines import ENGINES

    engine = read_string(data, "engine", where, "auto")
    if engine not in ENGINES:
        raise SpecError(f"{where}engine must be {', '.join(ENGINES[:-1])} or {ENGINES[-1]}, "
                        f"got {engine!r}")
    scheduler = read_string(data, "scheduler", where)
    if scheduler is not None and engine == "pandas":
        raise SpecError(f"{where}scheduler names a Dask cluster: it goes with engine = "
                        "\"dask\" (or \"auto\")")
    return engine, scheduler


def _implied_epsilon(data: dict, params: dict, where: str) -> float | None:
    """The ε a randomized response spec's ``p`` implies (ln(p/(1−p)), from the engine's
    randomizer); None when the spec sets no ``p``."""
    p = params.get("p")
    if data.get("mechanism") != "rr" or p is None or isinstance(p, bool) or p == 0:
        return None
    from dpstudio.engine.errors import EngineError
    from dpstudio.engine.local.frequency import RandomizedResponse

    try:
        return float(RandomizedResponse(1.0, p).epsilon)
    except EngineError as exc:
        raise SpecError(f"{where}[params] {exc}") from None


def statistic_spec_text(spec: ReleaseSpec) -> str:
    """The TOML text of a spec of one statistic (:func:`~dpstudio.project.spec.spec_text`).

    Parameters
    ----------
    spec : ReleaseSpec
        A spec without ``training``.

    Returns
    -------
    str
        What :func:`parse_statistic_spec` reads back equal.
    """
    q = spec.query
    lines = [f"schema_version = {SPEC_VERSION}", f"dataset = {toml_str(str(spec.dataset))}"]
    if spec.fingerprint:
        lines.append(f"fingerprint = {toml_str(spec.fingerprint)}")
    if spec.trust_model != DEFAULT_TRUST_MODEL:
        lines.append(f"trust_model = {toml_str(spec.trust_model)}")
    fields: list[tuple[str, Any]] = [
        ("column", q.column), ("features", None if spec.features is None else
                               list(spec.features)),
        ("query", q.query), ("bounds", q.bounds),
        ("categories", q.categories), ("bins", q.bins), ("quantile", q.quantile),
        ("mechanism", q.mechanism), ("epsilon", float(q.epsilon)), ("delta", float(q.delta)),
        ("relation", q.relation), ("confidence", float(q.confidence)),
        ("missing", None if q.missing == "drop" else q.missing), ("impute", q.impute),
        ("accountant", spec.accountant), ("formats", list(spec.formats)),
        ("report", spec.report), ("script", spec.script), ("name", spec.name),
        ("share_budget_with", spec.share_budget_with),
        ("separate_budget", True if spec.separate_budget else None),
        ("header", None if spec.header else False),
        ("engine", None if spec.engine == "auto" else spec.engine),
        ("scheduler", spec.scheduler),
        ("script_format", None if spec.script_format == "py" else spec.script_format),
        ("identifier", spec.identifier), ("max_rows", spec.max_rows),
    ]
    for key, value in fields:
        if value is not None:
            if key == "bounds":
                value = [float(v) for v in value]
            lines.append(f"{key} = {toml_value(value)}")
    if q.params:
        lines += ["", "[params]"] + [f"{toml_key(k)} = {toml_value(v)}"
                                     for k, v in q.params.items()]
    if spec.budget_epsilon is not None or spec.budget_delta is not None:
        lines += ["", "[budget]"]
        if spec.budget_epsilon is not None:
            lines.append(f"epsilon = {toml_value(float(spec.budget_epsilon))}")
        if spec.budget_delta is not None:
            lines.append(f"delta = {toml_value(float(spec.budget_delta))}")
    return "\n".join(lines) + "\n"
