"""How the report reads a shuffle-model or secure-aggregation release.

The pieces :mod:`dpstudio.export.report` assembles for a sum protocol: who sees what and
what is trusted (from the release's public ``parties``), each user's own ε₀ beside the
central ε where the protocol is a local randomizer shuffled, the interval as the engine's
rigorous error bound, and the error against ε from the protocol's data-free plan for the
same number of users. The trade-off curve is the engine's, at the release's n
(:func:`~dpstudio.export.report_curves.release_curve`). No Qt here.
"""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

from dpstudio.engine.queries import QuerySpec
from dpstudio.export.report_input import ReportInput
from dpstudio.export.utility_series import UtilitySeries

__all__ = [
    "PROTOCOL_CURATOR",
    "protocol_caption",
    "protocol_guarantee",
    "protocol_rows",
    "protocol_series",
]

#: The method table's "trust model" line for a protocol release.
PROTOCOL_CURATOR = ("no trusted curator: each person's value left their device only as "
                    "protocol messages (see who sees what)")


def _num(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def protocol_guarantee(inp: ReportInput) -> str:
    """The guarantee paragraph (HTML-escaped): who sees what, what is trusted, the ε.

    Parameters
    ----------
    inp : ReportInput
        The release (its public ``parties``).

    Returns
    -------
    str
    """
    parties = inp.public.get("parties") or {}
    sees = parties.get("sees") or {}
    trusted = parties.get("trusted") or []
    delta = (" (δ = 0: the guarantee never fails)" if inp.delta == 0 else
             f", except with probability at most δ = {inp.delta:g}")
    text = (f"{inp.capability.title.capitalize()}: no one received a raw value. "
            + " ".join(f"The {who} sees {what}." for who, what in sees.items())
            + " Trusted: " + "; ".join(trusted) + ". "
            f"What the analyst receives is differentially private with ε = {inp.epsilon:g}"
            f"{delta}, against changing one person's value (the number of people is "
            "public). ")
    if parties.get("local_guarantee"):
        local = str(parties["local_guarantee"])
        text += local[:1].upper() + local[1:] + ". "
    text += ("An attacker who sees the result and wants to tell what one person's value was "
             "cannot do better than the curve shown: if their test wrongly says \"yes\" to "
             "at most a fraction α of people, it must miss at least the fraction shown.")
    if len(inp.history) > 1:
        spent = sum(h["epsilon"] for h in inp.history)
        spent_d = sum(h["delta"] for h in inp.history)
        text += (f" Counting all {len(inp.history)} releases from this dataset (basic "
                 f"composition), the combined guarantee is ε = {spent:g}, δ = {spent_d:g}: "
                 "the second curve.")
    return html.escape(text)


def protocol_caption(inp: ReportInput) -> str:
    """The values' caption: the interval is the protocol's rigorous error bound.

    Parameters
    ----------
    inp : ReportInput

    Returns
    -------
    str
    """
    if inp.spec.query == "histogram":  # a local frequency oracle shuffled: normal intervals
        return (f"Each interval is a normal {inp.spec.confidence:g} interval around the "
                "unbiased count, from the randomizer's exact variance at each user's ε₀ "
                "(estimated counts plugged in).")
    return (f"The interval is the protocol's error bound: the released value is within it "
            f"of the sum (or mean) of the values as rounded, with probability at least "
            f"{inp.spec.confidence:g} (noise and randomized rounding counted at their worst).")


def protocol_rows(pub: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The method table's noise rows of a protocol release.

    Parameters
    ----------
    pub : dict
        The release's public fields.

    Returns
    -------
    tuple of (str, str)
    """
    parties = pub.get("parties") or {}
    rows = [("users (n, public)", _num(pub.get("n_clients") or pub.get("n"))),
            ("messages per user", _num(pub.get("messages_per_user"))),
            ("bits per message", _num(pub.get("bits_per_message"))),
            ("standard error (bound)", _num(pub.get("stderr")))]
    if pub.get("max_dropouts") is not None:
        rows += [("dropout tolerance (max_dropouts)", _num(pub.get("max_dropouts"))),
                 ("colluding clients planned for", _num(pub.get("corrupt_clients"))),
                 ("noise shares", f"{pub.get('noise')}, total variance "
                                  f"{_num(pub.get('noise_variance'))} (value units²)")]
    if parties.get("local_epsilon") is not None:
        rows.append(("each user's local ε₀", f"{parties['local_epsilon']:.4g} (central ε "
                                            f"after shuffling: {parties['central_epsilon']:g})"))
    for who, what in (parties.get("sees") or {}).items():
        rows.append((f"the {who} sees", str(what)))
    if parties.get("trusted"):
        rows.append(("trusted", "; ".join(parties["trusted"])))
    if pub.get("accounting"):
        rows.append(("accounting", str(pub["accounting"])))
    return tuple(rows)


def protocol_series(spec: QuerySpec, public: dict[str, Any], points: int = 9
                    ) -> UtilitySeries:
    """Error bound of the protocol at each ε, for the same users (its data-free plan).

    Parameters
    ----------
    spec : QuerySpec
        The release's query.
    public : dict
        Its public fields (``trust_model``, ``n`` or ``n_clients``).
    points : int, optional
        Number of ε values (each plans the protocol's noise once; plans are cached).

    Returns
    -------
    UtilitySeries
        NaN where the protocol cannot meet an ε with these users (the blanket above 1).
    """
    from dpstudio.analysis import AnalysisSpec
    from dpstudio.analysis.dispatch import plan
    from dpstudio.export.utility_series import epsilon_grid

    n = int(public.get("n_clients") or public.get("n") or 0)
    eps0 = float(spec.epsilon)
    eps = epsilon_grid(eps0, max(4.0 * eps0, 2.0), points)
    trust_model = str(public.get("trust_model"))

    def half(e: float) -> float:
        try:
            from dataclasses import replace

            return float(plan(AnalysisSpec(trust_model, replace(spec, epsilon=float(e))),
                              n).error_bound)
        except Exception:  # noqa: BLE001 - an ε the protocol cannot meet with n users
            return math.nan

    err = np.array([half(e) for e in eps])
    return UtilitySeries(
        eps, err, half(eps0), f"error bound ({spec.confidence:g})",
        f"The protocol's error bound at each ε for the same {n} users, from its data-free "
        "plan (smaller ε: stronger privacy, more noise).")
