"""Exact, vectorized noise samplers and the analytic facts about their distributions.

One module, though long, because the samplers are one algorithm: they share the
certified margins, the CDF tables and the hand-off to :mod:`dpstudio.engine._exact`
described below, and each one's exactness rests on those shared constants and helpers.

Releases snap a statistic to a grid and add *integer* noise on that grid, so the noise
must follow its distribution exactly: Mironov (2012) showed that textbook floating-point
Laplace noise leaks through the gaps and biases of floating-point arithmetic. Every
sampler here is exact given ideal uniform bits:

* A uniform draw is the first bits of an infinite-precision uniform ``U``; more bits are
  drawn for an element only if its decision needs them.
* Fast arithmetic decides a sample only when a rigorous margin certifies the decision:

  - floating point: a relative margin ``_REL_MARGIN = 2**-40`` on each computed
    ``log``/``exp`` result (numpy's SVML routines are within 4 ulp = 2**-50 and libm's
    within 1 ulp, so this is >= 1000x slack that also absorbs the few roundings around
    them), plus the full width of the uniform's interval (2**-53 for a 53-bit prefix);
  - tables: boundaries are stored as certified ``floor(2**64 beta)``; a 32- or 64-bit
    prefix decides unless it equals a boundary's floor.

* The elements inside a margin go to :mod:`dpstudio.engine._exact`, which decides them
  with rational/interval arithmetic (:mod:`fractions`, :mod:`decimal`, whose ``exp`` is
  correctly rounded), extending ``U`` as needed. Ties have probability 0, so this
  terminates with probability 1.

All randomness comes from ``source.uint64``/``source.uint32`` (see
:mod:`dpstudio.engine.rng`), so the same code runs on the OS CSPRNG for releases and on a
seeded generator for simulations and tests.

Algorithms
----------
* Discrete Laplace, ``scale <= 512``, and discrete Gaussian, ``sigma <= 2048``: inversion
  of an exact CDF table cached per scale (:class:`_CdfTable`): one 32-bit word per sample
  and a guide table on its top 18 bits decide all but ~1e-6 of the samples; those take 32
  more bits, then the exact search. The ~2**-40 of mass beyond the table is drawn by an
  exact tail sampler. Boundaries come from integer fixed-point enclosures (a few ms to a
  few tens of ms per new scale).
* Discrete Laplace, larger scales: a sign bit and ``G = floor(-t ln U)`` (geometric,
  ``P(G >= g) = exp(-g/t)``), rejecting "negative zero"; one ``log`` per sample.
* Discrete Gaussian, larger ``sigma`` (the release range, ``2**15 <= sigma < 2**16`` grid
  steps, is here): block proposals and exact rejection (:func:`_gaussian_blocks`). With
  ``B = 2**j`` and ``sigma / B`` in ``[512, 1024)``, a block index ``Y >= 0`` comes from
  an exact half-line table of parameter ``sigma / B`` (weights ``exp(-(B Y)^2 / (2
  sigma^2))``, the target at the block's point nearest 0), an offset ``R`` uniform on
  ``{0 .. B-1}`` and a sign; ``m = B Y + R`` is accepted with probability
  ``exp(-R (2 B Y + R) / (2 sigma^2))`` (> 99.9% on average), decided by ``U < 1 -
  gamma`` from 32 bits for all but a ``~gamma`` fraction. Four 32-bit words per draw, no
  transcendental in the common case.
* ``categorical_log``: an exact proposal from weights rounded *up* to integers and an exact
  acceptance step for the rounding, so the result is exactly proportional to
  ``exp(logw)``.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpstudio.engine import special

from . import _exact
from ._exact import LazyUniform
from .checks import number
from .errors import ParameterError

__all__ = [
    "bernoulli_exp",
    "categorical_log",
    "discrete_gaussian",
    "discrete_gaussian_pmf",
    "discrete_gaussian_quantile_abs",
    "discrete_gaussian_tail",
    "discrete_gaussian_variance",
    "discrete_laplace",
    "discrete_laplace_pmf",
    "discrete_laplace_quantile_abs",
    "discrete_laplace_tail",
    "discrete_laplace_variance",
    "permutation",
    "uniform_int",
]

# Relative error margin on floating-point log/exp results (see the module docstring).
# Tests raise it to push most draws through the exact fallback.
_REL_MARGIN = 2.0**-40
# Largest scale/sigma accepted: noise must fit in int64 with room to spare, and beyond
# ~1e9 floating point certifies ever fewer draws (the exact fallback takes over, slowly).
_MAX_SCALE = 1e12
# Exact CDF tables (int16 cells; each builds in a few tens of milliseconds) up to these
# scales. Release scales (2**15 <= scale < 2**16 grid steps) are above both: the Laplace
# takes the log path there, the Gaussian block proposals from a half table.
_GAUSS_TABLE_MAX = 2048.0
_LAPLACE_TABLE_MAX = 512.0
# Table half-widths in units of the scale: the mass beyond is about 2**-40 (< 2**-33 is
# required so that no 32-bit word decides a tail cell).
_GAUSS_TABLE_Z = math.sqrt(2.0 * 40.0 * math.log(2.0))
_LAPLACE_TABLE_Z = 40.0 * math.log(2.0)
# Fixed-point bits of the table computations (doubled if a boundary is not certified).
_TABLE_BITS = 160
# Guide table indexed by the top _GUIDE_BITS of a 32-bit word.
_GUIDE_BITS = 18
_MIXED = np.int16(-32768)  # guide entry for a bucket that contains a boundary
_U53 = 2.0**-53
_SHIFT11 = np.uint64(11)


# --------------------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------------------


def _check_scale(value, name: str) -> float:
    """Return ``value`` as a float after checking it is finite, > 0 and not absurdly large.

    Raises :class:`~dpstudio.engine.errors.ParameterError` (a ValueError), from the
    engine's one range check; the upper limit keeps the noise within int64.
    """
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a finite number > 0, got {value!r}")
    return number(name, value, low=0.0, low_open=True, high=_MAX_SCALE)


def _check_size(size) -> int:
    """Return ``size`` as an int after checking it is a non-negative integer.

    Only an ``int`` or a numpy integer, as numpy takes for a size (no bool, no whole
    float); the range is the engine's one range check.
    """
    try:
        n = operator.index(size)
    except TypeError:
        raise ParameterError(f"size must be a non-negative integer, got {size!r}") from None
    if isinstance(size, bool):
        raise ParameterError(f"size must be a non-negative integer, got {size!r}")
    number("size", n, low=0, what="an integer")
    return n


def _int_array(k, name: str, nonneg: bool = False) -> np.ndarray:
    """``k`` as an int64 array, checking it holds integers (and >= 0 if ``nonneg``)."""
    a = np.asarray(k)
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or np.any(a != np.floor(a)):
            raise ValueError(f"{name} must hold integers, got {k!r}")
        a = a.astype(np.int64)
    elif a.dtype.kind not in "iu" or a.dtype == np.uint64:
        raise ValueError(f"{name} must hold integers, got {k!r}")
    a = a.astype(np.int64)
    if nonneg and np.any(a < 0):
        raise ValueError(f"{name} must be >= 0, got {k!r}")
    return a


def _prob_array(p) -> np.ndarray:
    a = np.asarray(p, dtype=np.float64)
    if not np.all((a >= 0) & (a < 1)):
        raise ValueError(f"p must lie in [0, 1), got {p!r}")
    return a


def _shaped(result: np.ndarray, like):
    """Return a Python scalar for scalar input, an array otherwise."""
    return result.item() if np.ndim(like) == 0 else result


# --------------------------------------------------------------------------------------
# Uniform integers and permutations
# --------------------------------------------------------------------------------------


def _uniform_below(n: int, size: int, source) -> np.ndarray:
    """``size`` exact uniform draws from {0, ..., n-1} as uint64 (1 <= n <= 2**64)."""
    if n == 1:
        return np.zeros(size, dtype=np.uint64)
    # Keep the top k bits and reject values >= n: no modulo bias, acceptance > 1/2.
    shift = np.uint64(64 - (n - 1).bit_length())
    limit = np.uint64(n - 1)
    out = source.uint64(size) >> shift
    bad = np.flatnonzero(out > limit)
    while bad.size:
        redo = source.uint64(bad.size) >> shift
        out[bad] = redo
        bad = bad[redo > limit]
    return out


def uniform_int(n: int, size: int, source) -> np.ndarray:
    """Draw integers exactly uniform on ``{0, ..., n-1}``.

    Parameters
    ----------
    n : int
        Number of values, ``1 <= n <= 2**63``.
    size : int
        Number of draws.
    source : Source
        Random source (:mod:`dpstudio.engine.rng`).

    Returns
    -------
    numpy.ndarray of int64
        Rejection sampling on the top bits of 64-bit words, so there is no modulo bias.
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise ValueError(f"n must be an integer >= 1, got {n!r}") from None
    if not 1 <= n <= 2**63:
        raise ValueError(f"n must be an integer in [1, 2**63], got {n!r}")
    return _uniform_below(n, _check_size(size), source).astype(np.int64)


def permutation(n: int, source) -> np.ndarray:
    """Return a uniformly random permutation of ``0, ..., n-1`` (int64).

    Sorting i.i.d. uniform keys gives a uniform permutation. Keys are the first 64 bits of
    infinite-precision uniforms; elements whose 64-bit keys tie would be ordered by their
    later bits, which are i.i.d. and independent of everything else, so each tied run is
    replaced by a fresh uniform permutation of itself -- exact, not just likely.

    Parameters
    ----------
    n : int
        Number of elements, ≥ 0.
    source : Source
        Random source (:mod:`dpstudio.engine.rng`).

    Returns
    -------
    numpy.ndarray of int64
        Each of ``0, ..., n-1`` once.

    Raises
    ------
    ParameterError
        When ``n`` is not a non-negative integer.
    """
    n = _check_size(n)
    keys = source.uint64(n)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    tie = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    start = None
    for pos, i in enumerate(tie):  # ties have probability ~n^2 / 2^65: a handful at most
        if start is None:
            start = i
        if pos + 1 == len(tie) or tie[pos + 1] != i + 1:
            run = order[start:i + 2]
            order[start:i + 2] = run[permutation(run.size, source)]
            start = None
    return order.astype(np.int64)


# --------------------------------------------------------------------------------------
# Geometric and Bernoulli(exp(-gamma)) cores
# --------------------------------------------------------------------------------------


def _geometric_from_prefix(m: np.ndarray, t: float, t_exact: Fraction, source) -> np.ndarray:
    """``floor(-t ln U)`` for uniforms whose first 53 bits are ``m`` (uint64 < 2**53).

    ``P(G >= g) = exp(-g/t)``. For ``U`` in ``[u, u + 2**-53)`` with ``u = m 2**-53``
    (exact in float64), ``x(U) = -t ln U`` lies in ``(x(u) - t/m, x(u)]`` because
    ``ln(1 + d/u) <= d/u``. The computed ``x(u)`` is within the relative margin, so if
    ``floor`` agrees at both ends of the widened interval the sample is certified.
    ``t`` is ``float(t_exact)`` (relative error <= 2**-53, inside the margin).
    """
    rel = _REL_MARGIN
    mf = m.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.log(mf * _U53)
        x *= -t
        g_hi = np.floor(x * (1.0 + rel))
        x *= 1.0 - rel
        x -= (t * (1.0 + rel)) / mf
        ok = np.floor(x) == g_hi  # False for m == 0 (nan) and on any disagreement
        g = g_hi.astype(np.int64)
    for i in np.flatnonzero(~ok):
        g[i] = _exact.geometric_exact(LazyUniform(int(m[i]), 53, source), t_exact)
    return g


def _geometric(t: float, t_exact: Fraction, size: int, source) -> np.ndarray:
    """Exact geometric draws with ``P(G >= g) = exp(-g/t)`` (int64)."""
    return _geometric_from_prefix(source.uint64(size) >> _SHIFT11, t, t_exact, source)


def _bernoulli_exp(g: np.ndarray, gerr, exact_gamma, source) -> np.ndarray:
    """Bernoulli(exp(-gamma_i)) where ``|g_i - gamma_i| <= gerr_i`` (floats).

    ``exact_gamma(i)`` returns the exact ``gamma_i`` (Fraction, or inf) for the elements
    the floating-point test cannot certify.
    """
    return _bernoulli_exp_prefix(source.uint64(g.size) >> _SHIFT11, g, gerr, exact_gamma,
                                 source)


def _bernoulli_exp_prefix(m: np.ndarray, g: np.ndarray, gerr, exact_gamma,
                          source) -> np.ndarray:
    """``U_i < exp(-gamma_i)`` for uniforms whose first 53 bits are ``m`` (uint64 < 2**53);
    ``g``, ``gerr`` and ``exact_gamma`` as in :func:`_bernoulli_exp`."""
    rel = _REL_MARGIN
    u_lo = m.astype(np.float64) * _U53
    u_hi = u_lo + _U53
    gerr = np.broadcast_to(np.asarray(gerr, dtype=np.float64), g.shape)
    with np.errstate(over="ignore", under="ignore"):
        p = np.exp(-g)
    # exp(-(g + e)) >= exp(-g)(1 - e) and exp(-(g - e)) <= exp(-g)(1 + 2e) for e <= 1/2.
    p_lo = p * ((1.0 - rel) * (1.0 - gerr))
    p_hi = p * ((1.0 + rel) * (1.0 + 2.0 * gerr))
    # Past exp(-700) results may be subnormal (no relative accuracy): bound by 2**-1000.
    far = (g - gerr) > 700.0
    p_lo[far] = 0.0
    p_hi[far] = 2.0**-1000
    wild = gerr > 0.25
    p_lo[wild], p_hi[wild] = 0.0, 1.0
    accept = u_hi <= p_lo
    undecided = np.flatnonzero(~accept & (u_lo < p_hi))
    for i in undecided:
        accept[i] = _exact.bernoulli_exp_exact(LazyUniform(int(m[i]), 53, source),
                                               exact_gamma(i))
    return accept


def bernoulli_exp(gamma, source) -> np.ndarray:
    """Independent Bernoulli(exp(-gamma_i)) draws, exactly.

    Parameters
    ----------
    gamma : array_like of float
        Non-negative rates; each float is taken as the exact rational it represents.
        ``inf`` gives ``False``.
    source : Source
        Random source.

    Returns
    -------
    numpy.ndarray of bool
        Same shape as ``gamma``.
    """
    gamma = np.asarray(gamma, dtype=np.float64)
    if np.any(np.isnan(gamma)) or np.any(gamma < 0):
        raise ValueError("gamma must hold numbers >= 0 (inf allowed)")
    flat = gamma.ravel()

    def exact(i: int) -> Fraction | float:
        v = float(flat[i])
        return v if math.isinf(v) else Fraction(v)

    return _bernoulli_exp(flat, 0.0, exact, source).reshape(gamma.shape)


# --------------------------------------------------------------------------------------
# Exact CDF tables (discrete Laplace up to scale 512, discrete Gaussian up to sigma 2048)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _CdfTable:
    """Exact inversion table of a symmetric integer distribution, cached per scale.

    Cells ``c = 0 .. 2K+2``: cell 0 is ``Z <= -K-1``, cell ``c`` is the value ``c - K - 1``,
    cell ``2K+2`` is ``Z >= K+1``. Boundary ``beta_c = P(Z <= c - K - 1)`` is the upper
    edge of cell ``c`` and ``T64[c] = floor(2**64 beta_c)`` (certified); ``T32`` holds the
    top halves and ``guide[j]`` the value for words whose top bits ``j`` select a bucket
    without any boundary (``_MIXED`` otherwise).

    A ``half`` table is for a law on ``y >= 0`` (the block proposals of the Gaussian):
    cells ``c = 0 .. K+1``, cell ``c`` is the value ``c`` and cell ``K+1`` is ``Y >= K+1``;
    ``beta_c = P(Y <= c) = 1 - P(Y >= c+1)``. ``tails`` then encloses ``P(Y >= j)``.

    A 32-bit word ``m`` puts ``U`` in ``[m, m+1) / 2**32``; ``beta_c`` is certainly below
    ``U`` if ``T32[c] < m`` and above it if ``T32[c] > m``, so the cell is
    ``#{c : T32[c] < m}`` unless some ``T32[c] == m``. The table half-width ``K`` leaves a
    tail mass below ``2**-33``, so ``T32[0] == 0`` and ``T32[-1] == 2**32 - 1`` and only
    refined words can land in a tail cell.
    """

    K: int
    bits: int
    T64: np.ndarray
    T32: np.ndarray
    guide: np.ndarray
    tails: Callable[[int], _exact.TailBounds]  # bits -> enclosures of P(Z >= j)
    tail_draw: Callable[[int, object], np.ndarray]  # (n, source) -> |Z| given |Z| >= K+1
    half: bool = False

    @property
    def offset(self) -> int:
        """Value of a cell = cell index - offset."""
        return 0 if self.half else self.K + 1

    def bound(self, c: int, prec: int) -> _exact.Bounds:
        """Enclosure of ``beta_c``, tighter than ``10**-prec``."""
        bits = self.bits if prec <= _exact.START_PREC else math.ceil(prec * 3.33) + 96
        tb = self.tails(bits)
        if self.half:
            lo, hi = tb.q(c + 1)
            return 1 - hi, 1 - lo  # P(Y <= c) = 1 - P(Y >= c + 1)
        if c <= self.K:
            return tb.q(self.K + 1 - c)  # P(Z <= -j) = P(Z >= j)
        lo, hi = tb.q(c - self.K)
        return 1 - hi, 1 - lo  # P(Z <= j - 1) = 1 - P(Z >= j)


def _build_table(K: int, tails, tail_draw, half: bool = False) -> _CdfTable:
    """Certified 64-bit boundaries, 32-bit heads and the guide table (see :class:`_CdfTable`)."""
    bits = _TABLE_BITS
    while (floors := tails(bits).floors64()) is None:  # an enclosure straddles: more bits
        bits *= 2
    # Symmetric: left boundaries P(Z >= K+1) .. P(Z >= 1), then 1 - P(Z >= 1) .. 1 -
    # P(Z >= K+1). Half: only the right ones, 1 - P(Y >= 1) .. 1 - P(Y >= K+1).
    right = [2**64 - 1 - f for f in floors]
    T64 = np.array(right if half else floors[::-1] + right, dtype=np.uint64)
    T32 = (T64 >> np.uint64(32)).astype(np.uint32)
    if (T32[0] != 0 and not half) or T32[-1] != 2**32 - 1:
        raise AssertionError("table too short: a 32-bit word could decide a tail cell")
    if K > np.iinfo(np.int16).max:
        raise AssertionError("table too wide for int16 guide entries")
    starts = np.arange(2**_GUIDE_BITS + 1, dtype=np.uint64) << np.uint64(32 - _GUIDE_BITS)
    base = np.searchsorted(T32.astype(np.uint64), starts, side="left")
    offset = 0 if half else K + 1
    guide = np.where(base[1:] != base[:-1], _MIXED, base[:-1] - offset).astype(np.int16)
    for a in (T64, T32, guide):
        a.flags.writeable = False
    return _CdfTable(K=K, bits=bits, T64=T64, T32=T32, guide=guide, tails=tails,
                     tail_draw=tail_draw, half=half)


@functools.lru_cache(maxsize=8)
def _gauss_table(sigma: float) -> _CdfTable:
    K = math.ceil(sigma * _GAUSS_TABLE_Z) + 1
    return _build_table(K, functools.partial(_exact.gauss_tail_bounds, sigma, K),
                        functools.partial(_gauss_tail, sigma, K + 1))


@functools.lru_cache(maxsize=8)
def _laplace_table(scale: float) -> _CdfTable:
    K = math.ceil(scale * _LAPLACE_TABLE_Z) + 1
    t_exact = Fraction(scale)

    def tail_draw(n: int, source) -> np.ndarray:
        # Memoryless: given |Z| >= K+1, |Z| - K - 1 is geometric with the same q.
        return K + 1 + _geometric(scale, t_exact, n, source)

    return _build_table(K, functools.partial(_exact.laplace_tail_bounds, scale, K), tail_draw)


def _table_refine(tab: _CdfTable, m32: np.ndarray, source) -> np.ndarray:
    """Cells for 32-bit words that landed on a boundary: 32 more bits, then exact."""
    m64 = (m32.astype(np.uint64) << np.uint64(32)) | source.uint32(m32.size).astype(np.uint64)
    cells = np.searchsorted(tab.T64, m64, side="left")
    still = np.flatnonzero(cells != np.searchsorted(tab.T64, m64, side="right"))
    for i in still:
        cells[i] = _exact.table_cell_exact(tab.T64, tab.bound,
                                           LazyUniform(int(m64[i]), 64, source))
    return cells


def _table_from_words(tab: _CdfTable, m32: np.ndarray, source) -> np.ndarray:
    """Values for uniforms whose first 32 bits are ``m32`` (uint32), by exact inversion."""
    offset = tab.offset
    out = tab.guide[m32 >> np.uint32(32 - _GUIDE_BITS)].astype(np.int64)
    mixed = np.flatnonzero(out == _MIXED)
    if mixed.size:
        words = m32[mixed]
        # cell = #{c : T32[c] < m}; undecided iff T32[cell] == m (U vs beta_cell unknown).
        cells = np.searchsorted(tab.T32, words, side="left")
        on_edge = np.flatnonzero(tab.T32[np.minimum(cells, tab.T32.size - 1)] == words)
        if on_edge.size:
            cells[on_edge] = _table_refine(tab, words[on_edge], source)
        out[mixed] = cells - offset
        # Only refined words can reach the tail cells (the table guarantees T32[0] == 0
        # and T32[-1] == 2**32 - 1).
        if on_edge.size:
            refined = mixed[on_edge]
            tail = refined[np.abs(out[refined]) > tab.K]
            if tail.size:
                out[tail] = np.sign(out[tail]) * tab.tail_draw(tail.size, source)
    return out


# --------------------------------------------------------------------------------------
# Discrete Laplace
# --------------------------------------------------------------------------------------


def _laplace_once(t: float, t_exact: Fraction, size: int, source):
    """Signed geometric candidates and the mask of rejected "negative zeros"."""
    w = source.uint64(size)
    g = _geometric_from_prefix(w >> _SHIFT11, t, t_exact, source)
    neg = (w & np.uint64(1)).astype(bool)
    reject = neg & (g == 0)
    np.negative(g, out=g, where=neg)
    return g, reject


def _laplace(t: float, size: int, source) -> np.ndarray:
    t_exact = Fraction(t)
    out, reject = _laplace_once(t, t_exact, size, source)
    redo = np.flatnonzero(reject)
    while redo.size:
        vals, reject = _laplace_once(t, t_exact, redo.size, source)
        out[redo] = vals
        redo = redo[reject]
    return out


def discrete_laplace(scale: float, size: int, source) -> np.ndarray:
    """Exact discrete Laplace noise: ``P(k) ∝ exp(-|k| / scale)`` on the integers.

    Parameters
    ----------
    scale : float
        Finite, ``0 < scale <= 1e12`` (taken as the exact rational it represents).
    size : int
        Number of draws.
    source : Source
        Random source; releases pass a :class:`~dpstudio.engine.rng.SecureSource`.

    Returns
    -------
    numpy.ndarray of int64

    Notes
    -----
    ``scale <= 512``: exact CDF-table inversion (table built once per scale, cached).
    Larger scales: a fair sign and a geometric magnitude ``floor(-scale ln U)``, with
    "negative zero" rejected and redrawn, which gives every integer weight
    ``exp(-|k|/scale)``. Above a scale of about 1e9 a growing share of draws needs the
    (slow) exact fallback, as floating point certifies ever fewer of them.
    """
    t = _check_scale(scale, "scale")
    n = _check_size(size)
    if t <= _LAPLACE_TABLE_MAX:
        return _table_from_words(_laplace_table(t), source.uint32(n), source)
    return _laplace(t, n, source)


def discrete_laplace_pmf(k, scale: float):
    """``P(Z = k)`` for discrete Laplace ``Z``: ``tanh(1/(2 scale)) exp(-|k|/scale)``.

    Parameters
    ----------
    k : int or array_like of int
        Where to evaluate.
    scale : float
        Finite, ``0 < scale <= 1e12``.

    Returns
    -------
    float or numpy.ndarray
        Shaped like ``k``.

    Raises
    ------
    ValueError
        For a bad scale (ParameterError) or non-integer ``k``.
    """
    t = _check_scale(scale, "scale")
    kk = np.abs(_int_array(k, "k").astype(np.float64))
    return _shaped(np.tanh(0.5 / t) * np.exp(-kk / t), k)


def discrete_laplace_variance(scale: float) -> float:
    """Variance ``2q / (1 - q)^2 = 1 / (2 sinh^2(1/(2 scale)))``, ``q = exp(-1/scale)``.

    Parameters
    ----------
    scale : float
        Finite, ``0 < scale <= 1e12``.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For a bad scale.
    """
    t = _check_scale(scale, "scale")
    with np.errstate(over="ignore"):
        return float(0.5 / np.sinh(0.5 / t) ** 2)


def discrete_laplace_tail(k, scale: float):
    """``P(|Z| > k) = 2 q^(k+1) / (1 + q)`` for integers ``k >= 0``.

    Parameters
    ----------
    k : int or array_like of int
        Where to evaluate, ≥ 0.
    scale : float
        Finite, ``0 < scale <= 1e12``.

    Returns
    -------
    float or numpy.ndarray
        Shaped like ``k``.

    Raises
    ------
    ValueError
        For a bad scale (ParameterError), or ``k`` not integers ≥ 0.
    """
    t = _check_scale(scale, "scale")
    kk = _int_array(k, "k", nonneg=True).astype(np.float64)
    return _shaped(2.0 * np.exp(-(kk + 1.0) / t) / (1.0 + math.exp(-1.0 / t)), k)


def discrete_laplace_quantile_abs(p, scale: float):
    """Smallest integer ``k >= 0`` with ``P(|Z| <= k) >= p`` (``0 <= p < 1``).

    Closed form ``ceil(scale ln(2 / ((1 - p)(1 + q))) - 1)`` checked against
    :func:`discrete_laplace_tail`. Floating point cannot separate exact ties; a relative
    slack of 1e-12 makes the answer err upward (a wider interval), never downward.

    Parameters
    ----------
    p : float or array_like
        Probabilities in [0, 1).
    scale : float
        Finite, ``0 < scale <= 1e12``.

    Returns
    -------
    int or numpy.ndarray of int64
        Shaped like ``p``.

    Raises
    ------
    ValueError
        For a bad scale (ParameterError), or ``p`` outside [0, 1).
    """
    t = _check_scale(scale, "scale")
    target = (1.0 - _prob_array(p)) * (1.0 - 1e-12)
    q = math.exp(-1.0 / t)
    k = np.ceil(t * np.log(2.0 / (target * (1.0 + q))) - 1.0)
    k = np.maximum(k, 0.0)

    def tail(j):
        return 2.0 * np.exp(-(j + 1.0) / t) / (1.0 + q)

    k = np.where(tail(k) > target, k + 1.0, k)
    k = np.where((k > 0) & (tail(k - 1.0) <= target), k - 1.0, k)
    return _shaped(k.astype(np.int64), p)


# --------------------------------------------------------------------------------------
# Discrete Gaussian
# --------------------------------------------------------------------------------------


def _gauss_tail(sigma: float, a: int, size: int, source) -> np.ndarray:
    """Exact draws of ``|Z|`` given ``|Z| >= a`` (``a >= 1``), ``Z`` discrete Gaussian.

    Writing ``k = a + j``, ``P(j) ∝ exp(-a j / sigma^2) exp(-j^2 / (2 sigma^2))``: a
    geometric proposal with ``t = sigma^2 / a`` accepted with probability
    ``exp(-j^2 / (2 sigma^2))``.
    """
    s = Fraction(sigma)
    t_exact = s * s / a
    t = float(t_exact)
    two_s2 = 2.0 * sigma * sigma
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        j = _geometric(t, t_exact, todo.size, source)
        g = j.astype(np.float64) ** 2 / two_s2

        def exact(i: int, j=j) -> Fraction:
            return Fraction(int(j[i]) ** 2) / (2 * s * s)

        ok = _bernoulli_exp(g, g * 2.0**-48, exact, source)
        out[todo[ok]] = a + j[ok]
        todo = todo[~ok]
    return out


# Block proposals above the table range (see :func:`_gaussian_blocks`): block width
# B = 2**j with sigma / B in [_BLOCK_SIGMA, 2 _BLOCK_SIGMA), so the block index follows a
# half-line discrete Gaussian of parameter in [512, 1024), drawn from an exact table.
_BLOCK_SIGMA = 512.0
# Elements per vectorized round (keeps the working set in cache).
_BLOCK_CHUNK = 1 << 15
# Slack, in units of 2**-32, of the quick test "U < 1 - gamma" (>= 2 is required; tests
# raise it to send most draws down the edge path and on to the exact fallback).
_BLOCK_SLACK = 2.0


def _block_params(sigma: float) -> tuple[int, float]:
    """``(j, sigma / 2**j)`` with ``sigma / 2**j`` in ``[512, 1024)``, for ``sigma >= 1024``.

    Division by a power of two is exact in floating point, so the table's parameter is
    exactly ``sigma / B``.
    """
    e = math.frexp(sigma / _BLOCK_SIGMA)[1]  # sigma / 512 in [2**(e-1), 2**e)
    j = e - 1
    if not 1 <= j <= 31:
        raise ValueError(f"block proposals need 1024 <= sigma < 2**41, got {sigma!r}")
    return j, math.ldexp(sigma, -j)


@functools.lru_cache(maxsize=8)
def _half_gauss_table(sigma: float) -> _CdfTable:
    """Exact table of ``Y >= 0`` with ``P(y) ∝ exp(-y^2 / (2 sigma^2))`` (a ``half`` table).

    The tail ``Y >= K+1`` (mass ~2**-41) is the same conditional law as ``|Z|`` given
    ``|Z| >= K+1`` for the symmetric discrete Gaussian, so :func:`_gauss_tail` draws it.
    """
    K = math.ceil(sigma * _GAUSS_TABLE_Z) + 1
    return _build_table(K, functools.partial(_exact.gauss_tail_bounds, sigma, K, half=True),
                        functools.partial(_gauss_tail, sigma, K + 1), half=True)


@dataclass(frozen=True)
class _BlockPlan:
    """Constants of the block sampler (see :func:`_gaussian_blocks`)."""

    j: int  # block width B = 2**j
    table: _CdfTable  # half table of the block index Y
    sigma_exact: Fraction  # sigma of the acceptance step
    c32: float  # 2**32 (1 + 2**-44) / (2 sigma^2), rounded: > 2**32 / (2 sigma^2)
    inv_two_s2: float  # 1 / (2 sigma^2), rounded


def _block_plan(j: int, sigma_table: float, sigma: float) -> _BlockPlan:
    """Blocks of width ``2**j``, block index from the half table of parameter
    ``sigma_table``, acceptance step for ``sigma``. The sampler is the discrete Gaussian
    exactly when ``sigma_table == sigma / 2**j``; tests also use other pairs, whose law
    is ``∝ exp(-(B Y)^2 / (2 (B sigma_table)^2) - R (2 B Y + R) / (2 sigma^2))``.
    """
    two_s2 = 2.0 * sigma * sigma
    return _BlockPlan(j=j, table=_half_gauss_table(sigma_table), sigma_exact=Fraction(sigma),
                      c32=2.0**32 * (1.0 + 2.0**-44) / two_s2, inv_two_s2=1.0 / two_s2)


def _block_round(plan: _BlockPlan, k: np.ndarray, source) -> np.ndarray:
    """One proposal and acceptance test per element of ``k`` (int64, filled in place);
    returns the indices of the rejected elements."""
    j, n = plan.j, k.size
    w = source.uint64(n)  # low half: table word for Y; high half: first 32 bits of U
    by = _table_from_words(plan.table, w.astype(np.uint32), source)
    v = source.uint64(n).view(np.int64)  # low j bits: R; top bit: sign (j <= 31)
    r = v & np.int64((1 << j) - 1)
    np.left_shift(by, j, out=by)  # B Y, the block's point nearest to 0
    np.add(by, r, out=k)  # magnitude m = B Y + R
    x = np.add(by, k, out=by)  # 2 B Y + R, so that m^2 - (B Y)^2 = R x
    q = x.astype(np.float64)
    q *= r  # R x, relative error <= 2**-52
    # Quick accept: U < (u + 1) 2**-32 <= 1 - gamma <= exp(-gamma), where gamma = R x /
    # (2 sigma^2) <= q c32 2**-32 (the factor 1 + 2**-44 in c32 absorbs every rounding),
    # and a sum below 2**32 is within 2**-20 of exact: a slack >= 2 covers the "+1" and
    # that error.
    q *= plan.c32
    u = np.right_shift(w, np.uint64(32), out=w)
    q += u.view(np.int64)  # (int64 converts to float far faster than uint64)
    edge = np.flatnonzero(q > 2.0**32 - _BLOCK_SLACK)
    zero = np.flatnonzero(k == 0)
    rejected = [zero[v[zero] < 0]]  # "negative zero": k = 0 must come from one sign only
    if edge.size:
        # Near the edge: 21 more bits of U, then exp(-gamma) with a certified margin, then
        # the exact test (the prefix of U is extended, never redrawn).
        m53 = (u[edge] << np.uint64(21)) | (source.uint64(edge.size) >> np.uint64(43))
        re, xe = r[edge], x[edge]
        g = re.astype(np.float64) * xe * plan.inv_two_s2  # relative error <= 2**-50
        two_s2 = 2 * plan.sigma_exact * plan.sigma_exact

        def exact(i: int) -> Fraction:
            return Fraction(int(re[i]) * int(xe[i])) / two_s2

        rejected.append(edge[~_bernoulli_exp_prefix(m53, g, g * 2.0**-48, exact, source)])
    sign = v >> 63  # 0 or -1
    k ^= sign
    k -= sign  # -m where the sign bit is set
    return np.union1d(*rejected) if len(rejected) > 1 else rejected[0]


def _gaussian_blocks(sigma: float, size: int, source) -> np.ndarray:
    """Exact discrete Gaussian by block proposals and rejection (``sigma >= 1024``).

    **Proposal.** ``B = 2**j`` with ``sigma' = sigma / B`` in ``[512, 1024)`` (exact in
    floating point). Draw ``Y >= 0`` with ``P(Y = y) = w_y / W``, ``w_y = exp(-y^2 /
    (2 sigma'^2)) = exp(-(B y)^2 / (2 sigma^2))``, ``W = sum_{y >= 0} w_y``, from the half
    table of :func:`_half_gauss_table`; ``R`` uniform on ``{0, .., B-1}`` (low ``j`` bits
    of a word); a fair sign bit ``s`` (its top bit). The magnitude is ``m = B Y + R``, the
    block's nearest point to 0 is ``B Y``, and ``P(m) = w_Y / (B W)``: an upper envelope
    of ``exp(-m^2 / (2 sigma^2))`` up to the constant ``1 / (B W)``. Blocks are on the
    magnitude because on signed blocks ``[B J, B J + B)`` the point nearest 0 of a negative
    block is ``B |J| - B + 1``, and the envelope would not be a discrete Gaussian in ``J``;
    here it is exactly the half-line one, which the fixed-point machinery of the symmetric
    tables tabulates exactly (only the normaliser differs).

    **Acceptance.** Accept with probability ``exp(-gamma)``, ``gamma = (m^2 - (B Y)^2) /
    (2 sigma^2) = R (2 B Y + R) / (2 sigma^2)`` in ``[0, ~7.5 B / sigma]``, and reject
    ``(m, s) = (0, -)``. Then ``P(k, accepted) = exp(-k^2 / (2 sigma^2)) / (2 B W)`` for
    every integer ``k = ±m``: proportional to the target, so the first accepted draw
    (rejected elements are redrawn with fresh bits) is exactly discrete Gaussian. The
    acceptance rate is ``~1 - 0.4 B / sigma > 99.9%``.

    **Why exact, not merely close.** (1) ``Y``'s law is exactly ``w_y / W``: the table
    compares the infinite-precision uniform with the *exact* CDF boundaries; its certified
    64-bit floors only shortcut comparisons whose outcome they prove, every other
    comparison is made exactly (:func:`_exact.table_cell_exact`), and the ~2**-41 of mass
    beyond the table comes from an exact tail sampler. So the realized proposal is the
    ideal one, not a dyadic approximation, and the ratio above needs no correction.
    (2) ``R`` and ``s`` are exact (power-of-two range, no modulo). (3) "accept" means
    ``U < exp(-gamma)`` for a fresh infinite-precision ``U``: decided at once when the first
    32 bits put ``U`` below ``1 - gamma`` (``exp(-gamma) >= 1 - gamma``, with ``gamma``
    over-estimated by a certified factor); otherwise (a ``~gamma`` fraction) from 53 bits
    against a floating-point ``exp`` with certified margins; otherwise exactly
    (:func:`_exact.bernoulli_exp_exact`, extending the same ``U``). Each comparison is a
    function of ``U`` alone, so the event has probability exactly ``exp(-gamma)``. All the
    bits used (table word, ``R``, ``s``, ``U``) are disjoint, and a rejected element is
    redrawn from fresh bits.

    **Cost.** Four 32-bit words per proposal (table word, first 32 bits of ``U``, ``R``
    and ``s``), one table lookup and a dozen vectorized integer/float operations; edge
    draws (~0.05%) cost an ``exp`` each and exact ones (~2**-40 of them) a few Decimal
    operations.
    """
    return _sample_blocks(_block_plan(*_block_params(sigma), sigma), size, source)


def _sample_blocks(plan: _BlockPlan, size: int, source) -> np.ndarray:
    """``size`` accepted draws of the block sampler (rejected elements are redrawn)."""
    out = np.empty(size, dtype=np.int64)
    redo = []
    for start in range(0, size, _BLOCK_CHUNK):
        bad = _block_round(plan, out[start:start + _BLOCK_CHUNK], source)
        if bad.size:
            redo.append(bad + start)
    todo = np.concatenate(redo) if redo else np.empty(0, dtype=np.intp)
    while todo.size:
        vals = np.empty(todo.size, dtype=np.int64)
        bad = _block_round(plan, vals, source)
        keep = np.ones(todo.size, dtype=bool)
        keep[bad] = False
        out[todo[keep]] = vals[keep]
        todo = todo[bad]
    return out


def discrete_gaussian(sigma: float, size: int, source) -> np.ndarray:
    """Exact discrete Gaussian noise: ``P(k) ∝ exp(-k^2 / (2 sigma^2))`` on the integers.

    Parameters
    ----------
    sigma : float
        Finite, ``0 < sigma <= 1e12`` (taken as the exact rational it represents).
    size : int
        Number of draws.
    source : Source
        Random source; releases pass a :class:`~dpstudio.engine.rng.SecureSource`.

    Returns
    -------
    numpy.ndarray of int64

    Notes
    -----
    ``sigma <= 2048``: exact CDF-table inversion (one 32-bit word decides all but ~1e-6 of
    the draws; the table is built once per sigma in a few tens of milliseconds and cached).
    Larger ``sigma`` (including the release range ``2**15 <= sigma < 2**16``): block
    proposals from a cached exact half-line table (built once per sigma, ~10 ms) and an
    exact rejection step that almost never needs a transcendental
    (:func:`_gaussian_blocks`); about 40 million values/s on the OS CSPRNG at any sigma up
    to 1e12, within 2x of ``numpy.random.Generator.normal``.
    """
    s = _check_scale(sigma, "sigma")
    n = _check_size(size)
    if s <= _GAUSS_TABLE_MAX:
        return _table_from_words(_gauss_table(s), source.uint32(n), source)
    return _gaussian_blocks(s, n, source)


def _gauss_norm(sigma: float) -> float:
    """``S = sum_k exp(-k^2 / (2 sigma^2))``: Poisson summation for sigma >= 1."""
    if sigma >= 1.0:
        n = np.arange(1, 4, dtype=np.float64)
        theta = 1.0 + 2.0 * np.sum(np.exp(-2.0 * math.pi**2 * sigma**2 * n**2))
        return sigma * math.sqrt(2.0 * math.pi) * float(theta)
    k = np.arange(1, math.ceil(40.0 * sigma) + 2, dtype=np.float64)
    return 1.0 + 2.0 * float(np.sum(np.exp(-(k**2) / (2.0 * sigma**2))))


# Direct summation of tails for sigma up to here; above, certified integral bounds.
_TAIL_DIRECT_SIGMA = 4096.0


@functools.lru_cache(maxsize=8)
def _gauss_tails(sigma: float) -> np.ndarray:
    """``P(|Z| > k)`` for ``k = 0 .. J`` by direct summation (beyond J it is < 1e-340)."""
    J = math.ceil(40.0 * sigma) + 2
    w = np.exp(-(np.arange(J + 2, dtype=np.float64) ** 2) / (2.0 * sigma**2))
    suffix = np.cumsum(w[::-1])[::-1]  # small terms first: accurate partial sums
    tails = 2.0 * suffix[1:] / (1.0 + 2.0 * suffix[1])
    tails.flags.writeable = False
    return tails


def _gauss_tail_upper(k: np.ndarray, sigma: float) -> np.ndarray:
    """Certified upper bound on ``P(|Z| > k)`` for large sigma (accuracy ~1e-8 or better).

    With ``f(x) = exp(-x^2/(2 sigma^2))`` decreasing on ``[0, inf)`` and
    ``S >= sigma sqrt(2 pi)`` (Poisson summation, all terms positive):

    * ``sum_{j>k} f(j) <= int_k^inf f``, i.e. the tail is at most ``erfc(k / (sigma sqrt 2))``;
    * the trapezoid rule gives ``sum_{j>k} f(j) <= int_k^inf f - f(k)/2 + E`` with
      ``E = (1/12) sum_j max_[j,j+1] |f''| <= (1.22/sigma + 6/sigma^2) / 12`` (the
      integral of ``|f''|`` is ``2 max|f'| = 2 e^{-1/2} / sigma``, and ``|f''| <= 1/sigma^2``
      has three monotone pieces, each costing at most two extra maxima).

    The minimum of the two is returned.
    """
    kk = k.astype(np.float64)
    root = sigma * math.sqrt(2.0 * math.pi)
    crude = special.erfc(kk / (sigma * math.sqrt(2.0)))
    e = (1.22 / sigma + 6.0 / sigma**2) / 12.0
    fine = crude - np.exp(-(kk**2) / (2.0 * sigma**2)) / root + 2.0 * e / root
    return np.minimum(np.minimum(crude, fine), 1.0)


def discrete_gaussian_pmf(k, sigma: float):
    """``P(Z = k) = exp(-k^2 / (2 sigma^2)) / S`` (``S`` by Poisson summation or directly).

    Parameters
    ----------
    k : int or array_like of int
        Where to evaluate.
    sigma : float
        Finite, ``0 < sigma <= 1e12``.

    Returns
    -------
    float or numpy.ndarray
        Shaped like ``k``.

    Raises
    ------
    ValueError
        For a bad sigma (ParameterError) or non-integer ``k``.
    """
    s = _check_scale(sigma, "sigma")
    kk = _int_array(k, "k").astype(np.float64)
    return _shaped(np.exp(-(kk**2) / (2.0 * s * s)) / _gauss_norm(s), k)


def discrete_gaussian_variance(sigma: float) -> float:
    """Variance of the discrete Gaussian.

    Direct summation for ``sigma <= 10``. Above, Poisson summation gives
    ``Var = sigma^2 (1 + 2 sum_n (1 - 4 pi^2 sigma^2 n^2) e^{-2 pi^2 sigma^2 n^2}) / theta``,
    which is below ``sigma^2`` by a relative ``~8 pi^2 sigma^2 e^{-2 pi^2 sigma^2}``
    (< 1e-800); ``sigma^2`` is returned, an upper bound (conservative for intervals).

    Parameters
    ----------
    sigma : float
        Finite, ``0 < sigma <= 1e12``.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For a bad sigma.
    """
    s = _check_scale(sigma, "sigma")
    if s > 10.0:
        return s * s
    k = np.arange(1, math.ceil(40.0 * s) + 2, dtype=np.float64)
    w = np.exp(-(k**2) / (2.0 * s * s))
    return float(2.0 * np.sum(k**2 * w) / (1.0 + 2.0 * np.sum(w)))


def discrete_gaussian_tail(k, sigma: float):
    """``P(|Z| > k)`` for integers ``k >= 0``.

    Direct summation for ``sigma <= 4096``; above, a certified *upper* bound (see
    :func:`_gauss_tail_upper`; absolute excess about ``2e-8`` at most and relatively
    ``~k / sigma^2`` in the far tail), so intervals built from it are conservative.

    Parameters
    ----------
    k : int or array_like of int
        Where to evaluate, ≥ 0.
    sigma : float
        Finite, ``0 < sigma <= 1e12``.

    Returns
    -------
    float or numpy.ndarray
        Shaped like ``k``.

    Raises
    ------
    ValueError
        For a bad sigma (ParameterError), or ``k`` not integers ≥ 0.
    """
    s = _check_scale(sigma, "sigma")
    kk = _int_array(k, "k", nonneg=True)
    if s <= _TAIL_DIRECT_SIGMA:
        tails = _gauss_tails(s)
        out = np.where(kk < tails.size, tails[np.minimum(kk, tails.size - 1)], 0.0)
    else:
        out = _gauss_tail_upper(kk, s)
    return _shaped(out, k)


def discrete_gaussian_quantile_abs(p, sigma: float):
    """Smallest integer ``k >= 0`` with ``P(|Z| <= k) >= p`` (``0 <= p < 1``).

    Searches :func:`discrete_gaussian_tail`, so for ``sigma > 4096`` the answer comes from
    an upper bound on the tail and may exceed the exact quantile (never fall below it). A
    relative slack of 1e-12 on ``1 - p`` makes floating-point near-ties err upward too.

    Parameters
    ----------
    p : float or array_like
        Probabilities in [0, 1).
    sigma : float
        Finite, ``0 < sigma <= 1e12``.

    Returns
    -------
    int or numpy.ndarray of int64
        Shaped like ``p``.

    Raises
    ------
    ValueError
        For a bad sigma (ParameterError), or ``p`` outside [0, 1).
    """
    s = _check_scale(sigma, "sigma")
    target = (1.0 - _prob_array(p)) * (1.0 - 1e-12)
    if s <= _TAIL_DIRECT_SIGMA:
        tails = _gauss_tails(s)
        k = np.searchsorted(-tails, -target, side="left")
        return _shaped(np.asarray(k, dtype=np.int64), p)
    lo = np.zeros(target.shape, dtype=np.int64)
    hi = np.full(target.shape, math.ceil(40.0 * s) + 2, dtype=np.int64)
    while np.any(lo < hi):  # bisection on the decreasing upper bound
        mid = (lo + hi) // 2
        below = _gauss_tail_upper(mid, s) <= target
        hi = np.where(below, mid, hi)
        lo = np.where(below, lo, mid + 1)
    return _shaped(lo, p)


# --------------------------------------------------------------------------------------
# Categorical with log-weights (exponential mechanism)
# --------------------------------------------------------------------------------------


def categorical_log(logw, size: int, source) -> np.ndarray:
    """Draw indices with ``P(i) ∝ exp(logw[i])``, exactly.

    Parameters
    ----------
    logw : array_like of float, 1-D
        Log-weights, each taken as the exact rational it represents; ``-inf`` means weight
        0. At least one must be finite; NaN and ``+inf`` are rejected.
    size : int
        Number of draws.
    source : Source
        Random source.

    Returns
    -------
    numpy.ndarray of int64

    Notes
    -----
    With ``w_i = exp(logw_i - max)``, integer weights ``W_i = ceil(w~_i (1 + 2**-39) 2**k)``
    (``w~`` the floating-point value, ``2**k`` chosen so the total stays below ``2**62``)
    are upper envelopes: ``W_i >= w_i 2**k``. An index drawn exactly with probability
    ``W_i / sum W`` (uniform integer + binary search) is accepted with probability
    ``w_i 2**k / W_i``, decided in floating point when certified and exactly otherwise.
    Acceptance is ~1 - 2**-39, so one round almost always suffices.
    """
    lw = np.asarray(logw, dtype=np.float64)
    if lw.ndim != 1 or lw.size == 0:
        raise ValueError("logw must be a non-empty 1-D array")
    if np.any(np.isnan(lw)) or np.any(lw == np.inf):
        raise ValueError("logw must hold finite numbers or -inf")
    finite = np.isfinite(lw)
    if not finite.any():
        raise ValueError("logw must have at least one finite entry")
    n = _check_size(size)
    top = float(lw[finite].max())
    d = lw - top  # <= 0; correctly rounded, relative error <= 2**-53
    kbits = 61 - lw.size.bit_length()
    with np.errstate(under="ignore"):
        w = np.exp(d)
    # Below exp(-700) the float may be subnormal: such weights get W = 1 and always take
    # the exact acceptance path.
    tiny = finite & (d < -700.0)
    W = np.ceil(w * ((1.0 + 2.0 * _REL_MARGIN) * 2.0**kbits))
    W[tiny] = 1.0
    W[~finite] = 0.0
    W = W.astype(np.uint64)
    cum = np.cumsum(W)
    total = int(cum[-1])
    # Acceptance probability a_i = w_i 2**k / W_i; float value and certified margins.
    a = w * 2.0**kbits / W.astype(np.float64, copy=True).clip(min=1.0)
    a_lo = a * (1.0 - _REL_MARGIN)
    a_hi = a * (1.0 + _REL_MARGIN)
    a_lo[tiny], a_hi[tiny] = 0.0, 2.0**-900

    def exact_accept(i: int, u: LazyUniform) -> bool:
        scale = Fraction(2**kbits, int(W[i]))
        gamma = Fraction(top) - Fraction(float(lw[i]))

        def bounds(prec: int, gamma=gamma, scale=scale) -> _exact.Bounds:
            lo, hi = _exact.exp_neg_bounds(gamma, prec)
            return lo * scale, hi * scale

        return u.less(bounds)

    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        idx = np.searchsorted(cum, _uniform_below(total, todo.size, source), side="right")
        m = source.uint64(todo.size) >> _SHIFT11
        u_lo = m.astype(np.float64) * _U53
        accept = (u_lo + _U53) <= a_lo[idx]
        for j in np.flatnonzero(~accept & (u_lo < a_hi[idx])):
            accept[j] = exact_accept(int(idx[j]), LazyUniform(int(m[j]), 53, source))
        out[todo[accept]] = idx[accept]
        todo = todo[~accept]
    return out
