"""A release's privacy-loss description as the project ledger stores it (column ``loss``).

The engine's :class:`~dpstudio.engine.accounting.loss.LossDescription` says what a release
drew (noise family, scale, sensitivity, sampling); the tight accountants (``advanced``,
``zcdp``, ``pld``, see :mod:`dpstudio.project.accountant`) compose those. A release
stored without one — every release of a project made before schema version 3, and any
release whose engine object does not describe its noise — is accounted as the ``pure``
or ``approx`` description of its charged (ε, δ): the worst case of any (ε, δ)-DP
mechanism, pessimistic and correct.

A stored description never lowers a release's charge: when its claimed (ε, δ) is below
what the ledger charges (a release re-charged by a migration, or a ledger edited outside
DP Studio and acknowledged with the larger amounts), the charge's pure/approx description
is used instead.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from dpstudio.engine.accounting.budget import exact
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.errors import EngineError

__all__ = ["charge_loss", "loss_json", "planned_loss", "read_loss", "release_loss"]


def charge_loss(epsilon: Decimal | float, delta: Decimal | float) -> LossDescription:
    """The description of a release known only by its charge: ``pure`` (δ = 0) or
    ``approx``.

    Parameters
    ----------
    epsilon, delta : Decimal or float
        The charged (ε, δ).

    Returns
    -------
    LossDescription
    """
    e, d = float(epsilon), float(delta)
    # A float can round a decimal down: step up one ulp so the description never
    # claims less than the exact charge.
    if Decimal(repr(e)) < Decimal(epsilon):
        e = _next_up(e)
    if d > 0 and Decimal(repr(d)) < Decimal(delta):
        d = _next_up(d)
    return LossDescription("approx" if d > 0 else "pure", epsilon=e, delta=d)


def _next_up(x: float) -> float:
    import math

    return math.nextafter(x, math.inf)


def release_loss(result: Any) -> LossDescription:
    """What a release drew, for the ledger's ``loss`` column.

    Parameters
    ----------
    result : AnalysisResult
        The result the release transaction drew (its ``engine`` object drew the noise).
        An engine object with a ``loss_description()`` method is asked for it; otherwise
        the release is described by its (ε, δ) alone (``pure``/``approx``).

    Returns
    -------
    LossDescription
        Never claiming less than the result's (ε, δ).
    """
    eps, delta = exact(float(result.epsilon)), exact(float(result.delta))
    describe = getattr(getattr(result, "engine", None), "loss_description", None)
    if callable(describe):
        try:
            found = describe()
        except EngineError:
            found = None
        if isinstance(found, LossDescription) and _covers(found, eps, delta):
            return found
    return charge_loss(eps, delta)


def planned_loss(analysis: Any) -> LossDescription | None:
    """The description a release of ``analysis`` will draw, known before it draws.

    A central or local release's noise is calibrated from its spec alone (bounds,
    categories, ε, δ, relation), never from the data; so the engine run on a one-value
    stand-in made from the declaration, with a seeded generator, calibrates the same noise
    and describes it. A tight accountant gates the release with it before drawing (the
    release transaction checks again with what was actually drawn).

    Parameters
    ----------
    analysis : AnalysisSpec
        The resolved analysis to release.

    Returns
    -------
    LossDescription or None
        None for a model, or when the stand-in cannot be run (the gate then uses the
        charge's pure/approx description, which is pessimistic).
    """
    import numpy as np

    from dpstudio.analysis import run as run_analysis
    from dpstudio.engine.rng import SimulationSource

    if getattr(analysis, "is_model", True):
        return None
    q = analysis.query
    if q.categories is not None and q.query in ("histogram", "count"):
        stand_in = np.array([str(q.categories[0])], dtype=object)
    else:
        low = float(q.bounds[0]) if q.bounds is not None else 1.0
        stand_in = np.array([low], dtype=np.float64)
    try:
        result = run_analysis(analysis, stand_in, SimulationSource(0))
    except Exception:  # noqa: BLE001 - any refusal: fall back to the pessimistic charge
        return None
    return release_loss(result)


def loss_json(description: LossDescription) -> str:
    """The stored text of a description (canonical JSON, with its schema version).

    Parameters
    ----------
    description : LossDescription

    Returns
    -------
    str
    """
    return json.dumps(description.to_dict(), sort_keys=True, allow_nan=False)


def _covers(d: LossDescription, epsilon: Decimal, delta: Decimal) -> bool:
    return Decimal(repr(d.epsilon)) >= epsilon and Decimal(repr(d.delta)) >= delta


def read_loss(text: str | None, epsilon: Decimal, delta: Decimal) -> LossDescription:
    """A release's description as accounted: the stored one if it reads and claims at
    least the charge, else the charge's pure/approx description.

    Parameters
    ----------
    text : str or None
        The ``loss`` column (None for a release made before schema version 3).
    epsilon, delta : Decimal
        The release's charge (the pessimistic one, see :mod:`dpstudio.project._chain`).

    Returns
    -------
    LossDescription
    """
    if text:
        try:
            found = LossDescription.from_dict(json.loads(text))
        except (ValueError, TypeError, EngineError):
            found = None
        if found is not None and _covers(found, epsilon, delta):
            return found
    return charge_loss(epsilon, delta)
