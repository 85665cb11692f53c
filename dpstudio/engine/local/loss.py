"""What one local report drew, as a ledger's privacy-loss description.

Local neighbours differ in one person's value x → x′ (replace-one), and each report is
the randomizer's output on its owner's value alone, so a release's privacy loss is that
of one report. Each randomizer is described exactly where its worst-case pair of output
laws is known (:mod:`~dpstudio.engine.tradeoff.pairs` derives each pair):

=====================  =====================================================================
randomizer             description
=====================  =====================================================================
rr, krr                ``randomized_response`` with its k, at ε = ln(p/q)
duchi                  ``randomized_response`` with k = 2 (the inputs ±1 give binary RR)
sue, oue               ``pair``: the two differing bits (classes −ε, 0, +ε)
olh                    ``pair``: seed and bucket, with the hash family's collision c
hadamard               ``pair``: the columns of C_x ∖ C_x′, C_x′ ∖ C_x and the rest
cms                    ``pair``: two values no hash maps together (SUE's bits at ε)
sfp                    ``pair``: the product of the fragment and word sketches' pairs
local_laplace          ``discrete_laplace``: the grid noise (scale, Δ in grid steps)
local_gaussian         ``discrete_gaussian``: the grid noise (σ, Δ in grid steps)
=====================  =====================================================================

A randomizer not listed is described by its own (ε, δ) (``pure``, or ``approx`` for
δ > 0): the worst case of any mechanism with that guarantee, pessimistic and correct.
Every description claims at least the (ε, δ) the release states, so basic composition
charges it the same.
"""

from __future__ import annotations

from typing import Any

from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.errors import EngineError
from dpstudio.engine.tradeoff.pairs import (
    LossPair,
    count_mean_sketch_pair,
    hadamard_pair,
    local_hashing_pair,
    product_pair,
    unary_encoding_pair,
)

__all__ = ["randomizer_loss", "randomizer_pair"]


def randomizer_pair(oracle: Any) -> LossPair | None:
    """The worst-case pair of one report of a pure finite-output randomizer, if known.

    Parameters
    ----------
    oracle : LocalRandomizer
        A built randomizer (read by its ``name``, ``epsilon`` and, for OLH, ``g`` and
        ``collision``; for the sequence-fragment puzzle ``eps_fragment``).

    Returns
    -------
    LossPair or None
        None for a randomizer without a pair here (randomized response, the mean
        randomizers, or one this module does not know).
    """
    name = getattr(oracle, "name", None)
    eps = getattr(oracle, "epsilon", None)
    if eps is None:
        return None
    eps = float(eps)
    if name in ("sue", "oue"):
        return unary_encoding_pair(eps, bool(getattr(oracle, "optimized", name == "oue")))
    if name == "olh":
        return local_hashing_pair(eps, int(oracle.g), float(oracle.collision))
    if name == "hadamard":
        return hadamard_pair(eps)
    if name == "cms":
        return count_mean_sketch_pair(eps)
    if name == "sfp":
        frag = float(oracle.eps_fragment)
        return product_pair([count_mean_sketch_pair(frag),
                             count_mean_sketch_pair(eps - frag)])
    return None


def randomizer_loss(oracle: Any, epsilon: float, delta: float = 0.0) -> LossDescription:
    """The description of one report of ``oracle`` (module docstring).

    Parameters
    ----------
    oracle : LocalRandomizer
        The randomizer that drew the reports.
    epsilon, delta : float
        The per-user (ε, δ) the release states; the description claims at least these.

    Returns
    -------
    LossDescription
        Exact for the randomizers of the table above; ``pure``/``approx`` of (ε, δ)
        otherwise (and whenever an exact description would not cover the stated claim).
    """
    eps, dlt = float(epsilon), float(delta)
    try:
        found = _exact(oracle, eps, dlt)
    except EngineError:  # a randomizer whose own fields do not describe it: stay safe
        found = None
    if found is not None and found.epsilon >= eps and found.delta >= dlt:
        return found
    if dlt > 0:
        return LossDescription("approx", epsilon=eps, delta=dlt)
    return LossDescription("pure", epsilon=eps)


def _exact(oracle: Any, eps: float, dlt: float) -> LossDescription | None:
    from dpstudio.engine.local.frequency import KaryRR
    from dpstudio.engine.local.mean import DuchiMean

    name = getattr(oracle, "name", None)
    if name in ("krr", "rr") and isinstance(oracle, KaryRR) and not dlt:
        return LossDescription("randomized_response", epsilon=max(eps, oracle.epsilon),
                               k=int(oracle.k))
    if name == "duchi" and isinstance(oracle, DuchiMean) and not dlt:
        return LossDescription("randomized_response", epsilon=max(eps, oracle.epsilon), k=2)
    noise = getattr(oracle, "noise", None)
    if name in ("local_laplace", "local_gaussian") and noise is not None:
        found = LossDescription.from_integer_noise(noise)
        if found.epsilon < eps or found.delta < dlt:  # claim what the release states
            found = LossDescription(found.mechanism, epsilon=max(eps, found.epsilon),
                                    delta=max(dlt, found.delta), scale=found.scale,
                                    sensitivity=found.sensitivity,
                                    coordinates=found.coordinates)
        return found
    if dlt:
        return None
    pair = randomizer_pair(oracle)
    return None if pair is None else LossDescription.from_pair(pair, eps)
