"""The analyst's current choices (:class:`Session`) and the live computations they drive
(:class:`Analysis`).

Views subscribe to :attr:`Session.changed` (one signal, naming what changed) and read the
state back; they never hold their own copy. :class:`Analysis` turns each change into
jobs for the worker threads (:mod:`dpstudio.ui.compute`): slow utility curves on one
runner (cached by :meth:`compute.Settings.utility_key`, so moving ε never recomputes them),
the per-ε trade-off and preview on another, throttled so a slider drag updates live.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication, QElapsedTimer, QObject, QTimer, Signal

from dpstudio.data.columns import column_values
from dpstudio.data.dataset import Dataset
from dpstudio.data.errors import DataError
from dpstudio.data.schema import ColumnSpec, ColumnType, Schema
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import MechanismInfo, Param
from dpstudio.ui import compute
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name
from dpstudio.ui.worker import Coalescer, JobRunner

__all__ = [
    "GLOSSARY",
    "QUERY_LABELS",
    "QUERY_PARAMS",
    "TRUST_MODELS",
    "Analysis",
    "ProjectBudget",
    "Session",
    "Throttle",
]

#: Trust model → (label, colour, who is trusted with what, one-line tooltip).
#: Colours: Okabe–Ito, distinguishable with the common colour-vision deficiencies.
TRUST_MODELS: dict[str, dict[str, str]] = {
    "central": {
        "label": "Central",
        "colour": "#0072B2",
        "explanation": (
            "A trusted curator holds everyone's raw data, computes the statistic and adds "
            "noise once, before publishing. People must trust the curator with their data; "
            "everyone else (the public, an attacker) sees only the noisy result. Least "
            "noise for a given ε."
        ),
        "tooltip": "A trusted curator sees the raw data and adds noise once to the result.",
    },
    "local": {
        "label": "Local",
        "colour": "#D55E00",
        "explanation": (
            "Each person randomizes their own answer on their device before sending it, so "
            "nobody — not even the collector — is trusted with raw data. The price: every "
            "report carries its own noise, so errors grow by a factor of about √n compared "
            "with the central model."
        ),
        "tooltip": "Each person randomizes their own value before it leaves their device.",
    },
    "shuffle": {
        "label": "Shuffle",
        "colour": "#009E73",
        "explanation": (
            "People randomize their reports lightly; an anonymizing shuffler strips "
            "identities and mixes the messages, breaking the link between people and "
            "messages. Only the shuffler must be trusted not to reveal who sent what; the "
            "analyst's guarantee is much stronger than each report's."
        ),
        "tooltip": "An anonymizing shuffler breaks the link between people and messages.",
    },
    "distributed": {
        "label": "Distributed",
        "colour": "#CC79A7",
        "explanation": (
            "Secure aggregation: people add small noise shares to their values and encrypt "
            "(mask) them so that the server can only add them up. The server sees the noisy "
            "sum and nothing else; no single party sees anyone's raw value."
        ),
        "tooltip": "Secure aggregation: the server sees only the noisy sum of masked values.",
    },
}

#: One-sentence tooltips for the differential-privacy terms the view uses.
GLOSSARY = {
    "epsilon": "ε (privacy-loss budget): how much one person's data may change what is "
               "released; smaller ε means stronger privacy and more noise.",
    "delta": "δ: the small probability with which the ε guarantee may fail; keep it well "
             "below 1/n (one over the number of people).",
    "sensitivity": "Sensitivity: the most one person's record can change the statistic, "
                   "fixed by the declared bounds — never read from the data.",
    "relation": "Neighbouring relation: which datasets count as differing by one person — "
                "add-remove (one record more or fewer) or replace (one record's value "
                "changed).",
    "type1": "Type I error α: the chance an attacker wrongly claims that a person's record "
             "is the one in the data (a false alarm).",
    "type2": "Type II error β: the chance an attacker misses that a person's record is the "
             "one in the data (a missed detection).",
    "compositions": "Compositions k: how many such releases an attacker sees; privacy "
                    "degrades as releases add up.",
    "confidence": "Confidence: the probability with which each interval covers the true "
                  "value (the noise's randomness, not sampling).",
    "mechanism": "Mechanism: the randomized algorithm that turns the data into a private "
                 "release.",
    "trust": "Trust model: who is trusted with the raw data, which decides where the noise "
             "is added.",
    "query": "Query: the statistic to release about the selected column.",
    "metric": "Error measure of the privacy–utility plot.",
    "hide_true": "Hide true values: draw nothing computed from the raw data (for showing "
                 "the screen to others).",
    "gdp": "Gaussian differential privacy (μ-GDP): distinguishing neighbours is as hard as "
           "telling N(0, 1) from N(μ, 1).",
    "missing": "Missing values (empty, NaN, ±inf): dropping them is the default, but under "
               "replace a value may then appear where one was missing, so the sum uses the "
               "larger true sensitivity max(hi − lo, |lo|, |hi|) (add-remove: max(|lo|, "
               "|hi|) as before); imputing a declared constant inside the bounds counts "
               "every row, which under replace makes the number of rows n public, so the "
               "sensitivity is hi − lo and a mean is the noisy sum / n with the whole "
               "budget (under add-remove n stays a noisy count).",
}

#: Queries of a central numeric column that take a missing-value treatment.
MISSING_QUERIES = ("sum", "mean", "variance")

QUERY_LABELS = {
    "count": "Count",
    "sum": "Sum",
    "mean": "Mean",
    "variance": "Variance",
    "median": "Median",
    "quantile": "Quantile",
    "histogram": "Histogram",
    "heavy_hitters": "Heavy hitters",
}

#: Parameters of the queries themselves, as registry Params so one form builder serves.
QUERY_PARAMS: dict[str, tuple[Param, ...]] = {
    "quantile": (Param("quantile", "float", 0.9, "Which quantile to release (0.5 is the "
                       "median).", low=0.0, high=1.0, label="quantile q"),),
    "histogram": (Param("bins", "int", 10, "Number of equal-width bins between the "
                        "declared bounds (numeric columns).", low=1, high=1000,
                        label="bins"),),
}

METRICS = {"rmse": "RMSE", "relative": "relative error", "tv": "total variation"}

EPS_RANGE = (compute.EPS_MIN, compute.EPS_MAX)
DELTA_RANGE = (1e-12, 0.1)


@dataclass(frozen=True)
class ProjectBudget:
    """The open project's budget for the session's dataset (plain floats, for display).

    ``registered`` is False when the dataset has no release yet: its first release
    registers it with these totals (the project's defaults).
    """

    project: str
    dataset: str
    total_epsilon: float
    total_delta: float
    spent_epsilon: float = 0.0
    spent_delta: float = 0.0
    releases: int = 0
    registered: bool = False
    accountant: str = "basic"

    @property
    def remaining_epsilon(self) -> float:
        return self.total_epsilon - self.spent_epsilon

    @property
    def remaining_delta(self) -> float:
        return self.total_delta - self.spent_delta


def _column_kind(spec: ColumnSpec) -> str:
    """'numeric', 'categorical', 'boolean' or 'text' (text: local heavy hitters only)."""
    return spec.type.value


class Session(QObject):
    """The analyst's choices for one dataset; emits :attr:`changed` with the aspect name.

    Aspects: dataset, column, trust_model, query, query_params, mechanism, params, epsilon,
    delta, relation, confidence, compositions, metric, hide_true, budget, missing.

    ``project_budget`` is the open project's budget for this dataset (None: no project, or
    a project without a default budget for an unregistered dataset — then the session's
    own totals apply).
    """

    changed = Signal(str)
    epsilon_changed = Signal(float)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.dataset: Dataset | None = None
        self.schema: Schema | None = None  # the declarations in force (edited or loaded)
        self.column: str | None = None
        self.spec: ColumnSpec | None = None
        self.values: np.ndarray | None = None
        self.value_types: tuple[str, ...] = ()
        self.column_problem: str | None = None
        self.trust_model = "central"
        self.query = "mean"
        self.mechanism = ""
        self.params: dict[str, Any] = {}
        self.query_params: dict[str, Any] = {"bins": 10, "quantile": 0.9}
        self.epsilon = 1.0
        self.delta = 1e-6
        self.relation = "add-remove"
        self.confidence = 0.95
        self.compositions = 10
        self.metric = "rmse"
        self.hide_true = False
        self.total_epsilon = 3.0
        self.total_delta = 1e-5
        self.spent: list[tuple[str, float, float]] = []
        self.project_budget: ProjectBudget | None = None
        #: Central sum/mean/variance: "drop" or "impute" missing values; ``impute_text`` is
        #: the constant as typed ("" = the middle of the declared bounds).
        self.missing = "drop"
        self.impute_text = ""

    # -- dataset and column ----------------------------------------------------------

    def set_dataset(self, dataset: Dataset | None) -> None:
        self.dataset = dataset
        self.schema = None if dataset is None else dataset.schema
        self.spent = []
        self.column = self.spec = self.values = None
        self.value_types = ()
        self.column_problem = None
        if dataset is not None:
            column = self.default_column()
            if column is not None:
                self._load_column(column)
                self._settle(prefer_query=None)
        self.changed.emit("dataset")

    # -- remembering choices across restarts ------------------------------------------

    CHOICES = ("column", "trust_model", "query", "mechanism", "epsilon", "delta", "relation",
               "confidence", "compositions", "metric")

    def choices(self) -> dict[str, Any]:
        """The analyst's choices as plain JSON, to restore them next time."""
        return {name: getattr(self, name) for name in self.CHOICES}

    def apply_choices(self, choices: dict[str, Any]) -> None:
        """Restore remembered choices, skipping any the current data no longer allows."""
        setters = (("column", self.set_column), ("trust_model", self.set_trust_model),
                   ("query", self.set_query), ("mechanism", self.set_mechanism),
                   ("epsilon", self.set_epsilon), ("delta", self.set_delta),
                   ("relation", self.set_relation), ("confidence", self.set_confidence),
                   ("compositions", self.set_compositions), ("metric", self.set_metric))
        for name, setter in setters:
            if name in choices:
                try:
                    setter(choices[name])
                except (ValueError, KeyError, TypeError):
                    continue  # e.g. a column or mechanism that is gone: keep the default

    def analysable_columns(self) -> list[ColumnSpec]:
        """Columns a query can be asked of, in table order (free text: heavy hitters)."""
        if self.schema is None:
            return []
        return list(self.schema)

    def default_column(self) -> str | None:
        """First numeric column with declared bounds, else the first declared one, else any
        (text columns last: only the local model's heavy hitters apply to them)."""
        columns = self.analysable_columns()
        for spec in columns:
            if spec.type is ColumnType.NUMERIC and spec.bounds is not None:
                return spec.name
        for spec in columns:
            if spec.is_declared and spec.type is not ColumnType.TEXT:
                return spec.name
        for spec in columns:
            if spec.type is not ColumnType.TEXT:
                return spec.name
        return columns[0].name if columns else None

    def set_column(self, name: str) -> None:
        if self.dataset is None or name == self.column:
            return
        self.impute_text = ""  # a constant declared for another column's bounds
        self._load_column(name)
        self._settle(prefer_query=None)
        self.changed.emit("column")

    def set_schema(self, schema: Schema) -> None:
        """New declarations for the dataset (e.g. edited in the schema panel).

        The selected column is re-read when its declaration changed; a column that no
        longer can be analysed falls back to the default one.
        """
        if self.dataset is None or schema is None:
            return
        before = self.spec
        self.schema = schema
        names = {spec.name for spec in self.analysable_columns()}
        if self.column not in names:
            column = self.default_column()
            if column is None:
                self.column = self.spec = self.values = None
                self.changed.emit("column")
                return
            self._load_column(column)
        elif schema[self.column] != before:
            self._load_column(self.column)
        else:
            self.changed.emit("schema")
            return
        self._settle(prefer_query=self.query)
        self.changed.emit("column")

    def set_column_spec(self, spec: ColumnSpec) -> None:
        """A new declaration for one column (bounds, categories, type)."""
        if self.schema is None:
            return
        specs = [spec if s.name == spec.name else s for s in self.schema]
        self.set_schema(replace(self.schema, columns=tuple(specs)))

    def refresh_schema(self) -> None:
        """Re-read the selected column's declaration (after the schema was edited in place)."""
        if self.dataset is not None and self.column is not None:
            self._load_column(self.column)
            self._settle(prefer_query=self.query)
            self.changed.emit("column")

    def _load_column(self, name: str) -> None:
        assert self.dataset is not None and self.schema is not None
        spec = self.schema[name]
        self.column, self.spec = name, spec
        self.column_problem = None
        kind = _column_kind(spec)
        shown = elide_name(name, PHRASE_CHARS)  # a name can be 100,000 characters long
        try:
            self.values = column_values(self.dataset.frame, spec)
        except DataError as exc:
            self.values, self.value_types = None, ()
            self.column_problem = str(exc)
            return
        self.value_types = compute.registry_value_types(kind, self.values)
        if kind == "numeric" and spec.bounds is None:
            self.column_problem = (f"declare public bounds for '{shown}' (Columns panel or "
                                   "schema file): sensitivity comes from them, never from "
                                   "the data")
        elif kind == "categorical" and not spec.categories:
            self.column_problem = (f"declare the categories of '{shown}' (Columns panel or "
                                   "schema file): they are public, never read from the data")

    @property
    def column_kind(self) -> str | None:
        return None if self.spec is None else _column_kind(self.spec)

    # -- missing values (central sums, means, variances) ---------------------------------

    @property
    def missing_applies(self) -> bool:
        """Whether the missing-value treatment applies: a central sum, mean or variance."""
        return (self.trust_model == "central" and self.query in MISSING_QUERIES
                and self.column_kind == "numeric")

    def impute_value(self) -> float | None:
        """The typed constant (None: empty, the engine then imputes the bounds' middle)."""
        text = self.impute_text.strip()
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            return math.nan

    def missing_problem(self) -> str | None:
        """One line when the imputed value cannot be used (not a number, outside the bounds):
        the engine's own check of a query that imputes it, so the app and the CLI agree."""
        if not self.missing_applies or self.missing != "impute" or self.spec is None:
            return None
        text, bounds = self.impute_text.strip(), self.spec.bounds
        if not text or bounds is None:
            return None
        # Only the missing-value fields are in question here: the rest of this stand-in
        # query (a Laplace mean) is valid by construction.
        probe = QuerySpec("mean", "laplace", 1.0, bounds=bounds, missing="impute",
                          impute=text)
        try:
            probe.validated()
        except QueryError as exc:
            return str(exc)
        return None

    def set_missing(self, missing: str, impute: float | str | None = None) -> None:
        """Drop or impute missing values; ``impute`` (a number or its text) sets the value."""
        if missing not in ("drop", "impute"):
            raise ValueError(f"missing must be drop or impute, got {missing!r}")
        text = self.impute_text if impute is None else (
            impute if isinstance(impute, str) else f"{float(impute):g}")
        if (missing, text) != (self.missing, self.impute_text):
            self.missing, self.impute_text = missing, text
            self.changed.emit("missing")

    def set_impute(self, text: str) -> None:
        """The imputed constant as typed (checked by :meth:`missing_problem`)."""
        if text != self.impute_text:
            self.impute_text = text
            self.changed.emit("missing")

    @property
    def n(self) -> int:
        if self.values is None:
            return 0
        v = self.values
        if v.dtype.kind == "f":
            return int(np.count_nonzero(np.isfinite(v)))
        return int(np.count_nonzero(np.not_equal(v, None)))

    # -- what is offered ---------------------------------------------------------------

    def queries(self) -> tuple[str, ...]:
        return compute.QUERIES_BY_TYPE.get(self.column_kind or "", ())

    def mechanisms(self, trust_model: str | None = None, query: str | None = None
                   ) -> list[MechanismInfo]:
        if not self.value_types:
            return []
        query = query or self.query
        return compute.mechanisms_for(trust_model or self.trust_model, self.value_types,
                                      query, self.cells(query))

    def cells(self, query: str | None = None) -> int | None:
        """Number of cells of a histogram of the column (categories or bins), else None."""
        if (query or self.query) != "histogram" or self.spec is None:
            return None
        if self.column_kind == "numeric":
            return int(self.query_params.get("bins", 10))
        return len(self.spec.categories) or None

    def query_available(self, query: str, trust_model: str | None = None) -> bool:
        return bool(self.mechanisms(trust_model, query))

    def trust_model_available(self, trust_model: str) -> bool:
        return any(self.query_available(q, trust_model) for q in self.queries())

    def metrics(self) -> list[str]:
        if self.query == "heavy_hitters":
            return ["rmse"]  # of each discovered word's count (no fixed set of cells)
        out = ["rmse", "relative"]
        if self.query == "histogram" or self.column_kind in ("categorical", "boolean"):
            out.append("tv")
        return out

    @property
    def info(self) -> MechanismInfo | None:
        for info in self.mechanisms():
            if info.name == self.mechanism:
                return info
        return None

    @property
    def needs_delta(self) -> bool:
        info = self.info
        return bool(info and info.needs_delta)

    def _settle(self, prefer_query: str | None) -> None:
        """Make trust model, query, mechanism and metric valid for the column (cascade)."""
        if not self.queries():
            return
        if not self.trust_model_available(self.trust_model):
            # The first model with a mechanism for this column (text: local only).
            self.trust_model = next((tm for tm in TRUST_MODELS
                                     if self.trust_model_available(tm)), "central")
        queries = [q for q in self.queries() if self.query_available(q)]
        wanted = prefer_query or self.query
        if wanted not in queries:
            wanted = queries[0] if queries else self.queries()[0]
        self.query = wanted
        names = [m.name for m in self.mechanisms()]
        if self.mechanism not in names:
            self._set_mechanism_quiet(names[0] if names else "")
        if self.metric not in self.metrics():
            self.metric = "rmse"

    def _set_mechanism_quiet(self, name: str) -> None:
        self.mechanism = name
        self.params = {}
        if name:
            info = next(i for i in self.mechanisms() if i.name == name)
            self.params = {p.name: p.default for p in info.params
                           if p.name not in ("epsilon", "delta")}

    # -- setters -------------------------------------------------------------------------

    def set_trust_model(self, trust_model: str) -> None:
        if trust_model == self.trust_model or trust_model not in TRUST_MODELS:
            return
        self.trust_model = trust_model
        queries = [q for q in self.queries() if self.query_available(q)]
        if self.query not in queries and queries:
            self.query = queries[0]
        names = [m.name for m in self.mechanisms()]
        self._set_mechanism_quiet(names[0] if names else "")
        if self.metric not in self.metrics():
            self.metric = "rmse"
        self.changed.emit("trust_model")

    def set_query(self, query: str) -> None:
        if query == self.query or query not in self.queries():
            return
        self.query = query
        names = [m.name for m in self.mechanisms()]
        if self.mechanism not in names:
            self._set_mechanism_quiet(names[0] if names else "")
        if self.metric not in self.metrics():
            self.metric = "rmse"
        self.changed.emit("query")

    def set_mechanism(self, name: str) -> None:
        if name == self.mechanism or name not in [m.name for m in self.mechanisms()]:
            return
        self._set_mechanism_quiet(name)
        self.changed.emit("mechanism")

    def set_param(self, name: str, value: Any) -> None:
        if self.params.get(name) == value:
            return
        self.params[name] = value
        self.changed.emit("params")

    def set_query_param(self, name: str, value: Any) -> None:
        if self.query_params.get(name) == value:
            return
        self.query_params[name] = value
        self._settle(prefer_query=self.query)
        self.changed.emit("query_params")

    def set_epsilon(self, epsilon: float) -> None:
        eps = float(min(max(float(epsilon), EPS_RANGE[0]), EPS_RANGE[1]))
        if math.isclose(eps, self.epsilon, rel_tol=1e-12):
            return
        self.epsilon = eps
        self.epsilon_changed.emit(eps)
        self.changed.emit("epsilon")

    def set_delta(self, delta: float) -> None:
        d = float(min(max(float(delta), DELTA_RANGE[0]), DELTA_RANGE[1]))
        if math.isclose(d, self.delta, rel_tol=1e-12):
            return
        self.delta = d
        self.changed.emit("delta")

    def set_budget(self, epsilon: float, delta: float | None = None) -> None:
        """Set this release's ε (and δ) at once, e.g. from the sensitivity questionnaire."""
        if delta is not None:
            d = float(min(max(float(delta), DELTA_RANGE[0]), DELTA_RANGE[1]))
            if not math.isclose(d, self.delta, rel_tol=1e-12):
                self.delta = d
                self.changed.emit("delta")
        self.set_epsilon(epsilon)

    def set_total_budget(self, epsilon: float, delta: float) -> None:
        """The session's total (ε, δ) for this dataset, against which releases are counted."""
        self.total_epsilon, self.total_delta = float(epsilon), float(delta)
        self.changed.emit("budget")

    def set_project_budget(self, budget: ProjectBudget | None) -> None:
        """The project's budget for this dataset (None: count against the session's)."""
        if budget != self.project_budget:
            self.project_budget = budget
            self.changed.emit("budget")

    def record_spend(self, label: str, epsilon: float, delta: float) -> None:
        """Count a real release against the session budget (basic composition)."""
        self.spent.append((label, float(epsilon), float(delta)))
        self.changed.emit("budget")

    def set_relation(self, relation: str) -> None:
        if relation != self.relation:
            self.relation = relation
            self.changed.emit("relation")

    def set_confidence(self, confidence: float) -> None:
        if confidence != self.confidence:
            self.confidence = float(confidence)
            self.changed.emit("confidence")

    def set_compositions(self, k: int) -> None:
        k = max(1, int(k))
        if k != self.compositions:
            self.compositions = k
            self.changed.emit("compositions")

    def set_metric(self, metric: str) -> None:
        if metric != self.metric and metric in self.metrics():
            self.metric = metric
            self.changed.emit("metric")

    def set_hide_true(self, hide: bool) -> None:
        if bool(hide) != self.hide_true:
            self.hide_true = bool(hide)
            self.changed.emit("hide_true")

    # -- snapshot ------------------------------------------------------------------------

    def problem(self) -> str | None:
        """Why nothing can be computed right now (one line), or None."""
        if self.dataset is None:
            return "Open a dataset to start"
        if self.column is None:
            return "Choose a column"
        if self.column_problem:
            return self.column_problem
        if not self.mechanism:
            return (f"No {TRUST_MODELS[self.trust_model]['label'].lower()}-model mechanism "
                    f"answers a {self.query} of this column yet")
        return self.missing_problem()

    def settings(self) -> compute.Settings | None:
        """A hashable snapshot for the jobs, or None when nothing can be computed."""
        if self.problem() is not None or self.spec is None:
            return None
        spec = self.spec
        return compute.Settings(
            column=spec.name, column_type=self.column_kind or "", value_types=self.value_types,
            trust_model=self.trust_model, query=self.query, mechanism=self.mechanism,
            epsilon=self.epsilon, delta=self.delta,
            params=tuple(sorted(self.params.items())), bounds=spec.bounds,
            categories=tuple(spec.categories) or None,
            bins=int(self.query_params.get("bins", 10)),
            quantile=float(self.query_params.get("quantile", 0.9)),
            relation=self.relation,
            confidence=self.confidence, metric=self.metric, compositions=self.compositions,
            # Only a central sum, mean or variance takes a missing-value treatment (local
            # releases send the bounds' middle for a missing value, whatever this says).
            missing=self.missing if self.missing_applies else "drop",
            impute=self.impute_value() if (self.missing_applies
                                           and self.missing == "impute") else None,
        )


class Throttle(QObject):
    """Call ``callback`` at once, then at most every ``interval_ms`` while calls keep coming.

    A slider drag sends dozens of changes a second: the first is computed immediately
    (no added latency), later ones are collapsed so that one runs per interval, and the
    last one always runs (trailing edge).
    """

    def __init__(self, callback, interval_ms: int = 30, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._callback = callback
        self._interval = int(interval_ms)
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._fire)

    def __call__(self) -> None:
        if self._timer.isActive():
            return  # the trailing call is already scheduled
        elapsed = self._clock.elapsed() if self._clock.isValid() else self._interval
        if elapsed >= self._interval:
            self._fire()
        else:
            self._timer.start(self._interval - int(elapsed))

    def pending(self) -> bool:
        return self._timer.isActive()

    def stop(self) -> None:
        self._timer.stop()

    def _fire(self) -> None:
        self._clock.restart()
        self._callback()


class Analysis(QObject):
    """Runs the analysis view's jobs for a :class:`Session` and hands results to views.

    Two worker threads: ``slow`` for the utility curves (analytic lines, then the
    cancellable Monte-Carlo job with progress), ``fast`` for the per-ε trade-off and
    preview jobs. Utility results are cached by their key, so changing ε, k, the
    confidence or display options never recomputes them.
    """

    lines_ready = Signal(object)      # compute.UtilityResult (analytic curves)
    compare_ready = Signal(object)    # compute.UtilityResult (planned protocols' curves)
    points_ready = Signal(object)     # compute.UtilityResult (Monte-Carlo points)
    tradeoff_ready = Signal(object)   # compute.TradeoffResult
    preview_ready = Signal(object)    # compute.Preview
    cleared = Signal(str)             # nothing to compute; the reason
    failed = Signal(str, str)         # job key, one-line message
    busy_changed = Signal(str, bool)  # job key, running
    progress = Signal(str, float, str)
    mc_cancelled = Signal()

    KEYS = ("lines", "montecarlo", "compare", "tradeoff", "preview")
    #: Overlay the shuffle and secure-aggregation protocols' planned errors (their plans
    #: calibrate noise numerically: up to a second per ε the first time, then cached).
    planned_comparisons = True

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.slow = JobRunner(self)
        self.fast = JobRunner(self)
        self._busy: set[str] = set()
        self._lines_cache: dict[tuple, compute.UtilityResult] = {}
        self._points_cache: dict[tuple, compute.UtilityResult] = {}
        self._compare_cache: dict[tuple, compute.UtilityResult] = {}
        self._shown: dict[str, Any] = {}
        self._submitted: dict[str, Any] = {}
        self.preview_seed = 1
        self.mc_was_cancelled = False
        self._closed = False
        for runner in (self.slow, self.fast):
            runner.sig_finished.connect(self._finished)
            runner.sig_failed.connect(self._failed)
            runner.sig_busy.connect(self._busy_changed)
            runner.sig_progress.connect(self.progress)
        self._utility_later = Coalescer(lambda _=None: self._submit_utility(), 30, self)
        self._fast_later = Throttle(self._submit_fast, 30, self)
        session.changed.connect(self._on_changed)

    # -- public ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Recompute whatever the current settings need (e.g. after construction)."""
        self._on_changed("refresh")

    def cancel_montecarlo(self) -> None:
        """Stop the Monte-Carlo job; its result, if it still arrives, is dropped."""
        if "montecarlo" in self._busy or self._submitted.get("montecarlo") is not None:
            self.slow.cancel("montecarlo")
            self._submitted["montecarlo"] = None
            self.mc_was_cancelled = True
            self.mc_cancelled.emit()

    def recompute_montecarlo(self) -> None:
        self.mc_was_cancelled = False
        s = self.session.settings()
        if s is not None and not self._closed:
            self._submit_points(s, force=True)

    def draw_again(self) -> None:
        """A new simulated release at the same settings (another seed)."""
        self.preview_seed += 1
        self._submitted.pop("preview", None)
        self._submit_fast()

    def is_idle(self) -> bool:
        return (not self._busy and not self._fast_later.pending()
                and not self._utility_later._timer.isActive())

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """Process events until every job has finished (screenshots, tests, benchmarks)."""
        deadline = time.monotonic() + timeout_s
        app = QCoreApplication.instance()
        while time.monotonic() < deadline:
            if app is not None:
                app.processEvents()
            if self.is_idle():
                if app is not None:
                    app.processEvents()
                if self.is_idle():
                    return True
            time.sleep(0.002)
        return False

    def busy(self) -> set[str]:
        return set(self._busy)

    def shutdown(self) -> None:
        """Stop for good (window closing): pending timers die, running jobs are dropped."""
        if self._closed:
            return
        self._closed = True
        self._fast_later.stop()
        self._utility_later._timer.stop()
        self.slow.shutdown()
        self.fast.shutdown()

    # -- scheduling ----------------------------------------------------------------------

    def _on_changed(self, aspect: str) -> None:
        if self._closed:
            return
        s = self.session.settings()
        if s is None:
            for runner, key in ((self.slow, "lines"), (self.slow, "montecarlo"),
                                (self.slow, "compare"), (self.fast, "tradeoff"),
                                (self.fast, "preview")):
                if self._submitted.get(key) is not None:
                    runner.cancel(key)
            self._submitted.clear()
            self._shown.clear()
            self.cleared.emit(self.session.problem() or "")
            return
        if aspect in ("hide_true", "budget"):
            return  # display only
        if s.utility_key() != self._shown.get("utility"):
            if aspect in ("dataset", "refresh"):
                self._submit_utility()
            else:
                self._utility_later()
        self._fast_later()

    def _submit_utility(self) -> None:
        s = self.session.settings()
        if s is None or self._closed:
            return
        key = s.utility_key()
        self._shown["utility"] = key
        self.mc_was_cancelled = False
        if key in self._lines_cache:
            self._submitted["lines"] = None
            self.lines_ready.emit(self._lines_cache[key])
        elif self._submitted.get("lines") != key:
            self._submitted["lines"] = key
            self.slow.submit("lines", _lines_job, s, self.session.values)
        self._submit_points(s)
        if not self.planned_comparisons:
            return
        if key in self._compare_cache:
            self._submitted["compare"] = None
            self.compare_ready.emit(self._compare_cache[key])
        elif self._submitted.get("compare") != key:
            self._submitted["compare"] = key
            self.slow.submit("compare", _compare_job, s, self.session.values)

    def _submit_points(self, s: compute.Settings, force: bool = False) -> None:
        key = s.utility_key()
        if key in self._points_cache and not force:
            self._submitted["montecarlo"] = None
            if "montecarlo" in self._busy:
                self.slow.cancel("montecarlo")
            self.points_ready.emit(self._points_cache[key])
        elif force or self._submitted.get("montecarlo") != key:
            self._submitted["montecarlo"] = key
            self.slow.submit("montecarlo", _points_job, s, self.session.values)

    def _submit_fast(self) -> None:
        s = self.session.settings()
        if s is None or self._closed:
            return
        t_key = (s.utility_key(), s.epsilon, s.effective_delta, s.compositions, s.confidence)
        if self._submitted.get("tradeoff") != t_key:
            self._submitted["tradeoff"] = t_key
            self.fast.submit("tradeoff", _tradeoff_job, s)
        p_key = (t_key, self.preview_seed)
        if self._submitted.get("preview") != p_key:
            self._submitted["preview"] = p_key
            self.fast.submit("preview", _preview_job, s, self.session.values,
                             self.preview_seed)

    # -- results ---------------------------------------------------------------------------

    def _finished(self, key: str, result: Any) -> None:
        if key == "lines":
            self._lines_cache[result.key] = result
            self._submitted["lines"] = None
            if result.key == self._shown.get("utility"):
                self.lines_ready.emit(result)
        elif key == "montecarlo":
            self._points_cache[result.key] = result
            self._submitted["montecarlo"] = None
            if result.key == self._shown.get("utility"):
                self.points_ready.emit(result)
        elif key == "compare":
            self._compare_cache[result.key] = result
            self._submitted["compare"] = None
            if result.key == self._shown.get("utility"):
                self.compare_ready.emit(result)
        elif self._submitted.get(key) is None:
            return  # cleared since (e.g. a bad imputed value): a stale result, not shown
        elif key == "tradeoff":
            self.tradeoff_ready.emit(result)
        elif key == "preview":
            self.preview_ready.emit(result)

    def _failed(self, key: str, message: str) -> None:
        self._submitted[key] = None
        self.failed.emit(key, message)

    def _busy_changed(self, key: str, busy: bool) -> None:
        if busy:
            self._busy.add(key)
        else:
            self._busy.discard(key)
        self.busy_changed.emit(key, busy)


# Jobs: module-level so they hold no reference to Qt objects.


def _lines_job(s: compute.Settings, values: np.ndarray, state=None) -> compute.UtilityResult:
    fast = tuple(m for m in compute.TRUST_MODELS if m not in compute.PLANNED_MODELS)
    return compute.utility(s, values, state, simulate=False, compare=fast)


def _compare_job(s: compute.Settings, values: np.ndarray, state=None
                 ) -> compute.UtilityResult:
    return compute.utility(s, values, state, simulate=False, analytic=False,
                           compare=compute.PLANNED_MODELS)


def _points_job(s: compute.Settings, values: np.ndarray, state=None) -> compute.UtilityResult:
    return compute.utility(s, values, state, analytic=False, compare=False)


def _tradeoff_job(s: compute.Settings, state=None) -> compute.TradeoffResult:
    return compute.tradeoff(s, state)


def _preview_job(s: compute.Settings, values: np.ndarray, seed: int, state=None
                 ) -> compute.Preview:
    return compute.preview(s, values, state, seed=seed)


def settings_with(s: compute.Settings, **changes: Any) -> compute.Settings:
    """A copy of a snapshot with some fields changed (tests and benchmarks)."""
    return replace(s, **changes)
