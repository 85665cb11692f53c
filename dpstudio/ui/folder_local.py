"""The numbers the analysis view shows of a folder under the local model (issue 16).

Every row of every file is randomized where it is and only the reports' integer tallies
come back (:func:`dpstudio.execution.run.run_on_files`); the estimator runs once here.
Nothing else reads the data:

- :func:`local_job`: the preview, one simulated local release over all rows at the chosen
  ε (seeded: each file's reports from its own spawned seed). It is the expensive pass —
  a new ε or another draw is another pass; a change of display reuses it.
- :func:`local_utility`: the estimator's analytic standard error against ε at n = the
  folder's rows, from the randomizer's exact variance for n reports, without data (a
  histogram's RMSE over its cells depends on the counts only through their total n in
  a pure protocol; a mean's variance at its upper bound): the noise alone, the clamping
  bias is not measured on a folder.
- :func:`local_montecarlo` (only when asked): the spread of several simulated releases
  at each ε, one pass over every file each.

The truth is never read: under the local model the collector has only the reports.
Everything here is for the analyst's eyes and seeded (simulations, never releases).

Qt-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpstudio.analysis import AnalysisSpec
from dpstudio.analysis.capabilities import partitioned
from dpstudio.analysis.choices import LINE_EPSILONS, Choices, build_randomizer, fixed_epsilon
from dpstudio.analysis.curves import Curve, Preview, UtilityResult, curve_name, metric_label
from dpstudio.analysis.footing import assumptions, caption
from dpstudio.analysis.partitioned import partition_kind
from dpstudio.data.errors import DataError
from dpstudio.engine.errors import EngineError, QueryError
from dpstudio.engine.rng import SimulationSource
from dpstudio.jobs import check, scaled
from dpstudio.ui.folder_open import BIAS_NOT_MEASURED

__all__ = ["LOCAL_MC_RUNS", "LocalRun", "is_local_choice", "local_job", "local_key",
           "local_montecarlo", "local_utility"]

#: Simulated releases per ε of the Monte-Carlo on a folder (each one pass over every file).
LOCAL_MC_RUNS = 10
#: What the preview says instead of the truth: the collector never has it.
NO_TRUTH = ("the true values are not read on a folder under the local model: only the "
            "randomized reports' tallies come back from the files")


@dataclass
class LocalRun:
    """One simulated local release over every row of a folder.

    Attributes
    ----------
    key : tuple
        :func:`local_key` of the choices and seed.
    preview : Preview
        The release as the result panel shows it (no truth: see :data:`NO_TRUTH`).
    n : int
        Reports (rows: every row sends one).
    execution : dict
        ``engine`` and, on Dask, the cluster (as the manifest's ``execution``).
    """

    key: tuple
    preview: Preview
    n: int
    execution: dict[str, Any] = field(default_factory=dict)


def _analysis(s: Choices) -> AnalysisSpec:
    return AnalysisSpec(s.trust_model, s.spec())


def is_local_choice(s: Choices) -> bool:
    """Whether ``s`` runs on a folder as a local randomizer (reports tallied per file)."""
    analysis = _analysis(s)
    return partitioned(analysis) and partition_kind(analysis) == "reports"


def local_key(s: Choices, seed: int) -> tuple:
    """What a simulated local run depends on: the choices but the metric, ε, the seed."""
    return (replace(s, metric="rmse").utility_key(), float(s.epsilon), float(s.delta),
            float(s.confidence), int(seed))


def local_job(s: Choices, files: Any, declared: Any, engine: str, scheduler: str,
              header: bool = True, seed: int = 1, state: Any = None) -> LocalRun:
    """The job: one simulated local release over every file (progress per file, cancel).

    On Dask (:func:`~dpstudio.execution.run.run_on_files`), or file by file in this
    process with the same per-file seeds (the same tallies, bit for bit).

    Raises :class:`QueryError` with the execution layer's one sentence for what cannot run.
    """
    from dpstudio.execution.engines import choose_engine
    from dpstudio.ui.folder_numbers import folder_refusal

    refused = folder_refusal(s)
    if refused is not None:
        raise QueryError(refused)
    analysis = _analysis(s)
    source = SimulationSource(seed)
    try:
        if choose_engine(engine, files.total_bytes) == "dask":
            from dpstudio.execution.run import run_on_files

            run = run_on_files(analysis, files, source, scheduler=scheduler or None,
                               declared=declared, header=header, seed=seed, state=state)
            result, execution = run.result, run.execution
        else:
            result, execution = _in_process(analysis, files, source, declared, header,
                                            seed, state)
    except DataError as exc:  # ExecutionError included: one sentence, nothing lost
        raise QueryError(str(exc)) from None
    return LocalRun(local_key(s, seed), _preview(s, result.engine, seed, execution),
                    int(result.engine.n), dict(execution))


def _in_process(analysis: AnalysisSpec, files: Any, source: SimulationSource,
                declared: Any, header: bool, seed: int, state: Any) -> tuple[Any, dict]:
    """run_on_files's local path without a cluster (the Execution setting "pandas"): the
    same plan from the same source, the same per-file seeds, the same estimator."""
    from dpstudio.analysis.partitioned import partition_protocol
    from dpstudio.execution.local_partitions import local_on_files
    from dpstudio.execution.run import reader_of

    reader = reader_of(analysis, declared)
    protocol = partition_protocol(analysis, reader, source)
    total, _ = local_on_files(files, analysis.query.column, reader, protocol.plan,
                              header=header, seed=seed, state=state)
    return (protocol.finish(total, protocol.plan, source),
            {"engine": "pandas", "partitions": len(files.files)})


def _preview(s: Choices, res: Any, seed: int, execution: dict) -> Preview:
    if isinstance(res.unbiased, dict):
        labels = list(res.unbiased)  # the declared cells, then "other or missing"
        value = np.array([res.unbiased[c] for c in labels])
        low = np.array([res.ci_low[c] for c in labels])
        high = np.array([res.ci_high[c] for c in labels])
    else:
        labels = None
        value, low, high = (np.array([v]) for v in (res.unbiased, res.ci_low, res.ci_high))
    notes = [f"simulated over all {res.n:,} rows ({_where(execution)}): each row "
             "randomized where it is, only the reports' tallies came back; "
             f"n = {res.n:,}", NO_TRUTH]
    return Preview(s.query, s.mechanism, s.trust_model, res.epsilon, res.delta, labels,
                   value, low, high, np.full(value.shape, np.nan), s.confidence,
                   "simulation (seeded)", seed, clamped=int(res.clamped),
                   notes=notes + list(res.notes), n=int(res.n))


def _where(execution: dict[str, Any]) -> str:
    if execution.get("engine") == "dask":
        workers = int(execution.get("workers", 0))
        return (f"on Dask, {execution.get('partitions', 0)} files, "
                f"{workers} worker{'s' * (workers != 1)}")
    return f"file by file in this process, {execution.get('partitions', 0)} files"


def _standard_errors(s: Choices, epsilon: float, n: int) -> np.ndarray:
    """Each estimate's standard deviation for n reports, from no data (see the module).

    A histogram's cells as if held equally (n/k each): every row sends one report, so
    the counts add up to n, and each count's variance is linear in the counts with the
    same weight for every cell in a pure protocol — their mean, the RMSE's square, is
    then exact whatever the counts (a sum of their square roots, the total variation's,
    at its largest)."""
    obj = build_randomizer(s, epsilon)
    k = getattr(obj, "k", None)
    var = obj.variance(n, np.full(int(k), n / k)) if k else obj.variance(n)
    return np.sqrt(np.maximum(np.atleast_1d(np.asarray(var, dtype=np.float64)), 0.0))


def _metric(sd: np.ndarray, n: int, s: Choices) -> float:
    """The error of an unbiased estimate with standard deviations ``sd`` in the metric.

    A histogram's counts add up to n (the "other or missing" cell holds the rest), so its
    total variation and relative error need no data; a mean's relative error would need
    the mean (NaN)."""
    if s.metric == "tv":
        return float(0.5 * np.sum(sd) * math.sqrt(2 / math.pi) / max(n, 1))
    rmse = math.sqrt(float(np.mean(sd**2)))
    if s.metric == "relative":
        return rmse / (n / sd.size) if sd.size > 1 and n else math.nan
    return rmse


def local_utility(s: Choices, n: int, epsilons: np.ndarray | None = None,
                  state: Any = None) -> UtilityResult:
    """Analytic error against ε of a local release over the folder's ``n`` rows: the
    randomizer's exact variance for n reports, read from no data."""
    eps = LINE_EPSILONS if epsilons is None else np.asarray(epsilons, dtype=float)
    err = np.full(eps.size, np.nan)
    for i, e in enumerate(eps):
        check(state)
        try:
            err[i] = _metric(_standard_errors(s, float(e), n), n, s)
        except EngineError:
            continue
    histogram = s.query == "histogram"
    notes = [f"the estimator's standard error at n = {n:,} rows, from the randomizer's "
             "exact variance for n reports, without reading the data ("
             + ("over the cells it depends on the counts only through their total, n"
                if histogram else "an upper bound where it depends on the values") + ")",
             f"{BIAS_NOT_MEASURED}: the line is the noise alone",
             "Monte-Carlo on the data only when asked (Simulate on the data: "
             f"{LOCAL_MC_RUNS} passes over every file per ε)"]
    curves = []
    if np.any(np.isfinite(err)):
        curves.append(Curve(curve_name(s.trust_model, s.info.label, "analytic"),
                            s.trust_model, s.mechanism, "analytic", eps.copy(), err,
                            primary=True, assumptions=assumptions(s), bias=None,
                            noise_only=True))
    else:
        notes.append("no error model for this mechanism at n rows")
    return UtilityResult(s.utility_key(), s.metric, metric_label(s), curves, int(n), 0,
                         notes, fixed_epsilon(s), caption(s, curves, False), None)


def local_montecarlo(s: Choices, files: Any, declared: Any, engine: str, scheduler: str,
                     header: bool = True, seed: int = 20240601, runs: int = LOCAL_MC_RUNS,
                     epsilons: np.ndarray | None = None, state: Any = None) -> UtilityResult:
    """Simulated error against ε on the data: ``runs`` simulated releases per ε, each
    one pass over every file; the error is their spread (the estimators are unbiased for
    what the rows send, and the truth is never read), ±2 standard errors."""
    from dpstudio.ui.folder_numbers import FOLDER_MC_EPSILONS

    eps = FOLDER_MC_EPSILONS if epsilons is None else np.asarray(epsilons, dtype=float)
    points = np.full((eps.size, 3), np.nan)
    n, execution = 0, {}
    steps = eps.size * runs
    for i, e in enumerate(eps):
        si = replace(s, epsilon=float(e))
        draws = []
        for j in range(runs):
            check(state)
            k = i * runs + j
            run = local_job(si, files, declared, engine, scheduler, header,
                            seed + k, state=scaled(state, k / steps, (k + 1) / steps))
            draws.append(run.preview.value)
            n, execution = run.n, run.execution
        points[i] = _spread(np.stack(draws), n, s)
    curve = Curve(curve_name(s.trust_model, s.info.label, "simulated"), s.trust_model,
                  s.mechanism, "simulation", eps.copy(), points[:, 0], points[:, 1],
                  points[:, 2])
    notes = [f"simulation on the data: {runs} simulated releases per ε, each one pass over "
             f"every file ({_where(execution)}), seeded; the error is their spread"]
    return UtilityResult(s.utility_key(), s.metric, metric_label(s), [curve], int(n), runs,
                         notes, fixed_epsilon(s), caption(s, [curve], False), None)


def _spread(draws: np.ndarray, n: int, s: Choices) -> tuple[float, float, float]:
    """(point, low, high) of the metric from the estimates' sample variance per cell;
    the interval ±2 standard errors of the variance (normal approximation)."""
    r = draws.shape[0]
    var = draws.var(axis=0, ddof=1)
    f = 2 * math.sqrt(2 / (r - 1))  # a normal sample variance's relative standard error
    points = []
    for v in (var, var * (1 - f), var * (1 + f)):
        points.append(_metric(np.sqrt(np.maximum(v, 0.0)), n, s))
    return points[0], points[1], points[2]
