"""A project release of a trained model fits no baseline and measures no held-out metric
(issue 13): neither is published (the MLP's baseline alone took seconds). The same run
for ``dpstudio train`` (no ``publish_only`` on its input) still measures both."""

from types import SimpleNamespace

import numpy as np
import pytest

from dpstudio.analysis import resolve, run
from dpstudio.analysis.training import describe_training
from dpstudio.engine.learning import models
from dpstudio.engine.rng import SecureSource

DECLARED = {"a": SimpleNamespace(bounds=(0.0, 10.0), categories=None, type=None),
            "b": SimpleNamespace(bounds=(-5.0, 5.0), categories=None, type=None)}


class _Input:
    def __init__(self, publish_only):
        g = np.random.default_rng(0)
        a, b = g.uniform(0, 10, 300), g.uniform(-5, 5, 300)
        y = np.where((a - 5) + b + g.logistic(size=300) > 0, "yes", "no")
        self.columns, self.imputed = {"a": a, "b": b, "y": y}, 0
        if publish_only:
            self.publish_only = True


@pytest.fixture
def fits(monkeypatch):
    calls = []
    real = models.fit_baseline
    monkeypatch.setattr(models, "fit_baseline",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


@pytest.mark.parametrize("federated", [None, {"sites": 3, "rounds": 2, "local_steps": 2}])
def test_a_project_release_fits_no_baseline_and_measures_nothing(fits, federated):
    spec = describe_training("y", ("a", "b"), "logistic", "dpsgd", 2.0, delta=1e-5,
                             # a DP-SGD release divides by a declared expected batch
                             # (never q·n, n private under add/remove)
                             params={"expected_batch": 5.0} if federated
                             else {"epochs": 1, "expected_batch": 5.0},
                             fed_variant="secagg" if federated else "none",
                             federated=federated)
    spec, notes = resolve(spec, DECLARED)
    released = run(spec, _Input(True), SecureSource(), notes=notes)
    assert fits == [] and not released.simulated
    for key in ("accuracy", "auc", "confusion"):
        assert key not in released.fields
    assert released.fields["baseline"] is None and released.fields["rounds"] == []
    assert not any("metrics are measured" in n for n in released.fields["notes"])
    # dpstudio train's input (no publish_only), from the OS CSPRNG too: measured.
    shown = run(spec, _Input(False), SecureSource(), notes=notes)
    assert {"accuracy", "auc", "confusion"} <= set(shown.fields)
    assert set(shown.fields["baseline"]) == {"accuracy", "auc"}
    assert len(shown.fields["rounds"]) == (2 if federated else 0)
    assert len(fits) == 1
