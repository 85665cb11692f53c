"""The registry as a container, its entries' metadata, and the one declaration of ε and δ.

The checks every entry passes (calibration, distribution, audit, bad input) are generated
from the registry in ``tests/engine/contract``; the import structure (no cycle through
the registry) is checked there too.
"""

import dataclasses

import pytest

from dpstudio.engine import trust_models
from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.checks import number, positive
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.mechanisms import builtin_entries, register_builtins
from dpstudio.engine.registry import (
    DELTA,
    EPSILON,
    REGISTRY,
    TRUST_MODELS,
    MechanismInfo,
    Param,
    Registry,
)


def test_registry_has_the_central_mechanisms_and_complete_metadata():
    names = set(REGISTRY.names())
    assert {"laplace", "gaussian", "discrete_laplace", "discrete_gaussian",
            "exponential", "permute_and_flip"} <= names
    for m in REGISTRY:
        d = m.to_dict()
        assert d["description"].endswith(".") and len(d["description"]) < 120
        assert d["trust_models"] and d["value_types"] and d["params"]
        for p in d["params"]:
            assert p["help"] and p["type"] in ("float", "int", "choice", "bool")
        # Defaults are valid values of their own parameter.
        assert m.resolve({}) == {p.name: p.default for p in m.params}


def test_the_registry_holds_the_builtin_list_in_its_order():
    assert REGISTRY.names() == [info.name for info in builtin_entries()]
    assert len(REGISTRY) == len(REGISTRY.names()) >= 21


def test_trust_models_come_from_the_one_table():
    assert TRUST_MODELS is trust_models.TRUST_MODELS
    assert {tm for m in REGISTRY for tm in m.trust_models} <= set(TRUST_MODELS)
    with pytest.raises(ValueError, match="unknown trust models"):
        dataclasses.replace(REGISTRY.get("laplace"), trust_models=("cloud",))


# The entries whose ε or δ differs from the one declaration, and in what (each says why
# in a comment where it is declared).
DEPARTURES = {
    ("blanket", "epsilon"): {"high"},  # the blanket bound holds for ε ≤ 1 only
    ("dp_erm_logistic", "delta"): {"default", "low_open", "log_scale", "help"},  # δ = 0: Laplace
    # δ = 0: Chaudhuri–Monteleoni–Sarwate's pure form
    ("dp_objective_logistic", "delta"): {"default", "low_open", "log_scale", "help"},
}


@pytest.mark.parametrize("name,declared", [("epsilon", EPSILON), ("delta", DELTA)])
def test_epsilon_and_delta_are_declared_once(name, declared):
    fields = [f.name for f in dataclasses.fields(Param)]
    users = 0
    for info in REGISTRY:
        if not any(p.name == name for p in info.params):
            continue
        users += 1
        p = info.param(name)
        differ = {f for f in fields if getattr(p, f) != getattr(declared, f)}
        assert differ == DEPARTURES.get((info.name, name), set()), info.name
    assert users >= (len(REGISTRY.names()) if name == "epsilon" else 6)
    assert declared.label in ("ε", "δ") and declared.help.endswith(".")


def test_param_validation_messages():
    p = Param("k", "int", 2, "help", low=2, high=10)
    assert p.validate("3") == 3 and isinstance(p.validate(4.0), int)
    for bad in (1, 11, 2.5, "x", float("nan")):
        with pytest.raises(ParameterError):
            p.validate(bad)
    c = Param("c", "choice", "a", "help", choices=("a", "b"))
    with pytest.raises(ParameterError, match="one of a, b"):
        c.validate("z")
    with pytest.raises(ParameterError, match="unknown mechanism"):
        REGISTRY.get("nope")


@pytest.mark.parametrize("value", [0, -1, 100.5, float("nan"), float("inf"), "x", None])
def test_one_range_validator(value):
    # Param.validate, validate_epsilon and validate_delta all end in checks.number: the
    # same value gets the same message from each.
    def message(call, *args, **kwargs):
        with pytest.raises(ParameterError) as err:
            call(*args, **kwargs)
        return str(err.value)

    assert message(EPSILON.validate, value) == message(
        number, "epsilon", value, low=0.0, low_open=True, high=100.0)
    if value != 100.5:  # above the form's cap, a valid ε for the engine
        assert message(validate_epsilon, value) == message(positive, "ε", value)
    if value != 0:  # δ = 0 is valid
        assert message(validate_delta, value) == message(
            number, "δ", value, low=0.0, high=1.0, high_open=True)


def test_a_temporary_registry_is_a_plain_container():
    registry = Registry()
    assert registry.names() == [] and "laplace" not in registry
    laplace = REGISTRY.get("laplace")
    assert registry.register(laplace) is laplace
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(laplace)
    with pytest.raises(ParameterError, match=r"unknown mechanism 'gaussian' \(known: laplace\)"):
        registry.get("gaussian")
    assert registry.select(trust_model="central", query="mean") == [laplace]
    assert registry.select(trust_model="local") == []


def test_the_builtins_load_before_a_registration_and_a_failed_load_is_retried():
    calls = []

    def flaky(registry):
        calls.append(1)
        if len(calls) == 1:
            registry.register(REGISTRY.get("laplace"))
            raise RuntimeError("import failed")
        register_builtins(registry)

    registry = Registry(loader=flaky)
    with pytest.raises(RuntimeError):
        registry.names()
    dummy = dataclasses.replace(REGISTRY.get("laplace"), name="dummy")
    registry.register(dummy)  # loads the built-ins first: nothing half-registered
    assert registry.names() == REGISTRY.names() + ["dummy"] and len(calls) == 2
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(REGISTRY.get("gaussian"))


def test_an_entry_checks_its_kind():
    with pytest.raises(ValueError, match="unknown mechanism kind"):
        MechanismInfo(name="x", label="x", description="x.", trust_models=("central",),
                      value_types=("numeric",), kind="oracle", params=(EPSILON,),
                      factory=lambda **kw: None)
