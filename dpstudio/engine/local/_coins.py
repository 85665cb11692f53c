"""Exact coins for the local randomizers, vectorized over whole columns.

A randomizer's ε holds only if its coins have exactly the probabilities the proof uses,
e.g. ``p = e^ε / (e^ε + k − 1)``. Such a ``p`` is irrational; ``random() < p`` in floating
point flips a coin of some nearby dyadic probability instead. Here a coin compares an
infinite-precision uniform ``U`` (known through a prefix of bits, :class:`LazyUniform`)
with ``p`` itself:

* ``floor(2^64 p)`` is computed once per coin from rigorous rational enclosures of ``p``
  (:func:`dpstudio.engine._exact.exp_neg_bounds`) and certified (both ends of the
  enclosure give the same floor).
* A ``b``-bit prefix ``m`` of ``U`` (``b = 32``, or the top 16 bits of a word whose low
  half serves another draw) decides ``U < p`` unless ``m == floor(2^b p)`` (probability
  ``2^-b``); those few draw more bits and are decided exactly by :class:`LazyUniform`.
* Bit matrices (unary encodings, count-mean sketches) are drawn *bit-sliced*: 64 coins
  per ``uint64`` lane word, compared with ``p`` one binary digit at a time; the first
  digit where ``U`` and ``p`` differ decides. A lane is undecided after ``i`` digits with
  probability ``2^-i``; after a few full passes only the words holding undecided lanes
  draw more digits, and lanes still undecided after all 64 digits of ``floor(2^64 p)``
  go to :class:`LazyUniform`. About 8.5 random bits per coin, no floating point.

Uniform integers below ``r`` come from 32-bit words by Lemire's multiply-and-reject
(exactly uniform: the rejected ``2^32 mod r`` low products are redrawn).
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from dpstudio.engine._exact import LazyUniform, exp_neg_bounds

__all__ = ["ExactCoin", "rr_flip_coin", "rr_keep_coin", "uniform_below32"]

Bounds = tuple[Fraction, Fraction]
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_LITTLE = sys.byteorder == "little"
# Digits drawn for every lane word before only undecided words continue (after 8
# digits 22% of 64-lane words still hold an undecided lane; fewer full passes cost more
# in the gather-heavy per-word phase than the extra random words they save).
_FULL_DIGITS = 8
# Lane words per chunk (256 KiB): the digit passes then run in cache.
_LANE_CHUNK = 1 << 15


def _certified_floor(bounds: Callable[[int], Bounds], bits: int) -> int:
    """``floor(2^bits p)`` from enclosures ``bounds(prec)`` of ``p``, refined until certain."""
    prec = 34
    while True:
        lo, hi = bounds(prec)
        f_lo = (lo.numerator << bits) // lo.denominator
        f_hi = (hi.numerator << bits) // hi.denominator
        if f_lo == f_hi:
            return f_lo
        prec *= 2
        if prec > 1 << 16:
            raise RuntimeError("could not certify a coin's threshold")


class ExactCoin:
    """A coin with ``P(heads) = p`` exactly, for ``p`` in (0, 1) given by rigorous bounds.

    ``bounds(prec)`` returns rationals ``lo <= p <= hi`` that tighten to ``p`` as the
    decimal precision ``prec`` grows; ``value`` is ``p`` in floating point (for formulas).

    Parameters
    ----------
    bounds : callable
        ``bounds(prec) -> (lo, hi)``, two :class:`~fractions.Fraction` enclosing ``p``.
    value : float
        ``p`` in floating point.

    Attributes
    ----------
    bounds : callable
        As given.
    value : float
        As given.
    t64 : int
        ``floor(2^64 p)``, certified from the bounds.
    t32 : numpy.uint32
        ``floor(2^32 p)``.

    Raises
    ------
    RuntimeError
        If the bounds do not certify ``floor(2^64 p)`` by precision 2^16.
    """

    def __init__(self, bounds: Callable[[int], Bounds], value: float) -> None:
        self.bounds = bounds
        self.value = float(value)
        self.t64 = _certified_floor(bounds, 64)
        self.t32 = np.uint32(self.t64 >> 32)

    @classmethod
    def rational(cls, p: Fraction) -> ExactCoin:
        """A coin of rational probability ``p`` (e.g. a float ``p`` given by the user).

        Parameters
        ----------
        p : Fraction or float
            The probability of heads, in (0, 1); a float is taken as the rational it is.

        Returns
        -------
        ExactCoin
        """
        p = Fraction(p)
        return cls(lambda prec: (p, p), float(p))

    def _resolve(self, prefixes, bits: int, source) -> np.ndarray:
        """Exact outcomes for uniforms whose first ``bits`` bits are ``prefixes``."""
        return np.array([LazyUniform(int(m), bits, source).less(self.bounds)
                         for m in prefixes], dtype=bool)

    def from_words32(self, words: np.ndarray, source) -> np.ndarray:
        """Heads (True) where the uniform whose first 32 bits are ``words`` lies below p.

        Parameters
        ----------
        words : numpy.ndarray of uint32
            The first 32 bits of each coin's uniform.
        source : Source
            Draws the further bits of a tie (probability 2^-32 each).

        Returns
        -------
        numpy.ndarray of bool
            One coin per word.
        """
        return self.from_words(words, 32, source)

    def from_high_bits(self, words: np.ndarray, bits: int, source) -> np.ndarray:
        """Heads where the uniform whose first ``bits`` bits are the top ``bits`` bits of the
        uint32 ``words`` is below p (the low bits are left for other uses).

        Parameters
        ----------
        words : numpy.ndarray of uint32
            One word per coin.
        bits : int
            How many of each word's top bits the coin reads (1..32).
        source : Source
            Draws the further bits of a tie (probability 2^-bits each).

        Returns
        -------
        numpy.ndarray of bool
            One coin per word.
        """
        t = self.t64 >> (64 - bits)
        shift = 32 - bits
        heads = words < np.uint32(t << shift)
        if (t + 1) << shift < 1 << 32:
            ties = np.flatnonzero((words < np.uint32((t + 1) << shift)) & ~heads)
        else:
            ties = np.flatnonzero(~heads)
        if ties.size:  # probability 2^-bits each: decided with more bits, exactly
            heads[ties] = self._resolve(words[ties] >> np.uint32(shift), bits, source)
        return heads

    def from_words(self, words: np.ndarray, bits: int, source) -> np.ndarray:
        """Heads where the uniform whose first ``bits`` bits (1..32) are ``words`` is below p.

        A word below ``floor(2^bits p)`` certifies heads, above it tails; a word equal to it
        (probability ``2^-bits``) draws more bits and is decided exactly.

        Parameters
        ----------
        words : numpy.ndarray of uint32
            Each coin's first ``bits`` bits, as an integer below ``2^bits``.
        bits : int
            1..32.
        source : Source
            Draws the further bits of a tie.

        Returns
        -------
        numpy.ndarray of bool
            One coin per word.
        """
        threshold = np.uint32(self.t64 >> (64 - bits))
        heads = words < threshold
        ties = np.flatnonzero(words == threshold)
        if ties.size:
            heads[ties] = self._resolve(words[ties], bits, source)
        return heads

    def flip(self, size: int, source) -> np.ndarray:
        """``size`` independent coins (bool array).

        Parameters
        ----------
        size : int
            Number of coins.
        source : Source
            The random source (32 bits per coin, plus the rare ties).

        Returns
        -------
        numpy.ndarray of bool, shape (size,)
        """
        return self.from_words32(source.uint32(int(size)), source)

    def lanes(self, n_words: int, source) -> np.ndarray:
        """``n_words`` uint64 words whose 64 bits are independent coins (bit = 1: heads).

        Drawn bit-sliced (module docstring), in cache-sized chunks.

        Parameters
        ----------
        n_words : int
            Number of words (64 coins each).
        source : Source
            The random source.

        Returns
        -------
        numpy.ndarray of uint64, shape (n_words,)
        """
        n_words = int(n_words)
        out = np.empty(n_words, dtype=np.uint64)
        for start in range(0, n_words, _LANE_CHUNK):  # chunks stay in cache
            stop = min(n_words, start + _LANE_CHUNK)
            out[start:stop] = self._lanes(stop - start, source)
        return out

    def _lanes(self, n_words: int, source) -> np.ndarray:
        digits = [(self.t64 >> (63 - i)) & 1 for i in range(64)]
        full = _FULL_DIGITS
        rand = source.uint64(full * n_words).reshape(full, n_words)
        heads = np.zeros(n_words, dtype=np.uint64)
        undecided = np.full(n_words, np.uint64(0xFFFFFFFFFFFFFFFF))
        tmp = np.empty(n_words, dtype=np.uint64)
        for i in range(full):
            r = rand[i]  # digit i of each lane's U
            np.invert(r, out=tmp)
            if digits[i]:  # p's digit 1: U's digit 0 decides U < p
                tmp &= undecided
                heads |= tmp
                undecided &= r
            else:  # p's digit 0: U's digit 1 decides U > p
                undecided &= tmp
        live = np.flatnonzero(undecided)
        und = undecided[live]
        hd = heads[live]
        for i in range(full, 64):
            if not live.size:
                return heads
            r = source.uint64(live.size)
            if digits[i]:
                hd |= und & ~r
                und &= r
            else:
                und &= ~r
            done = und == 0
            heads[live[done]] = hd[done]
            keep = ~done
            live, und, hd = live[keep], und[keep], hd[keep]
        # Lanes whose first 64 digits all equal p's (probability 2^-64 each): exact.
        for w, u, h in zip(live.tolist(), und.tolist(), hd.tolist(), strict=True):
            for bit in range(64):
                if (u >> bit) & 1 and LazyUniform(self.t64, 64, source).less(self.bounds):
                    h |= 1 << bit
            heads[w] = np.uint64(h)
        return heads

    def bits(self, size: int, source) -> np.ndarray:
        """``size`` independent coins as uint8 zeros and ones.

        Parameters
        ----------
        size : int
            Number of coins.
        source : Source
            The random source.

        Returns
        -------
        numpy.ndarray of uint8, shape (size,)
            1 for heads.
        """
        words = self.lanes((int(size) + 63) // 64, source)
        return np.unpackbits(words.view(np.uint8))[: int(size)]


def _keep_bounds(eps: Fraction, others: int, prec: int) -> Bounds:
    """Bounds on ``e^ε / (e^ε + others) = 1 / (1 + others·e^-ε)``."""
    lo, hi = exp_neg_bounds(eps, prec)
    return 1 / (1 + others * hi), 1 / (1 + others * lo)


@functools.lru_cache(maxsize=256)
def rr_keep_coin(epsilon: float, others: int) -> ExactCoin:
    """The coin ``P(heads) = e^ε / (e^ε + others)`` (ε taken as the exact rational it is).

    With ``others = k − 1`` it is K-ary randomized response's "report the truth" coin;
    with ``others = 1``, binary randomized response's. Cached: certifying the threshold
    costs a few Decimal exponentials.

    Parameters
    ----------
    epsilon : float
        ε > 0 (finite), taken as the exact rational it is.
    others : int
        Number of other answers, ≥ 1 (``k − 1`` for K-ary randomized response).

    Returns
    -------
    ExactCoin
    """
    eps = Fraction(epsilon)
    value = 1.0 / (1.0 + others * math.exp(-float(epsilon)))
    return ExactCoin(functools.partial(_keep_bounds, eps, int(others)), value)


def uniform_below32(r: int, words: np.ndarray, source) -> np.ndarray:
    """Exact uniform integers in ``[0, r)`` (``1 <= r <= 2^32``) from uint32 words.

    Lemire's method: ``x·r = hi·2^w + lo`` for a ``w``-bit uniform ``x``; ``hi`` is uniform
    on ``[0, r)`` once the products with ``lo < 2^w mod r`` are rejected (redrawn from
    fresh words). ``w = 16`` (the low half of each word, all in uint32 arithmetic) when
    ``r <= 2^16``, else ``w = 32``. Returns uint32 (r <= 2^16) or int64.

    Parameters
    ----------
    r : int
        The range, ``1 <= r <= 2^32``.
    words : numpy.ndarray of uint32
        One uniform word per output (only the low 16 bits are read when ``r <= 2^16``).
    source : Source
        Draws replacements for the rejected words.

    Returns
    -------
    numpy.ndarray of uint32 or int64, shape of ``words``
        Exactly uniform integers in ``[0, r)``.
    """
    r = int(r)
    if r == 1:
        return np.zeros(words.shape, dtype=np.uint32)
    if r <= 1 << 16:
        x = np.bitwise_and(words, np.uint32(0xFFFF), dtype=np.uint32)
        x *= np.uint32(r)
        floor = (1 << 16) % r
        if floor:  # low halves of x below 2^16 mod r are rejected
            low = x.view(np.uint16)[0 if _LITTLE else 1::2]
            bad = np.flatnonzero(low < np.uint16(floor))
        x >>= np.uint32(16)
        if floor:
            while bad.size:
                prod = (source.uint32(bad.size) & np.uint32(0xFFFF)) * np.uint32(r)
                ok = (prod & np.uint32(0xFFFF)) >= np.uint32(floor)
                x[bad[ok]] = prod[ok] >> np.uint32(16)
                bad = bad[~ok]
        return x
    x = words.astype(np.uint64) & _M32
    prod = x * np.uint64(r)
    out = (prod >> _S32).astype(np.int64)
    floor = (1 << 32) % r
    if floor:
        bad = np.flatnonzero((prod & _M32) < np.uint64(floor))
        while bad.size:
            prod = source.uint32(bad.size).astype(np.uint64) * np.uint64(r)
            ok = (prod & _M32) >= np.uint64(floor)
            out[bad[ok]] = (prod[ok] >> _S32).astype(np.int64)
            bad = bad[~ok]
    return out


def _flip_bounds(eps: Fraction, prec: int) -> Bounds:
    """Bounds on ``1 / (e^ε + 1) = e^-ε / (1 + e^-ε)`` (increasing in ``e^-ε``)."""
    lo, hi = exp_neg_bounds(eps, prec)
    return lo / (1 + lo), hi / (1 + hi)


@functools.lru_cache(maxsize=256)
def rr_flip_coin(epsilon: float) -> ExactCoin:
    """The coin ``P(heads) = 1 / (e^ε + 1)``: a binary randomized response's lie.

    Parameters
    ----------
    epsilon : float
        ε > 0 (finite), taken as the exact rational it is.

    Returns
    -------
    ExactCoin
        Cached per ε.
    """
    eps = Fraction(epsilon)
    return ExactCoin(functools.partial(_flip_bounds, eps), 1.0 / (1.0 + math.exp(float(epsilon))))
