"""Frequency oracles: randomized response, K-ary RR, unary encodings, OLH, Hadamard response.

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

All coins are exact (:mod:`dpstudio.engine.local._coins`).
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

__all__ = [
    "HadamardResponse",
    "KaryRR",
    "OLHReports",
    "OptimalLocalHashing",
    "RandomizedResponse",
    "UnaryEncoding",
    "olh_default_g",
]

_S32 = np.uint64(32)
# Largest packed bit matrix a unary encoding builds at once (bytes).
_MAX_UE_BYTES = 1 << 31
# Rows of a bit matrix randomized per chunk (keeps the coin's working set ~16 MB).
_CHUNK_BYTES = 1 << 24


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


def random_bit_matrix(rows: int, width: int, coin: ExactCoin, source) -> np.ndarray:
    """A ``(rows, ceil(width/8))`` packed uint8 matrix (``np.packbits`` order) of i.i.d.
    exact coins; padding bits past ``width`` are 0."""
    nb = (width + 7) // 8
    out = np.empty((rows, nb), dtype=np.uint8)
    step = max(1, _CHUNK_BYTES // nb)
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        nbytes = (stop - start) * nb
        words = coin.lanes((nbytes + 7) // 8, source)
        out[start:stop] = words.view(np.uint8)[:nbytes].reshape(stop - start, nb)
    if width % 8:
        out[:, -1] &= np.uint8((0xFF << (8 - width % 8)) & 0xFF)
    return out


def set_bits(matrix: np.ndarray, cols: np.ndarray, bits: np.ndarray) -> None:
    """Set bit ``cols[i]`` of row ``i`` of a packed matrix to ``bits[i]`` (in place)."""
    rows = np.arange(matrix.shape[0])
    byte = cols >> 3
    mask = (np.uint8(0x80) >> (cols & 7).astype(np.uint8)).astype(np.uint8)
    cur = matrix[rows, byte]
    matrix[rows, byte] = (cur & ~mask) | (mask * bits.astype(np.uint8))


def get_bits(matrix: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Bit ``cols[i]`` of row ``i`` of a packed matrix (uint8 0/1)."""
    rows = np.arange(matrix.shape[0])
    return (matrix[rows, cols >> 3] >> (7 - (cols & 7)).astype(np.uint8)) & np.uint8(1)


def column_counts(matrix: np.ndarray, width: int, groups: np.ndarray | None = None,
                  n_groups: int = 1) -> np.ndarray:
    """Number of rows with each bit ``0..width−1`` set, from a packed matrix.

    Rows are unpacked a few thousand at a time and summed in uint16 (no overflow below
    65,536 rows). With ``groups`` (an int per row in ``0..n_groups−1``) the counts are per
    group, shape ``(n_groups, width)``: rows are first sorted by group.
    """
    rows = matrix.shape[0]
    if groups is not None:
        g = np.asarray(groups, dtype=np.int64)
        order = np.argsort(g, kind="stable")
        matrix = matrix[order]
        bounds = np.searchsorted(g[order], np.arange(n_groups + 1))
    else:
        bounds = np.array([0, rows])
    out = np.zeros((n_groups, width), dtype=np.int64)
    step = int(min(65535, max(1, (1 << 22) // max(width, 1))))
    for grp in range(n_groups):
        for start in range(int(bounds[grp]), int(bounds[grp + 1]), step):
            stop = min(int(bounds[grp + 1]), start + step)
            bits = np.unpackbits(matrix[start:stop], axis=1, count=width)
            out[grp] += bits.sum(axis=0, dtype=np.uint16)
    return out if groups is not None else out[0]


def bit_strings(matrix: np.ndarray, width: int) -> np.ndarray:
    """Each row of a packed matrix as a '0'/'1' string of ``width`` characters."""
    bits = np.unpackbits(matrix, axis=1, count=width) + np.uint8(ord("0"))
    return np.ascontiguousarray(bits).view(f"S{width}").reshape(-1).astype(str)


def row_keys(matrix: np.ndarray) -> np.ndarray:
    """One comparable key per row of a packed matrix (an int if it fits 63 bits)."""
    nb = matrix.shape[1]
    if nb <= 7:
        key = np.zeros(matrix.shape[0], dtype=np.int64)
        for j in range(nb):
            key = (key << 8) | matrix[:, j].astype(np.int64)
        return key
    return np.ascontiguousarray(matrix).view(f"V{nb}").reshape(-1)


def pattern_keys(supports: list[np.ndarray]) -> np.ndarray:
    """Bit ``i`` of the key set where ``supports[i]`` is true."""
    key = np.zeros(supports[0].shape, dtype=np.int64)
    for i, s in enumerate(supports):
        key |= s.astype(np.int64) << i
    return key


def _against(against, k: int) -> list[int]:
    return [int(v) for v in check_values(np.asarray(against), k)]


# ------------------------------------------------------------------ K-RR and RR


class KaryRR(PureFrequencyOracle):
    """K-ary randomized response (Kairouz, Oh & Viswanath 2014; "direct encoding").

    Each user reports their value with probability ``e^ε/(e^ε + k − 1)`` and otherwise a
    value uniform among the ``k − 1`` others. Reports: int64 codes; ``log2 k`` bits each.
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
        """Warner's estimator of the proportion of "yes" (code 1)."""
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
    """What each OLH user sends: the hash seed ``(a, b)`` and the perturbed bucket ``y``."""

    a: np.ndarray  # uint32 in [1, P)
    b: np.ndarray  # uint32 in [0, P)
    y: np.ndarray  # uint32 in [0, g)

    def __len__(self) -> int:  # number of users, not of fields
        return int(self.y.shape[0])


def olh_default_g(epsilon: float) -> int:
    """Wang et al.'s optimal ``g = e^ε + 1``, rounded: ``round(e^ε) + 1`` (at most 2^16)."""
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
        """Bucket of value(s) ``x`` under seeds ``(a, b)`` (int64 in ``0..g−1``)."""
        x = np.asarray(x, dtype=np.uint64)
        t = (a.astype(np.uint64) * x + b.astype(np.uint64)) % np.uint64(_P31)
        return ((t * np.uint64(self.g)) >> np.uint64(31)).astype(np.int64)

    def randomize(self, values, source) -> OLHReports:
        x = check_values(values, self.k)
        a = _uniform_mod_p31(x.size, 1, source)
        b = _uniform_mod_p31(x.size, 0, source)
        y = krr_perturb(self.hash(a, b, x), self.g, self._keep, source)
        return OLHReports(a, b, y.astype(np.uint32))

    def support_counts(self, reports: OLHReports, chunk: int = 1 << 15) -> np.ndarray:
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


# ------------------------------------------------------------------ Hadamard response


def fwht(a: np.ndarray) -> np.ndarray:
    """Fast Walsh–Hadamard transform (Sylvester order): ``T[r] = Σ_y a[y] (−1)^{|r∧y|}``."""
    a = np.array(a, dtype=np.int64 if a.dtype.kind in "iub" else np.float64)
    size = a.size
    h = 1
    while h < size:
        v = a.reshape(-1, 2, h)
        a = np.stack((v[:, 0] + v[:, 1], v[:, 0] - v[:, 1]), axis=1).reshape(size)
        h *= 2
    return a


class HadamardResponse(PureFrequencyOracle):
    """Hadamard response (Acharya, Sun & Zhang 2019), single-block form.

    With ``K`` the smallest power of two above ``k``, value ``x`` owns the set ``C_x``
    of columns ``y`` where row ``x+1`` of the Sylvester–Hadamard matrix ``H_K`` is +1
    (``|C_x| = K/2``; row 0 is skipped). A user reports ``y`` uniform on ``C_x`` with
    probability ``e^ε/(e^ε+1)`` and uniform on its complement otherwise: each ``y`` has
    probability ``2e^ε/(K(e^ε+1))`` or ``2/(K(e^ε+1))``, so ε-LDP. Distinct rows agree on
    exactly half the columns, so ``q = 1/2``; the server's support counts are one fast
    Walsh–Hadamard transform of the report histogram. ``log2 K`` bits per report.
    """

    name = "hadamard"
    label = "Hadamard response"

    def __init__(self, epsilon: float, k: int) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        self.k = check_domain_size(k)
        self.K = 1 << self.k.bit_length()  # > k, so rows 1..k exist
        self.log2K = self.K.bit_length() - 1
        self._in = rr_keep_coin(self.epsilon, 1)
        self.p, self.q = self._in.value, 0.5
        self.messages_bits = self.log2K

    def randomize(self, values, source) -> np.ndarray:
        x = check_values(values, self.k)
        words = source.uint64(x.size)
        inside = self._in.from_words32((words >> _S32).astype(np.uint32), source)
        y = (words & np.uint64(self.K - 1)).astype(np.int64)  # uniform on [0, K)
        row = x + 1
        parity = np.bitwise_count(row & y) & 1  # 0: H[row, y] = +1
        wrong = parity != (~inside).astype(np.int64)
        # Flipping a bit of y that is set in row flips the parity: a bijection between
        # C_x and its complement, so y stays uniform within the chosen side.
        y[wrong] ^= (row & -row)[wrong]
        return y

    def support_counts(self, reports) -> np.ndarray:
        r = np.asarray(reports, dtype=np.int64)
        hist = np.bincount(r, minlength=self.K)
        t = fwht(hist)
        return (r.size + t[1:self.k + 1]) // 2

    def report_keys(self, reports, against=None) -> np.ndarray:
        r = np.asarray(reports, dtype=np.int64)
        if against is None:
            return r
        return pattern_keys([(np.bitwise_count((v + 1) & r) & 1) == 0
                             for v in _against(against, self.k)])

    def to_records(self, reports) -> dict[str, np.ndarray]:
        return {"report": np.asarray(reports, dtype=np.int64)}

    def describe(self):
        return super().describe() | {"k": self.k, "K": self.K, "p": self.p, "q": self.q}
