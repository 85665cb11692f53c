"""Run an analysis: the one place that turns an :class:`AnalysisSpec` into an engine call.

Each trust model (and models) has one runner below, over the engine's own calling
convention; every runner returns the same :class:`~dpstudio.analysis.result.AnalysisResult`.
The sum protocols (shuffle, secure aggregation) also have a data-free plan
(:func:`plan`), which the utility curves and the secure-aggregation preview read, and say
whether a simulated run is quick enough for a live preview (:func:`quick_to_simulate`).
Adding a trust model means adding its engine function and one runner here.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.result import AnalysisResult
from dpstudio.engine.rng import SimulationSource, Source

__all__ = [
    "QUICK_MESSAGES",
    "plan",
    "planned_trust_models",
    "quick_to_simulate",
    "run",
    "runnable_trust_models",
]


def run(analysis: AnalysisSpec, values: Any, source: Source, *,
        notes: Sequence[str] = (), state: Any = None, ids: Any = None) -> AnalysisResult:
    """Run one analysis on the column's values and return its result.

    Parameters
    ----------
    analysis : AnalysisSpec
        A resolved analysis (bounds and categories declared; see
        :func:`dpstudio.analysis.resolve`).
    values : array or model input
        The column's values as the data layer reads them (floats with NaN for missing,
        or labels with None); for a model, an object with ``columns`` (label and feature
        arrays, missing features already at the middle of their bounds) and ``imputed``.
    source : Source
        Where the noise comes from: :class:`~dpstudio.engine.rng.SecureSource` for a
        release, :class:`~dpstudio.engine.rng.SimulationSource` for a simulation (the
        result then says so).
    notes : sequence of str
        Notes from resolution, shown before the engine's own.
    state : State, optional
        Progress and cancel (:mod:`dpstudio.jobs`) for the long runs: a local protocol,
        secure aggregation's masking, a training run and its audit. A cancelled run
        raises :class:`~dpstudio.jobs.Cancelled` and returns nothing.
    ids : array, optional
        A user-level analysis (``analysis.identifier``): each row's identifier; each
        person's rows beyond ``max_rows`` are dropped at random before anything else.

    Returns
    -------
    AnalysisResult

    Raises
    ------
    EngineError
        (QueryError, ParameterError, …) in one line, before any noise is drawn, for an
        analysis the engine cannot run.
    """
    if analysis.identifier is not None:
        from dpstudio.analysis.contribution import run_user_level

        return run_user_level(analysis, values, ids, source, list(notes))
    from dpstudio.analysis.shuffled_local import is_shuffled_histogram, run_shuffled_histogram

    if is_shuffled_histogram(analysis.kind, analysis.query.query):  # a local oracle shuffled
        return run_shuffled_histogram(analysis, values, source, list(notes), state)
    runner = _RUNNERS.get(analysis.kind)
    if runner is None:
        from dpstudio.engine.errors import QueryError

        raise QueryError(f"no {analysis.trust_model}-model analysis of a "
                         f"{analysis.query.query} yet")
    return runner(analysis, values, source, list(notes), state)


def _split_analyst(fields: dict[str, Any]) -> dict[str, Any]:
    """Move the analyst-only counts (clamped, missing, of which ±inf) out of ``fields``."""
    extra = {"clamped": fields.pop("clamped", 0)}
    if "missing_count" in fields:
        extra["missing"] = fields.pop("missing_count")
    if "non_finite_count" in fields:
        extra["non_finite"] = fields.pop("non_finite_count")
    return extra


def _central(a: AnalysisSpec, values: np.ndarray, source: Source, notes: list[str],
             state: Any = None) -> AnalysisResult:
    # One vectorized pass: quick at any size the process holds, so no progress to report.
    from dpstudio.engine.queries import release, run_query

    # A release insists on the OS CSPRNG; only a simulation may use a seeded generator.
    draw = run_query if isinstance(source, SimulationSource) else release
    result = draw(values, a.query, source)
    result.notes = notes + list(result.notes)
    fields = result.to_dict()
    analyst = _split_analyst(fields)
    fields["trust_model"] = "central"
    return AnalysisResult(a, result, fields, analyst, source_label=source.label)


def _local(a: AnalysisSpec, values: Any, source: Source, notes: list[str],
           state: Any = None) -> AnalysisResult:
    from dpstudio.engine.local import run_local

    q = a.query
    result = run_local(values, q.mechanism, q.mechanism_params(), query=q.query,
                       categories=q.categories,
                       bounds=q.bounds if q.query == "mean" else None, source=source,
                       postprocess=a.postprocess, confidence=q.confidence, state=state)
    # Every row sends a report, so n is the number of rows; how many were missing is the
    # analyst's alone.
    fields = result.to_dict() | {"missing_count": result.missing}
    analyst = _split_analyst(fields)
    fields["column"] = q.column
    fields["notes"] = notes + list(fields.get("notes", []))
    return AnalysisResult(a, result, fields, analyst, records=result.records,
                          source_label=source.label)


class _SumProtocol:
    """A trust model's sum (or mean) protocol: its engine runner and data-free planner.

    Attributes
    ----------
    module : str
        The engine module holding both functions (imported when first used: the engine's
        protocol modules are heavy, and most analyses never touch them).
    runner, planner : str
        Names of the simulation on a column and of the plan for n clients.
    quick : bool
        Whether a simulated run is quick enough to rerun on every change of a live
        preview (secure aggregation's pairwise masking costs seconds per thousand
        clients: its preview is drawn from the plan instead).
    extra : tuple of str
        :class:`AnalysisSpec` fields passed on by name (``dropouts``).
    takes_state : bool
        Whether the runner reports progress and answers cancel (a ``state`` argument).
    """

    def __init__(self, module: str, runner: str, planner: str, *, quick: bool,
                 extra: tuple[str, ...] = (), takes_state: bool = False) -> None:
        self.module, self.runner, self.planner = module, runner, planner
        self.quick, self.extra, self.takes_state = quick, extra, takes_state

    def _engine(self, name: str) -> Callable[..., Any]:
        return getattr(importlib.import_module(self.module), name)

    def _kwargs(self, a: AnalysisSpec) -> dict[str, Any]:
        """Keyword arguments of both engine functions: the query, the protocol's own
        options, the entry's parameters and the confidence of the error bound."""
        from dpstudio.engine.errors import QueryError

        q = a.query
        if q.bounds is None:
            from dpstudio.analysis.capabilities import capability

            raise QueryError(f"a {capability(a.trust_model).title} sum needs declared bounds "
                             "(e.g. --bounds 0,100)")
        kwargs = {name: getattr(a, name) for name in self.extra}
        return dict(query=q.query, **kwargs, **dict(q.params, confidence=q.confidence))

    def __call__(self, a: AnalysisSpec, values: Any, source: Source, notes: list[str],
                 state: Any = None) -> AnalysisResult:
        q = a.query
        kwargs = self._kwargs(a)
        if state is not None and self.takes_state:
            kwargs["state"] = state
        result = self._engine(self.runner)(values, q.bounds, q.mechanism, q.epsilon, q.delta,
                                           source, **kwargs)
        fields = result.to_dict()
        analyst = _split_analyst(fields)
        fields.update(trust_model=a.trust_model, column=q.column,
                      notes=notes + list(fields.get("notes", [])))
        return AnalysisResult(a, result, fields, analyst, source_label=source.label)

    def plan(self, a: AnalysisSpec, n: int) -> Any:
        q = a.query
        kwargs = self._kwargs(a)
        key = (self.planner, int(n), tuple(q.bounds), q.mechanism, float(q.epsilon),
               float(q.delta), tuple(sorted(kwargs.items())))
        try:
            hash(key)
        except TypeError:  # a parameter value that cannot key the cache: plan afresh
            return self._plan(*key[:-1], kwargs)
        return _cached_plan(self, key)

    def _plan(self, planner: str, n: int, bounds: tuple[float, float], mechanism: str,
              epsilon: float, delta: float, kwargs: dict[str, Any]) -> Any:
        return self._engine(planner)(n, bounds, mechanism, epsilon, delta, **kwargs)


@functools.lru_cache(maxsize=2048)
def _cached_plan(protocol: _SumProtocol, key: tuple) -> Any:
    """Plans are data-free and some take a second (noise calibration): computed once.

    The utility curves ask for one per ε and the preview for one per change of a slider.
    """
    *args, kwargs = key
    return protocol._plan(*args, dict(kwargs))


def _model(a: AnalysisSpec, model: Any, source: Source, notes: list[str],
           state: Any = None) -> AnalysisResult:
    """A model: ``query.column`` is the label, ``features`` the features.

    A training run (``a.training``: any model and method, a held-out split, metrics) goes
    to :func:`~dpstudio.analysis.training.run_training`; otherwise the release of DP
    logistic regression by output perturbation.
    """
    if a.training is not None:
        from dpstudio.analysis.training import run_training

        return run_training(a, model, source, notes, state)
    from dpstudio.engine.learning import release_logistic, simulate_logistic

    q = a.query
    lam = a.info.resolve(q.mechanism_params())["lambda"]
    fit = simulate_logistic if isinstance(source, SimulationSource) else release_logistic
    result = fit(model.columns, q.column, list(a.features or ()), dict(a.feature_bounds or {}),
                 q.epsilon, q.delta, lam, source)
    fields = result.to_dict()
    fields.update(trust_model="central", query=q.query, label=q.column, relation=q.relation,
                  source=source.label)
    fields["notes"] = notes or ["neighbours differ in one record (replace-one, n public); "
                                "missing feature values set to the middle of their declared "
                                "bounds"]
    analyst = {"imputed_feature_values": model.imputed, **result.utility}
    fields.pop("utility", None)
    return AnalysisResult(a, result, fields, analyst, source_label=source.label)


_RUNNERS: dict[str, Callable[[AnalysisSpec, Any, Source, list[str], Any], AnalysisResult]] = {
    "central": _central,
    "local": _local,
    "shuffle": _SumProtocol("dpstudio.engine.shuffle", "run_shuffle_sum", "plan_shuffle_sum",
                            quick=True),
    "distributed": _SumProtocol("dpstudio.engine.distributed", "run_secure_sum",
                                "plan_secure_sum", quick=False, extra=("dropouts",),
                                takes_state=True),
    "model": _model,
}


def runnable_trust_models() -> tuple[str, ...]:
    """Trust models an analysis can run under (a statistic), in the table's order."""
    from dpstudio.engine.trust_models import TRUST_MODELS

    return tuple(t for t in TRUST_MODELS if t in _RUNNERS)


def planned_trust_models() -> tuple[str, ...]:
    """Trust models whose releases also have a data-free plan (:func:`plan`), in the
    table's order.

    Returns
    -------
    tuple of str
        The sum protocols' trust models (shuffle, secure aggregation): their error is
        planned before any data is seen, so their utility curves come from plans.
    """
    from dpstudio.engine.trust_models import TRUST_MODELS

    return tuple(t for t in TRUST_MODELS if isinstance(_RUNNERS.get(t), _SumProtocol))


#: Messages a live preview may run a quick protocol on. The shuffle's encoding and shuffling
#: cost about 0.23 µs a message (measured: the cloak's 20,000 people × 121 messages in
#: 0.55 s, 1M people × 136 in about 40 s), so two million keep a preview near half a second.
QUICK_MESSAGES = 2_000_000


def quick_to_simulate(trust_model: str, n: int | None = None,
                      messages_per_row: int = 1) -> bool:
    """Whether a simulated run under this trust model is quick enough for a live preview.

    Parameters
    ----------
    trust_model : str
        A trust model's name.
    n : int, optional
        Rows of the column (each one a client); None: judge the protocol alone.
    messages_per_row : int
        Messages each client sends (the plan's ``messages_per_user``): the run's cost
        grows with n × messages.

    Returns
    -------
    bool
        False for a protocol whose simulation costs seconds (secure aggregation's
        pairwise masking), and for a quick one above :data:`QUICK_MESSAGES` messages: a
        preview then draws from its :func:`plan` instead. True otherwise, including for
        trust models without a runner (nothing to plan either).
    """
    runner = _RUNNERS.get(trust_model)
    if not isinstance(runner, _SumProtocol):
        return True
    if not runner.quick:
        return False
    return n is None or int(n) * max(1, int(messages_per_row)) <= QUICK_MESSAGES


def plan(analysis: AnalysisSpec, n: int) -> Any:
    """The data-free plan of a sum protocol for ``n`` clients: its figures without data.

    Plans are cached (they are data-free, and calibrating the noise may take a second).

    Parameters
    ----------
    analysis : AnalysisSpec
        A shuffle or secure-aggregation sum or mean (see :func:`planned_trust_models`).
    n : int
        Clients taking part (every row of the column is one).

    Returns
    -------
    ShuffleResult, SecureSumResult or ShuffledLocalResult
        The engine's report with ``value`` None (a shuffled histogram: ``estimate`` None):
        ``stderr``, ``error_bound``, the ``epsilon`` and ``delta`` met, the protocol's
        notes.

    Raises
    ------
    QueryError
        For a trust model without a data-free plan, or a sum without declared bounds.
    EngineError
        When no noise meets the guarantee (e.g. too few clients).
    """
    from dpstudio.analysis.shuffled_local import is_shuffled_histogram, plan_shuffled_histogram

    if is_shuffled_histogram(analysis.kind, analysis.query.query):
        return plan_shuffled_histogram(analysis, n)
    protocol = _RUNNERS.get(analysis.kind)
    if not isinstance(protocol, _SumProtocol):
        from dpstudio.engine.errors import QueryError

        raise QueryError(f"no data-free plan of a {analysis.trust_model}-model "
                         f"{analysis.query.query}")
    return protocol.plan(analysis, n)
