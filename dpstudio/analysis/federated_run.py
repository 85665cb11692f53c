"""A federated training run: sites, options and FedAvg for :mod:`.training`.

Kept apart from the centralized run: which sites (a column, or a random label-skewed
split), the variant and its trust, and the held-out metric after each round. The engine's
:func:`~dpstudio.engine.learning.federated.train_federated` does the training and the
accounting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.errors import QueryError
from dpstudio.engine.rng import Source

__all__ = ["federated_options", "site_assignment", "train_sites"]


def federated_options(method: str, variant: str, federated: Mapping[str, Any] | None,
                       given: Mapping[str, Any], audit: int) -> dict[str, Any] | None:
    """The federated options checked (None for a centralized run), in one sentence each.

    Parameters
    ----------
    method : str
        The training method (``"nonprivate"`` with the variant ``"none"``, ``"dpsgd"``
        with a private variant).
    variant : str
        The federated variant.
    federated : mapping or None
        ``sites_by`` or ``sites`` (and ``imbalance``), ``rounds``, ``local_steps``,
        ``fraction``, ``fed_noise``, ``colluding``, ``dropouts``; None for a centralized
        run.
    given : mapping
        The method's parameters as given.
    audit : int
        Trainings of a membership audit (each a full FedAvg run; see
        :mod:`.federated_audit`).

    Returns
    -------
    dict or None

    Raises
    ------
    QueryError
        For a variant, method, site choice or option that does not fit.
    """
    if federated is None:
        if variant not in ("none", None):
            raise QueryError("a federated variant needs sites: --sites-by COL or --sites S")
        return None
    from dpstudio.engine.learning.federated import VARIANTS

    if variant not in VARIANTS:
        raise QueryError(f"the federated variant must be {', '.join(VARIANTS)}, "
                         f"got {variant!r}")
    if variant == "none" and method != "nonprivate":
        raise QueryError("--fed-variant none is federated averaging without privacy: use "
                         "--method nonprivate, or a private variant (local, secagg, cape, "
                         "shuffle) with --method dpsgd")
    if variant != "none" and method != "dpsgd":
        raise QueryError(f"the {variant} federated variant perturbs gradients at the sites: "
                         "use --method dpsgd")
    if "epochs" in given:
        raise QueryError("a federated run is set by --rounds and --local-steps, not --epochs")
    out = {"sites_by": federated.get("sites_by"), "sites": federated.get("sites"),
           "imbalance": federated.get("imbalance"),
           "rounds": int(federated.get("rounds") or 20),
           "local_steps": int(federated.get("local_steps") or 5),
           "fraction": float(federated.get("fraction") or 1.0),
           "fed_noise": federated.get("fed_noise") or "gaussian",
           "colluding": int(federated.get("colluding") or 0),
           "dropouts": int(federated.get("dropouts") or 0)}
    _check_trust_options(variant, out)
    if (out["sites_by"] is None) == (out["sites"] is None):
        raise QueryError("a federated run needs its sites: --sites-by COL or --sites S, "
                         "not both")
    if out["imbalance"] is not None and out["sites"] is None:
        raise QueryError("--imbalance skews a random split: it goes with --sites S")
    return out


def _check_trust_options(variant: str, out: Mapping[str, Any]) -> None:
    """Skellam noise, colluding sites and dropouts where the variant takes them."""
    if out["fed_noise"] not in ("gaussian", "skellam"):
        raise QueryError(f"--fed-noise must be gaussian or skellam, got {out['fed_noise']!r}")
    if out["fed_noise"] == "skellam" and variant != "secagg":
        raise QueryError("Skellam noise is secure aggregation's: use --fed-variant secagg")
    if out["colluding"] < 0 or out["dropouts"] < 0:
        raise QueryError("the numbers of colluding and dropped-out sites must be ≥ 0")
    if out["colluding"] and variant not in ("secagg", "cape"):
        raise QueryError("colluding sites are declared for secagg or cape")
    if out["dropouts"] and variant != "secagg":
        raise QueryError("dropouts are declared for secagg (CAPE's parts cancel only when "
                         "every message arrives)")


def site_assignment(a: AnalysisSpec, y: np.ndarray, columns: Mapping[str, np.ndarray],
                    rows: np.ndarray) -> Any:
    """The site of each training row: a column's values, or a random label-skewed split.

    Parameters
    ----------
    a : AnalysisSpec
        A resolved federated training run.
    y : numpy.ndarray
        The training labels.
    columns : mapping
        All columns read (the site column among them for ``sites_by``).
    rows : numpy.ndarray
        The training rows' indices in ``columns``.

    Returns
    -------
    Sites

    Raises
    ------
    QueryError
        For a site column that was not read.
    """
    from dpstudio.engine.learning.sites import sites_from_column, split_sites

    t = a.training
    f = t.federated
    if f["sites_by"] is not None:
        if f["sites_by"] not in columns:
            raise QueryError(f"no site column {f['sites_by']!r}")
        return sites_from_column(np.asarray(columns[f["sites_by"]], dtype=object)[rows])
    return split_sites(y, int(f["sites"]), f["imbalance"], seed=t.split_seed)


def train_sites(a: AnalysisSpec, model: Any, X: np.ndarray, y: np.ndarray,
                columns: Mapping[str, np.ndarray], rows: np.ndarray, source: Source,
                release: bool, measure: Callable[[Any, np.ndarray], dict], state: Any,
                sites: Any = None) -> Any:
    """FedAvg on the training rows (:func:`~dpstudio.engine.learning.federated
    .train_federated`), the held-out metric after every round.

    Parameters
    ----------
    a : AnalysisSpec
        A resolved federated training run.
    model : Model
        The model.
    X, y : numpy.ndarray
        The training rows and labels.
    columns : mapping
        All columns read (the site column among them for ``sites_by``).
    rows : numpy.ndarray
        The training rows' indices in ``columns``.
    source : Source
        The OS CSPRNG (release) or a seeded source (simulation).
    release : bool
        Whether this is a release.
    measure : callable or None
        ``measure(model, theta) -> metrics`` on the held-out rows; None measures nothing
        (a project release publishes no metric).
    state : State or None
        Progress and cancellation.
    sites : Sites, optional
        The site of each row, when not the run's own assignment (a membership audit's
        neighbouring dataset holds one record more: :mod:`.federated_audit`).

    Returns
    -------
    FederatedResult

    Raises
    ------
    QueryError, ParameterError
        For sites or parameters the engine refuses.
    """
    from dpstudio.engine.learning.federated import train_federated
    from dpstudio.engine.local.tally import simulation_generator

    t, q = a.training, a.query
    f = t.federated
    if sites is None:
        sites = site_assignment(a, y, columns, rows)
    params = dict(q.params)
    if t.method == "dpsgd":
        params = a.info.resolve(q.mechanism_params())
    rate = float(params.get("batch_rate", 0.05))
    # q is declared: the engine calibrates σ and ε from it alone (never from sizes). B, the
    # declared expected batch of one site, only divides the noisy sums (the step's scale);
    # undeclared (a simulation: a release is refused, analysis/expected_batch.py) it is
    # q·m of a site of average size m, which reads n.
    declared = float(params.get("expected_batch") or 0.0)
    batch = declared if declared and t.method == "dpsgd" else max(
        1, round(rate * y.size / sites.count))
    draws = {"source": source} if release else {"rng": simulation_generator(source)}
    private = t.fed_variant != "none"
    return train_federated(
        X, y, sites, model, t.fed_variant, epsilon=q.epsilon if private else None,
        delta=q.delta if private else None, rounds=f["rounds"],
        local_steps=f["local_steps"], lr=float(params.get("learning_rate", 0.5)),
        batch_size=batch, batch_rate=rate, fraction=f["fraction"],
        clip=float(params.get("clip", 1.0)), state=state,
        # every metric after each round; none for a project release (measure None)
        evaluate=None if measure is None else (lambda theta: measure(model, theta)),
        init_seed=t.split_seed, noise=f.get("fed_noise", "gaussian"),
        colluding=int(f.get("colluding", 0)), dropouts=int(f.get("dropouts", 0)), **draws)
