"""The Models tab's variants and its comparison job, without widgets: what δ "auto" means,
which parameters reach each method, and that finished points are not trained twice."""

from __future__ import annotations

import pytest

from dpstudio.analysis.training import METHOD_MECHANISMS
from dpstudio.engine.registry import REGISTRY
from dpstudio.ui import model_jobs
from dpstudio.ui.model_jobs import ModelRequest, compare_job, variant_request
from dpstudio.ui.model_variants import AUTO_DELTA_TIP, VARIANT_KEYS, auto_delta, variant

PARAMS = {"epsilon": 1.0, "delta": 0.0, "lambda": 0.01, "epochs": 2.0, "batch_rate": 0.05,
          "clip": 1.0, "learning_rate": 0.5}


def _default_delta(method: str) -> float:
    params = REGISTRY.get(METHOD_MECHANISMS[method]).params
    return next(p.default for p in params if p.name == "delta")


def test_auto_delta_is_each_entrys_own_default_and_the_tooltip_says_so():
    assert auto_delta("output") == _default_delta("output") == 0.0
    assert auto_delta("objective") == 0.0
    assert auto_delta("dpsgd") == _default_delta("dpsgd") > 0
    assert auto_delta("nonprivate") == 0.0
    assert f"{auto_delta('dpsgd'):g}" in AUTO_DELTA_TIP and "pure ε-DP" in AUTO_DELTA_TIP


def test_each_variant_gets_its_method_its_delta_and_only_its_parameters():
    req = ModelRequest("y", ("x",), params=PARAMS, variants=VARIANT_KEYS, runs=3)
    out = variant_request(req, "output")
    assert (out.method, out.delta, out.federated) == ("output", 0.0, None)
    assert set(out.params) == {"epsilon", "delta", "lambda"}
    sgd = variant_request(req, "dpsgd")
    assert sgd.delta == auto_delta("dpsgd") and sgd.params["epochs"] == 2.0
    fed = variant_request(req, "fed-secagg")
    assert (fed.method, fed.fed_variant) == ("dpsgd", "secagg")
    assert fed.federated is not None and "epochs" not in fed.params
    none = variant_request(req, "fed-none")
    assert none.method == "nonprivate" and none.federated is not None and none.delta == 0
    typed = variant_request(ModelRequest("y", ("x",), params={**PARAMS, "delta": 1e-5}),
                            "output")
    assert typed.delta == 1e-5  # a typed δ is every private method's
    assert {variant(k).federated for k in VARIANT_KEYS} == {True, False}


def test_finished_points_are_trained_once(monkeypatch):
    from dpstudio.data.loading import load_table
    from dpstudio.data.samples import data_argument
    from dpstudio.data.schema import schema_for

    calls = []
    real = model_jobs._train

    def counted(req, eps, *a, **k):
        calls.append((req.method, eps))
        return real(req, eps, *a, **k)

    monkeypatch.setattr(model_jobs, "_train", counted)

    class State:
        def cancelled(self):
            return False

        def progress(self, fraction, message=""):
            pass

    path = data_argument("sample:survey")
    frame, schema = load_table(path), schema_for(path)
    req = ModelRequest("works_part_time", ("age", "gpa"), params=PARAMS,
                       variants=("output", "objective"), runs=2, grid=(0.3, 1.0))
    cache: dict = {}
    first = compare_job(req, frame, schema, cache, 1, state=State())
    assert sorted(calls) == [("objective", 0.3), ("objective", 1.0), ("output", 0.3),
                             ("output", 1.0)]  # the form's ε = 1 is a grid point
    calls.clear()
    again = compare_job(req, frame, schema, cache, 1, state=State())
    assert calls == [] and again.series("output", "auc") == first.series("output", "auc")
    moved = compare_job(ModelRequest(**{**req.__dict__, "epsilon": 2.0}), frame, schema,
                        cache, 1, state=State())
    assert sorted(calls) == [("objective", 2.0), ("output", 2.0)]
    mean, lo, hi = moved.series("output", "auc")
    assert all(a <= m <= b for m, a, b in zip(mean, lo, hi, strict=True))
    assert moved.at_epsilon["output"]["epsilon"] == pytest.approx(2.0)


def test_dpsgd_sigma_is_calibrated_once_per_setting_and_the_cached_value_is_the_bisections():
    """The Models tab trains one (ε, δ, q, T) many times (R runs, each site alone, the
    audit): σ's calibration is memoized, and what the cache returns is what the bisection
    computes afresh, its ε the accountant's at that σ (never above the target)."""
    from dpstudio.engine.accounting import dpsgd as acc
    from dpstudio.engine.accounting.pld import DEFAULT_VALUE_DISCRETIZATION_INTERVAL

    before = acc._sigma.cache_info()  # other tests of this process may have filled it
    # The RDP accountant keeps this fast; the cache is the same for every accountant.
    first = acc.dpsgd_sigma(1.3, 1e-6, 0.05, 21, "rdp")
    assert acc.dpsgd_sigma(1.3, 1e-6, 0.05, 21, "rdp") is first
    after = acc._sigma.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    fresh = acc._sigma.__wrapped__(1.3, 1e-6, 0.05, 21, "rdp", 1e-4,
                                   DEFAULT_VALUE_DISCRETIZATION_INTERVAL)
    assert fresh == first
    assert acc.dpsgd_epsilon(first.sigma, 0.05, 21, 1e-6, "rdp").epsilon == first.epsilon
    assert first.epsilon <= 1.3
    # Another setting is another entry (a larger ε needs less noise).
    other = acc.dpsgd_sigma(2.6, 1e-6, 0.05, 21, "rdp")
    assert other.sigma < first.sigma
    assert acc._sigma.cache_info().misses - before.misses == 2
