"""Sizing the sparse masking graph of secure aggregation: degree and threshold.

The sparse graph (Bell, Bonawitz, Gascón, Lepoint & Raykova, CCS 2020, semi-honest
variant) puts the clients on a circle in a uniformly random order and joins each to the
k/2 nearest on either side (the Harary graph H(n, k) with random relabelling); each
client shares its secrets t-out-of-k among its neighbours
(:mod:`~dpstudio.engine.distributed.secagg` runs the protocol).

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
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.special import gammaln

__all__ = ["DEFAULT_CORRUPT_FRACTION", "ETA", "SIGMA", "sparse_graph_parameters"]

#: Default bound on the fraction of clients colluding with the server (sparse graph).
DEFAULT_CORRUPT_FRACTION = 0.1
#: Statistical security and correctness parameters of the sparse graph (failure ≤ 2^−40).
SIGMA = 40
ETA = 40


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
    """Degree and threshold of the randomly relabelled Harary graph H(n, k).

    The even degree k is the smallest, up to the search's assumption that a larger k
    never fails where a smaller one passes; the threshold t meets events (i)–(iii) of the
    module doc.

    Parameters
    ----------
    n : int
        Number of clients.
    corrupt_fraction : float
        γ, the fraction of clients that may collude with the server.
    dropout_fraction : float
        The planned fraction of dropouts.
    sigma, eta : int
        Security and correctness parameters: failure probabilities ≤ 2^−σ, 2^−η.

    Returns
    -------
    (int, int) or None
        (k, t); None if no k ≤ n − 2 meets the targets (then the complete graph is the
        choice).

    Raises
    ------
    ParameterError
        If the fractions are outside [0, 1) or sum to 1 or more.
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
