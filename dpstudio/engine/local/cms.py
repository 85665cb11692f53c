"""Apple's private count-mean sketch (CMS) and its public hash family.

Count-mean sketch (CMS; Apple Differential Privacy Team 2017, "Learning with Privacy at
Scale", Algorithms 1–3). A public family of ``K`` hash functions maps values to ``m``
buckets. A user with value ``d`` picks ``j`` uniform in ``0..K−1``, writes the ±1 vector
``v`` (``+1`` only at ``h_j(d)``) and flips each entry independently with probability
``1/(e^{ε/2}+1)``; it sends ``(j, ṽ)``. Changing ``d`` changes two entries of ``v``, each
an ``e^{ε/2}`` randomized response: ε-LDP. The server accumulates the sketch
``M[j, :] += K·(c_ε ṽ + 1)/2`` with ``c_ε = (e^{ε/2}+1)/(e^{ε/2}−1)`` and reads
``r(d) = (1/K) Σ_l M[l, h_l(d)]``.

``E[r(d)] = Σ_{d'} A[d, d'] f(d')`` with ``A[d, d']`` the fraction of the ``K`` hash
functions under which ``d`` and ``d'`` collide (``A[d, d] = 1``). Two debiasings:

* ``"apple"``: ``f̂ = m/(m−1)·(r − n/m)``, which inverts ``E_hash[A] = (1−1/m)I + J/m``:
  unbiased on average over the draw of the hash family (for a fixed family the bias is
  ``m/(m−1)·(Σ_{d'} A[d, d'] f(d') − n/m) − f(d)``, :meth:`CountMeanSketch.bias`). Works
  on open domains (any candidate keys): the sequence-fragment puzzle uses it.
* ``"exact"`` (default for a declared domain of ``k ≤ 4096`` values): ``f̂ = A⁻¹ r``,
  unbiased for this hash family.

A fixed public family (``hash_seed`` fixed) leaves the apple estimate of an item biased
by its collisions with frequent items, the same bias in every release. :func:`run_local`
therefore draws the family afresh for each release (``hash_seed`` from the release's
random source; it is public, published with the parameters): over that draw every
``A[d, d']`` (``d ≠ d'``) has mean ``1/m`` (the family is universal), so the apple estimate is
unbiased, and the collisions add the variance of :meth:`CountMeanSketch.hash_variance`.
Declared codes are mixed into 61-bit keys (:func:`code_keys`) before hashing: consecutive
codes under an affine hash would otherwise collide together (a triple collision of
``0, 1, 2`` is about as likely as a pair's), so the collision indicators of the
different items would not be nearly independent as that variance assumes.

Variances, derived here for a fixed hash family (over the users' coins; user ``i`` adds
``Z_i = (c_ε ṽ_i[h_{j_i}(d)] + 1)/2`` to ``r(d)``, with ``E Z_i = a_i = A[d, d_i]`` and
``Var Z_i = (c_ε² − (2a_i − 1)²)/4 = (c_ε² − 1)/4 + a_i(1 − a_i)``; note
``(c_ε² − 1)/4 = e^{ε/2}/(e^{ε/2} − 1)²``, SUE's ``Var*``):

* apple: ``(m/(m−1))² · (n (c_ε² − 1)/4 + Σ_{d'} f(d') A[d,d'](1 − A[d,d']))``;
* exact, with ``B = A⁻¹`` and ``G_j[t, d] = Σ_{d': h_j(d') = h_j(d)} B[t, d']``:
  ``n (c_ε² − 1)/4 · B[t, t] + Σ_d f(d) mean_j G_j[t, d]² − f(t)``.

(Pan 2024, arXiv:2406.03785, also notes errors in the original paper's expectation and
variance; the formulas above are checked by simulation in the tests.)

"""

from __future__ import annotations

import hashlib
import math
from typing import NamedTuple

import numpy as np

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.local._coins import rr_flip_coin, rr_keep_coin, uniform_below32
from dpstudio.engine.local.base import (
    FrequencyOracle,
    check_domain_size,
    check_values,
    validate_local_epsilon,
)
from dpstudio.engine.local.bits import (
    bit_strings,
    column_counts,
    get_bits,
    pattern_keys,
    random_bit_matrix,
    set_bits,
)

__all__ = ["EXACT_MAX_K", "CMSReports", "CountMeanSketch", "cms_hash", "code_keys"]

_P61 = (1 << 61) - 1
_P61_U = np.uint64(_P61)
_M32 = np.uint64(0xFFFFFFFF)
_M29 = np.uint64((1 << 29) - 1)
# Largest declared domain the exact debiasing solves (A is k × k).
EXACT_MAX_K = 4096


def _mulmod61(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``a·x mod (2^61 − 1)`` for uint64 ``a, x < 2^61``, without overflow.

    With 32-bit halves, ``a·x = hh·2^64 + mid·2^32 + ll``; ``2^64 ≡ 8`` and
    ``2^61 ≡ 1`` modulo ``P``, and ``mid·2^32 = (mid >> 29)·2^61 + (mid mod 2^29)·2^32``.
    """
    s32 = np.uint64(32)
    a_hi, a_lo = a >> s32, a & _M32
    x_hi, x_lo = x >> s32, x & _M32
    hh = a_hi * x_hi  # < 2^58
    mid = a_hi * x_lo + a_lo * x_hi  # < 2^62
    ll = a_lo * x_lo  # < 2^64
    s = (hh << np.uint64(3)) + (mid >> np.uint64(29)) + ((mid & _M29) << s32)
    s += (ll & _P61_U) + (ll >> np.uint64(61))  # total < 2^63
    s = (s & _P61_U) + (s >> np.uint64(61))
    return np.where(s >= _P61_U, s - _P61_U, s)


def cms_hash(a, b, x, m: int) -> np.ndarray:
    """Bucket in ``0..m−1`` of keys ``x`` under the hash ``((a·x + b) mod P)``, P = 2^61 − 1.

    Parameters
    ----------
    a, b : array_like of uint64
        The hash functions' parameters (broadcast against ``x``).
    x : array_like of uint64
        Keys below 2^61 − 1.
    m : int
        Number of buckets.

    Returns
    -------
    numpy.ndarray of int64
        The buckets, the top bits of the hash scaled to ``0..m−1``.
    """
    x = np.asarray(x, dtype=np.uint64)
    t = _mulmod61(np.asarray(a, dtype=np.uint64), x) + np.asarray(b, dtype=np.uint64)
    t = np.where(t >= _P61_U, t - _P61_U, t)
    return (((t >> np.uint64(29)) * np.uint64(m)) >> np.uint64(32)).astype(np.int64)


def code_keys(codes) -> np.ndarray:
    """61-bit keys (< 2^61 − 1) of integer codes: the splitmix64 finalizer, then mod P.

    A fixed, public bijection-like mix (distinct codes below 2^31 get distinct keys up to
    a 2^-30 chance, checked by the exact debiasing, which refuses a singular family):
    it breaks the arithmetic progressions of consecutive codes that an affine hash would
    map together.

    Parameters
    ----------
    codes : array_like of int
        Non-negative integer codes.

    Returns
    -------
    numpy.ndarray of uint64
        One key below 2^61 − 1 per code.
    """
    z = np.asarray(codes).astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return z % _P61_U


def _hash_family(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Public hash parameters ``(a_j, b_j)``, ``a_j ∈ [1, P)``, ``b_j ∈ [0, P)``: SHA-256 of
    the seed and index, 61 bits, redrawn (next counter) when out of range."""
    a = np.empty(count, dtype=np.uint64)
    b = np.empty(count, dtype=np.uint64)
    for j in range(count):
        ctr = 0
        while True:
            d = hashlib.sha256(f"dpstudio-cms/{seed}/{j}/{ctr}".encode()).digest()
            aa = int.from_bytes(d[:8], "little") >> 3
            bb = int.from_bytes(d[8:16], "little") >> 3
            ctr += 1
            if 1 <= aa < _P61 and bb < _P61:
                break
        a[j], b[j] = aa, bb
    return a, b


class CMSReports(NamedTuple):
    """What each CMS user sends: the hash index ``j`` and the packed ±1 vector (1 = +1).

    Attributes
    ----------
    j : numpy.ndarray of int64, shape (n,)
        Each user's hash function, in ``0..K−1``.
    bits : numpy.ndarray of uint8, shape (n, ceil(m/8))
        Each user's flipped vector, packed (``np.packbits`` order).
    """

    j: np.ndarray  # int64 in [0, K)
    bits: np.ndarray  # (n, m/8) uint8, np.packbits order

    def __len__(self) -> int:
        return int(self.j.shape[0])


class CountMeanSketch(FrequencyOracle):
    """Apple's private count-mean sketch over integer keys (codes ``0..k−1`` by default).

    Parameters
    ----------
    epsilon : float
        The per-user ε, in (0, 700] (each of the two differing entries spends ε/2).
    k : int, optional
        The declared domain size; ``None``: an open domain, estimate any keys with
        :meth:`estimate_keys` (the debiasing is then ``"apple"``).
    hashes : int
        ``K``, the number of hash functions, 1..65536.
    buckets : int
        ``m``, buckets per hash function (bits per report), 2..2^20.
    debias : {"exact", "apple"}
        The debiasing (module docstring); ``"exact"`` needs ``k`` ≤ :data:`EXACT_MAX_K`.
    hash_seed : int
        Selects the public hash family.

    Attributes
    ----------
    c_eps : float
        ``(e^{ε/2} + 1)/(e^{ε/2} − 1)``.
    unit_var : float
        ``(c_ε² − 1)/4``, each user's variance contribution.

    Raises
    ------
    ParameterError
        For a bad ε, ``k``, ``hashes``, ``buckets`` or ``debias``.
    """

    name = "cms"
    label = "Count-mean sketch (Apple)"

    def __init__(self, epsilon: float, k: int | None = None, hashes: int = 64,
                 buckets: int = 1024, debias: str = "exact", hash_seed: int = 0) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        self.k = None if k is None else check_domain_size(k)
        self.hashes = check_domain_size(hashes, low=1, name="hashes")
        self.buckets = check_domain_size(buckets, name="buckets")
        if self.hashes > 1 << 16 or self.buckets > 1 << 20:
            raise ParameterError("hashes must be at most 65536 and buckets at most 2^20")
        if debias not in ("exact", "apple"):
            raise ParameterError(f"debias must be exact or apple; got {debias!r}")
        if debias == "exact" and self.k is not None and self.k > EXACT_MAX_K:
            raise ParameterError(f"exact debiasing solves a k × k system: k must be at most "
                                 f"{EXACT_MAX_K} (got {self.k}); use debias=apple")
        self.debias = debias if self.k is not None else "apple"
        self.hash_seed = int(hash_seed)
        self._a, self._b = _hash_family(self.hashes, self.hash_seed)
        self._keys: np.ndarray | None = None  # the domain's hash keys, once computed
        half = self.epsilon / 2.0
        self._flip = rr_flip_coin(half)  # -1 → +1
        self._keep = rr_keep_coin(half, 1)  # +1 stays +1
        eh = math.exp(half)
        self.c_eps = (eh + 1.0) / (eh - 1.0)
        self.unit_var = eh / (eh - 1.0) ** 2  # (c_ε² − 1)/4
        self.messages_bits = self.buckets + max(0, math.ceil(math.log2(self.hashes)))
        self._A = self._Binv = self._Q = None

    # -- hashing
    def bucket(self, j, keys) -> np.ndarray:
        """``h_j(key)`` (vectorized over users: ``j`` and ``keys`` of the same length).

        Parameters
        ----------
        j : array_like of int
            Hash indices.
        keys : array_like of uint64
            Keys below 2^61 − 1.

        Returns
        -------
        numpy.ndarray of int64
            Buckets in ``0..m−1``.
        """
        j = np.asarray(j, dtype=np.int64)
        return cms_hash(self._a[j], self._b[j], keys, self.buckets)

    def bucket_table(self, keys) -> np.ndarray:
        """``(hashes, len(keys))`` table of ``h_l(key)``.

        Parameters
        ----------
        keys : array_like of uint64
            Keys below 2^61 − 1.

        Returns
        -------
        numpy.ndarray of int64, shape (hashes, len(keys))
        """
        keys = np.asarray(keys, dtype=np.uint64)
        return cms_hash(self._a[:, None], self._b[:, None], keys[None, :], self.buckets)

    # -- client
    def randomize(self, values, source) -> CMSReports:
        """Each user's report for a code of the declared domain.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Codes in ``0..k−1``.
        source : Source
            The random source.

        Returns
        -------
        CMSReports

        Raises
        ------
        QueryError
            For an open-domain sketch (use :meth:`randomize_keys`) or a code outside
            ``0..k−1``.
        """
        if self.k is None:
            raise QueryError("an open-domain sketch randomizes keys: use randomize_keys")
        return self.randomize_keys(code_keys(check_values(values, self.k)), source)

    def randomize_keys(self, keys, source) -> CMSReports:
        """Reports for integer keys (< 2^61 − 1), e.g. word fingerprints.

        Parameters
        ----------
        keys : array_like of uint64, shape (n,)
            One key per user.
        source : Source
            The random source.

        Returns
        -------
        CMSReports
        """
        keys = np.asarray(keys, dtype=np.uint64)
        n = keys.size
        j = uniform_below32(self.hashes, source.uint32(n), source).astype(np.int64)
        bits = random_bit_matrix(n, self.buckets, self._flip, source)
        set_bits(bits, self.bucket(j, keys), self._keep.flip(n, source))
        return CMSReports(j, bits)

    # -- server
    def sketch(self, reports: CMSReports) -> np.ndarray:
        """Apple's sketch matrix ``M`` (hashes × buckets).

        Parameters
        ----------
        reports : CMSReports
            The users' reports.

        Returns
        -------
        numpy.ndarray of float64, shape (hashes, buckets)
        """
        return self.sketch_from_counts(*self.sketch_counts(reports))

    def sketch_counts(self, reports: CMSReports) -> tuple[np.ndarray, np.ndarray]:
        """What the sketch is made of: integer counts that add over partitions.

        Parameters
        ----------
        reports : CMSReports
            The users' reports.

        Returns
        -------
        ones : numpy.ndarray of int64, shape (hashes, buckets)
            Reports of each hash function with a +1 in each bucket.
        per : numpy.ndarray of int64, shape (hashes,)
            Reports of each hash function.
        """
        j = np.asarray(reports.j, dtype=np.int64)
        ones = column_counts(reports.bits, self.buckets, groups=j, n_groups=self.hashes)
        per = np.bincount(j, minlength=self.hashes)[: self.hashes]
        return np.asarray(ones, dtype=np.int64), per.astype(np.int64)

    def sketch_from_counts(self, ones, per) -> np.ndarray:
        """Apple's sketch matrix ``M`` from :meth:`sketch_counts` (summed over partitions).

        Parameters
        ----------
        ones : array_like of int, shape (hashes, buckets)
            +1 entries per hash function and bucket.
        per : array_like of int, shape (hashes,)
            Reports per hash function.

        Returns
        -------
        numpy.ndarray of float64, shape (hashes, buckets)
        """
        per = np.asarray(per).astype(np.float64)[:, None]
        return self.hashes * (self.c_eps * (2.0 * np.asarray(ones) - per) + per) / 2.0

    def raw(self, reports: CMSReports, keys, sketch: np.ndarray | None = None) -> np.ndarray:
        """``r(key) = (1/K) Σ_l M[l, h_l(key)]`` (expectation ``Σ_d A[key, d] f(d)``).

        Parameters
        ----------
        reports : CMSReports
            The users' reports (not read when ``sketch`` is given).
        keys : array_like of uint64
            The keys to read.
        sketch : numpy.ndarray, optional
            :meth:`sketch` of the reports, if already computed.

        Returns
        -------
        numpy.ndarray of float64, shape (len(keys),)
        """
        M = self.sketch(reports) if sketch is None else sketch
        keys = np.asarray(keys, dtype=np.uint64)
        out = np.zeros(keys.size)
        rows = np.arange(self.hashes)[:, None]
        step = max(1, (1 << 22) // self.hashes)
        for s in range(0, keys.size, step):
            table = self.bucket_table(keys[s:s + step])
            out[s:s + step] = M[rows, table].mean(axis=0)
        return out

    def estimate_keys(self, reports: CMSReports, keys, n: int | None = None,
                      sketch: np.ndarray | None = None) -> np.ndarray:
        """Apple-debiased count estimates of arbitrary keys (open domains).

        Parameters
        ----------
        reports : CMSReports
            The users' reports.
        keys : array_like of uint64
            The keys to estimate.
        n : int, optional
            The number of users; by default the number of reports.
        sketch : numpy.ndarray, optional
            :meth:`sketch` of the reports, if already computed.

        Returns
        -------
        numpy.ndarray of float64, shape (len(keys),)
            ``m/(m−1)·(r − n/m)``.
        """
        n = len(reports) if n is None else int(n)
        m = self.buckets
        return m / (m - 1.0) * (self.raw(reports, keys, sketch) - n / m)

    def estimate(self, reports: CMSReports, n: int | None = None) -> np.ndarray:
        """Count estimates of the declared codes ``0..k−1``, with the chosen debiasing.

        Parameters
        ----------
        reports : CMSReports
            The users' reports.
        n : int, optional
            The number of users (apple only); by default the number of reports.

        Returns
        -------
        numpy.ndarray of float64, shape (k,)

        Raises
        ------
        QueryError
            For an open-domain sketch (use :meth:`estimate_keys`), or a hash family that
            cannot tell two codes apart (exact).
        """
        if self.k is None:
            raise QueryError("an open-domain sketch estimates keys: use estimate_keys")
        keys = self._domain_keys()
        if self.debias == "apple":
            return self.estimate_keys(reports, keys, n)
        return np.linalg.solve(self.collisions(), self.raw(reports, keys))

    def estimate_from_sketch(self, sketch: np.ndarray, n: int) -> np.ndarray:
        """:meth:`estimate` from the sketch alone (:meth:`sketch_from_counts`).

        Parameters
        ----------
        sketch : numpy.ndarray, shape (hashes, buckets)
            The sketch of all the reports.
        n : int
            The number of users.

        Returns
        -------
        numpy.ndarray of float64, shape (k,)

        Raises
        ------
        QueryError
            As :meth:`estimate`.
        """
        if self.k is None:
            raise QueryError("an open-domain sketch estimates keys: use estimate_keys")
        keys = self._domain_keys()
        if self.debias == "apple":
            m = self.buckets
            return m / (m - 1.0) * (self.raw(None, keys, sketch) - int(n) / m)
        return np.linalg.solve(self.collisions(), self.raw(None, keys, sketch))

    def _domain_keys(self) -> np.ndarray:
        """The hash keys of the declared codes 0..k−1 (scrambled, see :func:`code_keys`)."""
        if self._keys is None:
            self._keys = code_keys(np.arange(self.k))
        return self._keys

    def collisions(self) -> np.ndarray:
        """``A[d, d']``: fraction of the hash functions under which codes d, d' collide.

        Returns
        -------
        numpy.ndarray of float64, shape (k, k)
            Cached.

        Raises
        ------
        QueryError
            For an open domain, or (exact) a nearly singular ``A``.
        """
        if self._A is None:
            if self.k is None:
                raise QueryError("collisions need a declared domain")
            table = self.bucket_table(self._domain_keys())
            A = np.zeros((self.k, self.k))
            for row in table:
                A += row[:, None] == row[None, :]
            A /= self.hashes
            if self.debias == "exact":
                w = np.linalg.eigvalsh(A)
                if w[0] < 1e-9 * w[-1]:
                    raise QueryError("the hash family cannot tell some values apart; "
                                     "raise buckets or hashes, or use debias=apple")
            self._A = A
        return self._A

    def _exact_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """``B = A⁻¹`` and ``Q[t, d] = mean_j G_j[t, d]²`` (O(K·k²), cached)."""
        if self._Q is None:
            A = self.collisions()
            B = np.linalg.inv(A)
            Q = np.zeros_like(B)
            table = self.bucket_table(self._domain_keys())
            for row in table:
                order = np.argsort(row, kind="stable")
                srt = row[order]
                starts = np.flatnonzero(np.r_[True, srt[1:] != srt[:-1]])
                sums = np.add.reduceat(B[:, order], starts, axis=1)  # per occupied bucket
                slot = np.empty(self.k, dtype=np.int64)
                slot[order] = np.cumsum(np.r_[False, srt[1:] != srt[:-1]])
                G = sums[:, slot]
                Q += G * G
            Q /= self.hashes
            self._Binv, self._Q = B, Q
        return self._Binv, self._Q

    def variance(self, n: int, counts=None) -> np.ndarray:
        """Exact variance of each count estimate for this hash family (module docstring).

        ``counts=None``: the data-free leading term ``n·(c_ε²−1)/4`` (times
        ``(m/(m−1))²`` for apple, ``B[t, t]`` for exact). For apple on a domain of more than
        4096 values the collision term is left out (it is at most ``Σ f·A(1 − A)``, of
        order ``n/m``).

        Parameters
        ----------
        n : int
            The number of users.
        counts : array_like, shape (k,), optional
            True (or plug-in) counts, clipped to ``[0, n]``.

        Returns
        -------
        numpy.ndarray of float64
            Shape (k,), or (1,) for an open domain (the data-free term of any key).
        """
        n = float(n)
        if self.k is None:
            m = self.buckets
            return np.array([(m / (m - 1.0)) ** 2 * n * self.unit_var])
        if self.debias == "apple":
            m = self.buckets
            base = np.full(self.k, n * self.unit_var)
            if counts is not None and self.k <= EXACT_MAX_K:  # else: the leading term
                A = self.collisions()
                f = np.clip(np.asarray(counts, dtype=np.float64), 0.0, n)
                base += (A * (1.0 - A)) @ f
            return (m / (m - 1.0)) ** 2 * base
        B, Q = self._exact_terms()
        out = n * self.unit_var * np.diag(B)
        if counts is not None:
            f = np.clip(np.asarray(counts, dtype=np.float64), 0.0, n)
            out = out + Q @ f - f
        return out

    def collision_variance(self, others_sq) -> np.ndarray:
        """Variance of an apple estimate over the draw of the hash family (per release).

        ``others_sq``: ``Σ_{d' ≠ d} f(d')²`` per item. Each ``A[d, d']`` is the mean of
        ``K`` independent collision indicators of probability ``1/m``; treating those of
        different ``d'`` as independent (:func:`code_keys`, word fingerprints), the
        collision term ``Σ_{d'≠d} A[d, d'] f(d')`` has variance
        ``Σ_{d'≠d} f(d')² (1/m)(1 − 1/m)/K``, times ``(m/(m−1))²``.

        Parameters
        ----------
        others_sq : array_like
            ``Σ_{d' ≠ d} f(d')²`` per item (negative values count as 0).

        Returns
        -------
        numpy.ndarray of float64, shape of ``others_sq``
        """
        m = self.buckets
        per = (1.0 / m) * (1.0 - 1.0 / m) / self.hashes * (m / (m - 1.0)) ** 2
        return per * np.maximum(np.asarray(others_sq, dtype=np.float64), 0.0)

    def hash_variance(self, counts) -> np.ndarray:
        """Extra variance of each count estimate when the family is drawn per release.

        Zero for the exact debiasing (unbiased for every family, so its variance given
        the family is already the whole variance); for apple
        :meth:`collision_variance` with the given (true or plug-in) ``counts``.

        Parameters
        ----------
        counts : array_like, shape (k,)
            True or plug-in counts (negative values count as 0).

        Returns
        -------
        numpy.ndarray of float64, shape (k,)
        """
        f = np.clip(np.asarray(counts, dtype=np.float64), 0.0, None)
        if self.debias == "exact":
            return np.zeros_like(f)
        return self.collision_variance(float(np.sum(f * f)) - f * f)

    def bias(self, counts) -> np.ndarray:
        """Bias of the estimates for true ``counts`` with this (fixed) hash family (0 for
        exact); its mean over a family drawn per release is 0.

        Parameters
        ----------
        counts : array_like, shape (k,)
            The true counts.

        Returns
        -------
        numpy.ndarray of float64, shape (k,)

        Raises
        ------
        QueryError
            For apple on an open domain or one above :data:`EXACT_MAX_K` values.
        """
        f = np.asarray(counts, dtype=np.float64)
        if self.debias == "exact":
            return np.zeros_like(f)
        if self.k is None or self.k > EXACT_MAX_K:
            raise QueryError(f"the bias is computed for declared domains of at most "
                             f"{EXACT_MAX_K} values")
        m = self.buckets
        return m / (m - 1.0) * (self.collisions() @ f - f.sum() / m) - f

    # -- collector's view
    def report_keys(self, reports: CMSReports, against=None) -> np.ndarray:
        j = np.asarray(reports.j, dtype=np.int64)
        if against is None:
            nb = reports.bits.shape[1]
            rec = np.empty((len(j), 8 + nb), dtype=np.uint8)
            rec[:, :8] = j.astype("<i8").view(np.uint8).reshape(-1, 8)
            rec[:, 8:] = reports.bits
            return rec.view(f"V{8 + nb}").reshape(-1)
        vals = (code_keys(check_values(np.asarray(against), self.k)) if self.k
                else np.asarray(against, dtype=np.uint64))
        return pattern_keys([get_bits(reports.bits, self.bucket(j, np.full(j.size, v))) == 1
                             for v in vals.tolist()])

    def to_records(self, reports: CMSReports) -> dict[str, np.ndarray]:
        return {"hash_index": np.asarray(reports.j, dtype=np.int64),
                "bits": bit_strings(reports.bits, self.buckets)}

    def n_reports(self, reports) -> int:
        return len(reports)

    def describe(self):
        return super().describe() | {"k": self.k, "hashes": self.hashes,
                                     "buckets": self.buckets, "debias": self.debias,
                                     "c_eps": self.c_eps, "hash_seed": self.hash_seed}
