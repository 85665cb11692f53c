"""The analyst's copy of a release's report (issue 12, item 1, report side).

A release through the project API with a report also writes the analyst's copy — n, the
values outside the bounds and the error as bias + noise, measured on the very values the
release read — to the project's private folder beside the project file; never to the
output folder, the manifest or the ledger's files. And n is published exactly where the
engine makes it public (imputed values under replace-one), nowhere else."""

import html
import json
import os
import re
import shutil
import sys

import numpy as np
import pytest

from dpstudio.data import sample_path
from dpstudio.engine.queries import QuerySpec
from dpstudio.export import verify_manifest
from dpstudio.project import Project, ReleaseSpec

ROWS = 100
WARNING = "80% of values are outside 18–30: the mean is biased; widen the bounds."
#: Words only the analyst's copy may hold.
PRIVATE_WORDS = ("Analyst", "widen the bounds", "bias from clamping", "records used",
                 "bias + noise", "do not publish", "Do not publish")


def _ages() -> np.ndarray:
    """100 ages: 20 inside 18–30, 80 in 40–90 (80% outside the declared 18–30)."""
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.uniform(18, 30, 20), rng.uniform(40, 90, 80)]).round(1)
    rng.shuffle(x)
    return x


def _dataset(folder, lower, upper, values=None):
    values = _ages() if values is None else values
    path = folder / "ages.csv"
    # An id column keeps a row whose age is missing (a lone empty field is a blank line).
    path.write_text("id,age\n" + "\n".join(f"{i},{'' if np.isnan(v) else f'{v:g}'}"
                                            for i, v in enumerate(values)) + "\n",
                    encoding="utf-8")
    schema = {"schema_version": 1,
              "columns": [{"name": "id", "type": "numeric", "lower": 0, "upper": ROWS},
                          {"name": "age", "type": "numeric", "lower": lower, "upper": upper}]}
    (folder / "ages.csv.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return path


def _release(folder, lower=18, upper=30, report=True, relation="add-remove", values=None,
             **query):
    data = _dataset(folder, lower, upper, values)
    q = QuerySpec(query.pop("query", "mean"), "laplace", 1.0, column="age", relation=relation,
                  **query)
    with Project.create(folder / "study.dpstudio", epsilon=5, delta=1e-5,
                        relation=relation) as project:
        record = project.release(ReleaseSpec(dataset=str(data), report=report, query=q),
                                 folder / "out")
        found = project.analyst_report(record.id)
        private = project.analyst_folder
    return record, found, private


def _text(page: str) -> str:
    """A page's visible text (images and style dropped, entities decoded)."""
    page = re.sub(r"<style>.*?</style>", "", re.sub(r'src="data:[^"]*"', "", page), flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _cell(page: str, header: str) -> str:
    m = re.search(rf"<th>{re.escape(html.escape(header))}</th><td>([^<]*)</td>", page)
    assert m, header
    return html.unescape(m.group(1))


def test_a_clamping_release_writes_the_analyst_copy_in_the_private_folder(qapp, tmp_path):
    record, found, private = _release(tmp_path)
    path = record.analyst_report
    assert record.status == "done" and record.analyst_note == ""
    assert path == private / "release-1-report-analyst.html" == found
    assert private == tmp_path / "study.analyst" and path.is_file()
    if sys.platform != "win32":  # owner-only: it states figures of the raw data
        assert os.stat(private).st_mode & 0o777 == 0o700
        assert os.stat(path).st_mode & 0o077 == 0
    page = path.read_text(encoding="utf-8")
    text = _text(page)
    assert WARNING in text
    assert "Analyst's copy — for your eyes only" in text
    # The bias, measured on the data, as numpy computes it.
    x = _ages()
    raw, clamped = x.mean(), np.clip(x, 18, 30).mean()
    assert np.count_nonzero((x < 18) | (x > 30)) == 80
    bias = float(_cell(page, "bias from clamping").split()[0])
    assert bias == pytest.approx(clamped - raw, rel=1e-3) and bias < -25
    assert float(_cell(page, "raw mean (unclamped, never released)")) == pytest.approx(raw,
                                                                                       rel=1e-5)
    assert _cell(page, "records used (n)") == f"{ROWS} of {ROWS} rows"
    assert "this bias dominates the error" in text


def test_the_published_files_never_mention_the_analyst_copy(qapp, tmp_path):
    record, _, private = _release(tmp_path)
    out = tmp_path / "out"
    names = {p.name for p in out.iterdir()}
    assert names == {f.name for f in record.files}
    assert {p.name for p in tmp_path.iterdir()} >= {"out", "study.analyst"}
    check = verify_manifest(next(out.glob("*.manifest.json")))
    assert check.ok, check.problems
    assert {f["name"] for f in check.manifest["files"]} | {
        next(out.glob("*.manifest.json")).name} == names
    raw_mean = f"{_ages().mean():.6g}"
    for p in out.iterdir():
        data = p.read_bytes()
        for word in PRIVATE_WORDS + (raw_mean, "release-1-report-analyst", private.name):
            assert word.encode() not in data, (p.name, word)
    public = _text((out / "r0001-mean-age.report.html").read_text(encoding="utf-8"))
    assert "n, the number of records, is not published" in public


def test_bounds_holding_every_value_give_no_bias_warning(qapp, tmp_path):
    record, _, _ = _release(tmp_path, lower=0, upper=100)
    page = record.analyst_report.read_text(encoding="utf-8")
    text = _text(page)
    assert "Analyst's copy" in text and f"n = {ROWS} records used" in text
    for absent in ("widen the bounds", "% of values are outside", "this bias dominates",
                   "Expected error at other privacy levels (analyst's copy: bias + noise)",
                   "the solid line adds the clamping bias"):
        assert absent not in text, absent
    assert float(_cell(page, "bias from clamping").split()[0]) == 0.0


def test_no_report_no_analyst_copy(tmp_path):
    record, found, private = _release(tmp_path, report=False)
    assert record.status == "done"
    assert record.analyst_report is None and found is None and record.analyst_note == ""
    assert not private.exists()


def test_an_unwritable_private_folder_never_undoes_the_release(qapp, tmp_path):
    (tmp_path / "study.analyst").write_text("in the way", encoding="utf-8")
    record, found, _ = _release(tmp_path)
    assert record.status == "done" and record.analyst_report is None and found is None
    assert "analyst's copy of the report could not be written" in record.analyst_note
    assert "the release itself is done" in record.analyst_note
    assert {p.name for p in (tmp_path / "out").iterdir()} == {f.name for f in record.files}


# ------------------------------------------------------------------------------ public n


def _with_missing() -> np.ndarray:
    x = _ages()
    x[::10] = np.nan  # 10 missing of 100
    return x


def test_n_is_published_where_the_engine_makes_it_public(qapp, tmp_path):
    record, _, _ = _release(tmp_path, lower=0, upper=100, relation="replace",
                            values=_with_missing(), missing="impute", impute=50.0)
    assert record.result["n"] == ROWS  # every row contributes; replace-one: n public
    assert any(f"n = {ROWS:,}" in note for note in record.result["notes"])
    out = tmp_path / "out"
    public = _text((out / "r0001-mean-age.report.html").read_text(encoding="utf-8"))
    assert f"n = {ROWS} records (public with this release)." in public
    analyst = _text(record.analyst_report.read_text(encoding="utf-8"))
    assert f"n = {ROWS} records used" in analyst and "10 without a usable value, imputed" \
        in analyst


@pytest.mark.parametrize(("relation", "missing"), [("add-remove", "impute"),
                                                   ("replace", "drop")])
def test_n_stays_private_elsewhere(qapp, tmp_path, relation, missing):
    extra = {"impute": 50.0} if missing == "impute" else {}
    record, _, _ = _release(tmp_path, lower=0, upper=100, relation=relation,
                            values=_with_missing(), missing=missing, **extra)
    assert "n" not in record.result
    out = tmp_path / "out"
    for p in out.iterdir():
        assert b'"n":' not in p.read_bytes(), p.name
    public = _text((out / "r0001-mean-age.report.html").read_text(encoding="utf-8"))
    assert "n, the number of records, is not published" in public


def test_a_model_release_has_no_analyst_copy(qapp, tmp_path):
    src = sample_path("survey")
    data = tmp_path / src.name
    shutil.copy(src, data)
    shutil.copy(src.with_name(src.name + ".schema.json"), tmp_path / (src.name + ".schema.json"))
    q = QuerySpec("logistic_regression", "dp_erm_logistic", 1.0, delta=1e-6,
                  column="cheated_on_exam", relation="replace", params={"lambda": 0.05})
    with Project.create(tmp_path / "study.dpstudio", epsilon=1.5, delta=1e-5,
                        relation="replace") as project:
        record = project.release(ReleaseSpec(dataset=str(data), report=True, query=q,
                                             features=("hours_studied_per_week", "gpa")),
                                 tmp_path / "out")
        assert record.status == "done" and any(f.name.endswith(".report.html")
                                               for f in record.files)
        assert record.analyst_report is None and record.analyst_note == ""
        assert project.analyst_report(record.id) is None
    assert not (tmp_path / "study.analyst").exists()
