"""DP logistic-regression releases through the project: ``query = "logistic_regression"``
runs ``release_logistic`` with the OS CSPRNG inside the charge transaction, charges ε and δ
to the ledger and writes the coefficients, the manifest, the report and the script —
never the analyst-only utility (accuracy, objective)."""

import csv
import json
import shutil
import tomllib

import pytest
from dps_project_helpers import folder_state, run, write_spec

from dpstudio.data import sample_path
from dpstudio.export import verify_manifest
from dpstudio.project import Project, SpecError, parse_spec
from dpstudio.project.spec import spec_text

FEATURES = ["hours_studied_per_week", "gpa"]
STEM = "r0001-logistic_regression-cheated_on_exam"


def _copy_survey(tmp):
    src = sample_path("survey")
    data = tmp / src.name
    shutil.copy(src, data)
    shutil.copy(src.with_name(src.name + ".schema.json"), tmp / (src.name + ".schema.json"))
    return data


@pytest.fixture
def env(tmp_path, capsys):
    data = _copy_survey(tmp_path)
    project = tmp_path / "p.dpstudio"
    code, _, err = run(capsys, "project", "init", project, "--epsilon", "1.5", "--delta", "1e-5",
                       "--relation", "replace")
    assert code == 0, err
    return tmp_path, data, project, tmp_path / "out"


def _spec(tmp, data, **fields):
    base = {"column": "cheated_on_exam", "query": "logistic_regression",
            "mechanism": "dp_erm_logistic", "epsilon": 1.0, "features": FEATURES,
            "formats": ["csv", "json"], "params": {"lambda": 0.05}}
    return write_spec(tmp / "model.toml", data.name, **(base | fields))


UTILITY_KEYS = ("utility", "accuracy_private", "accuracy_nonprivate", "excess_empirical_risk",
                "objective_private", "objective_nonprivate", "gradient_norm",
                "newton_iterations", "imputed", "analyst_only")


def _no_utility(text: str, strict: bool = True) -> None:
    """No analyst-only field (``strict``: not even the words accuracy or objective)."""
    words = UTILITY_KEYS + (("accuracy", "objective") if strict else ())
    for word in words:
        assert word not in text.lower(), word


def test_model_release_writes_coefficients_manifest_report_script(qapp, env, capsys):
    tmp, data, project, out = env
    spec = _spec(tmp, data, delta=1e-6, report=True, script=True)
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 0, err
    assert "release #1 done: logistic_regression of 'cheated_on_exam'" in text
    assert set(folder_state(out)) == {f"{STEM}{x}" for x in (
        ".csv", ".json", ".report.html", ".report.pdf", ".py", ".manifest.json")}
    # Coefficients round-trip: the features in order, then the intercept.
    with open(out / f"{STEM}.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["feature"] for r in rows] == FEATURES + ["(intercept)"]
    assert all(isinstance(float(r["coefficient"]), float) for r in rows)
    doc = json.loads((out / f"{STEM}.json").read_text(encoding="utf-8"))
    assert doc["kind"] == "coefficients"
    assert [r["feature"] for r in doc["rows"]] == FEATURES + ["(intercept)"]
    assert [float(r["coefficient"]) for r in rows] == [r["coefficient"] for r in doc["rows"]]
    # The manifest verifies and describes the mechanism, never the utility.
    manifest_path = out / f"{STEM}.manifest.json"
    assert verify_manifest(manifest_path).ok
    code, _, err = run(capsys, "verify", manifest_path)
    assert code == 0, err
    manifest_text = manifest_path.read_text(encoding="utf-8")
    manifest = json.loads(manifest_text)
    model = manifest["model"]
    assert model["mechanism"] == "dp_erm_logistic" and model["lambda"] == 0.05
    assert (model["epsilon"], model["delta"]) == (1.0, 1e-6)
    assert "gaussian" in model["noise_family"]  # δ > 0: discrete Gaussian
    assert model["noise_scale"] > 0 and model["grid"] > 0
    assert model["sensitivity_l1"] >= model["sensitivity_l2"] > 0
    assert model["feature_bounds"] == {"hours_studied_per_week": [0.0, 80.0], "gpa": [0.0, 4.0]}
    assert model["n"] == 2000 and manifest["query"]["relation"] == "replace"
    assert manifest["query"]["features"] == FEATURES
    for name in (f"{STEM}.csv", f"{STEM}.json", f"{STEM}.manifest.json"):
        _no_utility((out / name).read_text(encoding="utf-8"))
    _no_utility((out / f"{STEM}.report.html").read_text(encoding="utf-8"), strict=False)
    html = (out / f"{STEM}.report.html").read_text(encoding="utf-8")
    assert "differentially private" in html and "(intercept)" in html
    assert (out / f"{STEM}.report.pdf").read_bytes().startswith(b"%PDF")
    script = (out / f"{STEM}.py").read_text(encoding="utf-8")
    assert "release_logistic(" in script and "LAMBDA = 0.05" in script
    compile(script, f"{STEM}.py", "exec")
    # The ledger shows the charge, ε and δ.
    with Project.open(project) as p:
        (record,) = p.ledger()
        assert (record.status, record.query, record.mechanism) == (
            "done", "logistic_regression", "dp_erm_logistic")
        assert (float(record.epsilon), float(record.delta)) == (1.0, 1e-6)
        budget = p.budget(record.dataset_id)
        assert (float(budget.spent_epsilon), float(budget.spent_delta)) == (1.0, 1e-6)
        assert record.spec["features"] == FEATURES
        assert list(record.result["value"]) == FEATURES + ["(intercept)"]
        _no_utility(json.dumps(record.result) + json.dumps(record.noise))


def test_model_release_over_budget_exits_3_and_writes_nothing(env, capsys):
    tmp, data, project, out = env
    spec = _spec(tmp, data, epsilon=2.0)
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 3 and "budget exceeded" in err and text == ""
    assert not out.exists()
    with Project.open(project) as p:
        assert p.ledger() == []


def _refused(capsys, spec, project, out, needle):
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 2 and text == "", err
    assert needle in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()
    with Project.open(project) as p:
        assert p.ledger() == []


def test_model_spec_without_features_is_refused(env, capsys):
    tmp, data, project, out = env
    _refused(capsys, _spec(tmp, data, features=None), project, out, "needs features")


def test_model_feature_not_in_dataset_is_refused(env, capsys):
    tmp, data, project, out = env
    _refused(capsys, _spec(tmp, data, features=["gpa", "shoe_size"]), project, out,
             "shoe_size")


def test_model_feature_without_declared_bounds_is_refused(env, capsys):
    tmp, data, project, out = env
    sidecar = data.with_name(data.name + ".schema.json")
    schema = json.loads(sidecar.read_text(encoding="utf-8"))
    for column in schema["columns"]:
        if column["name"] == "gpa":
            column.pop("lower"), column.pop("upper")
    sidecar.write_text(json.dumps(schema), encoding="utf-8")
    _refused(capsys, _spec(tmp, data), project, out, "declare the bounds of feature 'gpa'")


def test_model_on_add_remove_dataset_is_refused(tmp_path, capsys):
    data = _copy_survey(tmp_path)
    project, out = tmp_path / "p.dpstudio", tmp_path / "out"
    code, _, err = run(capsys, "project", "init", project, "--epsilon", "3", "--delta", "1e-5")
    assert code == 0, err
    _refused(capsys, _spec(tmp_path, data), project, out, "replace")
    # Asking for add-remove explicitly is refused too, in one line.
    _refused(capsys, _spec(tmp_path, data, relation="add-remove"), project, out, "replace")


def test_model_spec_keys_validate_and_round_trip():
    base = {"schema_version": 1, "dataset": "d.csv", "column": "y",
            "query": "logistic_regression", "mechanism": "dp_erm_logistic", "epsilon": 1.0,
            "features": ["a", "b"], "params": {"lambda": 0.01}}
    spec = parse_spec(base)
    assert spec.features == ("a", "b") and spec.query.relation == "replace"
    assert parse_spec(tomllib.loads(spec_text(spec))) == spec
    plain = parse_spec({k: v for k, v in base.items() if k != "features"}
                       | {"query": "sum", "mechanism": "laplace", "bounds": [0, 1]})
    assert plain.features is None and "features" not in spec_text(plain)
    for bad, needle in ((base | {"features": []}, "non-empty list"),
                        (base | {"features": ["a", "a"]}, "twice"),
                        (base | {"features": ["y"]}, "cannot also be a feature"),
                        (base | {"bounds": [0, 1]}, "takes no bounds"),
                        (base | {"trust_model": "local"}, "central-model only"),
                        (base | {"query": "mean"}, "features go with")):
        with pytest.raises(SpecError, match=needle) as info:
            parse_spec(bad)
        assert "\n" not in str(info.value)
