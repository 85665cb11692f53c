"""Accountants: how a dataset's releases add up against its (ε, δ) budget.

``basic`` (the default) is basic sequential composition: the ε and δ of every release are
added, exactly (decimal sums, so ten releases of 0.1 use up a budget of 1.0 exactly and an
eleventh is refused). It holds for any mix of mechanisms.

The tight accountants compose what each release drew — its privacy-loss description
(:class:`~dpstudio.engine.accounting.loss.LossDescription`, stored per release, see
:mod:`dpstudio.project.ledger_loss`) — with the engine's
:func:`~dpstudio.engine.accounting.ledger.spent`:

``advanced``  the optimal composition of Kairouz, Oh & Viswanath (homogeneous claims),
              their heterogeneous bound otherwise;
``zcdp``      ρ adds up for Gaussian-family releases, pure-ε ones enter as ε²/2;
``pld``       privacy-loss distributions composed by the engine's FFT accountant
              (pessimistic).

Each reads ε at Σδᵢ, the δ basic composition spends, so every accountant's spent δ is the
same exact decimal sum and only ε differs; and never reports more ε than basic (the
smaller valid bound is kept). A release known only by its (ε, δ) (any release made before
the project stored descriptions) enters as the worst-case (ε, δ) pair: pessimistic.

A dataset's accountant is chosen when it is registered (the project's default, or the
spec's) and is fixed from its first release on: changing it afterwards would let the
same releases be re-counted under whichever accountant shows more budget left.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import Decimal

from dpstudio.engine.accounting import budget as exact_budget
from dpstudio.engine.accounting import ledger
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.queries import QuerySpec
from dpstudio.project.errors import ProjectError
from dpstudio.project.ledger_loss import charge_loss

__all__ = ["ACCOUNTANTS", "Accountant", "BasicAccountant", "TightAccountant",
           "get_accountant", "spent_by_accountant"]

Pair = tuple[Decimal, Decimal]


class Accountant:
    """What a dataset's budget is checked with.

    The pair methods (:meth:`charge`, :meth:`spent`, :meth:`fits`) take each release's
    charged (ε, δ); the ``*_losses`` methods take each release's privacy-loss description
    (what the tight accountants need; a charge alone is its pure/approx description).
    """

    name = ""
    description = ""

    def charge(self, spec: QuerySpec) -> Pair:
        """The (ε, δ) this release claims, known before any noise is drawn."""
        return exact_budget.exact(spec.epsilon), exact_budget.exact(spec.delta)

    def spent_losses(self, losses: Iterable[LossDescription], basic: Pair | None = None
                     ) -> Pair:
        """(ε, δ) spent by these releases, an upper bound, as exact decimals (``basic``:
        the exact sums of their charges, when the caller has them)."""
        raise NotImplementedError

    def spent(self, charges: Iterable[Pair]) -> Pair:
        """(ε, δ) spent by releases known by their charges."""
        return self.spent_losses([charge_loss(e, d) for e, d in charges])

    def fits_losses(self, total: Pair, losses: Iterable[LossDescription],
                    request: LossDescription) -> bool:
        """Whether the past releases and ``request`` fit ``total`` together."""
        e, d = self.spent_losses([*losses, request])
        return e <= total[0] and d <= total[1]

    def fits_charged(self, total: Pair, charges: Sequence[Pair],
                     losses: Sequence[LossDescription], request: Pair,
                     request_loss: LossDescription | None = None) -> bool:
        """The release transaction's gate: whether the past releases (their exact
        ``charges`` and, in the same order, their ``losses``, as
        ``ProjectStore._losses`` gives them) and a new one (its ``request`` charge and,
        once drawn, its description) fit ``total`` together.

        Basic composition checks the exact decimal sums; a tight accountant composes the
        descriptions (the request's pure/approx one when ``request_loss`` is None) and
        reads ε at Σδᵢ, never above the exact basic sum.
        """
        if self.name == "basic":
            return exact_budget.fits(total, list(charges), request)
        loss = charge_loss(*request) if request_loss is None else request_loss
        basic = BASIC.spent([*charges, request])
        e, d = self.spent_losses([*losses, loss], basic)
        return e <= total[0] and d <= total[1]

    def fits(self, total: Pair, charges: Iterable[Pair], request: Pair) -> bool:
        """:meth:`fits_losses` for releases known by their charges."""
        return self.fits_losses(total, [charge_loss(e, d) for e, d in charges],
                                charge_loss(*request))


class BasicAccountant(Accountant):
    name = "basic"
    description = "basic composition: ε and δ of all releases add up (exact decimal sums)"

    def spent(self, charges: Iterable[Pair]) -> Pair:
        return exact_budget.spent(list(charges), pair=True)

    def spent_losses(self, losses: Iterable[LossDescription], basic: Pair | None = None
                     ) -> Pair:
        if basic is not None:
            return basic
        # The claims, exactly as charged (a description claims its release's charge).
        return self.spent([(exact_budget.exact(d.epsilon), exact_budget.exact(d.delta))
                           for d in _leaves(losses)])

    def fits(self, total: Pair, charges: Iterable[Pair], request: Pair) -> bool:
        return exact_budget.fits(total, list(charges), request)


class TightAccountant(Accountant):
    """``advanced``, ``zcdp`` or ``pld``: the engine's composition of the descriptions."""

    def __init__(self, name: str, description: str) -> None:
        self.name = name
        self.description = description

    def spent_losses(self, losses: Iterable[LossDescription], basic: Pair | None = None
                     ) -> Pair:
        """``basic``: the exact basic sums of the same releases' charges, when known."""
        items = list(losses)
        basic = BASIC.spent_losses(items) if basic is None else basic
        if not items:
            return basic
        # Read at basic's exact Σδᵢ (rounded down to a float: ε at a smaller δ is larger,
        # so pessimistic), not at the descriptions' own float sum, which may round above
        # it; never above basic's exact ε, which holds there too.
        used = ledger.spent(items, self.name, _float_down(basic[1]) if basic[1] > 0 else None)
        eps = Decimal(repr(used.epsilon)) if used.epsilon < float("inf") else basic[0]
        return min(eps, basic[0]), basic[1]


    def spent_series(self, losses: Sequence[LossDescription], basics: Sequence[Pair]
                     ) -> list[Decimal]:
        """ε spent after each of these releases, in order (``basics``: the exact basic
        sums after each); never above basic's."""
        deltas = [_float_down(d) if d > 0 else None for _, d in basics]
        series = ledger.spent_series(losses, self.name, deltas)
        return [min(Decimal(repr(s.epsilon)) if s.epsilon < float("inf") else e, e)
                for s, (e, _) in zip(series, basics, strict=True)]


def _float_down(x: Decimal) -> float:
    """The largest float ≤ ``x``."""
    f = float(x)
    return math.nextafter(f, 0.0) if Decimal(repr(f)) > x else f


def _leaves(losses: Iterable[LossDescription]) -> list[LossDescription]:
    out: list[LossDescription] = []
    for d in losses:
        out.extend(d.leaves())
    return out


BASIC = BasicAccountant()
ACCOUNTANTS: dict[str, Accountant] = {
    "basic": BASIC,
    "advanced": TightAccountant(
        "advanced", "advanced composition: the optimal composition of Kairouz, Oh & "
        "Viswanath (2015) of the releases' (ε, δ)"),
    "zcdp": TightAccountant(
        "zcdp", "zero-concentrated DP: ρ of Gaussian releases adds up, pure-ε releases "
        "enter as ε²/2, converted to (ε, δ)"),
    "pld": TightAccountant(
        "pld", "privacy-loss distributions of what each release drew, composed by FFT "
        "(pessimistic)"),
}


def get_accountant(name: str) -> Accountant:
    """The accountant called ``name``; ProjectError (one sentence) for another name."""
    try:
        return ACCOUNTANTS[name]
    except (KeyError, TypeError):
        raise ProjectError(f"unknown accountant {name!r} (available: "
                           f"{', '.join(ACCOUNTANTS)})") from None


def spent_by_accountant(losses: Sequence[LossDescription]) -> dict[str, Pair]:
    """(ε, δ) spent by these releases under every accountant, side by side.

    Parameters
    ----------
    losses : sequence of LossDescription

    Returns
    -------
    dict
        Accountant name → exact (ε, δ), in the order of :data:`ACCOUNTANTS`.
    """
    return {name: acc.spent_losses(losses) for name, acc in ACCOUNTANTS.items()}
