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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpstudio.analysis.federated_run import federated_options, site_assignment, train_sites
from dpstudio.analysis.request import TRAIN_QUERY, AnalysisSpec, Training
from dpstudio.analysis.result import AnalysisResult
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SimulationSource, Source

__all__ = [
    "METHODS",
    "MAX_RUNS",
    "METHOD_MECHANISMS",
    "MODELS",
    "NonPrivateFit",
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
#: λ of a non-private fit when none is given (the output-perturbation entry's default for
#: logistic regression, a light ridge otherwise).
_NONPRIVATE_LAMBDA = {"logistic": 0.01, "linear": 1e-4, "mlp": 1e-4}


@dataclass(frozen=True)
class NonPrivateFit:
    """The engine object of a non-private run: no noise, no guarantee, never released.

    Attributes
    ----------
    theta : numpy.ndarray
        The parameters found.
    epsilon : float
        inf: no privacy.
    delta : float
        0.
    simulated : bool
        True: never a release.
    """

    theta: np.ndarray
    epsilon: float = math.inf
    delta: float = 0.0
    simulated: bool = field(default=True)


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


# ------------------------------------------------------------------------- the run

def _indicators(values: np.ndarray, categories: tuple[str, ...]) -> list[np.ndarray]:
    if categories == ("__yes__",):
        from dpstudio.engine.learning.features import binary_labels

        present = np.array([v is not None and not (isinstance(v, float) and math.isnan(v))
                            for v in np.asarray(values, dtype=object).tolist()])
        out = np.zeros(present.size)
        if present.any():
            out[present] = binary_labels(np.asarray(values, dtype=object)[present]) > 0
        return [out]
    text = np.array([str(v) for v in np.asarray(values, dtype=object).tolist()], dtype=object)
    return [(text == c).astype(np.float64) for c in categories]


def _design(a: AnalysisSpec, columns: Mapping[str, np.ndarray]
            ) -> tuple[np.ndarray, list[str], dict[str, tuple[float, float]]]:
    """The design matrix (‖x‖ ≤ 1), its feature names and their bounds."""
    from dpstudio.engine.learning.features import design_matrix

    cats = dict(a.training.feature_categories or {})
    expanded: dict[str, np.ndarray] = {}
    bounds: dict[str, tuple[float, float]] = {}
    for name in a.features or ():
        if name not in columns:
            raise QueryError(f"no column {name!r}")
        if name in cats:
            names = ([name] if cats[name] == ("__yes__",)
                     else [f"{name}={c}" for c in cats[name]])
            for n, col in zip(names, _indicators(columns[name], cats[name]), strict=True):
                expanded[n], bounds[n] = col, (0.0, 1.0)
        else:
            expanded[name] = columns[name]
            bounds[name] = tuple(a.feature_bounds[name])
    names = list(expanded)
    return design_matrix(expanded, names, bounds), names, bounds


def _labels(a: AnalysisSpec, columns: Mapping[str, np.ndarray]) -> np.ndarray:
    from dpstudio.engine.learning.features import binary_labels
    from dpstudio.engine.learning.models import regression_labels

    label = a.query.column
    if label not in columns:
        raise QueryError(f"no label column {label!r}")
    if a.training.model == "linear":
        return regression_labels(columns[label], a.training.label_bounds)
    return binary_labels(columns[label])


def _split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) row indices: a seeded permutation, ⌈fraction·n⌉ rows held out."""
    test = math.ceil(fraction * n)
    if n - test < 2 or test < 1:
        raise QueryError(f"too few records ({n}) to hold out {fraction:g} of them and "
                         "train on the rest")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[test:]), np.sort(perm[:test])


def _lambda(a: AnalysisSpec) -> float:
    t = a.training
    if t.method == "nonprivate":
        lam = a.query.params.get("lambda", _NONPRIVATE_LAMBDA[t.model])
        return float(lam)
    return float(a.info.resolve(a.query.mechanism_params())["lambda"])


def _per_round(engine: Any, name: str) -> list[float]:
    """Metric ``name`` after each FedAvg round (a round's entry is every metric by name)."""
    return [float(m[name] if isinstance(m, dict) else m)
            for m in getattr(engine, "metrics", None) or []]


class _Metrics:
    """Held-out metrics of one model (in the label's units for a regression)."""

    def __init__(self, a: AnalysisSpec, X: np.ndarray, y: np.ndarray) -> None:
        self.regression = a.training.model == "linear"
        self.X, self.y, self.bounds = X, y, a.training.label_bounds

    def _units(self, v: np.ndarray) -> np.ndarray:
        lo, hi = self.bounds
        return lo + (np.asarray(v) + 1.0) * (hi - lo) / 2.0

    def __call__(self, model: Any, theta: np.ndarray) -> dict[str, float]:
        from dpstudio.engine.learning.evaluation import accuracy, auc, rmse

        pred = np.asarray(model.predict(theta, self.X), dtype=np.float64)
        if not np.all(np.isfinite(pred)):
            pred = np.nan_to_num(pred, nan=0.5 if not self.regression else 0.0)
        if self.regression:
            return {"rmse": float(rmse(self._units(self.y), self._units(pred)))}
        return {"accuracy": float(accuracy(self.y, pred, 0.5)), "auc": float(auc(self.y, pred))}


def _coefficients(theta: np.ndarray, names: list[str], bounds: dict[str, tuple[float, float]],
                  label_bounds: tuple[float, float] | None) -> list[dict[str, Any]]:
    """θ (normalized space) in the features' own units, the intercept last (as
    :class:`~dpstudio.engine.learning.erm.ModelRelease` gives them); a regression's in the
    label's units."""
    from dpstudio.engine.learning.features import INTERCEPT

    root = math.sqrt(theta.size)
    los = np.array([bounds[f][0] for f in names])
    his = np.array([bounds[f][1] for f in names])
    coef = theta[:-1] * 2.0 / ((his - los) * root)
    intercept = (theta[-1] - np.sum(theta[:-1] * (2.0 * los / (his - los) + 1.0))) / root
    if label_bounds is not None:  # ŷ in [−1, 1] ↦ the label's units
        lo, hi = label_bounds
        coef = coef * (hi - lo) / 2.0
        intercept = lo + (intercept + 1.0) * (hi - lo) / 2.0
    rows = [{"feature": f, "coefficient": float(c)} for f, c in zip(names, coef, strict=True)]
    return rows + [{"feature": INTERCEPT, "coefficient": float(intercept)}]


def _trainer(a: AnalysisSpec, model: Any, lam: float, baseline: Any
             ) -> tuple[Any, str]:
    """``train(X, y, source, release) -> engine object`` for the method, and its accountant."""
    from dpstudio.engine.learning import dpsgd
    from dpstudio.engine.learning.objective_perturbation import ObjectiveERM

    t, q = a.training, a.query
    if t.method == "nonprivate":
        return (lambda X, y, source, release=False: NonPrivateFit(baseline(X, y).theta)), \
            "none"
    entry = a.info.build(**a.info.resolve(q.mechanism_params()))
    if t.method == "output":
        from dpstudio.engine.learning.logistic import fit_logistic
        from dpstudio.engine.learning.output_perturbation import (
            calibrate_output_perturbation,
            perturb,
        )
        from dpstudio.engine.rng import require_secure

        def output(X, y, source, release=False):
            if release:
                require_secure(source)
            plan = calibrate_output_perturbation(X.shape[1], y.size, lam, q.epsilon, q.delta)
            theta = perturb(fit_logistic(X, y, lam).theta, plan, source)
            return _OutputFit(theta, plan.epsilon, plan.delta, not release, plan)

        return output, ("pure-dp (discrete Laplace)" if q.delta == 0 else
                        "zcdp → (ε, δ) (discrete Gaussian)")
    if t.method == "objective":
        obj: ObjectiveERM = entry

        def objective(X, y, source, release=False):
            return (obj.release if release else obj.simulate)(X, y, source)

        return objective, ("cms2011 (pure ε)" if q.delta == 0 else "kst2012 (ε, δ)")
    plan = entry.calibrate(model.dimension)

    def sgd(X, y, source, release=False, state=None):
        run = dpsgd.release_dpsgd if release else dpsgd.simulate_dpsgd
        return run(model, X, y, plan, source, state)

    return sgd, plan.accountant


@dataclass(frozen=True)
class _OutputFit:
    """Output perturbation on a design matrix (the erm release's steps, for a split)."""

    theta: np.ndarray
    epsilon: float
    delta: float
    simulated: bool
    plan: Any = field(repr=False)


def _audit(a: AnalysisSpec, train: Any, model: Any, X: np.ndarray, y: np.ndarray,
           reference: np.ndarray, source: Source, state: Any) -> Any:
    """The membership audit on the training rows, under the method's relation."""
    from dpstudio.engine.learning.membership import audit_membership, corner_canary

    t = a.training
    if t.model == "linear":
        canary = corner_canary(X.shape[1], lambda rows: model.predict(reference, rows),
                               label_bounds=(-1.0, 1.0))
    else:
        canary = corner_canary(X.shape[1], lambda rows: model.predict(reference, rows) - 0.5)

    def score(fit, x, yy):
        return float(model.losses(_theta(fit), np.asarray(x)[None, :], np.array([yy]))[0])

    # DP-SGD and FedAvg's variants: add/remove (a federated D′ adds the canary at a site).
    relation = "add" if t.method == "dpsgd" or t.federated is not None else "replace"
    if t.method == "output":
        # The certified minimizer draws nothing: fit each neighbouring dataset once and
        # redraw only the noise (exactly what retraining gives, 2 fits instead of 2N).
        from dpstudio.engine.learning.logistic import fit_logistic
        from dpstudio.engine.learning.membership import fit_once
        from dpstudio.engine.learning.output_perturbation import (
            calibrate_output_perturbation,
            perturb,
        )

        lam, q = _lambda(a), a.query

        def noisy(fitted, src):
            theta, p, n = fitted
            plan = calibrate_output_perturbation(p, n, lam, q.epsilon, q.delta)
            return _OutputFit(perturb(theta, plan, src), plan.epsilon, plan.delta, True, plan)

        train = fit_once(lambda Xs, ys: (fit_logistic(Xs, ys, lam).theta, Xs.shape[1],
                                         ys.size), noisy)
    return audit_membership(lambda Xs, ys, src: train(Xs, ys, src), score, X, y, canary,
                            t.audit, source, relation=relation, delta=float(a.query.delta),
                            state=state)


def _theta(engine: Any) -> np.ndarray:
    return np.asarray(getattr(engine, "theta", getattr(engine, "params", None)))


def _child_sources(source: Source, count: int) -> list[Source]:
    """Independent seeded sources for the repetitions of a simulation (never a release)."""
    seed = getattr(source, "seed", None)
    children = np.random.SeedSequence(seed if seed is not None else None).spawn(count + 1)[1:]
    return [SimulationSource(int(c.generate_state(1, np.uint64)[0])) for c in children]


def _sites_alone(a: AnalysisSpec, model: Any, lam: float, baseline: Any, X: np.ndarray,
                 y: np.ndarray, columns: Mapping[str, np.ndarray], rows: np.ndarray,
                 source: Source, measure: Any, state: Any) -> list[dict[str, Any]]:
    """Each site trained alone on its own rows, by the centralized form of the run's
    method at the same (ε, δ) (a site is its own curator), measured on the same
    held-out rows; a site whose rows hold one class gets a note instead."""
    from dataclasses import replace

    from dpstudio.jobs import check

    t = a.training
    sites = site_assignment(a, y, columns, rows)
    alone = replace(a, training=replace(t, federated=None, fed_variant="none"))
    train, _ = _trainer(alone, model, lam, baseline)
    out: list[dict[str, Any]] = []
    for name, idx, src in zip(sites.names, sites.indices(),
                              _child_sources(source, sites.count), strict=True):
        check(state)
        entry: dict[str, Any] = {"site": str(name), "rows": int(idx.size)}
        if t.model != "linear" and np.unique(y[idx]).size < 2:
            entry["note"] = "one class only: a classifier cannot be trained on this site alone"
        else:
            engine = (train(X[idx], y[idx], src, False, None) if t.method == "dpsgd"
                      else train(X[idx], y[idx], src, False))
            entry.update(measure(model, _theta(engine)))
        out.append(entry)
    return out


def _spread(first: Mapping[str, float], rest: Sequence[Mapping[str, float]]
            ) -> dict[str, dict[str, float]]:
    """Each metric's mean, standard deviation (ddof 1), min and max over all runs."""
    out = {}
    for key, value in first.items():
        runs = np.array([value, *(m[key] for m in rest)], dtype=float)
        out[key] = {"mean": float(runs.mean()), "sd": float(runs.std(ddof=1)),
                    "min": float(runs.min()), "max": float(runs.max()), "runs": int(runs.size)}
    return out


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
    X, names, bounds = _design(a, columns)
    y = _labels(a, columns)
    if y.size != X.shape[0]:
        raise QueryError("the label and feature columns have different lengths")
    train_idx, test_idx = _split(y.size, t.test_fraction, t.split_seed)
    Xtr, ytr, Xte, yte = X[train_idx], y[train_idx], X[test_idx], y[test_idx]
    if t.model != "linear" and np.unique(ytr).size < 2:
        raise QueryError("the training rows hold one class only: a classifier needs both")
    lam = _lambda(a)
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
    measure = _Metrics(a, Xte, yte)
    train, accountant = (None, None) if t.federated is not None else _trainer(
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
    theta = np.asarray(getattr(engine, "theta", getattr(engine, "params", None)))
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
        "rounds": _per_round(engine, "rmse" if t.model == "linear" else "accuracy"),
        "rounds_by_metric": {m: _per_round(engine, m) for m in metrics}
        if getattr(engine, "metrics", None) else {},
        "split": {"test_fraction": t.test_fraction, "seed": t.split_seed,
                  "train": int(train_idx.size), "test": int(test_idx.size)},
        "simulated": bool(getattr(engine, "simulated", True)),
        "source": source.label if private else None,  # a non-private fit draws nothing
    }
    if t.model == "mlp":
        fields["hidden"] = t.hidden
    if t.federated is not None:
        fields["trusts"] = engine.trusts
        fields["per_round"] = None if engine.per_round is None else list(engine.per_round)
        fields["federated"] = {k: v for k, v in engine.details.items()
                               if isinstance(v, int | float | str)}
    elif t.method == "dpsgd":
        p = engine.plan
        fields["dpsgd"] = {"noise_multiplier": p.noise_multiplier, "steps": p.steps,
                           "sample_rate": p.sample_rate, "clip": p.clip,
                           "learning_rate": p.learning_rate,
                           "expected_batch": p.expected_batch}
    if t.runs > 1:
        fields["spread"] = _spread(metrics, [
            measure(model, _theta(train_once(child)))
            for child in _child_sources(source, t.runs - 1)])
    if t.sites_alone:
        fields["sites_alone"] = _sites_alone(a, model, lam, baseline, Xtr, ytr, columns,
                                             train_idx, source, measure, state)
    if t.model in ("logistic", "linear"):
        fields["coefficients"] = _coefficients(theta.astype(np.float64), names, bounds,
                                               t.label_bounds)
        from dpstudio.analysis.training_detail import coefficient_noise_sd

        sds = coefficient_noise_sd(engine, names, bounds, t.label_bounds)
        for row, sd in zip(fields["coefficients"], sds or (), strict=False):
            row["noise_sd"] = sd  # the calibrated noise's, never the data's
    if t.audit:
        if t.federated is not None:  # each training a full FedAvg simulation
            from dpstudio.analysis.federated_audit import federated_trainer

            train = federated_trainer(a, model, Xtr, ytr, columns, train_idx, state)
        audit = _audit(a, train, model, Xtr, ytr, base.theta, source, state)
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
        from dpstudio.analysis.training_detail import confusion_counts

        fields["confusion"] = confusion_counts(yte, model.predict(theta, Xte))
    analyst = {k: fields[k] for k in ("accuracy", "auc", "rmse", "baseline", "confusion")
               if k in fields}
    analyst["imputed_feature_values"] = getattr(model_input, "imputed", 0)
    return AnalysisResult(a, engine, fields, analyst, source_label=source.label)
