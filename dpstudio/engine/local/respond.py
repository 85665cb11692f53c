"""Every user sends a report: what a user whose value is missing or undeclared sends.

In the local model the collector sees each report it receives, so *whether* a user
reports is itself released: if only the users holding a declared value answered, the
number of reports (the released ``n``, the exported records, the sum of the estimates)
would reveal exactly how many users have a missing or undeclared value — an ε = ∞
leak about each of them (a user moving from "declared" to "missing" changes the count
with certainty). Here every row of the column sends exactly one report, chosen by a
rule that looks at that user's value only:

* **histograms**: the declared categories ``0..k−1`` plus one more code ``k``,
  :data:`OTHER_LABEL`, sent through the *same* randomizer over ``k + 1`` values. A
  declared and a missing value are then two inputs of one ε-LDP randomizer, and every
  cell's estimator stays unbiased (the extra cell estimates how many users are missing
  or undeclared; the released histogram includes it, so the estimates sum to ``n``).
  Binary randomized response (``rr``) has no third answer: such a user's answer is a
  fair coin's (randomized response of a uniformly drawn yes/no), so each of the two
  counts estimates its declared count plus half of the others.
* **means**: a missing or non-finite value is replaced by the middle of the declared
  bounds before it is randomized; the estimate is the mean over all ``n`` rows of the
  clamped, imputed column.
* **heavy hitters** (words): a missing value sends the empty word, which the
  sequence-fragment puzzle never reports as discovered.

``n`` (the number of rows) is then public, as the replace relation of a local release
already assumes; how many values were missing or undeclared stays with the analyst.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.local._coins import uniform_below32
from dpstudio.engine.missing import fill_missing, midpoint
from dpstudio.engine.queries import present_mask, row_codes

__all__ = ["OTHER_LABEL", "Inputs", "has_other_cell", "histogram_inputs", "mean_inputs",
           "word_inputs"]

#: Label of the extra histogram cell: users whose value is missing or not declared.
OTHER_LABEL = "(other or missing)"


def has_other_cell(mechanism: str) -> bool:
    """Whether a local histogram of ``mechanism`` has the extra :data:`OTHER_LABEL` cell:
    every randomizer but binary randomized response, which has no third answer (its
    missing users answer a fair coin's yes/no).

    Parameters
    ----------
    mechanism : str
        A local randomizer's registry name.

    Returns
    -------
    bool
    """
    return mechanism != "rr"


@dataclass(frozen=True)
class Inputs:
    """What each row feeds its randomizer (one entry per row of the column).

    ``missing`` (missing or non-finite values) and ``undeclared`` (present values outside
    the declared categories or bounds) are counts for the analyst only: they are never
    released.

    Attributes
    ----------
    values : numpy.ndarray, shape (n,)
        What each row's randomizer receives: codes, numbers or words.
    missing : int
        Rows with a missing or non-finite value (analyst-only).
    undeclared : int
        Present values outside the declared categories or bounds (analyst-only).
    """

    values: np.ndarray
    missing: int
    undeclared: int


def histogram_inputs(values, labels: list[str], source, other: bool = True) -> Inputs:
    """Codes in ``0..k`` for every row: declared values → their index, the rest → ``k``.

    With ``other=False`` (binary randomized response) the rest get a uniform code in
    ``0..k−1`` drawn from ``source`` instead: a fair coin for ``k = 2``.

    Parameters
    ----------
    values : array_like
        The column; values are compared with the labels as text.
    labels : list of str
        The ``k`` declared categories.
    source : Source
        Draws the uniform codes when ``other`` is False.
    other : bool
        Whether the randomizer has the extra cell ``k`` (:func:`has_other_cell`).

    Returns
    -------
    Inputs
        int64 codes in ``0..k`` (``0..k−1`` when ``other`` is False).
    """
    k = len(labels)
    codes, undeclared = row_codes(values, labels)
    rest = np.flatnonzero(codes < 0)
    codes[rest] = k
    if not other and rest.size:
        # Lemire's exact uniform below k from 32-bit words (k = 2: a fair bit).
        codes[rest] = uniform_below32(k, source.uint32(rest.size), source)
    return Inputs(codes, rest.size - undeclared, undeclared)


def mean_inputs(values, lower: float, upper: float) -> Inputs:
    """Every row's number: missing and non-finite values become ``(lower + upper)/2``.

    Values outside the bounds are kept here (each randomizer clamps them) and counted in
    ``undeclared``. Text raises :class:`QueryError`.

    Parameters
    ----------
    values : array_like
        The column.
    lower, upper : float
        The declared bounds.

    Returns
    -------
    Inputs
        float64 values, none missing.

    Raises
    ------
    QueryError
        For a present value that is not a number.
    """
    v = np.asarray(values).reshape(-1)
    if v.dtype.kind in "fiub":  # numbers already: missing = non-finite, one pass
        x, missing, _ = fill_missing(v, midpoint(lower, upper))
        undeclared = int(np.count_nonzero((x < lower) | (x > upper)))
        return Inputs(x, missing, undeclared)
    x = np.full(v.size, np.nan)
    present = present_mask(v)
    try:
        x[present] = np.asarray(v[present], dtype=np.float64)
    except (TypeError, ValueError):
        raise QueryError("a local mean needs numeric values") from None
    # A declared constant: the rule needs no data.
    x, missing, _ = fill_missing(x, midpoint(lower, upper))
    undeclared = int(np.count_nonzero((x < lower) | (x > upper)))
    return Inputs(x, missing, undeclared)


def word_inputs(values) -> Inputs:
    """Every row's word: missing values become the empty word ``""``.

    Whether every present value is text is checked once, by the puzzle's ``prepare``.

    Parameters
    ----------
    values : array_like
        The column.

    Returns
    -------
    Inputs
        An object array of words (``undeclared`` is 0).
    """
    v = np.asarray(values, dtype=object).reshape(-1)
    present = present_mask(v)
    words = v.copy()
    words[~present] = ""
    return Inputs(words, int(v.size - np.count_nonzero(present)), 0)
