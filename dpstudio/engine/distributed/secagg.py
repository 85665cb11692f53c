"""Pairwise-masked secure aggregation (Bonawitz et al., CCS 2017; sparse graphs after Bell,
Bonawitz, Gascón, Lepoint & Raykova, CCS 2020), simulated and vectorized.

n clients each hold an integer vector modulo q = 2^b. The clients are the nodes of a
*masking graph*; every edge e = (a, b) carries a 256-bit seed s_e known to its two ends,
and every client has a private 256-bit self-mask seed b_i. Client i sends

    y_i = x_i + PRF(b_i) + Σ_{e = (i, ·)} PRF(s_e) − Σ_{e = (·, i)} PRF(s_e)   (mod 2^b),

so every edge mask appears once with + and once with −: the sum over all clients of y_i
is Σ x_i + Σ PRF(b_i). After the masked vectors are in, the server asks the survivors to
reveal, for each client, either its self-mask seed (if its y_i arrived) or its edge seeds
(if it dropped out) — never both — and removes the self masks of the survivors and the
unmatched edge masks of the dropped clients. The result is Σ_{i survived} x_i mod 2^b.

Graphs
------
**Complete** (Bonawitz et al.; the default up to :data:`SPARSE_ABOVE` = 512 clients):
every pair is an edge; each client's secrets are Shamir-shared among all clients with
threshold t = ⌊n/2⌋ + 1, so unmasking needs t survivors. Each y_i alone is uniform modulo
2^b (the self mask sees to that), and so is any difference y_i − y_k; a semi-honest
server colluding with fewer than t clients learns only the sum of the honest survivors'
inputs (up to the PRF's and the key agreement's security).

**Sparse** (Bell et al. 2020, semi-honest variant; the default above 512 clients): the
clients are put on a circle in a uniformly random order (a permutation drawn from the
source) and each is joined to the k/2 nearest on either side — the Harary graph H(n, k)
with random relabelling — so each client has k = O(log n) neighbours, shares its
secrets t-out-of-k among them only, and computes k edge masks instead of n − 1. The
cost is O(n·k) PRF blocks and O(n) memory instead of O(n²).

Security statement of the sparse graph. Let γ (``corrupt_fraction``, default 0.1) and δ
(``dropout_fraction``: the planned dropout tolerance over n) bound the fractions of
clients that collude with the server and that drop out, both chosen *independently of the
graph* (static corruption; the graph's randomness is the server's, and it is honest but
curious; the simulation drops clients uniformly at random). The planned δ is below 1/2
(:mod:`~dpstudio.engine.distributed.secure_sum` checks it). :func:`sparse_graph_parameters`
picks the smallest even k and a threshold t such that, with ⌊γn⌋ corrupt and ⌊δn⌋ dropped
clients (fewer only help):

(i)   the graph minus the corrupt and dropped clients stays connected, except with
      probability ≤ n·C(⌊(γ+δ)n⌋, k/2)/C(n, k/2) ≤ 2^−σ — it can only break where k/2
      consecutive places on the circle are all removed (union bound over the n places);
(ii)  no client has t or more corrupt neighbours, except with probability ≤ 2^−σ
      (hypergeometric tail: a client's k neighbours are a uniformly random k-subset of
      the others; union bound over the n clients);
(iii) every client keeps at least t surviving neighbours, except with probability
      ≤ 2^−η (same tail, for the dropped).

with σ = η = 40. Given (i) and (ii), the server and the corrupt clients together learn
nothing about the honest survivors' inputs beyond their sum — the masks on the edges
between honest survivors, a connected graph, are unknown to them and hide every partial
sum — which is Bonawitz et al.'s guarantee; (iii) is what lets the server unmask
(correctness). The statement is computational (ChaCha20 as a PRF, a secure key
agreement) and for a semi-honest server: a malicious server that lies about the graph or
about who dropped needs Bell et al.'s malicious variant, which is not simulated here.
:func:`sparse_graph_parameters` follows the structure of their analysis (graph,
threshold, three events) with our own tail computations; for γ = 0.1 and no planned
dropouts it gives k = 32–38 for n from 2·10³ to 10⁶.

PRFs
----
The PRF expands the **full** 256-bit seed with a real cryptographic function, with a
domain-separation label per use (pair masks, self masks): ChaCha20 (RFC 8439; the
default) implemented here in numpy, vectorized over many keys — 20 rounds of 32-bit
add/rotate/xor on arrays of key lanes, processed in chunks to bound memory — or, on a
slow path kept for cross-checking, SHAKE-128 (``hashlib``) or AES-256-CTR
(``cryptography``), one call per seed. Masks are 64-bit words (little-endian keystream
bytes) reduced modulo 2^b, which is exact since 2^b divides 2^64; client totals are
accumulated with ``np.add.at`` on uint64, whose arithmetic wraps modulo 2^64.

What is simplified, and what a deployment does instead:

- **Key agreement.** Here the edge seeds are s_e = AES-256_K(2e) ‖ AES-256_K(2e + 1), a
  PRF of the edge's index under one 256-bit key K drawn from the random source (the
  AES-256-CTR keystream read at offset 32e; computed when needed, so memory stays O(n));
  a deployment derives s_ij by Diffie–Hellman (e.g. X25519) between i's and j's
  published keys, hashed to 256 bits, so that no party but i and j knows it.
- **Secret sharing.** Bonawitz et al. split each client's self-mask seed and DH secret
  key with Shamir's scheme among its neighbours; the server reconstructs one or the other
  from any t surviving neighbours. Here reconstruction is modelled as "revealed if at
  least t of the client's neighbours survived", without the shares.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass, field

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from scipy.special import gammaln

from dpstudio.engine import sampling
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import Source

__all__ = [
    "DEFAULT_PRF",
    "GRAPHS",
    "PRFS",
    "SPARSE_ABOVE",
    "Reveal",
    "SecAggSession",
    "chacha20_blocks",
    "chacha20_encrypt",
    "expand_seed",
    "setup_session",
    "sparse_graph_parameters",
]

PRFS = ("chacha20", "shake128", "aes256ctr")
DEFAULT_PRF = "chacha20"
GRAPHS = ("auto", "complete", "harary")
#: Above this many clients, ``graph="auto"`` masks over the sparse (Harary) graph.
SPARSE_ABOVE = 512
#: Default bound on the fraction of clients colluding with the server (sparse graph).
DEFAULT_CORRUPT_FRACTION = 0.1
#: Statistical security and correctness parameters of the sparse graph (failure ≤ 2^−40).
SIGMA = 40
ETA = 40
# Largest complete graph: n(n − 1)/2 edges must index 32-bit ChaCha20 counters (2 per block).
_MAX_COMPLETE = 1 << 16

_PAIR_LABEL = b"dpstudio/secagg/pair-mask/v1"
_SELF_LABEL = b"dpstudio/secagg/self-mask/v1"
_AGREE_LABEL = b"dpstudio/secagg/key-agreement/v1"
_AGREE_PREFIX = hashlib.sha256(_AGREE_LABEL).digest()[:8]

# --------------------------------------------------------------------------- ChaCha20

_CONSTANTS = np.array([0x61707865, 0x3320646E, 0x79622D32, 0x6B206574], dtype=np.uint32)
# Key lanes per pass of the round function: 16 state rows of 8192 uint32 (512 KiB) stay in
# cache, and each numpy call covers 4 × 8192 words, so call overhead stays small.
_LANES = 8192


def _nonce_words(nonce) -> np.ndarray:
    """A 96-bit nonce as 3 little-endian uint32 words: (3,) or, per lane, (3, L)."""
    if isinstance(nonce, (bytes, bytearray)):
        if len(nonce) != 12:
            raise ParameterError("a ChaCha20 nonce is 12 bytes (96 bits)")
        return np.frombuffer(bytes(nonce), dtype="<u4").astype(np.uint32)
    return np.asarray(nonce, dtype=np.uint32)


def _label_nonce(label: bytes) -> np.ndarray:
    return _nonce_words(hashlib.sha256(label).digest()[:12])


def _rotl(v: np.ndarray, r: int, tmp: np.ndarray) -> None:
    np.left_shift(v, r, out=tmp)
    np.right_shift(v, 32 - r, out=v)
    np.bitwise_or(v, tmp, out=v)


def _shifted(f, x: np.ndarray, y: np.ndarray) -> None:
    """x[m] ⊕= y[(m + 1) mod 4] for (4, L) blocks of rows (the diagonal round's pairing)."""
    f(x[0:3], y[1:4], out=x[0:3])
    f(x[3], y[0], out=x[3])


def _chacha_rounds(state: np.ndarray) -> None:
    """The 20 rounds of ChaCha20, in place, on a (16, L) uint32 state (one lane per column).

    Rows 0–3, 4–7, 8–11 and 12–15 hold the words a, b, c, d of the four column quarter
    rounds, which therefore run as one vectorized quarter round on (4, L) blocks. The
    diagonal round pairs a[m] with b[m+1], c[m+2], d[m+3]: each of its two-operand steps
    pairs rows shifted by one (mod 4), done as two slices — no copies.
    """
    a, b, c, d = state[0:4], state[4:8], state[8:12], state[12:16]
    tmp = np.empty_like(a)
    add, xor = np.add, np.bitwise_xor
    for _ in range(10):
        add(a, b, out=a)
        xor(d, a, out=d)
        _rotl(d, 16, tmp)
        add(c, d, out=c)
        xor(b, c, out=b)
        _rotl(b, 12, tmp)
        add(a, b, out=a)
        xor(d, a, out=d)
        _rotl(d, 8, tmp)
        add(c, d, out=c)
        xor(b, c, out=b)
        _rotl(b, 7, tmp)
        # Diagonal round: (a0, b1, c2, d3), (a1, b2, c3, d0), ... every operand pair is
        # (x[m], y[m + 1]): a += b, d ^= a (d3 with a0), c += d (c2 with d3), b ^= c.
        _shifted(add, a, b)
        _shifted(xor, d, a)
        _rotl(d, 16, tmp)
        _shifted(add, c, d)
        _shifted(xor, b, c)
        _rotl(b, 12, tmp)
        _shifted(add, a, b)
        _shifted(xor, d, a)
        _rotl(d, 8, tmp)
        _shifted(add, c, d)
        _shifted(xor, b, c)
        _rotl(b, 7, tmp)


def _blocks_t(keys_t: np.ndarray, counters: np.ndarray, nonce: np.ndarray) -> np.ndarray:
    """ChaCha20 blocks as a (16, L) uint32 array: keys (8, L) or (8, 1), counters (L,),
    nonce (3,) or (3, L). Lanes are processed :data:`_LANES` at a time."""
    lanes = counters.shape[0]
    out = np.empty((16, lanes), dtype=np.uint32)
    nonce = nonce.reshape(3, -1)
    for s in range(0, lanes, _LANES):
        e = min(s + _LANES, lanes)
        init = np.empty((16, e - s), dtype=np.uint32)
        init[0:4] = _CONSTANTS[:, None]
        init[4:12] = keys_t[:, s:e] if keys_t.shape[1] > 1 else keys_t
        init[12] = counters[s:e]
        init[13:16] = nonce[:, s:e] if nonce.shape[1] > 1 else nonce
        state = init.copy()
        _chacha_rounds(state)
        np.add(state, init, out=out[:, s:e])  # uint32 arithmetic wraps modulo 2^32
    return out


def _key_words(keys) -> np.ndarray:
    """256-bit keys as (L, 8) uint32 words: from 32-byte strings, (L, 32) uint8 rows or
    (L, 8) words (little-endian, as RFC 8439 reads the key)."""
    if isinstance(keys, (bytes, bytearray)):
        keys = np.frombuffer(bytes(keys), dtype=np.uint8).reshape(1, -1)
    k = np.asarray(keys)
    if k.ndim == 1:
        k = k.reshape(1, -1)
    if k.dtype == np.uint8 and k.shape[1] == 32:
        return np.ascontiguousarray(k).view("<u4").astype(np.uint32)
    if k.dtype == np.uint32 and k.shape[1] == 8:
        return k
    raise ParameterError("ChaCha20 keys are 32 bytes (256 bits) each")


def chacha20_blocks(keys, counters, nonce) -> np.ndarray:
    """The ChaCha20 block function (RFC 8439 §2.3) for many keys at once.

    ``keys``: one 32-byte key or L of them ((L, 32) uint8 or (L, 8) uint32 words);
    ``counters``: block counters (scalar or (L,), 32 bits); ``nonce``: 12 bytes, or
    (3,)/(L, 3) uint32 words. Returns (L, 16) uint32: the serialized block of lane ℓ is
    ``out[ℓ].astype('<u4').tobytes()``.
    """
    k = _key_words(keys)
    ctr = np.asarray(counters)
    if np.any(ctr < 0) or np.any(ctr > 0xFFFFFFFF):
        raise ParameterError("ChaCha20 block counters are 32-bit")
    nw = _nonce_words(nonce)
    lanes = max(k.shape[0], ctr.size, nw.shape[0] if nw.ndim == 2 else 1)
    ctr = np.broadcast_to(ctr.astype(np.uint32), (lanes,))
    keys_t = np.ascontiguousarray(k.T) if k.shape[0] == lanes else k[0].reshape(8, 1)
    nonce_t = np.ascontiguousarray(nw.T) if nw.ndim == 2 else nw
    return _blocks_t(keys_t, ctr, nonce_t).T


def chacha20_encrypt(key: bytes, counter: int, nonce: bytes, data: bytes) -> bytes:
    """ChaCha20 encryption (RFC 8439 §2.4): ``data`` XOR the keystream from block
    ``counter`` on."""
    blocks = -(-len(data) // 64)
    if counter < 0 or counter + blocks > 1 << 32:
        raise ParameterError("the ChaCha20 block counter would pass 2^32")
    stream = chacha20_blocks(key, np.arange(counter, counter + blocks, dtype=np.int64), nonce)
    ks = np.frombuffer(stream.astype("<u4").tobytes()[: len(data)], dtype=np.uint8)
    return (np.frombuffer(bytes(data), dtype=np.uint8) ^ ks).tobytes()


def _words64(state: np.ndarray, words: int) -> np.ndarray:
    """The first ``words`` 64-bit little-endian keystream words of (16, L) blocks: (words, L)."""
    lo = state[0 : 2 * words : 2].astype(np.uint64)
    hi = state[1 : 2 * words : 2].astype(np.uint64)
    return lo | (hi << np.uint64(32))


def _chacha_words(keys: np.ndarray, words: int, nonce: np.ndarray) -> np.ndarray:
    """``words`` 64-bit keystream words (counter 0, 1, …) per key: keys (m, 8) uint32 →
    (m, words) uint64."""
    m = keys.shape[0]
    per = -(-int(words) // 8)  # blocks per key
    if per == 1:
        return _words64(_blocks_t(np.ascontiguousarray(keys.T), np.zeros(m, np.uint32),
                                  nonce), words).T
    keys_t = np.ascontiguousarray(np.repeat(keys, per, axis=0).T)
    ctr = np.tile(np.arange(per, dtype=np.uint32), m)
    w = _words64(_blocks_t(keys_t, ctr, nonce), 8)  # (8, m·per)
    return w.T.reshape(m, per * 8)[:, :words]


def expand_seed(seed: bytes, words: int, prf: str = DEFAULT_PRF, label: bytes = _PAIR_LABEL
                ) -> np.ndarray:
    """``words`` pseudorandom 64-bit words from a 32-byte seed (uint64 array).

    ChaCha20 keyed with the seed, nonce = the first 12 bytes of SHA-256(label), counter
    from 0; SHAKE-128 over ``label ‖ seed``; or the AES-256-CTR keystream under key
    ``seed`` with the first 16 bytes of SHA-256(label) as the initial counter block.
    Words are the keystream's bytes read as little-endian 64-bit integers.
    """
    if len(seed) != 32:
        raise ParameterError("a mask seed must be 32 bytes (256 bits)")
    nbytes = 8 * int(words)
    if prf == "chacha20":
        return _chacha_words(_key_words(seed), int(words), _label_nonce(label))[0].copy()
    if prf == "shake128":
        stream = hashlib.shake_128(label + seed).digest(nbytes)
    elif prf == "aes256ctr":
        nonce = hashlib.sha256(label).digest()[:16]
        stream = Cipher(algorithms.AES(seed), modes.CTR(nonce)).encryptor().update(bytes(nbytes))
    else:
        raise ParameterError(f"prf must be one of {', '.join(PRFS)}; got {prf!r}")
    return np.frombuffer(stream, dtype="<u8").astype(np.uint64)


def _expand_many(seeds: np.ndarray, words: int, prf: str, label: bytes) -> np.ndarray:
    """Mask words for many seeds, (m, 8) uint32 words → (m, words) uint64: vectorized
    ChaCha20, or one SHAKE-128/AES call per seed (the slow path, for cross-checks)."""
    if prf == "chacha20":
        return _chacha_words(seeds, words, _label_nonce(label))
    raw = seeds.astype("<u4").view(np.uint8).reshape(-1, 32)
    out = np.empty((seeds.shape[0], words), dtype=np.uint64)
    for r in range(seeds.shape[0]):
        out[r] = expand_seed(raw[r].tobytes(), words, prf, label)
    return out


# ---------------------------------------------------------------------- graph sizing


def _log_comb(a, b):
    return gammaln(np.add(a, 1.0)) - gammaln(np.add(b, 1.0)) - gammaln(np.subtract(a, b) + 1.0)


def _hypergeom_sf(population: int, marked: int, draws: int) -> np.ndarray:
    """P(X ≥ t) for t = 0 … draws + 1, X the marked items among ``draws`` taken without
    replacement from ``population`` (log-space pmf, tail sums from the far end)."""
    x = np.arange(draws + 1, dtype=np.float64)
    lo, hi = max(0, draws - (population - marked)), min(marked, draws)
    ok = (x >= lo) & (x <= hi)
    logp = np.full(x.shape, -np.inf)
    xs = x[ok]
    logp[ok] = (_log_comb(marked, xs) + _log_comb(population - marked, draws - xs)
                - _log_comb(population, draws))
    tail = np.cumsum(np.exp(logp)[::-1])[::-1]
    return np.concatenate([tail, [0.0]])


def _threshold_for(n: int, corrupt: int, dropped: int, k: int, sigma: int, eta: int
                   ) -> int | None:
    """A threshold t meeting events (ii) and (iii) at degree k, or None: midway between
    the smallest t with P(≥ t corrupt neighbours) ≤ 2^−σ/n and the largest t with
    P(< t surviving neighbours) ≤ 2^−η/n."""
    with np.errstate(divide="ignore"):
        sec = np.log(_hypergeom_sf(n - 1, corrupt, k))  # P(corrupt neighbours ≥ t)
        cor = np.log(_hypergeom_sf(n - 1, dropped, k))  # P(dropped neighbours ≥ t)
    t_sec = max(1, int(np.argmax(sec <= -sigma * math.log(2.0) - math.log(n))))
    # Surviving neighbours < t  ⟺  dropped neighbours ≥ k − t + 1.
    ok = cor[k + 1 - np.arange(1, k + 1)] <= -eta * math.log(2.0) - math.log(n)
    if not ok.any():
        return None
    t_cor = int(np.flatnonzero(ok)[-1]) + 1
    return (t_sec + t_cor + 1) // 2 if t_sec <= t_cor else None


@functools.lru_cache(maxsize=256)
def sparse_graph_parameters(n: int, corrupt_fraction: float = DEFAULT_CORRUPT_FRACTION,
                            dropout_fraction: float = 0.0, sigma: int = SIGMA,
                            eta: int = ETA) -> tuple[int, int] | None:
    """(k, t) for the randomly relabelled Harary graph H(n, k): an even degree k — the
    smallest, up to the search's assumption that a larger k never fails where a smaller
    one passes — and a threshold t meeting events (i)–(iii) of the module doc; None if no
    k ≤ n − 2 does (then the complete graph is the choice).
    """
    n = int(n)
    g, d = float(corrupt_fraction), float(dropout_fraction)
    if not (0.0 <= g < 1.0 and 0.0 <= d < 1.0 and g + d < 1.0):
        raise ParameterError(f"corrupt and dropout fractions must lie in [0, 1) with a sum "
                             f"below 1; got {g:g} and {d:g}")
    corrupt, dropped = math.floor(g * n), math.floor(d * n)
    removed = min(n, corrupt + dropped)
    top = n - 2 if n % 2 == 0 else n - 3  # largest even degree below n − 1
    if top < 2:
        return None
    # (i): n · C(removed, h)/C(n, h) ≤ 2^−σ, h = k/2; the product falls with h.
    j = np.arange(top // 2, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_cut = math.log(n) + np.cumsum(np.log(np.maximum(removed - j, 0.0) / (n - j)))
    passing = np.flatnonzero(log_cut <= -sigma * math.log(2.0))
    if not passing.size:
        return None
    low = 2 * (int(passing[0]) + 1)  # smallest even k meeting (i)

    def threshold(k: int) -> int | None:
        return _threshold_for(n, corrupt, dropped, k, sigma, eta)

    if threshold(low) is not None:
        return low, threshold(low)
    # (ii) and (iii) only get easier as k grows (the tails concentrate): double, then
    # bisect on even degrees.
    bad, good = low, None
    while good is None:
        k = min(2 * bad, top)
        if threshold(k) is not None:
            good = k
        elif k == top:
            return None
        else:
            bad = k
    while good - bad > 2:
        mid = (bad + good) // 4 * 2
        if threshold(mid) is not None:
            good = mid
        else:
            bad = mid
    return good, threshold(good)


# --------------------------------------------------------------------------- session


def _seeds(count: int, source: Source) -> np.ndarray:
    """``count`` 256-bit seeds as rows of 32 bytes."""
    return source.uint64(4 * int(count)).view(np.uint8).reshape(int(count), 32).copy()


@dataclass
class Reveal:
    """What the survivors reveal to the server: the self-mask seeds of the survivors, and
    the seeds of the edges between a dropped client and a survivor."""

    self_clients: np.ndarray  # survivors' ids
    self_seeds: np.ndarray  # (len(self_clients), 32) uint8
    edges: np.ndarray  # edge ids
    edge_seeds: np.ndarray  # (len(edges), 32) uint8
    survivor_adds: np.ndarray  # bool: the surviving end added +PRF(s_e) (else subtracted)


@dataclass
class SecAggSession:
    """One round of secure aggregation among ``n`` clients on vectors of ``dim`` integers
    modulo 2^``bits``: the masking graph, the seeds (from the simulated key agreement) and
    the PRF.

    The graph is circulant on *positions* 0 … n − 1 (client ``order[p]`` sits at place p):
    edge e < n·h joins positions p = e // h and (p + e % h + 1) mod n, h = ⌊degree/2⌋;
    the client at p adds the edge's mask, the other subtracts it. The complete graph
    (``order`` the identity) takes every offset up to ⌊(n − 1)/2⌋ and, for even n, the
    n/2 "diameters" e = n·h + p joining p and p + n/2, p < n/2.
    """

    n: int
    bits: int
    dim: int
    prf: str
    graph: str  # "complete" or "harary"
    degree: int
    threshold: int
    order: np.ndarray  # position → client
    self_seeds: np.ndarray  # (n, 32) uint8
    agreement_key: bytes = field(repr=False)  # K: edge seeds s_e = AES-256_K(2e ‖ 2e+1)
    corrupt_fraction: float = DEFAULT_CORRUPT_FRACTION
    dropout_fraction: float = 0.0

    def __post_init__(self) -> None:
        self.position = np.empty(self.n, dtype=np.int64)
        self.position[self.order] = np.arange(self.n, dtype=np.int64)

    @property
    def modulus(self) -> int:
        return 1 << self.bits

    @property
    def _low(self) -> np.uint64:
        return np.uint64(self.modulus - 1)

    @property
    def half(self) -> int:
        """Offsets per position: h = ⌊degree/2⌋."""
        return self.degree // 2

    @property
    def _diameters(self) -> int:
        return self.n // 2 if self.graph == "complete" and self.n % 2 == 0 else 0

    @property
    def n_edges(self) -> int:
        return self.n * self.half + self._diameters

    # ------------------------------------------------------------------ edges and seeds

    def _endpoint_positions(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(adding, subtracting) positions of edge ids."""
        e = np.asarray(edges, dtype=np.int64)
        h, reg = self.half, self.n * self.half
        if h:
            p = np.minimum(e, reg - 1) // h
            q = (p + np.minimum(e, reg - 1) % h + 1) % self.n
        else:
            p = q = np.zeros_like(e)
        if self._diameters:
            diam = e >= reg
            p = np.where(diam, e - reg, p)
            q = np.where(diam, e - reg + self.n // 2, q)
        return p, q

    def endpoints(self, edges) -> tuple[np.ndarray, np.ndarray]:
        """(adding client, subtracting client) of each edge id."""
        p, q = self._endpoint_positions(edges)
        return self.order[p], self.order[q]

    def _incident(self, positions: np.ndarray) -> np.ndarray:
        """Ids of all edges at the given positions, (len, degree) int64."""
        p = np.asarray(positions, dtype=np.int64)[:, None]
        h = self.half
        j = np.arange(1, h + 1, dtype=np.int64)[None, :]
        parts = [p * h + j - 1, ((p - j) % self.n) * h + j - 1]
        if self._diameters:
            parts.append(self.n * h + p % (self.n // 2))
        return np.concatenate(parts, axis=1)

    def pair_index(self, i: int, j: int) -> int:
        """Edge id of the edge joining clients i and j (ParameterError if there is none)."""
        pi, pj = int(self.position[i]), int(self.position[j])
        d = (pj - pi) % self.n
        if 1 <= d <= self.half:
            return pi * self.half + d - 1
        if 1 <= self.n - d <= self.half:
            return pj * self.half + self.n - d - 1
        if self._diameters and d == self.n // 2:
            return self.n * self.half + min(pi, pj)
        raise ParameterError(f"clients {i} and {j} are not neighbours in the masking graph")

    def neighbours(self, i: int) -> np.ndarray:
        """Client i's neighbours (sorted ids)."""
        a, b = self.endpoints(self._incident(self.position[[int(i)]])[0])
        return np.sort(np.where(a == int(i), b, a))

    def _edge_seed_words(self, edges: np.ndarray) -> np.ndarray:
        """s_e as (len, 8) uint32 words: the AES-256-CTR keystream under K at byte offset
        32·e (counter blocks prefix ‖ 2e and prefix ‖ 2e + 1, big-endian) — one CTR call
        for a run of consecutive edges, one ECB call on the counter blocks otherwise."""
        e = np.asarray(edges, dtype=np.int64)
        if e.size == 0:
            return np.zeros((0, 8), dtype=np.uint32)
        aes = algorithms.AES(self.agreement_key)
        first = int(e[0])
        if e[-1] - first + 1 == e.size and np.all(np.diff(e) == 1):
            start = _AGREE_PREFIX + (2 * first).to_bytes(8, "big")
            stream = Cipher(aes, modes.CTR(start)).encryptor().update(bytes(32 * e.size))
        else:
            blocks = np.empty((e.size, 2, 2), dtype=">u8")
            blocks[:, :, 0] = int.from_bytes(_AGREE_PREFIX, "big")
            blocks[:, 0, 1] = 2 * e
            blocks[:, 1, 1] = 2 * e + 1
            stream = Cipher(aes, modes.ECB()).encryptor().update(blocks.tobytes())
        return np.frombuffer(stream, dtype="<u4").astype(np.uint32).reshape(e.size, 8)

    def edge_seeds(self, edges) -> np.ndarray:
        """s_e of the given edge ids as (len, 32) uint8 rows."""
        w = self._edge_seed_words(np.atleast_1d(np.asarray(edges, dtype=np.int64)))
        return w.astype("<u4").view(np.uint8).reshape(-1, 32)

    @property
    def pair_seeds(self) -> np.ndarray:
        """All edge seeds, (n_edges, 32) uint8 (materialized: for inspection and tests)."""
        return self.edge_seeds(np.arange(self.n_edges))

    def _edge_masks(self, edges: np.ndarray) -> np.ndarray:
        return _expand_many(self._edge_seed_words(edges), self.dim, self.prf, _PAIR_LABEL)

    def _self_masks(self, clients: np.ndarray) -> np.ndarray:
        seeds = self.self_seeds[np.asarray(clients, dtype=np.int64)].view("<u4")
        return _expand_many(seeds.astype(np.uint32), self.dim, self.prf, _SELF_LABEL)

    def _chunk(self) -> int:
        """Edges per chunk: about :data:`_LANES` · 8 ChaCha20 blocks' worth of mask words."""
        blocks = -(-self.dim // 8)
        return max(2, (8 * _LANES) // blocks)

    def _scatter(self, acc: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
        """acc[rows] += values on a flattened (·, dim) uint64 accumulator (wraps mod 2^64)."""
        if self.dim == 1:
            np.add.at(acc, rows, values[:, 0])
        else:
            idx = rows[:, None] * self.dim + np.arange(self.dim)[None, :]
            np.add.at(acc, idx.ravel(), values.ravel())

    # ------------------------------------------------------------------------ protocol

    def client_masks(self) -> np.ndarray:
        """Every client's total mask, (n, dim) uint64 modulo 2^64: O(n·degree) PRF
        blocks, in chunks of edges (no loop over clients or pairs)."""
        plus = np.zeros(self.n * self.dim, dtype=np.uint64)  # by position
        minus = np.zeros(self.n * self.dim, dtype=np.uint64)
        step = self._chunk()
        for start in range(0, self.n_edges, step):
            edges = np.arange(start, min(start + step, self.n_edges), dtype=np.int64)
            m = self._edge_masks(edges)
            p, q = self._endpoint_positions(edges)
            self._scatter(plus, p, m)
            self._scatter(minus, q, m)
        by_position = (plus - minus).reshape(self.n, self.dim)  # wraps modulo 2^64
        masks = np.empty((self.n, self.dim), dtype=np.uint64)
        masks[self.order] = by_position
        for start in range(0, self.n, step):
            clients = np.arange(start, min(start + step, self.n))
            masks[clients] += self._self_masks(clients)
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

    def surviving_neighbours(self, alive: np.ndarray) -> np.ndarray:
        """For each client, how many of its neighbours are alive (bool mask by client)."""
        alive = np.asarray(alive, dtype=bool)
        if self.graph == "complete":
            return np.full(self.n, int(alive.sum())) - alive
        by_pos = alive[self.order].astype(np.int64)
        h = self.half
        ext = np.concatenate([by_pos[-h:], by_pos, by_pos[:h]])
        cs = np.concatenate([[0], np.cumsum(ext)])
        window = cs[2 * h + 1:] - cs[: self.n]  # positions p − h … p + h
        counts = np.empty(self.n, dtype=np.int64)
        counts[self.order] = window - by_pos
        return counts

    def _check_recoverable(self, alive: np.ndarray) -> None:
        if self.graph == "complete":
            if int(alive.sum()) < self.threshold:
                raise QueryError(
                    f"only {int(alive.sum())} of {self.n} clients survived; secure "
                    f"aggregation needs at least {self.threshold} to recover the dropped "
                    f"clients' masks")
            return
        counts = self.surviving_neighbours(alive)
        short = np.flatnonzero(counts < self.threshold)
        if short.size:
            i = int(short[0])
            raise QueryError(
                f"client {i} has only {int(counts[i])} surviving neighbours of "
                f"{self.degree}; recovering its masks needs {self.threshold} ({short.size} "
                f"clients short; the graph was sized for up to "
                f"{math.floor(self.dropout_fraction * self.n)} dropouts)")

    def reveal(self, survivors: np.ndarray) -> Reveal:
        """What the survivors reveal: self-mask seeds of the survivors, edge seeds of every
        (survivor, dropped) edge — if every client has at least ``threshold`` surviving
        neighbours (complete graph: if ``threshold`` clients survived)."""
        alive = np.zeros(self.n, dtype=bool)
        alive[np.asarray(survivors, dtype=np.int64)] = True
        self._check_recoverable(alive)
        selfs = np.flatnonzero(alive)
        dropped_pos = self.position[~alive]
        edges = self._incident(dropped_pos).ravel()
        p, q = self._endpoint_positions(edges)
        alive_pos = alive[self.order]
        keep = alive_pos[p] != alive_pos[q]  # one end survived (edges of two dropped: none)
        edges = edges[keep]
        return Reveal(selfs, self.self_seeds[selfs], edges, self.edge_seeds(edges),
                      alive_pos[p[keep]])

    def unmask_sum(self, survivors: np.ndarray, messages: np.ndarray) -> np.ndarray:
        """The server's side: Σ_{i ∈ survivors} x_i modulo 2^bits from the survivors'
        messages (rows of ``messages`` in the order of ``survivors``)."""
        surv = np.asarray(survivors, dtype=np.int64)
        y = np.asarray(messages, dtype=np.uint64).reshape(surv.size, self.dim)
        total = np.sum(y, axis=0, dtype=np.uint64)  # wraps modulo 2^64
        rev = self.reveal(surv)
        step = self._chunk()
        for s in range(0, rev.self_clients.size, step):
            seeds = rev.self_seeds[s:s + step].view("<u4").astype(np.uint32)
            total -= np.sum(_expand_many(seeds, self.dim, self.prf, _SELF_LABEL), axis=0,
                            dtype=np.uint64)
        for s in range(0, rev.edges.size, step):
            seeds = rev.edge_seeds[s:s + step].view("<u4").astype(np.uint32)
            m = _expand_many(seeds, self.dim, self.prf, _PAIR_LABEL)
            adds = rev.survivor_adds[s:s + step]
            # A surviving adder put +PRF(s_e) in the sum: take it out; a surviving
            # subtracter put −PRF(s_e): put it back.
            total -= np.sum(m[adds], axis=0, dtype=np.uint64)
            total += np.sum(m[~adds], axis=0, dtype=np.uint64)
        return total & self._low


def setup_session(n: int, bits: int, dim: int, source: Source, prf: str = DEFAULT_PRF,
                  threshold: int | None = None, graph: str = "auto",
                  degree: int | None = None,
                  corrupt_fraction: float = DEFAULT_CORRUPT_FRACTION,
                  dropout_fraction: float = 0.0) -> SecAggSession:
    """Draw the masking graph and the seeds of one aggregation round (simulating the key
    agreement).

    ``graph``: ``"complete"``, ``"harary"`` or ``"auto"`` (complete up to
    :data:`SPARSE_ABOVE` clients, and whenever the sparse graph would need degree n − 1).
    The Harary degree and threshold come from :func:`sparse_graph_parameters` for
    ``corrupt_fraction`` and ``dropout_fraction`` unless given (``degree`` even,
    2 ≤ degree < n; default threshold ⌊degree/2⌋ + 1 when the degree is given).
    """
    n, bits, dim = int(n), int(bits), int(dim)
    if n < 2:
        raise ParameterError("secure aggregation needs at least 2 clients")
    if not 1 <= bits <= 64:
        raise ParameterError(f"the modulus must be 2^b with 1 ≤ b ≤ 64, got b = {bits}")
    if dim < 1:
        raise ParameterError("vectors need at least one coordinate")
    if dim > 8 << 32:
        raise ParameterError("vectors are limited to 2^35 coordinates (2^32 ChaCha20 blocks)")
    if prf not in PRFS:
        raise ParameterError(f"prf must be one of {', '.join(PRFS)}; got {prf!r}")
    if graph not in GRAPHS:
        raise ParameterError(f"graph must be one of {', '.join(GRAPHS)}; got {graph!r}")
    gamma, drop = float(corrupt_fraction), float(dropout_fraction)
    kind, k, t = "complete", n - 1, threshold
    if graph == "harary" or (graph == "auto" and n > SPARSE_ABOVE):
        if degree is not None:
            k = int(degree)
            if k % 2 or not 2 <= k < n:
                raise ParameterError(f"the Harary degree must be even, 2 ≤ k < n = {n}; "
                                     f"got {degree}")
            t = k // 2 + 1 if threshold is None else int(threshold)
            kind = "harary"
        else:
            found = sparse_graph_parameters(n, gamma, drop)
            if found is not None:
                kind, (k, auto_t) = "harary", found
                t = auto_t if threshold is None else int(threshold)
            elif graph == "harary":
                raise ParameterError(
                    f"no Harary graph on {n} clients meets the security targets for "
                    f"{gamma:g} corrupt and {drop:g} dropped: use the complete graph")
    if kind == "complete":
        if n > _MAX_COMPLETE:
            raise ParameterError(f"the complete masking graph is limited to "
                                 f"{_MAX_COMPLETE} clients; use the sparse graph")
        t = n // 2 + 1 if threshold is None else int(threshold)
        if not 1 <= t <= n:
            raise ParameterError(f"the threshold must be between 1 and n = {n}, got {t}")
        order = np.arange(n, dtype=np.int64)
    else:
        if not 1 <= t <= k:
            raise ParameterError(f"the threshold must be between 1 and the degree {k}, "
                                 f"got {t}")
        order = sampling.permutation(n, source)
    agreement_key = _seeds(1, source)[0].tobytes()
    return SecAggSession(n, bits, dim, prf, kind, k, t, order, _seeds(n, source),
                         agreement_key, gamma, drop)
