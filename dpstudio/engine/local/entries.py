"""Registry entries of the local randomizers (kind ``"randomizer"``, trust model local).

:data:`ENTRIES` lists them; :mod:`dpstudio.engine.mechanisms` registers them.

``info.build(epsilon=…, k=…)`` builds a frequency oracle for codes ``0..k−1``;
``info.build(epsilon=…, bounds=(lo, hi))`` a mean randomizer; other keyword arguments
are the entry's parameters (``info.resolve(params)`` validates them first).
"""

from __future__ import annotations

from dpstudio.engine.entry import DELTA, EPSILON, MechanismInfo, Param
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.local.frequency import (
    HadamardResponse,
    KaryRR,
    OptimalLocalHashing,
    RandomizedResponse,
    UnaryEncoding,
)
from dpstudio.engine.local.mean import DuchiMean, LocalGaussian, LocalLaplace
from dpstudio.engine.local.sketch import CountMeanSketch, SequenceFragmentPuzzle

__all__ = ["ENTRIES", "HEAVY_HITTER_RANDOMIZERS", "HISTOGRAM_RANDOMIZERS",
           "MEAN_RANDOMIZERS", "sfp_from_params"]

_HASHES = Param("hashes", "int", 64, "Number of hash functions (rows of the sketch).",
                low=1, high=65536, log_scale=True)
_BUCKETS = Param("buckets", "int", 1024, "Buckets per hash function: bits per report.",
                 low=2, high=1 << 20, log_scale=True)
_FRAGMENT_SHARE = Param("fragment_share", "float", 0.5,
                        "Text columns: share of ε spent on word fragments by the "
                        "sequence-fragment puzzle.", low=0.0, high=1.0, low_open=True,
                        high_open=True)
_CATEGORICAL = ("categorical", "integer", "boolean")
_NUMERIC = ("numeric", "integer", "boolean")

# Frequency oracles that also run shuffled (a histogram in the shuffle model, each user at
# the ε₀ that amplification by shuffling allows: dpstudio.engine.shuffle.shuffled_local).
# Under "shuffle" the entry's ε is the central one and δ comes from the release.
_SHUFFLED = ("local", "shuffle")

HISTOGRAM_RANDOMIZERS = ("rr", "krr", "sue", "oue", "olh", "hadamard", "cms")
MEAN_RANDOMIZERS = ("local_laplace", "local_gaussian", "duchi")
HEAVY_HITTER_RANDOMIZERS = ("sfp", "cms")


def _need_k(name: str, k) -> int:
    if k is None:
        raise ParameterError(f"{name} needs the domain size k (the number of categories)")
    return k


def _rr(epsilon, p=0.0, k=2, **_):
    if k != 2:
        raise ParameterError(f"randomized response is for yes/no answers (k = 2); got k = {k}")
    return RandomizedResponse(epsilon, p or None)


def _cms(epsilon, k=None, hashes=64, buckets=1024, debias="exact", hash_seed=0, **_):
    return CountMeanSketch(epsilon, _need_k("cms", k), hashes, buckets, debias, hash_seed)


def sfp_from_params(epsilon, hashes=64, buckets=1024, fragment_share=0.5, hash_seed=0,
                    **_) -> SequenceFragmentPuzzle:
    """The sequence-fragment puzzle built from the ``cms`` or ``sfp`` entry's parameters
    (any ``k`` is ignored: the puzzle's domain is open).

    Parameters
    ----------
    epsilon : float
        The per-user ε, split between the two sketches.
    hashes, buckets : int
        Each sketch's number of hash functions and of buckets.
    fragment_share : float
        Share of ε spent on the fragment sketch, in (0, 1).
    hash_seed : int
        Selects the public hash families.
    **_
        Other entry parameters (``k``, ``debias``), ignored.

    Returns
    -------
    SequenceFragmentPuzzle

    Raises
    ------
    ParameterError
        For a bad parameter.
    """
    return SequenceFragmentPuzzle(epsilon, hashes, buckets, fragment_share,
                                  hash_seed=hash_seed)


def _bounds(name, bounds, lower, upper):
    if bounds is None and lower is not None and upper is not None:
        bounds = (lower, upper)
    if bounds is None:
        raise ParameterError(f"{name} needs declared bounds (e.g. --bounds 0,100)")
    return bounds


_REFS_WANG = "Wang, Blocki, Li & Jha 2017 (USENIX Security)"

#: The registry entries of this module (registered by :mod:`dpstudio.engine.mechanisms`).
ENTRIES = (
    MechanismInfo(
        name="rr", label="Randomized response",
        description="Each user answers a yes/no question truthfully with probability p "
                    "(Warner 1965).",
        trust_models=("local",), value_types=("boolean", "categorical"), kind="randomizer",
        params=(EPSILON, Param("p", "float", 0.0,
                               "Probability of answering truthfully, in (1/2, 1); 0 derives "
                               "it from ε as e^ε/(1+e^ε).", low=0.0, high=1.0,
                               high_open=True)),
        factory=_rr, queries=("histogram",), references=("Warner 1965",)),
    MechanismInfo(
        name="krr", label="K-ary randomized response",
        description="Each user reports their category, or with some probability a random "
                    "other one.",
        trust_models=_SHUFFLED, value_types=_CATEGORICAL, kind="randomizer",
        params=(EPSILON,),
        factory=lambda epsilon, k=None, **_: KaryRR(epsilon, _need_k("krr", k)),
        queries=("histogram",), references=("Kairouz, Oh & Viswanath 2014", _REFS_WANG)),
    MechanismInfo(
        name="sue", label="Symmetric unary encoding",
        description="Each user sends a one-hot vector with every bit flipped (basic "
                    "one-time RAPPOR).",
        trust_models=_SHUFFLED, value_types=_CATEGORICAL, kind="randomizer",
        params=(EPSILON,),
        factory=lambda epsilon, k=None, **_: UnaryEncoding(epsilon, _need_k("sue", k), False),
        queries=("histogram",), references=("Erlingsson, Pihur & Korolova 2014", _REFS_WANG)),
    MechanismInfo(
        name="oue", label="Optimized unary encoding",
        description="Each user sends a one-hot vector: the 1 kept with probability 1/2, "
                    "0s flipped rarely.",
        trust_models=_SHUFFLED, value_types=_CATEGORICAL, kind="randomizer",
        params=(EPSILON,),
        factory=lambda epsilon, k=None, **_: UnaryEncoding(epsilon, _need_k("oue", k), True),
        queries=("histogram",), references=(_REFS_WANG,)),
    MechanismInfo(
        name="olh", label="Optimal local hashing",
        description="Each user hashes their category to g buckets with a random hash, then "
                    "randomizes the bucket.",
        trust_models=_SHUFFLED, value_types=_CATEGORICAL, kind="randomizer",
        params=(EPSILON, Param("g", "int", 0,
                               "Number of hash buckets; 0 picks Wang et al.'s optimum "
                               "round(e^ε) + 1.", low=0, high=65536)),
        factory=lambda epsilon, k=None, g=0, **_: OptimalLocalHashing(
            epsilon, _need_k("olh", k), g or None),
        queries=("histogram",), references=(_REFS_WANG,)),
    MechanismInfo(
        name="hadamard", label="Hadamard response",
        description="Each user reports a column of a Hadamard matrix, biased towards their "
                    "category's row.",
        trust_models=("local",), value_types=_CATEGORICAL, kind="randomizer",
        params=(EPSILON,),
        factory=lambda epsilon, k=None, **_: HadamardResponse(epsilon, _need_k("hadamard", k)),
        queries=("histogram",), references=("Acharya, Sun & Zhang 2019",)),
    MechanismInfo(
        name="cms", label="Count-mean sketch",
        description="Apple's sketch: one hashed, flipped ±1 vector per user; finds frequent "
                    "words in text.",
        trust_models=("local",), value_types=("categorical", "integer", "text"),
        kind="randomizer",
        params=(EPSILON, _HASHES, _BUCKETS,
                Param("debias", "choice", "exact",
                      "exact: solve the hash collisions on the declared categories "
                      "(unbiased); apple: Apple's m/(m−1) correction.",
                      choices=("exact", "apple")),
                _FRAGMENT_SHARE),
        factory=_cms, queries=("histogram", "heavy_hitters"),
        references=("Apple Differential Privacy Team 2017, Learning with Privacy at Scale",)),
    MechanismInfo(
        name="sfp", label="Sequence-fragment puzzle",
        description="Apple's puzzle: finds the frequent words of a text column without a "
                    "dictionary.",
        trust_models=("local",), value_types=("text",), kind="randomizer",
        params=(EPSILON, _HASHES, _BUCKETS, _FRAGMENT_SHARE),
        factory=sfp_from_params, queries=("heavy_hitters",),
        references=("Apple Differential Privacy Team 2017, Learning with Privacy at Scale",)),
    MechanismInfo(
        name="local_laplace", label="Local Laplace",
        description="Each user adds Laplace noise of scale (upper − lower)/ε, drawn exactly on "
                    "a fine grid.",
        trust_models=("local",), value_types=_NUMERIC, kind="randomizer", params=(EPSILON,),
        factory=lambda epsilon, bounds=None, lower=None, upper=None, **_: LocalLaplace(
            epsilon, _bounds("local_laplace", bounds, lower, upper)),
        queries=("mean",), references=("Dwork, McSherry, Nissim & Smith 2006",)),
    MechanismInfo(
        name="local_gaussian", label="Local Gaussian",
        description="Each user adds Gaussian noise calibrated to upper − lower, ε and δ, "
                    "drawn exactly.",
        trust_models=("local",), value_types=_NUMERIC, kind="randomizer",
        params=(EPSILON, DELTA), needs_delta=True,
        factory=lambda epsilon, delta=1e-6, bounds=None, lower=None, upper=None, **_:
            LocalGaussian(epsilon, _bounds("local_gaussian", bounds, lower, upper), delta),
        queries=("mean",), references=("Balle & Wang 2018",)),
    MechanismInfo(
        name="duchi", label="Duchi et al. mean",
        description="Each user sends one bit: ±B with a probability affine in their value.",
        trust_models=("local",), value_types=_NUMERIC, kind="randomizer", params=(EPSILON,),
        factory=lambda epsilon, bounds=None, lower=None, upper=None, **_: DuchiMean(
            epsilon, _bounds("duchi", bounds, lower, upper)),
        queries=("mean",), references=("Duchi, Jordan & Wainwright 2018 (JASA)",)),
)
