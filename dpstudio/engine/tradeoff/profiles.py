"""Privacy profiles and trade-off curves, both ways: the pessimistic curve of a profile
ε ↦ δ(ε) (DRS Prop. 2.12), the profile of a curve (its convex conjugate), and the smallest ε
at a given δ of a Gaussian-DP curve (closed form) or of any curve (its knots). The theory is
in :mod:`dpstudio.engine.tradeoff`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpstudio.engine.calibration import analytic_gaussian_delta, validate_delta
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.tradeoff.curves import TradeoffCurve, _check_alpha, _check_mu

__all__ = ["gaussian_epsilon", "knots_epsilon", "profile_to_tradeoff", "tradeoff_to_profile"]

# Cap on the elements of one (ε grid × α chunk) block when evaluating envelopes of lines.
_BLOCK = 1 << 21


def _lines_envelope(eps: np.ndarray, delta: np.ndarray, a: np.ndarray,
                    mirrored: bool) -> np.ndarray:
    """max(0, max_i 1 − δ_i − e^{ε_i} α [, max_i e^{−ε_i}(1 − δ_i − α)]) at each α, ≤ 1.

    Products are formed in log space, so that no ε (however large or negative) meets a
    0·∞: e^ε α is 0 at α = 0 and +∞ past overflow, which only lowers a line (never NaN).
    """
    out = np.zeros_like(a)
    step = max(1, _BLOCK // max(eps.size, 1))
    e = eps[:, None]
    one = (1.0 - delta)[:, None]
    with np.errstate(divide="ignore", over="ignore"):
        for s in range(0, a.size, step):
            x = a[None, s:s + step]
            best = np.max(one - np.exp(np.log(x) + e), axis=0)
            if mirrored:
                room = np.log(np.maximum(one - x, 0.0))  # −∞ where the line is ≤ 0
                best = np.maximum(best, np.max(np.exp(room - e), axis=0))
            out[s:s + step] = np.clip(best, 0.0, 1.0)
    return out


def _default_eps_grid(delta_of_eps: Callable[[np.ndarray], np.ndarray],
                      size: int = 2001) -> np.ndarray:
    """Uniform grid of ε from 0 to the first power of two where δ(ε) ≤ 1e-15 (≤ 256)."""
    top = 1.0
    while top < 256.0 and float(np.max(delta_of_eps(np.array([top])))) > 1e-15:
        top *= 2.0
    return np.linspace(0.0, top, size)


def profile_to_tradeoff(delta_of_eps: Callable[[np.ndarray], np.ndarray], alpha=None,
                        eps_grid=None, *, symmetric: bool = True,
                        label: str = "from privacy profile") -> TradeoffCurve:
    """Pessimistic trade-off curve from a privacy profile ε ↦ δ(ε) (DRS Prop. 2.12).

    A mechanism that is (ε, δ(ε))-DP for every ε is f-DP with f = sup_ε f_{ε,δ(ε)}, and
    this is tight: the supremum over all ε recovers the mechanism's own (symmetrized)
    curve. Over a *finite* grid of ε the supremum is over fewer lines, hence pointwise
    lower: a valid, pessimistic curve, which the mechanism's true curve lies above.

    Each ε contributes the line 1 − δ(ε) − e^ε α (from P(S|D′) ≤ e^ε P(S|D) + δ) and,
    when ``symmetric``, the mirrored line e^{−ε}(1 − δ(ε) − α) (the same inequality with
    D and D′ swapped). The mirrored line at ε is the direct line at −ε: a one-directional
    profile satisfies δ(−ε) = 1 − e^{−ε} + e^{−ε} δ_swapped(ε), so for a mechanism
    symmetric in D ↔ D′ a grid of ε ≥ 0 with mirrored lines is the same as a grid of ±ε.
    With ``symmetric=False`` only direct lines are used: pass a grid that includes
    negative ε and a ``delta_of_eps`` defined there (one ordered pair D, D′).

    Parameters
    ----------
    delta_of_eps : callable
        Vectorized privacy profile; must *upper*-bound the hockey-stick divergence (e.g.
        ``PLD.delta``, pessimistic) for the result to be valid.
    alpha : array_like, optional
        Type I errors (default :func:`alpha_grid`).
    eps_grid : array_like, optional
        The ε of the lines. Default: 2001 points uniform on [0, E] with E the first power
        of two where δ(E) ≤ 1e-15 (at most 256).
    symmetric : bool
        Add the mirrored line of each ε (above).
    label : str
        The curve's label.

    Returns
    -------
    TradeoffCurve
        ``exact`` False; its evaluator is the envelope itself.

    Raises
    ------
    ParameterError
        For a bad ``alpha``, an empty or non-finite ``eps_grid``, or a profile returning
        NaN.
    """
    a = _check_alpha(alpha)
    eps = (_default_eps_grid(delta_of_eps) if eps_grid is None
           else np.atleast_1d(np.asarray(eps_grid, dtype=np.float64)))
    if eps.ndim != 1 or eps.size == 0 or not np.all(np.isfinite(eps)):
        raise ParameterError("eps_grid must be a non-empty 1-D array of finite numbers")
    delta = np.asarray(delta_of_eps(eps), dtype=np.float64).reshape(eps.shape)
    if np.any(np.isnan(delta)):
        raise ParameterError("the privacy profile returned NaN")
    delta = np.clip(delta, 0.0, 1.0)

    def envelope(x: np.ndarray) -> np.ndarray:
        return _lines_envelope(eps, delta, x, symmetric)

    return TradeoffCurve(
        a, envelope(a), label, False,
        f"lower envelope of the (ε, δ(ε)) bounds over {eps.size} values of ε in "
        f"[{eps.min():g}, {eps.max():g}] (Dong, Roth & Su 2019, Prop. 2.12): pessimistic",
        evaluator=envelope,
    )


def tradeoff_to_profile(curve: TradeoffCurve, eps) -> np.ndarray:
    """Privacy profile δ(ε) = max_α (1 − e^ε α − f(α)) of a curve (DRS Prop. 2.12).

    The convex conjugate of f: the smallest δ with f ≥ 1 − δ − e^ε α. It is the hockey-stick
    divergence of the ordered pair (D, D′) the curve describes; for a symmetric curve it is
    the (ε, δ)-DP profile, otherwise take the larger of the curve's and its inverse's.
    The maximum runs over the curve's knots when it has them (exact for piecewise-linear
    curves) and over its grid otherwise, which for a smooth f gives a value at most
    (h/2)(f′(α₊) − f′(α₋)) *below* the true δ, h the grid step around the maximizer and
    f′(α±) the slopes at its ends: use a fine grid there, or a closed form.

    Parameters
    ----------
    curve : TradeoffCurve
        The trade-off curve.
    eps : array_like of float
        Finite ε (any shape; negative ε allowed).

    Returns
    -------
    numpy.ndarray of float64, shape of ``eps``
        δ(ε) in [0, 1].

    Raises
    ------
    ParameterError
        For a non-finite ε.
    """
    e = np.asarray(eps, dtype=np.float64)
    if not np.all(np.isfinite(e)):
        raise ParameterError("ε must be finite")
    ka, kb = curve.knots if curve.knots is not None else (curve.alpha, curve.beta)
    flat = e.ravel()
    out = np.empty_like(flat)
    step = max(1, _BLOCK // ka.size)
    for s in range(0, flat.size, step):
        with np.errstate(divide="ignore", over="ignore"):
            scaled = np.exp(np.log(ka)[None, :] + flat[s:s + step, None])  # e^ε α, 0 at α=0
        out[s:s + step] = np.max(1.0 - scaled - kb[None, :], axis=1)
    return np.clip(out, 0.0, 1.0).reshape(e.shape)


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 (to 1e-12 relative) at which G_μ is (ε, δ)-DP.

    Inverts δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (DRS Cor. 2.13, the Balle & Wang 2018
    profile with Δ/σ = μ) by bisection, returning the upper end of the bracket, whose δ is
    at most the one asked for.

    Parameters
    ----------
    mu : float
        μ ≥ 0.
    delta : float
        Target δ, in (0, 1).

    Returns
    -------
    float
        ε ≥ 0 (0 when G_μ is already (0, δ)-DP).

    Raises
    ------
    ParameterError
        For a bad μ or δ.
    """
    m = _check_mu(mu)
    d = validate_delta(delta, required=True)

    def prof(e: float) -> float:
        return analytic_gaussian_delta(1.0, m, e) if m > 0 else 0.0

    if prof(0.0) <= d:
        return 0.0
    lo, hi = 0.0, 1.0
    while prof(hi) > d:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if prof(mid) <= d else (mid, hi)
    return hi


def knots_epsilon(curve: TradeoffCurve, delta: float) -> float:
    """Smallest ε ≥ 0 (to 1e-9 relative, the upper end) with the curve above f_{ε,δ}.

    Uses the curve's knots (exact for piecewise-linear curves) or its grid, and the
    profile of the curve and of its inverse (the larger), so it holds for either order of
    the neighbours.

    Parameters
    ----------
    curve : TradeoffCurve
        The curve.
    delta : float
        δ in [0, 1).

    Returns
    -------
    float
        ε (inf when no finite ε reaches δ).
    """
    ka, kb = curve.knots if curve.knots is not None else (curve.alpha, curve.beta)
    inverse = TradeoffCurve(kb[::-1].copy(), ka[::-1].copy(), "", True,
                            knots=(kb[::-1].copy(), ka[::-1].copy()))
    ordered = np.argsort(inverse.alpha, kind="stable")
    inverse = TradeoffCurve(inverse.alpha[ordered], inverse.beta[ordered], "", True,
                            knots=(inverse.alpha[ordered], inverse.beta[ordered]))

    def prof(e: float) -> float:
        return max(float(tradeoff_to_profile(c, e)) for c in (curve, inverse))

    if prof(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while prof(hi) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            return math.inf
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if prof(mid) <= delta else (mid, hi)
    return hi
