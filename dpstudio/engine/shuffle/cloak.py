"""The "invisibility cloak" multi-message summation protocol of Ghazi, Pagh & Velingker
(2019, "Scalable and Differentially Private Distributed Aggregation in the Shuffled
Model"), with its parameters derived here in closed form.

Protocol (their Algorithms 1 and 2, with a pre-randomizer as in their §2.4):

- *Encoder.* User i rounds its value (scaled to [0, 1]) to x̄_i ∈ {0, …, p} (randomized
  rounding at precision 1/p), adds a noise share η_i (pre-randomizer, below), and sends
  m messages: m − 1 uniform residues modulo q and one that makes the m sum to
  z_i = x̄_i + η_i modulo q.
- *Shuffler.* All n·m messages are permuted uniformly (CSPRNG permutation).
- *Analyzer.* Sums all messages modulo q and reads the residue as the integer nearest
  the middle of the feasible range, then rescales: the result is Σ x̄_i + Σ η_i exactly
  unless the noisy sum wrapped around (probability reported, below 2⁻⁴⁰ by the choice
  of q).

Privacy, in two steps.

1. *The encoding is close to an ideal secure sum* (total variation τ). For two users with
   inputs (a, b) and (a′, b′) of the same sum modulo q, let Y be the 2m messages. Each
   m-subset I of them has a sum; following GPV19's Lemma 1, fix one of user 1's messages
   e and count the N′ = C(2m−1, m−1) − 1 subsets containing e other than user 1's own
   set: their sums are uniform and **pairwise independent** for odd q (the 2×2 minors of
   two distinct subsets' coefficient rows are ±1 or ±2 and never all 0), so Chebyshev
   and a union over the q residues give: with probability ≥ 1 − q²/(γ²N′) every residue
   s is hit by (1 ± γ)N′/q of them; the m-subsets whose sum is s then number
   2(1 ± γ)N′/q (+ at most 2, the two users' own sets), since a subset and its complement
   have sums adding to a + b. The messages are also all distinct with probability
   ≥ 1 − C(2m, 2)/q. On that event P(Y | a, b) = #{I : ΣI = a}·(m!)²·q^{−2(m−1)}, so
   P(Y | a′, b′)/P(Y | a, b) ≥ (1 − γ)/(1 + γ + q/N′), whence

       TV ≤ τ₂ := C(2m, 2)/q + q²/(γ²N′) + 2γ + q/N′      (we take γ = (q²/N′)^{1/3}).

   Any two input vectors of n users with the same sum are n − 1 such two-user swaps
   apart (shuffling in the other users' messages is post-processing), so
   TV(encoding(z), encoding(z′)) ≤ τ = (n − 1)·τ₂.

2. *Noise makes the sum private.* The pre-randomizer shares (Skellam or discrete
   Gaussian, :mod:`dpstudio.engine.distributed.noise`) make the integer sum Σ z_i
   (ε, δ_N)-DP against replacing one user's value (sensitivity p). As in the reduction of
   Balle, Bell, Gascón & Nissim (2020, "Private Summation in the Multi-Message Shuffle
   Model"), for any output set T:
   P[out(X) ∈ T] ≤ P[ideal(ΣX) ∈ T] + τ ≤ e^ε P[ideal(ΣX′) ∈ T] + δ_N + τ
   ≤ e^ε P[out(X′) ∈ T] + δ_N + (1 + e^ε)τ. The protocol is (ε, δ)-DP with
   δ = δ_N + (1 + e^ε)τ; we spend δ_N = 0.9δ and τ = 0.1δ/(1 + e^ε).

Parameters. For each m the modulus q is chosen (odd, at least what the noisy sum needs
so as not to wrap, below 2⁶³) to minimize τ₂, and m is the smallest number of messages
with (n − 1)·τ₂ ≤ τ. Like GPV19's, this gives logarithmically many messages (in n and
1/δ) of logarithmically many bits; the constants are ours, from the derivation above
(the paper's own constants were not available to us in readable form). Examples at
ε = 1, δ = 10⁻⁶ (τ ≈ 2.7·10⁻⁸): n = 10² → 102 messages of 48 bits; n = 10⁴ → 119 of
55 bits; n = 10⁶ → 136 of 62 bits. Beyond a few million users q would need 2⁶³ or more
and the parameters are refused.

Without a pre-randomizer (``noise="none"``) the protocol returns exactly the sum of the
rounded inputs and protects only against changes that keep the sum (total variation τ);
it is no DP release against a change of one user's value, and is not offered as one.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.distributed.noise import DistributedNoise
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import Source

__all__ = [
    "CloakParameters",
    "cloak_analyze",
    "cloak_encode",
    "cloak_parameters",
    "cloak_shuffle",
    "swap_distance",
]

# Residues must fit in int64 and any two of them in uint64: q < 2^63.
_MAX_Q = (1 << 63) - 1
_MAX_MESSAGES = 2000
# Fraction of the δ budget spent on the encoding's distance to an ideal sum, and the
# target probability that the noisy sum wraps around modulo q.
TV_SHARE = 0.1
OVERFLOW_TARGET = 2.0**-40


@functools.lru_cache(maxsize=4096)  # math.comb of large m dominates repeated planning
def _log_n_prime(m: int) -> float:
    """ln N′ with N′ = C(2m−1, m−1) − 1 (exact integer arithmetic, then the logarithm)."""
    return math.log(math.comb(2 * m - 1, m - 1) - 1) if m >= 2 else -math.inf


def swap_distance(m: int, q: int) -> float:
    """τ₂: bound on the total variation between the encodings of two users whose inputs
    have the same sum modulo q (module doc, step 1), at the best γ = (q²/N′)^{1/3}.

    Parameters
    ----------
    m : int
        Messages per user.
    q : int
        The modulus (odd).

    Returns
    -------
    float
        τ₂ in [0, 1]; 1 (no guarantee) for ``m < 2`` or when γ ≥ 1.
    """
    if m < 2:
        return 1.0
    log_np = _log_n_prime(m)
    log_q = math.log(q)
    dup = math.comb(2 * m, 2) / q
    gamma = math.exp((2.0 * log_q - log_np) / 3.0)
    if gamma >= 1:
        return 1.0
    return min(1.0, dup + 3.0 * gamma + math.exp(log_q - log_np))


def _best_q(m: int, q_min: int) -> int:
    """Odd q ≥ q_min minimizing τ₂(m, q) (stationary point of C(2m,2)/q + 3(q²/N′)^{1/3})."""
    a = math.comb(2 * m, 2)
    log_q = (3.0 / 5.0) * math.log(a / 2.0) + _log_n_prime(m) / 5.0
    q = max(q_min, int(min(math.exp(min(log_q, 62.9 * math.log(2))), _MAX_Q)))
    q = min(q, _MAX_Q)
    return q if q % 2 else q + 1 if q + 1 <= _MAX_Q else q - 1


@dataclass(frozen=True)
class CloakParameters:
    """Messages per user m, modulus q (odd) and the guarantee figures of the encoding.

    Attributes
    ----------
    n : int
        Number of users.
    messages : int
        ``m``, messages per user.
    modulus : int
        ``q``, odd, below 2^63.
    precision : int
        ``p``: each value is an integer in ``{0, …, p}``.
    tv : float
        Total variation of the encoding from an ideal secure sum, ``(n − 1)·τ₂``.
    noise_halfwidth : int
        The noisy sum's distance from ``[0, n·p]`` is below this with probability
        ≥ 1 − 2⁻⁴⁰.
    """

    n: int
    messages: int
    modulus: int
    precision: int
    tv: float  # total variation of the encoding from an ideal secure sum, (n − 1)·τ₂
    noise_halfwidth: int  # the noisy sum's distance from [0, n·p] is below this w.p. ≥ 1 − 2⁻⁴⁰

    @property
    def bits_per_message(self) -> int:
        """Bits of one message (a residue modulo q)."""
        return (self.modulus - 1).bit_length()

    @property
    def overflow_margin(self) -> int:
        """How far the noise may push the sum before the decoded residue wraps."""
        return (self.modulus - 1) // 2 - math.ceil(self.n * self.precision / 2)


def cloak_parameters(n: int, precision: int, tv_target: float, noise_halfwidth: int = 0
                     ) -> CloakParameters:
    """The smallest m (and its q) whose encoding is within ``tv_target`` of an ideal sum,
    with q large enough that a noisy sum within ``noise_halfwidth`` of [0, n·p] never
    wraps around.

    Parameters
    ----------
    n : int
        Number of users, ≥ 2.
    precision : int
        ``p``, the integer range of one value.
    tv_target : float
        Budget τ for the encoding's total variation from an ideal sum, in (0, 1).
    noise_halfwidth : int
        How far the pre-randomizer's noise may push the sum (:func:`cloak_noise_halfwidth`).

    Returns
    -------
    CloakParameters

    Raises
    ------
    ParameterError
        For fewer than 2 users, a budget outside (0, 1), a sum that does not fit a 63-bit
        modulus, or more than 2000 messages per user.
    """
    n, p = int(n), int(precision)
    if n < 2:
        raise ParameterError(f"the cloak needs at least 2 users, got {n}")
    if not 0 < tv_target < 1:
        raise ParameterError(f"the encoding's distance budget must be in (0, 1), got {tv_target}")
    q_min = n * p + 2 * int(noise_halfwidth) + 3
    if q_min > _MAX_Q:
        raise ParameterError("the sum of this many users' values does not fit a 63-bit "
                             "modulus: use fewer precision bits")
    for m in range(2, _MAX_MESSAGES + 1):
        q = _best_q(m, q_min)
        tv = (n - 1) * swap_distance(m, q)
        if tv <= tv_target:
            return CloakParameters(n, m, q, p, tv, int(noise_halfwidth))
    raise ParameterError(f"the cloak would need more than {_MAX_MESSAGES} messages per user "
                         f"for n = {n} and this δ")


# ------------------------------------------------------------------------ the protocol


def cloak_encode(z: np.ndarray, params: CloakParameters, source: Source) -> np.ndarray:
    """Each user's m messages, (n, m) uint64 residues modulo q summing to z_i modulo q:
    m − 1 uniform (exact, rejection-sampled) and the last one fixing the sum.

    Parameters
    ----------
    z : array_like of int, shape (n,)
        Each user's rounded value plus noise share (any integer; taken modulo q).
    params : CloakParameters
        ``m`` and ``q``.
    source : Source
        The random source.

    Returns
    -------
    numpy.ndarray of uint64, shape (n, m)
    """
    zz = np.asarray(z, dtype=np.int64).ravel()
    n, m, q = zz.size, params.messages, params.modulus
    out = np.empty((n, m), dtype=np.uint64)
    out[:, : m - 1] = sampling.uniform_int(q, n * (m - 1), source).reshape(n, m - 1)
    qq = np.uint64(q)
    acc = np.zeros(n, dtype=np.uint64)
    for j in range(m - 1):  # a few hundred vectorized steps; residues < 2^63, no overflow
        acc = (acc + out[:, j]) % qq
    target = (zz % np.int64(q)).astype(np.uint64)  # numpy's % is non-negative for q > 0
    out[:, m - 1] = (target + (qq - acc)) % qq
    return out


def cloak_shuffle(messages: np.ndarray, source: Source) -> np.ndarray:
    """All messages in a uniformly random order (the shuffler).

    Parameters
    ----------
    messages : array_like of uint64
        Every user's messages (flattened).
    source : Source
        Draws the permutation (a CSPRNG for a release).

    Returns
    -------
    numpy.ndarray of uint64, shape (n·m,)
    """
    flat = np.asarray(messages, dtype=np.uint64).ravel()
    return flat[sampling.permutation(flat.size, source)]


def residue_sum(messages: np.ndarray, modulus: int) -> int:
    """Σ messages modulo q, by pairwise reduction (no intermediate exceeds 2q < 2^64).

    Parameters
    ----------
    messages : array_like of uint64
        Residues below ``modulus``.
    modulus : int
        q, below 2^63.

    Returns
    -------
    int
        In ``[0, q)``.
    """
    x = np.asarray(messages, dtype=np.uint64).ravel()
    q = np.uint64(modulus)
    if x.size == 0:
        return 0
    while x.size > 1:
        if x.size % 2:
            x = np.append(x, np.uint64(0))
        x = (x[0::2] + x[1::2]) % q
    return int(x[0])


def cloak_analyze(shuffled: np.ndarray, params: CloakParameters) -> int:
    """The analyzer: the integer sum, read from its residue as the value nearest the middle
    of the feasible range [0, n·p].

    Parameters
    ----------
    shuffled : array_like of uint64
        All the messages.
    params : CloakParameters
        The protocol's parameters.

    Returns
    -------
    int
        ``Σ z_i``, exact unless the noisy sum wrapped around modulo q.
    """
    q = params.modulus
    total = residue_sum(shuffled, q)
    center = params.n * params.precision // 2
    half = (q - 1) // 2
    return (total - center + half) % q - half + center


def cloak_noise_halfwidth(noise: DistributedNoise | None, n: int) -> int:
    """Noise bound the modulus must accommodate (exceeded with probability ≤ 2⁻⁴⁰).

    Parameters
    ----------
    noise : DistributedNoise or None
        The pre-randomizer; None for none.
    n : int
        Number of users.

    Returns
    -------
    int
        In grid steps; 0 without noise.
    """
    return 0 if noise is None else noise.tail_bound(n, OVERFLOW_TARGET)
