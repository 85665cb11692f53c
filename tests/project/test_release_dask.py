"""Project releases on a folder of Parquet files and on Dask (issue 16): the sums where the
data is, the noise once here, the ledger charged once, the manifest saying where and on
which files, and a folder's budget identity."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from dps_project_helpers import run, write_spec  # noqa: E402

from dpstudio.data.folders import FILES_ALGORITHM, files_fingerprint  # noqa: E402
from dpstudio.engine.queries import QuerySpec  # noqa: E402
from dpstudio.engine.queries.partial import partial_sums  # noqa: E402
from dpstudio.engine.rng import SimulationSource  # noqa: E402
from dpstudio.execution import engines  # noqa: E402
from dpstudio.execution import run as execution_run  # noqa: E402
from dpstudio.project import Project  # noqa: E402

SCHEMA = {"schema_version": 1, "columns": [
    {"name": "score", "type": "numeric", "lower": 0, "upper": 100},
    {"name": "group", "type": "categorical", "categories": ["a", "b", "c"]}]}


def _frame(rng, n):
    score = rng.integers(-10, 120, n).astype(float)  # whole numbers: on every grid here
    score[rng.random(n) < 0.03] = np.nan
    return pd.DataFrame({"score": score, "group": rng.choice(["a", "b", "c", "z"], n)})


@pytest.fixture
def env(tmp_path, capsys, monkeypatch):
    """A folder of 3 Parquet files (sidecar beside it), the same rows as one file (its own
    sidecar), and a project made by ``dpstudio project init``; threads, not processes."""
    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)
    rng = np.random.default_rng(16)
    folder = tmp_path / "scores"
    folder.mkdir()
    parts = [_frame(rng, 1500 + 400 * i) for i in range(3)]
    for i, part in enumerate(parts):
        part.to_parquet(folder / f"part-{i}.parquet")
    (tmp_path / "scores.schema.json").write_text(json.dumps(SCHEMA))
    whole = tmp_path / "whole.parquet"
    pd.concat(parts, ignore_index=True).to_parquet(whole)
    (tmp_path / "whole.parquet.schema.json").write_text(json.dumps(SCHEMA))
    project = tmp_path / "p.dpstudio"
    code, _, _ = run(capsys, "project", "init", project, "--epsilon", "5", "--delta", "1e-4")
    assert code == 0
    return tmp_path, folder, whole, project


def _capture_totals(monkeypatch):
    """Record the exact aggregates the release's noise is drawn for (never exported)."""
    seen = []
    real = execution_run.result_from_sums

    def spy(analysis, total, source, notes=()):
        seen.append(total)
        return real(analysis, total, source, notes)

    monkeypatch.setattr(execution_run, "result_from_sums", spy)
    return seen


def _release(capsys, tmp, project, dataset, name, **fields):
    spec = write_spec(tmp / f"{name}.toml", dataset, name=name, **fields)
    code, out, err = run(capsys, "release", spec, "--project", project, "--out", tmp / "out",
                         "--json")
    return code, (json.loads(out) if code == 0 else None), err


def _dataset_of(project, record):
    with Project.open(project) as p:
        return next(r.dataset_id for r in p.ledger() if r.id == record["id"])


def _manifest(record):
    path = next(f["path"] for f in record["files"] if f["name"].endswith("manifest.json"))
    return json.loads(open(path, encoding="utf-8").read())


MEAN = {"column": "score", "query": "mean", "mechanism": "gaussian", "epsilon": 0.5,
        "delta": 1e-6}


def test_a_dask_release_on_a_folder_charges_once_and_says_where_and_on_which_files(
        env, capsys, monkeypatch):
    tmp, folder, _, project = env
    totals = _capture_totals(monkeypatch)
    code, record, err = _release(capsys, tmp, project, folder, "m", engine="dask", report=True,
                                 **MEAN)
    assert code == 0, err
    assert len(totals) == 1  # the noise drawn once, from one added total
    with Project.open(project) as p:
        ledger = p.ledger()
        assert len(ledger) == 1 and ledger[0].status == "done"
        assert (ledger[0].epsilon, ledger[0].delta) == (Decimal("0.5"), Decimal("0.000001"))
        dataset = p.dataset(ledger[0].dataset_id)
        spent = p.budget(dataset.id).to_dict()
    files = sorted(folder.glob("*.parquet"))
    assert dataset.fingerprint == files_fingerprint(
        [_entry(f) for f in files])  # from the bytes summed, not re-read afterwards
    assert Decimal(str(spent["spent_epsilon"])) == Decimal("0.5")
    manifest = _manifest(record)
    ex = manifest["execution"]
    assert ex["engine"] == "dask" and ex["scheduler"] == "local" and ex["partitions"] == 3
    assert ex["workers"] >= 1 and ex["threads"] >= 1
    ds = manifest["dataset"]
    assert ds["fingerprint_algorithm"] == FILES_ALGORITHM
    assert ds["fingerprint"] == dataset.fingerprint
    assert {f["name"]: f["sha256"] for f in ds["files"]} == {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    assert {f["bytes"] for f in ds["files"]} == {f.stat().st_size for f in files}
    # The analyst's copy: rows and clamped values from the integer counts.
    whole = pd.concat([pd.read_parquet(f) for f in files])
    text = open(record["analyst_report"], encoding="utf-8").read()
    assert f"{len(whole):,}" in text
    assert f"{int(((whole.score < 0) | (whole.score > 100)).sum()):,}" in text


def _entry(path):
    from dpstudio.data.folders import hash_bytes

    return hash_bytes(path, path.read_bytes())


@pytest.mark.parametrize("fields", [
    MEAN,
    {"column": "score", "query": "histogram", "mechanism": "laplace", "epsilon": 0.5,
     "bins": 10},
    {"column": "group", "query": "histogram", "mechanism": "laplace", "epsilon": 0.5},
    {"column": "score", "query": "quantile", "quantile": 0.75, "mechanism": "exponential",
     "epsilon": 0.5},
], ids=["mean", "bins", "labels", "quantile"])
def test_dask_and_pandas_release_the_same_exact_sums_scale_and_charge(
        env, capsys, monkeypatch, fields):
    tmp, folder, whole, project = env
    totals = _capture_totals(monkeypatch)
    code, dask, err = _release(capsys, tmp, project, folder, "d", engine="dask", **fields)
    assert code == 0, err
    code, local, err = _release(capsys, tmp, project, folder, "p", engine="pandas", **fields)
    assert code == 0, err
    # The in-process sums of the whole column, computed independently (one partition).
    reader = "category" if fields["column"] == "group" else "numeric"
    values = (pd.read_parquet(whole)[fields["column"]].to_numpy(dtype=float)
              if reader == "numeric" else
              np.asarray(pd.read_parquet(whole)["group"].tolist(), dtype=object))
    spec = QuerySpec(fields["query"], fields["mechanism"], fields["epsilon"],
                     delta=fields.get("delta", 0.0), bins=fields.get("bins"),
                     quantile=fields.get("quantile"),
                     bounds=None if reader == "category" else (0.0, 100.0),
                     categories=("a", "b", "c") if reader == "category" else None,
                     column=fields["column"])
    expected = partial_sums(values, spec, SimulationSource(0))
    assert totals[0] == totals[1] == expected  # bit for bit: sums, cells and counts
    assert dask["result"]["noise_scale"] == local["result"]["noise_scale"]
    assert (dask["epsilon"], dask["delta"]) == (local["epsilon"], local["delta"])
    assert _dataset_of(project, dask) == _dataset_of(project, local)  # one folder, one budget
    # In this process, one file at a time: the same keys as a cluster's, one thread.
    assert _manifest(local)["execution"] | {"memory_bytes": 0} == {
        "engine": "pandas", "scheduler": None, "workers": 1, "threads": 1,
        "memory_bytes": 0, "partitions": 3}
    # The same rows as one file, released on pandas in this process: the same noise.
    other = tmp / "q.dpstudio"
    assert run(capsys, "project", "init", other, "--epsilon", "5", "--delta", "1e-4")[0] == 0
    spec_path = write_spec(tmp / "one.toml", whole, name="one", **fields)
    code, out, err = run(capsys, "release", spec_path, "--project", other, "--out",
                         tmp / "out1", "--json")
    assert code == 0, err
    one = json.loads(out)
    assert one["result"]["noise_scale"] == dask["result"]["noise_scale"]
    assert (one["epsilon"], one["delta"]) == (dask["epsilon"], dask["delta"])


def test_a_folders_budget_is_stable_across_runs_and_a_changed_byte_is_refused(
        env, capsys):
    tmp, folder, _, project = env
    code, first, err = _release(capsys, tmp, project, folder, "a", engine="dask", **MEAN)
    assert code == 0, err
    # Touched (mtime only) and renamed: the same files, the same dataset and budget.
    (folder / "part-2.parquet").rename(folder / "part-9.parquet")
    code, second, err = _release(capsys, tmp, project, folder, "b", engine="dask", **MEAN)
    assert code == 0, err
    assert _dataset_of(project, second) == _dataset_of(project, first)
    assert second["budget"]["spent_epsilon"] == pytest.approx(1.0)
    before = files_fingerprint([_entry(f) for f in sorted(folder.glob("*.parquet"))])
    # One value changed in one file: another fingerprint, and the registered folder with
    # other rows is refused (no fresh budget for it).
    target = folder / "part-0.parquet"
    frame = pd.read_parquet(target)
    frame.loc[0, "score"] = 42.0 if frame.loc[0, "score"] != 42.0 else 43.0
    frame.to_parquet(target)
    after = files_fingerprint([_entry(f) for f in sorted(folder.glob("*.parquet"))])
    assert after != before
    code, _, err = _release(capsys, tmp, project, folder, "c", engine="dask", **MEAN)
    assert code == 2 and err.count("\n") == 1 and "has changed since it was registered" in err
    with Project.open(project) as p:
        assert [r.status for r in p.ledger()] == ["done", "done"]
        assert len(p.datasets()) == 1


def test_one_file_on_dask_is_the_same_dataset_as_on_pandas(env, capsys):
    tmp, _, whole, project = env
    code, local, err = _release(capsys, tmp, project, whole, "p", engine="pandas", **MEAN)
    assert code == 0, err
    code, dask, err = _release(capsys, tmp, project, whole, "d", engine="dask", report=True,
                               **MEAN)
    assert code == 0, err
    assert _dataset_of(project, dask) == _dataset_of(project, local)
    manifest = _manifest(dask)
    assert manifest["execution"]["engine"] == "dask" and manifest["execution"]["partitions"] == 1
    assert manifest["dataset"]["fingerprint_algorithm"] == "sha256"
    assert manifest["dataset"]["fingerprint"] == hashlib.sha256(whole.read_bytes()).hexdigest()
    # The analyst's copy: counts from the integer aggregates only.
    frame = pd.read_parquet(whole)
    text = open(dask["analyst_report"], encoding="utf-8").read()
    outside = int(((frame.score < 0) | (frame.score > 100)).sum())
    assert f"{len(frame):,}" in text or str(len(frame)) in text
    assert f"{outside:,}" in text or str(outside) in text, text[-3000:]


def test_the_same_rows_as_one_file_do_not_get_a_fresh_budget(env, capsys):
    """A folder's identity is its files' fingerprint; the same rows in one file are caught
    as a version of it (same columns, same number of rows) and need --share-budget-with."""
    tmp, folder, whole, project = env
    code, _, err = _release(capsys, tmp, project, folder, "f", engine="dask", **MEAN)
    assert code == 0, err
    code, _, err = _release(capsys, tmp, project, whole, "w", engine="pandas", **MEAN)
    assert code == 2 and err.count("\n") == 1 and "looks like a version of" in err
    code, shared, err = _release(capsys, tmp, project, whole, "w2", engine="pandas",
                                 share_budget_with=1, **MEAN)
    assert code == 0, err
    assert shared["budget"]["spent_epsilon"] == pytest.approx(1.0)
