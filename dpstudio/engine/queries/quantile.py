"""Quantiles and medians: a candidate value chosen by a selection mechanism on rank scores.

The scores are a function of two integer counts per candidate (values below it, values
above it), so a partitioned engine adds the partitions' exact counts
(:func:`rank_counts`) and the client runs the selection once, on the same scores the
whole column gives (:func:`scores_from_counts`).
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.queries.columns import _numeric
from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.spec import QuerySpec, check_bounds
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.selection import SelectionMechanism

__all__ = ["quantile_candidates", "quantile_scores", "rank_counts", "scores_from_counts"]


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
    return scores_from_counts(*rank_counts(values, candidates), q)


def rank_counts(values: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many values lie strictly below and strictly above each candidate.

    Exact integers: the counts of partitions of a column add up to the column's.

    Parameters
    ----------
    values : numpy.ndarray
        The (clamped) present values.
    candidates : numpy.ndarray
        The candidate outputs, sorted.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``#{x < c}`` and ``#{x > c}`` per candidate (int64).
    """
    x = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
    below = np.searchsorted(x, candidates, side="left").astype(np.int64)
    above = (x.size - np.searchsorted(x, candidates, side="right")).astype(np.int64)
    return below, above


def scores_from_counts(below: np.ndarray, above: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile's scores from :func:`rank_counts` (of one column, or added).

    Parameters
    ----------
    below, above : numpy.ndarray
        ``#{x < c}`` and ``#{x > c}`` per candidate.
    q : float
        The quantile, in [0, 1].

    Returns
    -------
    numpy.ndarray
        One score per candidate (0 is best).
    """
    below = np.asarray(below, dtype=np.int64)
    above = np.asarray(above, dtype=np.int64)
    return -np.abs((1.0 - q) * below - q * above)


def quantile_candidates(spec: QuerySpec) -> tuple[SelectionMechanism, np.ndarray, float]:
    """The selection mechanism, the candidate values and q: from the spec alone (every
    partition of a column scores the same candidates without being told anything else).

    Parameters
    ----------
    spec : QuerySpec
        A validated quantile or median.

    Returns
    -------
    (SelectionMechanism, numpy.ndarray, float)
    """
    lo, hi = check_bounds(spec.bounds)
    q = 0.5 if spec.query == "median" else float(spec.quantile)
    info = REGISTRY.get(spec.mechanism)
    params = info.resolve(spec.mechanism_params())
    candidates = np.linspace(lo, hi, int(params["candidates"]))
    # One record moves a score by at most max(q, 1−q) when added or removed, and by at most
    # 1 when its value changes.
    du = 1.0 if spec.relation == "replace" else max(q, 1.0 - q)
    mech: SelectionMechanism = info.build(epsilon=spec.epsilon, sensitivity=du)
    return mech, candidates, q


def _quantile_parts(values, spec: QuerySpec):
    """Mechanism, candidate values, their scores, and the analyst-only clamped count."""
    col = _numeric(values, spec)
    lo, hi = check_bounds(spec.bounds)
    mech, candidates, q = quantile_candidates(spec)
    return mech, candidates, quantile_scores(np.clip(col.values, lo, hi), candidates, q), \
        col.clamped


def _quantile(values, spec, source):
    return _quantile_release(*_quantile_parts(values, spec), spec, source)


def _quantile_release(mech: SelectionMechanism, candidates: np.ndarray, scores: np.ndarray,
                      clamped: int, spec: QuerySpec, source) -> Release:
    """The selection, drawn once from ``source``, and what the release says of it."""
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
