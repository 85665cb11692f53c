"""Distributed noise: each client adds a share so that the *sum* carries central-model noise.

Two families, both on the integers (values are first rounded to a grid of 1/p steps):

``"skellam"`` — each of the clients adds Sk(v/N) = Pois(v/2N) − Pois(v/2N), where N is
    the number of clients the noise is planned for. Independent Skellams add up to a
    Skellam, so S surviving clients give the sum exactly Sk(v·S/N), of variance v·S/N
    (Agarwal, Kairouz & Liu 2021, "The Skellam Mechanism"). Its privacy is computed
    **exactly**, not through their RDP bound: the symmetric Skellam of variance v has
    pmf P(k) = e^{−v} I_|k|(v) (modified Bessel function; ``scipy.special.ive``) and is
    log-concave, so δ(ε) = Σ_k max(0, P(k) − e^ε P(k − Δ)) is summed on a window around
    0 whose outside mass, bounded by the Chernoff bound
    P(X ≥ t) ≤ exp(v(cosh λ − 1) − λt) at λ = asinh(t/v), is added in full.

``"gaussian"`` — each client adds N_Z(0, σ_c²). The sum of S such shares is not a discrete
    Gaussian, but Kairouz, Liu & Steinke (ICML 2021, "The Distributed Discrete Gaussian
    Mechanism for Federated Learning with Secure Aggregation"), Theorem 1, bound how close
    it is: for σ_c ≥ 1/2, a one-dimensional integer sum with sensitivity Δ is
    ½ε̃²-concentrated DP with

        ε̃ = min( √(Δ²/(Sσ_c²) + τ/2),  Δ/(√S σ_c) + τ ),
        τ = 10 · Σ_{k=1}^{S−1} exp(−2π²σ_c² · k/(k+1)),

    and ρ-zCDP gives (ε, δ)-DP with ε = min_α αρ + (ln(1/δ) + (α−1)ln(1 − 1/α) − ln α)/(α−1)
    (the Rényi-to-(ε, δ) conversion of Canonne, Kamath & Steinke 2020; any α > 1 gives a
    valid bound, we minimize on a fine grid). The sum's variance is S·Var(N_Z(0, σ_c²)), that
    of the central discrete Gaussian of σ² = Sσ_c² up to a relative e^{−2π²σ_c²}.

Noise is planned for N clients: the shares of any N of them give (ε, δ). Calibrate for
the clients whose shares are sure to reach the sum *and* stay unknown to the adversary —
under secure aggregation, the honest clients left after the planned dropouts, since
clients colluding with the server hand it their shares
(:mod:`~dpstudio.engine.distributed.secure_sum` does so). More shares only add noise
(post-processing); with fewer, :meth:`DistributedNoise.guarantee` gives the weaker ε.

Poisson draws use :func:`dpstudio.engine.sampling.categorical_log` on the support of
Pois(λ) cut where the remaining mass is below 2⁻¹⁰⁰, with log-weights accumulated in
extended precision: the draws follow exactly a law whose total variation from Pois(λ) is
bounded (:func:`poisson_tv`, about 1e-16 per draw); the 2·S draws of S clients add
(1 + e^ε)·2·S·tv to δ, which the calibration takes out of the δ budget first.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from dpstudio.engine import sampling
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import Source

__all__ = [
    "FAMILIES",
    "DistributedNoise",
    "calibrate_noise",
    "distributed_gaussian_epsilon",
    "kls21_tau",
    "poisson",
    "poisson_tv",
    "skellam_delta",
    "skellam_pmf",
    "skellam_tail_bound",
    "zcdp_epsilon",
]

FAMILIES = ("skellam", "gaussian")

# Mass of Pois(λ) beyond the sampled support.
_POISSON_CUT = 2.0**-100
# Window of the exact Skellam δ: outside mass below this (added to δ in full).
_SKELLAM_WINDOW_TAIL = 1e-40
# Relative allowance for floating-point error in the Skellam δ sums (Bessel values carry
# relative errors of a few 1e-16; the sum of positive terms adds a few ulps).
_FP_REL = 1e-12
# Largest Skellam variance whose pmf scipy evaluates (ive returns NaN past ~1e9).
MAX_SKELLAM_VARIANCE = 1e9
# Smallest per-client σ for which KLS21's Theorem 1 is stated (σ ≥ 1/2); we keep σ_c ≥ 1.
_MIN_CLIENT_SIGMA = 1.0
# Rényi orders α used in the zCDP → (ε, δ) conversion (any α > 1 gives a valid bound).
_ALPHAS = np.exp(np.linspace(math.log(1.0 + 1e-4), math.log(1e7), 6000))


# ------------------------------------------------------------------------------ Poisson


@functools.lru_cache(maxsize=64)
def _poisson_support(lam: float) -> tuple[int, np.ndarray, float]:
    """(lowest k, log-weights, total-variation bound) of Pois(λ) on a support holding all
    but 2⁻¹⁰⁰ of its mass (Chernoff bounds of the Poisson law).

    The log-weights are ln P(k)/P(k₀) relative to k₀ = ⌊λ⌋, accumulated as sums of
    ln(λ/j) in extended precision (``np.longdouble``) — not k·ln λ − ln k!, whose two
    large terms cancel — then rounded to float64, which :func:`sampling.categorical_log`
    honours exactly. The bound returned covers the cut mass, the rounding of each weight
    (|error| ≤ ε₆₄·|ln w| + (k − k₀)·ε_ld·(3 + |ln w|)) weighted by the pmf, and the
    renormalization: it is the total variation between the law sampled and Pois(λ).
    """
    if lam <= 0:
        return 0, np.zeros(1), 0.0
    # Chernoff: P(X ≥ λ + t) ≤ exp(−t²/(2(λ + t/3))), P(X ≤ λ − t) ≤ exp(−t²/(2λ)).
    log_cut = math.log(_POISSON_CUT / 2)
    t_hi = (-log_cut / 3) + math.sqrt((log_cut / 3) ** 2 - 2.0 * lam * log_cut)
    t_lo = math.sqrt(-2.0 * lam * log_cut)
    lo = max(0, math.floor(lam - t_lo))
    hi = math.ceil(lam + t_hi) + 1
    k0 = min(max(math.floor(lam), lo), hi)
    ld = np.longdouble
    lam_ld = ld(lam)
    up = np.cumsum(np.log(lam_ld / np.arange(k0 + 1, hi + 1, dtype=ld)))
    down = np.cumsum(-np.log(lam_ld / np.arange(k0, lo, -1, dtype=ld)))  # k = k0−1 … lo
    logw_ld = np.concatenate([down[::-1], np.zeros(1, dtype=ld), up])
    logw = logw_ld.astype(np.float64)
    steps = np.abs(np.arange(lo, hi + 1, dtype=np.float64) - k0)
    eps_ld = float(np.finfo(ld).eps)
    mag = np.abs(logw)
    err = 2.0**-53 * mag + steps * eps_ld * (3.0 + mag)
    pmf = np.exp(logw - logw.max())
    pmf /= pmf.sum()
    tv = _POISSON_CUT + 2.0 * float(np.dot(pmf, np.expm1(err))) + 1e-300
    logw.setflags(write=False)
    return lo, logw, tv


def poisson_tv(lam: float) -> float:
    """Total variation between :func:`poisson`'s law for mean λ and Pois(λ) (a bound)."""
    return _poisson_support(float(lam))[2]


def poisson(lam: float, size: int, source: Source) -> np.ndarray:
    """``size`` draws of Pois(λ) (int64), from ``source`` (see the module doc for the
    exactness statement)."""
    lam = float(lam)
    if not math.isfinite(lam) or lam < 0 or lam > 1e12:
        raise ParameterError(f"Poisson mean must lie in [0, 1e12], got {lam!r}")
    if lam == 0:
        return np.zeros(int(size), dtype=np.int64)
    lo, logw, _ = _poisson_support(lam)
    return lo + sampling.categorical_log(logw, int(size), source)


# ------------------------------------------------------------------------------ Skellam


def skellam_pmf(k, variance: float) -> np.ndarray:
    """pmf of the symmetric Skellam law of the given variance: e^{−v} I_|k|(v)."""
    return special.ive(np.abs(np.asarray(k, dtype=np.float64)), float(variance))


def skellam_tail_bound(t, variance: float):
    """Chernoff bound on P(X ≥ t) (= P(X ≤ −t)) for the symmetric Skellam of variance v:
    exp(√(v² + t²) − v − t·asinh(t/v))."""
    v = float(variance)
    tt = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore"):
        out = np.exp(np.sqrt(v * v + tt * tt) - v - tt * np.arcsinh(tt / v))
    return np.where(tt <= 0, 1.0, np.minimum(out, 1.0))


def _skellam_window(variance: float, sensitivity: int,
                    tail: float = _SKELLAM_WINDOW_TAIL) -> int:
    """W with P(|X| > W − Δ) ≤ ``tail`` (1e-40 unless told) by the Chernoff bound."""
    if not 0 < variance <= MAX_SKELLAM_VARIANCE:
        raise ParameterError(
            f"Skellam noise of variance {variance:.3g} grid steps² is beyond what this "
            f"implementation evaluates ({MAX_SKELLAM_VARIANCE:g}); use fewer precision bits")
    # Start from the Gaussian tail's width and widen by 10% until the bound holds.
    w = max(int(math.ceil(math.sqrt(2.0 * variance * math.log(2.0 / tail)) + 20)), 1)
    while 2.0 * float(skellam_tail_bound(w, variance)) > tail:
        w = int(math.ceil(1.1 * w)) + 1
    return w + int(sensitivity)


def skellam_delta(variance: float, sensitivity: int, epsilon: float,
                  tail: float = _SKELLAM_WINDOW_TAIL) -> float:
    """Exact δ(ε) of adding symmetric Skellam noise of variance v to an integer statistic
    with integer sensitivity Δ (an upper bound: the mass outside the window is added).

    The privacy loss L(k) = ln P(k) − ln P(k − Δ) decreases in k (log-concavity), so only
    k below the point where it crosses ε contribute; the window stops there. The window
    starts where the Chernoff bound puts at most ``tail`` of the mass outside it, which
    is added to δ in full (a wider window only tightens the bound).
    """
    v, sens, eps = float(variance), int(sensitivity), float(epsilon)
    w = _skellam_window(v, sens, tail)
    # L(k) ≈ Δ(Δ − 2k)/(2v) for a near-Gaussian law: contributions stop near
    # k* = Δ/2 − εv/Δ; keep a margin past it. If the loss is still above ε at the stop,
    # the full window is summed instead, so the margin only matters for speed.
    stop = min(w, int(math.ceil(sens / 2.0 - eps * v / sens + 2.0 * math.sqrt(v)
                                + 2 * sens + 16)))
    k = np.arange(-w - sens, stop + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logpmf = np.log(skellam_pmf(k, v))
    logp, logq = logpmf[sens:], logpmf[:-sens] if sens else logpmf
    ok = np.isfinite(logp) & np.isfinite(logq)
    gap = -np.expm1(np.minimum(eps - (logp[ok] - logq[ok]), 0.0))
    inside = float(np.sum(np.exp(logp[ok]) * gap))
    if stop < w and gap.size and gap[-1] > 0:  # the loss was still above ε at the stop
        return skellam_delta_full(v, sens, eps, tail)
    # Mass of P outside the window and wherever the pmf underflowed (both tiny).
    lost = 2.0 * float(skellam_tail_bound(w - sens, v)) + float(np.sum(np.exp(logp[~ok])))
    return min(1.0, (inside + lost) * (1.0 + _FP_REL) + 1e-300)


def skellam_delta_full(variance: float, sensitivity: int, epsilon: float,
                       tail: float = _SKELLAM_WINDOW_TAIL) -> float:
    """:func:`skellam_delta` summed over the whole window (no early stop)."""
    v, sens, eps = float(variance), int(sensitivity), float(epsilon)
    w = _skellam_window(v, sens, tail)
    k = np.arange(-w - sens, w + sens + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logpmf = np.log(skellam_pmf(k, v))
    logp, logq = logpmf[sens:], logpmf[:-sens] if sens else logpmf
    ok = np.isfinite(logp) & np.isfinite(logq)
    gap = -np.expm1(np.minimum(eps - (logp[ok] - logq[ok]), 0.0))
    inside = float(np.sum(np.exp(logp[ok]) * gap))
    lost = 2.0 * float(skellam_tail_bound(w - sens, v)) + float(np.sum(np.exp(logp[~ok])))
    return min(1.0, (inside + lost) * (1.0 + _FP_REL) + 1e-300)


# Relative width of the bracket skellam_variance returns the upper end of.
_VARIANCE_REL = 1e-7


@functools.lru_cache(maxsize=256)
def skellam_variance(sensitivity: int, epsilon: float, delta: float) -> float:
    """Smallest total Skellam variance (to 1e-7 relative) meeting (ε, δ) for sensitivity Δ.

    Returns the upper end hi of a bracket [lo, hi], hi − lo ≤ 1e-7·hi, with
    δ(hi) ≤ δ < δ(lo) by :func:`skellam_delta` (decreasing in v). The bracket is found by
    secant steps on ln δ against ln v from the analytic Gaussian σ² (ln δ is smooth and
    nearly linear there: about five evaluations), then checked on both sides; bisection
    takes over if the secant steps do not close it. δ is evaluated on a window whose
    outside mass is at most min(10⁻¹⁰, 10⁻⁹δ) (added in full, so every value is still an
    upper bound, and v moves by ~10⁻¹⁰ relative).
    """
    from dpstudio.engine.calibration import analytic_gaussian_sigma

    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, required=True)
    sens = int(sensitivity)
    if sens < 1:
        raise ParameterError("the statistic's sensitivity must be at least one grid step")
    tail = min(1e-10, 1e-9 * d)
    lo, hi = 0.0, math.inf  # δ(lo) > d ≥ δ(hi), as far as evaluated

    def excess(v: float) -> float:
        """ln δ(v) − ln d, recording v on its side of the bracket."""
        nonlocal lo, hi
        if v > MAX_SKELLAM_VARIANCE:
            _skellam_window(v, sens)  # raises the one-line error
        f = math.log(skellam_delta(v, sens, eps, tail)) - math.log(d)
        if f <= 0:
            hi = min(hi, v)
        else:
            lo = max(lo, v)
        return f

    def closed() -> bool:
        return hi < math.inf and hi - lo <= _VARIANCE_REL * hi

    guess = max(analytic_gaussian_sigma(sens, eps, d) ** 2, 1e-2)
    x0, f0 = math.log(guess), excess(guess)
    x1 = x0 + (1e-3 if f0 > 0 else -1e-3)  # the two laws are close once v ≫ 1
    f1 = excess(math.exp(x1))
    for _ in range(8):
        if closed() or f1 == f0 or not (math.isfinite(f0) and math.isfinite(f1)):
            break
        step = -f1 * (x1 - x0) / (f1 - f0)
        step = max(-0.5, min(0.5, step))  # a secant step never more than ×e^±0.5
        x0, f0 = x1, f1
        x1 = x1 + step
        if abs(step) < 0.25 * _VARIANCE_REL and hi < math.inf and lo > 0:
            # At the root to ~1e-8: evaluate just past it on the side still open.
            v = math.exp(x1)
            excess(v * (1 + 0.4 * _VARIANCE_REL) if hi - v > v * 0.4 * _VARIANCE_REL
                   else v * (1 - 0.4 * _VARIANCE_REL))
            if closed():
                break
        f1 = excess(math.exp(x1))
    # Bisection from whatever bracket the secant steps left (widened if one side is open).
    if hi == math.inf:
        hi = max(lo, guess) * 1.25
        while excess(hi) > 0:
            hi *= 1.25
    if lo == 0.0:
        lo = hi / 1.25
        while lo > 1e-6 and excess(lo) <= 0:
            lo /= 1.25
    while not closed():
        excess(0.5 * (lo + hi))
    return hi


# ------------------------------------------------------------- distributed discrete Gaussian


def kls21_tau(sigma_client: float, clients: int) -> float:
    """τ = 10 Σ_{k=1}^{n−1} exp(−2π²σ² k/(k+1)) of KLS21 Theorem 1."""
    n = int(clients)
    if n < 2:
        return 0.0
    k = np.arange(1, n, dtype=np.float64)
    return float(10.0 * np.sum(np.exp(-2.0 * math.pi**2 * sigma_client**2 * k / (k + 1.0))))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε of ρ-zCDP at δ: min over α > 1 of αρ + (ln(1/δ) + (α−1)ln(1−1/α) − ln α)/(α−1)."""
    a = _ALPHAS
    vals = a * rho + (math.log(1.0 / delta) + (a - 1.0) * np.log1p(-1.0 / a) - np.log(a)) / (
        a - 1.0)
    return float(max(np.min(vals), 0.0))


def distributed_gaussian_epsilon(sigma_client: float, clients: int, sensitivity: float,
                                 delta: float) -> float:
    """ε at δ of the sum of ``clients`` shares N_Z(0, σ_c²) for an integer sum with
    sensitivity Δ (KLS21 Theorem 1, one dimension, then zCDP → (ε, δ))."""
    s, n, sens = float(sigma_client), int(clients), float(sensitivity)
    if s < 0.5:
        raise ParameterError("KLS21's bound needs a per-client σ of at least 1/2")
    tau = kls21_tau(s, n)
    eps_tilde = min(math.sqrt(sens * sens / (n * s * s) + 0.5 * tau),
                    sens / (math.sqrt(n) * s) + tau)
    return zcdp_epsilon(0.5 * eps_tilde * eps_tilde, delta)


@functools.lru_cache(maxsize=256)
def distributed_gaussian_sigma(sensitivity: int, epsilon: float, delta: float, clients: int
                               ) -> float:
    """Smallest per-client σ_c (≥ 1, to 1e-9 relative) whose sum over ``clients`` shares
    meets (ε, δ) by :func:`distributed_gaussian_epsilon`; upper end of the bracket."""
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, required=True)
    n = int(clients)

    def meets(s: float) -> bool:
        return distributed_gaussian_epsilon(s, n, sensitivity, d) <= eps

    lo = hi = max(_MIN_CLIENT_SIGMA, sensitivity * math.sqrt(2 * math.log(1.25 / d))
                  / (eps * math.sqrt(n)))
    while not meets(hi):
        lo, hi = hi, hi * 1.5
    if lo == hi:
        while lo > _MIN_CLIENT_SIGMA and meets(lo):
            hi, lo = lo, max(lo / 1.5, _MIN_CLIENT_SIGMA)
        if lo == hi:
            return hi
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return hi


# ------------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class DistributedNoise:
    """Noise shares planned so that the sum over ``planned_clients`` clients meets
    (ε, δ) for an integer statistic of sensitivity ``sensitivity`` (grid steps).

    ``planned_clients`` counts the shares the adversary does not know: under secure
    aggregation, the honest survivors, not every client.

    ``per_client`` is the per-client variance (Skellam) or σ_c (discrete Gaussian).
    """

    family: str
    per_client: float
    planned_clients: int
    sensitivity: int
    epsilon: float
    delta: float

    @property
    def label(self) -> str:
        return "Skellam" if self.family == "skellam" else "discrete Gaussian"

    def client_variance(self) -> float:
        """Variance of one client's share (grid steps²)."""
        if self.family == "skellam":
            return self.per_client
        return sampling.discrete_gaussian_variance(self.per_client)

    def total_variance(self, survivors: int) -> float:
        """Variance of the sum of ``survivors`` shares (grid steps²)."""
        return int(survivors) * self.client_variance()

    def shares(self, clients: int, source: Source) -> np.ndarray:
        """One share per client (int64)."""
        n = int(clients)
        if self.family == "skellam":
            lam = self.per_client / 2.0
            return poisson(lam, n, source) - poisson(lam, n, source)
        return sampling.discrete_gaussian(self.per_client, n, source)

    def guarantee(self, survivors: int) -> tuple[float, float]:
        """(ε, δ) of the noise that ``survivors`` clients actually add.

        At or above the planned number it is the planned (ε, δ) (more noise only helps);
        below it, ε is recomputed at the planned δ.
        """
        s = int(survivors)
        if s < 1:
            raise ParameterError("no client survived: nothing to release")
        if s >= self.planned_clients:
            return self.epsilon, self.delta
        if self.family == "skellam":
            v = self.total_variance(s)

            def ok(e: float) -> bool:
                return (skellam_delta(v, self.sensitivity, e)
                        + _sampling_delta(self.per_client, s, e)) <= self.delta

            lo, hi = 0.0, self.epsilon
            while not ok(hi):
                lo, hi = hi, 2.0 * hi
                if hi > 1e4:
                    return math.inf, self.delta
            while hi - lo > 1e-9 * hi:
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if ok(mid) else (mid, hi)
            return hi, self.delta
        return (distributed_gaussian_epsilon(self.per_client, s, self.sensitivity, self.delta),
                self.delta)

    def tail_bound(self, survivors: int, beta: float) -> int:
        """Integer h with P(|sum of ``survivors`` shares| > h) ≤ β (rigorous)."""
        s, b = int(survivors), float(beta)
        if self.family == "skellam":
            v = self.total_variance(s)
            # Chernoff: the smallest h with 2·P(X ≥ h + 1) ≤ β by the bound.
            h = max(1, int(math.sqrt(v)))
            while 2.0 * float(skellam_tail_bound(h + 1, v)) > b:
                h *= 2
            lo_h, hi_h = h // 2, h
            while hi_h - lo_h > 1:
                mid = (lo_h + hi_h) // 2
                if 2.0 * float(skellam_tail_bound(mid + 1, v)) <= b:
                    hi_h = mid
                else:
                    lo_h = mid
            if b >= 1e-12 and v <= MAX_SKELLAM_VARIANCE:  # exact quantile, ≤ Chernoff's h
                k = np.arange(0, hi_h + 1, dtype=np.float64)
                pmf = skellam_pmf(k, v)
                inside = pmf[0] + 2.0 * np.cumsum(pmf[1:])  # P(|X| ≤ h), h = 1, 2, ...
                inside = np.concatenate([[pmf[0]], inside])
                need = 1.0 - b * (1.0 - 1e-9)
                idx = int(np.searchsorted(inside, need, side="left"))
                if idx < inside.size:
                    return idx
            return hi_h
        # N_Z(0, σ²) is σ²-subgaussian (Canonne, Kamath & Steinke 2020): S shares sum to
        # an Sσ_c²-subgaussian variable.
        return int(math.ceil(math.sqrt(2.0 * s * self.per_client**2 * math.log(2.0 / b))))

    def tail_probability(self, survivors: int, margin: int) -> float:
        """Upper bound on P(|sum of ``survivors`` shares| > margin): Chernoff for Skellam,
        subgaussian (variance proxy Sσ_c²) for the discrete Gaussian."""
        s, h = int(survivors), int(margin)
        if h < 0:
            return 1.0
        if self.family == "skellam":
            return float(min(1.0, 2.0 * skellam_tail_bound(h + 1, self.total_variance(s))))
        var = s * self.per_client**2
        return float(min(1.0, 2.0 * math.exp(-(h + 1) ** 2 / (2.0 * var))))

    def to_dict(self) -> dict:
        return {"family": self.family, "per_client": self.per_client,
                "planned_clients": self.planned_clients, "sensitivity": self.sensitivity,
                "epsilon": self.epsilon, "delta": self.delta}


def _sampling_delta(per_client_variance: float, draws_clients: int, epsilon: float) -> float:
    """δ charged for sampling the Skellam shares of ``draws_clients`` clients: (1 + e^ε)
    times the total variation of their 2·S Poisson draws from the exact law."""
    return (1.0 + math.exp(epsilon)) * 2.0 * draws_clients * poisson_tv(per_client_variance / 2)


def calibrate_noise(family: str, sensitivity: int, epsilon: float, delta: float,
                    clients: int) -> DistributedNoise:
    """Shares for ``clients`` clients whose sum meets (ε, δ) at integer sensitivity Δ.

    Skellam: the total variance from the exact δ, with the Poisson cut's total variation
    taken out of the δ budget first. Gaussian: σ_c from KLS21 Theorem 1.
    """
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, required=True)
    n = int(clients)
    if n < 1:
        raise ParameterError("distributed noise needs at least one client")
    sens = int(sensitivity)
    if family == "skellam":
        # The shares' sampling error (total variation per draw, ~1e-16) is charged to δ;
        # it depends on λ = v/2n only weakly, so one refinement settles it.
        cut = (1.0 + math.exp(eps)) * 2.0 * n * 1e-15
        for _ in range(4):
            if cut >= d / 2:
                raise ParameterError(f"δ = {d:g} is too small for {n} clients' Skellam shares")
            v = skellam_variance(sens, eps, d - cut)
            actual = _sampling_delta(v / n, n, eps)
            if actual <= cut:
                return DistributedNoise("skellam", v / n, n, sens, eps, d)
            cut = 2.0 * actual
        raise ParameterError("could not account for the Skellam shares' sampling error")
    if family == "gaussian":
        return DistributedNoise("gaussian", distributed_gaussian_sigma(sens, eps, d, n), n,
                                sens, eps, d)
    raise ParameterError(f"noise must be one of {', '.join(FAMILIES)}; got {family!r}")
