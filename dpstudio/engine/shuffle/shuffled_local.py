"""A local randomizer shuffled: a histogram over declared categories in the shuffle model.

Each of the n users runs an ε₀-LDP frequency oracle (K-ary randomized response, the
unary encodings SUE/OUE, or optimal local hashing) on its own category and sends the one
report to a trusted shuffler, which permutes the n reports; the analyzer sees their
multiset only. Amplification by shuffling (Feldman, McMillan & Talwar 2021, the ``fmt21``
bound of :mod:`~dpstudio.engine.shuffle.amplification`) makes that multiset (ε, δ)-DP
against replacing one user's value, for any ε₀-LDP randomizer, so for a central target
(ε, δ) each user runs at

    ε₀ = the largest local ε whose FMT21 amplification for n users is ≤ ε at δ

(found by the search :func:`~dpstudio.engine.shuffle.amplification.largest_local_epsilon`
uses, :func:`~dpstudio.engine.shuffle.amplification.largest_meeting`, see
:func:`shuffled_local_epsilon`), and the guarantee stated is FMT21's ε at that ε₀ (never
above the target).

Neighbouring datasets differ in one user's value (replace-one): n is public, as for the
shuffle sum protocols (the shuffler and the analyzer count the messages); every row sends
one report (a missing or undeclared value as the extra "other or missing" category), so
n is the number of rows. The randomizer runs through the local engine's own client and
server (:func:`~dpstudio.engine.local.run.run_local`): one vectorized draw over all users,
and an estimator that reads the reports' counts only (K-RR: how many reports name each
category; the unary encodings: each bit's count; local hashing: each category's support
count), which is a function of the multiset, so it is what the analyzer computes after
shuffling. The reports themselves are not kept: the result carries the counts' estimates.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.errors import QueryError
from dpstudio.engine.rng import Source
from dpstudio.engine.shuffle.amplification import (
    fmt21_delta,
    largest_meeting,
    shuffle_epsilon,
)

__all__ = [
    "SHUFFLED_RANDOMIZERS",
    "ShuffledLocalResult",
    "local_epsilon_curve",
    "plan_shuffled_local",
    "run_shuffled_local",
    "shuffled_local_epsilon",
]

#: Local frequency oracles that run shuffled (pure ε₀-LDP, one report per user, estimated
#: from the reports' counts).
SHUFFLED_RANDOMIZERS = ("krr", "sue", "oue", "olh")

#: The local engine refuses ε₀ above this (e^ε₀ stays finite in its coins).
_MAX_LOCAL_EPSILON = 700.0
#: Relative width of the final bracket on ε₀ (its lower end, meeting the target, is used).
_REL_TOL = 1e-6


@functools.lru_cache(maxsize=256)
def shuffled_local_epsilon(epsilon: float, n: int, delta: float) -> tuple[float, float]:
    """Each user's ε₀ for a central target (ε, δ) over n shuffled users, and the central ε
    FMT21 gives at that ε₀.

    ε₀ is found by bisection on FMT21's δ at the target itself: ε(ε₀) ≤ ε exactly when
    δ_{ε₀}(ε) ≤ δ (δ(ε) decreases in ε), so each step costs one evaluation of the bound
    instead of an inner bisection
    (:func:`~dpstudio.engine.shuffle.amplification.largest_local_epsilon` does the
    latter, to 1e-9; here ε₀ is found to a relative 1e-6, on the side that meets the
    target, which is what matters to a release and keeps a report's curve quick).

    Parameters
    ----------
    epsilon : float
        The central ε wanted, > 0.
    n : int
        Users shuffled together, ≥ 2.
    delta : float
        The central δ, in [1e-12, 1).

    Returns
    -------
    (float, float)
        ``(epsilon_local, epsilon_central)``: ε₀ ≥ ε (shuffling never hurts; ε₀ = ε when n
        is too small to amplify), and the central ε stated: FMT21's at ε₀ (its bisection's
        upper end), or the target if that is smaller — both points are checked to have
        δ(ε) ≤ δ.

    Raises
    ------
    ParameterError
        For a bad ε, n or δ (the amplification bound's own checks).
    """
    target = float(epsilon)
    shuffle_epsilon(target, n, delta, "fmt21")  # checks ε, n and δ (ParameterError)

    def meets(eps0: float) -> bool:
        return fmt21_delta(target, eps0, int(n), delta) <= delta

    # ε₀ = target always meets it (ε(ε₀) ≤ ε₀); the search keeps the side that meets it.
    eps0 = largest_meeting(meets, target, _REL_TOL, _MAX_LOCAL_EPSILON)
    central, _ = shuffle_epsilon(eps0, n, delta, "fmt21")
    return eps0, min(central, target)


@dataclass
class ShuffledLocalResult:
    """A shuffled local histogram: counts per declared category (and "other or missing").

    Attributes
    ----------
    mechanism, query : str
        The local randomizer's registry name; ``"histogram"``.
    epsilon, delta : float
        The central guarantee of the shuffled multiset (FMT21 at ``epsilon_local``).
    epsilon_local : float
        Each user's own ε₀: what a user's report alone reveals, were the shuffler to
        collude.
    n : int
        Users (= reports = rows).
    estimate, unbiased, stderr, ci_low, ci_high : dict of str to float
        Counts per cell (post-processed; unbiased), their standard errors from the
        randomizer's exact variance and normal intervals at ``confidence``; None in plan
        mode except ``stderr`` (the variance of a count held by no one).
    confidence : float
        The intervals' level.
    postprocess : str
        The counts' post-processing (``"none"``, ``"clip"``, ``"simplex"``).
    trust_model : str
        ``"shuffle"``.
    messages_per_user, bits_per_message : int
        One report per user, of the randomizer's size.
    bound : str
        The amplification bound (``"fmt21"``).
    central_stderr : float or None
        Standard error of a central discrete Laplace count at the central ε.
    simulated : bool
        True when a seeded generator drew the coins.
    source : str
        The random source's label.
    clamped, missing_count : int
        Undeclared and missing values (analyst-only).
    accounting : str
        How the guarantee was derived.
    details : dict
        ``epsilon_local``, ``bound``, the randomizer's parameters.
    notes : list of str
        What the user should know.
    value : None
        A histogram has no single value (kept for the protocols' common fields).
    error_bound : float or None
        Plan mode: the normal half-width at ``confidence`` of a count held by no one
        (what a report's error-against-ε figure draws); None for a run (per cell:
        ``ci_low``, ``ci_high``).
    """

    mechanism: str
    query: str
    epsilon: float
    delta: float
    epsilon_local: float
    n: int
    estimate: dict[str, float] | None
    unbiased: dict[str, float] | None
    stderr: Any
    ci_low: dict[str, float] | None = None
    ci_high: dict[str, float] | None = None
    confidence: float = 0.95
    postprocess: str = "none"
    trust_model: str = "shuffle"
    messages_per_user: int = 1
    bits_per_message: int = 0
    bound: str = "fmt21"
    central_stderr: float | None = None
    simulated: bool = False
    source: str = ""
    clamped: int = 0
    missing_count: int = 0
    accounting: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    value: None = None
    error_bound: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field, as a plain dict (the analyst-only counts included: callers move
        them out).

        Returns
        -------
        dict
        """
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def loss_description(self) -> Any:
        """What this release drew, for a ledger's tight accountants: ``approx`` of its
        central (ε, δ), the amplification bound's (no tighter description of the shuffled
        multiset is proven here).

        Returns
        -------
        LossDescription
        """
        from dpstudio.engine.accounting.protocol_loss import shuffle_loss

        return shuffle_loss(self)


def _check(mechanism: str, epsilon: float, delta: float, n: int) -> tuple[float, float]:
    if mechanism not in SHUFFLED_RANDOMIZERS:
        raise QueryError(f"{mechanism} does not run shuffled (shuffled histograms: "
                         f"{', '.join(SHUFFLED_RANDOMIZERS)})")
    eps = validate_epsilon(epsilon)
    dlt = validate_delta(delta, required=True)
    if n < 2:
        raise QueryError(f"shuffling needs at least 2 users, got {n}")
    return eps, dlt


def _accounting(eps0: float, n: int) -> str:
    return (f"each user's report is ε₀ = {eps0:.4g}-LDP; shuffling the {n:,} reports "
            "amplifies it (Feldman, McMillan & Talwar 2021, numerical bound)")


def _guarantee_note(eps0: float, eps: float, delta: float) -> str:
    return (f"each user's local ε₀ = {eps0:.4g}; central (ε, δ) after shuffling = "
            f"({eps:.4g}, {delta:.3g}) against replacing one user's value (n public)")


def run_shuffled_local(values, mechanism: str, epsilon: float, delta: float, *,
                       categories, source: Source, params: dict[str, Any] | None = None,
                       postprocess: str = "none", confidence: float = 0.95,
                       state: Any = None) -> ShuffledLocalResult:
    """Randomize every user's category at ε₀, shuffle, and estimate the counts.

    Parameters
    ----------
    values : array_like
        The column, one category label per user (missing: None/NaN).
    mechanism : str
        One of :data:`SHUFFLED_RANDOMIZERS`.
    epsilon, delta : float
        The central target (replace-one neighbours); δ > 0.
    categories : sequence of str
        The declared categories (the domain is never read off the data).
    source : Source
        :class:`~dpstudio.engine.rng.SecureSource` for a release.
    params : dict, optional
        The randomizer's own parameters other than ε (``g`` for ``olh``).
    postprocess : str
        Post-processing of the counts (``"none"``, ``"clip"``, ``"simplex"``).
    confidence : float
        Level of the intervals, in (0, 1).
    state : State, optional
        Progress and cancel.

    Returns
    -------
    ShuffledLocalResult

    Raises
    ------
    QueryError, ParameterError
        For a randomizer that does not run shuffled, a bad ε, δ, parameter, declared
        domain or column, or fewer than 2 users.
    """
    import numpy as np

    from dpstudio.engine.local.run import run_local

    n = int(np.size(values))
    eps, dlt = _check(mechanism, epsilon, delta, n)
    if categories is None:
        raise QueryError("a shuffled histogram needs declared categories: the analyzer "
                         "cannot learn the domain from data it never sees")
    eps0, central = shuffled_local_epsilon(eps, n, dlt)
    given = {k: v for k, v in dict(params or {}).items() if k not in ("epsilon", "delta")}
    local = run_local(values, mechanism, {**given, "epsilon": eps0}, query="histogram",
                      categories=categories, source=source, postprocess=postprocess,
                      confidence=confidence, state=state)
    # What leaves is the counts' estimate; the reports (in users' order) are dropped here.
    laplace = 1.0 / (2.0 * math.sinh(central / 2.0) ** 2)
    notes = [_guarantee_note(eps0, central, dlt)] + [
        note for note in local.notes if not note.startswith("central_stderr")]
    notes.append("central_stderr: the central model's discrete Laplace count at the "
                 "central ε")
    return ShuffledLocalResult(
        mechanism=mechanism, query="histogram", epsilon=central, delta=dlt,
        epsilon_local=eps0, n=local.n, estimate=local.estimate, unbiased=local.unbiased,
        stderr=local.stderr, ci_low=local.ci_low, ci_high=local.ci_high,
        confidence=local.confidence, postprocess=local.postprocess,
        bits_per_message=int(local.messages_bits), central_stderr=math.sqrt(laplace),
        simulated=local.simulated, source=local.source, clamped=local.clamped,
        missing_count=local.missing, accounting=_accounting(eps0, local.n),
        details={"epsilon_local": eps0, "bound": "fmt21", "randomizer": local.parameters},
        notes=notes)


def plan_shuffled_local(n: int, mechanism: str, epsilon: float, delta: float, *,
                        cells: int, params: dict[str, Any] | None = None,
                        confidence: float = 0.95) -> ShuffledLocalResult:
    """The figures of :func:`run_shuffled_local` for n users, without data.

    Parameters
    ----------
    n : int
        Users, ≥ 2.
    mechanism : str
        One of :data:`SHUFFLED_RANDOMIZERS`.
    epsilon, delta : float
        The central target.
    cells : int
        Cells of the histogram (the declared categories and "other or missing").
    params : dict, optional
        The randomizer's own parameters other than ε.
    confidence : float
        Level of the intervals.

    Returns
    -------
    ShuffledLocalResult
        ``estimate`` None; ``stderr`` the standard error of a count held by no one.

    Raises
    ------
    QueryError, ParameterError
        As :func:`run_shuffled_local`.
    """
    from dpstudio.engine.registry import REGISTRY

    n = int(n)
    eps, dlt = _check(mechanism, epsilon, delta, n)
    eps0, central = shuffled_local_epsilon(eps, n, dlt)
    info = REGISTRY.get(mechanism)
    given = {k: v for k, v in dict(params or {}).items() if k not in ("epsilon", "delta")}
    oracle = info.build(**info.resolve({**given, "epsilon": eps0}), k=int(cells))
    import numpy as np

    from dpstudio.engine.special import ndtri

    se = float(np.sqrt(oracle.variance(n))[0])
    z = float(-ndtri((1.0 - float(confidence)) / 2.0))
    laplace = 1.0 / (2.0 * math.sinh(central / 2.0) ** 2)
    return ShuffledLocalResult(
        mechanism=mechanism, query="histogram", epsilon=central, delta=dlt,
        epsilon_local=eps0, n=n, estimate=None, unbiased=None, stderr=se,
        confidence=float(confidence), bits_per_message=int(oracle.messages_bits),
        central_stderr=math.sqrt(laplace), accounting=_accounting(eps0, n),
        details={"epsilon_local": eps0, "bound": "fmt21", "randomizer": oracle.describe()},
        notes=[_guarantee_note(eps0, central, dlt)], error_bound=z * se)


def local_epsilon_curve(epsilons, n: int, delta: float, points: int = 13):
    """Each user's ε₀ at many central ε, for an error curve: computed exactly at ``points``
    ε spread (log-spaced) over their range and interpolated in between.

    log(ε₀/ε) is smooth in log ε (it falls from the amplification's gain to 0 as ε
    grows), so a few exact points draw the curve; this is for plotting errors, never for
    a guarantee (a release computes its own ε₀ with :func:`shuffled_local_epsilon`).

    Parameters
    ----------
    epsilons : array_like
        Central ε values, > 0.
    n : int
        Users.
    delta : float
        The central δ.
    points : int
        Exact evaluations (at most one per distinct ε).

    Returns
    -------
    numpy.ndarray
        ε₀ at each ε (≥ ε).

    Raises
    ------
    ParameterError
        For a bad n or δ.
    """
    import numpy as np

    eps = np.asarray(epsilons, dtype=np.float64)
    lo, hi = float(eps.min()), float(eps.max())
    grid = np.unique(np.geomspace(lo, hi, points) if hi > lo else np.array([lo]))
    gain = np.array([math.log(shuffled_local_epsilon(float(e), int(n), float(delta))[0]
                              / float(e)) for e in grid])
    if grid.size == 1:
        return eps * math.exp(gain[0])
    return eps * np.exp(np.interp(np.log(eps), np.log(grid), gain))
