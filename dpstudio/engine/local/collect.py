"""The client side of a local release: the column's cells and one report per row
(:func:`collect_reports` → :class:`Collected`); re-exported by
:mod:`dpstudio.engine.local.run`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.local.entries import sfp_from_params
from dpstudio.engine.local.respond import (
    OTHER_LABEL,
    has_other_cell,
    histogram_inputs,
    mean_inputs,
    word_inputs,
)
from dpstudio.engine.queries import present_mask
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import Source

__all__ = ["Collected", "collect_reports", "histogram_note", "mean_note"]


def _labels(values, categories, name: str) -> list[str]:
    if categories is not None:
        labels = [str(c) for c in categories]
        if len(set(labels)) != len(labels):
            raise QueryError("declared categories must be distinct")
        if len(labels) < 2:
            raise QueryError("declare at least two categories")
        if name == "rr" and len(labels) != 2:
            raise QueryError("randomized response needs exactly two categories (no, yes)")
        if OTHER_LABEL in labels:
            raise QueryError(f"{OTHER_LABEL!r} is the cell of missing and undeclared values; "
                             "it cannot be a declared category")
        return labels
    v = np.asarray(values)
    if v.dtype == bool or (v.dtype == object and _booleans(v)):
        return ["False", "True"]
    if name == "rr":
        return ["0", "1"]
    raise QueryError("a local histogram needs declared categories (e.g. --categories a,b,c): "
                     "the collector cannot learn the domain from data it never sees")


def _booleans(v: np.ndarray) -> bool:
    """Whether an object column holds booleans and missing values only."""
    present = v[present_mask(v)]
    try:
        distinct = np.unique(present).tolist()  # one test per distinct value, not per row
    except TypeError:  # mixed types cannot be sorted: not a boolean column
        return False
    return bool(distinct) and all(isinstance(x, bool | np.bool_) for x in distinct)


def _query_for(info, query: str | None, categories) -> str:
    """The query the entry answers: given, or inferred (``cms`` without categories:
    heavy hitters, as before the ``query`` argument existed)."""
    if query is None:
        if "mean" in info.queries:
            query = "mean"
        elif info.queries == ("heavy_hitters",) or (
                "heavy_hitters" in info.queries and categories is None):
            query = "heavy_hitters"
        else:
            query = "histogram"
    if query not in info.queries:
        raise QueryError(f"{info.name} answers {' or '.join(info.queries)} queries, "
                         f"not {query}")
    if query == "heavy_hitters" and categories is not None:
        raise QueryError("heavy hitters are discovered without a dictionary: do not "
                         "declare categories (use a histogram for a declared domain)")
    return query


def _hash_seed(source: Source) -> int:
    """A public hash family drawn for this release (63 bits: a signed 8-byte salt)."""
    return int(source.uint64(1)[0] >> np.uint64(1))


# Fresh draws of the family before an exact debiasing gives up on telling the declared
# categories apart (a draw fails with probability about k²/2·m^-K: negligible at the
# defaults; 92% for a single hash of 8 buckets and 6 codes, still a 0.6% failure here).
_FAMILY_TRIES = 64


@dataclass
class Collected:
    """The client side of a local release: one report per row of the column.

    ``labels`` are the histogram's cells (the declared categories, then
    :data:`~dpstudio.engine.local.respond.OTHER_LABEL` unless the protocol is binary
    randomized response); ``missing``/``clamped`` are analyst-only counts.

    Attributes
    ----------
    mechanism, query : str
        The registry entry and the query (``"histogram"``, ``"mean"``,
        ``"heavy_hitters"``).
    oracle : LocalRandomizer
        The randomizer built for the column.
    reports
        One report per row.
    n : int
        The number of rows.
    inputs : numpy.ndarray
        What each row fed its randomizer (:mod:`~dpstudio.engine.local.respond`).
    labels : list of str or None
        A histogram's cells.
    clamped, missing : int
        Analyst-only counts.
    notes : list of str
        How missing and undeclared values were sent.
    """

    mechanism: str
    query: str
    oracle: Any
    reports: Any
    n: int
    inputs: np.ndarray = field(repr=False)
    labels: list[str] | None = None
    clamped: int = 0
    missing: int = 0
    notes: list[str] = field(default_factory=list)

    def records(self) -> dict[str, np.ndarray]:
        """What the untrusted collector received, as columns (one row per row).

        Returns
        -------
        dict of str to numpy.ndarray
        """
        return self.oracle.to_records(self.reports)


def collect_reports(values, info_name: str, params: dict[str, Any] | None = None, *,
                    query: str | None = None, categories=None, bounds=None,
                    source: Source) -> Collected:
    """Every row's report through the local protocol ``info_name`` (the client side).

    Every row sends exactly one report, whatever its value
    (:mod:`~dpstudio.engine.local.respond`): the number of reports is the number of rows.
    Arguments as for :func:`run_local`.

    Parameters
    ----------
    values : array_like
        The column.
    info_name : str
        A local randomizer's registry name.
    params : dict, optional
        The entry's parameters.
    query : str, optional
        ``"histogram"``, ``"mean"`` or ``"heavy_hitters"``; by default the entry's.
    categories : sequence of str, optional
        A histogram's declared domain.
    bounds : tuple of float, optional
        A mean's ``(lower, upper)``.
    source : Source
        The random source (coins, and the count-mean sketch's hash family).

    Returns
    -------
    Collected

    Raises
    ------
    QueryError, ParameterError
        For an entry that is not a local randomizer, a query it does not answer, an empty
        column, a bad declared domain or parameter.
    """
    info = REGISTRY.get(info_name)
    if info.kind != "randomizer" or "local" not in info.trust_models:
        raise QueryError(f"{info_name} is not a local randomizer")
    resolved = info.resolve(params)
    query = _query_for(info, query, categories)
    v = np.asarray(values)
    if v.size == 0:
        raise QueryError("the column is empty")
    if query == "mean":
        oracle = info.build(**resolved, bounds=bounds)
        given = mean_inputs(v, oracle.lower, oracle.upper)
        return Collected(
            info.name, "mean", oracle, oracle.randomize(given.values, source), int(v.size),
            given.values, clamped=given.undeclared, missing=given.missing,
            notes=[mean_note(oracle)])
    if query == "heavy_hitters":
        sfp = sfp_from_params(**resolved, hash_seed=_hash_seed(source))
        given = word_inputs(v)
        return Collected(
            info.name, "heavy_hitters", sfp, sfp.randomize(given.values, source), int(v.size),
            given.values, missing=given.missing,
            notes=["every row sends a report: a missing value is sent as the empty word, "
                   "never discovered; n is the number of rows"])
    labels = _labels(v, categories, info.name)
    other = has_other_cell(info.name)
    oracle = _build_histogram(info, resolved, len(labels) + other, source)
    given = histogram_inputs(v, labels, source, other=other)
    cells = labels + ([OTHER_LABEL] if other else [])
    return Collected(info.name, "histogram", oracle, oracle.randomize(given.values, source),
                     int(v.size), given.values, labels=cells, clamped=given.undeclared,
                     missing=given.missing, notes=[histogram_note(other)])


def mean_note(oracle) -> str:
    """How a local mean sends a missing value (a :class:`Collected` note).

    Parameters
    ----------
    oracle : MeanOracle
        The randomizer (its bounds).

    Returns
    -------
    str
    """
    return (f"every row sends a report: a missing value is sent as the middle of the "
            f"declared bounds ({0.5 * (oracle.lower + oracle.upper):g}), so n is the "
            "number of rows and the estimate is the mean over all of them")


def histogram_note(other: bool) -> str:
    """How a local histogram sends a missing or undeclared value (a :class:`Collected`
    note).

    Parameters
    ----------
    other : bool
        Whether the randomizer has the extra "other or missing" cell.

    Returns
    -------
    str
    """
    return (f"every row sends a report: a missing or undeclared value is sent as the extra "
            f"category {OTHER_LABEL!r} through the same randomizer, whose count is "
            "estimated like the others; n is the number of rows"
            if other else
            "every row sends a report: a missing or undeclared value is answered with a fair "
            "coin (yes/no has no third answer), so each count estimates its declared count "
            "plus half of the missing and undeclared ones; n is the number of rows")


def _build_histogram(info, resolved: dict[str, Any], k: int, source: Source):
    if info.name != "cms":
        return info.build(**resolved, k=k)
    for _ in range(_FAMILY_TRIES):
        oracle = info.build(**resolved, k=k, hash_seed=_hash_seed(source))
        if oracle.debias != "exact":
            return oracle
        try:
            oracle.collisions()  # refuses a family that cannot tell two codes apart
            return oracle
        except QueryError:
            # Redrawing depends on k, the buckets and the seed only, never on the data.
            continue
    raise QueryError("the hash family cannot tell some values apart; raise buckets or "
                     "hashes, or use debias=apple")

