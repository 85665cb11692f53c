"""Worst-case pairs of finite-output mechanisms, and the exponential mechanism's curve.

A mechanism with finitely many outputs is f-DP with f = T(P, Q), P and Q its output laws on
the worst pair of neighbouring inputs; Neyman–Pearson on (P, Q) gives f exactly
(:func:`~dpstudio.engine.tradeoff.curves.discrete_tradeoff`). Outputs with the same
likelihood ratio q/p are one class (the optimal test treats them alike), so each pair here is
given on its classes, ordered by *increasing* privacy loss ln(q/p). Local neighbours differ
in one person's value x → x′ (the replace-one relation of the local model).

* **Unary encoding** (SUE/OUE, k cells). A report is k independent bits; the bits of cells
  other than x and x′ have the same law under both inputs, so they carry no information
  and the pair is that of the two differing bits: (b_x, b_x′) ~ Bern(p₁) × Bern(q₁) on x,
  Bern(q₁) × Bern(p₁) on x′, with p₁, q₁ the probabilities that the own bit and another
  bit read 1. Four outcomes: (1, 0) has loss ln(q₁(1−p₁)/(p₁(1−q₁))) = −ε (SUE: p₁ =
  e^{ε/2}/(e^{ε/2}+1), q₁ = 1 − p₁; OUE: p₁ = ½, q₁ = 1/(e^ε+1)), (0, 1) has +ε, and
  (0, 0), (1, 1) have loss 0. The same for every pair x ≠ x′ and every k ≥ 2: exact.
* **Optimal local hashing** (g buckets). A report is a seed s = (a, b) of the universal
  family h_s(x) = ⌊((a·x + b) mod (2³¹−1))·g/2³¹⌋ and y, g-ary randomized response on
  h_s(x). The seed is drawn independently of x, so (s, y) has law π(s)·RR(y | h_s(x)) and
  the likelihood ratio of (s, y) is RR's on the pair (h_s(x), h_s(x′)): e^{±ε} when the
  two values hash apart and y is one of their buckets, 1 otherwise (in particular for
  every y when they collide, where both laws agree). For x ≠ x′ below 2³¹−1 the map
  (a, b) ↦ (a·x + b, a·x′ + b) mod (2³¹−1) is a bijection onto the pairs of distinct
  residues, so the two values collide with the same probability c for every pair (the
  family's exact ``collision``): classes −ε (mass (1−c)·p_g under P, (1−c)·q_g under Q),
  0 (c + (1−c)(g−2)·q_g under both) and +ε, with p_g = e^ε/(e^ε+g−1), q_g = 1/(e^ε+g−1).
  Exact for every pair.
* **Hadamard response** (K = 2^⌈log₂(k+1)⌉). Value x reports a column y uniform on C_x
  (the K/2 columns where row x+1 of H_K is +1) with probability e^ε/(e^ε+1), else
  uniform on the rest. Two distinct non-zero rows agree on exactly half of the columns,
  and C_x ∩ C_x′ has K/4 columns (two independent parity constraints), so the classes are
  C_x ∖ C_x′ (P = e^ε/(2(e^ε+1)), Q = 1/(2(e^ε+1))), C_x′ ∖ C_x (swapped) and the rest
  (ratio 1, mass ½ under both). Exact for every pair and every K.
* **Count-mean sketch** (Apple). A report is a hash index j (uniform, independent of the
  value) and m ±1 entries, each an e^{ε/2} randomized response of the one-hot vector at
  h_j(d). For a hash under which d and d′ fall in different buckets, two entries differ:
  SUE's pair at ε; where they collide both laws agree. The report's pair is the mixture
  (over j) of the two, which is a post-processing of the non-colliding pair; the worst
  pair of values (no hash of the family maps them together, which is the case for almost
  every pair when K·m is large) gives exactly SUE's curve at ε.
* **Sequence-fragment puzzle**: each user sends a fragment sketch and a word sketch
  (ε·share and ε·(1−share)); for two words whose keys differ in both, the pair is the
  product of the two count-mean sketch pairs (9 classes): exact in that worst case.
* **Duchi et al.'s mean**: one bit, 1 with probability k(1+x)/2 + (1−k)(1−x)/2,
  k = e^ε/(e^ε+1); the extreme inputs x = ±1 give binary randomized response at ε.
* **The (ε, δ) region**: f_{ε,δ} is T(P, Q) for the four-outcome pair of Kairouz, Oh &
  Viswanath (losses −∞, −ε, +ε, +∞); composing it is their optimal composition of
  (ε, δ)-DP mechanisms, which is what can be said of a mechanism known only by (ε, δ).

The exponential mechanism has no single worst pair; its curve is
:func:`exponential_mechanism_tradeoff` (below). :func:`pair_tradeoff` and
:func:`compose_pair` turn a pair into its curve and its k-fold composition (exactly, by
merging equal losses).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import number
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.tradeoff.curves import (
    TradeoffCurve,
    _check_alpha,
    _check_int,
    _knots_in_order,
)

__all__ = [
    "LossPair",
    "compose_pair",
    "count_mean_sketch_pair",
    "epsilon_delta_pair",
    "exponential_mechanism_tradeoff",
    "hadamard_pair",
    "local_hashing_pair",
    "pair_tradeoff",
    "product_pair",
    "unary_encoding_pair",
]

# Losses closer than this are one class when pairs are multiplied: they come from sums of
# the same few per-mechanism losses, which agree to ~1e-15; merging outputs of equal ratio
# loses nothing (the Neyman–Pearson test treats them alike).
_MERGE_DECIMALS = 9
# Most likelihood-ratio classes a composed pair may have.
_MAX_CLASSES = 200_001


class LossPair:
    """Output laws P (on x) and Q (on x′) of a mechanism, grouped by privacy loss ln(q/p).

    Parameters
    ----------
    p, q : array_like
        Masses of each class under P and Q (each summing to 1 within 1e-9).
    loss : array_like
        ln(q/p) of each class, −∞ where q = 0 < p and +∞ where p = 0 < q; strictly
        increasing (one class per loss).

    Attributes
    ----------
    p, q, loss : numpy.ndarray
        As given (read-only), in increasing loss.

    Raises
    ------
    ParameterError
        For arrays of different lengths, masses that are not pmfs, or losses that do not
        increase.
    """

    def __init__(self, p, q, loss) -> None:
        arrays = [np.array(v, dtype=np.float64).reshape(-1) for v in (p, q, loss)]
        if not arrays[0].size == arrays[1].size == arrays[2].size > 0:
            raise ParameterError("a loss pair needs p, q and losses of one non-zero length")
        for name, a in (("p", arrays[0]), ("q", arrays[1])):
            if not np.all(np.isfinite(a)) or np.any(a < 0) or abs(float(a.sum()) - 1) > 1e-9:
                raise ParameterError(f"{name} must be a probability vector (≥ 0, sum 1)")
        if np.any(np.isnan(arrays[2])) or np.any(np.diff(arrays[2]) <= 0):
            raise ParameterError("the losses of a pair must increase strictly")
        for a in arrays:
            a.flags.writeable = False
        self.p, self.q, self.loss = arrays

    @property
    def epsilon(self) -> float:
        """The largest finite |loss| with mass, i.e. the pair's pure ε (inf if δ > 0)."""
        live = (self.p > 0) | (self.q > 0)
        return float(np.max(np.abs(self.loss[live])))

    def knots(self) -> tuple[np.ndarray, np.ndarray]:
        """Breakpoints (α increasing, β decreasing) of T(P, Q), exact.

        Returns
        -------
        alpha, beta : numpy.ndarray
            The Neyman–Pearson corners: reject the classes of largest loss first.
        """
        return _knots_in_order(self.p[::-1].copy(), self.q[::-1].copy())


def _ratio_pair(eps: float, p_minus: float, zero: float, p_plus: float) -> LossPair:
    """Three classes −ε, 0, +ε with P-masses (p_minus, zero, p_plus); Q swaps the outer
    two (every pair here is symmetric in x ↔ x′)."""
    return LossPair([p_minus, zero, p_plus], [p_plus, zero, p_minus], [-eps, 0.0, eps])


def unary_encoding_pair(epsilon: float, optimized: bool) -> LossPair:
    """The pair of the two differing bits of unary encoding (module docstring): exact.

    Parameters
    ----------
    epsilon : float
        The per-user ε > 0.
    optimized : bool
        True for OUE (own bit 1 w.p. ½, others w.p. 1/(e^ε+1)), False for SUE (each bit
        kept w.p. e^{ε/2}/(e^{ε/2}+1)).

    Returns
    -------
    LossPair
        Classes −ε, 0, +ε.

    Raises
    ------
    ParameterError
        For a bad ε.
    """
    eps = validate_epsilon(epsilon)
    if optimized:
        p1, q1 = 0.5, 1.0 / (1.0 + math.exp(eps))
    else:
        w = math.exp(-eps / 2.0)
        p1, q1 = 1.0 / (1.0 + w), w / (1.0 + w)
    minus = p1 * (1.0 - q1)  # (b_x, b_x′) = (1, 0): loss −ε
    plus = (1.0 - p1) * q1  # (0, 1): loss +ε
    return _ratio_pair(eps, minus, 1.0 - minus - plus, plus)


def local_hashing_pair(epsilon: float, g: int, collision: float) -> LossPair:
    """The pair of one OLH report (seed and randomized bucket; module docstring): exact.

    Parameters
    ----------
    epsilon : float
        The per-user ε > 0.
    g : int
        Hash buckets, ≥ 2.
    collision : float
        Probability c in [0, 1) that two distinct values share a bucket under a random
        seed (``OptimalLocalHashing.collision``; about 1/g).

    Returns
    -------
    LossPair
        Classes −ε, 0, +ε.

    Raises
    ------
    ParameterError
        For a bad ε, g or collision probability.
    """
    eps = validate_epsilon(epsilon)
    gg = _check_int(g, "g (hash buckets)", 2)
    c = number("the collision probability", collision, low=0.0, high=1.0, high_open=True)
    w = math.exp(-eps)
    z = 1.0 + (gg - 1) * w
    keep, other = 1.0 / z, w / z  # e^ε/(e^ε+g−1), 1/(e^ε+g−1) in the e^{−ε} form
    minus, plus = (1.0 - c) * keep, (1.0 - c) * other
    return _ratio_pair(eps, minus, 1.0 - minus - plus, plus)


def hadamard_pair(epsilon: float) -> LossPair:
    """The pair of one Hadamard response report (module docstring): exact for any k.

    Parameters
    ----------
    epsilon : float
        The per-user ε > 0.

    Returns
    -------
    LossPair
        Classes −ε (mass e^ε/(2(e^ε+1)) under P), 0 (½) and +ε.

    Raises
    ------
    ParameterError
        For a bad ε.
    """
    eps = validate_epsilon(epsilon)
    w = math.exp(-eps)
    return _ratio_pair(eps, 0.5 / (1.0 + w), 0.5, 0.5 * w / (1.0 + w))


def count_mean_sketch_pair(epsilon: float) -> LossPair:
    """The worst pair of one count-mean sketch report: SUE's two bits at ε (module
    docstring; two values no hash of the family maps together).

    Parameters
    ----------
    epsilon : float
        The per-user ε > 0 (each differing entry spends ε/2).

    Returns
    -------
    LossPair

    Raises
    ------
    ParameterError
        For a bad ε.
    """
    return unary_encoding_pair(epsilon, optimized=False)


def epsilon_delta_pair(epsilon: float, delta: float = 0.0) -> LossPair:
    """The four-outcome pair whose trade-off is f_{ε,δ} (Kairouz, Oh & Viswanath 2015).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    delta : float
        0 ≤ δ < 1.

    Returns
    -------
    LossPair
        Classes −∞ (mass δ under P), −ε, +ε, +∞ (mass δ under Q); the infinite classes
        are left out when δ = 0, the ±ε ones merged when ε = 0.

    Raises
    ------
    ParameterError
        For ε < 0, δ outside [0, 1), or a non-finite value.
    """
    eps = number("ε", epsilon, low=0.0)
    d = validate_delta(delta)
    w = math.exp(-eps)
    big, small = (1.0 - d) / (1.0 + w), (1.0 - d) * w / (1.0 + w)
    p, q, loss = [big, small], [small, big], [-eps, eps]
    if eps == 0.0:
        p, q, loss = [1.0 - d], [1.0 - d], [0.0]
    if d > 0:
        p, q, loss = [d, *p, 0.0], [0.0, *q, d], [-math.inf, *loss, math.inf]
    return LossPair(p, q, loss)


def _merge(p: np.ndarray, q: np.ndarray, loss: np.ndarray) -> LossPair:
    """One class per distinct loss (rounded to ``_MERGE_DECIMALS``), empty classes dropped."""
    live = (p > 0) | (q > 0)
    p, q, loss = p[live], q[live], loss[live]
    key = np.where(np.isfinite(loss), np.round(loss, _MERGE_DECIMALS), loss)
    uniq, inverse = np.unique(key, return_inverse=True)
    if uniq.size > _MAX_CLASSES:
        raise ParameterError(f"the composed pair has more than {_MAX_CLASSES} privacy-loss "
                             "classes; compose fewer runs")
    pp = np.bincount(inverse, weights=p, minlength=uniq.size)
    qq = np.bincount(inverse, weights=q, minlength=uniq.size)
    return LossPair(pp / pp.sum(), qq / qq.sum(), uniq)


def product_pair(pairs: Sequence[LossPair]) -> LossPair:
    """The pair of independent outputs of several mechanisms on the same neighbours.

    Losses add; outputs of equal total loss are merged (the optimal test treats them
    alike). A class with p = 0 in one factor and q = 0 in another has mass 0 under both
    and is dropped, so ∞ − ∞ never arises.

    Parameters
    ----------
    pairs : sequence of LossPair
        At least one.

    Returns
    -------
    LossPair

    Raises
    ------
    ParameterError
        For no pairs, or a product with more than 200001 loss classes.
    """
    if not pairs:
        raise ParameterError("a product needs at least one pair")
    out = pairs[0]
    for other in pairs[1:]:
        p = np.outer(out.p, other.p).ravel()
        q = np.outer(out.q, other.q).ravel()
        live = (p > 0) | (q > 0)
        with np.errstate(invalid="ignore"):
            loss = np.add.outer(out.loss, other.loss).ravel()
        loss = np.where(live, loss, 0.0)  # dead cells (∞ − ∞ among them) are dropped
        out = _merge(p, q, loss)
    return out


def compose_pair(pair: LossPair, k: int) -> LossPair:
    """The pair of k independent runs of one mechanism, by repeated squaring.

    Parameters
    ----------
    pair : LossPair
        One run's pair.
    k : int
        Runs, ≥ 1.

    Returns
    -------
    LossPair

    Raises
    ------
    ParameterError
        For a bad k, or too many loss classes.
    """
    kk = _check_int(k, "the number of compositions", 1)
    result: LossPair | None = None
    base = pair
    while kk:
        if kk & 1:
            result = base if result is None else product_pair([result, base])
        kk >>= 1
        if kk:
            base = product_pair([base, base])
    return result


def pair_tradeoff(pair: LossPair, alpha=None, label: str = "finite mechanism",
                  note: str = "") -> TradeoffCurve:
    """Exact trade-off curve T(P, Q) of a pair, with its knots.

    Parameters
    ----------
    pair : LossPair
        The pair.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`~dpstudio.engine.tradeoff.alpha_grid`).
    label, note : str
        The curve's label and note (default note: the number of classes).

    Returns
    -------
    TradeoffCurve
        Exact.

    Raises
    ------
    ParameterError
        For type I errors outside [0, 1] or an empty ``alpha``.
    """
    a = _check_alpha(alpha)
    ka, kb = pair.knots()
    return TradeoffCurve(a, np.interp(a, ka, kb), label, True,
                         note or f"Neyman–Pearson on {pair.p.size} likelihood-ratio classes",
                         knots=(ka, kb))


def _em_beta(eps: float, a: np.ndarray) -> np.ndarray:
    # (1 − α)/(1 + (e^ε − 1)α) multiplied through by e^{−ε}: no overflow for large ε.
    w = math.exp(-eps)
    return w * (1.0 - a) / (w + (1.0 - w) * a)


def exponential_mechanism_tradeoff(epsilon: float, alpha=None) -> TradeoffCurve:
    """Trade-off of the exponential mechanism at ε: f(α) = (1 − α)/(1 + (e^ε − 1)α).

    The exponential mechanism (exponent ε·u/(2Δu), or ε·u/Δu for monotone scores) is
    ε-bounded-range (Durfee & Rogers 2019): on any pair of neighbours its privacy loss
    lies in [t − ε, t] for some t ∈ [0, ε]. A pair whose loss lies in [t − ε, t] is a
    post-processing of the binary pair with losses t and t − ε (the "generalized
    randomized response" of Dong, Durfee & Rogers 2020), whose Neyman–Pearson corner is
    α = (e^{−t} − e^{−ε})/(1 − e^{−ε}), β = (1 − α)e^{t−ε}. Eliminating t, the corners
    trace exactly the f above, which is convex, so f lies below every such pair's curve
    (chords of a convex curve lie above it) and the mechanism is f-DP. It is tight: two
    candidates whose scores move ±Δu apart give the binary pair with logits x and x + ε,
    whose corner (σ(x), σ(−x−ε)) lies on f for every x. So f is the mechanism's curve in
    the worst case over score functions of sensitivity Δu, whatever the number of
    candidates; a particular utility (a quantile's) may be more private. Symmetric, with
    slopes −e^ε at 0 and −e^{−ε} at 1, strictly above the pure ε-DP bound inside (0, 1).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`~dpstudio.engine.tradeoff.alpha_grid`).

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
        a, _em_beta(eps, a), f"exponential mechanism, ε = {eps:g}", True,
        "f(α) = (1−α)/(1+(e^ε−1)α): the ε-bounded-range envelope (Durfee & Rogers 2019; "
        "Dong, Durfee & Rogers 2020), attained with two candidates",
        evaluator=lambda x: _em_beta(eps, x),
    )
