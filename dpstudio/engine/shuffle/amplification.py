"""Privacy amplification by shuffling: the central (ε, δ) of n shuffled ε₀-LDP reports.

Two bounds, for n users who each apply an ε₀-LDP randomizer (any randomizer, possibly
chosen adaptively) before a trusted shuffler permutes the n reports:

``"fmt21"`` — the numerical bound of Feldman, McMillan & Talwar (FOCS 2021, "Hiding Among
    the Clones"), Theorem 3.2 and its "empirical" algorithm. Their reduction: the shuffled
    outputs on neighbouring datasets are (ε, δ)-indistinguishable whenever the two
    distributions

        P = (A + Δ,     C − A + 1 − Δ)        Q = (A + 1 − Δ, C − A + Δ)

    are, where C ~ Bin(n − 1, e^{−ε₀}) counts the "clones" of the differing user,
    A ~ Bin(C, ½) and Δ ~ Bern(e^{ε₀}/(e^{ε₀} + 1)). C is observable (the two coordinates
    add up to C + 1), so δ(ε) = Σ_c P[C = c] · D_{e^ε}(P_c ‖ Q_c) exactly, with P_c and Q_c
    the laws of the first coordinate given C = c (the two directions are equal by the
    symmetry a ↦ c + 1 − a). The likelihood ratio P_c(a)/Q_c(a) decreases in a, so each
    hockey-stick divergence is a difference of two binomial CDFs at one cut-off; every c
    in a window holding all but 10⁻⁴·δ of C's mass is evaluated at once (vectorized), and
    the mass outside the window is added to δ in full. Where their code bisects on ε
    with a truncated, step-wise sum, we bisect on this complete sum and return the
    **upper** end of the final bracket (an ε that is certainly enough), and we add an
    allowance for floating-point error to δ(ε) before comparing with the target. The
    result is never above ε₀ (shuffling cannot hurt) and is valid for every n ≥ 2,
    ε₀ > 0 and δ ≥ 10⁻¹² (below that δ is under this computation's rounding error).

``"ebh19"`` — the closed form of Erlingsson, Feldman, Mironov, Raghunathan, Talwar &
    Thakurta (SODA 2019, "Amplification by Shuffling"), for any ε₀-LDP randomizer:

        ε = 12 · ε₀ · √(ln(1/δ) / n),

    valid only for ε₀ < 1/2, n ≥ 1000 and δ < 1/100 (outside, :class:`ParameterError`
    says which condition fails). Kept for comparison: it is what the 2019 papers gave in
    closed form. (Balle, Bell, Gascón & Nissim 2019's closed form for k-ary randomized
    response is the one the privacy-blanket summation protocol uses, see
    :mod:`dpstudio.engine.shuffle.blanket`; their bound for general ε₀-LDP randomizers
    is stated only up to constants, so it is not offered here.)

The inverse, :func:`largest_local_epsilon`, finds by bisection the largest ε₀ whose
amplified ε meets a target, returning the side of the bracket that satisfies it; the
search itself, :func:`largest_meeting`, is shared with the shuffled local randomizers
(:func:`~dpstudio.engine.shuffle.shuffled_local.shuffled_local_epsilon`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpstudio.engine import special
from dpstudio.engine.checks import number, positive
from dpstudio.engine.errors import ParameterError

__all__ = [
    "BOUNDS",
    "AmplificationResult",
    "amplify",
    "fmt21_delta",
    "largest_local_epsilon",
    "largest_meeting",
    "shuffle_epsilon",
]

BOUNDS = ("fmt21", "ebh19")

# δ below this is under the floating-point error of the FMT21 sum (about 1e-14 absolute).
_MIN_DELTA_FMT21 = 1e-12
# Absolute allowance added to the computed δ(ε) for rounding in the binomial CDFs and the
# sum over c (each term is below 1 and carries a relative error of a few 1e-16).
_FP_SLACK = 1e-14
# Mass of C ~ Bin(n-1, e^-ε₀) left outside the evaluated window, relative to the target
# δ (that mass is added to δ in full, so the bound overstates δ by at most 0.01%).
_WINDOW_TAIL = 1e-4
# Bisection: stop when the bracket on ε is this narrow (relative) — well below any
# difference a user would notice; the upper end is returned.
_REL_TOL = 1e-9
_MAX_N = 10**9


@dataclass(frozen=True)
class AmplificationResult:
    """The central guarantee (ε, δ) of n shuffled ε₀-LDP reports, and how it was obtained.

    Attributes
    ----------
    epsilon, delta : float
        The central guarantee.
    epsilon0 : float
        Each user's local ε₀.
    n : int
        The number of users shuffled together.
    bound : str
        The bound that gave ε (one of :data:`BOUNDS`).
    """

    epsilon: float
    delta: float
    epsilon0: float
    n: int
    bound: str

    def to_dict(self) -> dict:
        """The fields as JSON (what ``dpstudio amplify --json`` prints).

        Returns
        -------
        dict
            ``epsilon``, ``delta``, ``epsilon0``, ``n``, ``bound``.
        """
        return {"epsilon": self.epsilon, "delta": self.delta, "epsilon0": self.epsilon0,
                "n": self.n, "bound": self.bound}


# ------------------------------------------------------------------------------ checks


def _check(epsilon0: float, n: int, delta: float, bound: str) -> tuple[float, int, float]:
    """(ε₀, n, δ) as (float, int, float), each checked; ParameterError names the first bad one."""
    eps0 = positive("ε₀", epsilon0)
    if isinstance(n, bool):
        raise ParameterError(f"n must be a whole number of users ≥ 2, got {n!r}")
    try:
        nn = int(n)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"n must be a whole number of users ≥ 2, got {n!r}") from None
    if nn != n:
        raise ParameterError(f"n must be a whole number of users ≥ 2, got {n!r}")
    # One user has no one to hide among: said as the model's condition, before the range.
    if nn < 2:
        raise ParameterError(f"shuffling needs at least n = 2 users, got n = {nn}")
    number("n", nn, low=2, high=_MAX_N, what="a whole number of users")
    d = number("δ", delta, low=0.0, low_open=True, high=1.0, high_open=True)
    if bound not in BOUNDS:
        raise ParameterError(f"bound must be one of {', '.join(BOUNDS)}; got {bound!r}")
    return eps0, nn, d


def _ebh19_validity(eps0: float, n: int, delta: float) -> None:
    if eps0 >= 0.5:
        raise ParameterError(
            f"the ebh19 bound (Erlingsson et al. 2019) holds only for ε₀ < 1/2, got ε₀ = "
            f"{eps0:g}; use the fmt21 bound")
    if n < 1000:
        raise ParameterError(
            f"the ebh19 bound (Erlingsson et al. 2019) holds only for n ≥ 1000 users, got "
            f"n = {n}; use the fmt21 bound")
    if delta >= 0.01:
        raise ParameterError(
            f"the ebh19 bound (Erlingsson et al. 2019) holds only for δ < 1/100, got δ = "
            f"{delta:g}; use the fmt21 bound")


# ------------------------------------------------------------------------------- FMT21


@functools.lru_cache(maxsize=64)
def _clone_window(n: int, eps0: float, tail: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Values c of C ~ Bin(n−1, e^{−ε₀}) holding all but about ``tail`` of its mass, their
    pmf, and the mass outside (which the caller adds to δ in full)."""
    from scipy import stats  # imported here: scipy.stats costs ~1 s at start-up

    p = math.exp(-eps0)
    dist = stats.binom(n - 1, p)
    lo, hi = dist.ppf(tail / 2), dist.isf(tail / 2)
    lo = int(lo) if math.isfinite(lo) else 0
    hi = int(hi) if math.isfinite(hi) else n - 1
    lo, hi = max(lo - 1, 0), min(hi + 1, n - 1)
    c = np.arange(lo, hi + 1, dtype=np.int64)
    pmf = dist.pmf(c)
    outside = float(dist.cdf(lo - 1) + dist.sf(hi)) if (lo > 0 or hi < n - 1) else 0.0
    c.setflags(write=False)
    pmf.setflags(write=False)
    return c, pmf, outside


def _binom_half_cdf(k: np.ndarray, c: np.ndarray) -> np.ndarray:
    """P(Bin(c, ½) ≤ k) for integer arrays (0 below the support, 1 above it)."""
    inside = (k >= 0) & (k < c)
    out = np.where(k >= c, 1.0, 0.0)
    if np.any(inside):
        out[inside] = special.bdtr(k[inside], c[inside], 0.5)
    return out


def fmt21_delta(epsilon: float, epsilon0: float, n: int, resolution: float = 1e-16) -> float:
    """δ(ε) of FMT21's reduction for n shuffled ε₀-LDP reports: an upper bound.

    Exact sum over the clone count on a window that leaves out about
    ``resolution``·1e-4 of its mass (callers comparing with a target δ pass that δ); the
    mass left out and a floating-point allowance of 1e-14 are added. The arguments are
    not checked (:func:`shuffle_epsilon` checks them).

    Parameters
    ----------
    epsilon : float
        The central ε at which δ is wanted, ≥ 0.
    epsilon0 : float
        Each user's local ε₀ > 0.
    n : int
        The number of users, ≥ 2.
    resolution : float
        The δ scale that matters to the caller: the window's left-out mass is about
        ``resolution``·1e-4.

    Returns
    -------
    float
        δ(ε) in [0, 1]; 0 when ε ≥ ε₀ (shuffling is post-processing).
    """
    eps0, nn = float(epsilon0), int(n)
    eps = float(epsilon)
    if eps >= eps0:
        return 0.0  # the shuffled output is a post-processing of ε₀-DP reports
    tail = max(_WINDOW_TAIL * float(resolution), 1e-300)
    c, pmf, outside = _clone_window(nn, eps0, tail)
    # α = e^{ε₀}/(e^{ε₀}+1) and 1 − α, computed without cancellation.
    alpha, beta = special.expit(eps0), special.expit(-eps0)
    e_eps = math.exp(eps)
    a1 = alpha - e_eps * beta  # > 0 since ε < ε₀
    a2 = e_eps * alpha - beta  # > 0 since ε ≥ 0
    # P_c(a) > e^ε Q_c(a)  ⇔  (c + 1 − a)/a > R := a2/a1  ⇔  a < (c + 1)/(1 + R).
    cut = (c + 1.0) * (a1 / (a1 + a2))
    t = (np.ceil(cut) - 1.0).astype(np.int64)  # largest integer strictly below the cut
    # P_c(A ≤ t) − e^ε Q_c(A ≤ t) = a1·B_c(t) − a2·B_c(t − 1), B_c the Bin(c, ½) CDF.
    b_t = _binom_half_cdf(t, c)
    b_tm = _binom_half_cdf(t - 1, c)
    div = np.maximum(a1 * b_t - a2 * b_tm, 0.0)
    return float(min(1.0, np.dot(pmf, div) + outside + _FP_SLACK))


def _fmt21_epsilon(eps0: float, n: int, delta: float) -> float:
    if fmt21_delta(0.0, eps0, n, delta) <= delta:
        return 0.0
    lo, hi = 0.0, eps0  # δ(lo) > target ≥ δ(hi) = 0
    while hi - lo > _REL_TOL * hi:
        mid = 0.5 * (lo + hi)
        if fmt21_delta(mid, eps0, n, delta) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def _ebh19_epsilon(eps0: float, n: int, delta: float) -> float:
    _ebh19_validity(eps0, n, delta)
    return 12.0 * eps0 * math.sqrt(math.log(1.0 / delta) / n)


# ----------------------------------------------------------------------------- the API


def shuffle_epsilon(epsilon0: float, n: int, delta: float, bound: str = "fmt21"
                    ) -> tuple[float, float]:
    """Central (ε, δ) of n shuffled ε₀-LDP reports under ``bound`` (see the module doc).

    Parameters
    ----------
    epsilon0 : float
        Each user's local ε₀ > 0.
    n : int
        The number of users shuffled together, 2 ≤ n ≤ 10⁹.
    delta : float
        The central δ, in (0, 1).
    bound : str
        ``"fmt21"`` (numerical, the tightest) or ``"ebh19"`` (closed form).

    Returns
    -------
    tuple of float
        (ε, δ): the central guarantee, ε ≤ ε₀.

    Raises
    ------
    ParameterError
        For ε₀ ≤ 0, n < 2, δ ∉ (0, 1), an unknown bound, or parameters outside the
        bound's validity (ebh19: ε₀ < 1/2, n ≥ 1000, δ < 1/100; fmt21: δ ≥ 1e-12).
    """
    eps0, nn, d = _check(epsilon0, n, delta, bound)
    if bound == "ebh19":
        return _ebh19_epsilon(eps0, nn, d), d
    if d < _MIN_DELTA_FMT21:
        raise ParameterError(
            f"the fmt21 computation needs δ ≥ {_MIN_DELTA_FMT21:g} (smaller δ is below its "
            f"floating-point accuracy), got δ = {d:g}")
    return _fmt21_epsilon(eps0, nn, d), d


def amplify(epsilon0: float, n: int, delta: float, bound: str = "fmt21"
            ) -> AmplificationResult:
    """:func:`shuffle_epsilon` as a result object (what ``dpstudio amplify`` prints).

    Parameters
    ----------
    epsilon0, n, delta, bound
        As for :func:`shuffle_epsilon`.

    Returns
    -------
    AmplificationResult

    Raises
    ------
    ParameterError
        As :func:`shuffle_epsilon`.
    """
    eps, d = shuffle_epsilon(epsilon0, n, delta, bound)
    return AmplificationResult(eps, d, float(epsilon0), int(n), bound)


def largest_local_epsilon(target_epsilon: float, n: int, delta: float, bound: str = "fmt21"
                          ) -> float:
    """Largest ε₀ whose shuffled guarantee under ``bound`` is at most ``target_epsilon``.

    Bisection on ε₀ (the bounds grow with ε₀); the lower end of the final bracket is
    returned, and it is checked to meet the target. ebh19 is closed-form: ε₀ =
    target/(12√(ln(1/δ)/n)), capped just below its validity limit ε₀ < 1/2.

    Parameters
    ----------
    target_epsilon : float
        The central ε wanted, > 0.
    n, delta, bound
        As for :func:`shuffle_epsilon`.

    Returns
    -------
    float
        The largest ε₀ found whose shuffled ε is at most the target.

    Raises
    ------
    ParameterError
        For a target ≤ 0, the arguments :func:`shuffle_epsilon` refuses, or (ebh19) a
        target that needs ε₀ outside the bound's validity.
    """
    target = positive("target ε", target_epsilon)
    _, nn, d = _check(1.0, n, delta, bound)
    if bound == "ebh19":
        eps0 = target / (12.0 * math.sqrt(math.log(1.0 / d) / nn))
        eps0 = min(eps0, math.nextafter(0.5, 0.0))
        _ebh19_validity(eps0, nn, d)
        while _ebh19_epsilon(eps0, nn, d) > target:  # rounding in the division
            eps0 = math.nextafter(eps0, 0.0)
        return eps0
    # ε(ε₀) ≤ ε₀, so ε₀ = target always qualifies. Past ε₀ = 745, e^{-ε₀} underflows:
    # no amplification is left to find.
    return largest_meeting(lambda eps0: shuffle_epsilon(eps0, nn, d, bound)[0] <= target,
                           target, _REL_TOL, 745.0)


def largest_meeting(meets: Callable[[float], bool], start: float, rel_tol: float,
                    cap: float) -> float:
    """The largest ε₀ found with ``meets(ε₀)``, for a condition that holds up to some ε₀
    and fails above it (a local ε whose amplified guarantee meets a target).

    The bracket grows by doubling from ``start`` (which must meet the condition) and is
    capped at ``cap`` (tested, then kept if it meets), then bisected until it is
    ``rel_tol`` wide (relative); the lower end is returned, so the answer always meets
    the condition: the pessimistic side for a guarantee.

    Parameters
    ----------
    meets : callable
        ε₀ ↦ whether ε₀ meets the target; monotone (true, then false).
    start : float
        An ε₀ > 0 known to meet it.
    rel_tol : float
        Relative width of the final bracket.
    cap : float
        The largest ε₀ searched.

    Returns
    -------
    float
        An ε₀ ≥ ``start`` that meets the condition, within ``rel_tol`` (relative) of the
        largest that does (or ``cap``).
    """
    lo, hi = start, 2.0 * start
    while meets(hi):
        lo, hi = hi, 2.0 * hi
        if hi > cap:
            hi = cap
            if meets(hi):
                lo = hi
            break
    while hi - lo > rel_tol * hi:
        mid = 0.5 * (lo + hi)
        if meets(mid):
            lo = mid
        else:
            hi = mid
    return lo
