"""Exact budget arithmetic: sums of ε and δ that cannot drift.

Adding floats drifts (0.1 + 0.2 ≠ 0.3 and ten 0.1s do not make 1.0), so a ledger kept in
floats can report "exceeded" for spending that exactly uses up a budget. Here every amount
is taken as the decimal the user typed — for a float, ``Decimal(repr(x))``, the shortest
decimal that rounds to it — and sums are exact decimal sums. Basic composition adds ε and
δ, so these sums are what a sequential budget spends.

An amount is a number (one resource, ε or δ) or an (ε, δ) pair; all amounts in one call
must be of the same kind.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Iterable, Sequence
from decimal import Decimal

from dpstudio.engine.checks import count, number
from dpstudio.engine.errors import ParameterError

__all__ = ["as_float", "exact", "fits", "remaining", "spent", "split"]

Amount = float | int | str | Decimal
Entry = Amount | tuple[Amount, Amount]

# Exact for any sum of float-derived decimals (their digits span < 700 places); an inexact
# operation raises rather than rounds.
_CONTEXT = decimal.Context(prec=1000, Emax=10_000, Emin=-10_000,
                           traps=[decimal.Inexact, decimal.InvalidOperation])
_PART_DIGITS = 15  # digits of split parts: every 15-digit decimal round-trips via float


def exact(value: Amount) -> Decimal:
    """The exact decimal of an amount ≥ 0.

    Parameters
    ----------
    value : float, int, str or Decimal
        Floats are read as the shortest decimal that rounds to them (what was typed).

    Returns
    -------
    Decimal

    Raises
    ------
    ParameterError
        For a value that is not a number (a bool included), or not finite and ≥ 0.
    """
    if isinstance(value, bool):
        raise ParameterError(f"a budget amount must be a number, got {value!r}")
    try:
        if isinstance(value, float):
            d = Decimal(repr(value))
        elif isinstance(value, int | Decimal):
            d = Decimal(value)
        elif isinstance(value, str):
            d = Decimal(value.strip())
        else:
            d = Decimal(repr(float(value)))
    except (TypeError, ValueError, decimal.InvalidOperation):
        raise ParameterError(f"a budget amount must be a number, got {value!r}") from None
    # The range is checked on the exact decimal: a tiny negative amount stays negative.
    number("a budget amount", d, low=0)
    return d


def _parts(entry: Entry, pair: bool) -> tuple[Decimal, ...]:
    if isinstance(entry, tuple | list):
        if not pair or len(entry) != 2:
            raise ParameterError("mix of (ε, δ) pairs and single amounts in one budget")
        return exact(entry[0]), exact(entry[1])
    if pair:
        raise ParameterError("mix of (ε, δ) pairs and single amounts in one budget")
    return (exact(entry),)


def _is_pair(entry: Entry) -> bool:
    return isinstance(entry, tuple | list)


def _result(values: Sequence[Decimal], pair: bool):
    return (values[0], values[1]) if pair else values[0]


def _sum(entries: Iterable[Entry], pair: bool) -> list[Decimal]:
    totals = [Decimal(0), Decimal(0)] if pair else [Decimal(0)]
    with decimal.localcontext(_CONTEXT):
        for e in entries:
            for i, part in enumerate(_parts(e, pair)):
                totals[i] = totals[i] + part
    return totals


def spent(entries: Iterable[Entry], pair: bool | None = None):
    """Exact total of the amounts spent.

    Parameters
    ----------
    entries : iterable of amounts or (ε, δ) pairs
    pair : bool, optional
        Whether entries are pairs (inferred from the first entry; needed when empty).

    Returns
    -------
    Decimal or (Decimal, Decimal)
    """
    items = list(entries)
    is_pair = _is_pair(items[0]) if items and pair is None else bool(pair)
    return _result(_sum(items, is_pair), is_pair)


def remaining(total: Entry, spent_list: Iterable[Entry]):
    """Exact budget left: ``total`` minus the sum of ``spent_list`` (negative if overdrawn).

    Parameters
    ----------
    total : amount or (ε, δ) pair
    spent_list : iterable of amounts or pairs, of the same kind as ``total``

    Returns
    -------
    Decimal or (Decimal, Decimal)
    """
    pair = _is_pair(total)
    tot = _parts(total, pair)
    used = _sum(spent_list, pair)
    with decimal.localcontext(_CONTEXT):
        left = [t - u for t, u in zip(tot, used, strict=True)]
    return _result(left, pair)


def fits(total: Entry, spent_list: Iterable[Entry], request: Entry) -> bool:
    """Whether ``request`` can be spent after ``spent_list`` without exceeding ``total``.

    Exact: spending that sums to the total exactly fits; any overdraw, however small,
    does not.

    Parameters
    ----------
    total : amount or (ε, δ) pair
    spent_list : iterable of amounts or pairs
    request : amount or pair

    Returns
    -------
    bool
    """
    pair = _is_pair(total)
    left = remaining(total, spent_list)
    left_parts = left if pair else (left,)
    req = _parts(request, pair)
    return all(r <= lft for r, lft in zip(req, left_parts, strict=True))


def _split_one(total: Decimal, k: int) -> list[Decimal]:
    if total == 0:
        return [Decimal(0)] * k
    with decimal.localcontext(_CONTEXT) as ctx:
        ctx.traps[decimal.Inexact] = False
        share = total / k
        exponent = share.adjusted() - (_PART_DIGITS - 1)
        part = share.quantize(Decimal(1).scaleb(exponent), rounding=decimal.ROUND_DOWN)
        ctx.traps[decimal.Inexact] = True
        last = total - part * (k - 1)
    return [part] * (k - 1) + [last]


def split(total: Entry, k: int) -> list:
    """Split a budget into k parts that sum exactly to it.

    The first k − 1 parts are equal, total/k rounded down to 15 significant digits; the
    last takes the exact remainder, so it is the largest, by less than k units of the
    15th digit. When the total has at most 15 significant digits, so do all parts, and
    they survive a round trip through float (``exact(float(part)) == part``).

    Parameters
    ----------
    total : amount or (ε, δ) pair
    k : int
        Number of parts, ≥ 1.

    Returns
    -------
    list of Decimal, or list of (Decimal, Decimal)
    """
    n = count("k", k)
    pair = _is_pair(total)
    columns = [_split_one(t, n) for t in _parts(total, pair)]
    return list(zip(*columns, strict=True)) if pair else columns[0]


def as_float(value: Decimal) -> float:
    """The float nearest to a budget amount, rounded up so as never to understate it.

    Parameters
    ----------
    value : Decimal
        An exact amount (from :func:`exact`, :func:`spent`, …).

    Returns
    -------
    float
        The smallest float ≥ ``value``.
    """
    f = float(value)
    return f if Decimal(f) >= value else math.nextafter(f, math.inf)
