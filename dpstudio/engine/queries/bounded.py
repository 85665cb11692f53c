"""User-level statistics on rows already bounded to k per person (a release plan's).

A user-level release plan bounds each person's rows ONCE, before every statistic
(:func:`dpstudio.engine.contribution.bound_contributions`, one random draw for the whole
plan): each statistic then reads the same kept rows, and its noise is calibrated to k ×
the row-level sensitivity, exactly as :func:`dpstudio.engine.contribution.run_user_level`
does after its own bounding. Bounding again per statistic would draw another random
subset each time — harmless for privacy, but the statistics would describe different
rows; once is what the plan promises.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.contribution import _check_spec, _release_kept, check_max_rows
from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.spec import QuerySpec
from dpstudio.engine.rng import Source

__all__ = ["run_bounded"]


def run_bounded(kept: np.ndarray, spec: QuerySpec, max_rows: int, source: Source
                ) -> Release:
    """A central count, sum, mean, variance or histogram of rows bounded to k per person.

    Parameters
    ----------
    kept : numpy.ndarray
        The column's values on the rows kept by the plan's one bounding (each person at
        most ``max_rows`` rows; rows without an identifier already left out).
    spec : QuerySpec
        What to release (add-remove).
    max_rows : int
        The declared k: every sensitivity is k × a row's.
    source : Source
        The noise (a :class:`~dpstudio.engine.rng.SecureSource` for a release).

    Returns
    -------
    Release
        Its ``relation`` says "add or remove one person (up to k rows)"; the number of
        rows dropped by the bounding is in none of its fields.

    Raises
    ------
    QueryError, ParameterError
        For a spec a user-level release cannot answer, or no row kept.
    """
    spec = spec.validated()
    _check_spec(spec)
    k = check_max_rows(max_rows)
    return _release_kept(np.asarray(kept), spec, k, source, "once for the whole plan")
