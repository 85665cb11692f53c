"""The audit widget's computation (no Qt): the model's claimed trade-off curve and the audit.

:func:`claim_job` trains the request once (seeded noise: a simulation) to learn what the
method calibrated, and :func:`audit_job` trains it once more with a membership audit of
``runs`` trainings per neighbouring dataset (:func:`~dpstudio.analysis.training
.run_training` with ``audit``). Both give the model's curve at the claimed (ε, δ),
:func:`claimed_curve`:

- DP-SGD: the curve of its privacy-loss distribution for the (q, σ, T) run (the PLD
  accountant's, a pessimistic envelope: the true curve lies above it);
- output perturbation with δ > 0: the envelope of the (ε, δ) pairs its ρ-zCDP guarantee
  gives (pessimistic);
- otherwise (output perturbation with δ = 0, objective perturbation, federated runs)
  the boundary of the (ε, δ) region, labelled so: the engine knows no tighter curve.

:func:`attacker_accuracy` turns a curve into the stakeholder's number: the best chance an
attacker starting at even odds has of guessing right whether one record was used.

:func:`runs_to_certify` is the fewest trainings per dataset whose audit can certify some
ε > 0 (the engine's ``max_certifiable``, a perfect attack's bound, above 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.analysis.curves import AttackPoints, Line, TradeoffResult
from dpstudio.engine.learning.membership import AUDIT_CONFIDENCE

__all__ = ["AuditOutcome", "ModelTradeoff", "attacker_accuracy", "attack_points",
           "audit_delta", "audit_job", "audit_spec", "claim_job", "claimed_curve",
           "runs_to_certify"]

#: Type I errors the curves are drawn on and the accuracy bound is taken over.
_GRID = np.linspace(0.0, 1.0, 2001)
REGION_NOTE = ("The engine knows no exact curve for this method: the line is the boundary "
               "of its (ε, δ) region, the most an (ε, δ) guarantee allows.")


@dataclass
class ModelTradeoff(TradeoffResult):
    """A :class:`~dpstudio.analysis.curves.TradeoffResult` for a model, with its words.

    Attributes
    ----------
    region_note : str or None
        The sentence the plot adds when its curve is only the (ε, δ) region's boundary.
    accuracy : float or None
        :func:`attacker_accuracy` of the claimed curve (None without a guarantee).
    method : str
        The training method.
    """

    region_note: str | None = None
    accuracy: float | None = None
    method: str = ""


@dataclass(frozen=True)
class AuditOutcome:
    """One finished audit: the claim, the attack's points and the training run's fields."""

    runs: int
    claim: ModelTradeoff
    audit: dict[str, Any]
    fields: dict[str, Any] = field(repr=False)


def attacker_accuracy(beta_at, epsilon: float, delta: float) -> float:
    """The most often an attacker at even odds guesses membership right, by a curve.

    With prior ½ a test with errors (α, β) is right 1 − (α + β)/2 of the time, so the best
    is 1 − min_α (α + f(α))/2. The minimum is bounded below on a uniform grid α_i by
    min_i (α_i + f(α_{i+1})) (f is non-increasing), so the number returned is never below
    the truth; it is also capped by the (ε, δ) region's own value, (e^ε + δ)/(1 + e^ε),
    which any (ε, δ)-DP method meets.

    Parameters
    ----------
    beta_at : callable
        α array ↦ f(α), the curve (a pessimistic one is fine: lower f, higher bound).
    epsilon, delta : float
        The claimed guarantee.

    Returns
    -------
    float
        An upper bound on the attacker's accuracy, in [½, 1].
    """
    f = np.clip(np.asarray(beta_at(_GRID), dtype=np.float64), 0.0, 1.0)
    low = float(np.min(np.append(_GRID[:-1] + f[1:], 1.0)))
    region = (1.0 + delta * math.exp(-epsilon)) / (1.0 + math.exp(-epsilon))
    return float(min(max(1.0 - low / 2.0, 0.5), region, 1.0))


def _zcdp_curve(rho: float) -> Any:
    """The envelope of the (ε(δ), δ) lines a ρ-zCDP guarantee gives (pessimistic)."""
    from dpstudio.engine.accounting.zcdp import zcdp_to_epsilon
    from dpstudio.engine.tradeoff import epsilon_delta_tradeoff

    deltas = np.logspace(-14, math.log10(0.5), 120)
    lines = [epsilon_delta_tradeoff(zcdp_to_epsilon(rho, d), d) for d in deltas]

    def beta(a: np.ndarray) -> np.ndarray:
        return np.max([line.at(a) for line in lines], axis=0)

    return beta


def claimed_curve(fields: dict[str, Any], engine: Any = None) -> ModelTradeoff:
    """The model's trade-off curve at the (ε, δ) a training run claims (see the module).

    Parameters
    ----------
    fields : dict
        The training run's fields (``epsilon``, ``delta``, ``method``, ``fed_variant``,
        ``dpsgd``).
    engine : object, optional
        Its engine object (output perturbation's ``plan.rho`` is read for δ > 0).

    Returns
    -------
    ModelTradeoff
        With ``epsilon`` inf and no curve for a non-private run.
    """
    from dpstudio.engine.tradeoff import epsilon_delta_tradeoff

    method = str(fields.get("method", ""))
    eps, delta = fields.get("epsilon"), float(fields.get("delta") or 0.0)
    nothing = Line("no guarantee", np.array([0.0, 1.0]), np.array([0.0, 0.0]))
    if eps is None or not math.isfinite(float(eps)):
        return ModelTradeoff(math.inf, 0.0, 1, nothing, None, None, None, None, None,
                             ["trained without privacy: no curve bounds an attacker"],
                             method=method)
    eps = float(eps)
    region = epsilon_delta_tradeoff(eps, delta, _GRID)
    bound = Line(region.label, region.alpha, region.beta, True)
    federated = fields.get("fed_variant", "none") not in (None, "none")
    beta_at, label, note = None, "", None
    sgd = fields.get("dpsgd") if method == "dpsgd" and not federated else None
    rho = getattr(getattr(engine, "plan", None), "rho", None)
    if sgd:
        from dpstudio.engine.accounting.pld import PLD
        from dpstudio.engine.tradeoff import profile_to_tradeoff

        pld = PLD.subsampled_gaussian(float(sgd["noise_multiplier"]),
                                      float(sgd["sample_rate"])).self_compose(int(sgd["steps"]))
        curve = profile_to_tradeoff(pld.delta, _GRID)
        beta_at = curve.at
        label = (f"DP-SGD (q = {sgd['sample_rate']:.3g}, σ = {sgd['noise_multiplier']:.3g}, "
                 f"T = {sgd['steps']})")
        notes = ["curve: the privacy-loss distribution of the DP-SGD run (q, σ, T), a "
                 "pessimistic envelope"]
    elif method == "output" and delta > 0 and rho:
        beta_at = _zcdp_curve(float(rho))
        label = f"output perturbation (ρ = {float(rho):.3g} zCDP)"
        notes = ["curve: the (ε, δ) pairs of the method's zCDP guarantee, a pessimistic "
                 "envelope"]
    else:
        beta_at, label, note = region.at, region.label, REGION_NOTE
        notes = ["curve: the (ε, δ) region's boundary (no exact curve known here)"]
    # Region only: no curve of its own; the plot draws the bound as this model's line.
    mechanism = None if note else Line(label, _GRID.copy(), np.maximum(
        np.asarray(beta_at(_GRID), dtype=np.float64), 0.0), False)  # an envelope
    return ModelTradeoff(eps, delta, 1, bound, mechanism, None, None, None, None, notes,
                         region_note=note, accuracy=attacker_accuracy(beta_at, eps, delta),
                         method=method)


def attack_points(audit: dict[str, Any]) -> AttackPoints:
    """The audit's (FPR, TPR) points as (type I, type II) errors with their boxes.

    Parameters
    ----------
    audit : dict
        ``MembershipAudit.to_dict()`` (``points``, ``trials``, ``confidence``, ``runs``).

    Returns
    -------
    AttackPoints
        α = FPR, β = 1 − TPR; the β interval is [1 − TPR_high, 1 − TPR_low].
    """
    pts = audit["points"]

    def col(key: str) -> np.ndarray:
        return np.array([p[key] for p in pts], dtype=np.float64)

    return AttackPoints(
        f"membership audit ({audit['runs']} trainings per dataset)",
        col("fpr"), 1.0 - col("tpr"), col("fpr_low"), col("fpr_high"),
        1.0 - col("tpr_high"), 1.0 - col("tpr_low"), int(audit["trials"]),
        float(audit["confidence"]))


def audit_spec(req: Any, schema: Any, runs: int) -> tuple[Any, list[str]]:
    """The request's training run (at its ε) with a membership audit of ``runs``.

    Parameters
    ----------
    req : ModelRequest
        The Models tab's request (:class:`~dpstudio.ui.model_jobs.ModelRequest`).
    schema : Schema
        The declarations in force.
    runs : int
        Trainings per neighbouring dataset (0: no audit; else ≥ 4).

    Returns
    -------
    (AnalysisSpec, list of str)
    """
    from dpstudio.analysis.training import describe_training, resolve_training

    params = {k: v for k, v in req.params.items() if k not in ("epsilon", "delta")}
    if req.federated is not None:
        params.pop("epochs", None)  # a federated run is set by rounds and local steps
    delta = float(req.params.get("delta", 0.0) or 0.0)
    analysis = describe_training(req.label, req.features, req.model, req.method,
                                 None if req.method == "nonprivate" else req.epsilon,
                                 delta=delta, params=params, fed_variant=req.fed_variant,
                                 federated=req.federated, audit=int(runs))
    return resolve_training(analysis, schema)


def runs_to_certify(delta: float = 0.0, confidence: float = AUDIT_CONFIDENCE,
                    most: int = 100_000) -> int:
    """The fewest trainings per dataset whose audit can certify some ε > 0.

    Parameters
    ----------
    delta, confidence : float, optional
        As :func:`~dpstudio.engine.learning.membership.max_certifiable`.
    most : int, optional
        Where the search gives up (δ near 1 certifies nothing at any count).

    Returns
    -------
    int
        ≥ 4 (the engine's least); ``most`` + 1 when none up to ``most`` can.
    """
    from dpstudio.engine.learning.membership import max_certifiable

    # The bound grows with runs (an odd count adds a counted model): double, then bisect.
    high = 4
    while max_certifiable(high, confidence, delta) <= 0.0:
        if high > most:
            return most + 1
        high *= 2
    low = max(high // 2, 3)  # certifiable_at_most(low) is 0, or low is below the least
    while high - low > 1:
        mid = (low + high) // 2
        if max_certifiable(mid, confidence, delta) > 0.0:
            high = mid
        else:
            low = mid
    return high


def audit_delta(req: Any, schema: Any) -> float:
    """The δ the audit of ``req`` subtracts: its training run's, as the engine is given it.

    Parameters
    ----------
    req : ModelRequest
        The training run.
    schema : Schema
        The declarations in force.

    Returns
    -------
    float
        The resolved query's δ (the request's own when it cannot be resolved: the audit
        would then fail with the reason).
    """
    try:
        analysis, _ = audit_spec(req, schema, 4)
    except ValueError:  # EngineError and the schema's: the run says why
        return float(req.delta)
    return float(analysis.query.delta)


def _run(req: Any, frame: Any, schema: Any, runs: int, state: Any) -> Any:
    from dpstudio.analysis.training import run_training
    from dpstudio.engine.rng import SimulationSource
    from dpstudio.execution.training_input import training_columns

    analysis, notes = audit_spec(req, schema, runs)
    return run_training(analysis, training_columns(frame, analysis),
                        SimulationSource(req.seed), notes=notes, state=state)


def claim_job(req: Any, frame: Any, schema: Any, *, state: Any) -> ModelTradeoff:
    """Train once (seeded) and give the model's curve at the claimed (ε, δ).

    Parameters
    ----------
    req : ModelRequest
        The training run.
    frame : pandas.DataFrame
        The table.
    schema : Schema
        The declarations in force.
    state : State
        Progress and cancellation.

    Returns
    -------
    ModelTradeoff
    """
    result = _run(req, frame, schema, 0, state)
    return claimed_curve(result.fields, result.engine)


def audit_job(req: Any, frame: Any, schema: Any, runs: int, *, state: Any) -> AuditOutcome:
    """Train with a membership audit of ``runs`` trainings per dataset (seeded noise).

    Parameters
    ----------
    req : ModelRequest
        The training run.
    frame : pandas.DataFrame
        The table.
    schema : Schema
        The declarations in force.
    runs : int
        Trainings per neighbouring dataset, ≥ 4.
    state : State
        Progress and cancellation (checked before every training).

    Returns
    -------
    AuditOutcome
    """
    result = _run(req, frame, schema, int(runs), state)
    claim = claimed_curve(result.fields, result.engine)
    audit = dict(result.fields["audit"])
    claim.attack = attack_points(audit)
    return AuditOutcome(int(runs), claim, audit, dict(result.fields))
