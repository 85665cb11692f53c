"""A column as a query sees it: present values, missing ones, category codes.

Missing values (None, empty, NaN, ±inf) are detected once here (:func:`present_mask`);
numeric columns are prepared under the spec's missing treatment (dropped or imputed) with
the analyst-only counts of clamped and missing values; categorical columns become codes
into the declared labels (:func:`row_codes`, :func:`category_codes`,
:func:`category_counts`) through a hash table, never by sorting their text
(:mod:`~dpstudio.engine.queries.codes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.missing import fill_missing
from dpstudio.engine.queries.codes import MISSING, UNDECLARED, coded
from dpstudio.engine.queries.spec import QuerySpec, check_bounds

__all__ = ["category_codes", "category_counts", "present_mask", "row_codes"]

# Codes counted per slice: bincount's index array stays a few MB whatever the rows.
_COUNT_SLICE = 1 << 20


@dataclass
class _Column:
    """A numeric column prepared for a query.

    ``values``: the finite values, with missing ones (empty, NaN, ±inf) dropped or, when
    the spec imputes, replaced by the declared constant. The counts are analyst-only.
    """

    values: np.ndarray
    clamped: int
    missing: int
    non_finite: int


def _numeric(values: np.ndarray, spec: QuerySpec) -> _Column:
    """The column's values under the spec's missing treatment, and analyst-only counts
    (outside the declared bounds; missing; of which ±inf)."""
    try:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise QueryError(f"a {spec.query} needs a numeric column") from None
    if v.size == 0:
        raise QueryError("the column is empty")
    finite = np.isfinite(v)
    n_present = int(np.count_nonzero(finite))
    # A column without missing values is used as it is (read-only: the caller's data),
    # not copied whole.
    if n_present == v.size:
        present = v.view()
        present.flags.writeable = False
    else:
        present = v[finite]
    del finite
    c = spec.impute_value()
    if c is not None:  # ±inf is missing too: imputed (never clamped), and counted
        used, missing, non_finite = fill_missing(v, c)
    elif n_present == 0:
        raise QueryError("the column has no finite values (all missing, NaN or infinite)")
    else:
        used, missing = present, v.size - n_present
        non_finite = int(np.count_nonzero(np.isinf(v))) if missing else 0
    clamped = 0
    if spec.bounds is not None:
        lo, hi = check_bounds(spec.bounds)
        # In slices: two boolean temporaries of one slice, never of the whole column.
        clamped = sum(int(np.count_nonzero((part < lo) | (part > hi)))
                      for part in (present[i:i + _COUNT_SLICE]
                                   for i in range(0, present.size, _COUNT_SLICE)))
    return _Column(used, clamped, missing, non_finite)


def _missing_counts(values: np.ndarray) -> tuple[int, int]:
    """(missing, of which ±inf) in a column: analyst-only counts."""
    v = np.asarray(values).reshape(-1)
    infinite = int(np.count_nonzero(np.isinf(v))) if v.dtype.kind in "fc" else 0
    return int(np.count_nonzero(~present_mask(v))), infinite


def present_mask(values: np.ndarray) -> np.ndarray:
    """Mask of the non-missing entries of a column.

    Missing means None or NaN (NaN is the one value ≠ itself) and, in a numeric column,
    also ±inf, which no release treats as a value.

    Parameters
    ----------
    values : array_like
        The column (numeric, or an object array of labels).

    Returns
    -------
    numpy.ndarray of bool
        True where the entry is present, of the column's shape.
    """
    v = np.asarray(values)
    if v.dtype.kind in "fc":
        return np.isfinite(v)
    if v.dtype.kind != "O":
        return np.ones(v.shape, dtype=bool)
    return np.not_equal(v, None) & np.equal(v, v)


def row_codes(values: np.ndarray, labels: list[str]) -> tuple[np.ndarray, int]:
    """One code per row: the index into ``labels`` of a declared value, −1 otherwise.

    Values are compared with the labels as text. Through a hash table (one look-up per
    row, each distinct value converted to text once), never by sorting the column's text;
    a read-only column is encoded once per set of labels (:func:`~.codes.coded`).

    Parameters
    ----------
    values : array_like
        The column.
    labels : list of str
        The declared categories.

    Returns
    -------
    codes : numpy.ndarray of int64
        Per row, the index into ``labels``, or −1 for a missing or undeclared value.
    undeclared : int
        How many present values were not declared (analyst-only).
    """
    codes = coded(values, labels)
    out = codes.astype(np.int64)
    undeclared = out == UNDECLARED
    out[undeclared] = MISSING
    return out, int(np.count_nonzero(undeclared))


def category_codes(values: np.ndarray, labels: list[str]) -> tuple[np.ndarray, int]:
    """Codes of the present, declared values only (missing and undeclared ones left out).

    Parameters
    ----------
    values : array_like
        The column.
    labels : list of str
        The declared categories.

    Returns
    -------
    codes : numpy.ndarray of int64
        Indices into ``labels`` of the declared values, in row order.
    undeclared : int
        How many present values were not declared (analyst-only).
    """
    codes = coded(values, labels)
    return codes[codes >= 0].astype(np.int64), int(np.count_nonzero(codes == UNDECLARED))


def category_counts(values: np.ndarray, labels: list[str]) -> tuple[np.ndarray, int, int]:
    """How many rows hold each declared category, and the analyst-only rest.

    The same numbers as counting :func:`category_codes`, without a per-row copy.

    Parameters
    ----------
    values : array_like
        The column.
    labels : list of str
        The declared categories.

    Returns
    -------
    counts : numpy.ndarray of int64
        One count per label, in the labels' order.
    undeclared : int
        Present values that are not declared.
    missing : int
        Missing values (None, NaN; ±inf in a numeric column).
    """
    codes = coded(values, labels)
    every = np.zeros(len(labels) + 2, dtype=np.int64)
    for start in range(0, codes.size, _COUNT_SLICE):  # no full-size index array at once
        part = codes[start:start + _COUNT_SLICE].astype(np.intp)
        # Shifted by 2: UNDECLARED (−2) and MISSING (−1) are counted in the same pass.
        every += np.bincount(part + 2, minlength=len(labels) + 2)
    return every[2:], int(every[0]), int(every[1])
