"""``dpstudio release`` names the analyst's copy of the report (issue 12, item 1): a path
in the project's private folder, printed apart from the published files, "do not publish"."""

import json

import numpy as np
import pytest

from dpstudio.cli import main

LINE = "  analyst's copy (do not publish): "


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def env(tmp_path, capsys):
    rng = np.random.default_rng(5)
    ages = np.concatenate([rng.uniform(18, 30, 40), rng.uniform(40, 90, 160)]).round(1)
    data = tmp_path / "ages.csv"
    data.write_text("age\n" + "\n".join(f"{v:g}" for v in ages) + "\n", encoding="utf-8")
    (tmp_path / "ages.csv.schema.json").write_text(json.dumps({"schema_version": 1, "columns": [
        {"name": "age", "type": "numeric", "lower": 18, "upper": 30}]}), encoding="utf-8")
    project = tmp_path / "study.dpstudio"
    code, _, err = run(capsys, "project", "init", project, "--epsilon", "3", "--delta", "1e-5")
    assert code == 0, err
    return tmp_path, project


def _spec(tmp_path, report: bool):
    spec = tmp_path / f"mean-{report}.toml"
    spec.write_text(f'schema_version = 1\ndataset = "ages.csv"\ncolumn = "age"\n'
                    f'query = "mean"\nmechanism = "laplace"\nepsilon = 0.5\n'
                    f'report = {str(report).lower()}\n', encoding="utf-8")
    return spec


def test_release_prints_the_analyst_copy_path(qapp, env, capsys, monkeypatch):
    tmp_path, project = env
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "release", _spec(tmp_path, True), "--project", project,
                         "--out", tmp_path / "out")
    assert code == 0, err
    lines = out.splitlines()
    shown = [ln for ln in lines if ln.startswith(LINE)]
    assert len(shown) == 1
    path = tmp_path / "study.analyst" / "release-1-report-analyst.html"
    assert shown[0] == LINE + str(path) and path.is_file()
    page = path.read_text(encoding="utf-8")
    assert "80% of values are outside 18–30: the mean is biased; widen the bounds." in page
    # Apart from the published files: listed after them, and not one of them.
    files = lines[lines.index(f"  files in {tmp_path / 'out'}:") + 1:lines.index(shown[0])]
    assert files and all(ln.startswith("    r0001-mean-age") for ln in files)
    assert not any("analyst" in p.name for p in (tmp_path / "out").iterdir())


def test_release_json_names_the_analyst_copy(qapp, env, capsys, monkeypatch):
    tmp_path, project = env
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "release", _spec(tmp_path, True), "--project", project,
                         "--out", tmp_path / "out", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["analyst_report"] == str(tmp_path / "study.analyst" /
                                        "release-1-report-analyst.html")
    assert all("analyst" not in f["name"] for f in doc["files"])


def test_release_without_a_report_has_no_analyst_copy(env, capsys, monkeypatch):
    tmp_path, project = env
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "release", _spec(tmp_path, False), "--project", project,
                         "--out", tmp_path / "out")
    assert code == 0, err
    assert "analyst's copy" not in out and not (tmp_path / "study.analyst").exists()


def test_an_unwritable_private_folder_is_one_note_and_the_release_stands(qapp, env, capsys,
                                                                        monkeypatch):
    tmp_path, project = env
    monkeypatch.chdir(tmp_path)
    (tmp_path / "study.analyst").write_text("in the way", encoding="utf-8")
    code, out, err = run(capsys, "release", _spec(tmp_path, True), "--project", project,
                         "--out", tmp_path / "out")
    assert code == 0, err
    assert "release #1 done" in out and LINE not in out
    notes = [ln for ln in out.splitlines() if "analyst's copy of the report could not be "
             "written" in ln]
    assert len(notes) == 1 and notes[0].startswith("  note: ")
