"""Accountants: how a dataset's releases add up against its (ε, δ) budget.

``basic`` (the default, and the only one so far) is basic sequential composition: the
ε and δ of every release are added, exactly (decimal sums, so ten releases of 0.1 use up
a budget of 1.0 exactly and an eleventh is refused). It holds for any mix of mechanisms
and is pessimistic: a tighter accountant (zCDP or privacy-loss distributions for Gaussian
releases) would allow more releases from the same budget, never fewer. A dataset keeps the
accountant it was registered with; every release records it.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from dpstudio.engine.accounting import budget as exact_budget
from dpstudio.engine.queries import QuerySpec
from dpstudio.project.errors import ProjectError

__all__ = ["ACCOUNTANTS", "Accountant", "BasicAccountant", "get_accountant"]

Pair = tuple[Decimal, Decimal]


class Accountant:
    """What a dataset's budget is checked with."""

    name = ""
    description = ""

    def charge(self, spec: QuerySpec) -> Pair:
        """The (ε, δ) this release spends, known before any noise is drawn."""
        raise NotImplementedError

    def spent(self, charges: Iterable[Pair]) -> Pair:
        raise NotImplementedError

    def fits(self, total: Pair, charges: Iterable[Pair], request: Pair) -> bool:
        raise NotImplementedError


class BasicAccountant(Accountant):
    name = "basic"
    description = "basic composition: ε and δ of all releases add up (exact decimal sums)"

    def charge(self, spec: QuerySpec) -> Pair:
        return exact_budget.exact(spec.epsilon), exact_budget.exact(spec.delta)

    def spent(self, charges: Iterable[Pair]) -> Pair:
        return exact_budget.spent(list(charges), pair=True)

    def fits(self, total: Pair, charges: Iterable[Pair], request: Pair) -> bool:
        return exact_budget.fits(total, list(charges), request)


ACCOUNTANTS: dict[str, Accountant] = {"basic": BasicAccountant()}


def get_accountant(name: str) -> Accountant:
    try:
        return ACCOUNTANTS[name]
    except KeyError:
        raise ProjectError(f"unknown accountant {name!r} (available: "
                           f"{', '.join(ACCOUNTANTS)})") from None
