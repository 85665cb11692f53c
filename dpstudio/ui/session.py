"""The analyst's current choices for one dataset (:class:`Session`).

Views subscribe to :attr:`Session.changed` (one signal, naming what changed) and read the
state back; they never hold their own copy. :meth:`Session.settings` takes a hashable
snapshot (:class:`~dpstudio.analysis.choices.Choices`) for the jobs that
:class:`~dpstudio.ui.analysis_jobs.Analysis` runs.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import replace
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal

from dpstudio.analysis.capabilities import capability
from dpstudio.analysis.choices import (
    QUERIES_BY_TYPE,
    VIEW_TRUST_MODELS,
    Choices,
    mechanisms_for,
    registry_value_types,
)
from dpstudio.data.columns import column_values
from dpstudio.data.dataset import Dataset
from dpstudio.data.errors import DataError
from dpstudio.data.schema import ColumnSpec, ColumnType, Schema
from dpstudio.engine.entry import DELTA, EPSILON
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import MechanismInfo

# The window builds the pair (Session, Analysis) from here, and tests patch
# ``dpstudio.ui.session.Analysis``: the class that runs a session's jobs is importable
# from the session's module (it is defined in analysis_jobs).
from dpstudio.ui.analysis_jobs import Analysis
from dpstudio.ui.budget_figures import ProjectBudget
from dpstudio.ui.person_choices import identifier_problem, is_identifier, person_choices
from dpstudio.ui.session_inputs import TypedNumbers
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name
from dpstudio.ui.texts import TRUST_MODELS

__all__ = [
    "DELTA_RANGE",
    "EPS_RANGE",
    "TRUST_MODELS",
    "Analysis",
    "ProjectBudget",
    "Session",
]

#: Queries of a central numeric column that take a missing-value treatment.
MISSING_QUERIES = ("sum", "mean", "variance")

#: What the ε slider and the δ spin box offer, and where the session clamps what they set:
#: the shown ranges of the engine's one declaration of ε and δ.
EPS_RANGE = EPSILON.shown_range
DELTA_RANGE = DELTA.shown_range


def _column_kind(spec: ColumnSpec) -> str:
    """'numeric', 'categorical', 'boolean' or 'text' (text: local heavy hitters only)."""
    return spec.type.value


class Session(QObject, TypedNumbers):
    """The analyst's choices for one dataset; emits :attr:`changed` with the aspect name.

    Aspects: dataset, column, trust_model, query, query_params, mechanism, params, epsilon,
    delta, relation, confidence, compositions, metric, hide_true, budget, missing, input.

    ``refused`` holds the numbers typed that cannot be used, as typed, with the engine's
    sentence saying why (keys ``"epsilon"``, ``"delta"``, ``"params.NAME"``,
    ``"query_params.NAME"``): the last valid value stays in force but nothing is computed
    or released until a valid one replaces it (:meth:`problem`). Aspect ``input``: a
    refusal came or went.

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
        #: The column's problem is a declaration not yet made (in whole or in part), not
        #: values that cannot be read: the plots then wait rather than repeat it.
        self.awaiting_declaration = False
        self.trust_model = "central"
        self.query = "mean"
        self.mechanism = ""
        self.params: dict[str, Any] = {}
        self.query_params: dict[str, Any] = {"bins": 10, "quantile": 0.9}
        self.epsilon = float(EPSILON.default)
        self.delta = float(DELTA.default)
        self.relation = "add-remove"
        self.confidence = 0.95
        self.compositions = 10
        self.metric = "rmse"
        self.hide_true = False
        self.total_epsilon = 3.0
        self.total_delta = 1e-5
        self.project_budget: ProjectBudget | None = None
        #: Central sum/mean/variance: "drop" or "impute" missing values; ``impute_text`` is
        #: the constant as typed ("" = the middle of the declared bounds).
        self.missing = "drop"
        self.impute_text = ""
        self.refused: dict[str, tuple[str, str]] = {}

    # -- dataset and column ----------------------------------------------------------

    def set_dataset(self, dataset: Dataset | None) -> None:
        self.dataset = dataset
        self.schema = None if dataset is None else dataset.schema
        self.column = self.spec = self.values = None
        self.value_types = ()
        self.column_problem = None
        self.awaiting_declaration = False
        self._forget("params.", "query_params.")
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
                   # Exactly as remembered (ε = 0.005 typed stays 0.005 next time).
                   ("epsilon", self.use_epsilon), ("delta", self.use_delta),
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
        # An identifier names people: it bounds releases, it is never released itself.
        return [c for c in self.schema if not is_identifier(c)]

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
        self._forget("query_params.")
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
        # A bound typed while the other is missing changes no spec, only what the column
        # lacks: the column's problem is re-read then too, or it keeps the old sentence.
        lacked = None if self.schema is None or self.column is None else (
            self.schema.missing(self.column))
        self.schema = schema
        names = {spec.name for spec in self.analysable_columns()}
        if self.column not in names:
            column = self.default_column()
            if column is None:
                self.column = self.spec = self.values = None
                self.changed.emit("column")
                return
            self._load_column(column)
        elif schema[self.column] != before or schema.missing(self.column) != lacked:
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

    def _load_column(self, name: str) -> None:
        assert self.dataset is not None and self.schema is not None
        spec = self.schema[name]
        self.column, self.spec = name, spec
        self.column_problem = None
        self.awaiting_declaration = False
        kind = _column_kind(spec)
        shown = elide_name(name, PHRASE_CHARS)  # a name can be 100,000 characters long
        try:
            self.values = column_values(self.dataset.frame, spec)
        except DataError as exc:
            self.values, self.value_types = None, ()
            self.column_problem = str(exc)
            return
        if kind in ("categorical", "boolean"):
            # Read-only: the engine then encodes its categories once, in the first job that
            # needs them, and every later job of this column reuses the codes.
            self.values.flags.writeable = False
        self.value_types = registry_value_types(kind, self.values)
        missing = self.schema.missing(name)
        # Said beside the column (Columns panel, the Analysis panel's Declared row, its
        # banner); the plots only wait for it (see :attr:`awaiting_declaration`).
        self.awaiting_declaration = bool(missing) or (
            kind == "numeric" and spec.bounds is None) or (
            kind == "categorical" and not spec.categories)
        if missing:  # declared in part: say exactly what is missing, once
            self.column_problem = f"{shown}: {missing}"
        elif kind == "numeric" and spec.bounds is None:
            self.column_problem = (f"declare public bounds for '{shown}' (Columns panel or "
                                   "schema file): sensitivity comes from them, never from "
                                   "the data")
        elif kind == "categorical" and not spec.categories:
            self.column_problem = (f"declare the categories of '{shown}' (Columns panel or "
                                   "schema file): they are public, never read from the data")

    @property
    def lacks(self) -> str | None:
        """What the column's declaration still lacks ("upper bound missing"), if the
        analyst has declared it in part."""
        if self.schema is None or self.column is None:
            return None
        return self.schema.missing(self.column)

    @property
    def column_kind(self) -> str | None:
        return None if self.spec is None else _column_kind(self.spec)

    # -- missing values (central sums, means, variances) ---------------------------------

    @property
    def missing_applies(self) -> bool:
        """Whether the missing-value treatment applies: a central sum, mean or variance."""
        return ("missing" in capability(self.trust_model).options
                and self.query in MISSING_QUERIES
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

    #: (a weak reference to the column read, its n): :attr:`n` counted once per column.
    _n_of: tuple[weakref.ref, int] | None = None

    @property
    def n(self) -> int:
        """Non-missing values in the column, counted once per column read (the views ask
        for it on every redraw)."""
        v = self.values
        if v is None:
            return 0
        known = self._n_of
        # Keyed by the array itself (a new column, dataset or declaration reads a new one);
        # a weak reference, so a column no longer shown is not kept alive for this.
        if known is not None and known[0]() is v:
            return known[1]
        if v.dtype.kind == "f":
            n = int(np.count_nonzero(np.isfinite(v)))
        else:
            n = int(np.count_nonzero(np.not_equal(v, None)))
        self._n_of = (weakref.ref(v), n)
        return n

    # -- what is offered ---------------------------------------------------------------

    def queries(self) -> tuple[str, ...]:
        return QUERIES_BY_TYPE.get(self.column_kind or "", ())

    def mechanisms(self, trust_model: str | None = None, query: str | None = None
                   ) -> list[MechanismInfo]:
        if not self.value_types:
            return []
        query = query or self.query
        return mechanisms_for(trust_model or self.trust_model, self.value_types, query,
                              self.cells(query))

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
        # Or the trust model's releases all take δ (a local randomizer shuffled).
        info = self.info
        return bool(info and (info.needs_delta or capability(self.trust_model).needs_delta))

    def _settle(self, prefer_query: str | None) -> None:
        """Make trust model, query, mechanism and metric valid for the column (cascade)."""
        if not self.queries():
            return
        if not self.trust_model_available(self.trust_model):
            # The first model with a mechanism for this column (text: local only).
            self.trust_model = next((tm for tm in VIEW_TRUST_MODELS
                                     if self.trust_model_available(tm)), "central")
        queries = [q for q in self.queries() if self.query_available(q)]
        wanted = prefer_query or self.query
        if wanted not in queries:
            wanted = queries[0] if queries else self.queries()[0]
        if wanted != self.query:
            self._forget("query_params.")
        self.query = wanted
        names = [m.name for m in self.mechanisms()]
        if self.mechanism not in names:
            self._set_mechanism_quiet(names[0] if names else "")
        if self.metric not in self.metrics():
            self.metric = "rmse"

    def _set_mechanism_quiet(self, name: str) -> None:
        self.mechanism = name
        self.params = {}
        self._forget("params.")  # the form is rebuilt for the new mechanism's parameters
        if name:
            info = next(i for i in self.mechanisms() if i.name == name)
            self.params = {p.name: p.default for p in info.params
                           if p.name not in ("epsilon", "delta")}

    # -- setters -------------------------------------------------------------------------

    def set_trust_model(self, trust_model: str) -> None:
        if trust_model == self.trust_model or trust_model not in VIEW_TRUST_MODELS:
            return
        self.trust_model = trust_model
        queries = [q for q in self.queries() if self.query_available(q)]
        if self.query not in queries and queries:
            self.query = queries[0]
            self._forget("query_params.")
        names = [m.name for m in self.mechanisms()]
        self._set_mechanism_quiet(names[0] if names else "")
        if self.metric not in self.metrics():
            self.metric = "rmse"
        self.changed.emit("trust_model")

    def set_query(self, query: str) -> None:
        if query == self.query or query not in self.queries():
            return
        self.query = query
        self._forget("query_params.")
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
        cleared = self._accept(f"params.{name}")
        if self.params.get(name) == value and not cleared:
            return
        self.params[name] = value
        self.changed.emit("params")

    def set_query_param(self, name: str, value: Any) -> None:
        cleared = self._accept(f"query_params.{name}")
        if self.query_params.get(name) == value and not cleared:
            return
        self.query_params[name] = value
        self._settle(prefer_query=self.query)
        self.changed.emit("query_params")

    def set_epsilon(self, epsilon: float) -> None:
        """ε from the slider or a program, within the slider's range (clamped to it)."""
        self._put_epsilon(float(min(max(float(epsilon), EPS_RANGE[0]), EPS_RANGE[1])))

    def _put_epsilon(self, eps: float) -> None:
        cleared = self._accept("epsilon")
        if math.isclose(eps, self.epsilon, rel_tol=1e-12):
            if cleared:
                self.changed.emit("input")
            return
        self.epsilon = eps
        self.epsilon_changed.emit(eps)
        # A refusal gone: everything that showed it refreshes, not only the ε hot path.
        self.changed.emit("input" if cleared else "epsilon")

    def set_delta(self, delta: float) -> None:
        """δ from a program, within the δ box's range (clamped to it)."""
        self._put_delta(float(min(max(float(delta), DELTA_RANGE[0]), DELTA_RANGE[1])))

    def _put_delta(self, d: float) -> None:
        cleared = self._accept("delta")
        if math.isclose(d, self.delta, rel_tol=1e-12):
            if cleared:
                self.changed.emit("input")
            return
        self.delta = d
        self.changed.emit("delta")
        if cleared:
            self.changed.emit("input")

    def set_budget(self, epsilon: float, delta: float | None = None) -> None:
        """Set this release's ε (and δ) at once, e.g. from the sensitivity questionnaire."""
        if delta is not None:
            self.set_delta(delta)
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
        return (self.input_problem() or self.missing_problem()
                or identifier_problem(self))

    def settings(self) -> Choices | None:
        """A hashable snapshot for the jobs, or None when nothing can be computed."""
        if self.problem() is not None or self.spec is None:
            return None
        spec = self.spec
        return person_choices(self, Choices(
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
        ))  # user-level where the schema declares an identifier (ui/person_choices.py)

