"""Membership inference: Clopper–Pearson, the loss-threshold attack, the ε audit.

The audit is checked on learners whose privacy is known: the non-private learner (no
privacy: the bound must be large), a mechanism that ignores the data (ε = 0: the bound
must be 0), randomized response on the canary (tight ε: the bound is valid in ≥ 95% of
audits and reaches most of ε with 1000 runs), output-perturbation logistic regression
(the bound never exceeds its ε at ε = 1 and 4, even with the white-box likelihood-ratio
score) and the same learner with noise 20 times too small (caught). The power check at
ε = 4, on a pair where the bound should be tight, is in test_audit_power.py.
"""

import math

import numpy as np
import pytest
from scipy.stats import beta, norm

from dpstudio.engine.audit import clopper_pearson
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.learning import (
    calibrate_output_perturbation,
    design_matrix,
    fit_logistic,
)
from dpstudio.engine.learning.membership import (
    Canary,
    audit_membership,
    canary_logistic_loss,
    corner_canary,
    epsilon_from_rates,
    fit_once,
    loss_threshold_attack,
    run,
)
from dpstudio.engine.learning.output_perturbation import perturb
from dpstudio.engine.rng import SimulationSource
from dpstudio.jobs import Cancelled, NullState

BOUNDS = {"a": (0.0, 10.0), "b": (-5.0, 5.0)}
LAM = 1.0


def _data(n=50, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0, 10, n), rng.uniform(-5, 5, n)
    y = np.where((a - 5) + b + 2.0 * rng.normal(size=n) > 0, 1.0, -1.0)
    return design_matrix({"a": a, "b": b}, ["a", "b"], BOUNDS), y


def _canary(X, y):
    ref = fit_logistic(X, y, LAM).theta
    return corner_canary(X.shape[1], lambda Z: Z @ ref, features=["a", "b"], bounds=BOUNDS)


def _output_perturbation(epsilon):
    def fit(X, y):  # deterministic, so fit_once reusing it is exactly retraining
        plan = calibrate_output_perturbation(X.shape[1], X.shape[0], LAM, epsilon, 0.0)
        return fit_logistic(X, y, LAM).theta, plan

    return fit_once(fit, lambda fitted, source: perturb(*fitted, source))


def _nonprivate(X, y, source):
    return fit_logistic(X, y, LAM).theta


def _uniform(source):
    return float(source.uint64(1)[0]) / 2.0**64


# ------------------------------------------------------------------- Clopper–Pearson

def test_clopper_pearson_closed_forms_at_zero_and_n_successes():
    for n in (1, 7, 100):
        for alpha in (0.025, 0.1):
            lo, hi = clopper_pearson(np.array([0, n]), n, alpha)
            # k = 0: P(X = 0 | p) = (1 − p)^n = α; k = n: p^n = α.
            assert hi[0] == pytest.approx(1.0 - alpha ** (1.0 / n), rel=1e-12)
            assert lo[1] == pytest.approx(alpha ** (1.0 / n), rel=1e-12)
            assert lo[0] == 0.0 and hi[1] == 1.0


def test_clopper_pearson_matches_scipy_beta_quantiles():
    k = np.array([1, 3, 17, 50, 99])
    lo, hi = clopper_pearson(k, 100, 0.025)
    assert lo == pytest.approx(beta.ppf(0.025, k, 100 - k + 1), rel=1e-9)
    assert hi == pytest.approx(beta.ppf(0.975, k + 1, 100 - k), rel=1e-9)


def test_epsilon_from_rates_both_forms():
    assert epsilon_from_rates(0.1, 0.2) == pytest.approx(math.log(0.8 / 0.1))
    assert epsilon_from_rates(0.2, 0.1) == pytest.approx(math.log(0.8 / 0.1))
    assert epsilon_from_rates(0.1, 0.2, delta=0.1) == pytest.approx(math.log(0.7 / 0.1))
    assert epsilon_from_rates(0.5, 0.5) == 0.0  # guessing certifies nothing
    assert epsilon_from_rates(0.9, 0.9) == 0.0


# --------------------------------------------------------------- loss-threshold attack

def test_attack_advantage_of_a_separated_toy_is_the_closed_form():
    members = np.arange(100.0)  # losses 0..99
    for shift in (0, 30, 100, 150):
        attack = loss_threshold_attack(members, members + shift)
        # "member when loss ≤ t" at t = shift − 1 catches shift members, no non-member.
        assert attack.advantage == pytest.approx(min(shift, 100) / 100.0, abs=1e-12)
        assert attack.fpr[0] == 0.0 and attack.tpr[-1] == 1.0 and attack.fpr[-1] == 1.0
    attack = loss_threshold_attack(members, members + 30)
    # Yeom's threshold, the members' mean 49.5: 50 members and 20 non-members under it.
    assert attack.yeom_threshold == 49.5
    assert attack.yeom_advantage == pytest.approx(0.5 - 0.2)


def test_attack_on_gaussian_losses_matches_closed_forms():
    # Losses N(0, 1) for members and N(μ, 1) for others: the best advantage is
    # 2Φ(μ/2) − 1 and the AUC Φ(μ/√2). n = 20000 per side: the estimates' standard
    # deviations are about 0.005; the tolerance 0.02 is 4 of them.
    rng = np.random.default_rng(11)
    mu = 1.0
    attack = loss_threshold_attack(rng.normal(0, 1, 20000), rng.normal(mu, 1, 20000))
    assert attack.advantage == pytest.approx(2 * norm.cdf(mu / 2) - 1, abs=0.02)
    assert attack.auc == pytest.approx(norm.cdf(mu / math.sqrt(2)), abs=0.02)
    same = loss_threshold_attack(rng.normal(0, 1, 20000), rng.normal(0, 1, 20000))
    assert same.advantage < 0.03 and same.auc == pytest.approx(0.5, abs=0.02)


def test_attack_refuses_empty_or_nan_losses():
    with pytest.raises(ParameterError, match="at least one value"):
        loss_threshold_attack([], [1.0])
    with pytest.raises(ParameterError, match="finite"):
        loss_threshold_attack([1.0], [np.nan])


# ---------------------------------------------------------------------------- canary

def test_corner_canary_is_the_most_confident_corner_with_the_other_label():
    theta = np.array([2.0, -1.0, 0.5])
    c = corner_canary(3, lambda Z: Z @ theta, features=["a", "b"], bounds=BOUNDS)
    root = math.sqrt(3)
    assert c.x == pytest.approx([1 / root, -1 / root, 1 / root])  # sign of θ's features
    assert c.y == -1.0  # the model says +1 there
    assert c.values == {"a": 10.0, "b": -5.0}
    assert np.linalg.norm(c.x) == pytest.approx(1.0)
    blind = corner_canary(3)
    assert blind.x == pytest.approx(np.full(3, 1 / root)) and blind.y == -1.0
    theta = np.array([2.0, -1.0, 20.0])  # predictions 5.8…13.3, all above the middle
    reg = corner_canary(3, lambda Z: Z @ theta, label_bounds=(0.0, 10.0))
    assert reg.x == pytest.approx([1 / root, -1 / root, 1 / root])
    assert reg.y == 0.0  # predicted farthest above the middle 5: label at the low bound


# ---------------------------------------------------------------------------- audit

def test_non_private_learner_is_caught_and_a_blind_one_is_not():
    X, y = _data()
    can = _canary(X, y)
    a = audit_membership(_nonprivate, canary_logistic_loss, X, y, can, 100,
                         SimulationSource(0), relation="replace")
    # Deterministic training separates perfectly: the bound is the most 50 models allow.
    assert (a.false_positives, a.true_positives, a.trials) == (0, 50, 50)
    assert a.epsilon_lower == pytest.approx(a.max_certifiable)
    assert a.epsilon_lower > 2.5  # more than a private run's ε = 1 (or 2)
    assert a.member_if == "score < t"  # a member's loss is lower
    blind = audit_membership(lambda X_, y_, s: _uniform(s), lambda m, x, y_: m, X, y, can,
                             200, SimulationSource(1), relation="add")
    assert blind.epsilon_lower <= 0.05


def test_audit_is_valid_and_powerful_on_randomized_response():
    # The "model" is randomized response on the canary's membership: exactly ε-DP and
    # tight, the hardest case for validity. 200 audits of 100 runs (50 + 50 certify, so
    # up to 2.57 is certifiable: exceeding ε = 1 is possible): the bound may exceed ε in
    # at most 5% of them (binomial: mean ≤ 10, 22 is 4 sd above). The same audits
    # exceed a claim of ε/2 in most of them: the check would catch a claim that low.
    eps = 1.0
    keep = math.exp(eps) / (1 + math.exp(eps))
    X, y = np.zeros((3, 2)), np.ones(3)
    can = (np.ones(2), 1.0)

    def rr(X_, y_, source):
        member = X_.shape[0] > 3
        return member if _uniform(source) < keep else not member

    score = lambda m, x, y_: float(m)  # noqa: E731
    src = SimulationSource(5)
    bounds = np.array([audit_membership(rr, score, X, y, can, 100, src, relation="add")
                       .epsilon_lower for _ in range(200)])
    assert audit_membership(rr, score, X, y, can, 100, src,
                            relation="add").max_certifiable > 2.5
    assert (bounds > eps).sum() <= 22
    assert (bounds > eps / 2).sum() >= 40
    big = audit_membership(rr, score, X, y, can, 1000, SimulationSource(6), relation="add")
    assert 0.7 * eps < big.epsilon_lower <= eps  # power: most of ε with 500 + 500 models


def _white_box_score(X, y, can, epsilon):
    """The likelihood ratio of output perturbation's Laplace noise for this pair."""
    from dpstudio.engine.learning.membership import _neighbours
    X0, y0, X1, y1 = _neighbours(X, y, can, "replace", -1)
    t0, t1 = fit_logistic(X0, y0, LAM).theta, fit_logistic(X1, y1, LAM).theta
    b = calibrate_output_perturbation(X.shape[1], X.shape[0], LAM, epsilon, 0.0).noise_scale
    return lambda th, x, y_: float(np.sum(np.abs(th - t0) - np.abs(th - t1)) / b)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_output_perturbation_bound_never_exceeds_its_epsilon(seed):
    X, y = _data(seed=seed)
    can = _canary(X, y)
    # The replaced record: the canary's corner with the opposite label (the pair moves
    # the minimizer about half of 2/(nλ), the most this design allows).
    X, y = np.vstack([X, can.x]), np.append(y, -can.y)
    for eps in (1.0, 4.0):
        for score in (canary_logistic_loss, _white_box_score(X, y, can, eps)):
            a = audit_membership(_output_perturbation(eps), score, X, y, can, 200,
                                 SimulationSource(seed), relation="replace")
            assert a.epsilon_lower <= eps
    huge = audit_membership(_output_perturbation(1e-3), canary_logistic_loss, X, y, can,
                            200, SimulationSource(seed), relation="replace")
    assert huge.epsilon_lower <= 0.05


def test_output_perturbation_with_too_little_noise_is_caught():
    # Noise calibrated for ε = 20 while ε = 1 is claimed: the audit certifies ε > 1.
    X, y = _data()
    can = _canary(X, y)
    X, y = np.vstack([X, can.x]), np.append(y, -can.y)
    a = audit_membership(_output_perturbation(20.0), _white_box_score(X, y, can, 20.0),
                         X, y, can, 200, SimulationSource(4), relation="replace")
    assert a.epsilon_lower > 1.0


def test_points_boxes_and_json_keys():
    X, y = _data()
    can = _canary(X, y)
    a = audit_membership(_output_perturbation(4.0), canary_logistic_loss, X, y, can, 60,
                         SimulationSource(2), relation="replace", points=9)
    d = a.to_dict()
    assert {"points", "epsilon_lower", "max_certifiable", "selection"} <= set(d)
    assert 1 <= len(d["points"]) <= 10
    for p in d["points"]:
        assert p["fpr_low"] <= p["fpr"] <= p["fpr_high"]
        assert p["tpr_low"] <= p["tpr"] <= p["tpr_high"]
    assert a.scores_out.shape == a.scores_in.shape == (60,)
    assert a.trials == 30 and "first 30" in a.selection


def test_progress_cancel_and_the_job_form():
    X, y = _data(20)
    can = _canary(X, y)
    calls = []

    def train(X_, y_, s):
        calls.append(1)
        return _nonprivate(X_, y_, s)

    state = NullState()
    params = {"train": train, "score": canary_logistic_loss, "X": X, "y": y,
              "canary": can, "runs": 6, "source": SimulationSource(0), "relation": "add"}
    a = run(params, state)
    assert state.fractions == pytest.approx([(i + 1) / 12 for i in range(12)])
    assert a.runs == 6 and len(calls) == 12

    class CancelAfter(NullState):
        def cancelled(self):
            return len(self.fractions) >= 5

    calls.clear()
    with pytest.raises(Cancelled):
        run(params, CancelAfter())
    assert len(calls) == 5
    with pytest.raises(ParameterError, match="needs relation"):
        run({k: v for k, v in params.items() if k != "relation"})


def test_bad_input_is_one_sentence():
    X, y = _data(20)
    can = Canary(np.ones(3) / math.sqrt(3), 1.0, None, "")
    args = (_nonprivate, canary_logistic_loss, X, y)
    with pytest.raises(ParameterError, match="relation must be one of add, replace"):
        audit_membership(*args, can, 10, SimulationSource(0), relation="swap")
    with pytest.raises(ParameterError, match="at least 4 trainings"):
        audit_membership(*args, can, 3, SimulationSource(0), relation="add")
    with pytest.raises(ParameterError, match="one design row of 3"):
        audit_membership(*args, (np.ones(2), 1.0), 10, SimulationSource(0), relation="add")
    with pytest.raises(ParameterError, match="not a finite number"):
        audit_membership(_nonprivate, lambda m, x, y_: math.nan, X, y, can, 4,
                         SimulationSource(0), relation="add")
