"""Bounded contributions per person: user-level central releases.

A dataset with several rows per person (visits, purchases) protects *people* only if
neighbouring datasets differ by one person's rows, not one row. The analyst declares the
column that identifies a person and a maximum ``max_rows`` = k of rows per person (a
public declaration, never read off the data). Before anything else, each person's rows
beyond k are dropped, chosen uniformly at random among that person's rows
(:func:`bound_contributions`); rows without an identifier are left out (no one can say
whose they are, so they cannot be bounded). How many rows were dropped depends on the
data and is never released.

Neighbours then differ by **adding or removing one person with up to k rows**, and every
sensitivity scales with k (:func:`user_sensitivity`):

* a count moves by at most k;
* a sum of values in [lo, hi] by at most k·max(|lo|, |hi|);
* a histogram's cells by at most k in ℓ₁ *and* in ℓ₂ (all k rows may fall in one cell);
  a person replaced by another (not offered here) would move ℓ₁ by 2k;
* a mean or variance is its noisy sums (each sensitivity × k), the budget split as in the
  record-level release.

Only the central model's count, sum, mean, variance and histogram are released this way,
under add-remove. The privacy curve of such a release, with respect to one person, is the
record-level curve of the same (ε, δ): the noise is calibrated to the scaled sensitivity.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries.columns import present_mask
from dpstudio.engine.queries.histogram import _histogram_parts
from dpstudio.engine.queries.numeric import _numeric_release
from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.spec import QuerySpec
from dpstudio.engine.queries.sums import _family
from dpstudio.engine.rng import Source, require_secure

__all__ = [
    "MAX_ROWS_LIMIT",
    "USER_LEVEL_QUERIES",
    "bound_contributions",
    "check_max_rows",
    "person_relation",
    "release_user_level",
    "run_user_level",
    "user_sensitivity",
]

#: The queries a user-level release answers (central, add-remove).
USER_LEVEL_QUERIES = ("count", "sum", "mean", "variance", "histogram")
#: The largest declared maximum of rows per person (beyond it the noise drowns any answer).
MAX_ROWS_LIMIT = 1_000_000


def check_max_rows(max_rows: object) -> int:
    """The declared maximum of rows per person, as an int.

    Parameters
    ----------
    max_rows : object
        The declaration (an integer ≥ 1).

    Returns
    -------
    int
        ``max_rows``.

    Raises
    ------
    QueryError
        If it is not a whole number between 1 and :data:`MAX_ROWS_LIMIT`.
    """
    if isinstance(max_rows, bool):
        raise QueryError(f"max_rows must be a whole number of rows ≥ 1, not {max_rows}")
    try:
        k = int(max_rows)  # type: ignore[call-overload]
        whole = float(max_rows) == k  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise QueryError(f"max_rows must be a whole number of rows ≥ 1, not {max_rows!r}"
                         ) from None
    if not whole or not 1 <= k <= MAX_ROWS_LIMIT:
        raise QueryError(f"max_rows must be a whole number between 1 and {MAX_ROWS_LIMIT:,}, "
                         f"not {max_rows!r}")
    return k


def person_relation(max_rows: int) -> str:
    """The neighbouring relation of a user-level release, as every output states it.

    Parameters
    ----------
    max_rows : int
        The declared maximum of rows per person.

    Returns
    -------
    str
        ``"add or remove one person (up to k rows)"``.
    """
    k = check_max_rows(max_rows)
    return f"add or remove one person (up to {k} row{'s' if k != 1 else ''})"


def bound_contributions(ids: np.ndarray, max_rows: int, source: Source) -> np.ndarray:
    """Which rows to keep: at most ``max_rows`` per person, chosen uniformly at random.

    Every row gets an independent random 64-bit key; rows are sorted by person, then by
    key, and a person's first ``max_rows`` rows in that order are kept — a uniformly
    random subset of that person's rows (ties between keys have probability below
    n²/2⁶⁴). Rows whose identifier is missing (None, NaN) are dropped. Vectorized: one
    sort, no loop over people.

    Parameters
    ----------
    ids : numpy.ndarray
        One identifier per row (strings, integers; None or NaN for missing).
    max_rows : int
        The declared maximum of rows per person.
    source : Source
        Where the keys come from: a :class:`~dpstudio.engine.rng.SecureSource` for a
        release, a seeded one for a simulation.

    Returns
    -------
    numpy.ndarray of bool
        True for the rows kept; as long as ``ids``. How many were dropped is private.

    Raises
    ------
    QueryError
        For a bad ``max_rows`` or identifiers that are not one column.
    """
    k = check_max_rows(max_rows)
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise QueryError("the identifier column must be one column of values")
    keep = np.zeros(ids.size, dtype=bool)
    rows = np.flatnonzero(present_mask(ids))
    if rows.size == 0:
        return keep
    present = ids[rows]
    if present.dtype.kind == "O":  # mixed texts and numbers compare as texts
        present = present.astype(str)
    _, person = np.unique(present, return_inverse=True)
    keys = source.uint64(rows.size)
    order = np.lexsort((keys, person))  # by person, then by random key
    sorted_person = person[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = sorted_person[1:] != sorted_person[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(order.size), 0))
    rank = np.arange(order.size) - start
    keep[rows[order[rank < k]]] = True
    return keep


def user_sensitivity(spec: QuerySpec, max_rows: int) -> dict[str, float]:
    """Each noisy statistic's sensitivity when one person adds or removes up to k rows.

    Parameters
    ----------
    spec : QuerySpec
        A central count, sum, mean, variance or histogram under add-remove.
    max_rows : int
        The declared maximum of rows per person.

    Returns
    -------
    dict of str to float
        By statistic (``count``, ``sum``, ``sum of squares``, ``histogram``): k times the
        record-level sensitivity (ℓ₁; for a histogram ℓ₁ = ℓ₂ = k).

    Raises
    ------
    QueryError
        For a query or relation a user-level release does not take.
    """
    from dpstudio.engine.queries.spec import noisy_statistics

    k = check_max_rows(max_rows)
    _check_spec(spec)
    if spec.query == "histogram":
        return {"histogram": float(k)}
    return {name: k * s for name, _, _, s in noisy_statistics(spec)}


def _check_spec(spec: QuerySpec) -> None:
    if spec.query not in USER_LEVEL_QUERIES:
        raise QueryError(f"a user-level release answers {', '.join(USER_LEVEL_QUERIES)}, "
                         f"not a {spec.query}")
    if spec.relation != "add-remove":
        raise QueryError("a user-level release bounds adding or removing one person's rows: "
                         "use relation add-remove")


def run_user_level(values: np.ndarray, ids: np.ndarray, spec: QuerySpec, max_rows: int,
                   source: Source) -> Release:
    """A central count, sum, mean, variance or histogram protecting each person's rows.

    Each person's rows beyond ``max_rows`` are dropped at random first
    (:func:`bound_contributions`, keys from ``source``), then the query is answered on
    the rows kept with every sensitivity × ``max_rows`` (:func:`user_sensitivity`).
    Use :func:`release_user_level` for a real release.

    Parameters
    ----------
    values : numpy.ndarray
        The column, as for :func:`~dpstudio.engine.queries.run_query`.
    ids : numpy.ndarray
        The identifier of each row's person (same length).
    spec : QuerySpec
        What to release (add-remove).
    max_rows : int
        The declared maximum of rows per person.
    source : Source
        The random source (the drops and the noise); a simulated one marks the result.

    Returns
    -------
    Release
        Its ``relation`` says "add or remove one person (up to k rows)"; the number of
        rows dropped appears nowhere in it.

    Raises
    ------
    QueryError, ParameterError
        For a spec a user-level release cannot answer, or columns of different lengths.
    """
    spec = spec.validated()
    _check_spec(spec)
    k = check_max_rows(max_rows)
    values, ids = np.asarray(values), np.asarray(ids)
    if values.shape[:1] != ids.shape[:1]:
        raise QueryError(f"the identifier column has {ids.shape[0]:,} rows but the queried "
                         f"column {values.shape[0]:,}")
    return _release_kept(values[bound_contributions(ids, k, source)], spec, k, source,
                         "first")


def _release_kept(kept: np.ndarray, spec: QuerySpec, k: int, source: Source,
                  when: str) -> Release:
    """The release of the rows kept (each person's at most k; checked spec and k), with
    the notes of a user-level release; ``when`` the rows were dropped ("first")."""
    if kept.size == 0:
        raise QueryError("no row has an identifier: nothing to release per person")
    out = _histogram(kept, spec, k, source) if spec.query == "histogram" else _numeric(
        kept, spec, k, source)
    out.relation = person_relation(k)
    out.notes = [f"neighbouring datasets differ by one person's rows: each person's rows "
                 f"beyond {k} (declared) were dropped at random {when}, rows without an "
                 f"identifier left out, and every sensitivity is {k} × a row's"] + out.notes
    out.simulated = not source.is_secure
    out.source = source.label
    out.column = spec.column
    if not out.missing:
        out.missing = {"treatment": spec.missing}
    return out


def release_user_level(values: np.ndarray, ids: np.ndarray, spec: QuerySpec, max_rows: int,
                       source: Source) -> Release:
    """A real user-level release: :func:`run_user_level` with the OS CSPRNG only.

    Parameters
    ----------
    values, ids, spec, max_rows
        As for :func:`run_user_level`.
    source : Source
        Must be a :class:`~dpstudio.engine.rng.SecureSource`.

    Returns
    -------
    Release

    Raises
    ------
    InsecureSourceError
        If ``source`` is a simulated one.
    QueryError, ParameterError
        As :func:`run_user_level`.
    """
    return run_user_level(values, ids, spec, max_rows, require_secure(source))


def _numeric(values: np.ndarray, spec: QuerySpec, k: int, source: Source) -> Release:
    """The record-level plan of bounded sums, each noise calibrated to k × its sensitivity."""
    return _numeric_release(values, spec, source, k)


def _histogram(values: np.ndarray, spec: QuerySpec, k: int, source: Source) -> Release:
    """Counts per cell; one person moves them by at most k in ℓ₁ and in ℓ₂ (one cell)."""
    counts, _, labels, clamped = _histogram_parts(values, spec)
    family = _family(spec)
    # Counts are integers: the grid never coarsens past 1 (as the record-level histogram).
    grid = min(1.0, family.grid(float(k), spec.epsilon, spec.delta))
    per_count = int(round(1.0 / grid))
    noise = family.calibrate(k * per_count, grid, spec.epsilon, spec.delta)
    noisy = (counts * per_count + noise.sample(counts.size, source)) * grid
    h = noise.half_width(spec.confidence)
    return Release(
        query="histogram", mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=dict(zip(labels, noisy.tolist(), strict=True)),
        sensitivity=noise.sensitivity_value, noise_scale=noise.noise_scale,
        variance=noise.variance, ci_low=dict(zip(labels, (noisy - h).tolist(), strict=True)),
        ci_high=dict(zip(labels, (noisy + h).tolist(), strict=True)),
        confidence=spec.confidence, simulated=False, source="",
        components=[noise.to_dict()],
        notes=["each interval holds with the stated probability on its own (not jointly)"],
        clamped=clamped,
    )
