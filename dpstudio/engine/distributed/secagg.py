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

The degree k and threshold t of the sparse graph, and the security statement they meet
(against a semi-honest server colluding with a fraction γ of the clients, with up to a
planned fraction of dropouts), are in :mod:`~dpstudio.engine.distributed.sparse_graph`.
The masks are expanded from the seeds by a real PRF (ChaCha20 by default,
:mod:`~dpstudio.engine.distributed.prf`); client totals are accumulated with
``np.add.at`` on uint64, whose arithmetic wraps modulo 2^64.

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

One protocol, one module (a little over 600 lines): masking, the reveal and unmasking
share the masking graph's edge arithmetic; the PRFs and the sparse graph's sizing live
apart (:mod:`~dpstudio.engine.distributed.prf`,
:mod:`~dpstudio.engine.distributed.sparse_graph`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from dpstudio.engine import sampling
from dpstudio.engine.distributed.prf import (
    _LANES,
    _PAIR_LABEL,
    _SELF_LABEL,
    DEFAULT_PRF,
    PRFS,
    _expand_many,
    chacha20_blocks,
    chacha20_encrypt,
    expand_seed,
)
from dpstudio.engine.distributed.sparse_graph import (
    DEFAULT_CORRUPT_FRACTION,
    ETA,
    SIGMA,
    sparse_graph_parameters,
)
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import Source
from dpstudio.jobs import State, check, scaled

__all__ = [
    "DEFAULT_CORRUPT_FRACTION",
    "DEFAULT_PRF",
    "ETA",
    "GRAPHS",
    "PRFS",
    "SIGMA",
    "SPARSE_ABOVE",
    "Reveal",
    "SecAggSession",
    "chacha20_blocks",
    "chacha20_encrypt",
    "expand_seed",
    "setup_session",
    "sparse_graph_parameters",
]

GRAPHS = ("auto", "complete", "harary")
#: Above this many clients, ``graph="auto"`` masks over the sparse (Harary) graph.
SPARSE_ABOVE = 512
# Largest complete graph: n(n − 1)/2 edges must index 32-bit ChaCha20 counters (2 per block).
_MAX_COMPLETE = 1 << 16

_AGREE_LABEL = b"dpstudio/secagg/key-agreement/v1"
_AGREE_PREFIX = hashlib.sha256(_AGREE_LABEL).digest()[:8]

# --------------------------------------------------------------------------- session


def _seeds(count: int, source: Source) -> np.ndarray:
    """``count`` 256-bit seeds as rows of 32 bytes."""
    return source.uint64(4 * int(count)).view(np.uint8).reshape(int(count), 32).copy()


@dataclass
class Reveal:
    """What the survivors reveal to the server: the self-mask seeds of the survivors, and
    the seeds of the edges between a dropped client and a survivor.

    Attributes
    ----------
    self_clients : numpy.ndarray
        The survivors' ids.
    self_seeds : numpy.ndarray
        Their self-mask seeds, (len(self_clients), 32) uint8.
    edges : numpy.ndarray
        Ids of the edges joining a dropped client and a survivor.
    edge_seeds : numpy.ndarray
        Their seeds, (len(edges), 32) uint8.
    survivor_adds : numpy.ndarray
        bool per edge: the surviving end added +PRF(s_e) (else it subtracted it).
    """

    self_clients: np.ndarray
    self_seeds: np.ndarray
    edges: np.ndarray
    edge_seeds: np.ndarray
    survivor_adds: np.ndarray


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

    Attributes
    ----------
    n : int
        Clients.
    bits : int
        Messages are integers modulo 2^bits.
    dim : int
        Integers per client's vector.
    prf : str
        The PRF expanding seeds into masks (:data:`PRFS`).
    graph : str
        ``"complete"`` or ``"harary"``.
    degree : int
        Neighbours per client (n − 1 for the complete graph).
    threshold : int
        Surviving neighbours needed to recover a client's masks.
    order : numpy.ndarray
        Position → client on the circle.
    self_seeds : numpy.ndarray
        (n, 32) uint8 self-mask seeds.
    agreement_key : bytes
        K: edge seeds are s_e = AES-256_K(2e ‖ 2e+1) (the simulated key agreement).
    corrupt_fraction : float
        Fraction of clients that may collude with the server (sizes the sparse graph).
    dropout_fraction : float
        Fraction of dropouts the sparse graph was sized for.
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
        """q = 2^bits."""
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
        """Edges of the masking graph."""
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

    def client_masks(self, state: State | None = None) -> np.ndarray:
        """Every client's total mask, modulo 2^64.

        O(n·degree) PRF blocks, in chunks of edges (no loop over clients or pairs).

        Parameters
        ----------
        state : State, optional
            The job's state: progress after each chunk of edges or of self masks, and
            cancellation checked before each.

        Returns
        -------
        numpy.ndarray
            (n, dim) uint64.

        Raises
        ------
        Cancelled
            If ``state`` is cancelled.
        """
        plus = np.zeros(self.n * self.dim, dtype=np.uint64)  # by position
        minus = np.zeros(self.n * self.dim, dtype=np.uint64)
        step = self._chunk()
        work = self.n_edges + self.n  # edge masks, then self masks: about one PRF each
        for start in range(0, self.n_edges, step):
            check(state)
            edges = np.arange(start, min(start + step, self.n_edges), dtype=np.int64)
            m = self._edge_masks(edges)
            p, q = self._endpoint_positions(edges)
            self._scatter(plus, p, m)
            self._scatter(minus, q, m)
            if state is not None:
                state.progress(int(edges[-1] + 1) / work, "edge masks")
        by_position = (plus - minus).reshape(self.n, self.dim)  # wraps modulo 2^64
        masks = np.empty((self.n, self.dim), dtype=np.uint64)
        masks[self.order] = by_position
        for start in range(0, self.n, step):
            check(state)
            clients = np.arange(start, min(start + step, self.n))
            masks[clients] += self._self_masks(clients)
            if state is not None:
                state.progress((self.n_edges + int(clients[-1]) + 1) / work, "self masks")
        return masks

    def mask(self, inputs: np.ndarray, state: State | None = None) -> np.ndarray:
        """The clients' messages y_i, from their integer inputs.

        Parameters
        ----------
        inputs : numpy.ndarray
            (n, dim) integers, or (n,) when dim = 1; any sign, taken modulo 2^bits.
        state : State, optional
            The job's state, as for :meth:`client_masks`.

        Returns
        -------
        numpy.ndarray
            (n, dim) uint64 in [0, 2^bits).

        Raises
        ------
        ParameterError
            If ``inputs`` has the wrong shape.
        Cancelled
            If ``state`` is cancelled.
        """
        x = np.asarray(inputs)
        if x.ndim == 1:
            x = x.reshape(-1, 1)
        if x.shape != (self.n, self.dim):
            raise ParameterError(f"expected inputs of shape ({self.n}, {self.dim}), "
                                 f"got {x.shape}")
        wrapped = x.astype(np.int64).view(np.uint64)  # two's complement = value mod 2^64
        return (wrapped + self.client_masks(state)) & self._low

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

    def unmask_sum(self, survivors: np.ndarray, messages: np.ndarray,
                   state: State | None = None) -> np.ndarray:
        """The server's side: the survivors' sum, from their messages and the reveal.

        Parameters
        ----------
        survivors : numpy.ndarray
            Ids of the clients whose messages arrived.
        messages : numpy.ndarray
            Their messages (rows in the order of ``survivors``).
        state : State, optional
            The job's state: progress after each chunk of revealed seeds, cancellation
            checked before each.

        Returns
        -------
        numpy.ndarray
            Σ_{i ∈ survivors} x_i modulo 2^bits, (dim,) uint64.

        Raises
        ------
        QueryError
            If too few neighbours survived to recover the dropped clients' masks.
        Cancelled
            If ``state`` is cancelled.
        """
        surv = np.asarray(survivors, dtype=np.int64)
        y = np.asarray(messages, dtype=np.uint64).reshape(surv.size, self.dim)
        total = np.sum(y, axis=0, dtype=np.uint64)  # wraps modulo 2^64
        check(state)
        rev = self.reveal(surv)
        step = self._chunk()
        work = max(1, rev.self_clients.size + rev.edges.size)
        for s in range(0, rev.self_clients.size, step):
            check(state)
            seeds = rev.self_seeds[s:s + step].view("<u4").astype(np.uint32)
            total -= np.sum(_expand_many(seeds, self.dim, self.prf, _SELF_LABEL), axis=0,
                            dtype=np.uint64)
            if state is not None:
                state.progress(min(s + step, rev.self_clients.size) / work, "self masks")
        for s in range(0, rev.edges.size, step):
            check(state)
            seeds = rev.edge_seeds[s:s + step].view("<u4").astype(np.uint32)
            m = _expand_many(seeds, self.dim, self.prf, _PAIR_LABEL)
            adds = rev.survivor_adds[s:s + step]
            # A surviving adder put +PRF(s_e) in the sum: take it out; a surviving
            # subtracter put −PRF(s_e): put it back.
            total -= np.sum(m[adds], axis=0, dtype=np.uint64)
            total += np.sum(m[~adds], axis=0, dtype=np.uint64)
            if state is not None:
                done = rev.self_clients.size + min(s + step, rev.edges.size)
                state.progress(done / work, "dropped clients' masks")
        if state is not None:
            state.progress(1.0, "unmasked")
        return total & self._low

    def aggregate(self, inputs: np.ndarray, survivors: np.ndarray,
                  state: State | None = None) -> np.ndarray:
        """One whole round: every client masks its input, the survivors' messages arrive,
        the server unmasks their sum.

        Parameters
        ----------
        inputs : numpy.ndarray
            Every client's integers, as for :meth:`mask`.
        survivors : numpy.ndarray
            Ids of the clients whose messages arrive (the others drop out after masking).
        state : State, optional
            The job's state: masking reports progress up to 1/2, unmasking from there to
            1; cancellation is checked before every chunk of PRF work.

        Returns
        -------
        numpy.ndarray
            Σ_{i ∈ survivors} x_i modulo 2^bits, (dim,) uint64.

        Raises
        ------
        ParameterError, QueryError
            As :meth:`mask` and :meth:`unmask_sum`.
        Cancelled
            If ``state`` is cancelled.
        """
        messages = self.mask(inputs, scaled(state, 0.0, 0.5))
        surv = np.asarray(survivors, dtype=np.int64)
        return self.unmask_sum(surv, messages[surv], scaled(state, 0.5, 1.0))


def setup_session(n: int, bits: int, dim: int, source: Source, prf: str = DEFAULT_PRF,
                  threshold: int | None = None, graph: str = "auto",
                  degree: int | None = None,
                  corrupt_fraction: float = DEFAULT_CORRUPT_FRACTION,
                  dropout_fraction: float = 0.0) -> SecAggSession:
    """Draw the masking graph and the seeds of one aggregation round (simulating the key
    agreement).

    Parameters
    ----------
    n : int
        Clients, ≥ 2.
    bits : int
        Messages are integers modulo 2^bits, 1 ≤ bits ≤ 64.
    dim : int
        Integers per client's vector, ≥ 1.
    source : Source
        Randomness of the seeds, the key and the sparse graph's relabelling.
    prf : str
        The PRF expanding seeds into masks (:data:`PRFS`).
    threshold : int, optional
        Surviving neighbours needed to recover a client's masks; by default ⌊n/2⌋ + 1
        (complete), the sparse graph's own, or ⌊degree/2⌋ + 1 when ``degree`` is given.
    graph : str
        ``"complete"``, ``"harary"`` or ``"auto"`` (complete up to :data:`SPARSE_ABOVE`
        clients, and whenever the sparse graph would need degree n − 1).
    degree : int, optional
        The Harary degree (even, 2 ≤ degree < n); by default from
        :func:`sparse_graph_parameters` for ``corrupt_fraction`` and
        ``dropout_fraction``.
    corrupt_fraction, dropout_fraction : float
        The security targets the sparse graph is sized for.

    Returns
    -------
    SecAggSession

    Raises
    ------
    ParameterError
        For a bad size, modulus, PRF, graph, degree or threshold, or when no sparse graph
        meets the targets with ``graph="harary"``.
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
