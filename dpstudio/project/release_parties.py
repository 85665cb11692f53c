"""What a project release adds for the sum protocols (shuffle, secure aggregation).

The release transaction (:mod:`dpstudio.project.release`) resolves, draws and exports
every trust model the same way; these three calls route a protocol release to the
analysis layer's protocol rules (:mod:`dpstudio.analysis.protocol_release`) and every
other release to the general ones.
"""

from __future__ import annotations

from typing import Any

from dpstudio.analysis import AnalysisResult, AnalysisSpec, resolve
from dpstudio.analysis.capabilities import require_release
from dpstudio.analysis.protocol_release import (
    is_protocol,
    protocol_noise,
    protocol_public,
    resolve_protocol_query,
)

__all__ = ["noise_of", "protocol_notes", "public_of", "resolve_release", "rows_of"]


def resolve_release(analysis: AnalysisSpec, declared: Any) -> tuple[AnalysisSpec, list[str]]:
    """:func:`dpstudio.analysis.resolve`, with the protocols' own resolution.

    Parameters
    ----------
    analysis : AnalysisSpec
        The analysis as described.
    declared : schema-like or None
        The dataset's declared schema.

    Returns
    -------
    (AnalysisSpec, list of str)
        The resolved analysis and notes on what was filled.
    """
    if analysis.is_model or analysis.training is not None or not is_protocol(
            analysis.trust_model):
        return resolve(analysis, declared)
    require_release(analysis)
    query, notes = resolve_protocol_query(analysis.query, declared, analysis.trust_model)
    from dataclasses import replace

    return replace(analysis, query=query), notes


def public_of(result: AnalysisResult, rows: int | None = None) -> dict[str, Any]:
    """The release's exportable fields (:meth:`AnalysisResult.public`, or a protocol's
    allow-list)."""
    found = protocol_public(result)
    return found if found is not None else result.public(rows=rows)


def noise_of(result: AnalysisResult, public: dict[str, Any]) -> dict[str, Any]:
    """What the ledger stores about the noise drawn (a protocol's plan figures added)."""
    noise = result.noise_description(public)
    if protocol_public(result) is not None or "parties" in public:
        noise |= protocol_noise(public)
    return noise


def rows_of(values: Any, sums: Any) -> int | None:
    """The number of users a prepared release covers (in-process values or the sums of a
    folder), or None when not known yet."""
    if values is not None:
        import numpy as np

        return int(np.asarray(values).size)
    total = getattr(sums, "total", None)
    n = getattr(total, "n", None)
    return int(n) if n is not None else None


def protocol_charge(analysis: AnalysisSpec, rows: int | None) -> tuple[Any, Any] | None:
    """A shuffle or secure-aggregation release's (ε, δ) as its protocol plans it for
    ``rows`` users (public under the replace relation), or None for other releases.

    The plan is what the release's engine object will state (the blanket's FMT21 bound can
    be below the ε asked for), so the check, the confirmation, the budget gate and the
    charge all read the same figure.

    Parameters
    ----------
    analysis : AnalysisSpec
        The resolved analysis.
    rows : int or None
        Users taking part.

    Returns
    -------
    (Decimal, Decimal) or None
    """
    if rows is None or analysis.is_model or not is_protocol(analysis.trust_model):
        return None
    from dpstudio.analysis.dispatch import plan
    from dpstudio.engine.accounting.budget import exact
    from dpstudio.engine.errors import EngineError

    try:
        planned = plan(analysis, rows)
    except EngineError:  # the release itself will refuse, in its own words
        return None
    eps, delta = getattr(planned, "epsilon", None), getattr(planned, "delta", None)
    if eps is None or delta is None:
        return None
    return exact(float(eps)), exact(float(delta))


def protocol_notes(analysis: AnalysisSpec | None, rows: int | None) -> list[str]:
    """What a protocol release's confirmation says before any noise: who sees what, and
    for a shuffled local randomizer each user's ε₀ beside the central ε (the protocol's
    data-free plan for these users). Empty for any other release.

    Parameters
    ----------
    analysis : AnalysisSpec or None
        The resolved analysis.
    rows : int or None
        Users taking part.

    Returns
    -------
    list of str
    """
    if analysis is None or rows is None or analysis.is_model or not is_protocol(
            analysis.trust_model):
        return []
    from dpstudio.analysis.dispatch import plan
    from dpstudio.analysis.protocol_release import parties
    from dpstudio.engine.errors import EngineError

    try:
        planned = plan(analysis, rows).to_dict()
    except EngineError as exc:  # the release itself will refuse, in its own words
        return [str(exc)]
    who = parties(analysis.trust_model, planned, analysis.query.mechanism)
    notes = [f"the {k} sees {v}" for k, v in who["sees"].items()]
    notes.append("trusted: " + "; ".join(who["trusted"]))
    if who.get("local_epsilon") is not None:
        notes.insert(0, f"each user's local ε₀ = {who['local_epsilon']:.4g}; central ε after "
                        f"shuffling = {who['central_epsilon']:g} (δ = "
                        f"{who['central_delta']:.3g})")
    elif who.get("local_guarantee"):
        notes.insert(0, str(who["local_guarantee"]))
    return notes
