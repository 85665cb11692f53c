"""A training run is one more kind of analysis: described, resolved from the declared
schema, dispatched by :func:`dpstudio.analysis.run`, with the engine object's ε, and an
audit whose bound stays below the claim (and catches a non-private learner)."""

from types import SimpleNamespace

import numpy as np
import pytest

from dpstudio.analysis import resolve, run
from dpstudio.analysis.training import describe_training, resolve_training
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import SimulationSource

DECLARED = {"a": SimpleNamespace(bounds=(0.0, 10.0), categories=None, type=None),
            "b": SimpleNamespace(bounds=(-5.0, 5.0), categories=None, type=None),
            "g": SimpleNamespace(bounds=None, categories=("x", "y", "z"), type=None),
            "t": SimpleNamespace(bounds=(-30.0, 40.0), categories=None, type=None)}


def _columns(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0, 10, n), rng.uniform(-5, 5, n)
    g = rng.choice(["x", "y", "w"], n)  # "w" is not declared: no indicator at all
    y = np.where((a - 5) + b + rng.logistic(size=n) > 0, "yes", "no")
    t = 2 * a + 3 * b + rng.normal(0, 1, n)
    return {"a": a, "b": b, "g": g, "y": y, "t": t}


def _run(method, eps=2.0, delta=0.0, model="logistic", features=("a", "b", "g"), label="y",
         seed=1, n=400, **kw):
    spec = describe_training(label, features, model, method, eps, delta=delta, **kw)
    spec, notes = resolve(spec, DECLARED)
    return run(spec, _columns(n), SimulationSource(seed), notes=notes)


@pytest.mark.parametrize("method,delta", [("output", 0.0), ("objective", 1e-6),
                                          ("dpsgd", 1e-5), ("nonprivate", 0.0)])
def test_a_training_run_goes_through_the_one_dispatch(method, delta):
    r = _run(method, delta=delta, params={"epochs": 1} if method == "dpsgd" else None)
    assert r.shape == "model" and r.analysis.kind == "model" and r.trust_model == "central"
    assert r.fields["method"] == method and r.simulated
    if method == "nonprivate":
        assert r.fields["epsilon"] is None
    else:
        # ε and δ reported are the engine object's (the one a ledger would charge).
        assert r.fields["epsilon"] == r.epsilon == r.engine.epsilon <= 2.0
        assert r.fields["delta"] == r.delta == delta
    with pytest.raises(ValueError, match="training run is not exported"):
        r.public()
    # The metrics are the analyst's: kept apart as well.
    assert r.analyst_only["accuracy"] == r.fields["accuracy"]


def test_categories_come_from_the_declaration_not_the_data():
    r = _run("output", eps=50.0)
    names = [c["feature"] for c in r.fields["coefficients"]]
    # "z" is declared but absent from the data; "w" is in the data but undeclared.
    assert names == ["a", "b", "g=x", "g=y", "g=z", "(intercept)"]


def test_resolution_refuses_what_is_not_declared():
    spec = describe_training("y", ("a", "nope"), "logistic", "output", 1.0)
    with pytest.raises(QueryError, match="declare feature 'nope'"):
        resolve_training(spec, DECLARED)
    spec = describe_training("a", ("b",), "linear", "dpsgd", 1.0, delta=1e-5)
    with pytest.raises(QueryError, match="bounds of the label 'a'"):
        resolve_training(spec, {"b": DECLARED["b"]})


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(model="linear", method="objective"), QueryError, "bounded slope"),
    (dict(model="mlp", method="output"), QueryError, "logistic regression only"),
    (dict(method="dpsgd"), QueryError, "δ > 0"),
    (dict(method="output", params={"epochs": 2}), QueryError, "does not take epochs"),
    (dict(method="nonprivate", params={"clip": 1}), QueryError, "only λ"),
    (dict(method="output", params={"lambda": 0}), ParameterError, "lambda must be"),
    (dict(method="sgd"), QueryError, "method must be"),
])
def test_bad_descriptions_are_one_sentence(kwargs, error, message):
    args = dict(model="logistic", method="output") | kwargs
    params = args.pop("params", None)
    with pytest.raises(error, match=message) as info:
        describe_training("y", ("a",), args["model"], args["method"], 1.0, params=params)
    assert "\n" not in str(info.value)


def test_regression_metric_and_coefficients_are_in_the_labels_units():
    r = _run("dpsgd", eps=8.0, delta=1e-5, model="linear", label="t", features=("a", "b"),
             n=2000)
    coef = {c["feature"]: c["coefficient"] for c in r.fields["coefficients"]}
    assert abs(coef["a"] - 2) < 0.3 and abs(coef["b"] - 3) < 0.3
    assert r.fields["baseline"]["rmse"] == pytest.approx(1.0, abs=0.15)  # noise sd 1


@pytest.mark.parametrize("method,delta", [("output", 0.0), ("objective", 0.0),
                                          ("dpsgd", 1e-5)])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_audit_bound_never_exceeds_the_claim(method, delta, eps):
    params = ({"epochs": 1, "batch_rate": 0.1} if method == "dpsgd" else {"lambda": 0.1})
    r = _run(method, eps=eps, delta=delta, features=("a", "b"), n=240, audit=30,
             params=params, test_fraction=0.5)
    audit = r.fields["audit"]
    assert 0.0 <= audit["epsilon_lower"] <= r.epsilon
    assert audit["relation"] == ("add" if method == "dpsgd" else "replace")


def test_the_audit_catches_a_non_private_learner():
    # Power: a deterministic learner separates the neighbours perfectly, so the bound
    # reaches what 30 trainings per dataset can certify at all.
    r = _run("nonprivate", eps=None, features=("a", "b"), n=120, audit=30, test_fraction=0.5)
    audit = r.fields["audit"]
    assert audit["epsilon_lower"] == pytest.approx(audit["max_certifiable"])
    assert audit["epsilon_lower"] > 1.0
