"""Privacy-loss distributions (PLDs) on a uniform grid, composed by FFT.

One module, though long, because it is one algorithm under one invariant: the grid, its
discretizations, truncation, FFT composition and the mechanisms' PLDs each keep "δ(ε)
only goes up", argued once below; split apart, the argument would sit away from the code
it covers.

The PLD of a pair (P, Q) is the law of the privacy loss L = ln(P(o)/Q(o)) for o ~ P, with
an atom at +∞ of mass P(Q = 0). Its hockey-stick curve

    δ(ε) = E[(1 − e^{ε−L})₊] + P(L = +∞),  ε ∈ ℝ,

is the smallest δ for which the pair is (ε, δ)-indistinguishable, and the PLD of a
composition is the convolution of the PLDs (Sommer, Meiser & Mohammadi 2019; Koskela,
Jälkö & Honkela 2020). Losses are kept on the grid {i·h}, h the
``value_discretization_interval``.

Why every answer is an upper bound (the pessimism argument)
-----------------------------------------------------------
Write f_ε(L) = (1 − e^{ε−L})₊, nonnegative and nondecreasing in L. Two kinds of change
are made to a PLD, and each can only raise δ(ε) for *every* real ε:

1. moving mass to a higher loss or adding mass: rounding losses up to the grid
   (``discretization="round-up"``), lumping the lower tail onto the lowest kept point,
   sending the upper tail to +∞, clipping FFT round-off below zero, adding a Chernoff
   bound of the mass an FFT window leaves out;
2. "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022; the default
   discretization, also used to coarsen a grid): an atom at ε_j + u, 0 < u < h, is split
   between ε_j and ε_j + h so that the new curve equals the old one at the grid points and
   is linear in γ = e^ε between them. Every hockey-stick curve is convex in γ, so the
   chord lies above it everywhere. Its error is second order in h, where rounding up
   drifts by ~h/2 per composed mechanism (k·h/2 after k of them).

Composition is monotone in each factor's curve: for independent losses,
δ_{A∘B}(ε) = E[δ_A(ε − L_B); L_B < ∞] + P(L_B = ∞), which is nondecreasing in δ_A(·)
(and symmetrically in δ_B). So a curve that dominates on all of ℝ stays dominating through
any number of compositions, and the final δ(ε), ε(δ) overstate the true ones. Only
floating-point round-off is outside this argument; δ is reported with an allowance of
``ROUNDOFF`` (1e-11) times the mass above ε for it, well above the ~1e-13 errors measured
against closed forms (FFT round-off, ~1e-17 per grid point, is not covered).

Neighbouring relation
---------------------
A :class:`PLD` holds one loss distribution when the mechanism is symmetric (Gaussian,
Laplace, randomized response…) and two otherwise: "remove" — P = M(D), Q = M(D′) with D′
= D minus one record — and "add", the reverse pair. Compositions pair remove with remove
and add with add (the neighbouring datasets are fixed across the composition) and
:meth:`PLD.delta` / :meth:`PLD.epsilon` report the worse direction, as Google's
``dp_accounting`` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpstudio.engine.calibration import validate_delta, validate_epsilon, validate_sensitivity
from dpstudio.engine.checks import count, non_negative, positive
from dpstudio.engine.checks import sample_rate as sample_rate_checked
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.special import ndtr, ndtri
from dpstudio.jobs import State, check, scaled

__all__ = [
    "DEFAULT_TAIL_MASS_TRUNCATION",
    "DEFAULT_VALUE_DISCRETIZATION_INTERVAL",
    "DISCRETIZATIONS",
    "PLD",
]

DEFAULT_VALUE_DISCRETIZATION_INTERVAL = 1e-4
DEFAULT_TAIL_MASS_TRUNCATION = 1e-15
DISCRETIZATIONS = ("connect-dots", "round-up")
# Largest grid built or produced by a composition; beyond it the grid is coarsened (by
# connect-the-dots, which is pessimistic), so cost and memory stay bounded whatever k is.
MAX_GRID = 1 << 21
# Largest output window of self_compose: past it the step h is widened in proportion, so
# the cost of k-fold composition is bounded whatever k is (the error grows like h²).
MAX_COMPOSED_GRID = 1 << 19
# Most runs self_compose accepts (see there).
MAX_SELF_COMPOSE = 1 << 40
# Relative allowance added to δ for floating-point round-off in the masses and sums: the
# errors measured against closed forms are ~1e-13 relative to the mass above ε.
ROUNDOFF = 1e-11
# A k-fold composition whose window would coarsen one run's PLD below this many points
# is done in two stages instead (see _self_compose).
_MIN_COARSE_POINTS = 64
# FFT convolution below this many output points is no faster than direct convolution.
_DIRECT_CONVOLUTION = 64

# Cumulative distribution functions of the loss under P and Q at an array of loss values:
# returns P(L ≤ ε), P(L > ε), Q(L ≤ ε), Q(L > ε), each computed directly (not as 1 − the
# other) so that both tails keep their relative precision.
Cdfs = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


# --------------------------------------------------------------------------- validation


def _interval(h: float) -> float:
    h = positive("value_discretization_interval", h)
    if h > 1.0:
        raise ParameterError(f"value_discretization_interval must be at most 1, got {h!r}")
    return h


def _tail(tail: float) -> float:
    t = positive("tail_mass_truncation", tail)
    if t >= 1e-3:
        raise ParameterError(f"tail_mass_truncation must be below 1e-3, got {tail!r}")
    return t


def _discretization(name: str) -> str:
    if name not in DISCRETIZATIONS:
        raise ParameterError(
            f"discretization must be one of {', '.join(DISCRETIZATIONS)}, got {name!r}")
    return name


# --------------------------------------------------------------------- one direction


class _Pmf:
    """One direction: mass ``probs[i]`` at loss ``(offset + i)·h``, plus ``inf_mass`` at +∞."""

    __slots__ = ("h", "offset", "probs", "inf_mass", "_tables")

    def __init__(self, h: float, offset: int, probs: np.ndarray, inf_mass: float):
        self.h = float(h)
        self.offset = int(offset)
        self.probs = np.asarray(probs, dtype=np.float64)
        self.inf_mass = float(min(max(inf_mass, 0.0), 1.0))
        self._tables: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.probs.size)) * self.h

    def suffix_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Losses L, A[j] = Σ_{i≥j} p_i and ln B[j] = ln Σ_{i≥j} p_i e^{−L_i} (j ≤ n).

        Between grid points the active set {i : L_i > ε} is fixed, so δ(ε) = ∞-mass +
        A[j] − e^ε B[j]: one search per ε. B is accumulated in log space so that no
        e^{−L} overflows; both sums run from the top, smallest terms first.
        """
        if self._tables is None:
            losses = self.losses
            p = self.probs
            a = np.append(np.cumsum(p[::-1])[::-1], 0.0)
            top = float(losses[-1])
            if top - float(losses[0]) < 600.0:
                # e^{top − L} stays finite: a plain suffix sum, rescaled.
                with np.errstate(divide="ignore"):
                    log_b = np.log(np.cumsum((p * np.exp(top - losses))[::-1])[::-1]) - top
            else:
                with np.errstate(divide="ignore"):
                    logw = np.log(p) - losses
                log_b = np.logaddexp.accumulate(logw[::-1])[::-1]
            log_b = np.append(log_b, -np.inf)
            self._tables = (losses, a, log_b)
        return self._tables

    def delta(self, eps: np.ndarray) -> np.ndarray:
        losses, a, log_b = self.suffix_tables()
        j = np.searchsorted(losses, eps, side="right")  # first grid point with L > ε
        with np.errstate(over="ignore", invalid="ignore"):
            finite = a[j] * (1.0 + ROUNDOFF) - np.exp(eps + log_b[j])
        finite = np.where(j >= losses.size, 0.0, finite)
        return np.minimum(self.inf_mass + np.clip(finite, 0.0, 1.0), 1.0)

    def epsilon(self, delta: float) -> float:
        """Smallest ε ≥ 0 with δ(ε) ≤ ``delta``, solved exactly on its grid segment."""
        if self.inf_mass > delta:
            return math.inf
        losses, a, log_b = self.suffix_tables()
        with np.errstate(over="ignore", invalid="ignore"):
            at_grid = self.inf_mass + np.maximum(
                a[1:] * (1.0 + ROUNDOFF) - np.exp(losses + log_b[1:]), 0.0)
        above = np.flatnonzero(at_grid > delta)
        s = 0 if above.size == 0 else int(above[-1]) + 1  # active set {i ≥ s} at the root
        if s >= losses.size or not np.isfinite(log_b[s]):  # no finite mass above: the
            return max(float(losses[min(s, losses.size - 1)]), 0.0)  # last atom bounds ε
        gap = self.inf_mass + a[s] * (1.0 + ROUNDOFF) - delta
        eps = math.log(gap) - float(log_b[s]) if gap > 0 else -math.inf
        # The root lies in the segment ending at L_s, where δ ≤ target already holds.
        eps = max(min(eps, float(losses[s])), 0.0)
        # Round-off may leave δ(ε) a hair above the target: step up until it is not.
        step = max(abs(eps), 1e-300) * 4e-16
        for _ in range(200):
            if float(self.delta(np.array([eps]))[0]) <= delta:
                return eps
            eps += step
            step *= 2.0
        return eps  # pragma: no cover - unreachable for finite inputs


def _pmf_from_atoms(h: float, losses: np.ndarray, masses: np.ndarray, inf_mass: float,
                    discretization: str) -> _Pmf:
    """Discretize atoms ``masses`` at finite ``losses`` onto the grid of step ``h``.

    ``round-up`` moves each atom to the grid point at or above it. ``connect-dots`` splits
    an atom at ε_j + u (0 ≤ u < h) into (e^{h−u} − 1)/(e^h − 1) at ε_j and
    (1 − e^{−u})/(1 − e^{−h}) at ε_j + h: mass and Q-mass are kept, the curve is unchanged
    at the grid points and becomes the chord in e^ε between them (above the true curve).
    """
    losses = np.asarray(losses, dtype=np.float64)
    masses = np.asarray(masses, dtype=np.float64)
    keep = masses > 0
    losses, masses = losses[keep], masses[keep]
    if losses.size == 0:
        return _Pmf(h, 0, np.zeros(1), inf_mass)
    j = np.floor(losses / h)
    u = losses - j * h
    # Keep 0 ≤ u < h despite the rounding of losses / h.
    low = u < 0
    j[low] -= 1
    u[low] += h
    high = u >= h
    j[high] += 1
    u[high] -= h
    if discretization == "round-up":
        up = (u > 0).astype(np.float64)
        down = 1.0 - up
    else:  # u = 0 gives up = 0, down = 1: atoms on the grid stay where they are
        up = np.expm1(-u) / np.expm1(-h)
        # (e^{h−u} − 1)/(e^h − 1) written as e^{−u}(e^{u−h} − 1)/(e^{−h} − 1): the same
        # number, but finite for the coarse grids (h > 709) of very long compositions,
        # where e^h overflows and the plain quotient is inf/inf = NaN.
        if h < 700.0:
            down = np.expm1(h - u) / np.expm1(h)
        else:
            down = np.exp(-u) * (np.expm1(u - h) / np.expm1(-h))
    lo = int(j.min())
    idx = (j - lo).astype(np.int64)
    n = int(idx.max()) + 2
    probs = (np.bincount(idx, weights=masses * down, minlength=n)
             + np.bincount(idx + 1, weights=masses * up, minlength=n))
    return _trim(_Pmf(h, lo, probs, inf_mass))


def _pmf_from_cdfs(h: float, lo: float, hi: float, cdfs: Cdfs, discretization: str) -> _Pmf:
    """Discretize a loss law given by its CDFs under P and Q onto grid points in [lo, hi].

    Mass at or below the first grid point is put on it (rounded up). Within a cell
    (ε_j, ε_j + h] the connect-the-dots split of the atoms integrates to
    down = (e^{ε_j+h} Q(cell) − P(cell)) / (e^h − 1) and up = P(cell) − down, using that
    dQ = e^{−L} dP on finite losses; ``round-up`` puts the whole cell on ε_j + h. Above
    the last grid point ε_n, the part δ(ε_n) of the tail goes to +∞ and the rest,
    e^{ε_n} Q(L > ε_n), onto ε_n (the split of an atom beyond the grid); ``round-up``
    sends the whole tail to +∞.
    """
    i0 = math.floor(lo / h)
    i1 = max(math.ceil(hi / h), i0 + 1)
    if i1 - i0 + 1 > MAX_GRID:
        # Too fine for the range of losses: coarsen so the grid keeps MAX_GRID points.
        return _pmf_from_cdfs((hi - lo) / (MAX_GRID - 8), lo, hi, cdfs, discretization)
    grid = np.arange(i0, i1 + 1) * h
    p_le, p_gt, q_le, q_gt = (np.asarray(c, dtype=np.float64) for c in cdfs(grid))
    # Cell masses from whichever tail is smaller, so that small cells keep their digits.
    p_cell = np.where(p_gt[:-1] <= p_le[1:], p_gt[:-1] - p_gt[1:], p_le[1:] - p_le[:-1])
    q_cell = np.where(q_gt[:-1] <= q_le[1:], q_gt[:-1] - q_gt[1:], q_le[1:] - q_le[:-1])
    p_cell = np.maximum(p_cell, 0.0)
    q_cell = np.maximum(q_cell, 0.0)
    probs = np.zeros(grid.size)
    probs[0] = max(float(p_le[0]), 0.0)
    if discretization == "round-up":
        probs[1:] += p_cell
        inf_mass = float(p_gt[-1])
    else:
        with np.errstate(divide="ignore", over="ignore"):
            eq_next = np.exp(grid[1:] + np.log(q_cell))  # e^{ε_j + h} Q(cell)
            down = np.clip((eq_next - p_cell) / math.expm1(h), 0.0, p_cell)
            eq_tail = float(np.exp(grid[-1] + np.log(q_gt[-1])))
        probs[:-1] += down
        probs[1:] += p_cell - down
        tail = max(float(p_gt[-1]), 0.0)
        on_last = min(eq_tail, tail) if math.isfinite(eq_tail) else 0.0
        probs[-1] += on_last
        inf_mass = tail - on_last
    return _trim(_Pmf(h, i0, probs, inf_mass))


def _from_cdfs(cdfs: Cdfs, lo: float, hi: float, h: float, discretization: str) -> _Pmf:
    return _pmf_from_cdfs(_interval(h), lo, hi, cdfs, _discretization(discretization))


def _trim(pmf: _Pmf) -> _Pmf:
    """Drop exact zeros at both ends of the grid."""
    nz = np.flatnonzero(pmf.probs > 0)
    if nz.size == 0:
        return _Pmf(pmf.h, 0, np.zeros(1), pmf.inf_mass)
    if nz[0] == 0 and nz[-1] == pmf.probs.size - 1:
        return pmf
    return _Pmf(pmf.h, pmf.offset + int(nz[0]), pmf.probs[nz[0]:nz[-1] + 1], pmf.inf_mass)


def _truncate(pmf: _Pmf, tail: float) -> _Pmf:
    """Clip round-off below 0, lump a lower tail of mass ≤ ``tail`` onto the lowest kept
    point, send an upper tail of mass ≤ ``tail`` to +∞. All three only raise δ(ε)."""
    p = np.maximum(pmf.probs, 0.0)
    low = np.cumsum(p)
    first = int(np.searchsorted(low, tail, side="right"))  # low[first] > tail
    high = np.cumsum(p[::-1])
    keep_top = int(np.searchsorted(high, tail, side="right"))
    last = p.size - 1 - keep_top
    if first >= p.size or last < first:
        first, last = 0, p.size - 1
    kept = p[first:last + 1].copy()
    kept[0] += float(low[first - 1]) if first > 0 else 0.0
    dropped = float(high[keep_top - 1]) if keep_top > 0 else 0.0
    return _trim(_Pmf(pmf.h, pmf.offset + first, kept, pmf.inf_mass + dropped))


def _regrid(pmf: _Pmf, h: float, discretization: str = "connect-dots") -> _Pmf:
    """The same PLD on a coarser grid (pessimistic: connect-the-dots of its atoms)."""
    if h == pmf.h:
        return pmf
    return _pmf_from_atoms(h, pmf.losses, pmf.probs, pmf.inf_mass, discretization)


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = a.size + b.size - 1
    if min(a.size, b.size) <= _DIRECT_CONVOLUTION:
        return np.convolve(a, b)
    from scipy import fft as sp_fft  # here, not at the top: it costs every command ~0.15 s

    size = sp_fft.next_fast_len(n, real=True)
    out = sp_fft.irfft(sp_fft.rfft(a, size) * sp_fft.rfft(b, size), size)[:n]
    return out


def _compose(a: _Pmf, b: _Pmf, tail: float, state: State | None = None) -> _Pmf:
    check(state)
    if a.h != b.h:
        h = max(a.h, b.h)
        a, b = _regrid(a, h), _regrid(b, h)
    check(state)
    probs = _convolve(a.probs, b.probs)
    inf_mass = a.inf_mass + b.inf_mass - a.inf_mass * b.inf_mass
    out = _truncate(_Pmf(a.h, a.offset + b.offset, probs, inf_mass), tail)
    if out.probs.size > MAX_GRID:
        out = _regrid(out, out.h * math.ceil(out.probs.size / (MAX_GRID - 8)))
    if state is not None:
        state.progress(1.0, "composed")
    return out


def _chernoff_window(idx: np.ndarray, p: np.ndarray, k: int, tail: float
                     ) -> tuple[int, int, float, float]:
    """Grid window [a, b] of the k-fold sum outside which each tail has mass ≤ a bound.

    For t > 0, P(S ≥ kc + u) ≤ e^{−tu} M(t)^k with M the (sub-normalized) moment
    generating function of the centred index; u is minimized over a grid of t around the
    Gaussian optimum. Returns a, b and the two tail bounds (0 where the window reaches
    the end of the support, so nothing is cut there).
    """
    x = idx.astype(np.float64)
    mass = float(p.sum())
    c = float(np.dot(p, x) / mass)
    xc = x - c
    var = float(np.dot(p, xc * xc) / mass)
    lo_all, hi_all = k * int(idx[0]), k * int(idx[-1])
    if var <= 0:
        return lo_all, hi_all, 0.0, 0.0
    log_tail = math.log(tail)
    logp = np.log(p)

    def bound(signed_ts: np.ndarray) -> np.ndarray:
        """u(t) = (k ln M(±t) − ln τ)/t, for which P(±(S − kc) ≥ u) ≤ τ."""
        expo = signed_ts[:, None] * xc + logp
        top = expo.max(axis=1)
        # Clamping at −700 keeps exp out of (slow) subnormals and only raises the MGF,
        # so the bound stays valid.
        log_mgf = top + np.log(np.exp(np.maximum(expo - top[:, None], -700.0)).sum(axis=1))
        return (k * log_mgf - log_tail) / np.abs(signed_ts)

    def best(sign: float) -> float:
        # Any t > 0 gives a valid bound. Start from t0/2, t0, 2t0 around the Gaussian
        # optimum t0 = √(2 ln(1/τ))/sd, walk outwards by factors of 2 while the minimum
        # is at an end (skewed or heavy-tailed losses), then refine by 2^{±1/2}, 2^{±1/4}.
        t0 = math.sqrt(-2.0 * log_tail) / math.sqrt(k * var)
        ts = [t0 / 2, t0, 2 * t0]
        vals = list(bound(sign * np.array(ts)))
        for _ in range(8):
            i = int(np.argmin(vals))
            if 0 < i < len(ts) - 1:
                break
            t_new = ts[0] / 2 if i == 0 else ts[-1] * 2
            v_new = float(bound(np.array([sign * t_new]))[0])
            if i == 0:
                ts.insert(0, t_new)
                vals.insert(0, v_new)
            else:
                ts.append(t_new)
                vals.append(v_new)
        t_best, u_best = ts[int(np.argmin(vals))], min(vals)
        for f in (2.0 ** 0.5, 2.0 ** 0.25):
            cand = np.array([t_best / f, t_best * f])
            v = bound(sign * cand)
            if v.min() < u_best:
                t_best, u_best = float(cand[np.argmin(v)]), float(v.min())
        return float(u_best)

    up, dn = best(1.0), best(-1.0)
    up_bound, dn_bound = tail, tail
    # A non-finite bound (e.g. a near-point mass, whose optimal t overflows) cuts nothing.
    b = math.ceil(k * c + up) if math.isfinite(up) else hi_all
    a = math.floor(k * c - dn) if math.isfinite(dn) else lo_all
    if b >= hi_all:
        b, up_bound = hi_all, 0.0
    if a <= lo_all:
        a, dn_bound = lo_all, 0.0
    return a, b, dn_bound, up_bound


def _power(x: np.ndarray, k: int) -> np.ndarray:
    """x**k elementwise by repeated squaring (in place; ~4x faster than complex pow)."""
    out = None
    base = x.copy()
    while k:
        if k & 1:
            out = base.copy() if out is None else np.multiply(out, base, out=out)
        k >>= 1
        if k:
            np.multiply(base, base, out=base)
    return out


def _self_compose(pmf: _Pmf, k: int, tail: float, state: State | None = None) -> _Pmf:
    """k-fold composition by one FFT power: cost O(W log W) for an output window of W
    points, whatever k is (W grows like √k; past MAX_COMPOSED_GRID the grid is coarsened,
    which bounds the cost for every k). ``state`` is checked before each FFT stage and
    told the progress after it."""
    check(state)
    if k == 1:
        if state is not None:
            state.progress(1.0, "composed")
        return pmf
    pmf = _trim(pmf)
    fin = float(pmf.probs.sum())
    inf_mass = -math.expm1(k * math.log1p(-pmf.inf_mass)) if pmf.inf_mass < 1 else 1.0
    if fin <= 0:
        return _Pmf(pmf.h, 0, np.zeros(1), 1.0)
    nz = np.flatnonzero(pmf.probs > 0)
    if nz.size == 1:
        return _Pmf(pmf.h, k * pmf.offset, np.array([fin ** k]), inf_mass)
    a, b, dn_bound, up_bound = _chernoff_window(pmf.offset + nz, pmf.probs[nz], k, tail)
    width = b - a + 1
    if width > MAX_COMPOSED_GRID:
        factor = width / (MAX_COMPOSED_GRID - 64)
        if pmf.probs.size < _MIN_COARSE_POINTS * factor and k >= 4:
            # Coarsening one run's PLD this much would leave it a few points, and every
            # run then adds about one grid step² of variance, so the window never fits
            # (k ≳ 10⁹: a cascade of ever coarser grids, NaN at h > 709, a meaningless
            # ε). Compose in two stages instead, k = m·q + r with m ≈ √k: the coarsening
            # then happens once, on the m-fold PLD, whose spread is √m times wider.
            # Every step (composition, regrid, truncation) only raises δ(ε).
            m = math.isqrt(k)
            q, r = divmod(k, m)
            first = _self_compose(pmf, m, tail, scaled(state, 0.0, 0.4))
            if r == 0:
                return _self_compose(first, q, tail, scaled(state, 0.4, 1.0))
            out = _self_compose(first, q, tail, scaled(state, 0.4, 0.8))
            rest = _self_compose(pmf, r, tail, scaled(state, 0.8, 0.95))
            return _compose(out, rest, tail, scaled(state, 0.95, 1.0))
        coarser = _regrid(pmf, pmf.h * factor)
        return _self_compose(coarser, k, tail, state)
    from scipy import fft as sp_fft  # here, not at the top: it costs every command ~0.15 s

    n = pmf.probs.size
    size = sp_fft.next_fast_len(max(width, n), real=True)
    check(state)
    spectrum = sp_fft.rfft(pmf.probs, size)
    if state is not None:
        state.progress(0.3, "FFT")
    check(state)
    powered = _power(spectrum, k)
    if state is not None:
        state.progress(0.6, "FFT power")
    check(state)
    dense = sp_fft.irfft(powered, size)
    if state is not None:
        state.progress(0.9, "inverse FFT")
    # Sums whose index lies outside [a, b] wrap around into the window: their mass (≤ the
    # Chernoff bounds) is also counted where it belongs, on +∞ or on the lowest point.
    start = (a - k * pmf.offset) % size
    window = np.take(dense, (start + np.arange(width)) % size)
    window = np.maximum(window, 0.0)
    window[0] += dn_bound
    out = _truncate(_Pmf(pmf.h, a, window, inf_mass + up_bound), tail)
    if state is not None:
        state.progress(1.0, "composed")
    return out


# --------------------------------------------------------------------- mechanisms


def _gaussian_cdfs(mu: float) -> Cdfs:
    """L ~ N(μ²/2, μ²) under P and N(−μ²/2, μ²) under Q, μ = Δ/σ."""
    half = 0.5 * mu * mu

    def cdfs(eps: np.ndarray):
        zp, zq = (eps - half) / mu, (eps + half) / mu
        return ndtr(zp), ndtr(-zp), ndtr(zq), ndtr(-zq)

    return cdfs


def _laplace_cdfs(a: float) -> Cdfs:
    """Loss (|x − Δ| − |x|)/b for x ~ Lap(0, b), a = Δ/b: atoms ½ at a and ½e^{−a} at −a,
    density ¼e^{−(a−l)/2} between; under Q the loss is distributed as −L under P."""

    def p_lt(lv: np.ndarray) -> np.ndarray:  # P(L < l)
        return np.where(lv <= -a, 0.0, np.where(lv > a, 1.0,
                                                0.5 * np.exp(-0.5 * (a - np.minimum(lv, a)))))

    def cdfs(eps: np.ndarray):
        p_le = np.where(eps < -a, 0.0, np.where(eps >= a, 1.0,
                                                0.5 * np.exp(-0.5 * (a - np.minimum(eps, a)))))
        p_gt = np.where(eps < -a, 1.0, np.where(eps >= a, 0.0,
                                                1.0 - 0.5 * np.exp(0.5 * (np.minimum(eps, a) - a))))
        q_gt = p_lt(-eps)
        q_le = np.where(eps >= a, 1.0, 1.0 - q_gt)
        return p_le, p_gt, q_le, q_gt

    return cdfs


def _mixture_x(v: np.ndarray, sigma: float, q: float, sens: float) -> np.ndarray:
    """x with ln((1 − q) + q e^{(2xΔ − Δ²)/(2σ²)}) = v; −∞ where v ≤ ln(1 − q)."""
    log1mq = math.log1p(-q) if q < 1 else -math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        g = v + np.log(-np.expm1(log1mq - v)) - math.log(q)  # ln((e^v − (1 − q))/q)
        x = sigma * sigma / sens * g + 0.5 * sens
    return np.where(v > log1mq, x, -np.inf)


def _subsampled_gaussian_cdfs(sigma: float, q: float, sens: float, direction: str) -> Cdfs:
    """Poisson-subsampled Gaussian, mixture M = (1 − q)N(0, σ²) + qN(Δ, σ²).

    remove: P = M, Q = N(0, σ²), L = ln((1 − q) + q e^{(2xΔ−Δ²)/(2σ²)}) increasing in x.
    add: P = N(0, σ²), Q = M, L = −(the same), decreasing in x.
    """

    def mix_cdf(x):
        return (1 - q) * ndtr(x / sigma) + q * ndtr((x - sens) / sigma)

    def mix_sf(x):
        return (1 - q) * ndtr(-x / sigma) + q * ndtr((sens - x) / sigma)

    if direction == "remove":
        def cdfs(eps: np.ndarray):
            x = _mixture_x(eps, sigma, q, sens)  # L ≤ ε ⇔ x ≤ x(ε)
            return mix_cdf(x), mix_sf(x), ndtr(x / sigma), ndtr(-x / sigma)
    else:
        def cdfs(eps: np.ndarray):
            x = _mixture_x(-eps, sigma, q, sens)  # L ≤ ε ⇔ x ≥ x(−ε)
            return ndtr(-x / sigma), ndtr(x / sigma), mix_sf(x), mix_cdf(x)

    return cdfs


def _remove_loss(x: float, sigma: float, q: float, sens: float) -> float:
    log1mq = math.log1p(-q) if q < 1 else -math.inf
    return float(np.logaddexp(log1mq, math.log(q) + (2 * x * sens - sens * sens)
                              / (2 * sigma * sigma)))


# --------------------------------------------------------------------------- the class


class PLD:
    """Privacy-loss distribution of a mechanism under a neighbouring relation.

    Build one with a constructor (:meth:`gaussian`, :meth:`laplace`,
    :meth:`discrete_laplace`, :meth:`randomized_response`, :meth:`from_distributions`,
    :meth:`subsampled_gaussian`, :meth:`from_epsilon_delta`), combine with
    :meth:`compose` / :meth:`self_compose`, read with :meth:`delta` / :meth:`epsilon`.
    Every value read is an upper bound on the mechanism's true one (see the module
    docstring). Instances are immutable.

    Parameters
    ----------
    remove : _Pmf
        The loss distribution of the "remove" direction (the only one when symmetric).
    add : _Pmf or None, optional
        The "add" direction's, or None when the mechanism is symmetric.
    tail_mass_truncation : float, optional
        Mass a composition may truncate from each tail: the lower tail is lumped onto
        the lowest kept loss, the upper tail sent to +∞, so δ only goes up.

    Attributes
    ----------
    symmetric : bool
        Whether one loss distribution serves both directions.
    value_discretization_interval : float
        The grid step h of the losses.
    infinity_mass : float
        The largest mass at loss +∞ over the directions.
    """

    __slots__ = ("_remove", "_add", "_tail")

    def __init__(self, remove: _Pmf, add: _Pmf | None = None,
                 tail_mass_truncation: float = DEFAULT_TAIL_MASS_TRUNCATION):
        self._remove = remove
        self._add = add
        self._tail = tail_mass_truncation

    # ------------------------------------------------------------------ properties

    @property
    def symmetric(self) -> bool:
        """True when both directions have the same loss distribution (one is stored)."""
        return self._add is None

    @property
    def value_discretization_interval(self) -> float:
        """Grid step h of the losses (the coarser one if the directions differ)."""
        return max(p.h for p in self._directions())

    @property
    def infinity_mass(self) -> float:
        """Largest mass at loss +∞ over the directions: δ(ε) ≥ it for every ε."""
        return max(p.inf_mass for p in self._directions())

    def _directions(self) -> tuple[_Pmf, ...]:
        return (self._remove,) if self._add is None else (self._remove, self._add)

    def pmf(self, direction: str = "remove") -> tuple[np.ndarray, np.ndarray, float]:
        """Loss values, their probabilities and the mass at +∞ of one direction.

        Parameters
        ----------
        direction : {"remove", "add"}
            "remove": P = M(D), Q = M(D′) with D′ = D minus one record; "add": the
            reverse. Symmetric PLDs return the same for both.
        """
        (pmf,) = self._selected(direction)
        return pmf.losses, pmf.probs.copy(), pmf.inf_mass

    def __repr__(self) -> str:
        sizes = "+".join(str(p.probs.size) for p in self._directions())
        return (f"PLD({'symmetric' if self.symmetric else 'remove/add'}, "
                f"h={self.value_discretization_interval:g}, points={sizes}, "
                f"inf_mass={self.infinity_mass:.3g})")

    # ------------------------------------------------------------------ composition

    def compose(self, other: PLD, state: State | None = None) -> PLD:
        """PLD of running this mechanism and ``other`` on the same data (independent noise).

        Parameters
        ----------
        other : PLD
            Grids of different steps are first brought to the coarser step
            (pessimistically).
        state : State, optional
            The job's state (:mod:`~dpstudio.jobs`): cancellation checked before
            each convolution, progress after each direction.

        Returns
        -------
        PLD

        Raises
        ------
        ParameterError
            If ``other`` is not a PLD.
        Cancelled
            If ``state`` is cancelled.
        """
        if not isinstance(other, PLD):
            raise ParameterError(f"can only compose a PLD with a PLD, got {type(other).__name__}")
        tail = min(self._tail, other._tail)
        both = not (self.symmetric and other.symmetric)
        remove = _compose(self._remove, other._remove, tail,
                          scaled(state, 0.0, 0.5 if both else 1.0))
        if not both:
            return PLD(remove, None, tail)
        add = _compose(self._add or self._remove, other._add or other._remove, tail,
                       scaled(state, 0.5, 1.0))
        return PLD(remove, add, tail)

    def self_compose(self, k: int, state: State | None = None) -> PLD:
        """PLD of k independent runs of this mechanism.

        Computed by raising the FFT of the grid to the k-th power: the cost depends on the
        width of the result (a Chernoff window, ~√k) and not on k otherwise; mass outside
        the window is bounded and counted pessimistically.

        Parameters
        ----------
        k : int
            Number of runs, ≥ 1.
        state : State, optional
            The job's state (:mod:`~dpstudio.jobs`): cancellation checked before
            each FFT stage, progress after each (each direction of an asymmetric PLD
            takes half).

        Returns
        -------
        PLD

        Raises
        ------
        ParameterError
            If k is not a positive integer or exceeds 2^40.
        Cancelled
            If ``state`` is cancelled.
        """
        k = count("the number of compositions", k)
        if k > MAX_SELF_COMPOSE:
            # Beyond it the window's grid indices (k times a loss index) leave the range
            # where floats are exact, and the pessimism argument no longer covers them.
            raise ParameterError(
                f"the PLD accountant composes at most 2^40 ≈ {MAX_SELF_COMPOSE:.3g} runs, "
                f"got {k}; use the RDP accountant (--method rdp) for more")
        half = 1.0 if self._add is None else 0.5
        remove = _self_compose(self._remove, k, self._tail, scaled(state, 0.0, half))
        add = (None if self._add is None
               else _self_compose(self._add, k, self._tail, scaled(state, 0.5, 1.0)))
        if state is not None:  # the short paths (k = 1, a point mass) report nothing
            state.progress(1.0, "composed")
        return PLD(remove, add, self._tail)

    # ------------------------------------------------------------------ read-out

    def _selected(self, direction: str | None) -> tuple[_Pmf, ...]:
        if direction is None:
            return self._directions()
        if direction not in ("remove", "add"):
            raise ParameterError(f"direction must be 'remove' or 'add', got {direction!r}")
        return (self._add if direction == "add" and self._add is not None else self._remove,)

    def delta(self, epsilon: float | np.ndarray, direction: str | None = None
              ) -> float | np.ndarray:
        """Hockey-stick divergence δ(ε) = E[(1 − e^{ε−L})₊] + P(L = ∞), max over directions.

        Parameters
        ----------
        epsilon : float or array_like
            Any real ε (negative values are meaningful, e.g. for trade-off curves).
        direction : {"remove", "add"}, optional
            Only this direction (default: the max over both).

        Returns
        -------
        float or numpy.ndarray
            Same shape as ``epsilon``; an upper bound on the mechanism's δ(ε).
        """
        eps = np.asarray(epsilon, dtype=np.float64)
        if np.isnan(eps).any():
            raise ParameterError("ε must not be NaN")
        flat = eps.reshape(-1)
        out = np.max([p.delta(flat) for p in self._selected(direction)], axis=0)
        if eps.ndim == 0:
            return float(out[0])
        return out.reshape(eps.shape)

    def epsilon(self, delta: float, direction: str | None = None) -> float:
        """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (over both directions); ∞ if none.

        Parameters
        ----------
        delta : float
            Target δ in [0, 1).
        direction : {"remove", "add"}, optional
            Only this direction (default: the max over both).

        Returns
        -------
        float
            An upper bound on the mechanism's ε at this δ.
        """
        d = validate_delta(delta)
        return max(p.epsilon(d) for p in self._selected(direction))

    # ------------------------------------------------------------------ constructors

    @classmethod
    def gaussian(cls, sigma: float, sensitivity: float = 1.0, *,
                 value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
                 discretization: str = "connect-dots",
                 tail_mass_truncation: float = DEFAULT_TAIL_MASS_TRUNCATION) -> PLD:
        """Gaussian mechanism N(0, σ²) with ℓ₂ sensitivity Δ: L ~ N(μ²/2, μ²), μ = Δ/σ.

        Parameters
        ----------
        sigma : float
            Noise standard deviation, > 0.
        sensitivity : float
            ℓ₂ sensitivity Δ > 0 (for either relation: the pair is symmetric).
        value_discretization_interval : float
            Grid step h of the losses.
        discretization : {"connect-dots", "round-up"}
            Both pessimistic; connect-the-dots is far more accurate for a given h.
        tail_mass_truncation : float
            Loss mass beyond the grid's ends in each tail (handled pessimistically).

        Returns
        -------
        PLD
        """
        sigma = positive("σ", sigma)
        sens = validate_sensitivity(sensitivity)
        tail = _tail(tail_mass_truncation)
        mu = sens / sigma
        z = float(-ndtri(tail))
        half = 0.5 * mu * mu
        pmf = _from_cdfs(_gaussian_cdfs(mu), half - z * mu, half + z * mu,
                         value_discretization_interval, discretization)
        return cls(pmf, None, tail)

    @classmethod
    def laplace(cls, scale: float, sensitivity: float = 1.0, *,
                value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
                discretization: str = "connect-dots",
                tail_mass_truncation: float = DEFAULT_TAIL_MASS_TRUNCATION) -> PLD:
        """Laplace mechanism Lap(0, b) with ℓ₁ sensitivity Δ; losses lie in [−Δ/b, Δ/b].

        Parameters
        ----------
        scale : float
            Laplace scale b > 0.
        sensitivity : float
            ℓ₁ sensitivity Δ > 0.
        value_discretization_interval, discretization, tail_mass_truncation
            As for :meth:`gaussian`.

        Returns
        -------
        PLD
        """
        b = positive("scale", scale)
        a = validate_sensitivity(sensitivity) / b
        tail = _tail(tail_mass_truncation)
        pmf = _from_cdfs(_laplace_cdfs(a), -a, a, value_discretization_interval,
                         discretization)
        return cls(pmf, None, tail)

    @classmethod
    def discrete_laplace(cls, scale: float, sensitivity: int = 1, *,
                         value_discretization_interval: float =
                         DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
                         discretization: str = "connect-dots",
                         tail_mass_truncation: float = DEFAULT_TAIL_MASS_TRUNCATION) -> PLD:
        """Discrete Laplace noise P(k) ∝ e^{−|k|/t} on integer queries of sensitivity Δ.

        With r = e^{−1/t}: loss Δ/t with mass 1/(1 + r), −Δ/t with mass r^Δ/(1 + r), and
        (Δ − 2x)/t with mass tanh(1/(2t)) r^x for 0 < x < Δ — a finite PLD.

        Parameters
        ----------
        scale : float
            t > 0, as in :func:`dpstudio.engine.sampling.discrete_laplace`.
        sensitivity : int
            Integer Δ ≥ 1.

        Returns
        -------
        PLD
        """
        t = positive("scale", scale)
        if isinstance(sensitivity, bool) or int(sensitivity) != sensitivity or sensitivity < 1:
            raise ParameterError(f"sensitivity must be an integer ≥ 1, got {sensitivity!r}")
        sens = int(sensitivity)
        log_r = -1.0 / t
        log1pr = float(np.logaddexp(0.0, log_r))
        x = np.arange(1, sens, dtype=np.float64)
        losses = np.concatenate([[sens / t, -sens / t], (sens - 2 * x) / t])
        log_m = np.concatenate([[-log1pr, sens * log_r - log1pr],
                                math.log(math.tanh(0.5 / t)) + x * log_r])
        pmf = _pmf_from_atoms(_interval(value_discretization_interval), losses,
                              np.exp(log_m), 0.0, _discretization(discretization))
        return cls(pmf, None, _tail(tail_mass_truncation))

    @classmethod
    def randomized_response(cls, epsilon: float, k: int = 2, *,
                            value_discretization_interval: float =
                            DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
                            discretization: str = "connect-dots",
                            tail_mass_truncation: float = DEFAULT_TAIL_MASS_TRUNCATION) -> PLD:
        """K-ary randomized response: the true value w.p. e^ε/(e^ε + K − 1), each other value
        w.p. 1/(e^ε + K − 1). Neighbours change one person's value a → b: losses ε (output
        a), −ε (output b) and 0 (the K − 2 others).

        Parameters
        ----------
        epsilon : float
            ε > 0.
        k : int
            Number of values K ≥ 2.

        Returns
        -------
        PLD
        """
        eps = validate_epsilon(epsilon)
        if isinstance(k, bool) or int(k) != k or k < 2:
            raise ParameterError(f"randomized response needs k ≥ 2 values, got {k!r}")
        kk = int(k)
        log_den = float(np.logaddexp(eps, math.log(kk - 1)))
        losses = np.array([eps, -eps, 0.0])
        masses = np.exp(np.array([eps - log_den, -log_den, math.log(kk - 2) - log_den
                                  if kk > 2 else -np.inf]))
        pmf = _pmf_from_atoms(_interval(value_discretization_interval), losses, masses, 0.0,
                              _discretization(discretization))
        return cls(pmf, None, _tail(tail_mass_truncation))

    @classmethod
    def from_distributions(cls, p, q, *, both_directions: bool = True,
                           value_discretization_interval: float =
                           DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
                           discretization: str = "connect-dots",
                           tail_mass_truncation: float = DEFAULT_TAIL_MASS_TRUNCATION) -> PLD:
        """PLD of two output distributions on the same finite set of outputs.

        Losses ln(p/q) are computed exactly per output and discretized pessimistically;
        outputs with q = 0 < p carry loss +∞.

        Parameters
        ----------
        p, q : array_like
            Probability vectors (nonnegative, each summing to 1 within 1e-9): the outputs'
            laws on two neighbouring datasets.
        both_directions : bool
            Account the pair (p, q) as "remove" and (q, p) as "add" and report the worse
            (default: neighbouring is symmetric). False accounts (p, q) only.

        Returns
        -------
        PLD
        """
        pa, qa = (np.asarray(v, dtype=np.float64).reshape(-1) for v in (p, q))
        if pa.size != qa.size or pa.size == 0:
            raise ParameterError("p and q must be nonempty and of the same length")
        for name, v in (("p", pa), ("q", qa)):
            # np.sum is pairwise (error ~1e-16·log n), far inside the 1e-9 allowed, and a
            # million times faster than math.fsum on the millions of outputs of a wide
            # discrete Gaussian.
            if not np.all(np.isfinite(v)) or (v < 0).any() or abs(float(np.sum(v)) - 1) > 1e-9:
                raise ParameterError(f"{name} must be a probability vector (≥ 0, sum 1)")
        h = _interval(value_discretization_interval)
        disc = _discretization(discretization)
        tail = _tail(tail_mass_truncation)

        def one_way(a: np.ndarray, b: np.ndarray) -> _Pmf:
            finite = (a > 0) & (b > 0)
            losses = np.log(a[finite]) - np.log(b[finite])
            inf_mass = math.fsum(a[(a > 0) & (b == 0)])
            return _pmf_from_atoms(h, losses, a[finite], inf_mass, disc)

        remove = one_way(pa, qa)
        return cls(remove, one_way(qa, pa) if both_directions else None, tail)

    @classmethod
    def from_epsilon_delta(cls, epsilon: float, delta: float = 0.0, *,
                           value_discretization_interval: float =
                           DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
                           discretization: str = "connect-dots",
                           tail_mass_truncation: float = DEFAULT_TAIL_MASS_TRUNCATION) -> PLD:
        """The worst (ε, δ)-DP pair (Kairouz, Oh & Viswanath 2015): loss +∞ w.p. δ, ε w.p.
        (1 − δ)e^ε/(1 + e^ε), −ε w.p. (1 − δ)/(1 + e^ε). Composing k of these gives the
        optimal composition bound for k (ε, δ)-DP mechanisms.

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.
        delta : float
            δ in [0, 1).

        Returns
        -------
        PLD
        """
        eps = non_negative("ε", epsilon)
        d = validate_delta(delta)
        log1pe = float(np.logaddexp(0.0, eps))
        masses = (1 - d) * np.exp(np.array([eps - log1pe, -log1pe]))
        pmf = _pmf_from_atoms(_interval(value_discretization_interval),
                              np.array([eps, -eps]), masses, d,
                              _discretization(discretization))
        return cls(pmf, None, _tail(tail_mass_truncation))

    @classmethod
    def subsampled_gaussian(cls, sigma: float, sample_rate: float, sensitivity: float = 1.0,
                            relation: str = "add-remove", *,
                            value_discretization_interval: float =
                            DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
                            discretization: str = "connect-dots",
                            tail_mass_truncation: float = DEFAULT_TAIL_MASS_TRUNCATION) -> PLD:
        """Gaussian mechanism on a Poisson sample (each record kept w.p. q), e.g. one DP-SGD
        step with noise multiplier σ/Δ.

        Under add/remove both directions are kept: "remove", P = (1 − q)N(0, σ²) + qN(Δ, σ²)
        vs Q = N(0, σ²), and "add", the reverse pair; their losses differ.

        Parameters
        ----------
        sigma : float
            Noise standard deviation, > 0.
        sample_rate : float
            Poisson sampling probability q in (0, 1].
        sensitivity : float
            ℓ₂ norm bound Δ of one record's contribution.
        relation : {"add-remove"}
            Neighbouring relation (add or remove one record).

        Returns
        -------
        PLD
        """
        sigma = positive("σ", sigma)
        q = sample_rate_checked(sample_rate)
        sens = validate_sensitivity(sensitivity)
        if relation != "add-remove":
            raise ParameterError(
                f"the subsampled Gaussian is accounted under relation 'add-remove' only, "
                f"got {relation!r}")
        tail = _tail(tail_mass_truncation)
        if q == 1.0:
            return cls.gaussian(sigma, sens, value_discretization_interval=
                                value_discretization_interval, discretization=discretization,
                                tail_mass_truncation=tail)
        z = float(-ndtri(tail))
        # P-mass outside x ∈ [−σz, Δ + σz] (remove) or [−σz, σz] (add) is below the tail
        # bound; L is monotone in x, so these x give the loss range to grid.
        rem_lo = _remove_loss(-sigma * z, sigma, q, sens)
        rem_hi = _remove_loss(sens + sigma * z, sigma, q, sens)
        remove = _from_cdfs(_subsampled_gaussian_cdfs(sigma, q, sens, "remove"),
                            rem_lo, rem_hi, value_discretization_interval, discretization)
        add_lo = -_remove_loss(sigma * z, sigma, q, sens)
        add_hi = -_remove_loss(-sigma * z, sigma, q, sens)
        add = _from_cdfs(_subsampled_gaussian_cdfs(sigma, q, sens, "add"),
                         add_lo, add_hi, value_discretization_interval, discretization)
        return cls(remove, add, tail)

