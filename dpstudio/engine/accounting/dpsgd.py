"""DP-SGD accounting: T steps of the Poisson-subsampled Gaussian mechanism.

Three accountants: ``pld`` (privacy-loss distribution, a tight upper bound), ``rdp``
(Rényi DP, a looser upper bound) and ``gdp`` (the central-limit approximation of Gaussian
DP, which is *not* a guarantee and is flagged ``approximate=True``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache

from dpstudio.engine.accounting.gdp import gdp_epsilon, gdp_subsampled_gaussian_clt
from dpstudio.engine.accounting.pld import DEFAULT_VALUE_DISCRETIZATION_INTERVAL, PLD
from dpstudio.engine.accounting.rdp import rdp_epsilon, rdp_subsampled_gaussian
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import count, positive
from dpstudio.engine.checks import sample_rate as _check_rate
from dpstudio.engine.errors import ParameterError

__all__ = ["DPSGD_METHODS", "AccountingResult", "dpsgd_epsilon", "dpsgd_sigma"]

DPSGD_METHODS = ("pld", "rdp", "gdp")
_SIGMA_RANGE = (1e-2, 1e4)


@dataclass(frozen=True)
class AccountingResult:
    """An (ε, δ) from one accountant.

    ``approximate`` is True when the value is an estimate that may understate the privacy
    loss (the GDP central-limit approximation), False when it is a guarantee.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee (or estimate) for the whole run.
    method : str
        The accountant that produced it (one of ``DPSGD_METHODS``).
    approximate : bool
        True for an estimate that may understate the loss.
    sigma : float
        Noise multiplier σ (noise std over the clipping norm).
    sample_rate : float
        Poisson sampling probability q.
    steps : int
        Number of noisy steps.
    """

    epsilon: float
    delta: float
    method: str
    approximate: bool
    sigma: float
    sample_rate: float
    steps: int

    def to_dict(self) -> dict:
        """The fields as a plain dict (for JSON)."""
        return asdict(self)


def _method(method: str) -> str:
    if method not in DPSGD_METHODS:
        raise ParameterError(f"method must be one of {', '.join(DPSGD_METHODS)}, got {method!r}")
    return method


# Pure and hashable, like _sigma below: a federated audit re-plans the same (σ, q, T)
# for each of its trainings, and each PLD composition costs ~0.1 s.
@lru_cache(maxsize=1024)
def _epsilon(sigma: float, q: float, steps: int, delta: float, method: str,
             interval: float) -> float:
    if method == "pld":
        pld = PLD.subsampled_gaussian(sigma, q, value_discretization_interval=interval)
        return pld.self_compose(steps).epsilon(delta)
    if method == "rdp":
        return rdp_epsilon(rdp_subsampled_gaussian(sigma, q) * steps, delta)
    return gdp_epsilon(gdp_subsampled_gaussian_clt(sigma, q, steps).mu, delta)


def dpsgd_epsilon(sigma: float, sample_rate: float, steps: int, delta: float,
                  method: str = "pld", *,
                  value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL
                  ) -> AccountingResult:
    """ε after ``steps`` DP-SGD steps, add/remove neighbours, for a given δ.

    Parameters
    ----------
    sigma : float
        Noise multiplier σ (noise std over the clipping norm), > 0.
    sample_rate : float
        Poisson sampling probability q in (0, 1] (batch size / dataset size).
    steps : int
        Number of steps T ≥ 1.
    delta : float
        δ in (0, 1).
    method : {"pld", "rdp", "gdp"}
        Accountant; "gdp" is the CLT approximation (``approximate=True``).
    value_discretization_interval : float
        Loss grid step for "pld".

    Returns
    -------
    AccountingResult
    """
    s = positive("σ", sigma)
    q = _check_rate(sample_rate)
    t = count("steps", steps)
    d = validate_delta(delta, required=True)
    m = _method(method)
    eps = _epsilon(s, q, t, d, m, value_discretization_interval)
    return AccountingResult(epsilon=eps, delta=d, method=m, approximate=m == "gdp",
                            sigma=s, sample_rate=q, steps=t)


def dpsgd_sigma(target_epsilon: float, delta: float, sample_rate: float, steps: int,
                method: str = "pld", *, rel_tol: float = 1e-4,
                value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL
                ) -> AccountingResult:
    """Smallest noise multiplier σ (to ``rel_tol``) whose ε meets ``target_epsilon``.

    Bisection on σ with the chosen accountant; the σ returned is the upper end of the
    final bracket, at which the accountant's ε was computed and is ≤ the target.

    Parameters
    ----------
    target_epsilon : float
        ε > 0 to meet.
    delta : float
        δ in (0, 1).
    sample_rate : float
        Poisson sampling probability q in (0, 1].
    steps : int
        Number of steps T ≥ 1.
    method : {"pld", "rdp", "gdp"}
        Accountant.
    rel_tol : float
        Relative width of the final bracket on σ.

    Returns
    -------
    AccountingResult
        With ``sigma`` the calibrated σ and ``epsilon`` its ε (≤ the target).
    """
    target = validate_epsilon(target_epsilon)
    d = validate_delta(delta, required=True)
    q = _check_rate(sample_rate)
    t = count("steps", steps)
    m = _method(method)
    tol = positive("rel_tol", rel_tol)
    return _sigma(float(target), float(d), float(q), int(t), m, float(tol),
                  float(value_discretization_interval))


# A pure function of its (validated, hashable) arguments taking seconds per call: a
# comparison trains the same (ε, δ, q, T) many times (R repeated runs, each site alone,
# the audit's trainings), so each calibration is done once per process. The result is
# frozen, so sharing it is safe.
@lru_cache(maxsize=256)
def _sigma(target: float, d: float, q: float, t: int, m: str, tol: float,
           value_discretization_interval: float) -> AccountingResult:
    def eps_of(s: float) -> float:
        return _epsilon(s, q, t, d, m, value_discretization_interval)

    lo_bound, hi_bound = _SIGMA_RANGE
    hi = 1.0
    hi_eps = eps_of(hi)
    while hi_eps > target:
        if hi >= hi_bound:
            raise ParameterError(f"no σ ≤ {hi_bound:g} reaches ε = {target:g}")
        hi = min(hi * 4.0, hi_bound)
        hi_eps = eps_of(hi)
    lo = hi
    while True:
        if lo <= lo_bound:
            return AccountingResult(hi_eps, d, m, m == "gdp", hi, q, t)
        lo = max(lo / 4.0, lo_bound)
        lo_eps = eps_of(lo)
        if lo_eps > target:
            break
        hi, hi_eps = lo, lo_eps
    while hi - lo > tol * hi:
        mid = math.sqrt(lo * hi)
        mid_eps = eps_of(mid)
        if mid_eps <= target:
            hi, hi_eps = mid, mid_eps
        else:
            lo = mid
    return AccountingResult(epsilon=hi_eps, delta=d, method=m, approximate=m == "gdp",
                            sigma=hi, sample_rate=q, steps=t)
