"""The reproducible script of a shuffle-model or secure-aggregation release.

It runs the same protocol with ``dpstudio`` as a library: every user's messages encoded
(and, for secure aggregation, masked with the real pairwise masks) from a fresh
:class:`~dpstudio.engine.rng.SecureSource`, shuffled or summed, analyzed; and prints the
public fields only. The protocol is calibrated for the (ε, δ) the release asked for, so
the script plans exactly the same noise (the guarantee it meets may be slightly below
the request: the cloak's δ, for one, is what its encoding leaves over).
"""

from __future__ import annotations

import textwrap
from typing import Any

from dpstudio.engine.queries import QuerySpec
from dpstudio.export.script_preamble import (
    DATASET_LINES,
    END,
    USAGE,
    doc_safe,
    preamble,
    spec_lines,
)

__all__ = ["protocol_script"]

_PREAMBLE = preamble("randomness")

_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduce DP Studio release #{release_id} ({title} {query} of {column_repr}) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}
(SHA-256 {fingerprint}). {parties}

''' + _PREAMBLE.warning + USAGE + '''
import json
import sys
from pathlib import Path

from dpstudio.analysis import AnalysisSpec, run
from dpstudio.analysis.protocol_release import protocol_public
from dpstudio.data import load_table, sha256_file, {reader}
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SecureSource

''' + DATASET_LINES + '''\
TRUST_MODEL = {trust_model!r}

# The protocol is calibrated for this (epsilon, delta): the same plan as the release.
SPEC = QuerySpec(
{spec_lines}
)


''' + _PREAMBLE.main + '''\
    frame = load_table(DATASET{header_arg})
    values = {reader}(frame, SPEC.column)
    result = run(AnalysisSpec(TRUST_MODEL, SPEC), values, SecureSource())
    print(json.dumps(protocol_public(result), indent=2, allow_nan=False))  # public only
''' + END


def protocol_script(spec: QuerySpec, public: dict[str, Any], trust_model: str, title: str,
                    **common: Any) -> str:
    """The script's source text.

    Parameters
    ----------
    spec : QuerySpec
        The release's query as shown (ε and δ the guarantee met).
    public : dict
        The release's public fields: ``calibrated_for`` (the (ε, δ) the protocol was
        calibrated for) and ``parties``.
    trust_model : str
        ``"shuffle"`` or ``"distributed"``.
    title : str
        The trust model's title ("shuffle model", "secure aggregation").
    **common
        The script's common fields (release id, dataset, reader, …).

    Returns
    -------
    str
    """
    from dataclasses import replace

    target = public.get("calibrated_for") or {}
    calibrated = replace(spec, epsilon=float(target.get("epsilon", spec.epsilon)),
                         delta=float(target.get("delta", spec.delta)))
    parties = public.get("parties") or {}
    sees = "; ".join(f"the {who} sees {what}" for who, what in
                     (parties.get("sees") or {}).items())
    trusted = "; ".join(parties.get("trusted") or [])
    text = doc_safe(f"{title.capitalize()}: {sees}. Trusted: {trusted}.")
    # Wrapped at 88 columns: it sits in the docstring.
    parties_doc = textwrap.fill(text, 88, break_long_words=False, break_on_hyphens=False)
    return _TEMPLATE.format(spec_lines=spec_lines(calibrated), trust_model=trust_model,
                            title=title, parties=parties_doc, **common)
