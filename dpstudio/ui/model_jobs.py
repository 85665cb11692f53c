"""The Models tab's computation: held-out metric against ε, run in a worker thread.

One job (:func:`curve_job`) trains the chosen model at each ε of a grid with seeded noise
(a simulation: nothing is released or charged) through the analysis layer's training run,
and once more at the form's ε for the coefficients. The non-private model's metric comes
with every run (its ``baseline``). :class:`ModelJobs` submits it on the app's
:class:`~dpstudio.ui.worker.JobRunner`: a newer request cancels the older one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from dpstudio.ui.worker import JobRunner

__all__ = ["EPSILON_GRID", "CurveResult", "ModelJobs", "ModelRequest", "curve_job"]

#: The ε values of the privacy–utility curve (log-spaced, as the analysis plots).
EPSILON_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
#: The seed of the simulated noise (shown as "simulation · seed N").
SEED = 1


@dataclass(frozen=True)
class ModelRequest:
    """What the form describes: one training run, and the ε grid to sweep."""

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

    @property
    def federated(self) -> dict[str, Any] | None:
        if self.fed_variant == "none":
            return None
        return {"sites_by": self.sites_by, "sites": None if self.sites_by else self.sites,
                "rounds": self.rounds, "local_steps": self.local_steps}


@dataclass(frozen=True)
class CurveResult:
    """The curve's points, the non-private line and the run at the form's ε."""

    request: ModelRequest
    metric: str                     # the main metric: "accuracy" or "rmse"
    epsilons: tuple[float, ...]
    values: dict[str, tuple[float, ...]]   # metric → one value per ε
    baseline: dict[str, float]             # metric → the non-private model's value
    at_epsilon: dict[str, Any]      # the training run's fields at the form's ε
    notes: tuple[str, ...] = ()


def _spec(req: ModelRequest, epsilon: float | None, schema: Any) -> tuple[Any, list[str]]:
    from dpstudio.analysis.training import describe_training, resolve_training

    params = {k: v for k, v in req.params.items() if k not in ("epsilon", "delta")}
    if req.federated is not None:
        params.pop("epochs", None)  # a federated run is set by rounds and local steps
    delta = float(req.params.get("delta", 0.0) or 0.0)
    analysis = describe_training(req.label, req.features, req.model, req.method,
                                 None if req.method == "nonprivate" else epsilon,
                                 delta=delta, params=params, fed_variant=req.fed_variant,
                                 federated=req.federated)
    return resolve_training(analysis, schema)


def _train(req: ModelRequest, epsilon: float | None, frame: Any, schema: Any,
           state: Any) -> dict[str, Any]:
    from dpstudio.analysis.training import run_training
    from dpstudio.engine.rng import SimulationSource
    from dpstudio.execution.training_input import training_columns

    analysis, notes = _spec(req, epsilon, schema)
    # run_training rather than dispatch.run: it takes the job's state (progress, cancel).
    result = run_training(analysis, training_columns(frame, analysis),
                          SimulationSource(req.seed), notes=notes, state=state)
    return result.to_dict()


def curve_job(req: ModelRequest, frame: Any, schema: Any, *, state: Any) -> CurveResult:
    """Train at each ε of the grid and at the form's ε, with seeded noise.

    Parameters
    ----------
    req : ModelRequest
        The form's training run.
    frame : pandas.DataFrame
        The dataset's table.
    schema : Schema
        The declarations in force (bounds and categories are read from it, never the data).
    state : State
        Progress and cancellation.

    Returns
    -------
    CurveResult
    """
    from dpstudio.jobs import check, scaled

    private = req.method != "nonprivate"
    grid = tuple(req.grid) if private else ()
    runs = len(grid) + 1
    metric = "rmse" if req.model == "linear" else "accuracy"
    names = ("rmse",) if req.model == "linear" else ("accuracy", "auc")
    values: dict[str, list[float]] = {m: [] for m in names}
    for i, eps in enumerate(grid):
        check(state)
        state.progress(i / runs, f"training at ε = {eps:g}")
        out = _train(req, eps, frame, schema, scaled(state, i / runs, (i + 1) / runs))
        for m in names:
            values[m].append(float(out[m]))
    check(state)
    state.progress(len(grid) / runs, f"training at ε = {req.epsilon:g}")
    at = _train(req, req.epsilon if private else None, frame, schema,
                scaled(state, len(grid) / runs, 1.0))
    check(state)
    state.progress(1.0, "done")
    return CurveResult(req, metric, grid, {m: tuple(v) for m, v in values.items()},
                       {m: float(at["baseline"][m]) for m in names}, at,
                       tuple(at.get("notes", ())))


class ModelJobs(QObject):
    """Runs :func:`curve_job` for the Models tab; the newest request wins."""

    KEY = "model-curve"
    ready = Signal(object)          # CurveResult
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

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.busy_changed.emit(busy)

    def submit(self, req: ModelRequest, frame: Any, schema: Any) -> None:
        if not self._closed:
            self.runner.submit(self.KEY, curve_job, req, frame, schema)

    def cancel(self) -> None:
        if self.busy:
            self.runner.cancel(self.KEY)
            self.cancelled.emit()

    def shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            self.runner.shutdown()

