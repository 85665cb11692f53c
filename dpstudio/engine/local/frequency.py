"""Frequency oracles: randomized response, K-ary RR, unary encodings, OLH (and HR).

Each is a *pure* protocol in the sense of Wang, Blocki, Li & Jha (2017, "Locally
Differentially Private Protocols for Frequency Estimation", USENIX Security): a report
supports a set of values, the user's own with probability ``p`` and any other with
probability ``q``, so one estimator and one exact variance serve all
(:class:`~dpstudio.engine.local.base.PureFrequencyOracle`). With ``Var*`` the variance of
a count held by no one (their Table 1):

==========  =================================  ===================================
protocol    p, q                               Var* / n
==========  =================================  ===================================
K-RR (DE)   e^ε/(e^ε+k−1), 1/(e^ε+k−1)        (k − 2 + e^ε)/(e^ε − 1)²
SUE         e^{ε/2}/(e^{ε/2}+1), 1/(e^{ε/2}+1)  e^{ε/2}/(e^{ε/2} − 1)²
OUE         1/2, 1/(e^ε+1)                     4e^ε/(e^ε − 1)²
OLH         e^ε/(e^ε+g−1), ≈1/g                (e^ε − 1 + g)²/((e^ε − 1)²(g − 1))
HR          e^ε/(e^ε+1), 1/2                   (e^ε + 1)²/(e^ε − 1)²
==========  =================================  ===================================

For OLH with ``g = e^ε + 1`` the last equals OUE's ``4e^ε/(e^ε−1)²``. The exact variance
for true count ``c`` adds ``c (1 − p − q)/(p − q)``; it vanishes only for binary RR and
SUE (``p + q = 1``) — so Bellet's K-RR formula ``(k−2+e^ε)/(n(e^ε−1)²)`` for frequencies
is exact for rare values, an under-estimate for frequent ones when ``k > 2``.

Hadamard response (HR) lives with the transform its server runs in
:mod:`~dpstudio.engine.local.hadamard` and is re-exported here, so this module's names
are the pure frequency oracles; the unary encodings' packed bit matrices are in
:mod:`~dpstudio.engine.local.bits`. All coins are exact
(:mod:`dpstudio.engine.local._coins`).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.local._coins import (
    ExactCoin,
    rr_flip_coin,
    rr_keep_coin,
    uniform_below32,
)
from dpstudio.engine.local.base import (
    PureFrequencyOracle,
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
    row_keys,
    set_bits,
)
from dpstudio.engine.local.hadamard import HadamardResponse

__all__ = [
    "HadamardResponse",
    "KaryRR",
    "OLHReports",
    "OptimalLocalHashing",
    "RandomizedResponse",
    "UnaryEncoding",
    "olh_default_g",
]

# Largest packed bit matrix a unary encoding builds at once (bytes).
_MAX_UE_BYTES = 1 << 31


# ------------------------------------------------------------------ shared client steps


def krr_perturb(x: np.ndarray, k: int, keep: ExactCoin, source) -> np.ndarray:
    """K-ary randomized response of codes ``x`` in ``0..k−1``: keep with the coin, else a
    value uniform among the ``k − 1`` others.

    For ``k ≤ 2^16 + 1`` one 32-bit word per user: its high 16 bits are the first bits of
    the coin's uniform (ties with the threshold, probability 2^-16, draw more bits and
    are decided exactly), its low 16 bits draw the other value (Lemire, with rejection).
    Larger ``k``: one word for each.
    """
    n = x.size
    if k - 1 <= 1 << 16:
        words = source.uint32(n)
        kept = keep.from_high_bits(words, 16, source)
        u = uniform_below32(k - 1, words, source)  # uses the low 16 bits only
    else:
        words = source.uint32(2 * n)
        kept = keep.from_words32(words[:n], source)
        u = uniform_below32(k - 1, words[n:], source)
    u += u >= x  # skip the true value: uniform on the others
    return np.where(kept, x, u)


def _against(against, k: int) -> list[int]:
    return [int(v) for v in check_values(np.asarray(against), k)]


# ------------------------------------------------------------------ K-RR and RR


class KaryRR(PureFrequencyOracle):
    """K-ary randomized response (Kairouz, Oh & Viswanath 2014; "direct encoding").

    Each user reports their value with probability ``e^ε/(e^ε + k − 1)`` and otherwise a
    value uniform among the ``k − 1`` others. Reports: int64 codes; ``log2 k`` bits each.

    Parameters
    ----------
    epsilon : float
        The per-user ε, in (0, 700].
    k : int
        The domain size (codes ``0..k−1``), ≥ 2.

    Attributes
    ----------
    p, q : float
        ``e^ε/(e^ε + k − 1)`` and ``1/(e^ε + k − 1)``.

    Raises
    ------
    ParameterError
        For a bad ε or ``k``.
    """

    name = "krr"
    label = "K-ary randomized response"

    def __init__(self, epsilon: float, k: int) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        self.k = check_domain_size(k)
        self._keep = rr_keep_coin(self.epsilon, self.k - 1)
        ee = math.exp(self.epsilon)
        self.p = ee / (ee + self.k - 1)
        self.q = 1.0 / (ee + self.k - 1)
        self.messages_bits = max(1, math.ceil(math.log2(self.k)))

    def randomize(self, values, source) -> np.ndarray:
        """Each user's reported code.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Codes in ``0..k−1`` (QueryError otherwise).
        source : Source

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
        """
        x = check_values(values, self.k)
        return krr_perturb(x, self.k, self._keep, source)

    def support_counts(self, reports) -> np.ndarray:
        r = np.asarray(reports)
        return np.bincount(r, minlength=self.k)[: self.k]

    def report_keys(self, reports, against=None) -> np.ndarray:
        r = np.asarray(reports, dtype=np.int64)
        if against is None:
            return r
        return pattern_keys([r == v for v in _against(against, self.k)])

    def to_records(self, reports) -> dict[str, np.ndarray]:
        return {"report": np.asarray(reports, dtype=np.int64)}

    def describe(self):
        return super().describe() | {"k": self.k, "p": self.p, "q": self.q}


class RandomizedResponse(KaryRR):
    """Warner's (1965) randomized response for a yes/no answer (codes 0 = no, 1 = yes).

    Each user answers truthfully with probability ``p`` and lies otherwise: ε-LDP with
    ``ε = ln(p/(1−p))``. Give ``p`` in (1/2, 1), or ε (then ``p = e^ε/(1+e^ε)``). The
    proportion of "yes" is estimated by ``Ŷ = (mean(z) + p − 1)/(2p − 1)``.

    Parameters
    ----------
    epsilon : float
        The per-user ε, used when ``p`` is not given.
    p : float, optional
        Probability of answering truthfully, in (1/2, 1); ``None`` or 0 derives it from ε.
        ε is then ``ln(p/(1−p))``, rounded up.

    Raises
    ------
    ParameterError
        For ``p`` outside (1/2, 1) or a bad ε.
    """

    name = "rr"
    label = "Randomized response (Warner)"

    def __init__(self, epsilon: float = 1.0, p: float | None = None) -> None:
        if p is None or p == 0:
            KaryRR.__init__(self, epsilon, 2)
            return
        try:
            pf = float(p)
        except (TypeError, ValueError):
            raise ParameterError(f"p must be a number in (1/2, 1); got {p!r}") from None
        if not (0.5 < pf < 1.0):
            raise ParameterError(f"p must lie strictly between 1/2 and 1; got {p!r}")
        # ε = ln(p/(1−p)) to 40 digits, then rounded up: the claim is never below the truth.
        with localcontext() as ctx:
            ctx.prec = 40
            ratio = Fraction(pf) / (1 - Fraction(pf))
            ln = (Decimal(ratio.numerator) / Decimal(ratio.denominator)).ln()
        self.epsilon = math.nextafter(float(ln), math.inf)
        self.k = 2
        self._keep = ExactCoin.rational(Fraction(pf))
        self.p, self.q = pf, 1.0 - pf
        self.messages_bits = 1

    def proportion(self, reports) -> float:
        """Warner's estimator of the proportion of "yes" (code 1).

        Parameters
        ----------
        reports : array_like of int
            The 0/1 answers.

        Returns
        -------
        float
            Unbiased, possibly outside [0, 1].

        Raises
        ------
        QueryError
            For no reports.
        """
        z = np.asarray(reports)
        if z.size == 0:
            raise QueryError("no reports to estimate from")
        return (float(np.mean(z)) + self.p - 1.0) / (2.0 * self.p - 1.0)


# ------------------------------------------------------------------ unary encodings


class UnaryEncoding(PureFrequencyOracle):
    """Unary encoding: a one-hot vector of length ``k`` with every bit randomized.

    ``sue`` (symmetric, basic one-time RAPPOR, Erlingsson et al. 2014): bit kept with
    probability ``e^{ε/2}/(e^{ε/2}+1)``. ``oue`` (optimized, Wang et al. 2017): the 1 is
    kept with probability 1/2, each 0 becomes 1 with probability ``1/(e^ε+1)``.
    Reports: packed bit matrix ``(n, ceil(k/8))`` uint8 (``np.packbits`` order, bit ``v``
    of a row is value ``v``); ``k`` bits each.

    Parameters
    ----------
    epsilon : float
        The per-user ε, in (0, 700].
    k : int
        The domain size, ≥ 2.
    optimized : bool
        True for ``oue``, False for ``sue``.

    Attributes
    ----------
    p, q : float
        Probability that the user's own bit, and any other bit, is reported as 1.

    Raises
    ------
    ParameterError
        For a bad ε or ``k``.
    """

    def __init__(self, epsilon: float, k: int, optimized: bool) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        self.k = check_domain_size(k)
        self.optimized = bool(optimized)
        self.name = "oue" if optimized else "sue"
        self.label = "Optimized unary encoding" if optimized else "Symmetric unary encoding"
        self.messages_bits = self.k
        if optimized:
            self._noise = rr_flip_coin(self.epsilon)  # 0 → 1 with 1/(e^ε+1)
            self._true = None  # fair coin
            self.p, self.q = 0.5, self._noise.value
        else:
            half = self.epsilon / 2.0
            self._noise = rr_flip_coin(half)
            self._true = rr_keep_coin(half, 1)
            self.p, self.q = self._true.value, self._noise.value

    def randomize(self, values, source) -> np.ndarray:
        """Each user's randomized one-hot vector (QueryError above 2 GiB in all).

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Codes in ``0..k−1`` (QueryError otherwise).
        source : Source

        Returns
        -------
        numpy.ndarray of uint8, shape (n, ceil(k/8))
            The packed bit matrix.
        """
        x = check_values(values, self.k)
        nb = (self.k + 7) // 8
        if x.size * nb > _MAX_UE_BYTES:
            raise QueryError(f"{self.name} would send {x.size} × {self.k} bits "
                             f"({x.size * nb / 2**30:.1f} GiB); use olh or hadamard")
        m = random_bit_matrix(x.size, self.k, self._noise, source)
        if self._true is None:
            truth = source.bits(x.size)
        else:
            truth = self._true.flip(x.size, source)
        set_bits(m, x, truth)
        return m

    def n_reports(self, reports) -> int:
        return int(np.asarray(reports).shape[0])

    def support_counts(self, reports) -> np.ndarray:
        return column_counts(np.asarray(reports, dtype=np.uint8), self.k)

    def report_keys(self, reports, against=None) -> np.ndarray:
        m = np.asarray(reports, dtype=np.uint8)
        if against is None:
            return row_keys(m)
        return pattern_keys([get_bits(m, np.full(m.shape[0], v)) == 1
                             for v in _against(against, self.k)])

    def to_records(self, reports) -> dict[str, np.ndarray]:
        return {"bits": bit_strings(np.asarray(reports, dtype=np.uint8), self.k)}

    def describe(self):
        return super().describe() | {"k": self.k, "p": self.p, "q": self.q}


# ------------------------------------------------------------------ OLH

# Hash family: h_{a,b}(x) = bucket(((a·x + b) mod P)), P = 2^31 − 1 (a Mersenne prime),
# a uniform in [1, P), b uniform in [0, P), bucket(t) = floor(t·g / 2^31) ∈ [0, g).
_P31 = (1 << 31) - 1
_P31_U32 = np.uint32(_P31)


class OLHReports(NamedTuple):
    """What each OLH user sends: the hash seed ``(a, b)`` and the perturbed bucket ``y``.

    Attributes
    ----------
    a : numpy.ndarray of uint32
        In ``[1, P)``, ``P = 2^31 − 1``.
    b : numpy.ndarray of uint32
        In ``[0, P)``.
    y : numpy.ndarray of uint32
        The reported bucket, in ``[0, g)``.
    """

    a: np.ndarray  # uint32 in [1, P)
    b: np.ndarray  # uint32 in [0, P)
    y: np.ndarray  # uint32 in [0, g)

    def __len__(self) -> int:  # number of users, not of fields
        return int(self.y.shape[0])


def olh_default_g(epsilon: float) -> int:
    """Wang et al.'s optimal ``g = e^ε + 1``, rounded: ``round(e^ε) + 1`` (at most 2^16).

    Parameters
    ----------
    epsilon : float
        The per-user ε.

    Returns
    -------
    int
        The number of hash buckets.
    """
    return int(min(round(math.exp(min(epsilon, 12.0))) + 1, 1 << 16))


def _uniform_mod_p31(size: int, low: int, source) -> np.ndarray:
    """Exact uniform integers in ``[low, P)`` (low 0 or 1) from 31-bit draws."""
    out = (source.uint32(size) >> np.uint32(1)).astype(np.uint32)
    bad = np.flatnonzero((out < low) | (out >= _P31_U32))
    while bad.size:
        redo = (source.uint32(bad.size) >> np.uint32(1)).astype(np.uint32)
        out[bad] = redo
        bad = bad[(redo < low) | (redo >= _P31_U32)]
    return out


class OptimalLocalHashing(PureFrequencyOracle):
    """Optimal local hashing (Wang et al. 2017): hash to ``g`` buckets, then g-ary RR.

    Each user draws a hash function from a universal family (their own seed ``(a, b)``),
    hashes their value to a bucket in ``0..g−1`` and reports the bucket by g-ary
    randomized response. A report supports the values hashing to its bucket under its
    seed. Two distinct values collide under a random seed with probability ``c``
    computed exactly for this family (about ``1/g``), so ``q = c·p + (1 − c)/(e^ε+g−1)``
    and the estimator is exactly unbiased.

    Aggregation counts the support of every value by re-hashing all users, incrementally
    in ``uint32`` (``(a·(v+1) + b) mod P = (a·v + b) mod P + a mod P``) over user chunks
    that stay in cache: O(n·k) but a few vector operations per (user, value) pair.

    Parameters
    ----------
    epsilon : float
        The per-user ε, in (0, 700].
    k : int
        The domain size, ≥ 2.
    g : int, optional
        Number of hash buckets, 2..65536; ``None`` or 0: :func:`olh_default_g`.

    Attributes
    ----------
    g : int
        Number of buckets.
    p, q : float
        Support probabilities of the user's own value and of any other value.
    collision : float
        Exact probability that two distinct values share a bucket under a random seed.

    Raises
    ------
    ParameterError
        For a bad ε, ``k`` or ``g``.
    """

    name = "olh"
    label = "Optimal local hashing"

    def __init__(self, epsilon: float, k: int, g: int | None = None) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        self.k = check_domain_size(k)
        if g is None or g == 0:
            g = olh_default_g(self.epsilon)
        self.g = check_domain_size(g, name="g")
        if self.g > 1 << 16:
            raise ParameterError(f"g must be at most 65536; got {g!r}")
        self._keep = rr_keep_coin(self.epsilon, self.g - 1)
        ee = math.exp(self.epsilon)
        self.p = self._keep.value
        # Bucket ranges [lo_y, hi_y) of t = (a x + b) mod P; exact collision probability.
        edges = [min(-((-y << 31) // self.g), _P31) for y in range(self.g + 1)]
        sizes = [edges[i + 1] - edges[i] for i in range(self.g)]
        c = Fraction(sum(s * (s - 1) for s in sizes), _P31 * (_P31 - 1))
        self.collision = float(c)
        self.q = float(c) * self.p + (1.0 - float(c)) / (ee + self.g - 1)
        self._lo = np.array(edges[:-1], dtype=np.int64)
        self._width = np.array(sizes, dtype=np.uint32)
        self.messages_bits = 62 + max(1, math.ceil(math.log2(self.g)))

    def hash(self, a: np.ndarray, b: np.ndarray, x) -> np.ndarray:
        """Bucket of value(s) ``x`` under seeds ``(a, b)`` (int64 in ``0..g−1``).

        Parameters
        ----------
        a, b : numpy.ndarray of uint32
            The users' seeds.
        x : array_like of int
            Values (broadcast against the seeds).

        Returns
        -------
        numpy.ndarray of int64
            ``floor(((a·x + b) mod (2^31 − 1))·g / 2^31)``.
        """
        x = np.asarray(x, dtype=np.uint64)
        t = (a.astype(np.uint64) * x + b.astype(np.uint64)) % np.uint64(_P31)
        return ((t * np.uint64(self.g)) >> np.uint64(31)).astype(np.int64)

    def randomize(self, values, source) -> OLHReports:
        """Each user's seed and randomized bucket.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Codes in ``0..k−1`` (QueryError otherwise).
        source : Source

        Returns
        -------
        OLHReports
        """
        x = check_values(values, self.k)
        a = _uniform_mod_p31(x.size, 1, source)
        b = _uniform_mod_p31(x.size, 0, source)
        y = krr_perturb(self.hash(a, b, x), self.g, self._keep, source)
        return OLHReports(a, b, y.astype(np.uint32))

    def support_counts(self, reports: OLHReports, chunk: int = 1 << 15) -> np.ndarray:
        """How many reports support each value (the value hashes to the reported bucket).

        Parameters
        ----------
        reports : OLHReports
            The users' reports.
        chunk : int
            Users re-hashed at a time.

        Returns
        -------
        numpy.ndarray of int64, shape (k,)
        """
        a, b, y = (np.asarray(f) for f in reports)
        counts = np.zeros(self.k, dtype=np.int64)
        for start in range(0, y.size, chunk):
            aa = a[start:start + chunk].astype(np.uint32)
            yy = y[start:start + chunk].astype(np.int64)
            lo = self._lo[yy]
            # s = (a·v + b − lo_y) mod P, starting at v = 0; supported iff s < width_y.
            s = ((b[start:start + chunk].astype(np.int64) - lo) % _P31).astype(np.uint32)
            w = self._width[yy]
            tmp = np.empty_like(s)
            hit = np.empty(s.size, dtype=bool)
            for v in range(self.k):
                if v:
                    np.add(s, aa, out=s)  # < 2^32: no overflow
                    np.subtract(s, _P31_U32, out=tmp)  # wraps above s when s < P
                    np.minimum(s, tmp, out=s)
                np.less(s, w, out=hit)
                counts[v] += np.count_nonzero(hit)
        return counts

    def report_keys(self, reports: OLHReports, against=None) -> np.ndarray:
        a, b, y = (np.asarray(f) for f in reports)
        if against is None:
            rec = np.empty(y.size, dtype=[("a", "<u4"), ("b", "<u4"), ("y", "<u4")])
            rec["a"], rec["b"], rec["y"] = a, b, y
            return rec.view("V12")
        return pattern_keys([self.hash(a, b, v) == y.astype(np.int64)
                             for v in _against(against, self.k)])

    def to_records(self, reports: OLHReports) -> dict[str, np.ndarray]:
        return {"hash_a": np.asarray(reports.a, dtype=np.int64),
                "hash_b": np.asarray(reports.b, dtype=np.int64),
                "report": np.asarray(reports.y, dtype=np.int64)}

    def describe(self):
        return super().describe() | {"k": self.k, "g": self.g, "p": self.p, "q": self.q,
                                     "collision_probability": self.collision,
                                     "hash": "((a·x + b) mod (2^31 − 1))·g >> 31"}
