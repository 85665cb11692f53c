"""Apple's sketches for the local model (Apple Differential Privacy Team 2017, "Learning
with Privacy at Scale"): one import place for both.

* :mod:`~dpstudio.engine.local.cms`: the private count-mean sketch (Algorithms 1–3), its
  public hash family, the two debiasings and their exact variances.
* :mod:`~dpstudio.engine.local.sfp`: the sequence-fragment puzzle (Algorithms 9–10),
  which discovers frequent unknown words through two count-mean sketches.
"""

from __future__ import annotations

from dpstudio.engine.local.cms import (
    EXACT_MAX_K,
    CMSReports,
    CountMeanSketch,
    cms_hash,
    code_keys,
)
from dpstudio.engine.local.sfp import (
    Discovery,
    SequenceFragmentPuzzle,
    SFPReports,
    word_fingerprints,
)

__all__ = [
    "EXACT_MAX_K",
    "CMSReports",
    "CountMeanSketch",
    "Discovery",
    "SFPReports",
    "SequenceFragmentPuzzle",
    "cms_hash",
    "code_keys",
    "word_fingerprints",
]
