"""A local protocol run where the data is: each partition returns its reports' aggregate.

Every local estimator of :mod:`~dpstudio.engine.local` reads its reports through a sum
over the users: the support counts ``C_v`` of the pure frequency oracles (K-RR and RR,
unary encodings, OLH, Hadamard response), the count-mean sketch's +1 counts per hash
function and bucket, the local Laplace/Gaussian reports' sum in grid steps, Duchi's number
of ``+B`` bits. So a partition (a file on a Dask worker) can randomize its own rows —
every row its own report, from the partition's own random source — and return only that
aggregate, exact integers, with its row count and the analyst-only counts; the client
adds the integers and runs the estimator once (:func:`estimate_local`), giving the same
:class:`~dpstudio.engine.local.run.LocalResult` as :func:`~dpstudio.engine.local.run_local`
on the concatenated reports, bit for bit.

* :func:`plan_local` (client, before any data): the randomizer, the declared cells, and
  the count-mean sketch's public hash family, drawn once for the release so that every
  partition hashes alike;
* :func:`local_partial` (each partition): randomize, aggregate, keep nothing else;
* :func:`add_local_partials` and :func:`estimate_local` (client).

Heavy hitters are not offered: the sequence-fragment puzzle's discovery reads the
individual reports (which fragment goes with which word), not a sum of them.
The reports themselves never leave the partition, so a partitioned run has no records to
export.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.local.cms import CountMeanSketch
from dpstudio.engine.local.mean import DuchiMean
from dpstudio.engine.local.respond import (
    OTHER_LABEL,
    has_other_cell,
    histogram_inputs,
    mean_inputs,
)
from dpstudio.engine.rng import Source

__all__ = ["PARTIAL_LOCAL_QUERIES", "LocalPartial", "LocalPlan", "add_local_partials",
           "estimate_local", "local_partial", "plan_local"]

#: The local queries answered from partitions' aggregates.
PARTIAL_LOCAL_QUERIES = ("histogram", "mean")

# Rows randomized at a time in a partition: a unary encoding's packed reports of a million
# rows of a thousand cells are 125 MB, and the aggregate is added chunk by chunk.
_CHUNK = 1 << 20

PARTITION_NOTE = ("computed where the data is: each partition randomized its own rows and "
                  "returned only the aggregate of its reports (exact integers); the "
                  "estimator ran once on their total, so no report was kept to export")


@dataclass(frozen=True)
class LocalPlan:
    """What every partition needs to randomize alike, decided before any data is read.

    Attributes
    ----------
    mechanism, query : str
        The registry entry and ``"histogram"`` or ``"mean"``.
    params : dict
        The entry's resolved parameters.
    labels : tuple of str or None
        A histogram's declared categories (without the "other or missing" cell).
    other : bool
        Whether the histogram has the extra :data:`OTHER_LABEL` cell.
    bounds : tuple of float or None
        A mean's declared bounds.
    hash_seed : int or None
        The count-mean sketch's public hash family, drawn once for the release.
    """

    mechanism: str
    query: str
    params: dict[str, Any] = field(default_factory=dict)
    labels: tuple[str, ...] | None = None
    other: bool = True
    bounds: tuple[float, float] | None = None
    hash_seed: int | None = None

    @property
    def cells(self) -> list[str]:
        """A histogram's cells: the declared categories, then the "other" one if any."""
        return list(self.labels or ()) + ([OTHER_LABEL] if self.other else [])

    def oracle(self) -> Any:
        """The randomizer every partition builds (the same one, from this plan alone).

        Returns
        -------
        LocalRandomizer
        """
        from dpstudio.engine.registry import REGISTRY

        info = REGISTRY.get(self.mechanism)
        if self.query == "mean":
            return info.build(**self.params, bounds=self.bounds)
        extra = {} if self.hash_seed is None else {"hash_seed": self.hash_seed}
        return info.build(**self.params, k=len(self.cells), **extra)

    @property
    def size(self) -> int:
        """How many integers a partition's aggregate holds."""
        if self.query == "mean":
            return 1
        if self.mechanism == "cms":
            o = self.oracle()
            return o.hashes * o.buckets + o.hashes
        return len(self.cells)


@dataclass(frozen=True)
class LocalPartial:
    """One partition's aggregate of its reports (or several partitions', added).

    Only integers, none of them a record's value or a single report.

    Attributes
    ----------
    mechanism, query : str
        What produced it.
    counts : tuple of int
        The estimator's aggregate: support counts per cell (pure frequency oracles), the
        count-mean sketch's +1 counts (hash × bucket, row by row) then its reports per hash
        function, the reports' sum in grid steps (local Laplace/Gaussian), or the number
        of ``+B`` bits (Duchi).
    n : int
        Rows, each of which sent one report.
    clamped, missing : int
        Analyst only: values outside the declared categories or bounds, and missing ones.
    """

    mechanism: str
    query: str
    counts: tuple[int, ...]
    n: int = 0
    clamped: int = 0
    missing: int = 0

    def integers(self) -> list[int]:
        """Every number this aggregate holds, flattened (to check that all are integers).

        Returns
        -------
        list of int
        """
        return [*self.counts, self.n, self.clamped, self.missing]


def plan_local(info_name: str, params: dict[str, Any] | None = None, *,
               query: str | None = None, categories=None, bounds=None,
               boolean: bool = False, source: Source) -> LocalPlan:
    """The client's side before any data: the randomizer and its declared domain.

    Parameters
    ----------
    info_name : str
        A local randomizer's registry name.
    params : dict, optional
        The entry's parameters.
    query : str, optional
        ``"histogram"`` or ``"mean"``; by default the entry's.
    categories : sequence of str, optional
        A histogram's declared categories. Without them a yes/no column (``boolean``)
        has the cells ``False``/``True`` and ``rr`` the cells ``0``/``1``: the domain
        is never learnt from a partition's data.
    bounds : tuple of float, optional
        A mean's ``(lower, upper)``.
    boolean : bool
        Whether the column is read as yes/no.
    source : Source
        Draws the count-mean sketch's public hash family (once, for every partition).

    Returns
    -------
    LocalPlan

    Raises
    ------
    QueryError, ParameterError
        For an entry that is not a local randomizer, heavy hitters, a query the entry
        does not answer, or a bad declared domain or parameter.
    """
    from dpstudio.engine.local.run import _build_histogram, _labels, _query_for
    from dpstudio.engine.registry import REGISTRY

    info = REGISTRY.get(info_name)
    if info.kind != "randomizer" or "local" not in info.trust_models:
        raise QueryError(f"{info_name} is not a local randomizer")
    resolved = info.resolve(params)
    query = _query_for(info, query, categories)
    if query not in PARTIAL_LOCAL_QUERIES:
        raise QueryError("heavy hitters are not computed on partitions: the "
                         "sequence-fragment puzzle reads every report, not their sum; "
                         "use --engine pandas")
    if query == "mean":
        oracle = info.build(**resolved, bounds=bounds)
        return LocalPlan(info.name, "mean", resolved,
                         bounds=(float(oracle.lower), float(oracle.upper)))
    hint = np.array([True]) if boolean and categories is None else np.zeros(0)
    labels = _labels(hint, categories, info.name)
    other = has_other_cell(info.name)
    oracle = _build_histogram(info, resolved, len(labels) + other, source)
    seed = oracle.hash_seed if isinstance(oracle, CountMeanSketch) else None
    return LocalPlan(info.name, "histogram", resolved, tuple(labels), other, hash_seed=seed)


def _aggregate(oracle: Any, plan: LocalPlan, reports: Any) -> np.ndarray:
    """The integers the estimator needs from a batch of reports."""
    if plan.query == "mean":
        if isinstance(oracle, DuchiMean):
            return np.array([int(np.count_nonzero(np.asarray(reports)))], dtype=np.int64)
        return np.array([oracle.report_steps(reports)], dtype=np.int64)
    if isinstance(oracle, CountMeanSketch):
        ones, per = oracle.sketch_counts(reports)
        return np.concatenate([ones.ravel(), per]).astype(np.int64)
    return np.asarray(oracle.support_counts(reports), dtype=np.int64)


def local_partial(values, plan: LocalPlan, source: Source) -> LocalPartial:
    """One partition's reports, randomized here and aggregated: what leaves the partition.

    Every row sends one report, exactly as :func:`~dpstudio.engine.local.collect_reports`
    sends it (same inputs for missing and undeclared values, same draws from ``source``
    for a partition of up to a million rows; larger ones are randomized a million rows
    at a time). Give each partition its own source (a fresh
    :class:`~dpstudio.engine.rng.SecureSource` where it is read; for a simulation, seeds
    spawned independently), never one seed shared by all.

    Parameters
    ----------
    values : array_like
        The partition's column (labels for a histogram, numbers for a mean).
    plan : LocalPlan
        From :func:`plan_local`.
    source : Source
        The partition's random source.

    Returns
    -------
    LocalPartial
        All zeros for an empty partition.

    Raises
    ------
    QueryError
        For a mean of values that are not numbers.
    """
    v = np.asarray(values).reshape(-1)
    oracle = plan.oracle()
    total = np.zeros(plan.size, dtype=np.int64)
    clamped = missing = 0
    for start in range(0, v.size, _CHUNK):
        part = v[start:start + _CHUNK]
        if plan.query == "mean":
            given = mean_inputs(part, oracle.lower, oracle.upper)
        else:
            given = histogram_inputs(part, list(plan.labels or ()), source, other=plan.other)
        total += _aggregate(oracle, plan, oracle.randomize(given.values, source))
        clamped += given.undeclared
        missing += given.missing
    return LocalPartial(plan.mechanism, plan.query, tuple(int(c) for c in total),
                        int(v.size), int(clamped), int(missing))


def add_local_partials(parts: Iterable[LocalPartial]) -> LocalPartial:
    """The partitions' aggregates added (exact integers, any order).

    Parameters
    ----------
    parts : iterable of LocalPartial
        Aggregates of one plan.

    Returns
    -------
    LocalPartial

    Raises
    ------
    QueryError
        For no aggregates, or aggregates of different protocols or shapes.
    """
    parts = list(parts)
    if not parts:
        raise QueryError("no partitions to add")
    first = parts[0]
    for p in parts[1:]:
        if (p.mechanism, p.query, len(p.counts)) != (first.mechanism, first.query,
                                                     len(first.counts)):
            raise QueryError("the partitions' aggregates are of different protocols")
    counts = [sum(c) for c in zip(*(p.counts for p in parts), strict=True)]
    return LocalPartial(first.mechanism, first.query, tuple(int(c) for c in counts),
                        sum(p.n for p in parts), sum(p.clamped for p in parts),
                        sum(p.missing for p in parts))


def estimate_local(total: LocalPartial, plan: LocalPlan, source: Source, *,
                   postprocess: str = "none", confidence: float = 0.95,
                   notes: Iterable[str] = ()) -> Any:
    """The estimate from the added aggregates: :func:`~dpstudio.engine.local.run_local`'s
    result, without the reports.

    Parameters
    ----------
    total : LocalPartial
        :func:`add_local_partials` of every partition.
    plan : LocalPlan
        The plan the partitions ran.
    source : Source
        The source the client stands for (a seeded one marks the result simulated).
    postprocess : str
        ``"none"``, ``"clip"`` or ``"simplex"`` (as for ``run_local``).
    confidence : float
        Level of the normal intervals, in (0, 1).
    notes : iterable of str
        Notes added after the protocol's own.

    Returns
    -------
    LocalResult
        With ``reports`` None (no records to export).

    Raises
    ------
    QueryError
        For an empty column, a bad ``postprocess`` or ``confidence``, or an aggregate of
        another protocol or shape.
    """
    from dpstudio.engine.local.run import (
        Collected,
        histogram_note,
        histogram_result,
        interval_z,
        mean_note,
        mean_result,
        result_fields,
    )

    z = interval_z(postprocess, confidence)
    if (total.mechanism, total.query, len(total.counts)) != (plan.mechanism, plan.query,
                                                             plan.size):
        raise QueryError("the aggregate is not of this protocol")
    if total.n <= 0:
        raise QueryError("the column is empty")
    oracle, n = plan.oracle(), int(total.n)
    counts = np.asarray(total.counts, dtype=np.int64)
    if plan.query == "mean":
        got = Collected(plan.mechanism, "mean", oracle, None, n, np.zeros(0),
                        clamped=total.clamped, missing=total.missing,
                        notes=[mean_note(oracle)])
        raw = (oracle.estimate_from_ones(int(counts[0]), n) if isinstance(oracle, DuchiMean)
               else oracle.estimate_from_steps(int(counts[0]), n))
        out = mean_result(got, raw, z, postprocess,
                          result_fields(got, source, postprocess, confidence))
    else:
        got = Collected(plan.mechanism, "histogram", oracle, None, n, np.zeros(0),
                        labels=plan.cells, clamped=total.clamped, missing=total.missing,
                        notes=[histogram_note(plan.other)])
        if isinstance(oracle, CountMeanSketch):
            cells = oracle.hashes * oracle.buckets
            sketch = oracle.sketch_from_counts(
                counts[:cells].reshape(oracle.hashes, oracle.buckets), counts[cells:])
            est = oracle.estimate_from_sketch(sketch, n)
        else:
            est = oracle.estimate_from_counts(counts, n)
        out = histogram_result(got, est, z, postprocess,
                               result_fields(got, source, postprocess, confidence))
    out.notes = list(out.notes) + list(notes)
    return out
