"""Local differential privacy: each record is randomized before it leaves its owner.

Protocols (registry names in brackets), all vectorized over whole columns with exact coins:

* frequency oracles, counts of values ``0..k−1`` — randomized response [``rr``], K-ary RR
  [``krr``], unary encodings [``sue``, ``oue``], optimal local hashing [``olh``], Hadamard
  response [``hadamard``], Apple's count-mean sketch [``cms``];
* heavy hitters of a text column without a dictionary — Apple's sequence-fragment puzzle
  [``sfp``] over two count-mean sketches (``cms`` on text answers the same);
* means of bounded numbers — local Laplace [``local_laplace``], local Gaussian
  [``local_gaussian``], Duchi et al.'s one-bit randomizer [``duchi``].

``REGISTRY.get(name).build(epsilon=…, k=…)`` (or ``bounds=(lo, hi)``) builds the
protocol object: ``randomize(values, source)`` (client), ``estimate(reports)`` and
``variance(n, counts)`` (server), ``report_keys``/``to_records`` (the collector's view).
:func:`run_local` does all of it for one column. Every row of the column sends exactly
one report, whatever its value (:mod:`~dpstudio.engine.local.respond`): who answers is
never itself released.

The registry entries are in :mod:`~dpstudio.engine.local.entries`. The runner's names
(:func:`run_local`, :func:`collect_reports`, ``Collected``, ``LocalResult``,
``OTHER_LABEL``) are loaded on first use (:func:`__getattr__`): the runner reads the
registry, and the registry's list of mechanisms imports this package for its
randomizers, so importing them here would make the two import each other.
"""

from __future__ import annotations

from typing import Any

from dpstudio.engine.local.base import (
    POSTPROCESS,
    FrequencyOracle,
    LocalRandomizer,
    MeanOracle,
    PureFrequencyOracle,
    postprocess_counts,
    project_simplex,
)
from dpstudio.engine.local.frequency import (
    KaryRR,
    OLHReports,
    OptimalLocalHashing,
    RandomizedResponse,
    UnaryEncoding,
)
from dpstudio.engine.local.hadamard import HadamardResponse
from dpstudio.engine.local.mean import DuchiMean, LocalGaussian, LocalLaplace
from dpstudio.engine.local.sketch import (
    CMSReports,
    CountMeanSketch,
    SequenceFragmentPuzzle,
    SFPReports,
)

__all__ = [
    "OTHER_LABEL",
    "POSTPROCESS",
    "CMSReports",
    "Collected",
    "CountMeanSketch",
    "DuchiMean",
    "FrequencyOracle",
    "HadamardResponse",
    "KaryRR",
    "LocalGaussian",
    "LocalLaplace",
    "LocalRandomizer",
    "LocalResult",
    "MeanOracle",
    "OLHReports",
    "OptimalLocalHashing",
    "PureFrequencyOracle",
    "RandomizedResponse",
    "SFPReports",
    "SequenceFragmentPuzzle",
    "UnaryEncoding",
    "collect_reports",
    "postprocess_counts",
    "project_simplex",
    "run_local",
]

_RESPOND = ("OTHER_LABEL",)
_RUN = ("Collected", "LocalResult", "collect_reports", "run_local")


def __getattr__(name: str) -> Any:
    """The runner's names, imported on first use (PEP 562; see the module docstring).

    Raises
    ------
    AttributeError
        For a name this package does not export.
    """
    if name in _RESPOND:
        from dpstudio.engine.local import respond as module
    elif name in _RUN:
        from dpstudio.engine.local import run as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_RESPOND) | set(_RUN))
