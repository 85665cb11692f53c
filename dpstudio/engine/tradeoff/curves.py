"""Trade-off curves of single mechanisms: the :class:`TradeoffCurve` type, the grid of type I
errors, closed forms (Gaussian, Laplace, the (ε, δ) bound) and exact curves of mechanisms with
finitely many outputs (Neyman–Pearson on two pmfs; randomized response, K-RR, discrete
Laplace). The theory and references are in :mod:`dpstudio.engine.tradeoff`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.calibration import validate_delta, validate_epsilon, validate_sensitivity
from dpstudio.engine.checks import non_negative, number, positive
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.special import ndtr, ndtri

__all__ = [
    "TradeoffCurve",
    "alpha_grid",
    "discrete_laplace_tradeoff",
    "discrete_tradeoff",
    "epsilon_delta_tradeoff",
    "gaussian_tradeoff",
    "krr_tradeoff",
    "laplace_tradeoff",
    "neyman_pearson_knots",
    "randomized_response_tradeoff",
]

# Largest support of an exactly composed lattice pmf: np.convolve is direct (no FFT, so
# tiny probabilities keep their relative accuracy), and its cost grows with the square.
_MAX_LATTICE = 20_001


# ------------------------------------------------------------------------------ the type


@dataclass(frozen=True, eq=False)
class TradeoffCurve:
    """A trade-off function β = f(α) on a grid of type I errors.

    Attributes
    ----------
    alpha, beta : numpy.ndarray
        Type I errors (as given, usually :func:`alpha_grid`) and f at them (read-only).
    label : str
        Human description, e.g. ``"Gaussian, μ = 1"``.
    exact : bool
        True when ``beta`` is f itself (up to floating-point rounding); False when it is a
        pessimistic (lower) approximation, e.g. an envelope over a finite grid of ε.
    note : str
        How the curve was computed and what the approximation is, for the user to read.
    knots : tuple of numpy.ndarray or None
        Exact breakpoints (α increasing, β decreasing) of a piecewise-linear curve; the
        curve is the linear interpolation between them.
    evaluator : callable or None
        f itself as a function of an α array, when cheaper than interpolation and exact
        (closed forms) or at least as pessimistic as ``beta`` (envelopes of lines).
    """

    alpha: np.ndarray
    beta: np.ndarray
    label: str
    exact: bool
    note: str = ""
    knots: tuple[np.ndarray, np.ndarray] | None = None
    evaluator: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            a = np.array(getattr(self, name), dtype=np.float64)
            a.flags.writeable = False
            object.__setattr__(self, name, a)
        if self.alpha.shape != self.beta.shape or self.alpha.ndim != 1:
            raise ParameterError("a trade-off curve needs 1-D alpha and beta of equal length")

    def at(self, alpha) -> np.ndarray:
        """f at arbitrary type I errors.

        Exact for closed forms and piecewise-linear curves. Otherwise the linear
        interpolation of the grid, which lies *above* a convex f between grid points
        (slightly optimistic); pass a denser grid when that matters.

        Parameters
        ----------
        alpha : array_like
            Type I errors in [0, 1].

        Returns
        -------
        numpy.ndarray
            β = f(α), in [0, 1].

        Raises
        ------
        ParameterError
            For type I errors outside [0, 1] or an empty ``alpha``.
        """
        a = _check_alpha(alpha)
        if self.evaluator is not None:
            return np.clip(self.evaluator(a), 0.0, 1.0)
        if self.knots is not None:
            return np.interp(a, *self.knots)
        order = np.argsort(self.alpha, kind="stable")
        return np.interp(a, self.alpha[order], self.beta[order])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary.

        Returns
        -------
        dict
            ``alpha`` and ``beta`` (lists), ``label``, ``exact``, ``note``.
        """
        return {"alpha": self.alpha.tolist(), "beta": self.beta.tolist(),
                "label": self.label, "exact": self.exact, "note": self.note}


def alpha_grid(points: int = 200) -> np.ndarray:
    """``points`` type I errors from 0 to 1 inclusive, denser near 0 where curves are steep.

    Cubic spacing α_i = (i/(n−1))³: half of the points lie below α = 1/8, the first step
    is (n−1)⁻³, and the last one 3/(n−1).

    Parameters
    ----------
    points : int
        The number of type I errors, ≥ 2.

    Returns
    -------
    numpy.ndarray
        Increasing α from 0 to 1.

    Raises
    ------
    ParameterError
        When ``points`` is not an integer ≥ 2.
    """
    try:
        n = operator.index(points)
    except TypeError:
        raise ParameterError(f"points must be an integer ≥ 2, got {points!r}") from None
    if n < 2:
        raise ParameterError(f"points must be an integer ≥ 2, got {points!r}")
    return np.linspace(0.0, 1.0, n) ** 3


def _check_alpha(alpha) -> np.ndarray:
    """``alpha`` as a 1-D float array in [0, 1] (:func:`alpha_grid` when None)."""
    if alpha is None:
        return alpha_grid()
    a = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if a.ndim != 1 or a.size == 0:
        raise ParameterError("alpha must be a non-empty 1-D array of type I errors")
    if not np.all((a >= 0.0) & (a <= 1.0)):
        raise ParameterError("type I errors alpha must lie in [0, 1]")
    return a


def _check_mu(mu: float) -> float:
    """μ as a float ≥ 0 (shared with :mod:`~dpstudio.engine.tradeoff.compose`)."""
    return non_negative("μ", mu)


def _check_int(value, name: str, minimum: int) -> int:
    """``value`` as an int ≥ ``minimum``: an int, a numpy integer or a whole float."""
    try:
        n = operator.index(value)
    except TypeError:
        if isinstance(value, float) and value.is_integer():
            n = int(value)
        else:
            raise ParameterError(f"{name} must be an integer ≥ {minimum}, got {value!r}") from None
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    number(name, n, low=minimum, what="an integer")
    return n


# -------------------------------------------------------------------------- closed forms


def _gaussian_beta(mu: float, a: np.ndarray) -> np.ndarray:
    # Φ⁻¹(1−α) = −Φ⁻¹(α) keeps full precision for small α; ndtri(0) = −∞ and ndtri(1) = +∞
    # give f(0) = 1 and f(1) = 0 exactly.
    return ndtr(-ndtri(a) - mu)


def gaussian_tradeoff(mu: float, alpha=None) -> TradeoffCurve:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ): testing N(0, 1) against N(μ, 1) (DRS, Sec. 2).

    The Gaussian mechanism with noise σ on a query of ℓ₂ sensitivity Δ is exactly
    G_{Δ/σ}-DP (DRS: μ-GDP with μ = Δ/σ). Exact; symmetric (f = f⁻¹), with fixed
    point α = Φ(−μ/2).

    Parameters
    ----------
    mu : float
        μ = Δ/σ, ≥ 0.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).

    Returns
    -------
    TradeoffCurve
        Exact, with the closed form as its evaluator.

    Raises
    ------
    ParameterError
        For μ < 0 or not finite; type I errors outside [0, 1] or an empty ``alpha``.
    """
    m = _check_mu(mu)
    a = _check_alpha(alpha)
    return TradeoffCurve(
        a, _gaussian_beta(m, a), f"Gaussian, μ = {m:g}", True,
        "G_μ(α) = Φ(Φ⁻¹(1−α) − μ), μ = Δ/σ (Dong, Roth & Su 2019)",
        evaluator=lambda x: _gaussian_beta(m, x),
    )


def _laplace_beta(eps: float, a: np.ndarray) -> np.ndarray:
    # Log space: e^ε α and e^{−ε}/(4α) meet no 0·∞ at α = 0 (where only the first piece
    # is used), and the middle piece may overflow only where it is not used.
    with np.errstate(divide="ignore", over="ignore"):
        log_a = np.log(a)
        mid = np.exp(-eps - math.log(4.0) - log_a)  # e^{−ε} / (4α)
        low = -np.expm1(log_a + eps)  # 1 − e^ε α
    high = math.exp(-eps) * (1.0 - a)  # e^{−ε} (1 − α)
    return np.where(log_a < -eps - math.log(2.0), low, np.where(a <= 0.5, mid, high))


def laplace_tradeoff(epsilon: float, alpha=None) -> TradeoffCurve:
    """Trade-off of Laplace(0, b) against Laplace(Δ, b), ε = Δ/b (derived here; as in DRS).

    Neyman–Pearson: the likelihood ratio e^{(|x| − |x−Δ|)/b} is non-decreasing in x, so the
    optimal tests reject for x > t. With α = P₀(X > t) and β = P₁(X ≤ t):

    * t ≥ Δ: α = ½e^{−t/b}, β = 1 − ½e^{−(t−Δ)/b} = 1 − e^ε α,       for α < e^{−ε}/2;
    * 0 ≤ t ≤ Δ: α = ½e^{−t/b}, β = ½e^{−(Δ−t)/b} = e^{−ε}/(4α),       for α ≤ ½;
    * t ≤ 0: α = 1 − ½e^{t/b}, β = ½e^{(t−Δ)/b} = e^{−ε}(1 − α),       for α > ½.

    The outer pieces are straight lines because the likelihood ratio is constant there
    (randomized tests). Exact, symmetric, and above the pure ε bound (touching it only at
    α = 0, 1).

    Parameters
    ----------
    epsilon : float
        ε = Δ/b > 0.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).

    Returns
    -------
    TradeoffCurve
        Exact, with the closed form as its evaluator.

    Raises
    ------
    ParameterError
        For ε ≤ 0 or not finite; type I errors outside [0, 1] or an empty ``alpha``.
    """
    eps = validate_epsilon(epsilon)
    a = _check_alpha(alpha)
    return TradeoffCurve(
        a, _laplace_beta(eps, a), f"Laplace, ε = {eps:g}", True,
        "Neyman–Pearson for Laplace(0,b) vs Laplace(Δ,b), ε = Δ/b: 1−e^ε·α, e^−ε/(4α), "
        "e^−ε·(1−α) (as in Dong, Roth & Su 2019)",
        evaluator=lambda x: _laplace_beta(eps, x),
    )


def _eps_delta_beta(eps: float, delta: float, a: np.ndarray) -> np.ndarray:
    one = 1.0 - delta
    with np.errstate(divide="ignore", over="ignore"):
        steep = one - np.exp(np.log(a) + eps)  # 1 − δ − e^ε α without 0·∞ at α = 0
    return np.maximum(np.maximum(steep, math.exp(-eps) * (one - a)), 0.0)


def epsilon_delta_tradeoff(epsilon: float, delta: float = 0.0, alpha=None) -> TradeoffCurve:
    """f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)): the (ε, δ)-DP boundary.

    Wasserman & Zhou 2010; Kairouz, Oh & Viswanath 2017; DRS Prop. 2.5. ε = 0 is
    accepted (δ is then a total-variation bound). Piecewise linear with knots (0, 1−δ),
    ((1−δ)/(1+e^ε), (1−δ)/(1+e^ε)), (1−δ, 0), (1, 0).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    delta : float
        0 ≤ δ < 1.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).

    Returns
    -------
    TradeoffCurve
        Exact, with its knots.

    Raises
    ------
    ParameterError
        For ε < 0, δ outside [0, 1), or a non-finite value; type I errors outside
        [0, 1] or an empty ``alpha``.
    """
    eps = non_negative("ε", epsilon)
    d = validate_delta(delta)
    a = _check_alpha(alpha)
    w = math.exp(-eps)
    corner = (1.0 - d) * w / (1.0 + w)  # (1−δ)/(1+e^ε) without overflow
    ka = np.array([0.0, corner, 1.0 - d, 1.0])
    kb = np.array([1.0 - d, corner, 0.0, 0.0])
    keep = np.append(ka[1:] > ka[:-1], True)  # drop repeated α (δ = 0, huge ε)
    return TradeoffCurve(
        a, _eps_delta_beta(eps, d, a), f"({eps:g}, {d:g})-DP bound", True,
        "f(α) = max(0, 1−δ−e^ε·α, e^−ε·(1−δ−α)) (Kairouz, Oh & Viswanath 2017)",
        knots=(ka[keep], kb[keep]), evaluator=lambda x: _eps_delta_beta(eps, d, x),
    )


# ------------------------------------------------------------- discrete (finite) outputs


def _check_pmf(p, name: str) -> np.ndarray:
    a = np.asarray(p, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ParameterError(f"{name} must be a non-empty 1-D array of probabilities")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ParameterError(f"{name} must hold finite probabilities ≥ 0")
    total = float(a.sum())
    if abs(total - 1.0) > 1e-9:
        raise ParameterError(f"{name} must sum to 1 (got {total:.12g})")
    return a / total


def _knots_in_order(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knots of the trade-off of outputs already sorted by decreasing ratio q/p.

    Rejecting the first i outputs gives α = Σ_{j<i} p_j and β = Σ_{j≥i} q_j. β is summed
    from the tail so that small β keep their relative precision. Outputs with p = 0 come
    first and all sit at α = 0, where only the lowest β counts (f(0) = 1 − Q(p = 0)).
    """
    alpha = np.concatenate([[0.0], np.cumsum(p)])
    beta = np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]])
    alpha[-1] = 1.0  # the cumulative sum may round to 1 − 1e-16
    alpha = np.minimum(alpha, 1.0)
    beta = np.minimum(beta, 1.0)
    # Several knots at one α (outputs with p = 0, or p below the rounding of the sum): the
    # last of each run has the smallest β, which is the infimum defining f.
    keep = np.append(alpha[1:] > alpha[:-1], True)
    return alpha[keep], beta[keep]


def neyman_pearson_knots(p, q) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints (α, β) of T(P, Q) for two pmfs over the same finite set of outputs.

    The Neyman–Pearson test rejects H0 (output ~ P) on the outputs where q/p is largest;
    randomizing on the output at the threshold moves (α, β) along the straight segment
    between consecutive knots, so f is exactly the linear interpolation of these knots.
    Outputs with p = 0 < q have an infinite ratio and are rejected first (at α = 0);
    outputs with q = 0 < p come last (β already 0); outputs with p = q = 0 are ignored.

    Parameters
    ----------
    p, q : array_like
        The output pmfs on D and D′, over the same outputs in the same order (each sums
        to 1 within 1e-9).

    Returns
    -------
    alpha, beta : numpy.ndarray
        Strictly increasing α from 0 to 1 and non-increasing β ending at 0.

    Raises
    ------
    ParameterError
        For arrays that are not pmfs, or pmfs of different lengths.
    """
    pp, qq = _check_pmf(p, "p"), _check_pmf(q, "q")
    if pp.shape != qq.shape:
        raise ParameterError("p and q must be pmfs over the same outputs (equal lengths)")
    live = (pp > 0) | (qq > 0)
    pp, qq = pp[live], qq[live]
    with np.errstate(divide="ignore"):
        ratio = np.where(pp > 0, qq / np.where(pp > 0, pp, 1.0), np.inf)
    order = np.argsort(-ratio, kind="stable")
    return _knots_in_order(pp[order], qq[order])


def discrete_tradeoff(p, q, alpha=None, label: str = "discrete mechanism") -> TradeoffCurve:
    """Exact trade-off T(P, Q) of any mechanism with finitely many outputs.

    ``p`` and ``q`` are its output pmfs on D and D′ (same outputs, same order). The curve
    is the piecewise-linear interpolation of :func:`neyman_pearson_knots` (exact: the
    segments are the randomized Neyman–Pearson tests), evaluated on ``alpha``.

    Parameters
    ----------
    p, q : array_like
        The output pmfs on D and D′.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).
    label : str
        The curve's label.

    Returns
    -------
    TradeoffCurve
        Exact, with its knots.

    Raises
    ------
    ParameterError
        As :func:`neyman_pearson_knots`; type I errors outside [0, 1] or an empty ``alpha``.
    """
    a = _check_alpha(alpha)
    ka, kb = neyman_pearson_knots(p, q)
    return TradeoffCurve(a, np.interp(a, ka, kb), label, True,
                         f"Neyman–Pearson on {ka.size - 1} likelihood-ratio classes",
                         knots=(ka, kb))


def _krr_pair(eps: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Outputs of K-RR grouped into (x, other values, x′), ordered by increasing loss.

    On D the user holds x, on D′ the value x′ ≠ x. P = (e^ε, k−2, 1)/Z and Q = (1, k−2,
    e^ε)/Z with Z = e^ε + k − 1, written with w = e^{−ε} so that large ε cannot overflow.
    The privacy loss ln(q/p) is (j − 1)ε for group j: affine in j.
    """
    w = math.exp(-eps)
    z = 1.0 + (k - 1) * w
    p = np.array([1.0, (k - 2) * w, w]) / z
    return p, p[::-1].copy()


def krr_tradeoff(epsilon: float, k: int, alpha=None) -> TradeoffCurve:
    """Trade-off of k-ary randomized response: report the true value w.p. e^ε/(e^ε+k−1).

    Neighbours differ in one user's value x → x′, so the output pmfs are P = (e^ε, 1, …,
    1)/Z and Q with the e^ε moved to x′, Z = e^ε + k − 1. Neyman–Pearson rejects on x′
    (ratio e^ε), then on the k − 2 other values (ratio 1), then on x (ratio e^{−ε}):

        f(α) = max(1 − e^ε α,  1 − (e^ε − 1)/Z − α,  e^{−ε}(1 − α)),

    with knots (0, 1), (1/Z, (k−1)/Z), ((k−1)/Z, 1/Z), (1, 0). It is what
    :func:`discrete_tradeoff` gives on P and Q. For k = 2 the middle segment vanishes and
    f is the pure ε-DP bound (binary randomized response, Kairouz, Oh & Viswanath 2017).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    k : int
        The number of values, ≥ 2.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).

    Returns
    -------
    TradeoffCurve
        Exact, with its knots.

    Raises
    ------
    ParameterError
        For ε ≤ 0, k < 2 or not whole; type I errors outside [0, 1] or an empty ``alpha``.
    """
    eps = validate_epsilon(epsilon)
    kk = _check_int(k, "k (number of values)", 2)
    a = _check_alpha(alpha)
    w = math.exp(-eps)
    z = 1.0 + (kk - 1) * w
    lo, hi = w / z, (kk - 1) * w / z  # 1/Z and (k−1)/Z in the e^{−ε} form
    ka, kb = np.array([0.0, lo, hi, 1.0]), np.array([1.0, hi, lo, 0.0])
    keep = np.append(ka[1:] > ka[:-1], True)
    ka, kb = ka[keep], kb[keep]
    name = "randomized response" if kk == 2 else f"{kk}-ary randomized response"
    return TradeoffCurve(a, np.interp(a, ka, kb), f"{name}, ε = {eps:g}", True,
                         "Neyman–Pearson on the K-RR output pmfs (piecewise linear)",
                         knots=(ka, kb))


def randomized_response_tradeoff(epsilon: float, alpha=None) -> TradeoffCurve:
    """Binary randomized response: exactly the pure ε-DP bound max(0, 1−e^ε α, e^{−ε}(1−α)).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).

    Returns
    -------
    TradeoffCurve
        :func:`krr_tradeoff` with k = 2.

    Raises
    ------
    ParameterError
        As :func:`krr_tradeoff`.
    """
    return krr_tradeoff(epsilon, 2, alpha)


def _dlap_pair(scale: float, sensitivity: int) -> tuple[np.ndarray, np.ndarray]:
    """Discrete Laplace outputs grouped by privacy loss, in increasing loss order.

    P(k) = tanh(1/2t)·r^{|k|}, r = e^{−1/t}; Q(k) = P(k − Δ). The loss ln(Q/P)(k) =
    (|k| − |k−Δ|)/t is −Δ/t for every k ≤ 0 and Δ/t for every k ≥ Δ, so each of those
    tails is one output class: j = 0 is {k ≤ 0} with P = 1/(1+r), j = Δ is {k ≥ Δ} with
    P = r^Δ/(1+r), and 0 < j < Δ is {k = j}. The loss is (2j − Δ)/t, affine in j, and
    Q_j = P_{Δ−j} by symmetry. Exact up to rounding, no truncation.
    """
    j = np.arange(sensitivity + 1, dtype=np.float64)
    r = math.exp(-1.0 / scale)
    p = math.tanh(0.5 / scale) * np.exp(-j / scale)
    p[0] = 1.0 / (1.0 + r)
    p[-1] = math.exp(-sensitivity / scale) / (1.0 + r)
    return p, p[::-1].copy()


def _check_integer_sensitivity(sensitivity) -> int:
    """Δ as an int: the sensitivity's range is :func:`validate_sensitivity`'s."""
    s = validate_sensitivity(sensitivity)
    if s != math.floor(s):
        raise ParameterError(f"the discrete Laplace needs an integer sensitivity, got {s:g}")
    return int(s)


def _check_scale(scale, name: str = "scale") -> float:
    """A noise scale as a float > 0 (shared with :mod:`~dpstudio.engine.tradeoff.compose`)."""
    return positive(name, scale)


def discrete_laplace_tradeoff(scale: float, sensitivity: int = 1, alpha=None) -> TradeoffCurve:
    """Exact trade-off of discrete Laplace noise (P(k) ∝ e^{−|k|/scale}) shifted by Δ.

    Built by :func:`discrete_tradeoff` on the Δ + 1 privacy-loss classes of the noise
    (both infinite tails have a constant likelihood ratio, so nothing is truncated). For
    Δ = 1 it is binary randomized response with ε = 1/scale; in general it lies above the
    (Δ/scale)-DP bound, which it touches near α = 0 and 1.

    Parameters
    ----------
    scale : float
        The noise's scale t > 0.
    sensitivity : int
        The integer shift Δ ≥ 1.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).

    Returns
    -------
    TradeoffCurve
        Exact, with its knots.

    Raises
    ------
    ParameterError
        For scale ≤ 0, a sensitivity that is not a positive integer or too large for the
        exact construction; type I errors outside [0, 1] or an empty ``alpha``.
    """
    t = _check_scale(scale)
    sens = _check_integer_sensitivity(sensitivity)
    if sens + 1 > 10 * _MAX_LATTICE:
        raise ParameterError(f"sensitivity {sens} is too large for the exact construction")
    a = _check_alpha(alpha)
    p, q = _dlap_pair(t, sens)
    ka, kb = _knots_in_order(p[::-1], q[::-1])  # decreasing loss = decreasing q/p
    return TradeoffCurve(a, np.interp(a, ka, kb),
                         f"discrete Laplace, scale {t:g}, Δ = {sens}", True,
                         "Neyman–Pearson on the discrete Laplace privacy-loss classes "
                         f"(ε = Δ/scale = {sens / t:g})", knots=(ka, kb))
