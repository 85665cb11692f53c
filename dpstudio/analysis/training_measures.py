"""What a training run measures: held-out metrics, their spread over repeated runs, the
metrics after each FedAvg round, and each site trained alone.

Everything here reads the held-out rows without noise: for the analyst, never published
(:meth:`~dpstudio.analysis.result.AnalysisResult.public` refuses a training run until a
project releases one, and a release publishes none of it). The repeated runs and the
sites trained alone are simulations only, each from its own seeded source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpstudio.analysis.federated_run import site_assignment
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.training_methods import theta_of, trainer
from dpstudio.engine.rng import SimulationSource, Source

__all__ = ["HeldOutMetrics", "child_sources", "per_round", "sites_alone", "spread"]

class HeldOutMetrics:
    """Held-out metrics of one model (in the label's units for a regression).

    Called as ``metrics(model, theta)``: accuracy and AUC for a classifier (threshold
    P(y = 1) > 0.5), RMSE in the label's declared units for a regression.

    Parameters
    ----------
    a : AnalysisSpec
        The training run (its model and a regression's label bounds).
    X, y : numpy.ndarray
        The held-out rows.
    """

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


def per_round(engine: Any, name: str) -> list[float]:
    """Metric ``name`` after each FedAvg round (a round's entry is every metric by name).

    Parameters
    ----------
    engine : object
        The engine object of the run (its ``metrics``, one entry per round; none for a
        centralized run).
    name : str
        ``"accuracy"``, ``"auc"`` or ``"rmse"``.

    Returns
    -------
    list of float
        Empty for a centralized run.
    """
    return [float(m[name] if isinstance(m, dict) else m)
            for m in getattr(engine, "metrics", None) or []]


def spread(first: Mapping[str, float], rest: Sequence[Mapping[str, float]]
           ) -> dict[str, dict[str, float]]:
    """Each metric's mean, standard deviation (ddof 1), min and max over all runs.

    Parameters
    ----------
    first : mapping of str to float
        The metrics of the run itself.
    rest : sequence of mappings
        Those of the repetitions.

    Returns
    -------
    dict
        Per metric: ``mean``, ``sd``, ``min``, ``max`` and ``runs``.
    """
    out = {}
    for key, value in first.items():
        runs = np.array([value, *(m[key] for m in rest)], dtype=float)
        out[key] = {"mean": float(runs.mean()), "sd": float(runs.std(ddof=1)),
                    "min": float(runs.min()), "max": float(runs.max()), "runs": int(runs.size)}
    return out


def child_sources(source: Source, count: int) -> list[Source]:
    """Independent seeded sources for the repetitions of a simulation (never a release).

    Parameters
    ----------
    source : Source
        The simulation's source (its ``seed`` seeds the children).
    count : int
        How many.

    Returns
    -------
    list of Source
        ``count`` simulation sources: children 1 to ``count`` of the seed's
        :class:`numpy.random.SeedSequence` (fresh entropy when the source has no seed).
    """
    seed = getattr(source, "seed", None)
    children = np.random.SeedSequence(seed if seed is not None else None).spawn(count + 1)[1:]
    return [SimulationSource(int(c.generate_state(1, np.uint64)[0])) for c in children]


def sites_alone(a: AnalysisSpec, model: Any, lam: float, baseline: Any, X: np.ndarray,
                y: np.ndarray, columns: Mapping[str, np.ndarray], rows: np.ndarray,
                source: Source, measure: Any, state: Any) -> list[dict[str, Any]]:
    """Each site trained alone on its own rows, by the centralized form of the run's
    method at the same (ε, δ) (a site is its own curator), measured on the same
    held-out rows; a site whose rows hold one class gets a note instead.

    Parameters
    ----------
    a : AnalysisSpec
        A federated training run.
    model : Model
        The engine's model.
    lam : float
        λ.
    baseline : callable
        ``baseline(X, y)``: the non-private fit.
    X, y : numpy.ndarray
        The training rows.
    columns : mapping of str to numpy.ndarray
        Every column (the sites' column among them).
    rows : numpy.ndarray
        The training rows' indices in ``columns``.
    source : Source
        The simulation's source (each site gets a child of it).
    measure : HeldOutMetrics
        The held-out metrics.
    state : State or None
        Progress and cancellation.

    Returns
    -------
    list of dict
        Per site: ``site``, ``rows`` and its metrics, or a ``note``.
    """
    from dataclasses import replace

    from dpstudio.jobs import check

    t = a.training
    sites = site_assignment(a, y, columns, rows)
    alone = replace(a, training=replace(t, federated=None, fed_variant="none"))
    train, _ = trainer(alone, model, lam, baseline)
    out: list[dict[str, Any]] = []
    for name, idx, src in zip(sites.names, sites.indices(),
                              child_sources(source, sites.count), strict=True):
        check(state)
        entry: dict[str, Any] = {"site": str(name), "rows": int(idx.size)}
        if t.model != "linear" and np.unique(y[idx]).size < 2:
            entry["note"] = "one class only: a classifier cannot be trained on this site alone"
        else:
            engine = (train(X[idx], y[idx], src, False, None) if t.method == "dpsgd"
                      else train(X[idx], y[idx], src, False))
            entry.update(measure(model, theta_of(engine)))
        out.append(entry)
    return out
