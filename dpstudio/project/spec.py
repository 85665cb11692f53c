"""Release specs: a TOML file saying what to release, read by ``dpstudio release``.

Example (every key but ``schema_version``, ``dataset``, ``column``, ``query``,
``mechanism`` and ``epsilon`` is optional)::

    schema_version = 1
    dataset = "survey.csv"          # relative to the spec file's folder
    column = "age"
    query = "mean"                  # count, sum, mean, variance, histogram, quantile, median
    bounds = [18, 100]              # or categories = ["a", "b"]; bins = 10; quantile = 0.9
    mechanism = "laplace"
    epsilon = 0.5
    delta = 0.0
    relation = "add-remove"         # must match the dataset's registered relation
    # missing = "impute"            # sum/mean/variance: "drop" (default) or "impute" the
    # impute = 50.0                 # declared constant (default: the bounds' midpoint)
    confidence = 0.95
    formats = ["csv", "json"]       # also "parquet", "xlsx"
    report = true                   # HTML + PDF stakeholder report
    script = true                   # reproducible Python script
    # script_format = "ipynb"       # the script as a Jupyter notebook (default "py")
    # fingerprint = "…"             # refuse unless the dataset has exactly this SHA-256
    # accountant = "pld"            # basic, advanced, zcdp or pld; default: the dataset's
    #                               # (for its first release, the project's)
    # name = "age-mean"             # file name stem (default: "<query>-<column>")
    # trust_model = "local"         # default "central"; "local": each record randomized on
    #                               # its owner's side (histogram or mean, with rr, krr,
    #                               # sue, oue, olh, hadamard, cms, local_laplace,
    #                               # local_gaussian or duchi), relation "replace";
    #                               # "shuffle": a sum or mean with cloak or blanket;
    #                               # "distributed": secure aggregation, secagg_gaussian
    #                               # or skellam ([params] max_dropouts = the dropouts
    #                               # tolerated), delta > 0
    # share_budget_with = 1         # this file is a version of registered dataset #1 (same
    #                               # people): spend that dataset's budget
    # separate_budget = true        # this file looks like a version of a registered dataset
    #                               # but holds other people: give it a budget of its own
    # features = ["a", "b"]         # query = "logistic_regression" (mechanism
    #                               # "dp_erm_logistic"): column is the label, features
    #                               # numeric columns with declared bounds; relation "replace"
    # engine = "dask"               # where the sums are computed: "pandas", "dask" or
    #                               # "auto" (default; see dpstudio.execution.engines)
    # scheduler = "tcp://host:8786" # the Dask cluster (default: a local one, closed after)
    # identifier = "person_id"      # central count/sum/mean/variance/histogram: protect
    # max_rows = 5                  # people, each person's rows beyond max_rows dropped at
    #                               # random first (default: the schema's declaration)

    [params]                        # further mechanism parameters
    # calibration = "analytic"
    # lambda = 0.01                 # dp_erm_logistic: regularization strength λ
    # p = 0.75                      # rr: probability of a truthful answer; the release is
    #                               # then ln(p/(1−p))-DP: epsilon may be left out, and an
    #                               # epsilon that disagrees is refused

    [budget]                        # the dataset's total budget, if this release registers it
    epsilon = 3.0
    delta = 1e-5

Bounds and categories left out are taken from the dataset's sidecar schema
(``DATA.schema.json``) when it declares them — never from the data. A dataset is
identified by its rows as parsed: the same rows re-encoded or reordered spend the same
budget; a file that looks like a version of a registered dataset is refused until the
spec (or ``dpstudio release --share-budget-with ID`` / ``--separate-budget``) says whose
budget it spends.
:func:`save_spec` writes this format (for the GUI's "Save release spec…").
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpstudio.analysis.capabilities import releasable_trust_models
from dpstudio.engine.checks import number
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.trust_models import DEFAULT_TRUST_MODEL, TRUST_MODELS
from dpstudio.engine.trust_models import trust_model as trust_model_row
from dpstudio.project.errors import SpecError

__all__ = ["SPEC_VERSION", "ReleaseSpec", "load_spec", "parse_spec", "save_spec", "spec_text"]

SPEC_VERSION = 1
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
SCRIPT_FORMATS = ("py", "ipynb")
_TABLES = ("params", "budget")
_REQUIRED = ("dataset", "column", "query", "mechanism", "epsilon")
#: Queries that fit a model on ``features`` (``column`` is the label).
MODEL_QUERIES = ("logistic_regression",)


@dataclass(frozen=True)
class ReleaseSpec:
    """A release to perform: the dataset, the query and what to write.

    ``dataset`` is a path (absolute, or relative to the current folder; :func:`load_spec`
    resolves it against the spec file's folder). ``budget_epsilon``/``budget_delta`` are
    used only when this release is the first on the dataset and registers it.
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


def _where(source: str) -> str:
    return f"{source}: " if source else ""


def _number(data: dict, key: str, where: str, default=None, integer: bool = False,
            low: float | None = None, what: str = ""):
    """``data[key]`` as TOML gave it (``default`` when absent), checked to be a number (a
    whole one if ``integer``) and, by the engine's range check, finite and ≥ ``low``;
    ``what`` names the value in that check's message ("a dataset id")."""
    if key not in data:
        return default
    value = data[key]
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok:
        kind = "a whole number" if integer else "a number"
        raise SpecError(f"{where}{key} must be {kind}, got {value!r}")
    try:
        number(key, value, low=low,
               what=what or ("a whole number" if integer else "a finite number"))
    except ParameterError as exc:
        raise SpecError(f"{where}{exc}") from None
    return value


def _string(data: dict, key: str, where: str, default=None) -> str | None:
    if key not in data:
        return default
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{where}{key} must be a non-empty string, got {value!r}")
    return value.strip()


def _bool(data: dict, key: str, where: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"{where}{key} must be true or false, got {value!r}")
    return value


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


def parse_spec(data: dict[str, Any], source: str = "", base: Path | None = None) -> ReleaseSpec:
    """A :class:`ReleaseSpec` from parsed TOML; SpecError with a one-line message."""
    where = _where(source)
    if not isinstance(data, dict):
        raise SpecError(f"{where}a release spec is a TOML table")
    version = data.get("schema_version")
    if version is None:
        raise SpecError(f"{where}missing schema_version (write schema_version = {SPEC_VERSION})")
    if version == 2:  # a release plan: several statistics under one budget
        from dpstudio.project.spec_plan import parse_plan_spec

        return parse_plan_spec(data, source, base)
    if version != SPEC_VERSION:
        raise SpecError(f"{where}unsupported schema_version {version!r} (this DP Studio reads "
                        f"{SPEC_VERSION} and 2, a release plan)")
    if data.get("query") == "train":  # a trained model: the keys of dpstudio train
        from dpstudio.project.train_spec import parse_train_spec

        return parse_train_spec(data, source, base)
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
    dataset = _string(data, "dataset", where)
    if base is not None and not os.path.isabs(dataset):
        dataset = str(base / dataset)
    bounds = data.get("bounds")
    if bounds is not None:
        if (not isinstance(bounds, list) or len(bounds) != 2
                or any(isinstance(b, bool) or not isinstance(b, int | float) for b in bounds)):
            raise SpecError(f"{where}bounds must be two numbers [lower, upper], got {bounds!r}")
        bounds = (float(bounds[0]), float(bounds[1]))
    categories = data.get("categories")
    if categories is not None:
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            raise SpecError(f"{where}categories must be a list of strings")
        categories = tuple(categories)
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
    fingerprint = _string(data, "fingerprint", where)
    if fingerprint is not None:
        fingerprint = fingerprint.lower()
        if len(fingerprint) != 64 or any(c not in "0123456789abcdef" for c in fingerprint):
            raise SpecError(f"{where}fingerprint must be 64 hexadecimal digits (a SHA-256)")
    trust_model = _string(data, "trust_model", where, DEFAULT_TRUST_MODEL)
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
        query=_string(data, "query", where),
        mechanism=_string(data, "mechanism", where),
        epsilon=float(_number(data, "epsilon", where,
                              _implied_epsilon(data, params, where))),
        delta=float(_number(data, "delta", where, 0.0)),
        bounds=bounds,
        categories=categories,
        bins=_number(data, "bins", where, integer=True),
        quantile=_number(data, "quantile", where),
        relation=_string(data, "relation", where, default_relation),
        # missing = "drop" | "impute"; impute = VALUE implies "impute" (checked by QuerySpec)
        missing=_string(data, "missing", where,
                        "impute" if "impute" in data else "drop"),
        impute=_number(data, "impute", where),
        confidence=float(_number(data, "confidence", where, 0.95)),
        params=dict(params),
        column=_string(data, "column", where),
    )
    share = _number(data, "share_budget_with", where, integer=True, low=1, what="a dataset id")
    separate = _bool(data, "separate_budget", where, False)
    if separate and share is not None:
        raise SpecError(f"{where}share_budget_with and separate_budget = true contradict each "
                        "other: choose one")
    engine, scheduler = _engine(data, where)
    b_eps = _number(budget, "epsilon", f"{where}[budget] ")
    b_delta = _number(budget, "delta", f"{where}[budget] ")
    return ReleaseSpec(
        dataset=dataset, query=query, formats=formats,
        report=_bool(data, "report", where, False), script=_bool(data, "script", where, False),
        budget_epsilon=None if b_eps is None else float(b_eps),
        budget_delta=None if b_delta is None else float(b_delta),
        fingerprint=fingerprint, accountant=_accountant(data, where),
        name=_string(data, "name", where), source=source, trust_model=trust_model,
        features=features, share_budget_with=share, separate_budget=separate,
        header=_bool(data, "header", where, True), engine=engine, scheduler=scheduler,
        script_format=_script_format(data, where),
        identifier=_string(data, "identifier", where),
        max_rows=_number(data, "max_rows", where, integer=True, low=1,
                         what="a number of rows per person"),
    )


def _accountant(data: dict, where: str) -> str | None:
    """The spec's ``accountant``, checked; None when absent (the project's decides)."""
    from dpstudio.project.accountant import ACCOUNTANTS

    name = _string(data, "accountant", where)
    if name is not None and name not in ACCOUNTANTS:
        raise SpecError(f"{where}accountant must be one of {', '.join(ACCOUNTANTS)}, got "
                        f"{name!r} (leave it out to use the project's)")
    return name


def _script_format(data: dict[str, Any], where: str) -> str:
    """``script_format``: ``"py"`` (default) or ``"ipynb"``, in one sentence otherwise."""
    value = data.get("script_format", "py")
    if value not in SCRIPT_FORMATS:
        raise SpecError(f"{where}script_format must be one of {', '.join(SCRIPT_FORMATS)}, "
                        f"got {value!r}")
    return value


def _engine(data: dict, where: str) -> tuple[str, str | None]:
    """The spec's ``engine`` and ``scheduler``, checked (one sentence each)."""
    from dpstudio.execution.engines import ENGINES

    engine = _string(data, "engine", where, "auto")
    if engine not in ENGINES:
        raise SpecError(f"{where}engine must be {', '.join(ENGINES[:-1])} or {ENGINES[-1]}, "
                        f"got {engine!r}")
    scheduler = _string(data, "scheduler", where)
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


def load_spec(path: str | os.PathLike[str]) -> ReleaseSpec:
    """Read a spec file; relative dataset paths are relative to the file's folder."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise SpecError(f"no spec file {p}") from None
    except OSError as exc:
        raise SpecError(f"{p.name}: cannot read ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise SpecError(f"{p.name}: not a text file (a spec is TOML, UTF-8)") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{p.name}: malformed TOML: {exc}") from None
    return parse_spec(data, p.name, p.resolve().parent)


# ------------------------------------------------------------------------------ emitter


def _toml_str(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SpecError(f"cannot save a non-finite number ({value!r}) in a spec")
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise SpecError(f"cannot save a {type(value).__name__} in a spec")


def _key(key: str) -> str:
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else _toml_str(key)


def spec_text(spec: ReleaseSpec) -> str:
    """The TOML text of a spec (what :func:`save_spec` writes)."""
    if spec.training is not None:
        from dpstudio.project.train_spec import train_spec_text

        return train_spec_text(spec)
    q = spec.query
    lines = [f"schema_version = {SPEC_VERSION}", f"dataset = {_toml_str(str(spec.dataset))}"]
    if spec.fingerprint:
        lines.append(f"fingerprint = {_toml_str(spec.fingerprint)}")
    if spec.trust_model != DEFAULT_TRUST_MODEL:
        lines.append(f"trust_model = {_toml_str(spec.trust_model)}")
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
            lines.append(f"{key} = {_toml_value(value)}")
    if q.params:
        lines += ["", "[params]"] + [f"{_key(k)} = {_toml_value(v)}" for k, v in q.params.items()]
    if spec.budget_epsilon is not None or spec.budget_delta is not None:
        lines += ["", "[budget]"]
        if spec.budget_epsilon is not None:
            lines.append(f"epsilon = {_toml_value(float(spec.budget_epsilon))}")
        if spec.budget_delta is not None:
            lines.append(f"delta = {_toml_value(float(spec.budget_delta))}")
    return "\n".join(lines) + "\n"


def save_spec(spec: ReleaseSpec, path: str | os.PathLike[str]) -> Path:
    """Write ``spec`` as TOML (atomically); :func:`load_spec` reads it back equal.

    Parameters
    ----------
    spec : ReleaseSpec
        The spec to write.
    path : str or os.PathLike
        The ``.toml`` file, replaced if it exists.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    SpecError
        If the file cannot be written (it then keeps its old content).
    """
    from dpstudio.data.atomic import write_atomic

    p = Path(path)
    try:
        write_atomic(p, spec_text(spec))
    except OSError as exc:
        raise SpecError(f"{p.name}: cannot save spec ({exc.strerror or exc})") from None
    return p
