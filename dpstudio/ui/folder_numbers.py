"""The numbers the analysis view shows of a folder, from the exact aggregates of all its rows.

A folder is never loaded: :func:`sums_job` computes a central query's exact integer
aggregates (:class:`~dpstudio.engine.queries.partial.Partial`) over every file with
:func:`dpstudio.execution.run.sum_on_files` — on Dask, or file by file here — with the
worker's progress and cancel. From them, without reading a row again:

- :func:`folder_utility`: the analytic error against ε (the engine's noise at each ε; a
  mean's or variance's by the delta method at the true sums);
- :func:`folder_preview`: one simulated release at the chosen ε, its noise scale, interval
  and n, beside the statistic of the clamped values;
- :func:`folder_montecarlo` (only when the analyst asks: one pass over the data per ε):
  simulated releases on the data.

The clamping bias needs the unclamped sums, which the aggregates do not hold: where a value
was clamped (or a missing one imputed) the readout says "bias not measured on a folder".
Everything here is for the analyst's eyes and seeded (simulations, never releases).

Qt-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpstudio.analysis import AnalysisSpec
from dpstudio.analysis.choices import LINE_EPSILONS, MC_EPSILONS, Choices, fixed_epsilon
from dpstudio.analysis.curves import Curve, Preview, UtilityResult, curve_name, metric_label
from dpstudio.analysis.footing import assumptions, caption
from dpstudio.analysis.partitioned import partition_kind
from dpstudio.analysis.sample_error import error_of_samples
from dpstudio.data.errors import DataError
from dpstudio.engine.errors import EngineError, QueryError
from dpstudio.engine.queries import delta_method_variance, noisy_statistics
from dpstudio.engine.queries.partial import Partial, run_partials
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.utility import analytic_curve
from dpstudio.execution.engines import LOCAL_SCHEDULER
from dpstudio.jobs import check, scaled
from dpstudio.ui.folder_open import BIAS_NOT_MEASURED

__all__ = ["FolderSums", "describe_execution", "folder_montecarlo", "folder_preview",
           "folder_refusal", "folder_utility", "sums_job", "sums_key"]

#: ε of the Monte-Carlo points on a folder: each costs one pass over every file.
FOLDER_MC_EPSILONS = MC_EPSILONS[::4]
#: Simulated releases per ε drawn from one pass's aggregates.
FOLDER_MC_REPS = 200
#: What a partition returns for the trust models the application analyses on a folder:
#: the central model's exact sums, a local randomizer's tallies.
FOLDER_KINDS = ("sums", "reports")
#: Queries whose aggregates are counts that do not depend on ε (cells, ranks).
_COUNTED = ("histogram", "quantile", "median")


@dataclass
class FolderSums:
    """A folder's exact aggregates for one analysis, and where they were computed.

    Attributes
    ----------
    key : tuple
        :func:`sums_key` of the choices.
    total : Partial
        The exact integers, at the grid of ``epsilon``.
    epsilon : float
        ε whose grid ``total.sums`` are in (cells do not depend on it).
    units : dict
        Each bounded sum in the values' units (steps × grid): the clamped true sums.
    execution : dict
        ``engine`` and, on Dask, the cluster (as the manifest's ``execution``).
    """

    key: tuple
    total: Partial
    epsilon: float
    units: dict[str, float] = field(default_factory=dict)
    execution: dict[str, Any] = field(default_factory=dict)


def sums_key(s: Choices) -> tuple:
    """What a folder's aggregates depend on: not ε (rescaled), the metric or display."""
    return replace(s, metric="rmse").utility_key()


def folder_refusal(s: Choices) -> str | None:
    """Why a folder cannot be analysed with these choices (one sentence), or None."""
    from dpstudio.execution.run import dask_refusal

    refused = dask_refusal(AnalysisSpec(s.trust_model, s.spec()))
    if refused is not None:  # the execution layer's sentence, without its CLI advice
        return refused.split(";")[0].replace("the dask engine runs",
                                             "on a folder DP Studio runs", 1)
    if partition_kind(AnalysisSpec(s.trust_model, s.spec())) not in FOLDER_KINDS:
        return (f"the application shows a folder's central-model and local-model numbers "
                f"for now, not a {s.trust_model}-model analysis's")
    return None


def describe_execution(execution: dict[str, Any] | None, engine: str = "auto",
                       scheduler: str = "") -> str:
    """The status bar's "Engine: …": of the last run, else of the setting."""
    if not execution:
        where = (f" · scheduler {scheduler}" if scheduler else "") if engine != "pandas" else ""
        return f"Engine: {engine}{where}"
    if execution.get("engine") != "dask":
        return "Engine: pandas"
    sched = execution.get("scheduler", "")
    place = "local cluster" if sched in (LOCAL_SCHEDULER, "", None) else str(sched)
    workers, threads = int(execution.get("workers", 0)), int(execution.get("threads", 0))
    memory = int(execution.get("memory_bytes", 0) or 0)
    text = (f"Engine: Dask · {place}, {workers} worker{'s' * (workers != 1)}, "
            f"{threads} thread{'s' * (threads != 1)}")
    return text + (f", {_gib(memory)}" if memory else "")


def _gib(n: int) -> str:
    gib = n / 2**30
    return f"{gib:.0f} GiB" if gib >= 10 or gib == int(gib) else f"{gib:.1f} GiB"


def sums_job(s: Choices, files: Any, declared: Any, engine: str, scheduler: str,
             header: bool = True, seed: int = 1, state: Any = None) -> FolderSums:
    """The job: the exact aggregates of ``s`` over every file (progress per file, cancel).

    Raises :class:`QueryError` with the execution layer's one sentence for what cannot run
    (a refused analysis, an unreachable scheduler, an unreadable file).
    """
    from dpstudio.execution.engines import choose_engine
    from dpstudio.execution.run import sum_on_files

    refused = folder_refusal(s)
    if refused is not None:
        raise QueryError(refused)
    analysis = AnalysisSpec("central", s.spec())
    try:
        chosen = choose_engine(engine, files.total_bytes)
        sums = sum_on_files(analysis, files, engine=chosen, scheduler=scheduler or None,
                            declared=declared, header=header, seed=seed, state=state)
    except DataError as exc:  # ExecutionError included: one sentence, nothing lost
        raise QueryError(str(exc)) from None
    return _with_units(sums_key(s), sums.total, analysis.query, sums.execution)


def _with_units(key: tuple, total: Partial, spec: Any, execution: dict) -> FolderSums:
    units: dict[str, float] = {}
    if spec.query not in _COUNTED and total.rows:
        grids = _grids(total, spec)
        units = {name: steps * grids[name] for name, steps in total.sums}
    return FolderSums(key, total, float(spec.epsilon), units, dict(execution))


def _family(spec: Any) -> Any:
    from dpstudio.engine.registry import REGISTRY

    info = REGISTRY.get(spec.mechanism)
    return info.build(**info.resolve(spec.mechanism_params()))


def _grids(total: Partial, spec: Any) -> dict[str, float]:
    """Each noisy sum's grid at ``spec``'s ε, as the release chooses it: from the spec
    alone (each of the k sums with ε/k and δ/k)."""
    parts = noisy_statistics(spec)
    k, family = len(parts), _family(spec)
    return {name: float(family.grid(sens, spec.epsilon / k, spec.delta / k))
            for name, _lo, _hi, sens in parts}


def _variances(spec: Any) -> dict[str, float]:
    """Each noisy sum's noise variance at ``spec``'s ε: the engine's analytic error of a
    bounded sum in its bounds with its share ε/k, δ/k of the budget."""
    parts = noisy_statistics(spec)
    k = len(parts)
    out = {}
    for name, lo, hi, _sens in parts:
        part = replace(spec, query="sum", bounds=(lo, hi), epsilon=spec.epsilon / k,
                       delta=spec.delta / k)
        out[name] = float(analytic_curve(part, [part.epsilon], "rmse").error[0]) ** 2
    return out


def _truth(s: Choices, sums: FolderSums) -> np.ndarray:
    """The statistic of the clamped values from the aggregates (analyst only)."""
    t, u = sums.total, sums.units
    if s.query == "histogram":
        return np.asarray(t.cells, dtype=np.float64)
    if s.query == "count":
        return np.array([float(t.rows)])
    if s.query in ("quantile", "median"):
        return np.array([math.nan])  # not a function of the candidates' counts
    c = max(u.get("count", float(t.rows)), 1.0)
    if s.query == "sum":
        return np.array([u["sum"]])
    m = u["sum"] / c
    if s.query == "mean":
        return np.array([m])
    return np.array([u["sum of squares"] / c - m * m])


def _bias_unknown(s: Choices, sums: FolderSums) -> bool:
    t = sums.total
    imputing = s.impute is not None or s.missing == "impute"
    return s.query in ("sum", "mean", "variance") and (t.clamped > 0 or (imputing
                                                                        and t.missing > 0))


def _at(total: Partial, sums: FolderSums, spec: Any) -> Partial:
    """The aggregates at ``spec``'s grid: the same clamped sums, re-expressed in its steps."""
    if spec.query in _COUNTED or math.isclose(spec.epsilon, sums.epsilon, rel_tol=1e-12):
        return total
    grids = _grids(total, spec)
    steps = tuple((name, int(round(sums.units[name] / grids[name]))) for name, _ in total.sums)
    return replace(total, sums=steps)


def _error_at(s: Choices, sums: FolderSums, eps: float, truth: np.ndarray) -> float:
    """The noise's expected error at ``eps`` in the metric's units."""
    spec = s.spec(epsilon=eps)
    if s.query in ("count", "sum", "histogram"):
        metric = "rmse" if s.metric == "relative" else s.metric
        err = float(analytic_curve(spec, [eps], metric).error[0])
        if s.metric == "tv":  # the engine's, per unit of total count
            return err / max(float(sums.total.rows), 1.0)
    else:
        variances = _variances(spec)
        variances.setdefault("count", 0.0)  # n public: an exact count
        true = dict(sums.units)
        true.setdefault("count", float(sums.total.rows))
        err = math.sqrt(delta_method_variance(s.query, true, variances))
    if s.metric == "relative":
        scale = float(np.abs(truth).mean())
        return err / scale if scale else math.inf
    return err


def folder_utility(s: Choices, sums: FolderSums, epsilons: np.ndarray | None = None,
                   state: Any = None) -> UtilityResult:
    """Analytic error against ε of ``s`` on the whole folder, from its aggregates."""
    eps = LINE_EPSILONS if epsilons is None else np.asarray(epsilons, dtype=float)
    notes = [f"from the exact aggregates of all {sums.total.size:,} rows "
             f"({_engine_words(sums.execution)})"]
    curves: list[Curve] = []
    truth = _truth(s, sums)
    if s.query in ("quantile", "median"):
        notes.append("quantiles have no analytic error curve; simulate them on the data")
    elif sums.total.rows and s.info is not None and s.info.kind == "additive":
        err = np.full(eps.size, np.nan)
        for i, e in enumerate(eps):
            check(state)
            try:
                err[i] = _error_at(s, sums, float(e), truth)
            except EngineError:
                continue
        unknown = _bias_unknown(s, sums)
        curves.append(Curve(curve_name("central", s.info.label, "analytic"), "central",
                            s.mechanism, "analytic", eps.copy(), err, primary=True,
                            assumptions=assumptions(s), bias=None, noise_only=unknown))
        if unknown:
            notes.append(f"{BIAS_NOT_MEASURED}: {sums.total.clamped:,} values lie outside "
                         "the declared bounds and are clamped; the line is the noise alone")
    else:
        notes.append("no error model for this mechanism yet")
    notes.append("Monte-Carlo on the data only when asked (Simulate on the data: one "
                 "pass over every file per ε)")
    return UtilityResult(s.utility_key(), s.metric, metric_label(s), curves,
                         int(sums.total.rows), 0, notes, fixed_epsilon(s),
                         caption(s, curves, False), None)


def folder_preview(s: Choices, sums: FolderSums, seed: int = 1, state: Any = None
                   ) -> Preview:
    """One simulated release at the chosen ε from the folder's aggregates, and its truth
    (the clamped values' statistic: the bias, if any, is not measured on a folder)."""
    check(state)
    spec = s.spec()
    rel = run_partials(_at(sums.total, sums, spec), spec, SimulationSource(seed))
    if isinstance(rel.value, dict):
        labels = list(rel.value)
        value = np.array([rel.value[c] for c in labels])
        low = np.array([rel.ci_low[c] for c in labels])
        high = np.array([rel.ci_high[c] for c in labels])
    else:
        labels, value = None, np.array([rel.value])
        low = None if rel.ci_low is None else np.array([rel.ci_low])
        high = None if rel.ci_high is None else np.array([rel.ci_high])
    notes = [f"simulated from the exact aggregates of all {sums.total.size:,} rows "
             f"({_engine_words(sums.execution)}); n = {sums.total.rows:,}"]
    if _bias_unknown(s, sums):
        notes.append(f"{BIAS_NOT_MEASURED}: the truth shown is the statistic of the clamped "
                     f"values ({sums.total.clamped:,} clamped)")
    return Preview(s.query, s.mechanism, "central", s.epsilon, rel.delta, labels, value, low,
                   high, _truth(s, sums), s.confidence, "simulation (seeded)", seed,
                   rel.noise_scale, rel.sensitivity, rel.clamped, notes + list(rel.notes))


def folder_montecarlo(s: Choices, files: Any, declared: Any, engine: str, scheduler: str,
                      header: bool = True, seed: int = 20240601, reps: int = FOLDER_MC_REPS,
                      epsilons: np.ndarray | None = None, state: Any = None) -> UtilityResult:
    """Simulated error against ε on the data: one pass over every file per ε (its own
    rounding), then ``reps`` releases drawn from that pass's aggregates."""
    eps = FOLDER_MC_EPSILONS if epsilons is None else np.asarray(epsilons, dtype=float)
    points = np.full((eps.size, 3), np.nan)
    execution: dict[str, Any] = {}
    for i, e in enumerate(eps):
        check(state)
        si = replace(s, epsilon=float(e))
        part = sums_job(si, files, declared, engine, scheduler, header, seed + i,
                        state=scaled(state, i / eps.size, (i + 1) / eps.size))
        execution = part.execution
        truth = _truth(s, part)
        spec = si.spec()
        draws = np.stack([np.atleast_1d(np.asarray(
            list(r.value.values()) if isinstance(r.value, dict) else r.value, dtype=float))
            for r in (run_partials(part.total, spec, SimulationSource(seed * 1000 + i * reps + j))
                      for j in range(reps))])
        points[i] = error_of_samples(draws, truth, s.metric)
    curve = Curve(curve_name("central", s.info.label, "simulated"), "central", s.mechanism,
                  "simulation", eps.copy(), points[:, 0], points[:, 1], points[:, 2])
    notes = [f"simulation on the data: {reps} simulated releases per ε from the exact "
             f"aggregates of one pass over every file ({_engine_words(execution)}), seeded"]
    return UtilityResult(s.utility_key(), s.metric, metric_label(s), [curve],
                         int(part.total.rows) if eps.size else 0, reps, notes,
                         fixed_epsilon(s), caption(s, [curve], False), None)


def _engine_words(execution: dict[str, Any]) -> str:
    if execution.get("engine") == "dask":
        return (f"on Dask, {execution.get('partitions', 0)} files, "
                f"{execution.get('workers', 0)} workers")
    return f"file by file in this process, {execution.get('partitions', 0)} files"
