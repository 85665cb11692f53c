"""How each method trains: the trainer of a training run, its λ and its membership audit.

:func:`trainer` turns a resolved run into ``train(X, y, source, release)`` returning the
engine object that drew the noise (or :class:`NonPrivateFit` for the baseline method):
output perturbation perturbs the certified minimizer, objective perturbation perturbs the
objective, DP-SGD adds noise to every step's clipped gradients. :func:`membership_audit`
runs the audit on the training rows under the relation the method's guarantee is stated
for (``replace`` for output and objective perturbation, ``add`` for DP-SGD and
FedAvg's variants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.rng import Source

__all__ = ["NonPrivateFit", "lambda_of", "membership_audit", "method_fields", "theta_of",
           "trainer"]

#: λ of a non-private fit when none is given (the output-perturbation entry's default for
#: logistic regression, a light ridge otherwise).
_NONPRIVATE_LAMBDA = {"logistic": 0.01, "linear": 1e-4, "mlp": 1e-4}


@dataclass(frozen=True)
class NonPrivateFit:
    """The engine object of a non-private run: no noise, no guarantee, never released.

    Attributes
    ----------
    theta : numpy.ndarray
        The parameters found.
    epsilon : float
        inf: no privacy.
    delta : float
        0.
    simulated : bool
        True: never a release.
    """

    theta: np.ndarray
    epsilon: float = math.inf
    delta: float = 0.0
    simulated: bool = field(default=True)


def lambda_of(a: AnalysisSpec) -> float:
    """The run's regularization λ: the method's entry's (its default when not given), or
    a non-private fit's own default.

    Parameters
    ----------
    a : AnalysisSpec
        A training run.

    Returns
    -------
    float
        λ.
    """
    t = a.training
    if t.method == "nonprivate":
        lam = a.query.params.get("lambda", _NONPRIVATE_LAMBDA[t.model])
        return float(lam)
    return float(a.info.resolve(a.query.mechanism_params())["lambda"])


def trainer(a: AnalysisSpec, model: Any, lam: float, baseline: Any) -> tuple[Any, str]:
    """``train(X, y, source, release) -> engine object`` for the method, and its accountant.

    Parameters
    ----------
    a : AnalysisSpec
        A resolved, centralized training run.
    model : Model
        The engine's model (:func:`~dpstudio.engine.learning.models.make_model`).
    lam : float
        λ (:func:`lambda_of`).
    baseline : callable
        ``baseline(X, y)``: the non-private fit (the ``"nonprivate"`` method's trainer).

    Returns
    -------
    (callable, str)
        The trainer (DP-SGD's also takes ``state``) and the name of the accountant that
        states its guarantee (``"none"`` for a non-private fit). A release
        (``release=True``) draws from the OS CSPRNG only.
    """
    from dpstudio.engine.learning import dpsgd
    from dpstudio.engine.learning.objective_perturbation import ObjectiveERM

    t, q = a.training, a.query
    if t.method == "nonprivate":
        return (lambda X, y, source, release=False: NonPrivateFit(baseline(X, y).theta)), \
            "none"
    entry = a.info.build(**a.info.resolve(q.mechanism_params()))
    if t.method == "output":
        from dpstudio.engine.learning.logistic import fit_logistic
        from dpstudio.engine.learning.output_perturbation import (
            calibrate_output_perturbation,
            perturb,
        )
        from dpstudio.engine.rng import require_secure

        def output(X, y, source, release=False):
            if release:
                require_secure(source)
            plan = calibrate_output_perturbation(X.shape[1], y.size, lam, q.epsilon, q.delta)
            theta = perturb(fit_logistic(X, y, lam).theta, plan, source)
            return _OutputFit(theta, plan.epsilon, plan.delta, not release, plan)

        return output, ("pure-dp (discrete Laplace)" if q.delta == 0 else
                        "zcdp → (ε, δ) (discrete Gaussian)")
    if t.method == "objective":
        obj: ObjectiveERM = entry

        def objective(X, y, source, release=False):
            return (obj.release if release else obj.simulate)(X, y, source)

        return objective, ("cms2011 (pure ε)" if q.delta == 0 else "kst2012 (ε, δ)")
    plan = entry.calibrate(model.dimension)

    def sgd(X, y, source, release=False, state=None):
        run = dpsgd.release_dpsgd if release else dpsgd.simulate_dpsgd
        return run(model, X, y, plan, source, state)

    return sgd, plan.accountant


@dataclass(frozen=True)
class _OutputFit:
    """Output perturbation on a design matrix (the erm release's steps, for a split)."""

    theta: np.ndarray
    epsilon: float
    delta: float
    simulated: bool
    plan: Any = field(repr=False)


def membership_audit(a: AnalysisSpec, train: Any, model: Any, X: np.ndarray,
                     y: np.ndarray, reference: np.ndarray, source: Source,
                     state: Any) -> Any:
    """The membership audit on the training rows, under the method's relation.

    Parameters
    ----------
    a : AnalysisSpec
        The training run (``training.audit`` trainings per neighbouring dataset).
    train : callable
        ``train(X, y, source)`` (:func:`trainer`'s, or a federated run's).
    model : Model
        The engine's model.
    X, y : numpy.ndarray
        The training rows.
    reference : numpy.ndarray
        The non-private parameters the canary is placed against.
    source : Source
        The audit's randomness (a seeded source in a simulation).
    state : State or None
        Progress and cancellation.

    Returns
    -------
    MembershipAudit
        :func:`~dpstudio.engine.learning.membership.audit_membership`'s result.
    """
    from dpstudio.engine.learning.membership import audit_membership, corner_canary

    t = a.training
    if t.model == "linear":
        canary = corner_canary(X.shape[1], lambda rows: model.predict(reference, rows),
                               label_bounds=(-1.0, 1.0))
    else:
        canary = corner_canary(X.shape[1], lambda rows: model.predict(reference, rows) - 0.5)

    def score(fit, x, yy):
        return float(model.losses(theta_of(fit), np.asarray(x)[None, :], np.array([yy]))[0])

    # DP-SGD and FedAvg's variants: add/remove (a federated D′ adds the canary at a site).
    relation = "add" if t.method == "dpsgd" or t.federated is not None else "replace"
    if t.method == "output":
        # The certified minimizer draws nothing: fit each neighbouring dataset once and
        # redraw only the noise (exactly what retraining gives, 2 fits instead of 2N).
        from dpstudio.engine.learning.logistic import fit_logistic
        from dpstudio.engine.learning.membership import fit_once
        from dpstudio.engine.learning.output_perturbation import (
            calibrate_output_perturbation,
            perturb,
        )

        lam, q = lambda_of(a), a.query

        def noisy(fitted, src):
            theta, p, n = fitted
            plan = calibrate_output_perturbation(p, n, lam, q.epsilon, q.delta)
            return _OutputFit(perturb(theta, plan, src), plan.epsilon, plan.delta, True, plan)

        train = fit_once(lambda Xs, ys: (fit_logistic(Xs, ys, lam).theta, Xs.shape[1],
                                         ys.size), noisy)
    return audit_membership(lambda Xs, ys, src: train(Xs, ys, src), score, X, y, canary,
                            t.audit, source, relation=relation, delta=float(a.query.delta),
                            state=state)


def theta_of(engine: Any) -> np.ndarray:
    """The parameters of a trained engine object (``theta``, or a federated run's
    ``params``).

    Parameters
    ----------
    engine : object
        What a trainer returned.

    Returns
    -------
    numpy.ndarray
    """
    return np.asarray(getattr(engine, "theta", getattr(engine, "params", None)))


def method_fields(a: AnalysisSpec, engine: Any) -> dict[str, Any]:
    """The fields a run adds for its model and method: the MLP's width, a federated run's
    trust, per-round privacy and plan figures, DP-SGD's plan.

    Parameters
    ----------
    a : AnalysisSpec
        The training run.
    engine : object
        The engine object that drew the noise.

    Returns
    -------
    dict
        ``hidden`` (an MLP), then ``trusts``, ``per_round`` and ``federated`` (a federated
        run) or ``dpsgd`` (DP-SGD's noise multiplier, steps, sample rate, clip, learning
        rate and expected batch).
    """
    t = a.training
    fields: dict[str, Any] = {}
    if t.model == "mlp":
        fields["hidden"] = t.hidden
    if t.federated is not None:
        fields["trusts"] = engine.trusts
        fields["per_round"] = None if engine.per_round is None else list(engine.per_round)
        fields["federated"] = {k: v for k, v in engine.details.items()
                               if isinstance(v, int | float | str)}
    elif t.method == "dpsgd":
        p = engine.plan
        fields["dpsgd"] = {"noise_multiplier": p.noise_multiplier, "steps": p.steps,
                           "sample_rate": p.sample_rate, "clip": p.clip,
                           "learning_rate": p.learning_rate,
                           "expected_batch": p.expected_batch}
    return fields
