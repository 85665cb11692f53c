"""The shuffle model: amplification by shuffling and multi-message summation protocols.

Modules
-------
amplification  central (ε, δ) of n shuffled ε₀-LDP reports: FMT21's numerical bound and
               the 2019 closed form; the inverse (largest ε₀ for a target ε)
cloak          Ghazi, Pagh & Velingker's invisibility cloak: encoder, shuffler, analyzer,
               and its parameters (messages per user, modulus) with their derivation
blanket        Balle, Bell, Gascón & Nissim's single-message privacy-blanket protocol
summation      the registry entries ``cloak`` and ``blanket``; :func:`run_shuffle_sum`
               (simulation on a column) and :func:`plan_shuffle_sum` (figures only)
shuffled_local a local frequency oracle (K-RR, SUE, OUE, OLH) shuffled: a histogram, each
               user at the ε₀ FMT21 amplification allows for the central (ε, δ)
"""

from dpstudio.engine.shuffle.amplification import (
    BOUNDS,
    AmplificationResult,
    amplify,
    largest_local_epsilon,
    shuffle_epsilon,
)
from dpstudio.engine.shuffle.summation import (
    BlanketProtocol,
    CloakProtocol,
    ShuffleResult,
    plan_shuffle_sum,
    run_shuffle_sum,
)

__all__ = [
    "BOUNDS",
    "AmplificationResult",
    "BlanketProtocol",
    "CloakProtocol",
    "ShuffleResult",
    "amplify",
    "largest_local_epsilon",
    "plan_shuffle_sum",
    "run_shuffle_sum",
    "shuffle_epsilon",
]
