"""Release specs of a trained model: ``query = "train"`` with the keys of ``dpstudio train``.

Example::

    schema_version = 1
    dataset = "health.csv"
    query = "train"
    label = "diabetes"              # yes/no (declared "boolean") for logistic and mlp; a
                                    # number with declared bounds for linear
    features = ["age", "bmi", "smoker"]
    model = "logistic"              # logistic, linear or mlp
    method = "dpsgd"                # output, objective or dpsgd
    epsilon = 1.0
    delta = 1e-6
    # lambda = 0.01                 # regularization λ
    # epochs = 5                    # DP-SGD: passes; batch_rate = 0.05; clip = 1.0;
    #                               # learning_rate = 0.5
    expected_batch = 20             # DP-SGD: the public divisor B of each noisy sum
    #                               # (q × a public row count; per site for FedAvg);
    #                               # required: never read off the data
    # hidden = 16                   # mlp: the hidden width
    # sites_by = "region"           # federated averaging: one site per value of a column,
    # sites = 5                     # or a random split into S sites (imbalance = α);
    # fed_variant = "secagg"        # local, secagg, cape or shuffle (with method = "dpsgd");
    # rounds = 20                   # rounds = R, local_steps = E; fraction = 1.0 of the
    #                               # sites per round; secagg: fed_noise = "gaussian" or
    #                               # "skellam", dropouts = U; secagg, cape: colluding = C
    # test_fraction = 0.25          # rows held out (their metrics are never published)
    # split_seed = 0
    report = true
    script = true

    [budget]
    epsilon = 3.0
    delta = 1e-5

Everything else (``formats``, ``report``, ``script``, ``script_format``, ``name``,
``fingerprint``, ``accountant``, ``share_budget_with``, ``separate_budget``, ``header``,
``[budget]``) means what it means in any spec (:mod:`dpstudio.project.spec`). The
mechanism is the method's and the relation the method's guarantee (replace one record for
output and objective perturbation, add or remove one for DP-SGD and FedAvg): a spec that
names other ones is refused in one line.

:func:`train_spec` makes the same spec from a dict of these keys (what the application's
Release… of a trained model calls); :func:`train_spec_text` writes it back as TOML.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from dpstudio.analysis.request import TRAIN_QUERY, AnalysisSpec
from dpstudio.engine.errors import EngineError
from dpstudio.project.errors import SpecError
from dpstudio.project.spec_fields import (
    SPEC_VERSION,
    check_version,
    prefix,
    read_number,
    read_string,
    toml_str,
    toml_value,
)
from dpstudio.project.spec_statistic import ReleaseSpec, parse_statistic_spec

__all__ = ["COMMON_KEYS", "TRAIN_KEYS", "parse_train_spec", "train_analysis", "train_spec",
           "train_spec_text"]

#: The keys of ``dpstudio train`` a train spec takes (the contract of issue 13).
TRAIN_KEYS = ("label", "features", "model", "method", "lambda", "epochs", "batch_rate",
              "clip", "learning_rate", "expected_batch", "hidden", "sites_by", "sites", "imbalance",
              "fed_variant", "rounds", "local_steps", "fraction", "fed_noise", "colluding",
              "dropouts", "test_fraction", "split_seed")
#: The keys every spec takes that a train spec takes too.
COMMON_KEYS = ("schema_version", "dataset", "fingerprint", "query", "mechanism", "epsilon",
               "delta", "relation", "accountant", "formats", "report", "script", "name",
               "share_budget_with", "separate_budget", "header", "script_format", "engine",
               "budget")
#: The method's parameters (the registry entry's names) among :data:`TRAIN_KEYS`.
_PARAMS = ("lambda", "epochs", "batch_rate", "clip", "learning_rate", "expected_batch")
_FEDERATED = ("sites_by", "sites", "imbalance", "rounds", "local_steps", "fraction",
              "fed_noise", "colluding", "dropouts")
#: Training options kept on :attr:`ReleaseSpec.training`, in this order.
_OPTIONS = ("model", "method", "hidden", "fed_variant", "sites_by", "sites", "imbalance",
            "rounds", "local_steps", "fraction", "fed_noise", "colluding", "dropouts",
            "test_fraction", "split_seed")


def _text_list(value: Any) -> tuple[str, ...] | None:
    if (not isinstance(value, list) or not value
            or not all(isinstance(f, str) and f.strip() for f in value)):
        return None
    return tuple(f.strip() for f in value)


def parse_train_spec(data: dict[str, Any], source: str = "",
                     base: Path | None = None) -> ReleaseSpec:
    """A :class:`~dpstudio.project.spec.ReleaseSpec` of a trained model from parsed TOML.

    Parameters
    ----------
    data : dict
        The parsed spec (``query = "train"``).
    source : str, optional
        The spec file's name, for messages.
    base : pathlib.Path, optional
        The folder a relative ``dataset`` is relative to.

    Returns
    -------
    ReleaseSpec
        ``query`` is the training run's (``"train"``, the method's mechanism, ε, δ,
        relation, parameters, the label as column), ``features`` the features and
        ``training`` the options (model, method, sites…).

    Raises
    ------
    SpecError
        In one line, for a key, value or combination that cannot be trained and released.
    """
    where = prefix(source)
    unknown = sorted(set(data) - set(COMMON_KEYS) - set(TRAIN_KEYS))
    if unknown:
        key = unknown[0]
        hint = {"column": " (a train spec names its label: label = \"…\")",
                "params": " (a train spec takes lambda, epochs, batch_rate, clip, "
                          "learning_rate and expected_batch as top-level keys)",
                "trust_model": " (the trust model of a trained model is its method and "
                               "fed_variant)",
                "simulate": " (a seeded simulation is never released: a release draws every "
                            "random bit from the OS CSPRNG; simulate with dpstudio train "
                            "--simulate SEED)"}.get(key, "")
        raise SpecError(f"{where}a train spec takes no key {key!r}{hint}")
    label = read_string(data, "label", where)
    if label is None:
        raise SpecError(f"{where}a train spec needs label = \"COLUMN\" (the column to predict)")
    features = _text_list(data.get("features"))
    if features is None:
        raise SpecError(f"{where}a train spec needs features = [\"a\", \"b\"] (columns with "
                        "declared bounds or categories)")
    if data.get("engine", "auto") not in ("auto", "pandas"):
        raise SpecError(f"{where}a trained model is released in this process: leave out "
                        "engine (or set engine = \"pandas\")")
    options = {"model": read_string(data, "model", where, "logistic"),
               "method": read_string(data, "method", where, "output"),
               "fed_variant": read_string(data, "fed_variant", where, None)}
    params = {}
    for key in _PARAMS:
        value = read_number(data, key, where)
        if value is not None:
            params[key] = float(value)
    for key in ("hidden", "sites", "rounds", "local_steps", "colluding", "dropouts",
                "split_seed"):
        value = read_number(data, key, where, integer=True)
        if value is not None:
            options[key] = int(value)
    for key in ("imbalance", "fraction", "test_fraction"):
        value = read_number(data, key, where)
        if value is not None:
            options[key] = float(value)
    if "sites_by" in data:
        options["sites_by"] = read_string(data, "sites_by", where)
    if "fed_noise" in data:
        options["fed_noise"] = read_string(data, "fed_noise", where)
    options = {k: options[k] for k in _OPTIONS if options.get(k) is not None}
    # The keys every spec shares (formats, budget, fingerprint, accountant…) are read by
    # the reader of a version-1 spec, on a stand-in statistic: the same checks, the same
    # words. Its version is checked here (a file reaches this only as version 1; a dict
    # given to train_spec may say otherwise).
    common = {k: v for k, v in data.items()
              if k in COMMON_KEYS and k not in ("query", "mechanism", "epsilon", "delta",
                                                "relation", "engine")}
    if check_version(common, where) != SPEC_VERSION:
        raise SpecError(f"{where}a train spec has schema_version = {SPEC_VERSION} (2 is a "
                        "release plan)")
    shell = parse_statistic_spec({**common, "column": label, "query": "count",
                                  "mechanism": "laplace", "epsilon": 1.0}, source, base)
    spec = replace(shell, features=features, training=options)
    epsilon = read_number(data, "epsilon", where)
    if epsilon is None:
        raise SpecError(f"{where}missing required key 'epsilon'")
    spec = replace(spec, query=train_analysis(
        spec, label, epsilon, float(read_number(data, "delta", where, 0.0)), params,
        where).query)
    q = spec.query
    mechanism = read_string(data, "mechanism", where)
    if mechanism is not None and mechanism != q.mechanism:
        raise SpecError(f"{where}method = \"{options['method']}\" uses the mechanism "
                        f"{q.mechanism or 'none'}, not {mechanism!r} (leave out mechanism)")
    relation = read_string(data, "relation", where)
    if relation is not None and relation != q.relation:
        raise SpecError(f"{where}the {options['method']} method's guarantee is stated under "
                        f"the {q.relation} relation, not {relation} (leave out relation)")
    return spec


def train_analysis(spec: ReleaseSpec, label: str | None = None,
                   epsilon: float | None = None, delta: float | None = None,
                   params: dict[str, Any] | None = None, where: str = "") -> AnalysisSpec:
    """The training run a train spec describes (:func:`~dpstudio.analysis.training
    .describe_training`), not yet resolved against the schema.

    Parameters
    ----------
    spec : ReleaseSpec
        A train spec (its ``training`` options; ``query`` for what is not given).
    label, epsilon, delta, params : optional
        Override the spec's query (while it is being parsed).
    where : str, optional
        The prefix of messages (the spec file's name).

    Returns
    -------
    AnalysisSpec

    Raises
    ------
    SpecError
        In one line: the analysis layer's refusal (a nonprivate method, a variant without
        sites, a parameter out of range…).
    """
    from dpstudio.analysis.training import describe_training

    t = dict(spec.training or {})
    q = spec.query
    if t.get("method", "output") == "nonprivate":
        raise SpecError(f"{where}a non-private model is never released: choose method = "
                        "\"output\", \"objective\" or \"dpsgd\"")
    federated = ({k: t.get(k) for k in _FEDERATED}
                 if t.get("sites_by") is not None or t.get("sites") is not None else None)
    fed_only = ("rounds", "local_steps", "imbalance", "fraction", "fed_noise", "colluding",
                "dropouts")
    if federated is None and any(k in t for k in fed_only):
        given = ", ".join(k for k in fed_only if k in t)
        raise SpecError(f"{where}{given} set{'s' if ',' not in given else ''} federated "
                        "training: give its sites with sites_by = \"COLUMN\" or sites = S")
    if federated is not None and t.get("fed_variant") is None:
        raise SpecError(f"{where}choose how the sites are protected: fed_variant = "
                        "\"local\", \"secagg\", \"cape\" or \"shuffle\"")
    if "hidden" in t and t.get("model") != "mlp":
        raise SpecError(f"{where}hidden sets the MLP's width: use model = \"mlp\"")
    eps = float(q.epsilon) if epsilon is None else float(epsilon)
    try:
        return describe_training(
            q.column if label is None else label, tuple(spec.features or ()),
            t.get("model", "logistic"), t.get("method", "output"), eps,
            delta=float(q.delta) if delta is None else delta,
            params=dict(q.params) if params is None else params,
            hidden=int(t.get("hidden", 16)), test_fraction=float(t.get("test_fraction", 0.25)),
            split_seed=int(t.get("split_seed", 0)),
            fed_variant=t.get("fed_variant") or "none", federated=federated)
    except EngineError as exc:
        raise SpecError(f"{where}{exc}") from None


def train_spec(fields: dict[str, Any], base: str | os.PathLike[str] | None = None
               ) -> ReleaseSpec:
    """The release spec of a trained model from a dict of spec keys (the GUI's Release…).

    Parameters
    ----------
    fields : dict
        The keys of a train spec (:data:`TRAIN_KEYS` and :data:`COMMON_KEYS`): at least
        ``dataset``, ``label``, ``features``, ``method`` and ``epsilon``; ``budget`` as a
        dict. ``schema_version`` and ``query`` may be left out. ``None`` values are
        dropped.

    base : str or os.PathLike, optional
        The folder a relative ``dataset`` is relative to.

    Returns
    -------
    ReleaseSpec
        What :meth:`Project.release <dpstudio.project.Project>` releases and
        :func:`~dpstudio.project.spec.save_spec` saves.

    Raises
    ------
    SpecError
        In one line, as for a spec file.
    """
    data = {k: (list(v) if isinstance(v, tuple) else v) for k, v in fields.items()
            if v is not None}
    data.setdefault("schema_version", SPEC_VERSION)
    data.setdefault("query", TRAIN_QUERY)
    if data["query"] != TRAIN_QUERY:
        raise SpecError(f"train_spec makes query = \"{TRAIN_QUERY}\" specs, not "
                        f"{data['query']!r}")
    return parse_train_spec(data, "", None if base is None else Path(base))


def train_spec_text(spec: ReleaseSpec) -> str:
    """The TOML text of a train spec (:func:`~dpstudio.project.spec.spec_text` calls it).

    Parameters
    ----------
    spec : ReleaseSpec
        A train spec (``training`` set).

    Returns
    -------
    str
        What :func:`~dpstudio.project.spec.load_spec` reads back equal.
    """
    q = spec.query
    t = dict(spec.training or {})
    lines = [f"schema_version = {SPEC_VERSION}", f"dataset = {toml_str(str(spec.dataset))}"]
    fields: list[tuple[str, Any]] = [
        ("fingerprint", spec.fingerprint), ("query", TRAIN_QUERY), ("label", q.column),
        ("features", list(spec.features or ())),
        *((k, t.get(k)) for k in _OPTIONS),
        *((k, q.params.get(k)) for k in _PARAMS),
        ("epsilon", float(q.epsilon)), ("delta", float(q.delta)),
        ("accountant", spec.accountant), ("formats", list(spec.formats)),
        ("report", spec.report), ("script", spec.script), ("name", spec.name),
        ("share_budget_with", spec.share_budget_with),
        ("separate_budget", True if spec.separate_budget else None),
        ("header", None if spec.header else False),
        ("script_format", None if spec.script_format == "py" else spec.script_format),
    ]
    lines += [f"{k} = {toml_value(v)}" for k, v in fields if v is not None]
    if spec.budget_epsilon is not None or spec.budget_delta is not None:
        lines += ["", "[budget]"]
        if spec.budget_epsilon is not None:
            lines.append(f"epsilon = {toml_value(float(spec.budget_epsilon))}")
        if spec.budget_delta is not None:
            lines.append(f"delta = {toml_value(float(spec.budget_delta))}")
    return "\n".join(lines) + "\n"
