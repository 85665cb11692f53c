"""Local-model releases through the project: ``trust_model = "local"`` in a spec runs the
protocol with the OS CSPRNG, charges ε to the ledger and writes the estimates, the
randomized records (never raw values), the manifest, the report and the script."""

import csv
import json
import shutil
import tomllib

import pytest
from dps_project_helpers import folder_state, run, write_spec

from dpstudio.data import sample_path
from dpstudio.export import verify_manifest
from dpstudio.project import Project, ReleaseSpec, SpecError, load_spec, parse_spec
from dpstudio.project.spec import spec_text


@pytest.fixture
def env(tmp_path, capsys):
    src = sample_path("survey")
    data = tmp_path / src.name
    shutil.copy(src, data)
    shutil.copy(src.with_name(src.name + ".schema.json"), tmp_path / (src.name + ".schema.json"))
    project = tmp_path / "p.dpstudio"
    code, _, err = run(capsys, "project", "init", project, "--epsilon", "1.5", "--delta", "1e-5",
                       "--relation", "replace")
    assert code == 0, err
    return tmp_path, data, project, tmp_path / "out"


def _krr_spec(tmp, data, **fields):
    base = {"column": "faculty", "query": "histogram", "mechanism": "krr", "epsilon": 1.0,
            "trust_model": "local", "formats": ["csv", "json"]}
    return write_spec(tmp / "krr.toml", data.name, **(base | fields))


def test_local_krr_histogram_release(qapp, env, capsys):
    tmp, data, project, out = env
    spec = _krr_spec(tmp, data, report=True, script=True)
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 0, err
    assert "release #1 done: histogram of 'faculty' (krr, ε = 1, δ = 0)" in text
    stem = "r0001-histogram-faculty"
    names = set(folder_state(out))
    assert names == {f"{stem}{x}" for x in (".csv", ".json", ".records.csv", ".records.json",
                                             ".report.html", ".report.pdf", ".py",
                                             ".manifest.json")}
    # Estimates: one row per declared category and one for the others (every row
    # reports), with standard errors and intervals.
    with open(out / f"{stem}.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    categories = ["Arts", "Business", "Engineering", "Law", "Medicine", "Science"]
    assert [r["cell"] for r in rows] == categories + ["(other or missing)"]
    for r in rows:
        assert float(r["ci_low"]) <= float(r["ci_high"]) and float(r["std_error"]) > 0
    # Records: what the collector received — K-RR codes, never a category name.
    raw = (out / f"{stem}.records.csv").read_text(encoding="utf-8")
    lines = raw.splitlines()
    assert lines[0] == "report" and len(lines) == 1 + 2000
    assert {int(x) for x in lines[1:]} <= set(range(len(categories) + 1))
    for name in categories:
        assert name not in raw
    doc = json.loads((out / f"{stem}.records.json").read_text(encoding="utf-8"))
    assert doc["kind"] == "records" and doc["columns"] == [{"name": "report",
                                                            "type": "integer"}]
    assert not any(c in json.dumps(doc["rows"]) for c in categories)
    # The manifest verifies and says what the release is.
    check = verify_manifest(out / f"{stem}.manifest.json")
    assert check.ok, check.problems
    m = check.manifest
    assert m["trust_model"] == "local" and m["mechanism"]["name"] == "krr"
    assert m["privacy"]["epsilon"] == 1.0 and m["privacy"]["delta"] == 0.0
    assert m["local"]["codes"]["categories"] == categories and m["local"]["reports"] == 2000
    assert m["local"]["codes"]["other_code"] == len(categories)
    assert "clamped" not in json.dumps(m)
    assert {f["role"] for f in m["files"]} >= {"records/csv", "records/json", "export/csv"}
    html = (out / f"{stem}.report.html").read_text(encoding="utf-8")
    assert "randomized on their side" in html and "local differential privacy" in html
    assert "run_local" in (out / f"{stem}.py").read_text(encoding="utf-8")
    # The ledger shows the charge.
    code, text, _ = run(capsys, "ledger", project, "--json")
    (ds,) = json.loads(text)["datasets"]
    (rel,) = ds["releases"]
    assert (rel["trust_model"], rel["mechanism"], rel["epsilon"], rel["status"]) == (
        "local", "krr", 1.0, "done")
    assert ds["spent_epsilon"] == 1.0 and ds["remaining_epsilon"] == 0.5
    assert "clamped" not in json.dumps(rel["result"])


def test_local_release_over_budget_exits_3_and_writes_nothing(env, capsys):
    tmp, data, project, out = env
    spec = _krr_spec(tmp, data, epsilon=2.0)
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 3 and "budget exceeded" in err and text == ""
    assert not out.exists()
    with Project.open(project) as p:
        assert p.ledger() == []


def test_local_mean_charges_delta_for_local_gaussian(env):
    tmp, data, project, out = env
    spec = load_spec(write_spec(tmp / "g.toml", data.name, column="age", query="mean",
                                mechanism="local_gaussian", epsilon=0.5, delta=1e-6,
                                trust_model="local", formats=["csv"]))
    with Project.open(project) as p:
        record = p.release(spec, out)
        assert (record.trust_model, float(record.epsilon), float(record.delta)) == (
            "local", 0.5, 1e-6)
        assert float(p.budget(record.dataset_id).spent_delta) == 1e-6
    names = {f.name for f in record.files}
    assert "r0001-mean-age.records.csv" in names
    assert verify_manifest(out / "r0001-mean-age.manifest.json").ok


def test_a_local_randomizer_is_not_a_secure_aggregation_protocol(env, capsys):
    tmp, data, project, out = env
    spec = _krr_spec(tmp, data, trust_model="distributed")
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 2 and "distributed" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_local_spec_key_is_optional_and_round_trips(tmp_path):
    base = {"schema_version": 1, "dataset": "d.csv", "column": "c", "query": "histogram",
            "mechanism": "krr", "epsilon": 1.0}
    central = parse_spec(base | {"mechanism": "laplace"})
    assert central.trust_model == "central" and central.query.relation == "add-remove"
    assert "trust_model" not in spec_text(central)
    local = parse_spec(base | {"trust_model": "local"})
    assert local.trust_model == "local" and local.query.relation == "replace"
    assert isinstance(local, ReleaseSpec)
    again = parse_spec(tomllib.loads(spec_text(local)))
    assert again == local
    with pytest.raises(SpecError, match="unknown trust_model"):
        parse_spec(base | {"trust_model": "cloud"})


def test_local_release_needs_the_replace_relation(tmp_path):
    src = sample_path("survey")
    data = tmp_path / src.name
    shutil.copy(src, data)
    shutil.copy(src.with_name(src.name + ".schema.json"), tmp_path / (src.name + ".schema.json"))
    spec = load_spec(write_spec(tmp_path / "s.toml", data.name, column="faculty",
                                query="histogram", mechanism="krr", epsilon=1.0,
                                trust_model="local", relation="add-remove"))
    with Project.create(tmp_path / "p.dpstudio", epsilon=3, delta=1e-5) as p:
        with pytest.raises(ValueError, match="replace"):
            p.release(spec, tmp_path / "out")
        assert p.ledger() == []
    assert not (tmp_path / "out").exists()
