"""``dpstudio query``: analyst-only numbers only when asked, no ledger, and the
missing-value treatment (issue 10, items 1, 10 and 13)."""

import json

import pytest

from dpstudio.cli import main


@pytest.fixture
def ages_csv(tmp_path):
    # One value above the bounds (clamped), one empty, one inf, one -inf.
    ages = [str(a) for a in (20, 25, 30, 35, 40)] + ["99", "", "inf", "-inf"]
    rows = ["id,age"] + [f"{i},{a}" for i, a in enumerate(ages)]
    path = tmp_path / "ages.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


BASE = ("--column", "age", "--query", "mean", "--bounds", "17,42", "--mechanism", "laplace",
        "--epsilon", "1", "--simulate", "3")


def test_json_hides_analyst_only_numbers_unless_asked(capsys, ages_csv):
    code, out, err = run(capsys, "query", ages_csv, *BASE, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert "analyst_only" not in data and "clamped" not in data
    assert "missing_count" not in data and "non_finite_count" not in data
    assert data["charged"] is False and "not charged" in data["ledger"]
    code, out, err = run(capsys, "query", ages_csv, *BASE, "--json", "--analyst")
    data = json.loads(out)
    assert code == 0, err
    assert data["analyst_only"] == {"clamped": 1, "missing": 3, "non_finite": 2}
    assert data["charged"] is False


def test_a_real_release_says_it_is_not_charged(capsys, ages_csv):
    argv = [a for a in BASE if a not in ("--simulate", "3")]
    code, out, _ = run(capsys, "query", ages_csv, *argv, "--json")
    data = json.loads(out)
    assert code == 0 and data["simulated"] is False
    assert data["charged"] is False and "dpstudio release" in data["ledger"]


def test_human_output_hides_analyst_lines_unless_asked(capsys, ages_csv):
    code, out, _ = run(capsys, "query", ages_csv, *BASE)
    assert code == 0
    assert "analyst only" not in out
    assert "not charged" in out
    code, out, _ = run(capsys, "query", ages_csv, *BASE, "--analyst")
    assert "analyst only (not released): 1 values outside the declaration; 3 missing " \
           "(2 of them ±inf)" in out


def test_missing_treatment_from_the_command_line(capsys, ages_csv):
    code, out, err = run(capsys, "query", ages_csv, *BASE, "--relation", "replace", "--json")
    assert code == 0, err
    drop = json.loads(out)
    assert drop["missing"] == {"treatment": "drop"} and drop["sensitivity"] == 42.0
    assert drop["sensitivities"] == {"sum": 42.0, "count": 1.0}
    code, out, err = run(capsys, "query", ages_csv, *BASE, "--relation", "replace",
                         "--impute", "30", "--json")
    assert code == 0, err
    imputed = json.loads(out)
    assert imputed["missing"] == {"treatment": "impute", "value": 30.0}
    assert [c["statistic"] for c in imputed["components"]] == ["sum"]
    assert imputed["sensitivity"] == 25.0 and imputed["variance_exact"] is True
    code, out, _ = run(capsys, "query", ages_csv, *BASE, "--relation", "replace",
                       "--missing", "impute", "--json")
    assert json.loads(out)["missing"] == {"treatment": "impute", "value": 29.5}  # midpoint


@pytest.mark.parametrize("extra,message", [
    (("--impute", "50"), "inside the declared bounds"),
    (("--impute", "30", "--missing", "drop"), "cannot go with --missing drop"),
])
def test_bad_missing_options_give_one_line(capsys, ages_csv, extra, message):
    code, out, err = run(capsys, "query", ages_csv, *BASE, *extra)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_impute_is_refused_for_other_trust_models(capsys, ages_csv):
    code, _, err = run(capsys, "query", ages_csv, "--column", "age", "--query", "sum",
                       "--bounds", "17,42", "--mechanism", "cloak", "--epsilon", "1",
                       "--delta", "1e-6", "--impute", "30", "--simulate", "1")
    assert code == 2 and "central-model" in err
