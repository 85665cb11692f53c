"""The membership audit of a federated run: every training a full FedAvg simulation.

Federated averaging's private variants are record-level DP under add/remove: two
neighbouring datasets differ by one record at one site. The audit
(:func:`~dpstudio.engine.learning.membership.audit_membership`, ``relation="add"``)
trains on D, the run's training rows at their sites, and on D′, the same with the
canary record added to one site (the first in the run's site order), ``runs`` times
each. Every training is the run's own FedAvg (:func:`.federated_run.train_sites`: the
same variant, rounds, local steps, Poisson rate, clipping and target (ε, δ)), from the
audit's seeded source: a simulation, never a release.

Nothing can be fitted once and reused (the noise enters every step), so an audit costs
2·``runs`` full runs: keep ``runs`` modest. Cancelling stops the audit inside a
training (between sites and rounds); progress is the audit's own, one step per training.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpstudio.analysis.federated_run import site_assignment, train_sites
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.jobs import State

__all__ = ["CANARY_SITE", "federated_trainer"]

#: The site (position in the run's site order) that holds the canary in D′.
CANARY_SITE = 0


class _CancelOnly:
    """A training's state inside an audit: cancellation passes, progress is the audit's."""

    def __init__(self, state: State) -> None:
        self._state = state

    def progress(self, fraction: float, message: str = "") -> None:
        """Dropped: the audit reports one step per training."""

    def cancelled(self) -> bool:
        """The audit's cancellation."""
        return self._state.cancelled()


def federated_trainer(a: AnalysisSpec, model: Any, X: np.ndarray, y: np.ndarray,
                      columns: Mapping[str, np.ndarray], rows: np.ndarray,
                      state: State | None = None) -> Callable:
    """``train(X, y, source) -> FederatedResult`` for the audit of a federated run.

    ``train`` takes D (the ``X``, ``y`` given here) or D′ (the same rows and the canary
    appended last, as :func:`~dpstudio.engine.learning.membership.audit_membership`
    builds it under ``relation="add"``); the canary joins site :data:`CANARY_SITE`.

    Parameters
    ----------
    a : AnalysisSpec
        A resolved federated training run.
    model : Model
        The model.
    X, y : numpy.ndarray
        The training rows and labels (D).
    columns : mapping
        All columns read (the site column among them for ``sites_by``).
    rows : numpy.ndarray
        The training rows' indices in ``columns``.
    state : State, optional
        The audit's state: cancellation is checked inside each training too.

    Returns
    -------
    callable
        ``train(X, y, source)``, a seeded FedAvg simulation (never a release).

    Raises
    ------
    QueryError
        For sites the run cannot take (as :func:`.federated_run.site_assignment`).
    """
    from dpstudio.engine.errors import ParameterError
    from dpstudio.engine.learning.sites import Sites

    sites = site_assignment(a, y, columns, rows)
    n = y.size
    with_canary = Sites(np.append(sites.codes, CANARY_SITE).astype(np.int64), sites.names)
    inner = None if state is None else _CancelOnly(state)

    def train(Xs: np.ndarray, ys: np.ndarray, source: Any) -> Any:
        if ys.size == n:
            s = sites
        elif ys.size == n + 1:
            s = with_canary
        else:
            raise ParameterError("the federated audit trains on the run's rows, with or "
                                 "without one added record")
        return train_sites(a, model, Xs, ys, columns, rows, source, False, None, inner,
                           sites=s)

    return train
