"""Answering a query: :func:`run_query`, :func:`release` and :func:`simulate_query`.

One dispatch on the query kind to the histogram, quantile or bounded-sum release; the same
plans drawn in bulk for Monte-Carlo utility.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.queries.columns import _missing_counts
from dpstudio.engine.queries.histogram import _histogram, _histogram_parts
from dpstudio.engine.queries.numeric import _numeric_release
from dpstudio.engine.queries.quantile import _quantile, _quantile_parts
from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.spec import QuerySpec
from dpstudio.engine.queries.sums import _family, _noisy_sums, _plan
from dpstudio.engine.rng import Source, require_secure

__all__ = ["release", "run_query", "simulate_query"]


def run_query(values: np.ndarray, spec: QuerySpec, source: Source) -> Release:
    """Answer ``spec`` on ``values`` with randomness from ``source`` (secure or simulated).

    Use :func:`release` for a real release: it insists on the OS CSPRNG.

    Parameters
    ----------
    values : numpy.ndarray
        A float array for numeric queries (NaN and ±inf = missing, dropped or imputed as
        ``spec.missing`` says), an array of strings for categorical histograms
        (None = missing).
    spec : QuerySpec
        What to release; validated here.
    source : Source
        The random source; a simulated one marks the result ``simulated``.

    Returns
    -------
    Release
        The released value, its interval, privacy parameters and analyst-only counts.

    Raises
    ------
    QueryError, ParameterError
        If the spec is invalid or the column cannot answer it.
    """
    spec = spec.validated()
    if spec.query == "histogram":
        out = _histogram(values, spec, source)
    elif spec.query in ("quantile", "median"):
        out = _quantile(values, spec, source)
    else:
        out = _numeric_release(values, spec, source)
    if spec.query in ("histogram", "quantile", "median"):
        out.missing_count, out.non_finite_count = _missing_counts(values)
    if not out.missing:
        out.missing = {"treatment": spec.missing}
    out.simulated = not source.is_secure
    out.source = source.label
    out.column = spec.column
    return out


def release(values: np.ndarray, spec: QuerySpec, source: Source) -> Release:
    """A real release: like :func:`run_query` but only with a :class:`SecureSource`.

    Parameters
    ----------
    values : numpy.ndarray
        The column, as for :func:`run_query`.
    spec : QuerySpec
        What to release.
    source : Source
        Must be the OS CSPRNG (:class:`~dpstudio.engine.rng.SecureSource`).

    Returns
    -------
    Release

    Raises
    ------
    InsecureSourceError
        If ``source`` is a simulated one.
    QueryError, ParameterError
        As :func:`run_query`.
    """
    return run_query(values, spec, require_secure(source))


def simulate_query(values: np.ndarray, spec: QuerySpec, size: int, source: Source
                   ) -> np.ndarray:
    """``size`` independent answers of ``spec`` on ``values``, for Monte-Carlo utility.

    Exactly the release's distribution (the same plan, noise and post-processing), drawn
    in bulk. Randomized rounding to the grid is drawn afresh for every answer (see
    :func:`~dpstudio.engine.queries.sums._rounded_sums`), so each answer is an independent
    release and repeated calls or ``size > 1`` audit the real mechanism.

    Parameters
    ----------
    values : numpy.ndarray
        The column, as for :func:`run_query`.
    spec : QuerySpec
        What would be released.
    size : int
        Number of independent answers.
    source : Source
        The random source.

    Returns
    -------
    numpy.ndarray
        Shape ``(size,)``, or ``(size, cells)`` for a histogram.

    Raises
    ------
    QueryError, ParameterError
        As :func:`run_query`.
    """
    spec = spec.validated()
    size = int(size)
    if spec.query == "histogram":
        counts, noise, _, _ = _histogram_parts(values, spec)
        draws = noise.sample(size * counts.size, source).reshape(size, counts.size)
        return (counts * noise.sensitivity + draws) * noise.grid
    if spec.query in ("quantile", "median"):
        mech, candidates, scores, _ = _quantile_parts(values, spec)
        return candidates[mech.select(scores, source, size=size)]
    plan = _plan(values, spec)
    noisy, _ = _noisy_sums(plan, _family(spec), spec, source, size)
    return plan.post(noisy)
