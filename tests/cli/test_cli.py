"""The ``dpstudio`` command line: the JSON contract, the registry listing, and bad input
answered with one line and exit code 2."""

import json
import subprocess
import sys

import numpy as np
import pytest

from dpstudio.cli import main
from dpstudio.data.samples import sample_path

CONTRACT_KEYS = {"value", "query", "mechanism", "epsilon", "delta", "sensitivity", "noise_scale",
                 "ci_low", "ci_high", "confidence"}


@pytest.fixture
def scores_csv(tmp_path):
    path = tmp_path / "scores.csv"
    rng = np.random.default_rng(1)
    rows = ["score,group,note"] + [f"{s:.1f},{g},x" for s, g in
                                    zip(rng.uniform(0, 100, 400), rng.choice(["a", "b"], 400),
                                        strict=True)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_query_json_has_the_contract_keys(capsys, scores_csv):
    code, out, err = run(capsys, "query", scores_csv, "--column", "score", "--query", "mean",
                         "--bounds", "0,100", "--mechanism", "laplace", "--epsilon", "1",
                         "--json", "--analyst")  # --analyst: the analyst-only counts too
    assert code == 0, err
    data = json.loads(out)
    assert CONTRACT_KEYS <= set(data)
    assert data["query"] == "mean" and data["mechanism"] == "laplace"
    assert data["epsilon"] == 1.0 and data["delta"] == 0.0
    assert data["sensitivity"] == 100.0  # add-remove, bounds 0..100
    assert data["ci_low"] <= data["value"] <= data["ci_high"]
    assert data["confidence"] == 0.95
    assert data["simulated"] is False  # the default is a real release from the CSPRNG
    assert "clamped" not in data and data["analyst_only"]["clamped"] == 0


def test_query_gaussian_with_options_and_human_output(capsys, scores_csv):
    code, out, _ = run(capsys, "query", scores_csv, "--column", "score", "--query", "sum",
                       "--bounds", "0,100", "--mechanism", "gaussian", "--epsilon", "0.5",
                       "--delta", "1e-6", "--relation", "replace", "--confidence", "0.9",
                       "--json")
    data = json.loads(out)
    assert code == 0 and data["relation"] == "replace" and data["sensitivity"] == 100.0
    assert data["noise_scale"] > 100.0 / 0.5  # analytic σ at δ=1e-6 exceeds Δ/ε here
    code, out, _ = run(capsys, "query", scores_csv, "--column", "score", "--query", "sum",
                       "--bounds", "0,100", "--mechanism", "laplace", "--epsilon", "1")
    assert code == 0
    assert "noise scale  100" in out and "90% interval" not in out and "95% interval" in out


def test_simulation_is_labelled_and_reproducible(capsys, scores_csv):
    args = ["query", scores_csv, "--column", "score", "--query", "sum", "--bounds", "0,100",
            "--mechanism", "laplace", "--epsilon", "1", "--simulate", "4", "--json"]
    first = json.loads(run(capsys, *args)[1])
    second = json.loads(run(capsys, *args)[1])
    assert first["value"] == second["value"] and first["simulated"] is True


def test_histogram_uses_declared_categories_of_the_bundled_sample(capsys):
    survey = sample_path("survey")
    code, out, err = run(capsys, "query", survey, "--column", "cheated_on_exam", "--query",
                         "histogram", "--mechanism", "discrete_laplace", "--epsilon", "1",
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data["value"]) == {"yes", "no"}
    assert any("declared" in n for n in data["notes"])


def test_mechanisms_json_lists_the_registry(capsys):
    code, out, _ = run(capsys, "mechanisms", "--json")
    entries = json.loads(out)
    names = {e["name"] for e in entries}
    assert code == 0 and {"laplace", "gaussian", "exponential"} <= names
    gaussian = next(e for e in entries if e["name"] == "gaussian")
    assert {p["name"] for p in gaussian["params"]} >= {"epsilon", "delta", "calibration"}
    code, out, _ = run(capsys, "mechanisms")
    assert "discrete_gaussian" in out


@pytest.mark.parametrize("extra,needle", [
    (["--epsilon", "0"], "ε"),
    (["--epsilon", "-2"], "ε"),
    (["--epsilon", "1", "--delta", "1.5"], "δ"),
    (["--epsilon", "1", "--bounds=100,0"], "reversed"),
    (["--epsilon", "1", "--bounds", "0,inf"], "finite"),
    (["--epsilon", "1", "--bounds", "zero,1"], "bounds"),
    (["--epsilon", "1", "--column", "note"], "not numeric"),
    (["--epsilon", "1", "--column", "missing"], "missing"),
    (["--epsilon", "1", "--mechanism", "gaussian"], "δ"),
])
def test_bad_input_one_line_exit_2(capsys, scores_csv, extra, needle):
    base = ["query", scores_csv, "--column", "score", "--query", "mean", "--bounds", "0,100",
            "--mechanism", "laplace"]
    # later flags win in argparse, so `extra` overrides the base
    code, out, err = run(capsys, *base, *extra)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert "Traceback" not in err


def test_bad_files(capsys, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("score\n\n", encoding="utf-8")
    nan = tmp_path / "nan.csv"
    nan.write_text("score\nnan\nNaN\n", encoding="utf-8")
    for path in (tmp_path / "absent.csv", empty, nan, tmp_path):
        code, _, err = run(capsys, "query", path, "--column", "score", "--query", "mean",
                           "--bounds", "0,1", "--mechanism", "laplace", "--epsilon", "1")
        assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_no_traceback_from_a_real_process(tmp_path):
    out = subprocess.run([sys.executable, "-m", "dpstudio", "query", str(tmp_path / "x.csv"),
                          "--column", "a", "--query", "sum", "--bounds", "0,1", "--mechanism",
                          "laplace", "--epsilon", "1"], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith("dpstudio: error:")
