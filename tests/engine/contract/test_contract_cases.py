"""The contract suite picks up every registry entry by itself, and cannot be skipped.

A dummy entry registered in a registry gets the four checks (its ids carry its name); a
miscalibrated dummy fails them; an entry of a kind without an adapter fails with "no
contract adapter for kind …"; and the suite's own module parametrizes over whatever
``REGISTRY`` holds when it is collected.
"""

import dataclasses
import importlib.util
from pathlib import Path

import pytest
from adapters import CHECKS, contract_cases, run_check

import dpstudio.engine.registry as registry_module
from dpstudio.engine.additive import NoiseFamily
from dpstudio.engine.entry import EPSILON, MechanismInfo
from dpstudio.engine.mechanisms import register_builtins
from dpstudio.engine.registry import REGISTRY, Registry


class _HalfNoise(NoiseFamily):
    """A Laplace family that claims ε but adds half the noise ε needs."""

    def calibrate(self, *args, **kwargs):
        noise = super().calibrate(*args, **kwargs)
        return dataclasses.replace(noise, scale=noise.scale / 2)


def _dummy(name, family=NoiseFamily, **changes):
    return dataclasses.replace(
        REGISTRY.get("laplace"), name=name, label="Dummy",
        factory=lambda **kw: family(name, "laplace", integer_grid=False), **changes)


def test_a_dummy_entry_gets_every_check_and_passes_them():
    registry = Registry()
    registry.register(_dummy("dummy_laplace"))
    cases = contract_cases(registry)
    assert [case.id for case in cases] == ["dummy_laplace"]
    for check in CHECKS:
        run_check(check, cases[0].values[0])


@pytest.mark.parametrize("check", ["calibration", "audit"])
def test_a_miscalibrated_dummy_fails_the_checks(check):
    broken = _dummy("dummy_half", family=_HalfNoise)
    with pytest.raises(AssertionError):
        run_check(check, broken)


def test_an_entry_without_an_adapter_fails_and_says_why():
    orphan = MechanismInfo(
        name="dummy_federated", label="Dummy", description="A kind with no adapter.",
        trust_models=("federated",), value_types=("numeric",), kind="model",
        params=(EPSILON,), factory=lambda **kw: None)
    for check in CHECKS:
        with pytest.raises(pytest.fail.Exception,
                           match="no contract adapter for kind 'model' in trust model "
                                 "'federated'"):
            run_check(check, orphan)


def test_the_suite_module_parametrizes_over_what_the_registry_holds(monkeypatch):
    # A registry with the built-ins and one dummy stands in for REGISTRY while the suite's
    # module is loaded afresh: its cases are every entry, the dummy included.
    registry = Registry(loader=register_builtins)
    registry.register(_dummy("dummy_laplace"))
    monkeypatch.setattr(registry_module, "REGISTRY", registry)
    path = Path(__file__).with_name("test_contract.py")
    spec = importlib.util.spec_from_file_location("contract_suite_copy", path)
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    ids = [case.id for case in suite.CASES]
    assert ids == REGISTRY.names() + ["dummy_laplace"]
    for name in ("test_calibration", "test_distribution", "test_audit", "test_bad_input"):
        marks = getattr(suite, name).pytestmark
        assert [c.id for c in marks[0].args[1]] == ids
