"""The files of a user-level release (issue 14, bounded contributions per person): the
manifest states the person relation and k (``contributions``), the report says how rows
were bounded, ``dpstudio verify`` passes, and a k edited in the manifest fails it."""

import json
import re

import numpy as np
import pytest

from dpstudio.cli import main


@pytest.fixture
def released(tmp_path, capsys):
    rng = np.random.default_rng(5)
    people = rng.integers(0, 50, 400)
    lines = ["person,amount"] + [f"p{p},{a:.2f}" for p, a in
                                 zip(people, rng.uniform(0, 100, people.size), strict=True)]
    (tmp_path / "visits.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    project = tmp_path / "p.dpstudio"
    assert main(["project", "init", str(project)]) == 0
    spec = tmp_path / "r.toml"
    spec.write_text('schema_version = 1\ndataset = "visits.csv"\ncolumn = "amount"\n'
                    'query = "sum"\nbounds = [0, 100]\nmechanism = "laplace"\n'
                    'epsilon = 0.5\nidentifier = "person"\nmax_rows = 3\nreport = true\n'
                    'formats = ["json"]\n[budget]\nepsilon = 2.0\n', encoding="utf-8")
    out = tmp_path / "out"
    code = main(["release", str(spec), "--project", str(project), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    dropped = int(np.maximum(np.unique(people, return_counts=True)[1] - 3, 0).sum())
    return out, next(out.glob("*.manifest.json")), dropped


def _verify(capsys, manifest):
    code = main(["verify", str(manifest), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_the_manifest_states_the_person_relation_and_k(released, capsys):
    out, manifest, _ = released
    m = json.loads(manifest.read_text(encoding="utf-8"))
    person = "add or remove one person (up to 3 rows)"
    assert m["query"]["relation"] == person and m["privacy"]["relation"] == person
    assert m["contributions"] == {"identifier": "person", "max_rows": 3}
    assert m["mechanism"]["sensitivity"] == 300.0  # k · max(|lo|, |hi|)
    code, check = _verify(capsys, manifest)
    assert code == 0 and check["ok"] and check["problems"] == []


def test_the_report_says_how_rows_were_bounded_and_not_how_many(released):
    out, _, dropped = released
    html = next(out.glob("*.report.html")).read_text(encoding="utf-8")
    assert ("Each person contributes at most 3 rows; rows beyond 3 were dropped at random "
            "before anything was computed; how many were dropped is not released.") in html
    assert "add or remove one person (up to 3 rows)" in html
    assert "add-remove</td>" not in html
    assert not re.search(rf"(?<![\d.]){dropped}(?![\d.])", re.sub(r"<img[^>]*>", "", html))


@pytest.mark.parametrize("edit", ["contributions", "relation", "drop_section"])
def test_a_tampered_k_fails_verify(released, capsys, edit):
    _, manifest, _ = released
    m = json.loads(manifest.read_text(encoding="utf-8"))
    if edit == "contributions":
        m["contributions"]["max_rows"] = 1  # claims a smaller unit than was bounded
    elif edit == "relation":
        m["privacy"]["relation"] = "add or remove one person (up to 1 row)"
    else:
        del m["contributions"]
    manifest.write_text(json.dumps(m, indent=2), encoding="utf-8")
    code, check = _verify(capsys, manifest)
    assert code == 1 and not check["ok"]
    assert any("relation" in p or "contributions" in p for p in check["problems"])


def test_a_row_level_manifest_has_no_contributions_and_still_verifies(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("x\n" + "\n".join(str(i % 10) for i in range(50)) + "\n",
                    encoding="utf-8")
    project = tmp_path / "p.dpstudio"
    assert main(["project", "init", str(project)]) == 0
    spec = tmp_path / "r.toml"
    spec.write_text('schema_version = 1\ndataset = "d.csv"\ncolumn = "x"\nquery = "count"\n'
                    'mechanism = "laplace"\nepsilon = 0.5\nformats = ["json"]\n'
                    '[budget]\nepsilon = 2.0\n', encoding="utf-8")
    assert main(["release", str(spec), "--project", str(project), "--out",
                 str(tmp_path / "out")]) == 0
    capsys.readouterr()
    manifest = next((tmp_path / "out").glob("*.manifest.json"))
    m = json.loads(manifest.read_text(encoding="utf-8"))
    assert "contributions" not in m and m["privacy"]["relation"] == "add-remove"
    assert _verify(capsys, manifest)[0] == 0


def test_a_user_level_release_writes_a_script_that_bounds_people(tmp_path, capsys):
    """The script reads the identifier and bounds each person's rows as the release did
    (tests/export/test_user_level_script.py runs it)."""
    (tmp_path / "v.csv").write_text("person,amount\np1,3\np1,4\np2,5\n", encoding="utf-8")
    project = tmp_path / "p.dpstudio"
    assert main(["project", "init", str(project)]) == 0
    spec = tmp_path / "r.toml"
    spec.write_text('schema_version = 1\ndataset = "v.csv"\ncolumn = "amount"\n'
                    'query = "count"\nmechanism = "laplace"\nepsilon = 0.5\n'
                    'identifier = "person"\nmax_rows = 2\nscript = true\n'
                    '[budget]\nepsilon = 2.0\n', encoding="utf-8")
    capsys.readouterr()
    code = main(["release", str(spec), "--project", str(project), "--out",
                 str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    text = next((tmp_path / "out").glob("*.py")).read_text(encoding="utf-8")
    assert "release_user_level(values, ids, SPEC, MAX_ROWS" in text and "MAX_ROWS = 2" in text
