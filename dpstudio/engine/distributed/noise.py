"""Distributed noise: each client adds a share so that the *sum* carries central-model noise.

Two families, both on the integers (values are first rounded to a grid of 1/p steps):

``"skellam"`` — each of the clients adds Sk(v/N) = Pois(v/2N) − Pois(v/2N), where N is
    the number of clients the noise is planned for. Independent Skellams add up to a
    Skellam, so S surviving clients give the sum exactly Sk(v·S/N), of variance v·S/N
    (Agarwal, Kairouz & Liu 2021, "The Skellam Mechanism"). Its privacy is computed
    **exactly**, not through their RDP bound, in
    :mod:`~dpstudio.engine.distributed.skellam` (whose functions this module
    re-exports).

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

from dpstudio.engine import sampling
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.distributed.skellam import (
    MAX_SKELLAM_VARIANCE,
    skellam_delta,
    skellam_pmf,
    skellam_tail_bound,
    skellam_variance,
)
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
    """Total variation between :func:`poisson`'s law for mean λ and Pois(λ) (a bound).

    Parameters
    ----------
    lam : float
        The Poisson mean λ.

    Returns
    -------
    float
        An upper bound on the total variation (about 1e-16 or less).
    """
    return _poisson_support(float(lam))[2]


def poisson(lam: float, size: int, source: Source) -> np.ndarray:
    """``size`` draws of Pois(λ), from ``source``.

    The draws follow exactly a law within :func:`poisson_tv` of Pois(λ) in total
    variation (see the module doc).

    Parameters
    ----------
    lam : float
        The mean λ, in [0, 1e12].
    size : int
        Number of draws.
    source : Source
        The random source.

    Returns
    -------
    numpy.ndarray
        int64 draws.

    Raises
    ------
    ParameterError
        For a mean outside [0, 1e12].
    """
    lam = float(lam)
    if not math.isfinite(lam) or lam < 0 or lam > 1e12:
        raise ParameterError(f"Poisson mean must lie in [0, 1e12], got {lam!r}")
    if lam == 0:
        return np.zeros(int(size), dtype=np.int64)
    lo, logw, _ = _poisson_support(lam)
    return lo + sampling.categorical_log(logw, int(size), source)


# ------------------------------------------------------------- distributed discrete Gaussian


# τ: terms k ≤ _TAU_HEAD (at least 16·2π²σ²) are summed one by one, the rest bounded
# above by an integral (see kls21_tau); _TAU_SERIES terms of its series leave < 1e-40.
_TAU_HEAD = 4096
_TAU_SERIES = 24


def kls21_tau(sigma_client: float, clients: int) -> float:
    """An upper bound on τ = 10 Σ_{k=1}^{n−1} exp(−2π²σ² k/(k+1)) of KLS21 Theorem 1,
    within about 3e-12 relative of τ, in time independent of n.

    τ enters ε̃ additively, so only an overestimate is safe. With c = 2π²σ² and j = k + 1
    the terms are e^{−c}·g(j), g(x) = e^{c/x}. The first ``h = max(4096, ⌈16c⌉)`` terms are
    summed exactly (``math.fsum``). g is convex on x > 0, so each further term is at most
    the integral of g over [j − ½, j + ½] (the midpoint rule underestimates a convex
    function's integral), and the rest is at most ∫_{h+3/2}^{n+1/2} g, expanded as
    (H − L) + c ln(H/L) + Σ_{m≥2} c^m (L^{1−m} − H^{1−m})/(m!(m−1)); with x = c/L ≤ 1/16
    the series after M terms is below L·x^{M+1}/((M+1)!(1 − x)), which is added. The
    result is finally raised by 1e-12 + 16c·2⁻⁵³ relative, more than the floating-point
    error of the sums and exponentials (all terms are positive; an exponent's rounding
    moves e^{−c·…} by at most a few c ulps). Where e^{−c} underflows (c > 745, σ > 6.1)
    the terms lost are below 1e-300: adding them could not change ε̃ in floating point.

    Parameters
    ----------
    sigma_client : float
        σ_c of each client's discrete Gaussian share.
    clients : int
        n, the shares summed.

    Returns
    -------
    float
        The bound on τ (0 for fewer than two clients).
    """
    n = int(clients)
    if n < 2:
        return 0.0
    c = 2.0 * math.pi**2 * float(sigma_client) ** 2
    head = max(_TAU_HEAD, math.ceil(16.0 * c))
    k = np.arange(1, min(n, head + 1), dtype=np.float64)  # k ≤ head: j = k + 1 ≤ head + 1
    total = math.fsum(np.exp(-c * k / (k + 1.0)).tolist())
    if n - 1 > head:  # j = head + 2 … n, by the midpoint bound
        lo, hi = head + 1.5, n + 0.5
        x = c / lo
        integral = (hi - lo) + c * math.log1p((hi - lo) / lo)
        for m in range(2, _TAU_SERIES + 1):
            integral += (c**m / (math.factorial(m) * (m - 1))
                         * (lo ** (1 - m) - hi ** (1 - m)))
        integral += lo * x ** (_TAU_SERIES + 1) / math.factorial(_TAU_SERIES + 1) / (1.0 - x)
        total += math.exp(-c) * integral
    return 10.0 * total * (1.0 + 1e-12 + 16.0 * c * 2.0**-53)


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε of ρ-zCDP at δ: min over α > 1 of αρ + (ln(1/δ) + (α−1)ln(1−1/α) − ln α)/(α−1).

    The conversion of Canonne, Kamath & Steinke 2020, minimized on a fine grid of α (any
    α gives a valid bound).

    Parameters
    ----------
    rho : float
        ρ ≥ 0.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε ≥ 0.
    """
    a = _ALPHAS
    vals = a * rho + (math.log(1.0 / delta) + (a - 1.0) * np.log1p(-1.0 / a) - np.log(a)) / (
        a - 1.0)
    return float(max(np.min(vals), 0.0))


def distributed_gaussian_epsilon(sigma_client: float, clients: int, sensitivity: float,
                                 delta: float) -> float:
    """ε at δ of the sum of ``clients`` shares N_Z(0, σ_c²) for an integer sum.

    KLS21 Theorem 1 in one dimension, then zCDP → (ε, δ) (:func:`zcdp_epsilon`).

    Parameters
    ----------
    sigma_client : float
        σ_c of each share, ≥ 1/2.
    clients : int
        Shares summed.
    sensitivity : float
        Δ of the integer sum, in grid steps.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε.

    Raises
    ------
    ParameterError
        For σ_c below 1/2, where the theorem does not apply.
    """
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

    Attributes
    ----------
    family : str
        ``"skellam"`` or ``"gaussian"`` (:data:`FAMILIES`).
    per_client : float
        The per-client variance (Skellam) or σ_c (discrete Gaussian).
    planned_clients : int
        The shares the adversary does not know: under secure aggregation, the honest
        survivors, not every client.
    sensitivity : int
        Δ of the integer sum, in grid steps.
    epsilon, delta : float
        The guarantee of ``planned_clients`` shares.
    """

    family: str
    per_client: float
    planned_clients: int
    sensitivity: int
    epsilon: float
    delta: float

    @property
    def label(self) -> str:
        """The family's name for people."""
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
        """The plan as a JSON-ready dictionary."""
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

    Parameters
    ----------
    family : str
        ``"skellam"`` or ``"gaussian"``.
    sensitivity : int
        Δ of the integer sum, in grid steps.
    epsilon, delta : float
        The guarantee; δ > 0.
    clients : int
        The shares the guarantee rests on (the honest survivors), ≥ 1.

    Returns
    -------
    DistributedNoise

    Raises
    ------
    ParameterError
        For a bad family, ε, δ or number of clients, or a δ too small for the shares'
        sampling error.
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
                # δ here may be the part a protocol gives the noise (the cloak keeps 10%
                # for its encoding): say it is the shares' δ, and what would help.
                raise ParameterError(
                    f"the δ given to the noise shares ({d:g}) is too small for {n:,} clients "
                    f"at ε = {eps:g}: drawing the shares costs δ that grows with e^ε (lower ε "
                    "or raise δ)")
            v = skellam_variance(sens, eps, d - cut)
            actual = _sampling_delta(v / n, n, eps)
            if actual <= cut:
                return DistributedNoise("skellam", v / n, n, sens, eps, d)
            cut = 2.0 * actual
        raise ParameterError(f"the noise shares' sampling error does not fit δ = {d:g} at "
                             f"ε = {eps:g} (lower ε or raise δ)")
    if family == "gaussian":
        return DistributedNoise("gaussian", distributed_gaussian_sigma(sens, eps, d, n), n,
                                sens, eps, d)
    raise ParameterError(f"noise must be one of {', '.join(FAMILIES)}; got {family!r}")
