"""The missing-value treatment in what a release writes (issue 10, item 1): the manifest's
``query.missing``, the report's method table and notes, the reproducible script, and the
release spec's ``missing``/``impute`` keys. The analyst-only counts never reach a file."""

import json

import numpy as np
import pytest

from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.rng import SecureSource
from dpstudio.export import ExportError, public_result, render_bundle
from dpstudio.export.bundle import BundleInput
from dpstudio.export.manifest import check_public, missing_treatment
from dpstudio.project.spec import parse_spec, spec_text

VALUES = np.array([20.0, 25.0, np.nan, 30.0, np.inf, 41.0])


def _files(spec, **kw):
    result = release(VALUES, spec, SecureSource())
    assert result.missing_count == 2  # analyst-only: must not be written anywhere
    inp = BundleInput(release_id=1, uid="u" * 32, created_at="2024-01-01T00:00:00Z",
                      stem="r1", dataset_name="d.csv", dataset_path="d.csv",
                      fingerprint="f" * 64, schema={"schema_version": 1, "columns": []},
                      spec=spec, public=public_result(result), epsilon=spec.epsilon,
                      delta=0.0, accountant="basic", budget_epsilon=3, budget_delta=0,
                      formats=("json",), **kw)
    return {f.name: f.data for f in render_bundle(inp)}


def test_manifest_states_an_imputed_mean_and_a_dropping_sum():
    spec = QuerySpec("mean", "laplace", 1.0, bounds=(17.0, 42.0), relation="replace",
                     column="age", missing="impute", impute=30.0)
    m = json.loads(_files(spec, script=True)["r1.manifest.json"])
    assert m["query"]["missing"]["treatment"] == "impute"
    assert m["query"]["missing"]["value"] == 30.0 and m["query"]["missing"]["rows_public"]
    script = _files(spec, script=True)["r1.py"].decode()
    assert "missing='impute'," in script and "impute=30.0," in script
    drop = QuerySpec("sum", "laplace", 1.0, bounds=(17.0, 42.0), relation="replace",
                     column="age")
    files = _files(drop)
    m = json.loads(files["r1.manifest.json"])
    assert m["query"]["missing"]["treatment"] == "drop"
    assert "max(upper − lower, |lower|, |upper|)" in m["query"]["missing"]["sensitivity_rule"]
    exported = json.loads(files["r1.json"])
    text = json.dumps(exported)
    assert "missing_count" not in text and "non_finite" not in text


def test_a_histogram_manifest_has_no_missing_section():
    spec = QuerySpec("histogram", "laplace", 1.0, bounds=(0.0, 50.0), bins=5, column="age")
    assert missing_treatment(spec) is None
    assert "missing" not in json.loads(_files(spec)["r1.manifest.json"])["query"]


def test_analyst_only_counts_are_refused_in_a_manifest():
    for key in ("missing_count", "non_finite_count", "non_finite"):
        with pytest.raises(ExportError):
            check_public({"query": {key: 2}})
    check_public({"query": {"missing": {"treatment": "drop"}}})  # the treatment is public


def test_report_states_the_treatment(qapp):
    from dpstudio.export.report import ReportInput, render_report

    spec = QuerySpec("mean", "laplace", 1.0, bounds=(17.0, 42.0), relation="replace",
                     column="age", missing="impute")
    pub = public_result(release(VALUES, spec, SecureSource()))
    html_doc, _ = render_report(ReportInput(
        release_id=1, uid="a" * 32, created_at="2024-01-01T00:00:00Z", dataset_name="d.csv",
        fingerprint="b" * 64, spec=spec, public=pub, epsilon=1.0, delta=0.0,
        accountant="basic", budget_epsilon=3.0, budget_delta=0.0,
        history=[{"id": 1, "time": "t", "query": "mean", "column": "age",
                  "mechanism": "laplace", "epsilon": 1.0, "delta": 0.0,
                  "status": "this release"}], engine_version="0"))
    text = html_doc.decode()
    assert "<th>missing values</th><td>imputed as 29.5" in text
    assert "n public" in text  # the release's own note, in the notes


def test_release_spec_keys():
    base = {"schema_version": 1, "dataset": "d.csv", "column": "age", "query": "mean",
            "mechanism": "laplace", "epsilon": 1.0, "bounds": [17, 42], "relation": "replace"}
    assert parse_spec(dict(base)).query.missing == "drop"
    implied = parse_spec(dict(base, impute=30.0)).query
    assert implied.missing == "impute" and implied.impute == 30.0
    spec = parse_spec(dict(base, missing="impute"))
    assert spec.query.missing == "impute" and spec.query.impute is None
    assert 'missing = "impute"' in spec_text(spec)
    import tomllib

    again = parse_spec(tomllib.loads(spec_text(parse_spec(dict(base, impute=30.0)))))
    assert again.query == implied
