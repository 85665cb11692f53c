"""`dpstudio query` across trust models: local, shuffle and distributed contracts."""

import csv
import json

import numpy as np
import pytest

from dpstudio.cli import main
from dpstudio.data.samples import sample_path

SURVEY = str(sample_path("survey"))


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("mechanism", ["rr", "krr", "sue", "oue", "olh", "hadamard", "cms"])
def test_local_histogram_json_contract(capsys, mechanism):
    column, cats = ("cheated_on_exam", None) if mechanism == "rr" else ("faculty", None)
    code, out, err = run(capsys, "query", SURVEY, "--column", column, "--query", "histogram",
                         "--mechanism", mechanism, "--epsilon", "2", "--simulate", "1", "--json",
                         "--analyst")
    assert code == 0, err
    data = json.loads(out)
    assert data["trust_model"] == "local" and data["epsilon"] == 2.0
    assert set(data["estimate"]) == set(data["stderr"]) and len(data["estimate"]) >= 2
    assert all(s > 0 for s in data["stderr"].values())
    # Unbiased estimates of 2,000 records: the total is near n (5 standard errors).
    total_se = np.sqrt(sum(s * s for s in data["stderr"].values()))
    assert abs(sum(data["unbiased"].values()) - data["n"]) < 5 * total_se
    assert "clamped" not in data and "clamped" in data["analyst_only"]


def test_local_mean_and_trust_model_inference(capsys):
    code, out, _ = run(capsys, "query", SURVEY, "--column", "age", "--query", "mean",
                       "--mechanism", "local_laplace", "--epsilon", "1", "--simulate", "2",
                       "--json")
    data = json.loads(out)
    assert code == 0 and data["trust_model"] == "local"
    assert data["ci_low"] <= data["value"] <= data["ci_high"]


def test_export_records_writes_what_the_collector_receives(capsys, tmp_path):
    target = tmp_path / "records.csv"
    code, out, err = run(capsys, "query", SURVEY, "--column", "faculty", "--query",
                         "histogram", "--mechanism", "krr", "--epsilon", "1",
                         "--export-records", target, "--json")
    assert code == 0, err
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 1 + json.loads(out)["n"]  # a header and one report per user
    reported = {int(r[0]) for r in rows[1:]}
    # Codes, never raw labels: six declared categories and the "other or missing" code 6.
    assert reported <= set(range(7)) and len(reported) == 7
    assert not any("Engineering" in ",".join(r) for r in rows)
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left behind


@pytest.mark.parametrize("mechanism,trust", [("cloak", "shuffle"), ("blanket", "shuffle"),
                                              ("secagg_gaussian", "distributed"),
                                              ("skellam", "distributed")])
def test_shuffle_and_distributed_sums(capsys, mechanism, trust):
    code, out, err = run(capsys, "query", SURVEY, "--column", "hours_studied_per_week",
                         "--query", "sum", "--mechanism", mechanism, "--trust-model", trust,
                         "--epsilon", "1", "--delta", "1e-6", "--simulate", "3", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["trust_model"] == trust
    for key in ("value", "error_bound", "messages_per_user", "bits_per_message", "epsilon"):
        assert key in data
    assert data["messages_per_user"] >= 1 and data["bits_per_message"] >= 1


@pytest.mark.parametrize("extra,needle", [
    (["--mechanism", "krr", "--trust-model", "central"], "trust model"),
    (["--mechanism", "laplace", "--export-records", "x.csv"], "export-records"),
    (["--mechanism", "krr", "--query", "sum"], "histogram or mean"),
    (["--mechanism", "krr", "--epsilon", "0"], "epsilon"),
    (["--mechanism", "cloak", "--query", "sum", "--column", "age", "--delta", "0"], "delta"),
    (["--mechanism", "krr", "--hashes", "4"], "no parameter"),
])
def test_trust_model_errors_are_one_line(capsys, extra, needle):
    base = ["query", SURVEY, "--column", "faculty", "--query", "histogram", "--epsilon", "1"]
    code, out, err = run(capsys, *base, *extra)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert needle in err


def test_registry_parameters_become_flags(capsys):
    code, out, _ = run(capsys, "query", "--help")
    assert code == 0
    for flag in ("--hashes", "--buckets", "--calibration", "--candidates", "--g"):
        assert flag in out


def test_dp_logistic_regression_from_the_command_line(capsys):
    args = ["query", SURVEY, "--column", "cheated_on_exam", "--query", "logistic_regression",
            "--mechanism", "dp_erm_logistic", "--features", "hours_studied_per_week,gpa",
            "--epsilon", "2", "--lambda", "0.05", "--analyst", "--simulate", "1", "--json"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    data = json.loads(out)
    assert [row["feature"] for row in data["coefficients"]] == [
        "hours_studied_per_week", "gpa", "(intercept)"]
    assert data["lambda"] == 0.05 and data["relation"] == "replace"
    assert data["noise_scale"] > 0 and data["simulated"] is True
    assert data["analyst_only"]["imputed_feature_values"] > 0  # gpa has missing values
    # Noise scale from the registry-declared parameters, not from the data.
    again = json.loads(run(capsys, *args[:-3], "--simulate", "2", "--json")[1])
    assert again["noise_scale"] == data["noise_scale"]


@pytest.mark.parametrize("extra,needle", [
    ([], "--features"),
    (["--features", "respondent_id"], "declare the bounds"),
    (["--features", "age", "--query", "mean"], "logistic_regression"),
])
def test_model_errors(capsys, extra, needle):
    base = ["query", SURVEY, "--column", "cheated_on_exam", "--query", "logistic_regression",
            "--mechanism", "dp_erm_logistic", "--epsilon", "1"]
    code, out, err = run(capsys, *base, *extra)
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err
