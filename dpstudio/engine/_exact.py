"""Exact decisions behind the fast samplers of :mod:`dpstudio.engine.sampling`.

The vectorized samplers decide almost every draw in floating point or with 32/64-bit fixed
point, and hand the few draws whose decision is not certified to the routines here, which
decide them exactly:

* a uniform draw is an infinite-precision real ``U`` in [0, 1) of which only a prefix of
  bits has been drawn (:class:`LazyUniform`); more bits are drawn only when needed;
* a threshold is enclosed in a rigorous interval: ``exp(-x)`` for rational ``x`` with
  :mod:`decimal` under directed rounding (its ``exp`` is correctly rounded, so one unit in
  the last place on each side encloses it); a CDF boundary of the tables with integer
  fixed point whose rounding deficits are bounded (:func:`gauss_tail_bounds`,
  :func:`laplace_tail_bounds`);
* ``U < threshold`` is settled once the two intervals separate, refining whichever of the
  two is wider. The thresholds are irrational (or, if rational, hit with probability 0),
  so this terminates with probability 1.

Only the standard library and numpy are used; everything here runs on a handful of
elements per call, so plain Python loops are fine.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction

import numpy as np

__all__ = [
    "START_PREC",
    "LazyUniform",
    "bernoulli_exp_exact",
    "exp_neg_bounds",
    "gauss_tail_bounds",
    "geometric_exact",
    "laplace_tail_bounds",
    "table_cell_exact",
]

# Decimal digits of the first exact attempt (~113 bits); doubled whenever the threshold's
# enclosure is wider than the uniform's interval and still straddles it.
START_PREC = 34
# A safeguard against a bug turning "probability 0" into an endless loop.
_MAX_PREC = 1 << 16

Bounds = tuple[Fraction, Fraction]


@functools.lru_cache(maxsize=32)
def _contexts(prec: int) -> tuple[Context, Context]:
    """Decimal contexts rounding toward -inf and +inf, with an unbounded exponent range."""
    lo = Context(prec=prec, rounding=ROUND_FLOOR, Emax=MAX_EMAX, Emin=MIN_EMIN)
    hi = Context(prec=prec, rounding=ROUND_CEILING, Emax=MAX_EMAX, Emin=MIN_EMIN)
    return lo, hi


class LazyUniform:
    """An infinite-precision uniform real ``U`` in [0, 1), known through a prefix of bits.

    ``U`` lies in ``[m / 2**bits, (m + 1) / 2**bits)``; :meth:`extend` draws 64 more bits
    from ``source``. A fresh draw is ``LazyUniform(0, 0, source)``; a vectorized path hands
    over the ``bits`` it has already used as ``m``.

    Parameters
    ----------
    m : int
        The bits of ``U`` drawn so far, as an integer (most significant bit first).
    bits : int
        How many bits ``m`` holds (0 for a fresh draw).
    source : Source
        Where further bits come from; only its ``uint64(n)`` method is used (see
        :mod:`dpstudio.engine.rng`).

    Attributes
    ----------
    m : int
        The known prefix of ``U``: ``m / 2**bits <= U < (m + 1) / 2**bits``.
    bits : int
        Its length in bits; grows by 64 at each :meth:`extend`.
    """

    __slots__ = ("bits", "m", "_source")

    def __init__(self, m: int, bits: int, source) -> None:
        self.m = int(m)
        self.bits = int(bits)
        self._source = source

    def extend(self) -> None:
        """Draw 64 more bits of ``U``."""
        self.m = (self.m << 64) | int(self._source.uint64(1)[0])
        self.bits += 64

    def less(self, bounds: Callable[[int], Bounds]) -> bool:
        """Decide ``U < c`` exactly, where ``bounds(prec)`` encloses ``c`` in ``[lo, hi]``.

        ``bounds`` must tighten to zero width as ``prec`` (decimal digits) grows.

        Parameters
        ----------
        bounds : callable
            ``bounds(prec) -> (lo, hi)``, two :class:`~fractions.Fraction` with
            ``lo <= c <= hi``, computed with ``prec`` decimal digits (starting at
            :data:`START_PREC`, doubled while the enclosure is too wide).

        Returns
        -------
        bool
            Whether ``U < c``. Bits of ``U`` are drawn as needed, so the instance is
            extended in place.

        Raises
        ------
        RuntimeError
            If the comparison is still unresolved beyond 65,536 digits, which happens only
            when ``c`` equals a dyadic rational ``U`` can hit (a bug in the caller).
        """
        prec = START_PREC
        lo, hi = bounds(prec)
        while True:
            scale = 1 << self.bits
            if (self.m + 1) * lo.denominator <= lo.numerator * scale:
                return True  # U < (m + 1) / 2**bits <= lo <= c
            if self.m * hi.denominator >= hi.numerator * scale:
                return False  # U >= m / 2**bits >= hi >= c
            if Fraction(1, scale) > hi - lo:
                self.extend()
            else:
                prec *= 2
                if prec > _MAX_PREC:
                    raise RuntimeError("exact comparison did not resolve (threshold rational?)")
                lo, hi = bounds(prec)


def exp_neg_bounds(x: Fraction, prec: int) -> Bounds:
    """Rigorous bounds ``lo <= exp(-x) <= hi`` for a rational ``x >= 0``.

    ``x`` is enclosed by divisions rounded down and up; :meth:`decimal.Context.exp` is
    correctly rounded (half-even), so stepping one unit in the last place outward encloses
    the true exponential.

    Parameters
    ----------
    x : Fraction
        The exponent's magnitude, ``x >= 0``.
    prec : int
        Decimal digits of the computation; the enclosure's relative width is about
        ``10**-prec``.

    Returns
    -------
    (Fraction, Fraction)
        ``(lo, hi)`` with ``0 <= lo <= exp(-x) <= hi``; ``(1, 1)`` when ``x == 0``.
    """
    if x == 0:
        return Fraction(1), Fraction(1)
    lo_ctx, hi_ctx = _contexts(prec)
    num, den = Decimal(x.numerator), Decimal(x.denominator)
    x_lo = lo_ctx.divide(num, den)
    x_hi = hi_ctx.divide(num, den)
    e_lo = lo_ctx.exp(x_hi.copy_negate()).next_minus(lo_ctx)
    e_hi = hi_ctx.exp(x_lo.copy_negate()).next_plus(hi_ctx)
    return Fraction(max(e_lo, Decimal(0))), Fraction(e_hi)


def bernoulli_exp_exact(u: LazyUniform, gamma: Fraction | float) -> bool:
    """Decide ``U < exp(-gamma)`` exactly (a Bernoulli(exp(-gamma)) outcome).

    Parameters
    ----------
    u : LazyUniform
        The uniform deciding the outcome; extended in place if its prefix does not.
    gamma : Fraction or float
        The rate, ``gamma >= 0`` (``math.inf`` gives probability 0). A float is taken at
        its exact binary value.

    Returns
    -------
    bool
        True with probability ``exp(-gamma)``.
    """
    if gamma == math.inf:
        return False
    gamma = Fraction(gamma)
    if gamma == 0:
        return True
    return u.less(functools.partial(exp_neg_bounds, gamma))


def geometric_exact(u: LazyUniform, t: Fraction) -> int:
    """Return ``floor(-t * ln U)`` exactly: a geometric draw with ``P(G >= g) = exp(-g/t)``.

    ``G >= g`` exactly when ``U < exp(-g/t)``; a floating-point estimate gives the starting
    point and exact comparisons step it to the answer.

    Parameters
    ----------
    u : LazyUniform
        The uniform to invert; extended in place (to at least 53 significant bits, and
        further while a comparison needs it).
    t : Fraction
        The geometric's scale, ``t > 0``.

    Returns
    -------
    int
        ``G >= 0``, distributed as ``P(G >= g) = exp(-g/t)`` when ``U`` is uniform.
    """
    # With a relative width of at most 2**-52 the estimate is within one of the answer.
    while u.m < (1 << 52):
        u.extend()
    ln_u = math.log(u.m) - u.bits * math.log(2.0)
    g = max(0, math.floor(-float(t) * ln_u))

    def at_least(k: int) -> bool:
        return k <= 0 or u.less(functools.partial(exp_neg_bounds, Fraction(k) / t))

    while not at_least(g):
        g -= 1
    while at_least(g + 1):
        g += 1
    return g


# --------------------------------------------------------------------------------------
# CDF boundaries of the tables (integer fixed point, floors only)
# --------------------------------------------------------------------------------------
#
# A value x in [0, 1] is held as an integer X <= x 2^B. Products of such lower bounds,
# floored, are again lower bounds, and the deficit (in units of 2^-B) grows by a known
# small amount per step, so one chain of integer operations gives both bounds. This is
# several times faster than two directed-rounding Decimal chains.


@dataclass(frozen=True)
class TailBounds:
    """Enclosures of the right tails ``q_j = P(Z >= j)``, ``j = 1 .. K+1``.

    ``num[j-1] / den_hi <= q_j <= (num[j-1] + err) / den_lo`` (integers).

    Attributes
    ----------
    K : int
        The table's last cell; tails are enclosed for ``j = 1 .. K+1``.
    bits : int
        The fixed-point precision the enclosures were computed at.
    num : list of int
        ``K+1`` numerators, lower bounds on ``2**bits R_j`` (unnormalised tails).
    err : int
        One bound, in units of ``2**-bits``, on every numerator's deficit.
    den_lo, den_hi : int
        Lower and upper bounds on the normaliser in the same units.
    """

    K: int
    bits: int
    num: list[int]
    err: int
    den_lo: int
    den_hi: int

    def q(self, j: int) -> Bounds:
        """Bounds on ``q_j`` as fractions.

        Parameters
        ----------
        j : int
            The tail's index, ``1 <= j <= K+1``.

        Returns
        -------
        (Fraction, Fraction)
            ``(lo, hi)`` with ``lo <= P(Z >= j) <= hi``.
        """
        n = self.num[j - 1]
        return Fraction(n, self.den_hi), Fraction(n + self.err, self.den_lo)

    def floors64(self) -> list[int] | None:
        """``floor(2^64 q_j)`` for every ``j`` if the enclosures certify them, else None.

        Certified means both ends give the same floor ``f`` and ``2^64 q_j`` is not the
        integer ``f`` itself (so ``1 - q_j`` has floor ``2^64 - 1 - f``): the lower end
        exceeds ``f``, or ``f = 0`` (tails are positive).

        Returns
        -------
        list of int or None
            ``K+1`` certified floors, or None when some enclosure is too wide (the caller
            then recomputes at more ``bits``).
        """
        out = []
        den_lo, den_hi, err = self.den_lo, self.den_hi, self.err
        for n in self.num:
            f, rem = divmod(n << 64, den_hi)
            if (rem == 0 and f != 0) or ((n + err) << 64) // den_lo != f:
                return None
            out.append(f)
        return out


def _fixed_exp_neg(x: Fraction, bits: int) -> int:
    """A lower bound on ``2^bits exp(-x)`` with deficit < 2 units (floor of a bound that is
    within 0.01 units, from :func:`exp_neg_bounds` at enough digits)."""
    lo, _ = exp_neg_bounds(x, math.ceil(bits * 0.302) + 4)
    return (lo.numerator << bits) // lo.denominator


@functools.lru_cache(maxsize=16)
def gauss_tail_bounds(sigma: float, K: int, bits: int, half: bool = False) -> TailBounds:
    """Tail enclosures for the discrete Gaussian ``P(k) ∝ exp(-k^2 / (2 sigma^2))``.

    Weights follow ``w_{k+1} = w_k r_k``, ``r_k = a rho^k``, ``a = exp(-1/(2 sigma^2))``,
    ``rho = a^2``, in ``bits``-bit fixed point with floors. Deficits: ``a`` <= 2 units,
    ``rho`` <= 5, ``r_k`` <= 2 + 6k, ``w_k`` <= 3k^2 (each step adds at most the previous
    deficits plus 1, as all values are <= 1). Summation stops once ``w_N < 2^(32-bits)``;
    the rest is at most ``w_N r_N / (1 - r_N)`` since the ratios decrease. With
    ``R_j = sum_{k>=j} w_k`` and ``S = 1 + 2 R_1``, ``q_j = R_j / S``.

    With ``half``, the same for the half-line law ``P(y) ∝ exp(-y^2 / (2 sigma^2))`` on
    ``y >= 0``: ``q_j = P(Y >= j) = R_j / R_0``, ``R_0 = 1 + R_1`` (same numerators,
    another normaliser).

    The discrete Gaussian is the one of Canonne, Kamath and Steinke, "The Discrete
    Gaussian for Differential Privacy" (NeurIPS 2020). Results are cached per argument.

    Parameters
    ----------
    sigma : float
        The scale parameter, in grid steps (``sigma > 0``).
    K : int
        Tails are enclosed for ``j = 1 .. K+1``.
    bits : int
        Fixed-point precision; more bits give narrower enclosures.
    half : bool, optional
        Enclose the half-line law on ``y >= 0`` instead of the two-sided one.

    Returns
    -------
    TailBounds
        Integer enclosures of ``P(Z >= j)`` (or ``P(Y >= j)``).
    """
    one = 1 << bits
    s = Fraction(sigma)
    a = _fixed_exp_neg(1 / (2 * s * s), bits)
    rho = (a * a) >> bits
    w = [one]
    x, r = one, a
    stop = 1 << 32
    while x >= stop or len(w) <= K + 1:
        x = (x * r) >> bits
        r = (r * rho) >> bits
        w.append(x)
    n_terms = len(w) - 1
    # Upper bounds (units) on w_N and r_N, then on the remainder of the series.
    w_hi = x + 3 * n_terms * n_terms
    r_hi = r + 2 + 6 * n_terms
    rest = -((-w_hi * r_hi) // (one - r_hi)) + 1
    suffix = list(itertools.accumulate(reversed(w[1:])))  # R_N .. R_1 (lower bounds)
    suffix.reverse()
    err = (n_terms + 1) ** 3 + rest  # >= sum of the deficits of w_1..w_N plus the remainder
    # suffix[0] <= 2^bits R_1 <= suffix[0] + err bounds the normaliser on both sides.
    copies = 1 if half else 2
    return TailBounds(K=K, bits=bits, num=suffix[: K + 1], err=err,
                      den_lo=one + copies * suffix[0], den_hi=one + copies * (suffix[0] + err))


@functools.lru_cache(maxsize=8)
def laplace_tail_bounds(scale: float, K: int, bits: int) -> TailBounds:
    """Tail enclosures for the discrete Laplace: ``q_j = c^j / (1 + c)``, ``c = e^{-1/scale}``.

    ``c^j`` in ``bits``-bit fixed point with floors has deficit <= 3j units.
    Results are cached per argument.

    Parameters
    ----------
    scale : float
        The discrete Laplace scale, in grid steps (``scale > 0``):
        ``P(k) ∝ exp(-|k| / scale)``.
    K : int
        Tails are enclosed for ``j = 1 .. K+1``.
    bits : int
        Fixed-point precision; more bits give narrower enclosures.

    Returns
    -------
    TailBounds
        Integer enclosures of ``P(Z >= j)``.
    """
    one = 1 << bits
    c = _fixed_exp_neg(1 / Fraction(scale), bits)
    powers = list(itertools.accumulate(itertools.repeat(c, K), lambda p, _: (p * c) >> bits,
                                       initial=c))
    return TailBounds(K=K, bits=bits, num=powers, err=3 * (K + 1), den_lo=one + c,
                      den_hi=one + c + 2)


def table_cell_exact(T64: np.ndarray, bound: Callable[[int, int], Bounds],
                     u: LazyUniform) -> int:
    """Return ``#{c : beta_c <= U}`` exactly for increasing CDF boundaries ``beta_c``.

    ``T64[c] = floor(2**64 beta_c)`` (certified) narrows the candidates using the bits
    already drawn; ``bound(c, prec)`` encloses ``beta_c`` for the exact comparisons of the
    remaining binary search.

    Parameters
    ----------
    T64 : numpy.ndarray of uint64
        Certified ``floor(2**64 beta_c)`` for every boundary, increasing.
    bound : callable
        ``bound(c, prec) -> (lo, hi)`` enclosing ``beta_c`` with ``prec`` decimal digits.
    u : LazyUniform
        The uniform being inverted; extended in place when the drawn bits do not decide.

    Returns
    -------
    int
        The table cell of ``U``: the number of boundaries ``beta_c <= U``, in
        ``0 .. len(T64)``.
    """
    if u.bits == 0:
        lo, hi = 0, len(T64)
    else:
        # floor(2^b beta) = T64 >> (64 - b) for b <= 64; for b > 64 compare 64-bit heads.
        if u.bits <= 64:
            keys, m = T64 >> np.uint64(64 - u.bits), u.m
        else:
            keys, m = T64, u.m >> (u.bits - 64)
        lo = int(np.searchsorted(keys, np.uint64(m), side="left"))
        hi = int(np.searchsorted(keys, np.uint64(m), side="right"))
    while lo < hi:
        mid = (lo + hi) // 2
        if u.less(functools.partial(bound, mid)):
            hi = mid
        else:
            lo = mid + 1
    return lo
