"""The privacy budget of the session's dataset, as the budget panel and the Release…
button read it: total, spent, this release, left — exact decimals that add up.

With a project open the totals and the spending are the project's (its ledger, counted
by its accountant); otherwise the session's totals, of which nothing is spent (real
releases are made in a project only).

Under a tight accountant (``advanced``, ``zcdp``, ``pld``) what this release adds is not
its ε: the accountant composes the ledger's privacy-loss descriptions with the one this
release would draw (:func:`~dpstudio.project.ledger_loss.planned_loss`, from the
declaration alone) and "left" is the total minus that composition — the same figure the
release transaction gates with. Basic composition subtracts, as before.

Composing can take a second (a discrete Gaussian's exact privacy-loss distribution, the
calibration of a new ε), too long for the UI thread during a slider drag: the figures say
what is still to compose (:attr:`BudgetFigures.pending`), the budget panel composes it in
a worker (:func:`compose_pending`), and the figures read the result once it is cached.
Until then the ε words say so ("… → composing under pld") and the release is not called
over budget on ε (the release transaction gates it with the accountant in any case).

A shuffle or secure-aggregation release charges what its protocol meets for the public
number of users, which can be below the ε on the slider (the privacy blanket's FMT21
bound): that is planned in the same worker (:mod:`~dpstudio.ui.budget_protocol`), and
until it is, the ε words say so ("… → planning the protocol…"); then ``this`` is the
planned charge and :attr:`BudgetFigures.asked` the slider's (ε, δ).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from dpstudio.analysis.choices import fixed_epsilon, release_epsilon
from dpstudio.engine.accounting import budget as exact_budget
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.ui.budget_protocol import (
    MISSING,
    PlannedCharge,
    ProtocolRequest,
    cached_charge,
    protocol_request,
)

__all__ = ["BudgetFigures", "ProjectBudget", "TightRequest", "amount", "budget_figures",
           "compose_pending", "largest_within"]

_ZERO = Decimal(0)


@dataclass(frozen=True)
class ProjectBudget:
    """The open project's budget for the session's dataset (plain floats, for display).

    ``registered`` is False when the dataset has no release yet: its first release
    registers it with these totals (the project's defaults). ``exact_total`` and
    ``exact_spent`` are the project's exact decimals, (ε, δ) each, as its accountant
    counts them (None: read from the floats). ``losses`` are the privacy-loss
    descriptions of the releases charged to this budget, as the project's accountant
    composes them (None: not read; a tight accountant's "left" then subtracts ε).
    """

    project: str
    dataset: str
    total_epsilon: float
    total_delta: float
    spent_epsilon: float = 0.0
    spent_delta: float = 0.0
    releases: int = 0
    registered: bool = False
    accountant: str = "basic"
    exact_total: tuple[Decimal, Decimal] | None = None
    exact_spent: tuple[Decimal, Decimal] | None = None
    losses: tuple[LossDescription, ...] | None = None

    @property
    def remaining_epsilon(self) -> float:
        return self.total_epsilon - self.spent_epsilon

    @property
    def remaining_delta(self) -> float:
        return self.total_delta - self.spent_delta

    def exact(self) -> tuple[tuple[Decimal, Decimal], tuple[Decimal, Decimal]]:
        """((total ε, total δ), (spent ε, spent δ)) as exact decimals."""
        total = self.exact_total or (exact_budget.exact(self.total_epsilon),
                                     exact_budget.exact(self.total_delta))
        spent = self.exact_spent or (exact_budget.exact(self.spent_epsilon),
                                     exact_budget.exact(self.spent_delta))
        return total, spent


def amount(value: Decimal | float) -> str:
    """A budget amount for reading: 0.4, 1e-05, 3 (up to 6 significant digits)."""
    v = float(value)
    return "0" if v == 0 else f"{v:.6g}"


def largest_within(limit: Decimal) -> float | None:
    """The largest float whose exact decimal (as the accountant reads a charge) is at most
    ``limit``: ``limit`` itself whenever a float spells it (0.4, 1e-05).

    Parameters
    ----------
    limit : Decimal
        What is left.

    Returns
    -------
    float or None
        None when nothing is left (``limit`` ≤ 0).
    """
    if limit <= 0:
        return None
    f = float(limit)
    while f > 0 and exact_budget.exact(f) > limit:
        f = math.nextafter(f, 0.0)
    return f if f > 0 else None


@dataclass(frozen=True)
class BudgetFigures:
    """Total, spent and this release's (ε, δ), exact, and what they leave.

    Attributes
    ----------
    total, spent, this : tuple of Decimal
        (ε, δ) each. ``this`` is what the release on screen would charge (the engine
        object's ε: a randomizer's own), (0, 0) when nothing can be released.
    releases : int
        Real releases recorded against this budget.
    project : str or None
        The project file's name; None for the session's own budget.
    dataset : str
        The dataset's name.
    accountant : str
        How the project counts (``"basic"``: ε and δ add up).
    ready : bool
        Whether the analysis on screen can be computed (``this`` counts).
    fixed : bool
        Whether a mechanism parameter fixes this release's ε (randomized response's p):
        the ε box cannot lower it.
    composed : tuple of Decimal or None
        Under a tight accountant, the (ε, δ) it spends with this release added (the
        ledger's descriptions and this release's composed); None under basic
        composition, when the ledger's descriptions were not read, or while pending.
    pending : TightRequest or None
        Under a tight accountant, what is still to compose (give it to
        :func:`compose_pending`, in a worker); None when nothing is.
    asked : tuple of Decimal or None
        For a protocol release whose planned charge differs from the (ε, δ) set on
        screen, the ones set (``this`` is then the charge); None otherwise.
    planned : PlannedCharge or None
        That protocol's plan: the charge, the users it is for, and how it accounts.
    planning : ProtocolRequest or None
        A protocol release whose charge is still to plan (give it to
        :func:`~dpstudio.ui.budget_protocol.plan_charge`, in a worker); ``this`` is then
        the (ε, δ) set, an upper bound of the charge.
    """

    total: tuple[Decimal, Decimal]
    spent: tuple[Decimal, Decimal]
    this: tuple[Decimal, Decimal]
    releases: int = 0
    project: str | None = None
    dataset: str = ""
    accountant: str = "basic"
    ready: bool = True
    fixed: bool = False
    composed: tuple[Decimal, Decimal] | None = None
    pending: TightRequest | None = None
    asked: tuple[Decimal, Decimal] | None = None
    planned: PlannedCharge | None = None
    planning: ProtocolRequest | None = None

    @property
    def waiting(self) -> bool:
        """Whether this release's ε is still being worked out (planned or composed)."""
        return self.pending is not None or self.planning is not None

    @property
    def tight(self) -> bool:
        """Whether "left" follows a tight accountant's composition (not a difference)."""
        return self.composed is not None

    @property
    def added(self) -> tuple[Decimal, Decimal]:
        """(ε, δ) this release adds to what is spent, as the accountant counts: its own
        charge under basic composition; under a tight accountant the composition with it
        minus without it (never below 0: at a larger total δ the composed ε may read
        lower)."""
        if self.composed is None:
            return self.this
        return (max(self.composed[0] - self.spent[0], _ZERO),
                max(self.composed[1] - self.spent[1], _ZERO))

    @property
    def left(self) -> tuple[Decimal, Decimal]:
        """(ε, δ) left before this release (negative when overdrawn)."""
        return exact_budget.remaining(self.total, [self.spent])

    @property
    def after(self) -> tuple[Decimal, Decimal]:
        """(ε, δ) left after this release (negative: it does not fit); under a tight
        accountant, the total minus the composition with this release."""
        if self.composed is not None:
            return exact_budget.remaining(self.total, [self.composed])
        if self.waiting:  # ε not known yet: the transaction gates it
            return exact_budget.remaining(self.total, [self.spent, (_ZERO, self.this[1])])
        return exact_budget.remaining(self.total, [self.spent, self.this])

    @property
    def over_epsilon(self) -> bool:
        return self.after[0] < 0

    @property
    def over_delta(self) -> bool:
        return self.after[1] < 0

    @property
    def over(self) -> bool:
        """Whether this release does not fit in what is left."""
        return self.over_epsilon or self.over_delta

    @property
    def shows_delta(self) -> bool:
        """Whether δ is in play: this release or an earlier one spends some."""
        return self.this[1] > 0 or self.spent[1] > 0

    def where(self) -> str:
        """"in study.dpstudio" or "in this session"."""
        return f"in {self.project}" if self.project else "in this session"

    def words(self, index: int) -> str:
        """The line under a bar, in words that add up.

        Parameters
        ----------
        index : int
            0 for ε, 1 for δ.

        Returns
        -------
        str
            "ε 1 spent + 1 this release of 3 → 1 left" (→ "0.5 over" when it does not
            fit); without a release to count, "ε 1 spent of 3 → 2 left".
        """
        symbol = "εδ"[index]
        spent, this = amount(self.spent[index]), amount(self.added[index])
        total = amount(self.total[index])
        if not self.ready:
            left = self.left[index]
            return (f"{symbol} {spent} spent of {total} → "
                    + (f"{amount(-left)} over" if left < 0 else f"{amount(left)} left"))
        after = self.after[index]
        rest = f"{amount(-after)} over" if after < 0 else f"{amount(after)} left"
        if index == 0 and self.planning is not None:
            this, rest = "…", "planning the protocol…"
        elif index == 0 and self.pending is not None:
            rest = f"composing under {self.accountant}…"
        release = "this release"
        if self.asked is not None and self.asked[index] != self.this[index]:
            release += f" ({amount(self.asked[index])} set)"  # the tooltip says why
        return f"{symbol} {spent} spent + {this} {release} of {total} → {rest}"

    def usable(self) -> tuple[float | None, float | None]:
        """The ε and δ that would make this release fit: what is left, exactly.

        Returns
        -------
        tuple
            (ε, δ): for each that does not fit, the largest value within what is left
            (:func:`largest_within`); None where it fits, where nothing is left, or (ε)
            where a parameter fixes it.
        """
        left = self.left
        eps = (largest_within(left[0]) if self.over_epsilon and not self.fixed else None)
        delta = largest_within(left[1]) if self.over_delta and self.this[1] > 0 else None
        return eps, delta

    def shortfall(self) -> str | None:
        """Why this release does not fit, in one sentence; None when it does.

        Returns
        -------
        str or None
            "Over budget: this release needs ε 0.6, but only ε 0.4 of 1 is left for
            survey.csv in study.dpstudio; …" and what to do.
        """
        if not (self.ready and self.over):
            return None
        left = self.left
        which = [i for i, over in enumerate((self.over_epsilon, self.over_delta)) if over]
        if all(left[i] <= 0 for i in which):
            names = " and ".join("εδ"[i] for i in which)
            spent = " and ".join(f"{'εδ'[i]} {amount(self.spent[i])} of "
                                 f"{amount(self.total[i])}" for i in which)
            end = ("only a mechanism without δ (pure ε-DP) can still be released"
                   if which == [1] else "nothing more can be released from it")
            return (f"Over budget: the {names} budget of {self.dataset} {self.where()} is "
                    f"used up ({spent} spent); {end}.")
        needs = " and ".join(f"{'εδ'[i]} {amount(self.added[i])}" for i in which)
        if self.tight:
            needs += f" under the {self.accountant} accountant"
        have = " and ".join(f"{'εδ'[i]} {amount(max(left[i], _ZERO))} of "
                            f"{amount(self.total[i])}" for i in which)
        verb = "is" if len(which) == 1 else "are"
        if self.fixed and self.over_epsilon:
            advice = "a mechanism parameter fixes this ε: change it to release"
        else:
            names = " and ".join("εδ"[i] for i in which)
            advice = f"lower it, or use the remaining {names} (budget panel)"
        return (f"Over budget: this release needs {needs}, but only {have} {verb} left for "
                f"{self.dataset} {self.where()}; {advice}.")

    def floats(self) -> dict[str, float]:
        """Total, spent, this release and remaining (after it) ε and δ, as floats."""
        after = self.after
        return {"total_epsilon": float(self.total[0]), "total_delta": float(self.total[1]),
                "spent_epsilon": float(self.spent[0]), "spent_delta": float(self.spent[1]),
                "this_epsilon": float(self.added[0]), "this_delta": float(self.added[1]),
                "remaining_epsilon": float(after[0]), "remaining_delta": float(after[1])}


def budget_figures(session: Any) -> BudgetFigures:
    """The session's budget: the project's for its dataset, else the session's own.

    Parameters
    ----------
    session : Session
        Read for ``project_budget``, its totals, the dataset, and the release on screen
        (``settings()``, ``delta``, ``needs_delta``).

    Returns
    -------
    BudgetFigures
    """
    s = session
    pb = s.project_budget
    if pb is not None:
        total, spent = pb.exact()
        releases, project, accountant = pb.releases, pb.project, pb.accountant
    else:
        # Real releases are made in a project only: a session spends nothing.
        total = (exact_budget.exact(s.total_epsilon), exact_budget.exact(s.total_delta))
        spent, releases, project, accountant = (_ZERO, _ZERO), 0, None, "basic"
    name = s.dataset.name if s.dataset is not None else "this dataset"
    snapshot = s.settings()
    if snapshot is None:
        return BudgetFigures(total, spent, (_ZERO, _ZERO), releases, project, name,
                             accountant, ready=False)
    # The engine object's ε (randomized response with a chosen p fixes its own), charged
    # as the accountant reads it: the exact decimal of the float.
    this = (exact_budget.exact(release_epsilon(snapshot)),
            exact_budget.exact(s.delta if s.needs_delta else 0.0))
    asked, planned, planning = None, None, None
    request = protocol_request(snapshot, _rows(s), getattr(s, "schema", None), this)
    if request is not None:  # a protocol charges its plan's (ε, δ) at the public n
        found = cached_charge(request)
        if found is MISSING:
            planning = request
        elif found is not None and found.charge != this:
            asked, this, planned = this, found.charge, found
    composed, pending = None, None
    if (planning is None and pb is not None and accountant != "basic"
            and pb.losses is not None):
        key = TightRequest.of(accountant, tuple(pb.losses), snapshot, this)
        with _LOCK:
            composed = _COMPOSED.get(key)
        pending = key if composed is None else None
    return BudgetFigures(total, spent, this, releases, project, name, accountant,
                         fixed=fixed_epsilon(snapshot) is not None, composed=composed,
                         pending=pending, asked=asked, planned=planned,
                         planning=planning)


def _rows(session: Any) -> int | None:
    """Users a release of the session's column covers: every row (a protocol sends a
    message for a missing value too), as the release transaction counts them."""
    values = getattr(session, "values", None)
    return None if values is None else int(values.size)


@dataclass(frozen=True)
class TightRequest:
    """What a tight accountant composes for the figures: the ledger's descriptions and
    the release on screen (equal requests compose to the same figures).

    Attributes
    ----------
    accountant : str
        ``advanced``, ``zcdp`` or ``pld``.
    losses : tuple of LossDescription
        The ledger's releases, as the accountant composes them.
    release : tuple
        The release on screen, by what its noise depends on (trust model and query
        spec; display options such as the confidence level left out).
    this : tuple of Decimal
        Its charge (ε, δ).
    analysis : AnalysisSpec
        The release, to plan its noise (not compared).
    """

    accountant: str
    losses: tuple[LossDescription, ...]
    release: tuple
    this: tuple[Decimal, Decimal]
    analysis: Any = field(compare=False, hash=False, repr=False)

    @classmethod
    def of(cls, accountant: str, losses: tuple[LossDescription, ...], snapshot: Any,
           this: tuple[Decimal, Decimal]) -> TightRequest:
        """The request for the release ``snapshot`` describes (a :class:`Choices`)."""
        from dpstudio.analysis import AnalysisSpec

        spec = snapshot.spec()
        same = replace(spec, confidence=0.95)  # the interval's level draws no noise
        return cls(accountant, losses, (snapshot.trust_model, repr(same)), this,
                   AnalysisSpec(snapshot.trust_model, spec))


# Compositions done, newest last: request → (ε, δ).
_COMPOSED: OrderedDict[TightRequest, tuple[Decimal, Decimal]] = OrderedDict()
_COMPOSED_SIZE = 64
_LOCK = threading.Lock()


def compose_pending(pending: TightRequest, state: Any = None) -> tuple[Decimal, Decimal]:
    """Compose what :attr:`BudgetFigures.pending` names and cache it for the figures.

    Parameters
    ----------
    pending : TightRequest
        The ledger's descriptions and the release on screen.
    state : State, optional
        The job's state (:mod:`dpstudio.jobs`): cancellation is checked between steps.

    Returns
    -------
    tuple of Decimal
        (ε, δ) the accountant spends on the ledger's releases and this one.
    """
    from dpstudio.jobs import check
    from dpstudio.project.accountant import get_accountant

    planned = _planned(pending.analysis, pending.this)
    check(state)
    found = get_accountant(pending.accountant).spent_losses([*pending.losses, planned])
    with _LOCK:
        _COMPOSED[pending] = found
        _COMPOSED.move_to_end(pending)
        while len(_COMPOSED) > _COMPOSED_SIZE:
            _COMPOSED.popitem(last=False)
    return found


def _planned(analysis: Any, this: tuple[Decimal, Decimal]) -> LossDescription:
    """What the release on screen would draw, from the declaration alone (the engine run
    on a one-value stand-in); its charge's pure/approx description when that cannot be
    said or would claim less than the charge (pessimistic)."""
    from dpstudio.project.ledger_loss import charge_loss, planned_loss

    try:
        found = planned_loss(analysis)
    except Exception:  # noqa: BLE001 - any refusal: the charge's description instead
        found = None
    if found is not None and exact_budget.exact(found.epsilon) >= this[0] and (
            exact_budget.exact(found.delta) >= this[1]):
        return found
    return charge_loss(*this)
