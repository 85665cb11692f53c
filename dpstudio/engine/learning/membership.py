"""Membership inference: the loss-threshold attack and an audit that lower-bounds ε.

Loss-threshold attack (Yeom, Giacomelli, Fredrikson & Jha 2018)
----------------------------------------------------------------
A model fits its training records better than others, so "the record was a member when
its loss is at most t" is an attack. :func:`loss_threshold_attack` takes the per-record
losses of members (training rows) and non-members (held-out rows) and gives the attack's
(false-positive, true-positive) rates at every threshold, its membership advantage
TPR − FPR at Yeom's threshold (the average training loss, which the attacker is assumed
to know) and the best advantage over all thresholds. The best one is chosen on the same
losses it is measured on, so it is optimistic: a description of these models, not a
certified number.

Audit (Jagielski, Ullman & Oprea 2020; Nasr, Song, Thakurta, Papernot & Carlini 2021)
---------------------------------------------------------------------------------------
:func:`audit_membership` trains the learner ``runs`` times on each of two neighbouring
datasets, D (without a canary record) and D′ (with it: added, or replacing one record,
whichever relation the learner's guarantee is stated for), scores each model on the
canary, and tests "the canary was in" by thresholding the score. An (ε, δ)-DP learner
bounds every such test's false-positive rate FPR and false-negative rate FNR by the
hypothesis-testing form of DP (Kairouz, Oh & Viswanath 2015, Thm 2.1; the empirical ε of
Nasr et al. 2021):

    FPR + e^ε·FNR ≥ 1 − δ   and   e^ε·FPR + FNR ≥ 1 − δ,

so, with FPR⁺ and FNR⁺ one-sided Clopper–Pearson upper bounds holding together with
probability ≥ ``confidence`` (each at (1 − confidence)/2, Bonferroni),

    ε_lb = max(0, ln((1 − δ − FPR⁺)/FNR⁺), ln((1 − δ − FNR⁺)/FPR⁺))

is a lower bound on the learner's ε with that confidence. The second form is Jagielski
et al. 2020's Algorithm 2, ln((TPR⁻ − δ)/FPR⁺), with TPR⁻ = 1 − FNR⁺.

The threshold and its direction ("member when the score is above t" or below) are chosen
on one half of the runs and the counts are taken on the other half, so the bound needs no
correction for the choice; only the second half's counts enter it. Even a perfect attack
cannot certify more than :attr:`MembershipAudit.max_certifiable` with these many runs
(about ln(runs / (2 ln(2/(1−confidence))))): more runs, not a better attack, raise that
ceiling.

The learner is injected: ``train(X, y, source) -> model`` and
``score(model, x, y) -> float`` (e.g. the canary's loss, :func:`canary_logistic_loss`),
so the audit runs any learner of this package. It is a simulation for the analyst (it
reads the data many times and releases nothing): pass a seeded source for reproducible
audits. :func:`~dpstudio.engine.learning.canary.corner_canary` (re-exported here)
picks a worst-case-ish canary. A learner that adds noise to a deterministic fit (output
perturbation) gives the same fit at every training of one dataset: :func:`fit_once`
makes its ``train`` fit each of the two datasets once and redraw only the noise, so the
thousands of trainings a tight bound needs cost two fits.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.attack import EmpiricalTradeoff, empirical_tradeoff
from dpstudio.engine.audit import clopper_pearson
from dpstudio.engine.checks import count, number
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.learning.canary import Canary, canary_logistic_loss, corner_canary
from dpstudio.engine.learning.evaluation import auc
from dpstudio.jobs import State, check

__all__ = [
    "AUDIT_CONFIDENCE",
    "AUDIT_MEANING",
    "RELATIONS",
    "Canary",
    "MembershipAudit",
    "ThresholdAttack",
    "audit_membership",
    "canary_logistic_loss",
    "corner_canary",
    "epsilon_from_rates",
    "fit_once",
    "loss_threshold_attack",
    "max_certifiable",
    "run",
]

#: The confidence of an audit's two error-rate bounds together, unless told otherwise.
AUDIT_CONFIDENCE = 0.95

#: Neighbouring relations an audit can test: the canary added to D, or replacing a record.
RELATIONS = ("add", "replace")

#: What an audit's bound shows and what it does not, for every result (``note``).
AUDIT_MEANING = ("the audit's ε is a lower bound from one attack on one canary record: "
                 "above the claimed ε it shows the claim is wrong, at or below it it shows "
                 "only that this attack found nothing more, not that the training is "
                 "private")


# ---------------------------------------------------------------- loss-threshold attack

@dataclass(frozen=True)
class ThresholdAttack:
    """The loss-threshold attack's rates at every threshold ("member when loss ≤ t").

    Attributes
    ----------
    thresholds : numpy.ndarray
        −inf, then every distinct loss, increasing.
    fpr, tpr : numpy.ndarray
        Share of non-members and of members called members at each threshold.
    advantage : float
        Best TPR − FPR over the thresholds (chosen on these losses: optimistic).
    best_threshold : float
        A threshold attaining it.
    yeom_threshold : float
        The threshold of Yeom et al.: the members' mean loss (or the one given).
    yeom_advantage : float
        TPR − FPR at ``yeom_threshold``.
    auc : float
        Area under the attack's ROC curve (ties one half); 0.5 is guessing.
    members, non_members : int
        Number of losses of each kind.
    """

    thresholds: np.ndarray
    fpr: np.ndarray
    tpr: np.ndarray
    advantage: float
    best_threshold: float
    yeom_threshold: float
    yeom_advantage: float
    auc: float
    members: int
    non_members: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the rates (as lists; the −inf threshold as None) and the summary.

        Returns
        -------
        dict
        """
        t = [None if not math.isfinite(v) else float(v) for v in self.thresholds]
        return {"thresholds": t, "fpr": self.fpr.tolist(), "tpr": self.tpr.tolist(),
                "advantage": self.advantage, "best_threshold": self.best_threshold,
                "yeom_threshold": self.yeom_threshold, "yeom_advantage": self.yeom_advantage,
                "auc": self.auc, "members": self.members, "non_members": self.non_members}


def _finite_1d(values, name: str) -> np.ndarray:
    a = np.ravel(np.asarray(values, dtype=np.float64))
    if a.size == 0:
        raise ParameterError(f"{name} must hold at least one value")
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{name} must be finite numbers (no NaN or infinity)")
    return a


def loss_threshold_attack(member_losses, non_member_losses,
                          threshold: float | None = None) -> ThresholdAttack:
    """Yeom et al.'s attack: call a record a member when its loss is at most a threshold.

    Parameters
    ----------
    member_losses : array_like
        Per-record losses of the model on its training records.
    non_member_losses : array_like
        Per-record losses on records it was not trained on (held out).
    threshold : float, optional
        The attacker's threshold for :attr:`ThresholdAttack.yeom_advantage`; by default
        the members' mean loss (Yeom et al. 2018, the attacker knowing the average
        training loss).

    Returns
    -------
    ThresholdAttack

    Raises
    ------
    ParameterError
        If either set of losses is empty or not finite, or the threshold is not finite.
    """
    m = np.sort(_finite_1d(member_losses, "the members' losses"))
    o = np.sort(_finite_1d(non_member_losses, "the non-members' losses"))
    t = np.concatenate([[-np.inf], np.unique(np.concatenate([m, o]))])
    tpr = np.searchsorted(m, t, side="right") / m.size
    fpr = np.searchsorted(o, t, side="right") / o.size
    adv = tpr - fpr
    i = int(np.argmax(adv))
    ty = float(m.mean()) if threshold is None else number("threshold", threshold)
    yeom = (np.searchsorted(m, ty, side="right") / m.size
            - np.searchsorted(o, ty, side="right") / o.size)
    labels = np.concatenate([np.ones(m.size), np.zeros(o.size)])
    area = auc(labels, -np.concatenate([m, o]))  # lower loss, more likely a member
    return ThresholdAttack(t, fpr, tpr, float(adv[i]), float(t[i]), ty, float(yeom),
                           float(area), int(m.size), int(o.size))


# ---------------------------------------------------------------------------- audit

def epsilon_from_rates(fpr_upper, fnr_upper, delta: float = 0.0):
    """ε lower bound from upper bounds on an attack's error rates (see the module).

    max(0, ln((1 − δ − FPR⁺)/FNR⁺), ln((1 − δ − FNR⁺)/FPR⁺)), elementwise.

    Parameters
    ----------
    fpr_upper, fnr_upper : array_like
        Upper bounds on the false-positive and false-negative rates, in [0, 1].
    delta : float
        The learner's claimed δ.

    Returns
    -------
    float or numpy.ndarray
        The bound (0 where neither form is positive; inf where an upper bound is 0,
        which a Clopper–Pearson bound never is).
    """
    a = np.asarray(fpr_upper, dtype=np.float64)
    b = np.asarray(fnr_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1.0 - delta - a, 0.0) / b)
        two = np.log(np.maximum(1.0 - delta - b, 0.0) / a)
    out = np.maximum(np.maximum(np.nan_to_num(one, nan=-np.inf),
                                np.nan_to_num(two, nan=-np.inf)), 0.0)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True, eq=False)
class MembershipAudit:
    """What an audit found: the certified ε lower bound and the attack's points.

    Attributes
    ----------
    epsilon_lower : float
        The lower bound on the learner's ε, valid with probability ≥ ``confidence``
        (0.0 when the attack certifies nothing).
    equation : str
        The form that gave it (see the module), or ``"none"``.
    member_if : str
        The test chosen on the first half: ``"score > t"`` or ``"score < t"``.
    threshold : float or None
        t (None when every score was equal: no test separates anything).
    false_positives, true_positives : int
        Models trained without / with the canary called "member", second half only.
    trials : int
        Models per dataset in the second half (the bound's sample size).
    fpr, tpr : float
        false_positives / trials and true_positives / trials.
    fpr_upper, fnr_upper : float
        Their one-sided Clopper–Pearson upper bounds, each at (1 − confidence)/2.
    max_certifiable : float
        The bound a perfect attack would reach with ``trials`` models per dataset.
    runs : int
        Models trained per dataset (both halves).
    relation : str
        ``"add"`` or ``"replace"``.
    confidence, delta : float
        The bound's confidence and the claimed δ subtracted.
    selection : str
        How the threshold was chosen, in words.
    tradeoff : EmpiricalTradeoff
        The test at several thresholds on the second half, α = FPR and β = FNR with
        per-point two-sided Clopper–Pearson boxes at ``confidence`` (overlay on the
        learner's trade-off curve: :meth:`EmpiricalTradeoff.below` certifies a
        violation).
    scores_out, scores_in : numpy.ndarray
        The canary's score under every model trained without and with it, in run order.
    """

    epsilon_lower: float
    equation: str
    member_if: str
    threshold: float | None
    false_positives: int
    true_positives: int
    trials: int
    fpr: float
    tpr: float
    fpr_upper: float
    fnr_upper: float
    max_certifiable: float
    runs: int
    relation: str
    confidence: float
    delta: float
    selection: str
    tradeoff: EmpiricalTradeoff = field(repr=False)
    scores_out: np.ndarray = field(repr=False)
    scores_in: np.ndarray = field(repr=False)

    def points(self) -> list[dict[str, float]]:
        """The attack's points for a plot in (FPR, TPR), with their boxes.

        Returns
        -------
        list of dict
            Per threshold: ``threshold``, ``fpr``, ``tpr``, ``fpr_low``, ``fpr_high``,
            ``tpr_low``, ``tpr_high`` (two-sided, per point, at ``confidence``).
        """
        e = self.tradeoff
        sign = 1.0 if ">" in self.member_if else -1.0  # back to the score's own units
        return [{"threshold": float(sign * t), "fpr": float(a), "tpr": float(1.0 - b),
                 "fpr_low": float(al), "fpr_high": float(ah),
                 "tpr_low": float(1.0 - bh), "tpr_high": float(1.0 - bl)}
                for t, a, b, al, ah, bl, bh in zip(e.thresholds, e.alpha, e.beta,
                                                   e.alpha_low, e.alpha_high, e.beta_low,
                                                   e.beta_high, strict=True)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``points`` with their boxes, ``epsilon_lower``, how it was got, and
        ``note``, one sentence on what the bound shows and does not (:data:`AUDIT_MEANING`).

        Returns
        -------
        dict
        """
        return {
            "epsilon_lower": self.epsilon_lower, "equation": self.equation,
            "points": self.points(), "member_if": self.member_if,
            "threshold": self.threshold, "false_positives": self.false_positives,
            "true_positives": self.true_positives, "trials": self.trials,
            "fpr": self.fpr, "tpr": self.tpr, "fpr_upper": self.fpr_upper,
            "fnr_upper": self.fnr_upper, "max_certifiable": self.max_certifiable,
            "runs": self.runs, "relation": self.relation, "confidence": self.confidence,
            "delta": self.delta, "selection": self.selection, "note": AUDIT_MEANING,
        }


def max_certifiable(runs: int, confidence: float = AUDIT_CONFIDENCE,
                    delta: float = 0.0) -> float:
    """The largest ε an audit of ``runs`` trainings per dataset can certify at all.

    A perfect attack errs on none of the ``runs − ⌊runs/2⌋`` models per dataset it is
    counted on (the first half choose the test), so both error rates' upper bounds are
    the one-sided Clopper–Pearson bound of 0 errors at (1 − confidence)/2. Known before
    the audit runs: an application can say what an audit of that size can show.

    Parameters
    ----------
    runs : int
        Trainings per neighbouring dataset.
    confidence : float, optional
        Confidence of the two bounds together, in (0, 1).
    delta : float, optional
        The claimed δ the audit subtracts.

    Returns
    -------
    float
        ≥ 0; 0 when no outcome of so few trainings certifies any ε > 0.
    """
    counted = int(runs) - int(runs) // 2
    _, ceiling = clopper_pearson(np.array([0]), counted, (1.0 - confidence) / 2.0)
    return float(epsilon_from_rates(ceiling[0], ceiling[0], float(delta)))


def _counts_above(sorted_values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """How many values exceed each threshold (values sorted)."""
    return sorted_values.size - np.searchsorted(sorted_values, t, side="right")


def _choose_test(out: np.ndarray, inn: np.ndarray, tail: float, delta: float
                 ) -> tuple[float, float] | None:
    """(direction, threshold) whose bound is largest on this half; None if all scores tie.

    The direction is +1 for "member when score > t", −1 for "score < t". Thresholds are
    midpoints between consecutive distinct scores, so a new score equal to an old one
    falls on the side it fell on here.
    """
    best, best_eps = None, -1.0
    for sign in (1.0, -1.0):
        a, b = np.sort(sign * out), np.sort(sign * inn)
        u = np.unique(np.concatenate([a, b]))
        if u.size < 2:
            return None
        t = 0.5 * (u[:-1] + u[1:])
        _, fpr_up = clopper_pearson(_counts_above(a, t), a.size, tail)
        _, fnr_up = clopper_pearson(b.size - _counts_above(b, t), b.size, tail)
        eps = epsilon_from_rates(fpr_up, fnr_up, delta)
        # Tie-break towards the separating threshold of largest raw TPR − FPR.
        gap = (_counts_above(b, t) / b.size) - (_counts_above(a, t) / a.size)
        i = int(np.lexsort((-gap, -eps))[0])
        if eps[i] > best_eps or best is None:
            best, best_eps = (sign, float(t[i])), float(eps[i])
    return best


def _log_ratio(num: float, den: float) -> float:
    """ln(num/den), −inf when num ≤ 0 (that form certifies nothing)."""
    return math.log(num / den) if num > 0.0 else -math.inf


def _neighbours(X, y, canary, relation: str, replace_index: int):
    """(X, y) without the canary and (X′, y′) with it, as the relation says."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.size or y.size == 0:
        raise ParameterError("the data must be a design matrix (n, p) and one label per row")
    if isinstance(canary, Canary):
        cx, cy = canary.x, canary.y
    else:
        cx, cy = canary
    cx = np.asarray(cx, dtype=np.float64)
    if cx.shape != (X.shape[1],):
        raise ParameterError(f"the canary must be one design row of {X.shape[1]} values")
    if relation == "add":
        return X, y, np.vstack([X, cx[None, :]]), np.append(y, float(cy))
    if relation == "replace":
        i = int(replace_index)
        if not -y.size <= i < y.size:
            raise ParameterError(f"replace_index must name one of the {y.size} rows")
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = cx, float(cy)
        return X, y, X2, y2
    raise ParameterError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")


def audit_membership(train: Callable, score: Callable, X, y, canary, runs: int, source, *,
                     relation: str, confidence: float = AUDIT_CONFIDENCE, delta: float = 0.0,
                     replace_index: int = -1, points: int = 21,
                     state: State | None = None) -> MembershipAudit:
    """Train ``runs`` models with and without the canary and lower-bound ε (see module).

    Parameters
    ----------
    train : callable
        ``train(X, y, source) -> model``: the learner under audit, drawing its noise from
        ``source``.
    score : callable
        ``score(model, x, y) -> float``: the attack's statistic on the canary (e.g.
        :func:`canary_logistic_loss`). The direction is chosen by the audit.
    X : array_like, shape (n, p)
        D's design matrix.
    y : array_like, shape (n,)
        D's labels.
    canary : Canary or (x, y)
        The record in D′ and not in D.
    runs : int
        Models per dataset, ≥ 4: the first half choose the test, the second certify it.
    source : Source
        Random bits for the learner (seeded for a reproducible audit).
    relation : str
        ``"add"`` (D′ = D ∪ {canary}) or ``"replace"`` (D′ = D with row
        ``replace_index`` replaced by the canary): the relation the learner's guarantee
        is stated for. Required: auditing a learner under another relation tests a claim
        it never made (output perturbation calibrates its noise to n, so it is DP under
        ``replace``, not ``add``).
    confidence : float, optional
        Probability that ``epsilon_lower`` is a valid bound, in (0, 1).
    delta : float, optional
        The learner's claimed δ, in [0, 1).
    replace_index : int, optional
        The row the canary replaces (``relation="replace"``); the last by default.
    points : int, optional
        Thresholds plotted (quantiles of the second half's scores, plus the chosen one).
    state : State, optional
        The job's state (:mod:`~dpstudio.jobs`): cancellation checked before each
        training, progress after each.

    Returns
    -------
    MembershipAudit

    Raises
    ------
    ParameterError
        For bad data, canary, relation, runs, confidence, δ, or a score that is not a
        finite number.
    Cancelled
        If ``state`` is cancelled.
    """
    runs = count("runs", runs)
    if runs < 4:
        raise ParameterError("an audit needs at least 4 trainings per dataset (half choose "
                             f"the test, half certify it), got {runs}")
    c = number("confidence", confidence, low=0.0, low_open=True, high=1.0, high_open=True)
    dl = number("δ", delta, low=0.0, high=1.0, high_open=True)
    k = count("points", points)
    X0, y0, X1, y1 = _neighbours(X, y, canary, relation, replace_index)
    cx, cy = (canary.x, canary.y) if isinstance(canary, Canary) else canary
    cx = np.asarray(cx, dtype=np.float64)
    scores = np.empty((2, runs))
    total = 2 * runs
    for r in range(runs):  # alternate, so both datasets advance together
        for side, (Xs, ys) in enumerate(((X0, y0), (X1, y1))):
            check(state)
            s = score(train(Xs, ys, source), cx, cy)
            try:
                s = float(s)
            except (TypeError, ValueError):
                s = math.nan
            if not math.isfinite(s):
                raise ParameterError(f"the score of training {2 * r + side + 1} is not a "
                                     f"finite number: {s!r}")
            scores[side, r] = s
            if state is not None:
                done = 2 * r + side + 1
                state.progress(done / total, f"audit: training {done} of {total}")
    half = runs // 2
    tail = (1.0 - c) / 2.0  # two one-sided bounds hold together (Bonferroni)
    choice = _choose_test(scores[0, :half], scores[1, :half], tail, dl)
    out, inn = scores[0, half:], scores[1, half:]
    m = out.size
    max_cert = max_certifiable(runs, c, dl)
    if choice is None:
        sign, t = 1.0, float(out[0])  # every score tied: "member when above" holds none
    else:
        sign, t = choice
    a, b = np.sort(sign * out), np.sort(sign * inn)
    fp = int(_counts_above(a, np.array([t]))[0])
    tp = int(_counts_above(b, np.array([t]))[0])
    _, fpr_up = clopper_pearson(np.array([fp]), m, tail)
    _, fnr_up = clopper_pearson(np.array([m - tp]), m, tail)
    one = _log_ratio(1.0 - dl - fpr_up[0], fnr_up[0])
    two = _log_ratio(1.0 - dl - fnr_up[0], fpr_up[0])
    eps = max(one, two, 0.0)
    equation = ("none" if eps == 0.0 else
                "ln((1 − δ − FPR⁺)/FNR⁺)" if one >= two else "ln((1 − δ − FNR⁺)/FPR⁺)")
    pooled = np.concatenate([a, b])
    ts = np.unique(np.append(np.quantile(pooled, np.linspace(0.0, 1.0, k + 2)[1:-1]), t))
    plot = empirical_tradeoff(
        a, b, None, ts, c,
        label=f"membership audit ({m} models per dataset, {relation} relation)")
    word = ">" if sign > 0 else "<"
    return MembershipAudit(
        epsilon_lower=float(eps), equation=equation, member_if=f"score {word} t",
        threshold=None if choice is None else float(sign * t), false_positives=fp,
        true_positives=tp, trials=m, fpr=fp / m, tpr=tp / m, fpr_upper=float(fpr_up[0]),
        fnr_upper=float(fnr_up[0]), max_certifiable=max_cert, runs=runs,
        relation=relation, confidence=c, delta=dl,
        selection=(f"test chosen on the first {half} models per dataset, counted on the "
                   f"other {m}"),
        tradeoff=plot, scores_out=scores[0].copy(), scores_in=scores[1].copy())


def _data_key(X, y) -> bytes:
    """A digest of the data's shapes and values (equal data, equal key)."""
    h = hashlib.blake2b(digest_size=32)
    for a in (np.ascontiguousarray(X, dtype=np.float64),
              np.ascontiguousarray(y, dtype=np.float64)):
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.digest()


def fit_once(fit: Callable, noise: Callable, *, keep: int = 2) -> Callable:
    """A ``train`` for :func:`audit_membership` that fits each dataset once.

    ``train(X, y, source)`` returns ``noise(fit(X, y), source)``, with ``fit(X, y)``
    computed once per distinct dataset (keyed by a digest of its values) and reused:
    exactly retraining when the fit draws no randomness, as output perturbation's
    certified minimizer (:func:`~dpstudio.engine.learning.logistic.fit_logistic`) does.
    The audit alternates between two datasets, so two fits are kept by default.

    Parameters
    ----------
    fit : callable
        ``fit(X, y) -> fitted``, deterministic (it must not draw from a source).
    noise : callable
        ``noise(fitted, source) -> model``: the learner's randomness, e.g.
        ``lambda theta, s: perturb(theta, plan, s)``.
    keep : int, optional
        Fits kept (the most recently used), ≥ 1.

    Returns
    -------
    callable
        ``train(X, y, source) -> model``.

    Raises
    ------
    ParameterError
        If ``keep`` is not a positive integer.
    """
    k = count("keep", keep)
    fits: OrderedDict[bytes, Any] = OrderedDict()

    def train(X, y, source):
        key = _data_key(X, y)
        if key in fits:
            fits.move_to_end(key)
        else:
            fits[key] = fit(X, y)
            if len(fits) > k:
                fits.popitem(last=False)
        return noise(fits[key], source)

    return train


_RUN_KEYS = ("train", "score", "X", "y", "canary", "runs", "source", "relation")
_RUN_OPTIONAL = ("confidence", "delta", "replace_index", "points")


def run(params: Mapping[str, Any], state: State | None = None) -> MembershipAudit:
    """The audit as a job: :func:`audit_membership` with its arguments in a mapping.

    Parameters
    ----------
    params : mapping
        Required keys ``train``, ``score``, ``X``, ``y``, ``canary``, ``runs``,
        ``source``, ``relation``; optional ``confidence``, ``delta``,
        ``replace_index``, ``points`` (as :func:`audit_membership`).
    state : State, optional
        Progress after each training and cancellation before each.

    Returns
    -------
    MembershipAudit

    Raises
    ------
    ParameterError
        For a missing or unknown key, or as :func:`audit_membership`.
    Cancelled
        If ``state`` is cancelled.
    """
    missing = [k for k in _RUN_KEYS if k not in params]
    if missing:
        raise ParameterError("the audit needs " + ", ".join(missing))
    unknown = sorted(set(params) - set(_RUN_KEYS) - set(_RUN_OPTIONAL))
    if unknown:
        raise ParameterError("unknown audit parameter(s): " + ", ".join(unknown))
    kw = {k: params[k] for k in _RUN_OPTIONAL if k in params}
    return audit_membership(params["train"], params["score"], params["X"], params["y"],
                            params["canary"], params["runs"], params["source"],
                            relation=params["relation"], state=state, **kw)
