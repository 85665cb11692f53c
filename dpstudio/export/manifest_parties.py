"""What a shuffle-model or secure-aggregation release's manifest adds.

``parties``: what each party sees and what is trusted (the analyzer's shuffled multiset of
messages; the server's masked sum), and where the protocol is a local randomizer shuffled,
each user's local ε₀ beside the central ε. ``protocol``: the figures the noise was planned
with (users, messages, the (ε, δ) it was calibrated for, secure aggregation's dropout
tolerance and colluding clients), so that an auditor can re-plan the same noise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PROTOCOL_KEYS", "protocol_sections"]

#: The public fields a manifest's ``protocol`` section repeats (when present).
PROTOCOL_KEYS = ("n", "n_clients", "messages_per_user", "bits_per_message", "calibrated_for",
                 "accounting", "details", "stderr", "error_bound", "max_dropouts", "dropouts",
                 "corrupt_fraction", "corrupt_clients", "honest_clients", "precision", "noise",
                 "noise_variance", "honest_noise_variance", "central_stderr",
                 "overflow_probability")


def protocol_sections(public: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest's ``parties`` and ``protocol`` sections; empty for any other release.

    Parameters
    ----------
    public : mapping
        The release's public fields (a protocol's hold ``parties``).

    Returns
    -------
    dict
        ``{"parties": …, "protocol": …}`` or ``{}``.
    """
    parties = public.get("parties")
    if not parties:
        return {}
    return {"parties": dict(parties),
            "protocol": {k: public[k] for k in PROTOCOL_KEYS if k in public}}
