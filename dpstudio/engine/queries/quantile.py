"""Quantiles and medians: a candidate value chosen by a selection mechanism on rank scores.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.queries.columns import _numeric
from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.spec import QuerySpec, check_bounds
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.selection import SelectionMechanism

__all__ = ["quantile_scores"]


def quantile_scores(values: np.ndarray, candidates: np.ndarray, q: float) -> np.ndarray:
    """Utility of each candidate c for the q-quantile: −|(1−q)·#{x < c} − q·#{x > c}|.

    The score needs no n, so it needs no noisy count.

    Parameters
    ----------
    values : numpy.ndarray
        The (clamped) present values.
    candidates : numpy.ndarray
        The candidate outputs.
    q : float
        The quantile, in [0, 1].

    Returns
    -------
    numpy.ndarray
        One score per candidate (0 is best).
    """
    x = np.sort(values)
    below = np.searchsorted(x, candidates, side="left")
    above = x.size - np.searchsorted(x, candidates, side="right")
    return -np.abs((1.0 - q) * below - q * above)


def _quantile_parts(values, spec: QuerySpec):
    """Mechanism, candidate values, their scores, and the analyst-only clamped count."""
    col = _numeric(values, spec)
    finite, clamped = col.values, col.clamped
    lo, hi = check_bounds(spec.bounds)
    q = 0.5 if spec.query == "median" else float(spec.quantile)
    info = REGISTRY.get(spec.mechanism)
    params = info.resolve(spec.mechanism_params())
    candidates = np.linspace(lo, hi, int(params["candidates"]))
    # One record moves a score by at most max(q, 1−q) when added or removed, and by at most
    # 1 when its value changes.
    du = 1.0 if spec.relation == "replace" else max(q, 1.0 - q)
    mech: SelectionMechanism = info.build(epsilon=spec.epsilon, sensitivity=du)
    return mech, candidates, quantile_scores(np.clip(finite, lo, hi), candidates, q), clamped


def _quantile(values, spec, source):
    mech, candidates, scores, clamped = _quantile_parts(values, spec)
    chosen = mech.select(scores, source)
    bound = mech.utility_bound(candidates.size, 1.0 - spec.confidence)
    return Release(
        query=spec.query, mechanism=spec.mechanism, epsilon=spec.epsilon, delta=0.0,
        relation=spec.relation, value=float(candidates[chosen]), sensitivity=mech.sensitivity,
        noise_scale=None, variance=None, ci_low=None, ci_high=None,
        confidence=spec.confidence, simulated=False, source="",
        components=[{"mechanism": spec.mechanism, "candidates": int(candidates.size),
                     "score_sensitivity": mech.sensitivity, "epsilon": spec.epsilon,
                     "rank_error_bound": bound}],
        notes=[f"with probability {spec.confidence:g} the released value's rank error is at "
               f"most {bound:.1f} records (exponential-mechanism bound); no interval in value "
               "units without more budget"],
        clamped=clamped,
    )
