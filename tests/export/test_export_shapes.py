"""The export layer reads a release by its shape (the analysis layer's ``shape_of``) and
its capability row, never by the trust model's name: the script, the table and the
manifest's sections follow from them, and what the project cannot release is refused."""

import pytest

from dpstudio.engine.queries import QuerySpec
from dpstudio.export.bundle import BundleInput, render_bundle
from dpstudio.export.script import release_script

CENTRAL = QuerySpec("mean", "laplace", 0.5, bounds=(0.0, 10.0), column="x")
LOCAL = QuerySpec("histogram", "krr", 0.5, categories=("a", "b"), relation="replace",
                  column="g")
MODEL = QuerySpec("logistic_regression", "dp_erm_logistic", 0.5, delta=1e-6,
                  relation="replace", column="y")
FIT = {"label": "y", "features": ["x"], "bounds": {"x": (0.0, 1.0)}, "lambda": 0.1}


def _script(spec, trust_model, model=None):
    return release_script(release_id=1, created_at="t", version="v", dataset_name="d.csv",
                          dataset_path="d.csv", fingerprint="f" * 64, spec=spec,
                          reader="numeric_column", script_name="r.py",
                          trust_model=trust_model, model=model)


@pytest.mark.parametrize(("spec", "trust_model", "model", "call"), [
    (CENTRAL, "central", None, "result = release(values, SPEC, SecureSource())"),
    (LOCAL, "local", None, "result = run_local(values, MECHANISM, PARAMS"),
    (MODEL, "central", FIT, "result = release_logistic(columns, LABEL, FEATURES"),
], ids=["statistic", "estimate", "model"])
def test_the_script_follows_the_shape(spec, trust_model, model, call):
    text = _script(spec, trust_model, model)
    assert call in text
    compile(text, "r.py", "exec")  # a runnable module, whatever the template


@pytest.mark.parametrize("trust_model", ["federated"])
def test_no_script_where_the_project_releases_nothing(trust_model):
    spec = QuerySpec("sum", "blanket", 0.5, bounds=(0.0, 1.0), relation="replace",
                     column="x")
    with pytest.raises(ValueError, match=f"no script for {trust_model}-model releases"):
        _script(spec, trust_model)


def test_a_model_script_is_central_only():
    with pytest.raises(ValueError, match="central-model only"):
        _script(MODEL, "local", FIT)


def _bundle(spec, trust_model, public, **kw):
    return BundleInput(release_id=1, uid="u" * 32, created_at="t", stem="r1",
                       dataset_name="d.csv", dataset_path="d.csv", fingerprint="f" * 64,
                       schema={}, spec=spec, public=public, epsilon=0.5, delta=0.0,
                       accountant="basic", budget_epsilon=1, budget_delta=0,
                       formats=("json",), trust_model=trust_model, **kw)


def test_bundle_shape_and_capability():
    assert _bundle(CENTRAL, "central", {}).shape == "statistic"
    local = _bundle(LOCAL, "local", {})
    assert local.shape == "estimate" and "records" in local.capability.options
    model = _bundle(MODEL, "central", {"model": "logistic_regression"})
    assert model.shape == "model" and model.capability.kind == "model"


def test_a_local_release_needs_the_collectors_records_and_heavy_hitters_no_table():
    pub = {"query": "histogram", "column": "g", "mechanism": "krr", "relation": "replace",
           "confidence": 0.95, "value": {"a": 1.0, "b": 2.0}, "stderr": {"a": 1.0, "b": 1.0},
           "ci_low": {"a": 0.0, "b": 0.0}, "ci_high": {"a": 2.0, "b": 4.0}}
    with pytest.raises(ValueError, match="collector's records"):
        render_bundle(_bundle(LOCAL, "local", pub))
    hh = QuerySpec("heavy_hitters", "sfp", 0.5, relation="replace", column="w")
    with pytest.raises(ValueError, match="heavy_hitters result is not exported"):
        render_bundle(_bundle(hh, "local", pub, records={}))
