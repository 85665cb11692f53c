"""Trade-off curves of integer noise added to an integer statistic of sensitivity Δ.

The release is s + Z with Z integer noise; on neighbours the statistic moves by at most Δ,
so the pair is P = law(Z), Q = law(Z + Δ). Here Z is

* a discrete Gaussian N_Z(0, σ²) (the central ``discrete_gaussian``, the local Gaussian
  on its grid), or the sum of S independent discrete Gaussian shares N_Z(0, σ_c²) (what
  the server of ``secagg_gaussian`` sees: the masks cancel, the shares of the S clients
  the guarantee rests on remain);
* a symmetric Skellam Sk(v) (``skellam``; shares of Skellams add to a Skellam, so the sum
  is exactly Sk of the total variance).

Each of these laws is log-concave (the discrete Gaussian's log-pmf is a parabola, the
Skellam is a difference of Poissons, and convolutions of log-concave sequences stay
log-concave), so the likelihood ratio Q(x)/P(x) = Z(x − Δ)/Z(x) is non-decreasing in x
and the Neyman–Pearson tests reject for x above a threshold: the knots are
(P(Z ≥ t), P(Z + Δ < t)) over integer t, and no ratio is ever formed (tiny probabilities
cannot reorder the outputs).

The support is cut to a window whose outside mass is below 1e-12 under each law, made
pessimistic: P's outside mass becomes an output that only P produces (ratio 0) and Q's
one that only Q produces (ratio ∞). The real pair is a post-processing of that one
(map each extra output to a draw from the law's own tail), so the curve is never above
the mechanism's and is below it by at most 1e-12. The pmfs are closed forms (the
discrete Gaussian the sampler's own pmf, kept on ±√92·σ, beyond which its mass is below
1e-20; the Skellam through scipy's scaled Bessel function), or, for a sum of shares, an
FFT power of one share's pmf on a circle wide enough that wrapped mass is below 1e-20
(rounding ~1e-17 per point; where the sum's pmf is below that it may read 0, which only
lowers the curve at α = 0, by what Q puts there: pessimistic, and visible only when Δ is
many standard deviations). Composition: the discrete Gaussian's loss is affine in x, so
k runs are exactly the k-fold sum of the noise against its shift by kΔ; the Skellam's and
the sum of shares' losses are not, and compose through
:mod:`dpstudio.engine.accounting.pld` (pessimistic).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpstudio.engine.checks import positive
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.sampling import discrete_gaussian_pmf
from dpstudio.engine.tradeoff.curves import (
    TradeoffCurve,
    _check_alpha,
    _check_int,
    _knots_in_order,
)
from dpstudio.engine.tradeoff.profiles import profile_to_tradeoff

__all__ = [
    "TAIL_MASS",
    "IntegerLaw",
    "discrete_gaussian_law",
    "integer_noise_pld",
    "integer_noise_tradeoff",
    "shifted_knots",
    "skellam_law",
    "sum_of_shares",
]

#: Mass of each law left outside the window (accounted pessimistically).
TAIL_MASS = 1e-12
# Half-width of a discrete Gaussian's pmf, in σ: e^{−46} < 1.1e-20 of mass lies beyond.
_DG_SIGMAS = math.sqrt(92.0)
# Largest support (points) built for one law or an FFT circle.
_MAX_SUPPORT = 1 << 25


class IntegerLaw:
    """A pmf on the integers offset, offset + 1, …: the law of the noise Z.

    Parameters
    ----------
    offset : int
        The first integer of the support.
    probs : array_like
        P(Z = offset + i), summing to 1 within 1e-9 (normalized here).
    label : str
        Its name for people.
    exact : bool
        Whether ``probs`` is a closed form (False: an FFT power, rounding ~1e-16 a point).
    affine_loss : bool
        Whether ln Z(x − Δ)/Z(x) is affine in x (the discrete Gaussian), so that k runs
        compose as the k-fold sum.
    logpmf : callable, optional
        ln P(Z = x) for any integer array x, consistent with ``probs``: the pair is then
        evaluated beyond the stored support where a large Δ needs it (a P-probability of
        1e-100 there is a likelihood ratio, not a zero). Without it the law is 0 outside.

    Raises
    ------
    ParameterError
        For probabilities that are not a pmf.
    """

    def __init__(self, offset: int, probs, label: str, exact: bool = True,
                 affine_loss: bool = False,
                 logpmf: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        c = np.clip(np.asarray(probs, dtype=np.float64), 0.0, None)
        total = float(c.sum())
        if c.ndim != 1 or c.size == 0 or not np.isfinite(total) or abs(total - 1.0) > 1e-9:
            raise ParameterError("integer noise needs a probability vector (≥ 0, sum 1)")
        self.offset, self.probs = int(offset), c / total
        self.label, self.exact, self.affine_loss = label, exact, affine_loss
        self.logpmf = logpmf

    def pmf_on(self, lo: int, hi: int) -> np.ndarray:
        """P(Z = x) for the integers x = lo … hi (``logpmf`` outside the stored support).

        Parameters
        ----------
        lo, hi : int
            The range, lo ≤ hi.

        Returns
        -------
        numpy.ndarray
            hi − lo + 1 probabilities.
        """
        x = np.arange(lo, hi + 1)
        out = np.zeros(x.size)
        idx = x - self.offset
        inside = (idx >= 0) & (idx < self.probs.size)
        out[inside] = self.probs[idx[inside]]
        if self.logpmf is not None and not np.all(inside):
            with np.errstate(under="ignore"):
                out[~inside] = np.exp(self.logpmf(x[~inside]))
        return out

    @property
    def variance(self) -> float:
        """The law's variance."""
        x = np.arange(self.probs.size) + self.offset
        m = float(np.dot(x, self.probs))
        return float(np.dot((x - m) ** 2, self.probs))


def discrete_gaussian_law(sigma: float) -> IntegerLaw:
    """N_Z(0, σ²): P(x) ∝ e^{−x²/2σ²} on ±⌈√92·σ⌉ (the mass beyond is below 1e-20), the
    pmf of the engine's sampler (:func:`~dpstudio.engine.sampling.discrete_gaussian_pmf`).

    Parameters
    ----------
    sigma : float
        σ > 0, in integer steps.

    Returns
    -------
    IntegerLaw

    Raises
    ------
    ParameterError
        For σ ≤ 0, not finite, or a support too large to build.
    """
    s = positive("σ", sigma)
    m = int(math.ceil(_DG_SIGMAS * s)) + 1
    if 2 * m + 1 > _MAX_SUPPORT:
        raise ParameterError(f"σ = {s:g} steps is too wide for the exact discrete Gaussian "
                             "curve (use fewer precision bits)")
    # The sampler's own pmf (one normalizer for what is drawn and what is plotted); the
    # log-pmf is the parabola minus ln S, S = 1/P(0), so far tails keep their ratios.
    probs = discrete_gaussian_pmf(np.arange(-m, m + 1), s)
    log_p0 = math.log(discrete_gaussian_pmf(0, s))

    def logpmf(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        return -(t * t) / (2.0 * s * s) + log_p0

    return IntegerLaw(-m, probs, f"discrete Gaussian, σ = {s:.6g}", True, True, logpmf)


def skellam_law(variance: float) -> IntegerLaw:
    """Sk(v) = Pois(v/2) − Pois(v/2): P(x) = e^{−v} I_|x|(v), on a window where the
    Chernoff bound leaves less than 1e-20 outside.

    Parameters
    ----------
    variance : float
        v > 0, in integer steps squared (at most 1e9).

    Returns
    -------
    IntegerLaw

    Raises
    ------
    ParameterError
        For a bad variance.
    """
    from dpstudio.engine.distributed.skellam import (
        MAX_SKELLAM_VARIANCE,
        skellam_pmf,
        skellam_tail_bound,
    )

    v = positive("the Skellam variance", variance)
    if v > MAX_SKELLAM_VARIANCE:
        raise ParameterError(f"a Skellam variance of {v:.3g} is beyond what scipy evaluates "
                             f"({MAX_SKELLAM_VARIANCE:g}); use fewer precision bits")
    m = max(int(math.ceil(math.sqrt(2.0 * v * 46.0))) + 20, 1)
    while 2.0 * float(skellam_tail_bound(m, v)) > 1e-20:
        m = int(math.ceil(1.1 * m)) + 1
    if 2 * m + 1 > _MAX_SUPPORT:
        raise ParameterError(f"a Skellam variance of {v:.3g} is too wide for the exact curve")
    x = np.arange(-m, m + 1)

    def logpmf(t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(skellam_pmf(t, v))  # −∞ only where scipy underflows

    return IntegerLaw(-m, skellam_pmf(x, v), f"Skellam, variance {v:.6g}", True, False,
                      logpmf)


def sum_of_shares(share: IntegerLaw, count: int, label: str | None = None,
                  reach: int = 0) -> IntegerLaw:
    """The law of the sum of ``count`` independent draws of ``share`` (FFT power).

    The circle has at least 2·(⌈10·sd⌉ + support of one share + ``reach``) points, sd the
    sum's standard deviation: the sums met here are sub-Gaussian with that variance proxy,
    so the mass that wraps around is below 1e-20. ``reach`` (the shift Δ the law will be
    tested against) keeps the support wide enough that P is not cut to 0 where Q = P(· − Δ)
    still has mass.

    Parameters
    ----------
    share : IntegerLaw
        One draw's law.
    count : int
        Draws summed, ≥ 1.
    label : str, optional
        The result's label.
    reach : int
        Extra half-width of the support, ≥ 0.

    Returns
    -------
    IntegerLaw
        ``share`` itself when ``count`` is 1; else not ``exact`` (FFT rounding).

    Raises
    ------
    ParameterError
        For a bad count, or a sum too wide to build.
    """
    n = _check_int(count, "the number of shares", 1)
    if n == 1:
        return share
    sd = math.sqrt(n * share.variance)
    own = max(-share.offset, share.offset + share.probs.size - 1)
    half = int(math.ceil(10.0 * sd)) + own + 1 + max(int(reach), 0)
    size = 1 << int(math.ceil(math.log2(2 * half + 1)))
    if size > _MAX_SUPPORT:
        raise ParameterError("the sum of the shares is too wide for its exact curve")
    circle = np.zeros(size)
    idx = (np.arange(share.probs.size) + share.offset) % size
    np.add.at(circle, idx, share.probs)
    summed = np.fft.irfft(np.fft.rfft(circle) ** n, n=size)
    x = np.arange(-half, half + 1)
    probs = np.clip(summed[x % size], 0.0, None)
    return IntegerLaw(-half, probs / probs.sum(), label or f"sum of {n} × {share.label}",
                      False, False)


def _tails(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """below[i] = Σ_{j<i} c_j and above[i] = Σ_{j>i} c_j, each summed from its own end."""
    below = np.concatenate([[0.0], np.cumsum(c)[:-1]])
    above = np.concatenate([np.cumsum(c[::-1])[::-1][1:], [0.0]])
    return below, above


def _window_pair(law: IntegerLaw, shift: int, tail: float = TAIL_MASS
                 ) -> tuple[np.ndarray, np.ndarray, float, float]:
    """P and Q = P shifted by ``shift`` on the window, in increasing x, and the masses
    (P_out, Q_out) each leaves outside it."""
    c = law.probs
    below, above = _tails(c)
    a = int(np.searchsorted(below, tail / 2.0, side="right")) - 1  # below[a] ≤ tail/2
    ok = np.flatnonzero(above <= tail / 2.0)
    b = int(ok[0]) if ok.size else c.size - 1
    a = max(min(a, b), 0)
    width = b - a + 1 + shift  # outputs x_a … x_b + Δ
    if width > _MAX_SUPPORT:
        raise ParameterError("the sensitivity is too large for the exact curve of this noise")
    x_a = law.offset + a
    both = law.pmf_on(x_a - shift, x_a + width - 1)  # Z on x_a − Δ … x_b + Δ
    p = both[shift:]  # P(x) = Z(x) for x = x_a … x_b + Δ
    q = both[:width]  # Q(x) = Z(x − Δ)
    p_out = float(below[a]) + float(above[min(b + shift, c.size - 1)])
    q_out = float(below[a - shift]) if a >= shift else 0.0
    q_out += float(above[b])
    return p, q, p_out, q_out


def shifted_knots(law: IntegerLaw, sensitivity: int, tail: float = TAIL_MASS
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Knots of T(Z, Z + Δ) for log-concave Z, pessimistic by at most ``tail``.

    Parameters
    ----------
    law : IntegerLaw
        The noise Z (log-concave; see the module docstring).
    sensitivity : int
        Δ ≥ 1.
    tail : float
        Mass left outside the window, under each law.

    Returns
    -------
    alpha, beta : numpy.ndarray
        α strictly increasing from 0 to 1, β non-increasing to 0.

    Raises
    ------
    ParameterError
        For a bad Δ or a window too large.
    """
    shift = _check_int(sensitivity, "the sensitivity (integer steps)", 1)
    p, q, p_out, q_out = _window_pair(law, shift, tail)
    # Decreasing ratio q/p: Q's outside mass (ratio ∞), x from the top down, P's (ratio 0).
    pp = np.concatenate([[0.0], p[::-1], [p_out]])
    qq = np.concatenate([[q_out], q[::-1], [0.0]])
    return _knots_in_order(pp / pp.sum(), qq / qq.sum())


def _pld_pair(law: IntegerLaw, shift: int) -> tuple[np.ndarray, np.ndarray]:
    p, q, p_out, q_out = _window_pair(law, shift)
    pp = np.concatenate([[0.0], p, [p_out]])
    qq = np.concatenate([[q_out], q, [0.0]])
    return pp / pp.sum(), qq / qq.sum()


def integer_noise_pld(law: IntegerLaw, sensitivity: int, compositions: int = 1):
    """Privacy-loss distribution of ``compositions`` releases with noise ``law``, shift Δ.

    The windowed pessimistic pair (:func:`shifted_knots`) as a
    :class:`~dpstudio.engine.accounting.pld.PLD` (both directions), composed k times:
    its δ(ε) and ε(δ) are upper bounds.

    Parameters
    ----------
    law : IntegerLaw
        The noise.
    sensitivity : int
        Δ ≥ 1.
    compositions : int
        Releases, ≥ 1.

    Returns
    -------
    PLD

    Raises
    ------
    ParameterError
        For a bad Δ or k.
    """
    from dpstudio.engine.accounting.pld import PLD

    k = _check_int(compositions, "the number of compositions", 1)
    shift = _check_int(sensitivity, "the sensitivity (integer steps)", 1)
    pld = PLD.from_distributions(*_pld_pair(law, shift))
    return pld.self_compose(k) if k > 1 else pld


def integer_noise_tradeoff(law: IntegerLaw, sensitivity: int, compositions: int = 1,
                           alpha=None, label: str | None = None) -> TradeoffCurve:
    """The trade-off curve of ``compositions`` releases with noise ``law`` and shift Δ.

    One release: Neyman–Pearson threshold tests (:func:`shifted_knots`), ``exact`` when
    the pmf is a closed form (pessimistic by at most 1e-12). k releases: for the
    discrete Gaussian, the same on the k-fold sum of the noise shifted by kΔ (its loss
    is affine in x, so the sum is sufficient); otherwise the pair's privacy-loss
    distribution composed k times (:class:`~dpstudio.engine.accounting.pld.PLD`) and
    its pessimistic curve (``exact`` False).

    Parameters
    ----------
    law : IntegerLaw
        The noise.
    sensitivity : int
        Δ ≥ 1, in the noise's integer steps.
    compositions : int
        Releases, ≥ 1.
    alpha : array_like, optional
        Type I errors (default :func:`~dpstudio.engine.tradeoff.alpha_grid`).
    label : str, optional
        The curve's label (default: the law's, with Δ).

    Returns
    -------
    TradeoffCurve

    Raises
    ------
    ParameterError
        For a bad Δ, k or ``alpha``, or a support too large.
    """
    k = _check_int(compositions, "the number of compositions", 1)
    shift = _check_int(sensitivity, "the sensitivity (integer steps)", 1)
    a = _check_alpha(alpha)
    name = label or f"{law.label}, Δ = {shift}"
    if k > 1:
        name += f", composed {k}×"
    cut = f"support cut where less than {TAIL_MASS:g} of each law lies outside (pessimistic)"
    if k == 1 or law.affine_loss:
        summed = sum_of_shares(law, k, reach=shift * k) if k > 1 else law
        ka, kb = shifted_knots(summed, shift * k)
        how = "Neyman–Pearson threshold tests on the noise's pmf"
        if k > 1:
            how += f" (the loss is affine, so {k} runs are the {k}-fold sum shifted by {k}Δ)"
        if not summed.exact:
            how += ", the pmf an FFT convolution power"
        return TradeoffCurve(a, np.interp(a, ka, kb), name, True, f"{how}; {cut}",
                             knots=(ka, kb))
    pld = integer_noise_pld(law, shift, k)
    curve = profile_to_tradeoff(pld.delta, a, label=name)
    return TradeoffCurve(a, curve.beta, name, False,
                         "privacy-loss distribution of the windowed pair composed, then "
                         + curve.note, evaluator=curve.evaluator)
