"""ε and δ spent by a list of releases, under four accountants.

Each release is a :class:`~dpstudio.engine.accounting.loss.LossDescription` (what was
drawn, and the (ε, δ) it claimed). :func:`spent` composes them:

basic     (Σεᵢ, Σδᵢ) of the claims, exact decimal sums rounded up (Dwork et al. 2006).
advanced  Kairouz, Oh & Viswanath 2015: when every release claims the same (ε₀, δ₀), the
          optimal homogeneous composition (Thm 3.3, at any δ); otherwise their
          heterogeneous bound (Thm 3.5), or basic where that is smaller.
zcdp      ρ adds up (Bun & Steinke 2016): Gaussian releases bring Δ₂²/(2σ²) (the discrete
          Gaussian likewise, Canonne, Kamath & Steinke 2020), pure-ε releases ε²/2;
          converted to (ε, δ) by CKS20 Cor. 13. Releases known only by (ε, δ > 0) and
          DP-SGD runs have no ρ here: their claims are added by basic composition.
pld       privacy-loss distributions of what was drawn, composed by the engine's FFT
          accountant (:class:`~dpstudio.engine.accounting.pld.PLD`, pessimistic);
          (ε, δ)-only releases enter as their worst-case pair (KOV), which dominates
          every (ε, δ)-DP mechanism.

Every result is an upper bound on the true privacy loss: each accountant's bound is valid
on its own, and where basic composition is valid at the same δ and smaller, the smaller is
reported (so no accountant ever shows more than basic). What fell back to what is said in
the result's ``notes``.

The δ reported
--------------
``spent(…, delta=None)`` reports every accountant at the δ basic composition spends, Σδᵢ
(when that is > 0): the accountants then differ only in ε, side by side. Give ``delta`` to
read ε at another total δ (e.g. the project's budget δ); basic still reports Σδᵢ.
"""

from __future__ import annotations

import functools
import json
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

from dpstudio.engine.accounting import budget
from dpstudio.engine.accounting.composition import basic_composition, optimal_composition
from dpstudio.engine.accounting.discrete_gaussian_pld import discrete_gaussian_pld
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.accounting.pld import DEFAULT_VALUE_DISCRETIZATION_INTERVAL, PLD
from dpstudio.engine.accounting.zcdp import zcdp_to_epsilon
from dpstudio.engine.calibration import validate_delta
from dpstudio.engine.errors import ParameterError
from dpstudio.jobs import State, check

__all__ = ["ACCOUNTANTS", "Spent", "fits", "remaining", "spent", "spent_by_all",
           "spent_series"]

ACCOUNTANTS = ("basic", "advanced", "zcdp", "pld")
_MARGIN = 2.0 ** -40  # relative allowance for the floating-point evaluation of closed forms


@dataclass(frozen=True)
class Spent:
    """What a list of releases spent under one accountant: an upper bound (ε, δ).

    Parameters
    ----------
    epsilon : float
        ε spent (∞ when no finite ε holds at this δ).
    delta : float
        δ at which ``epsilon`` holds.
    accountant : str
        One of :data:`ACCOUNTANTS`.
    releases : int
        Number of releases composed (composed descriptions flattened).
    method : str
        The bound used, in words (e.g. "optimal homogeneous composition (KOV Thm 3.3)").
    notes : tuple of str
        What fell back to what, one sentence each.
    """

    epsilon: float
    delta: float
    accountant: str
    releases: int
    method: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        """JSON form (``notes`` as a list).

        Returns
        -------
        dict
        """
        return {"accountant": self.accountant, "epsilon": self.epsilon,
                "delta": self.delta, "releases": self.releases, "method": self.method,
                "notes": list(self.notes)}


def _up(x: float) -> float:
    return x + abs(x) * _MARGIN


def _leaves(descriptions: Iterable[LossDescription]) -> list[LossDescription]:
    out: list[LossDescription] = []
    for d in descriptions:
        if not isinstance(d, LossDescription):
            raise ParameterError(f"releases must be LossDescriptions, got "
                                 f"{type(d).__name__}; read stored ones with "
                                 f"LossDescription.from_dict")
        out.extend(d.leaves())
    return out


def _basic(leaves: Sequence[LossDescription]) -> tuple[float, float]:
    return basic_composition([d.epsilon for d in leaves], [d.delta for d in leaves])


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


# ------------------------------------------------------------------------ advanced

def _kov_heterogeneous(eps: Sequence[float], dels: Sequence[float], target: float
                       ) -> float | None:
    """ε of KOV 2015 Thm 3.5 at total δ ``target``, or None when δ̃ would be ≤ 0."""
    # δ_total = 1 − (1 − δ̃)Π(1 − δᵢ) ≤ target  ⇔  ln(1 − δ̃) ≥ ln(1 − target) − Σln(1 − δᵢ)
    log_keep = math.log1p(-target) - math.fsum(math.log1p(-d) for d in dels)
    if log_keep >= 0:
        return None
    slack = -math.expm1(log_keep) * (1 - 1e-12)  # δ̃, shaded down against round-off
    e = np.asarray(eps, dtype=np.float64)
    drift = float(np.sum(e * np.tanh(e / 2)))  # Σ (e^ε − 1)ε/(e^ε + 1)
    sq = float(np.sum(e * e))
    second = drift + math.sqrt(2 * sq * math.log(math.e + math.sqrt(sq) / slack))
    third = drift + math.sqrt(2 * sq * math.log(1 / slack))
    return _up(min(second, third))


def _advanced(leaves, target, basic, notes) -> tuple[float, str]:
    claims = {(d.epsilon, d.delta) for d in leaves}
    k = len(leaves)
    if len(claims) == 1:
        eps0, del0 = next(iter(claims))
        base = -math.expm1(k * math.log1p(-del0))
        if target >= base and (target > 0 or del0 == 0):
            eps = optimal_composition(eps0, del0, k, target)[0]
            return eps, "optimal homogeneous composition (Kairouz, Oh & Viswanath 2015)"
        notes.append(f"the optimal composition needs δ ≥ {base:.3g}; basic composition "
                     f"was used")
        return basic[0], "basic composition"
    eps = _kov_heterogeneous([d.epsilon for d in leaves], [d.delta for d in leaves], target)
    if eps is None:
        notes.append("the releases' δ leave no room for the heterogeneous bound at this "
                     "δ; basic composition was used")
        return basic[0], "basic composition"
    return eps, "heterogeneous composition (Kairouz, Oh & Viswanath 2015, Thm 3.5)"


# ------------------------------------------------------------------------ zCDP

def _rho(d: LossDescription) -> float | None:
    if d.mechanism in ("gaussian", "discrete_gaussian"):
        return d.coordinates * d.sensitivity ** 2 / (2 * d.scale ** 2)
    pure = d.pure_epsilon
    return None if pure is None else 0.5 * pure * pure


def _zcdp(leaves, target, notes) -> tuple[float, str] | None:
    rhos, rest = [], []
    for d in leaves:
        r = _rho(d)
        (rest if r is None else rhos).append(d if r is None else r)
    if not rhos:
        notes.append("no release has a zCDP description; basic composition was used")
        return None
    rest_eps, rest_del = _basic(rest) if rest else (0.0, 0.0)
    left = target - rest_del
    if left <= 0:
        notes.append("the δ of the (ε, δ)-only releases uses up δ; basic composition was "
                     "used")
        return None
    if rest:
        notes.append(f"{_plural(len(rest), 'release')} known only by (ε, δ > 0) (or "
                     f"DP-SGD) cannot enter zCDP: added by basic composition")
    rho = math.fsum(rhos)
    eps = zcdp_to_epsilon(_up(rho), left * (1 - 1e-12)) + rest_eps
    return _up(eps), "zCDP (ρ summed; Canonne, Kamath & Steinke 2020 conversion)"


# ------------------------------------------------------------------------ PLD

@functools.lru_cache(maxsize=16)
def _discrete_gaussian_pld(sigma: float, sens: int, h: float) -> PLD | None:
    """PLD of one coordinate: N_Z(0, σ²) against N_Z(Δ, σ²) (see
    :mod:`~dpstudio.engine.accounting.discrete_gaussian_pld`).

    Cached: a central sum's σ is tens of thousands of grid steps (millions of outputs,
    ~0.5 s), and a ledger re-composes the same releases at every release and every view.
    A PLD is never changed in place (composing makes a new one)."""
    return discrete_gaussian_pld(sigma, sens, value_discretization_interval=h)


def _leaf_pld(d: LossDescription, h: float, notes: list[str]) -> tuple[PLD, int]:
    """One release's PLD as (a PLD, how many times it composes with itself)."""
    fam = d.mechanism
    kw = {"value_discretization_interval": h}
    if fam == "gaussian":  # rotation invariant: c coordinates of Δ are one shift of Δ√c
        return PLD.gaussian(d.scale, d.sensitivity * math.sqrt(d.coordinates), **kw), 1
    if fam == "subsampled_gaussian":
        return PLD.subsampled_gaussian(d.scale, d.sample_rate, d.sensitivity, **kw), d.steps
    if fam == "randomized_response":
        return PLD.randomized_response(d.epsilon, d.k, **kw), 1
    if fam == "pair":  # a finite-output pair: its own losses, both directions
        return PLD.from_distributions(d.p, d.q, **kw), 1
    # Independent noise per coordinate: the loss is the sum of the coordinates' losses,
    # and a shift below Δ is dominated by Δ (log-concave noise), so c runs of one.
    if fam == "laplace":
        return PLD.laplace(d.scale, d.sensitivity, **kw), d.coordinates
    if fam == "discrete_laplace":
        return PLD.discrete_laplace(d.scale, int(d.sensitivity), **kw), d.coordinates
    if fam == "discrete_gaussian":
        pld = _discrete_gaussian_pld(d.scale, int(d.sensitivity), h)
        if pld is not None:
            return pld, d.coordinates
        notes.append(f"a discrete_gaussian release of σ = {d.scale:g} is too wide for an "
                     f"exact PLD: it entered as its claimed (ε, δ)'s worst-case pair")
    return PLD.from_epsilon_delta(d.epsilon, d.delta, **kw), 1


def _pld(leaves, target, h, state: State | None) -> tuple[float, list[str]]:
    groups: dict[str, tuple[LossDescription, int]] = {}
    for d in leaves:
        key = json.dumps(d.to_dict(), sort_keys=True)
        first, n = groups.get(key, (d, 0))
        groups[key] = (first, n + 1)
    if state is not None:  # a job: it reports its progress and may be cancelled
        found = _pld_groups(groups, target, h, state)
        return found[0], list(found[1])
    # The same ledger is composed again and again (a release is checked before and
    # after it is drawn; a view reads it at every refresh): remember the last answers.
    memo = (tuple(sorted((k, n) for k, (_, n) in groups.items())), target, h)
    with _PLD_LOCK:
        found = _PLD_MEMO.get(memo)
    if found is None:
        found = _pld_groups(groups, target, h, state)
        with _PLD_LOCK:
            if len(_PLD_MEMO) >= _PLD_MEMO_SIZE:
                _PLD_MEMO.pop(next(iter(_PLD_MEMO)))
            _PLD_MEMO[memo] = found
    return found[0], list(found[1])


_PLD_MEMO: dict[tuple, tuple[float, tuple[str, ...]]] = {}
_PLD_MEMO_SIZE = 64
_PLD_LOCK = threading.Lock()


def _pld_groups(groups: dict[str, tuple[LossDescription, int]], target: float, h: float,
                state: State | None) -> tuple[float, tuple[str, ...]]:
    notes: list[str] = []
    parts: list[PLD] = []
    for d, n in groups.values():
        check(state)
        one, per_release = _leaf_pld(d, h, notes)
        runs = n * per_release
        parts.append(one if runs == 1 else one.self_compose(runs))
    # Compose in a balanced tree: each level convolves grids whose widths add up to the
    # final one, so the cost is ~(final width)·log(releases), not (releases)·(width).
    done, todo = 0, max(len(parts) - 1, 1)
    while len(parts) > 1:
        nxt = []
        for i in range(0, len(parts) - 1, 2):
            check(state)
            nxt.append(parts[i].compose(parts[i + 1]))
            done += 1
            if state is not None:
                state.progress(done / todo, "composing privacy-loss distributions")
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    only = sum(n for d, n in groups.values() if d.mechanism in ("pure", "approx"))
    if only:
        notes.append(f"{_plural(only, 'release')} known only by (ε, δ) entered as the "
                     f"worst-case (ε, δ) pair (Kairouz, Oh & Viswanath 2015)")
    return parts[0].epsilon(target), tuple(notes)


# ------------------------------------------------------------------------ API

def spent(descriptions: Iterable[LossDescription], accountant: str = "basic",
          delta: float | None = None, *,
          value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
          state: State | None = None) -> Spent:
    """(ε, δ) spent by a list of releases under one accountant, an upper bound.

    Parameters
    ----------
    descriptions : iterable of LossDescription
        The releases, in any order ("composed" ones are flattened).
    accountant : {"basic", "advanced", "zcdp", "pld"}
        How to compose (see the module docstring).
    delta : float, optional
        Total δ at which to read ε, in [0, 1). Default: Σδᵢ of the claims, the δ basic
        composition spends. Basic composition always reports Σδᵢ.
    value_discretization_interval : float
        Loss grid step of the "pld" accountant (its ε is within about this much above
        the exact one for a few releases; see :mod:`~dpstudio.engine.accounting.pld`).
    state : State, optional
        The job's state (:mod:`~dpstudio.jobs`): the "pld" accountant checks cancellation
        between compositions and reports progress (hundreds of distinct releases take
        seconds).

    Returns
    -------
    Spent

    Raises
    ------
    ParameterError
        For an unknown accountant, a δ out of range, or something not a LossDescription.
    Cancelled
        If ``state`` is cancelled.
    """
    if accountant not in ACCOUNTANTS:
        raise ParameterError(f"accountant must be one of {', '.join(ACCOUNTANTS)}, got "
                             f"{accountant!r}")
    leaves = _leaves(descriptions)
    k = len(leaves)
    if not leaves:
        return Spent(0.0, 0.0, accountant, 0, "nothing released")
    basic = _basic(leaves)
    if accountant == "basic" or (delta is None and basic[1] >= 1):
        return Spent(basic[0], basic[1], accountant, k, "basic composition (sums)")
    target = basic[1] if delta is None else validate_delta(delta)
    notes: list[str] = []
    method = "basic composition"
    if accountant == "advanced":
        eps, method = _advanced(leaves, target, basic, notes)
    elif accountant == "zcdp":
        if target == 0:
            notes.append("zCDP gives no pure ε (δ = 0); basic composition was used")
            eps = basic[0]
        else:
            got = _zcdp(leaves, target, notes)
            eps = basic[0] if got is None else got[0]
            method = method if got is None else got[1]
    else:
        eps, more = _pld(leaves, target, value_discretization_interval, state)
        notes.extend(more)
        method = "privacy-loss distributions composed by FFT (pessimistic)"
    if target >= basic[1] and basic[0] <= eps:
        if basic[0] < eps:
            notes.append("basic composition was tighter here and is reported")
            method = "basic composition"
        eps = basic[0]
    elif target < basic[1] and method == "basic composition":
        # Basic holds only at its own δ: report that δ rather than a smaller one.
        notes.append(f"basic composition holds at δ = Σδᵢ = {basic[1]:.3g}, above the "
                     f"δ asked")
        return Spent(basic[0], basic[1], accountant, k, method, tuple(notes))
    return Spent(float(eps), target, accountant, k, method, tuple(notes))


def spent_series(descriptions: Iterable[LossDescription], accountant: str = "basic",
                 deltas: Sequence[float | None] | None = None, *,
                 value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
                 state: State | None = None) -> list[Spent]:
    """What the releases had spent after each one, in order (a cumulative plot).

    The i-th entry bounds the first i + 1 releases as :func:`spent` does. The "pld"
    accountant composes one release more at each step (n compositions, not n full
    ledgers); its running distribution is as pessimistic as :func:`spent`'s, and each
    entry is likewise never above basic composition.

    Parameters
    ----------
    descriptions : iterable of LossDescription
        The releases, in the order they were made.
    accountant : {"basic", "advanced", "zcdp", "pld"}
    deltas : sequence of float or None, optional
        The δ at which to read each entry (as ``delta`` of :func:`spent`); default each
        prefix's Σδᵢ.
    value_discretization_interval : float
        As for :func:`spent`.
    state : State, optional
        Cancellation is checked and progress reported once per release.

    Returns
    -------
    list of Spent
        One per release.

    Raises
    ------
    ParameterError
        As :func:`spent`, or when ``deltas`` is not one per release.
    Cancelled
        If ``state`` is cancelled.
    """
    items = list(descriptions)
    _leaves(items)  # checks the type of each, in one sentence
    deltas = [None] * len(items) if deltas is None else list(deltas)
    if len(deltas) != len(items):
        raise ParameterError(f"give one δ per release: {len(deltas)} for {len(items)}")
    h = value_discretization_interval
    out: list[Spent] = []
    running: PLD | None = None
    notes: list[str] = []
    for i, d in enumerate(items):
        check(state)
        if accountant != "pld":
            out.append(spent(items[:i + 1], accountant, deltas[i],
                             value_discretization_interval=h))
        else:
            for leaf in d.leaves():
                one, runs = _leaf_pld(leaf, h, notes)
                one = one if runs == 1 else one.self_compose(runs)
                running = one if running is None else running.compose(one)
            out.append(_pld_entry(items[:i + 1], running, deltas[i], tuple(notes)))
        if state is not None:
            state.progress((i + 1) / len(items), "composing privacy-loss distributions")
    return out


def _pld_entry(items: list[LossDescription], running: PLD, delta: float | None,
               notes: tuple[str, ...]) -> Spent:
    """:func:`spent`'s "pld" answer from an already composed distribution."""
    leaves = _leaves(items)
    basic = _basic(leaves)
    k = len(leaves)
    if delta is None and basic[1] >= 1:
        return Spent(basic[0], basic[1], "pld", k, "basic composition (sums)")
    target = basic[1] if delta is None else validate_delta(delta)
    eps = running.epsilon(target)
    method = "privacy-loss distributions composed by FFT (pessimistic)"
    if target >= basic[1] and basic[0] <= eps:
        return Spent(basic[0], target, "pld", k, "basic composition", notes)
    return Spent(float(eps), target, "pld", k, method, notes)


def spent_by_all(descriptions: Iterable[LossDescription], delta: float | None = None,
                 **kwargs) -> dict[str, Spent]:
    """:func:`spent` under every accountant, side by side (the ledger view's columns).

    Parameters
    ----------
    descriptions : iterable of LossDescription
    delta : float, optional
        As for :func:`spent`.
    **kwargs
        Passed to :func:`spent`.

    Returns
    -------
    dict
        Accountant name → :class:`Spent`, in the order of :data:`ACCOUNTANTS`.
    """
    items = list(descriptions)
    return {a: spent(items, a, delta, **kwargs) for a in ACCOUNTANTS}


def remaining(budget_epsilon: float, budget_delta: float, used: Spent
              ) -> tuple[Decimal, Decimal]:
    """Budget left after ``used``: exact decimal differences (negative if overdrawn).

    Under a tight accountant this is what the ledger shows; whether a further release
    fits is :func:`fits` (the composition of all releases, not a difference of ε's).

    Parameters
    ----------
    budget_epsilon, budget_delta : float
        The total budget.
    used : Spent
        From :func:`spent`.

    Returns
    -------
    (Decimal, Decimal)
        ε left and δ left (ε left is −∞ when ``used.epsilon`` is ∞).
    """
    if not isinstance(used, Spent):
        raise ParameterError("remaining needs what spent() returned")
    if math.isinf(used.epsilon):
        left_d = budget.remaining(budget_delta, [used.delta])
        return Decimal("-Infinity"), left_d
    return budget.remaining((budget_epsilon, budget_delta), [(used.epsilon, used.delta)])


def fits(budget_epsilon: float, budget_delta: float,
         descriptions: Iterable[LossDescription], accountant: str = "basic",
         delta: float | None = None, **kwargs) -> bool:
    """Whether the releases (the past ones and a proposed one) fit the budget together.

    Parameters
    ----------
    budget_epsilon, budget_delta : float
        The total budget.
    descriptions : iterable of LossDescription
        All releases, the proposed one included.
    accountant : str
        As for :func:`spent`.
    delta : float, optional
        As for :func:`spent`.
    **kwargs
        Passed to :func:`spent`.

    Returns
    -------
    bool
    """
    used = spent(descriptions, accountant, delta, **kwargs)
    left_e, left_d = remaining(budget_epsilon, budget_delta, used)
    return left_e >= 0 and left_d >= 0
