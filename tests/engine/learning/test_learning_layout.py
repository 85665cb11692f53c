"""The learning package's import paths: each name lives in one module, older paths still work.

``erm`` was split into ``features``, ``logistic`` and ``output_perturbation``; code that
imports from :mod:`dpstudio.engine.learning` or :mod:`dpstudio.engine.learning.erm` must
get the very same objects as the modules that now define them.
"""

import importlib

import pytest

import dpstudio.engine.learning as learning
from dpstudio.engine.learning import erm

HOMES = {
    "features": {"INTERCEPT", "binary_labels", "design_matrix"},
    "logistic": {"LIPSCHITZ", "LogisticFit", "fit_logistic", "gradient_tolerance",
                 "sensitivity_l2"},
    "output_perturbation": {"OutputPerturbation", "calibrate_output_perturbation", "perturb",
                            "snap"},
    "erm": {"ENTRIES", "LogisticERM", "ModelRelease", "release_logistic",
            "simulate_logistic"},
}


@pytest.mark.parametrize("module", sorted(HOMES))
def test_each_module_exports_what_it_defines(module):
    mod = importlib.import_module(f"dpstudio.engine.learning.{module}")
    assert set(mod.__all__) >= HOMES[module]
    for name in HOMES[module]:
        obj = getattr(mod, name)
        if callable(obj) and hasattr(obj, "__module__"):
            assert obj.__module__ == mod.__name__, name  # defined here, not re-exported


def test_erm_keeps_every_name_it_exported_before_the_split():
    before = set().union(*HOMES.values())
    assert set(erm.__all__) == before
    for module, names in HOMES.items():
        home = importlib.import_module(f"dpstudio.engine.learning.{module}")
        for name in names:
            assert getattr(erm, name) is getattr(home, name), name


def test_package_names_are_the_defining_modules_objects():
    assert "ENTRIES" not in learning.__all__  # registered through erm, not the package
    for name in learning.__all__:
        assert getattr(learning, name) is getattr(erm, name), name
