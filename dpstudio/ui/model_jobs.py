"""The Models tab's computation: every ticked way of training against ε, in a worker.

One job (:func:`compare_job`) trains each ticked variant (central methods, FedAvg's privacy
variants; :mod:`~dpstudio.ui.model_variants`) at each ε of a short grid and at the form's
ε, R times with seeded noise (a simulation: nothing is released or charged), through the
analysis layer's training run — its ``runs`` give the spread (mean, sd, min, max) and its
``sites_alone`` each site trained alone, as ``dpstudio train --runs R --sites-alone``. The
non-private model's metric comes with every run (its ``baseline``). Finished points are
cached by everything that decides them (all seeded), so moving ε retrains only at the new
ε, and a cancelled job's finished points are kept. :class:`ModelJobs` submits on the app's
:class:`~dpstudio.ui.worker.JobRunner`: a newer request cancels the older one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import QObject, Signal

from dpstudio.ui.worker import JobRunner

__all__ = ["EPSILON_GRID", "CompareResult", "ModelJobs", "ModelRequest", "compare_job",
           "variant_request"]

#: The ε values of the privacy–utility curves: 4 points per variant, plus the form's ε
#: (up to 3: DP-SGD's accountant takes seconds to calibrate σ at larger ε, in each run).
EPSILON_GRID = (0.1, 0.3, 1.0, 3.0)
#: The seed of the simulated noise (shown as "simulation · seed N").
SEED = 1
#: Cached points kept at most (each a few numbers; cleared beyond).
_CACHE_MAX = 2000


@dataclass(frozen=True)
class ModelRequest:
    """What the form describes: one training run (``method``, ``fed_variant``), the
    variants it compares (``variants``, keys of :mod:`~dpstudio.ui.model_variants`), the
    repetitions per point (``runs``) and the ε grid to sweep. ``params`` holds ε, δ (0:
    auto) and the methods' other parameters; ``fedavg`` makes a run federated even
    without privacy (``fed_variant = "none"``)."""

    label: str
    features: tuple[str, ...]
    model: str = "logistic"
    method: str = "output"
    fed_variant: str = "none"
    sites_by: str | None = None
    sites: int | None = None
    rounds: int = 20
    local_steps: int = 5
    epsilon: float = 1.0
    params: dict[str, Any] = field(default_factory=dict)
    grid: tuple[float, ...] = EPSILON_GRID
    seed: int = SEED
    variants: tuple[str, ...] = ()
    runs: int = 1
    fedavg: bool = False

    @property
    def federated(self) -> dict[str, Any] | None:
        if self.fed_variant == "none" and not self.fedavg:
            return None
        return {"sites_by": self.sites_by, "sites": None if self.sites_by else self.sites,
                "rounds": self.rounds, "local_steps": self.local_steps}

    @property
    def delta(self) -> float:
        """δ of this run (the form's "auto", 0, resolved by :func:`variant_request`)."""
        return float(self.params.get("delta", 0.0) or 0.0)


def variant_request(req: ModelRequest, key: str) -> ModelRequest:
    """``req`` as one training run of variant ``key``: its method, federated variant, δ
    (the method's own default when the form's δ is auto) and only the parameters its
    registry entry takes.

    Parameters
    ----------
    req : ModelRequest
        The form's request.
    key : str
        A key of :data:`~dpstudio.ui.model_variants.VARIANT_KEYS`.

    Returns
    -------
    ModelRequest
    """
    from dpstudio.analysis.training import METHOD_MECHANISMS
    from dpstudio.engine.registry import REGISTRY
    from dpstudio.ui.model_variants import auto_delta, variant

    v = variant(key)
    mechanism = METHOD_MECHANISMS.get(v.method)
    if mechanism is not None:
        takes = {p.name for p in REGISTRY.get(mechanism).params}
    else:  # a non-private fit takes λ; FedAvg without privacy also its step's size and q
        takes = {"lambda", "epsilon", "delta"} | (
            {"batch_rate", "learning_rate"} if v.federated else set())
    if v.federated:
        takes.discard("epochs")  # a federated run is set by rounds and local steps
    params = {k: val for k, val in req.params.items() if k in takes}
    delta = float(req.params.get("delta", 0.0) or 0.0)
    params["delta"] = delta if delta > 0 and v.private else auto_delta(v.method)
    return replace(req, method=v.method, fed_variant=v.fed_variant, fedavg=v.federated,
                   params=params, variants=(key,))


def _spec(req: ModelRequest, epsilon: float | None, schema: Any, *, runs: int = 1,
          sites_alone: bool = False) -> tuple[Any, list[str]]:
    from dpstudio.analysis.training import describe_training, resolve_training

    params = {k: v for k, v in req.params.items() if k not in ("epsilon", "delta")}
    if req.federated is not None:
        params.pop("epochs", None)  # a federated run is set by rounds and local steps
    private = req.method != "nonprivate"
    analysis = describe_training(req.label, req.features, req.model, req.method,
                                 epsilon if private else None,
                                 delta=req.delta if private else 0.0, params=params,
                                 fed_variant=req.fed_variant, federated=req.federated,
                                 runs=runs, sites_alone=sites_alone)
    return resolve_training(analysis, schema)


def _train(req: ModelRequest, epsilon: float | None, frame: Any, schema: Any,
           state: Any, *, runs: int = 1, sites_alone: bool = False) -> dict[str, Any]:
    """One training run of ``req`` at ``epsilon`` (``dpstudio train --simulate`` fields)."""
    from dpstudio.analysis.training import run_training
    from dpstudio.engine.rng import SimulationSource
    from dpstudio.execution.training_input import training_columns

    analysis, notes = _spec(req, epsilon, schema, runs=runs, sites_alone=sites_alone)
    # run_training rather than dispatch.run: it takes the job's state (progress, cancel).
    result = run_training(analysis, training_columns(frame, analysis),
                          SimulationSource(req.seed), notes=notes, state=state)
    return result.to_dict()


@dataclass(frozen=True)
class CompareResult:
    """The points of every variant, the non-private line and the runs at the form's ε.

    ``points[key][i]`` is variant ``key``'s run at ``epsilons[i]`` (a dict of the
    training run's fields: metrics, ``spread``, ``rounds``, ``coefficients``…, or
    ``{"error": sentence}``); a variant that does not depend on ε (FedAvg without privacy)
    has one run repeated. ``at_epsilon[key]`` is its run at the form's ε. ``sites_alone``
    is the held-out metric of each site trained alone at each ε (mean over the sites that
    could train), from ``sites_variant``'s runs, or empty.
    """

    request: ModelRequest
    metric: str                                  # "accuracy" or "rmse"
    names: tuple[str, ...]                       # the metrics shown
    epsilons: tuple[float, ...]
    points: dict[str, tuple[dict[str, Any], ...]]
    at_epsilon: dict[str, dict[str, Any]]
    baseline: dict[str, float]
    sites_alone: dict[str, tuple[float, ...]] = field(default_factory=dict)
    sites_variant: str | None = None
    sites_count: int = 0
    skipped: dict[str, str] = field(default_factory=dict)

    def series(self, key: str, metric: str) -> tuple[list[float], list[float], list[float]]:
        """Variant ``key``'s (mean, min, max) of ``metric`` at each ε (NaN where refused):
        the mean of the R runs, and its spread's range (equal to it with R = 1)."""
        mean, lo, hi = [], [], []
        for p in self.points.get(key, ()):
            m, a, b = _stats(p, metric)
            mean.append(m)
            lo.append(a)
            hi.append(b)
        return mean, lo, hi


def _stats(p: dict[str, Any], metric: str) -> tuple[float, float, float]:
    if metric not in p:
        return math.nan, math.nan, math.nan
    s = (p.get("spread") or {}).get(metric)
    if s is None:
        v = float(p[metric])
        return v, v, v
    return float(s["mean"]), float(s["min"]), float(s["max"])


def _entry(out: dict[str, Any]) -> dict[str, Any]:
    # Every field of the run (a few numbers and lists): the tab's other views read more
    # of them (the coefficients, a confusion matrix) than the curves.
    return dict(out)


def _key(vreq: ModelRequest, epsilon: float | None, sites_alone: bool, token: Any) -> str:
    """Everything that decides a point (the noise is seeded): the cache's key."""
    core = replace(vreq, epsilon=0.0, grid=(), variants=())
    return repr((token, core.label, core.features, core.model, core.method,
                 core.fed_variant, core.fedavg, core.sites_by, core.sites, core.rounds,
                 core.local_steps,
                 sorted((k, v) for k, v in core.params.items() if k != "epsilon"),
                 core.seed, core.runs, epsilon, sites_alone))


def compare_job(req: ModelRequest, frame: Any, schema: Any, cache: dict[str, Any] | None = None,
                token: Any = None, *, state: Any) -> CompareResult:
    """Train every ticked variant at each ε of the grid and at the form's ε, R times.

    Parameters
    ----------
    req : ModelRequest
        The form's request (``variants``, ``runs``, ``grid``, ``epsilon``).
    frame : pandas.DataFrame
        The dataset's table.
    schema : Schema
        The declarations in force (bounds and categories are read from it, never the data).
    cache : dict, optional
        Finished points by key, read and filled (seeded runs: a point is the same each
        time it is trained).
    token : hashable, optional
        What identifies the data and its declarations in the cache's keys.
    state : State
        Progress and cancellation.

    Returns
    -------
    CompareResult
    """
    from dpstudio.engine.errors import EngineError
    from dpstudio.jobs import check, scaled
    from dpstudio.ui.model_variants import variant

    cache = {} if cache is None else cache
    names = ("rmse",) if req.model == "linear" else ("accuracy", "auc")
    grid = tuple(float(e) for e in req.grid)
    keys = tuple(req.variants) or ()
    # Each site alone: from the first federated variant (the same sites, method and ε
    # for every private variant; the non-private one's when no private one is ticked).
    fed = [k for k in keys if variant(k).federated]
    sites_key = next((k for k in fed if variant(k).private), fed[0] if fed else None)
    units: list[tuple[str, float | None, bool]] = []
    for k in keys:
        eps_list: list[float | None] = ([*grid, req.epsilon] if variant(k).private
                                        else [None])
        for e in dict.fromkeys(eps_list):
            units.append((k, e, k == sites_key and (e in grid or e is None)))
    vreqs = {k: replace(variant_request(req, k), runs=req.runs) for k in keys}
    todo = [u for u in units if _key(vreqs[u[0]], u[1], u[2], token) not in cache]
    if len(cache) > _CACHE_MAX:
        cache.clear()
        todo = units
    for i, (k, e, alone) in enumerate(todo):
        check(state)
        where = "" if e is None else f" at ε = {e:g}"
        state.progress(i / max(len(todo), 1),
                       f"{variant(k).label}{where} ({i + 1} of {len(todo)})")
        try:
            out = _train(vreqs[k], e, frame, schema, scaled(state, i / len(todo),
                                                             (i + 1) / len(todo)),
                         runs=req.runs, sites_alone=alone)
            entry = _entry(out)
        except EngineError as err:
            entry = {"error": str(err)}
        cache[_key(vreqs[k], e, alone, token)] = entry
    check(state)
    state.progress(1.0, "done")
    points: dict[str, tuple[dict[str, Any], ...]] = {}
    at: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    for k in keys:
        private = variant(k).private
        got = [cache[_key(vreqs[k], e if private else None,
                          k == sites_key, token)] for e in grid]
        at[k] = cache[_key(vreqs[k], req.epsilon if private else None,
                           k == sites_key and (not private or req.epsilon in grid), token)]
        points[k] = tuple(got)
        errors = [p["error"] for p in (*got, at[k]) if "error" in p]
        if len(errors) == len(got) + 1:
            skipped[k] = errors[0]
    shown = [k for k in keys if k not in skipped]
    if keys and not shown:
        raise EngineError(next(iter(skipped.values())))
    baseline: dict[str, float] = {}
    for k in shown:
        for p in (*points[k], at[k]):
            if "baseline" in p:
                baseline = {m: float(p["baseline"][m]) for m in names}
                break
        if baseline:
            break
    alone: dict[str, tuple[float, ...]] = {}
    count = 0
    if sites_key is not None and sites_key not in skipped:
        for m in names:
            values = []
            for p in points[sites_key]:
                sites = [s[m] for s in p.get("sites_alone", ()) if m in s]
                count = max(count, len(p.get("sites_alone", ())))
                values.append(sum(sites) / len(sites) if sites else math.nan)
            alone[m] = tuple(values)
    metric = "rmse" if req.model == "linear" else "accuracy"
    return CompareResult(req, metric, names, grid, points, at, baseline, alone,
                         sites_key if alone else None, count, skipped)


class ModelJobs(QObject):
    """Runs :func:`compare_job` for the Models tab; the newest request wins."""

    KEY = "model-curve"
    ready = Signal(object)          # CompareResult
    failed = Signal(str)            # one sentence
    busy_changed = Signal(bool)
    progress = Signal(float, str)
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = JobRunner(self)
        self.runner.sig_finished.connect(lambda _k, r: self.ready.emit(r))
        self.runner.sig_failed.connect(lambda _k, m: self.failed.emit(m))
        self.runner.sig_busy.connect(lambda _k, b: self._set_busy(b))
        self.runner.sig_progress.connect(lambda _k, f, m: self.progress.emit(f, m))
        self.busy = False
        self._closed = False
        #: Finished points (filled from the worker thread too: one dict assignment each).
        self.cache: dict[str, Any] = {}

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.busy_changed.emit(busy)

    def submit(self, req: ModelRequest, frame: Any, schema: Any) -> None:
        if not self._closed:
            self.runner.submit(self.KEY, compare_job, req, frame, schema, self.cache,
                               id(frame))

    def forget(self) -> None:
        """Drop the cached points (the data or its declarations changed)."""
        self.cache = {}

    def cancel(self) -> None:
        if self.busy:
            self.runner.cancel(self.KEY)
            self.cancelled.emit()

    def shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            self.runner.shutdown()
