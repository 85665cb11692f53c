"""Pairwise-masked secure aggregation (after Bonawitz et al., CCS 2017), simulated.

n clients each hold an integer vector modulo q = 2^b. Every pair i < j shares a 256-bit
seed s_ij, and every client has a private 256-bit self-mask seed b_i. Client i sends

    y_i = x_i + PRF(b_i) + Σ_{j>i} PRF(s_ij) − Σ_{j<i} PRF(s_ji)   (mod 2^b),

so every pair mask appears once with + and once with −: the sum over all clients of y_i
is Σ x_i + Σ PRF(b_i). After the masked vectors are in, the server asks the survivors to
reveal, for each client, either its self-mask seed (if its y_i arrived) or its pair seeds
(if it dropped out) — never both — and removes the self masks of the survivors and the
unmatched pair masks of the dropped clients. The result is Σ_{i survived} x_i mod 2^b.

Each y_i alone is uniform modulo 2^b (the self mask alone sees to that), and so is any
difference y_i − y_k: the server learns nothing from single messages or pairs, only the
sum (up to the PRF's security).

The PRF expands the **full** 256-bit seed with a real cryptographic function: SHAKE-128
(``hashlib``) or AES-256 in counter mode (``cryptography``) keyed with the seed, with a
domain-separation label per use. Masks are words of 64 bits reduced modulo 2^b, which
is exact since 2^b divides 2^64.

What is simplified, and what a deployment does instead:

- **Key agreement.** The pair seeds are drawn here from the random source; a deployment
  derives s_ij by Diffie–Hellman (e.g. X25519) between i's and j's published keys,
  hashed to 256 bits, so that no party but i and j knows it.
- **Secret sharing.** Bonawitz et al. split each client's self-mask seed and DH secret
  key with Shamir's t-out-of-n scheme; the server reconstructs one or the other from any
  t survivors. Here reconstruction is modelled as "revealed if at least t clients
  survived" (t = ⌊n/2⌋ + 1, the honest-but-curious threshold), without the shares.
- **Cost.** The masks are built with a Python loop over the n(n − 1)/2 pairs (one PRF call
  each, vectors handled by numpy): fine for a few hundred clients, quadratic beyond.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import Source

__all__ = [
    "PRFS",
    "SecAggSession",
    "expand_seed",
    "setup_session",
]

PRFS = ("shake128", "aes256ctr")

_PAIR_LABEL = b"dpstudio/secagg/pair-mask/v1"
_SELF_LABEL = b"dpstudio/secagg/self-mask/v1"


def expand_seed(seed: bytes, words: int, prf: str = "shake128", label: bytes = _PAIR_LABEL
                ) -> np.ndarray:
    """``words`` pseudorandom 64-bit words from a 32-byte seed (uint64 array).

    SHAKE-128 over ``label ‖ seed``, or the AES-256-CTR keystream under key ``seed`` with
    the first 16 bytes of SHA-256(label) as the initial counter block.
    """
    if len(seed) != 32:
        raise ParameterError("a mask seed must be 32 bytes (256 bits)")
    nbytes = 8 * int(words)
    if prf == "shake128":
        stream = hashlib.shake_128(label + seed).digest(nbytes)
    elif prf == "aes256ctr":
        nonce = hashlib.sha256(label).digest()[:16]
        stream = Cipher(algorithms.AES(seed), modes.CTR(nonce)).encryptor().update(bytes(nbytes))
    else:
        raise ParameterError(f"prf must be one of {', '.join(PRFS)}; got {prf!r}")
    return np.frombuffer(stream, dtype=np.uint64).copy()


def _seeds(count: int, source: Source) -> np.ndarray:
    """``count`` 256-bit seeds as rows of 32 bytes."""
    return source.uint64(4 * int(count)).view(np.uint8).reshape(int(count), 32).copy()


@dataclass
class SecAggSession:
    """One round of secure aggregation among ``n`` clients on vectors of ``dim`` integers
    modulo 2^``bits``: the seeds (from the simulated key agreement) and the PRF."""

    n: int
    bits: int
    dim: int
    prf: str
    pair_seeds: np.ndarray  # (n(n−1)/2, 32) uint8, pairs (i, j), i < j, in row-major order
    self_seeds: np.ndarray  # (n, 32) uint8
    threshold: int

    @property
    def modulus(self) -> int:
        return 1 << self.bits

    @property
    def _low(self) -> np.uint64:
        return np.uint64(self.modulus - 1)

    def pair_index(self, i: int, j: int) -> int:
        """Row of s_ij (i < j) in ``pair_seeds``."""
        return i * self.n - i * (i + 1) // 2 + (j - i - 1)

    def _pair_mask(self, i: int, j: int) -> np.ndarray:
        return expand_seed(self.pair_seeds[self.pair_index(i, j)].tobytes(), self.dim,
                           self.prf)

    def _self_mask(self, i: int) -> np.ndarray:
        return expand_seed(self.self_seeds[i].tobytes(), self.dim, self.prf, _SELF_LABEL)

    def client_masks(self) -> np.ndarray:
        """Every client's total mask, (n, dim) uint64 modulo 2^64 (O(n²) PRF calls)."""
        masks = np.zeros((self.n, self.dim), dtype=np.uint64)
        for i in range(self.n):
            masks[i] += self._self_mask(i)
            for j in range(i + 1, self.n):
                m = self._pair_mask(i, j)
                masks[i] += m  # uint64 arithmetic wraps modulo 2^64
                masks[j] -= m
        return masks

    def mask(self, inputs: np.ndarray) -> np.ndarray:
        """The clients' messages y_i (n, dim) uint64 in [0, 2^bits), from integer inputs
        (any sign; taken modulo 2^bits)."""
        x = np.asarray(inputs)
        if x.ndim == 1:
            x = x.reshape(-1, 1)
        if x.shape != (self.n, self.dim):
            raise ParameterError(f"expected inputs of shape ({self.n}, {self.dim}), "
                                 f"got {x.shape}")
        wrapped = x.astype(np.int64).view(np.uint64)  # two's complement = value mod 2^64
        return (wrapped + self.client_masks()) & self._low

    def reveal(self, survivors: np.ndarray
               ) -> tuple[dict[int, bytes], dict[tuple[int, int], bytes]]:
        """What the survivors reveal: self-mask seeds of the survivors, pair seeds of every
        (survivor, dropped) pair — if at least ``threshold`` clients survived."""
        alive = np.zeros(self.n, dtype=bool)
        alive[np.asarray(survivors, dtype=np.int64)] = True
        if int(alive.sum()) < self.threshold:
            raise QueryError(
                f"only {int(alive.sum())} of {self.n} clients survived; secure aggregation "
                f"needs at least {self.threshold} to recover the dropped clients' masks")
        selfs = {int(i): self.self_seeds[i].tobytes() for i in np.flatnonzero(alive)}
        pairs = {}
        for d in np.flatnonzero(~alive):
            for s in np.flatnonzero(alive):
                i, j = (int(s), int(d)) if s < d else (int(d), int(s))
                pairs[(i, j)] = self.pair_seeds[self.pair_index(i, j)].tobytes()
        return selfs, pairs

    def unmask_sum(self, survivors: np.ndarray, messages: np.ndarray) -> np.ndarray:
        """The server's side: Σ_{i ∈ survivors} x_i modulo 2^bits from the survivors'
        messages (rows of ``messages`` in the order of ``survivors``)."""
        surv = np.asarray(survivors, dtype=np.int64)
        y = np.asarray(messages, dtype=np.uint64).reshape(surv.size, self.dim)
        total = np.sum(y, axis=0, dtype=np.uint64)  # wraps modulo 2^64
        selfs, pairs = self.reveal(surv)
        for seed in selfs.values():
            total -= expand_seed(seed, self.dim, self.prf, _SELF_LABEL)
        alive = set(int(s) for s in surv)
        for (i, _j), seed in pairs.items():
            m = expand_seed(seed, self.dim, self.prf)
            # The survivor added +PRF(s_ij) if it is i (the smaller), subtracted it if j.
            if i in alive:
                total -= m
            else:
                total += m
        return total & self._low


def setup_session(n: int, bits: int, dim: int, source: Source, prf: str = "shake128",
                  threshold: int | None = None) -> SecAggSession:
    """Draw the seeds of one aggregation round (simulating the key agreement)."""
    n, bits, dim = int(n), int(bits), int(dim)
    if n < 2:
        raise ParameterError("secure aggregation needs at least 2 clients")
    if not 1 <= bits <= 64:
        raise ParameterError(f"the modulus must be 2^b with 1 ≤ b ≤ 64, got b = {bits}")
    if dim < 1:
        raise ParameterError("vectors need at least one coordinate")
    if prf not in PRFS:
        raise ParameterError(f"prf must be one of {', '.join(PRFS)}; got {prf!r}")
    t = n // 2 + 1 if threshold is None else int(threshold)
    if not 1 <= t <= n:
        raise ParameterError(f"the threshold must be between 1 and n = {n}, got {t}")
    return SecAggSession(n, bits, dim, prf, _seeds(n * (n - 1) // 2, source), _seeds(n, source),
                         t)
