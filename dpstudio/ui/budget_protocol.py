"""What a shuffle or secure-aggregation release on screen will charge, for the budget
figures: its protocol's plan at the public number of users, not the ε on the slider.

A sum protocol states (and the ledger charges) the (ε, δ) its engine object meets for n
users (:func:`dpstudio.project.release_parties.protocol_charge`): the privacy blanket's
is the smaller of BBGN19's and FMT21's bounds, often well below the ε asked for (asked
0.5, charged ≈ 0.2 for 2,000 users). Planning is data-free but may take a second the
first time (calibration), too long for the UI thread during a slider drag: the figures
name what is still to plan (:class:`ProtocolRequest`), the budget panel plans it in a
worker (:func:`plan_charge`), and the figures read the charge once it is cached
(:func:`cached_charge`).

Which releases are planned so is the capability table's word (its ``needs_delta`` rows:
the protocols, whose releases are (ε, δ) whatever the slider's δ says), never a
comparison of trust-model names.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

__all__ = ["MISSING", "PlannedCharge", "ProtocolRequest", "cached_charge", "plan_charge",
           "protocol_request"]

#: The cache's answer for a request not planned yet (None is a planned "no charge").
MISSING = object()


@dataclass(frozen=True)
class PlannedCharge:
    """What a protocol release will charge, and how its protocol accounts for it.

    Attributes
    ----------
    charge : tuple of Decimal
        (ε, δ), as the ledger will record them.
    users : int
        The public number of users it was planned for.
    accounting : str
        The plan's own account of its guarantee ("shuffled randomized response with
        blanket probability γ (… Feldman, McMillan & Talwar 2021, tighter here than Balle
        et al. 2019 …)"); empty when it has none.
    """

    charge: tuple[Decimal, Decimal]
    users: int
    accounting: str = ""


@dataclass(frozen=True)
class ProtocolRequest:
    """A protocol release on screen, by what its charge depends on.

    Attributes
    ----------
    release : tuple
        Trust model and query spec (the interval's level left out: it draws no noise).
    rows : int
        Users taking part (every row of the column is one; public for the protocols).
    asked : tuple of Decimal
        The (ε, δ) the analyst set (what the figures show until the charge is known).
    analysis : AnalysisSpec
        The release as described, to resolve and plan (not compared).
    declared : Schema or None
        The dataset's declaration, to resolve it as the release does (not compared: the
        spec already carries the column's bounds and categories).
    """

    release: tuple
    rows: int
    asked: tuple[Decimal, Decimal]
    analysis: Any = field(compare=False, hash=False, repr=False)
    declared: Any = field(compare=False, hash=False, repr=False)


def protocol_request(snapshot: Any, rows: int | None, declared: Any,
                     asked: tuple[Decimal, Decimal]) -> ProtocolRequest | None:
    """The request to plan for the release ``snapshot`` describes, or None when its trust
    model is not a sum protocol's or nothing can be released.

    Parameters
    ----------
    snapshot : Choices
        The session's settings.
    rows : int or None
        Users taking part.
    declared : Schema or None
        The dataset's declaration.
    asked : tuple of Decimal
        The (ε, δ) set on screen.

    Returns
    -------
    ProtocolRequest or None
    """
    from dpstudio.analysis import AnalysisSpec
    from dpstudio.analysis.capabilities import capability

    if not rows or not capability(snapshot.trust_model).needs_delta:
        return None
    spec = snapshot.spec()
    same = replace(spec, confidence=0.95)
    return ProtocolRequest((snapshot.trust_model, repr(same)), int(rows), asked,
                           AnalysisSpec(snapshot.trust_model, spec), declared)


# Charges planned, newest last: request → its charge, or None when the protocol has no
# plan for it (the release itself refuses, in its own words).
_CHARGES: OrderedDict[ProtocolRequest, PlannedCharge | None] = OrderedDict()
_SIZE = 64
_LOCK = threading.Lock()


def cached_charge(request: ProtocolRequest) -> Any:
    """The planned charge of ``request``, None (no plan), or :data:`MISSING`.

    Parameters
    ----------
    request : ProtocolRequest

    Returns
    -------
    PlannedCharge, None, or MISSING
    """
    with _LOCK:
        return _CHARGES.get(request, MISSING)


def plan_charge(request: ProtocolRequest, state: Any = None) -> PlannedCharge | None:
    """Plan the release ``request`` names as the release transaction will, and cache it.

    Resolved like a project release (:func:`~dpstudio.project.release_parties.
    resolve_release`, on the query a release spec records), then charged at ``rows``
    (:func:`~dpstudio.project.release_parties.protocol_charge`): the same figure the
    confirmation, the budget gate and the ledger read.

    Parameters
    ----------
    request : ProtocolRequest
    state : State, optional
        The job's state (:mod:`dpstudio.jobs`): cancellation is checked before planning.

    Returns
    -------
    PlannedCharge or None
        None when the release would be refused (it then says why itself).
    """
    from dpstudio.analysis import AnalysisSpec
    from dpstudio.analysis.capabilities import releasable, release_query
    from dpstudio.analysis.dispatch import plan
    from dpstudio.jobs import Cancelled, check
    from dpstudio.project.release_parties import protocol_charge, resolve_release

    found = None
    analysis = request.analysis
    try:
        if releasable(analysis):
            resolved, _ = resolve_release(
                AnalysisSpec(analysis.trust_model, release_query(analysis)),
                request.declared)
            check(state)
            charge = protocol_charge(resolved, request.rows)
            if charge is not None:  # its plan is cached: asking again costs nothing
                how = getattr(plan(resolved, request.rows), "accounting", "")
                found = PlannedCharge(charge, request.rows, str(how or ""))
    except Cancelled:
        raise
    except Exception:  # noqa: BLE001 - refused: the release itself says why
        found = None
    with _LOCK:
        _CHARGES[request] = found
        _CHARGES.move_to_end(request)
        while len(_CHARGES) > _SIZE:
            _CHARGES.popitem(last=False)
    return found
