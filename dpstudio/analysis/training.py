"""A training run: one more kind of model analysis (``query = "train"``).

The analyst names a label, features, a model (logistic, linear, MLP) and a method
(non-private, output or objective perturbation, DP-SGD). :func:`describe_training` makes
the :class:`~dpstudio.analysis.request.AnalysisSpec`, :func:`resolve_training` fills the
declared bounds and categories from the schema and refuses, in one sentence, what a method
cannot train, and :func:`run_training` (reached through :func:`dpstudio.analysis.run`)
trains on a seeded share of the rows and measures on the rest:

- the metrics (accuracy and AUC for a classifier, RMSE in the label's units for a
  regression) on the held-out rows, and the same of the non-private model trained on the
  same rows with the same λ (the baseline);
- ε and δ of the engine object that drew the noise, and the accountant that gave them;
- optionally a membership audit (:func:`~dpstudio.engine.learning.membership
  .audit_membership`) on the training rows, under the relation the method's guarantee is
  stated for: ``replace`` for output and objective perturbation (n public), ``add`` for
  DP-SGD (its accountant's add/remove neighbours with Poisson sampling) and for FedAvg's
  variants (the canary added at one site, every training a full FedAvg simulation:
  :mod:`.federated_audit`).

The metrics and the audit read the data without noise: they are for the analyst, never
exported (:meth:`~dpstudio.analysis.result.AnalysisResult.public` refuses a training run
until a project releases one).

The run's parts live beside this module: what it learns from (:mod:`.training_data`),
how each method trains and is audited (:mod:`.training_methods`), what it measures
(:mod:`.training_measures`) and the coefficients' detail (:mod:`.training_detail`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dpstudio.analysis.federated_run import federated_options, train_sites
from dpstudio.analysis.request import TRAIN_QUERY, AnalysisSpec, Training
from dpstudio.analysis.result import AnalysisResult
from dpstudio.analysis.training_data import design, labels, split_rows
from dpstudio.analysis.training_detail import (
    coefficient_noise_sd,
    coefficients,
    confusion_counts,
)
from dpstudio.analysis.training_measures import (
    HeldOutMetrics,
    child_sources,
    per_round,
    sites_alone,
    spread,
)
from dpstudio.analysis.training_methods import (
    lambda_of,
    membership_audit,
    method_fields,
    theta_of,
    trainer,
)
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SimulationSource, Source

__all__ = [
    "METHODS",
    "MAX_RUNS",
    "METHOD_MECHANISMS",
    "MODELS",
    "describe_training",
    "resolve_training",
    "run_training",
]

MODELS = ("logistic", "linear", "mlp")
METHODS = ("nonprivate", "output", "objective", "dpsgd")
#: The registry entry of each private method.
METHOD_MECHANISMS = {"output": "dp_erm_logistic", "objective": "dp_objective_logistic",
                     "dpsgd": "dp_sgd"}
#: The most repetitions of one training run (each is a full training).
MAX_RUNS = 50


def describe_training(label: str, features: Sequence[str], model: str, method: str,
                      epsilon: float | None, *, delta: float = 0.0,
                      params: Mapping[str, Any] | None = None, hidden: int = 16,
                      test_fraction: float = 0.25, split_seed: int = 0,
                      audit: int = 0, fed_variant: str = "none",
                      federated: Mapping[str, Any] | None = None, runs: int = 1,
                      sites_alone: bool = False) -> AnalysisSpec:
    """The training run a user describes field by field (as ``dpstudio train`` does).

    Parameters
    ----------
    label : str
        The label column.
    features : sequence of str
        The feature columns.
    model : str
        ``"logistic"``, ``"linear"`` or ``"mlp"``.
    method : str
        ``"nonprivate"``, ``"output"``, ``"objective"`` or ``"dpsgd"``.
    epsilon : float or None
        ε (ignored, and may be None, for ``"nonprivate"``).
    delta : float, optional
        δ (0 for the pure forms of output and objective perturbation; DP-SGD needs > 0).
    params : mapping, optional
        The method's entry's other parameters (``lambda``, ``epochs``, ``batch_rate``,
        ``clip``, ``learning_rate``); for ``"nonprivate"`` only ``lambda``.
    hidden : int, optional
        The MLP's width.
    test_fraction : float, optional
        Share of rows held out, in (0, 1).
    split_seed : int, optional
        Seed of the split.
    audit : int, optional
        Trainings per neighbouring dataset of a membership audit (0: none; else ≥ 4).
    fed_variant : str, optional
        Federated averaging's privacy variant: ``"none"`` (with ``method="nonprivate"``),
        ``"local"``, ``"secagg"``, ``"cape"`` or ``"shuffle"`` (with ``method="dpsgd"``).
    federated : mapping, optional
        Makes the run federated: ``sites_by`` (a column) or ``sites`` (a random split,
        label-skewed by ``imbalance``, a Dirichlet α), ``rounds``, ``local_steps`` and
        ``fraction`` (of sites per round).
    runs : int, optional
        Repetitions of the private training (1 to :data:`MAX_RUNS`; a simulation only),
        for the spread of every metric.
    sites_alone : bool, optional
        A federated run: also train each site alone at the same (ε, δ) on its own rows,
        and measure it on the same held-out rows (the value of collaborating).

    Returns
    -------
    AnalysisSpec

    Raises
    ------
    QueryError, ParameterError
        In one sentence, for a model, method, split or parameter that cannot run.
    """
    if model not in MODELS:
        raise QueryError(f"the model must be {', '.join(MODELS)}, got {model!r}")
    if method not in METHODS:
        raise QueryError(f"the method must be {', '.join(METHODS)}, got {method!r}")
    feats = tuple(features)
    if not feats:
        raise QueryError("a training run needs at least one feature (--features a,b)")
    if label in feats:
        raise QueryError("the label cannot also be a feature")
    if not 0.0 < float(test_fraction) < 1.0:
        raise ParameterError("the held-out fraction must be between 0 and 1")
    if int(hidden) < 1:
        raise ParameterError("the MLP's hidden width must be at least 1")
    if int(audit) != 0 and int(audit) < 4:
        raise ParameterError("an audit needs at least 4 trainings per dataset (half choose "
                             "the test, half certify it)")
    if not 1 <= int(runs) <= MAX_RUNS:
        raise ParameterError(f"the number of runs must be between 1 and {MAX_RUNS}")
    given = dict(params or {})
    fed = federated_options(method, fed_variant, federated, given, int(audit))
    if fed is not None and method == "nonprivate":
        unknown = sorted(set(given) - {"lambda", "batch_rate", "learning_rate"})
        if unknown:
            raise QueryError(f"federated averaging without privacy does not take "
                             f"{', '.join(unknown)}")
        mechanism, relation = "", "replace"
        eps, dl = math.inf, 0.0
    elif method == "nonprivate":
        unknown = sorted(set(given) - {"lambda"})
        if unknown:
            raise QueryError(f"a non-private fit takes only λ, not {', '.join(unknown)}")
        mechanism, relation = "", "replace"
        eps, dl = math.inf, 0.0
    else:
        mechanism = METHOD_MECHANISMS[method]
        if epsilon is None:
            raise QueryError(f"{method} training needs --epsilon")
        if model != "logistic" and method in ("output", "objective"):
            if method == "objective" and model == "linear":
                # The engine's own sentence: the squared loss has no bounded slope.
                from dpstudio.engine.learning.objective_perturbation import (
                    calibrate_objective_perturbation,
                )

                calibrate_objective_perturbation(2, 1, 1.0, 1.0, loss="squared")
            raise QueryError(f"{method} perturbation is certified here for logistic "
                             f"regression only: train the {model} model with --method dpsgd")
        if method == "dpsgd" and not delta:
            raise QueryError("DP-SGD needs δ > 0 (e.g. --delta 1e-5): its accountant gives "
                             "an (ε, δ) guarantee")
        info = REGISTRY.get(mechanism)
        unknown = sorted(set(given) - {p.name for p in info.params})
        if unknown:
            raise QueryError(f"{method} training does not take {', '.join(unknown)}")
        info.resolve({**given, "epsilon": epsilon, "delta": delta})  # ranges, in one line
        relation = "add-remove" if method == "dpsgd" else "replace"
        eps, dl = float(epsilon), float(delta)
    spec = QuerySpec(TRAIN_QUERY, mechanism, eps, delta=dl, relation=relation, params=given,
                     column=label)
    training = Training(model=model, method=method, hidden=int(hidden),
                        test_fraction=float(test_fraction), split_seed=int(split_seed),
                        audit=int(audit), fed_variant=fed_variant if fed else "none",
                        federated=fed, runs=int(runs), sites_alone=bool(sites_alone))
    if sites_alone and fed is None:
        raise QueryError("each site trained alone needs sites: --sites-by COL or --sites S")
    return AnalysisSpec("central", spec, features=feats, training=training)


def resolve_training(analysis: AnalysisSpec, declared: Any) -> tuple[AnalysisSpec, list[str]]:
    """A training run completed from the declared schema: bounds, categories, label.

    Numeric features take their declared bounds, categorical ones their declared
    categories (one indicator each), yes/no ones 0/1; a regression label its declared
    bounds. Nothing is read off the data.

    Parameters
    ----------
    analysis : AnalysisSpec
        From :func:`describe_training`.
    declared : schema-like or None
        The dataset's declared schema (``get(column)`` with ``bounds``, ``categories``,
        ``type``).

    Returns
    -------
    (AnalysisSpec, list of str)
        The resolved analysis and notes.

    Raises
    ------
    QueryError
        For a feature or regression label without a declaration.
    """
    t = analysis.training
    if t is None:
        raise QueryError("not a training run")
    bounds: dict[str, tuple[float, float]] = {}
    categories: dict[str, tuple[str, ...]] = {}
    for name in analysis.features or ():
        column = declared.get(name) if declared is not None else None
        kind = str(getattr(getattr(column, "type", None), "value", "")).lower()
        if column is not None and column.bounds is not None:
            bounds[name] = (float(column.bounds[0]), float(column.bounds[1]))
        elif column is not None and getattr(column, "categories", None):
            categories[name] = tuple(str(c) for c in column.categories)
        elif kind == "boolean":
            categories[name] = ("__yes__",)  # one 0/1 indicator: the positive answer
        else:
            raise QueryError(f"declare feature {name!r} in the dataset's schema (bounds for "
                             "a number, categories for a category): declarations are never "
                             "read off the data")
    label_bounds = None
    if t.model == "linear":
        column = declared.get(analysis.query.column) if declared is not None else None
        if column is None or column.bounds is None:
            raise QueryError(f"declare the bounds of the label {analysis.query.column!r} in "
                             "the dataset's schema: a regression maps it by them")
        label_bounds = (float(column.bounds[0]), float(column.bounds[1]))
    notes = ["features mapped by their declared bounds (categories: one indicator each); "
             "nothing read off the data"]
    training = replace(t, label_bounds=label_bounds, feature_categories=categories)
    return replace(analysis, feature_bounds=bounds, training=training), notes


def run_training(a: AnalysisSpec, model_input: Any, source: Source,
                 notes: Sequence[str] = (), state: Any = None) -> AnalysisResult:
    """Train, measure on the held-out rows, compare with the non-private model, audit.

    Parameters
    ----------
    a : AnalysisSpec
        A resolved training run (:func:`resolve_training`).
    model_input : object with ``columns`` (and optionally ``imputed``), or a mapping
        The label and feature columns by name.
    source : Source
        The OS CSPRNG for a release; a seeded source for a simulation (then everything,
        the audit included, is reproducible).
    notes : sequence of str
        Notes from resolution.
    state : State, optional
        Progress and cancellation (DP-SGD's steps, the audit's trainings).

    Returns
    -------
    AnalysisResult
        ``fields`` hold the CLI's keys (``accuracy``/``auc`` or ``rmse``, ``baseline``,
        ``epsilon``, ``delta``, ``accountant``, ``method``, ``fed_variant``, ``rounds``,
        ``coefficients`` for linear models, ``audit`` when asked); the engine object is
        the one that drew the noise.

    Raises
    ------
    QueryError, ParameterError, EngineError
        In one sentence, before any noise is drawn, for data the run cannot take.
    """
    from dpstudio.engine.learning.models import fit_baseline, make_model

    t, q = a.training, a.query
    columns = getattr(model_input, "columns", model_input)
    X, names, bounds = design(a, columns)
    y = labels(a, columns)
    if y.size != X.shape[0]:
        raise QueryError("the label and feature columns have different lengths")
    train_idx, test_idx = split_rows(y.size, t.test_fraction, t.split_seed)
    Xtr, ytr, Xte, yte = X[train_idx], y[train_idx], X[test_idx], y[test_idx]
    if t.model != "linear" and np.unique(ytr).size < 2:
        raise QueryError("the training rows hold one class only: a classifier needs both")
    lam = lambda_of(a)
    model = make_model(t.model, X.shape[1], lam, hidden=t.hidden)

    def baseline(Xs, ys):
        return fit_baseline(model, Xs, ys, seed=t.split_seed)

    release = not isinstance(source, SimulationSource) and t.method != "nonprivate"
    if release:  # DP-SGD's divisor must be declared: refused before anything is drawn
        from dpstudio.analysis.expected_batch import require_declared_batch

        require_declared_batch(a)
    # A project release (its input says ``publish_only``) publishes neither the held-out
    # metrics nor the baseline (:mod:`dpstudio.export.train_public`): neither is fitted
    # nor measured (the MLP's baseline alone took seconds). ``dpstudio train`` still
    # prints them, release or simulation.
    publish_only = release and bool(getattr(model_input, "publish_only", False))
    base = None if publish_only and not t.audit else baseline(Xtr, ytr)
    if (t.runs > 1 or t.sites_alone) and not isinstance(source, SimulationSource):
        raise QueryError(("repeated runs" if t.runs > 1 else "each site trained alone")
                         + " is a simulation (the extra trainings are never released): add "
                         "--simulate SEED")
    measure = HeldOutMetrics(a, Xte, yte)
    train, accountant = (None, None) if t.federated is not None else trainer(
        a, model, lam, baseline)

    def train_once(src: Source) -> Any:
        if t.federated is not None:
            return train_sites(a, model, Xtr, ytr, columns, train_idx, src, release,
                               None if publish_only else measure, state)
        if t.method == "dpsgd":
            return train(Xtr, ytr, src, release, state)
        return train(Xtr, ytr, src, release)

    engine = train_once(source)
    if t.federated is not None:
        accountant = engine.accountant
    theta = theta_of(engine)
    metrics = {} if publish_only else measure(model, theta)
    base_metrics = None if publish_only else measure(model, base.theta)
    private = t.method != "nonprivate" and math.isfinite(float(engine.epsilon))
    fields: dict[str, Any] = {
        "trust_model": "central", "query": TRAIN_QUERY, "label": q.column,
        "features": list(a.features or ()), "model": t.model, "method": t.method,
        "mechanism": q.mechanism or None,
        **metrics, "baseline": base_metrics,
        "epsilon": float(engine.epsilon) if private else None,
        "delta": float(engine.delta) if private else None,
        "accountant": accountant, "relation": q.relation if private else None,
        "lambda": lam, "fed_variant": t.fed_variant,
        # FedAvg's held-out metrics after each round: the main one (``rounds``, the
        # contract of issue 13) and each of them by name.
        "rounds": per_round(engine, "rmse" if t.model == "linear" else "accuracy"),
        "rounds_by_metric": {m: per_round(engine, m) for m in metrics}
        if getattr(engine, "metrics", None) else {},
        "split": {"test_fraction": t.test_fraction, "seed": t.split_seed,
                  "train": int(train_idx.size), "test": int(test_idx.size)},
        "simulated": bool(getattr(engine, "simulated", True)),
        "source": source.label if private else None,  # a non-private fit draws nothing
    }
    fields.update(method_fields(a, engine))
    if t.runs > 1:
        fields["spread"] = spread(metrics, [
            measure(model, theta_of(train_once(child)))
            for child in child_sources(source, t.runs - 1)])
    if t.sites_alone:
        fields["sites_alone"] = sites_alone(a, model, lam, baseline, Xtr, ytr, columns,
                                             train_idx, source, measure, state)
    if t.model in ("logistic", "linear"):
        fields["coefficients"] = coefficients(theta.astype(np.float64), names, bounds,
                                              t.label_bounds)
        sds = coefficient_noise_sd(engine, names, bounds, t.label_bounds)
        for row, sd in zip(fields["coefficients"], sds or (), strict=False):
            row["noise_sd"] = sd  # the calibrated noise's, never the data's
    if t.audit:
        if t.federated is not None:  # each training a full FedAvg simulation
            from dpstudio.analysis.federated_audit import federated_trainer

            train = federated_trainer(a, model, Xtr, ytr, columns, train_idx, state)
        audit = membership_audit(a, train, model, Xtr, ytr, base.theta, source, state)
        fields["audit"] = audit.to_dict()
    fields["notes"] = list(notes) + list(getattr(engine, "notes", ())) + ([] if publish_only
                                                                          else [
        "metrics are measured on held-out rows without noise: for the analyst, not for "
        "publication"]) + [
        ("neighbours differ in one record (replace-one, n public)" if q.relation == "replace"
         else "neighbours differ by adding or removing one record (Poisson sampling)")
        if private else "non-private: no guarantee; a baseline, never a release"]
    if t.method == "dpsgd":  # which divisor the steps used (declared B, or q·n read)
        from dpstudio.analysis.expected_batch import declared_batch, divisor_note

        fields["notes"].append(divisor_note(
            float(engine.details["batch_size"]) if t.federated is not None
            else engine.plan.expected_batch or engine.plan.sample_rate * ytr.size,
            declared_batch(a) is not None, t.federated is not None))
    if "audit" in fields:  # what the audit's bound shows and does not, in words
        fields["notes"].append(fields["audit"]["note"])
    if t.model != "linear" and not publish_only:
        fields["confusion"] = confusion_counts(yte, model.predict(theta, Xte))
    analyst = {k: fields[k] for k in ("accuracy", "auc", "rmse", "baseline", "confusion")
               if k in fields}
    analyst["imputed_feature_values"] = getattr(model_input, "imputed", 0)
    return AnalysisResult(a, engine, fields, analyst, source_label=source.label)
