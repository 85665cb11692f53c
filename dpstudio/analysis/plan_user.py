"""A user-level release plan's statistics: rows bounded once, every sensitivity × k.

A plan on a dataset with an identifier column (declared in the schema, or named by the
spec's ``identifier`` with ``max_rows``) protects people: each person's rows beyond k are
dropped at random ONCE for the whole plan (:func:`bound_plan_rows`), before any statistic,
and every statistic — ungrouped (:func:`run_bounded_statistic`) or grouped
(:func:`dpstudio.engine.queries.grouped.grouped_release` with ``max_rows``) — is
calibrated to k × its row-level sensitivity. The number of rows dropped is never part of
any result.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.result import AnalysisResult
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries.spec import QuerySpec
from dpstudio.engine.rng import Source

__all__ = ["bound_plan_rows", "plan_identifier", "run_bounded_statistic"]


def plan_identifier(spec_identifier: str | None, spec_max_rows: int | None,
                    declared: Any) -> tuple[str | None, int | None, list[str]]:
    """A plan's unit of privacy: the identifier column and k, or (None, None) row-level.

    Parameters
    ----------
    spec_identifier : str or None
        The spec's top-level ``identifier``.
    spec_max_rows : int or None
        The spec's top-level ``max_rows``.
    declared : schema-like or None
        The dataset's declared schema (its identifier column and that column's
        ``max_rows``).

    Returns
    -------
    (str or None, int or None, list of str)
        The identifier, k and notes.

    Raises
    ------
    QueryError
        In one sentence: a spec identifier that is not the schema's, ``max_rows`` without
        an identifier, or no declared k.
    """
    from dpstudio.analysis.contribution import declared_identifier
    from dpstudio.engine.contribution import check_max_rows

    schema_id = declared_identifier(declared)
    if spec_identifier is not None and schema_id is not None and spec_identifier != schema_id:
        raise QueryError(f"the spec's identifier {spec_identifier!r} is not the column the "
                         f"dataset's schema declares as identifying a person ({schema_id!r})")
    name = spec_identifier or schema_id
    if name is None:
        if spec_max_rows is not None:
            raise QueryError("max_rows bounds each person's rows: it needs an identifier "
                             "column (identifier = \"col\")")
        return None, None, []
    notes: list[str] = []
    k = spec_max_rows
    if k is None:
        column = declared.get(name) if declared is not None else None
        k = getattr(column, "max_rows", None)
        if k is None:
            raise QueryError(f"declare the maximum number of rows per person for {name!r} "
                             "(max_rows = k): it is never read off the data")
        notes.append(f"at most {k} rows per person, as declared in the dataset's schema")
    return name, check_max_rows(k), notes


def bound_plan_rows(ids: np.ndarray, max_rows: int, source: Source) -> np.ndarray:
    """Which rows the whole plan reads: at most k per person, one random draw.

    Parameters
    ----------
    ids : numpy.ndarray
        Each row's identifier.
    max_rows : int
        k.
    source : Source
        The release's :class:`~dpstudio.engine.rng.SecureSource` (a seeded one in
        simulations).

    Returns
    -------
    numpy.ndarray of bool
        The rows kept (private: how many were dropped is never released).

    Raises
    ------
    QueryError
        When no row has an identifier.
    """
    from dpstudio.engine.contribution import bound_contributions

    keep = bound_contributions(ids, max_rows, source)
    if not keep.any():
        raise QueryError("no row has an identifier: nothing to release per person")
    return keep


def run_bounded_statistic(q: QuerySpec, kept: np.ndarray, identifier: str, max_rows: int,
                          source: Source) -> AnalysisResult:
    """One ungrouped statistic of a user-level plan on the rows kept.

    Parameters
    ----------
    q : QuerySpec
        The statistic at its share (add-remove).
    kept : numpy.ndarray
        Its column on the rows :func:`bound_plan_rows` kept.
    identifier : str
        The identifier column (stated in the result).
    max_rows : int
        k.
    source : Source
        The noise.

    Returns
    -------
    AnalysisResult
        As a single user-level release's; the analyst-only counts (clamped, missing) are
        apart from the public fields, and the number dropped is nowhere.
    """
    from dpstudio.engine.queries.bounded import run_bounded

    analysis = AnalysisSpec("central", q, identifier=identifier, max_rows=max_rows)
    result = run_bounded(kept, q, max_rows, source)
    fields = result.to_dict()
    analyst = {"clamped": fields.pop("clamped", 0)}
    if "missing_count" in fields:
        analyst["missing"] = fields.pop("missing_count")
    if "non_finite_count" in fields:
        analyst["non_finite"] = fields.pop("non_finite_count")
    fields.update(trust_model="central", identifier=identifier, max_rows=max_rows)
    return AnalysisResult(analysis, result, fields, analyst, source_label=source.label)
