"""What the contract suite's adapters share: thresholds, statistical tests, laws written
out independently of the engine, and the checks every entry passes whatever its kind.

Seeds are fixed; a law is accepted at p > 1e-4 and a wrong one counts as rejected at
p < 1e-6.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_ndtr

from dpstudio.engine.audit import epsilon_lower_bound
from dpstudio.engine.entry import MechanismInfo
from dpstudio.engine.errors import EngineError, ParameterError

ACCEPT = 1e-4  # p-value above which the claimed law is accepted
REJECT = 1e-6  # p-value below which a wrong law counts as rejected
WRONG = (1.5, 1 / 1.5)  # wrong scales the distribution tests must reject
AUDIT_EPS = 1.0
# δ of the audits of (ε, δ) entries: at δ = 1e-3 the audit on 10^5 draws per input has the
# power to catch half the Gaussian noise (at δ = 1e-6 it lands on the claim itself).
AUDIT_DELTA = 1e-3
AUDIT_N = 100_000


def one_line(err: BaseException) -> None:
    """A user-facing message: non-empty, one line."""
    text = str(err)
    assert text.strip() and "\n" not in text, repr(text)


def refused(call, *args, error=EngineError, **kwargs) -> None:
    """``call(*args, **kwargs)`` raises ``error`` with a one-line message."""
    with pytest.raises(error) as info:
        call(*args, **kwargs)
    one_line(info.value)


def binned_chi2(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray,
                bins: int = 40) -> float:
    """p-value of χ² for integer ``samples`` against ``pmf`` on the integer ``support``,
    on about ``bins`` bins of equal mass under that law."""
    p = np.asarray(pmf, dtype=np.float64)
    cdf = np.cumsum(p) / p.sum()
    cuts = np.unique(np.searchsorted(cdf, np.linspace(0, 1, bins + 1)[1:-1]))
    cuts = cuts[cuts < support.size - 1]
    edges = np.concatenate([[-np.inf], support[cuts] + 0.5, [np.inf]])
    expected = np.diff(np.concatenate([[0.0], cdf[cuts], [1.0]])) * samples.size
    observed = np.histogram(samples, bins=edges)[0]
    return float(stats.chisquare(observed, expected).pvalue)


def lattice_pmf(family: str, scale: float, half: int | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Support and pmf of discrete Laplace (P(k) ∝ e^{−|k|/scale}) or discrete Gaussian
    (∝ e^{−k²/2scale²}) noise, written out here (not the engine's pmf)."""
    half = half or int(math.ceil(30 * scale)) + 2
    k = np.arange(-half, half + 1)
    if family == "laplace":
        w = np.exp(-np.abs(k) / scale)
    else:
        w = np.exp(-(k.astype(np.float64) ** 2) / (2 * scale * scale))
    return k, w / w.sum()


def skellam_law(variance: float) -> tuple[np.ndarray, np.ndarray]:
    """Support and pmf of the symmetric Skellam law of this variance (scipy's)."""
    half = int(math.ceil(12 * math.sqrt(variance))) + 2
    k = np.arange(-half, half + 1)
    return k, stats.skellam.pmf(k, variance / 2, variance / 2)


def exact_delta(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """δ(ε) between two laws on one support: Σ max(0, P − e^ε Q), the worse direction."""
    return max(float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0))),
               float(np.sum(np.maximum(q - math.exp(eps) * p, 0.0))))


def binomial_p(successes: int, trials: int, prob: float) -> float:
    """Two-sided p-value of ``successes`` in ``trials`` draws of probability ``prob``."""
    return float(stats.binomtest(int(successes), int(trials), prob).pvalue)


def eps_lower(d: np.ndarray, d2: np.ndarray, delta: float = 0.0,
              categorical: bool = False) -> float:
    """The audit's ε lower bound from outputs on neighbours D and D′ (95% confidence)."""
    return epsilon_lower_bound(d, d2, delta=delta, categorical=categorical).epsilon_lower


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε of ρ-zCDP at δ (Canonne, Kamath & Steinke 2020, Cor. 13), minimized over α on a
    dense grid here (independently of the engine's conversion)."""
    a = np.exp(np.linspace(math.log(1 + 1e-6), math.log(1e6), 200_001))
    vals = a * rho + (math.log(1 / delta) + (a - 1) * np.log1p(-1 / a) - np.log(a)) / (a - 1)
    return float(max(vals.min(), 0.0))


def gaussian_delta(sigma: float, sens: float, eps: float) -> float:
    """Exact δ(ε) of N(0, σ²) at ℓ₂ sensitivity Δ (Balle & Wang 2018, Thm 8), here."""
    a, b = sens / (2 * sigma), eps * sigma / sens
    return float(math.exp(log_ndtr(a - b)) - math.exp(eps + log_ndtr(-a - b)))


def _needs_delta(info: MechanismInfo) -> bool:
    return any(p.name == "delta" for p in info.params)


def check_common_bad_input(info: MechanismInfo) -> None:
    """What every entry refuses at ``resolve``: bad ε, unknown names, δ out of [0, 1)."""
    for given in ({"epsilon": 0}, {"epsilon": -1}, {"epsilon": float("nan")},
                  {"epsilon": float("inf")}, {"epsilon": "x"}, {"nonsense": 1}):
        refused(info.resolve, given, error=ParameterError)
    if _needs_delta(info):
        for delta in (1.0, 1.5, -1e-9, float("nan"), "x"):
            refused(info.resolve, {"delta": delta}, error=ParameterError)


class Adapter:
    """The four checks for one kind of entry (each raises AssertionError on a failure)."""

    def calibration(self, info: MechanismInfo) -> None:
        raise NotImplementedError

    def distribution(self, info: MechanismInfo) -> None:
        raise NotImplementedError

    def audit(self, info: MechanismInfo) -> None:
        raise NotImplementedError

    def bad_input(self, info: MechanismInfo) -> None:
        raise NotImplementedError
