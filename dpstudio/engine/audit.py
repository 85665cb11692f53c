"""Empirical privacy audits: a statistically valid lower bound on ε from samples.

Run a mechanism many times on two neighbouring inputs D and D′, pick events E (threshold
sets, or single outputs), and bound P(E | D) from below and P(E | D′) from above with
Clopper–Pearson intervals. Any (ε, δ)-DP mechanism has P(E|D) ≤ e^ε P(E|D′) + δ, so
ln((p_low − δ)/q_high) is a lower bound on its ε that holds with the stated confidence
(Bonferroni-corrected over the events tried). A calibration bug shows as a lower bound
above the claimed ε.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstudio.engine.special import betaincinv

__all__ = ["AuditResult", "clopper_pearson", "epsilon_lower_bound"]


def clopper_pearson(successes: np.ndarray, trials: int, alpha: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Exact one-sided (1−alpha) bounds (lower, upper) of a binomial proportion.

    Each bound alone holds with probability ≥ 1−alpha (Clopper & Pearson 1934: quantiles
    of Beta(k, n−k+1) and Beta(k+1, n−k)).

    Parameters
    ----------
    successes : array_like
        Success counts k, each in 0..trials.
    trials : int
        Number of trials n, ≥ 1.
    alpha : float
        One-sided error level, in (0, 1).

    Returns
    -------
    lower, upper : numpy.ndarray
        Bounds of the proportion, same shape as ``successes``; ``lower = 0`` where k = 0 and
        ``upper = 1`` where k = n.
    """
    k = np.asarray(successes, dtype=np.float64)
    # Quantiles of Beta(a, b) are the inverse regularized incomplete beta function.
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, betaincinv(np.maximum(k, 1e-300), trials - k + 1, alpha), 0.0)
        upper = np.where(k < trials, betaincinv(k + 1, np.maximum(trials - k, 1e-300),
                                                1 - alpha), 1.0)
    return np.nan_to_num(lower), np.nan_to_num(upper, nan=1.0)


@dataclass(frozen=True)
class AuditResult:
    """The best event found and the ε lower bound it certifies.

    Attributes
    ----------
    epsilon_lower : float
        The certified lower bound on ε (0.0 when no event certifies a positive one).
    event : str
        The event, such as ``"x ≥ 3.5"`` or ``"x = 2 (D′ vs D)"``; ``"none"`` if none.
    p_hat, q_hat : float
        Observed frequencies of the event on the two inputs, in that order.
    events_tried : int
        Events times directions the Bonferroni correction covers.
    confidence : float
        Probability that ``epsilon_lower`` is a valid bound.
    """

    epsilon_lower: float
    event: str
    p_hat: float
    q_hat: float
    events_tried: int
    confidence: float


def epsilon_lower_bound(
    outputs_d: np.ndarray,
    outputs_d2: np.ndarray,
    delta: float = 0.0,
    confidence: float = 0.95,
    thresholds: int = 64,
    categorical: bool = False,
) -> AuditResult:
    """Lower-bound ε from outputs on neighbouring inputs D (``outputs_d``) and D′.

    Parameters
    ----------
    outputs_d, outputs_d2 : 1-d arrays of outputs, the same number of each.
    delta : the mechanism's claimed δ (subtracted, as the definition allows).
    confidence : probability that the returned bound is valid, over all events tried.
    thresholds : number of thresholds t for events {x ≥ t} and {x ≤ t} (numeric outputs),
        placed at quantiles of the pooled outputs.
    categorical : use events {x = v} for each distinct output v instead.

    Returns
    -------
    AuditResult
        The largest lower bound over all events and both directions.

    Raises
    ------
    ValueError
        If either array of outputs is empty.
    """
    a = np.asarray(outputs_d)
    b = np.asarray(outputs_d2)
    n, m = a.size, b.size
    if n == 0 or m == 0:
        raise ValueError("an audit needs outputs on both inputs")
    if categorical:
        values, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
        ka = np.bincount(codes[:n], minlength=values.size).astype(np.float64)
        kb = np.bincount(codes[n:], minlength=values.size).astype(np.float64)
        names = [f"x = {v}" for v in values.tolist()]
    else:
        pooled = np.concatenate([a, b]).astype(np.float64)
        ts = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, thresholds + 2)[1:-1]))
        sa, sb = np.sort(a.astype(np.float64)), np.sort(b.astype(np.float64))
        ge_a = n - np.searchsorted(sa, ts, side="left")
        ge_b = m - np.searchsorted(sb, ts, side="left")
        le_a = np.searchsorted(sa, ts, side="right")
        le_b = np.searchsorted(sb, ts, side="right")
        ka = np.concatenate([ge_a, le_a]).astype(np.float64)
        kb = np.concatenate([ge_b, le_b]).astype(np.float64)
        names = [f"x ≥ {t:g}" for t in ts] + [f"x ≤ {t:g}" for t in ts]
    # Both directions (D vs D′ and D′ vs D), two one-sided bounds per event and direction.
    tries = 2 * len(names)
    alpha = (1.0 - confidence) / (2 * tries)
    best = AuditResult(0.0, "none", 0.0, 0.0, tries, confidence)
    for num, den, nn, nd, tag in ((ka, kb, n, m, ""), (kb, ka, m, n, " (D′ vs D)")):
        p_lo, _ = clopper_pearson(num, nn, alpha)
        _, q_hi = clopper_pearson(den, nd, alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = np.log(np.maximum(p_lo - delta, 0.0) / q_hi)
        eps = np.where(np.isfinite(eps), eps, -np.inf)
        i = int(np.argmax(eps))
        if eps[i] > best.epsilon_lower:
            best = AuditResult(float(eps[i]), names[i] + tag, float(num[i] / nn),
                               float(den[i] / nd), tries, confidence)
    return best

