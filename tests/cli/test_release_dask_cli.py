"""``dpstudio release --engine dask`` and ``--scheduler``: a release on Dask from the command
line, and a cluster that fails or cannot be reached charging nothing, writing nothing."""

from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from dpstudio.cli import main  # noqa: E402
from dpstudio.execution import engines, partitions  # noqa: E402
from dpstudio.execution import run as execution_run  # noqa: E402
from dpstudio.project import Project  # noqa: E402


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def env(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)  # threads: quick in tests
    folder = tmp_path / "scores"
    folder.mkdir()
    rng = np.random.default_rng(5)
    for i in range(3):
        pd.DataFrame({"score": rng.integers(0, 100, 1000).astype(float)}).to_parquet(
            folder / f"part-{i}.parquet")
    (tmp_path / "scores.schema.json").write_text(json.dumps(
        {"schema_version": 1, "columns": [{"name": "score", "type": "numeric",
                                           "lower": 0, "upper": 100}]}))
    spec = tmp_path / "s.toml"
    spec.write_text(f'schema_version = 1\ndataset = {json.dumps(str(folder))}\n'
                    'column = "score"\nquery = "sum"\nmechanism = "laplace"\nepsilon = 0.25\n'
                    'engine = "pandas"\n', encoding="utf-8")
    project = tmp_path / "p.dpstudio"
    assert run(capsys, "project", "init", project, "--epsilon", "1")[0] == 0
    return tmp_path, spec, project


def _nothing_charged(project, out):
    with Project.open(project) as p:
        assert p.ledger() == []
    assert not out.exists() or not any(out.iterdir())


def test_the_engine_flag_wins_over_the_spec_and_the_release_runs_on_dask(env, capsys):
    tmp, spec, project = env
    code, out, err = run(capsys, "release", spec, "--project", project, "--out", tmp / "out",
                         "--engine", "dask", "--json")
    assert code == 0, err
    record = json.loads(out)
    assert record["status"] == "done" and record["epsilon"] == 0.25
    manifest = next(f["path"] for f in record["files"] if f["name"].endswith("manifest.json"))
    execution = json.loads(open(manifest, encoding="utf-8").read())["execution"]
    assert execution["engine"] == "dask" and execution["partitions"] == 3
    assert record["budget"]["spent_epsilon"] == 0.25


def test_a_failing_worker_charges_nothing_and_writes_nothing(env, capsys, monkeypatch):
    tmp, spec, project = env

    def broken(*args, **kwargs):
        raise RuntimeError("worker lost its disk")

    monkeypatch.setattr(partitions, "file_partial", broken)
    code, _, err = run(capsys, "release", spec, "--project", project, "--out", tmp / "out",
                       "--engine", "dask")
    assert code == 2 and err.count("\n") == 1
    assert "could not finish the query" in err and "nothing was released" in err
    _nothing_charged(project, tmp / "out")


def test_an_unreachable_scheduler_is_one_line_and_charges_nothing(env, capsys, monkeypatch):
    tmp, spec, project = env
    monkeypatch.setattr(execution_run, "dask_cluster",
                        functools.partial(engines.dask_cluster, timeout=0.5))
    code, _, err = run(capsys, "release", spec, "--project", project, "--out", tmp / "out",
                       "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2 and err.count("\n") == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err
    _nothing_charged(project, tmp / "out")


def test_without_dask_the_release_says_how_to_install_it(env, capsys, monkeypatch):
    tmp, spec, project = env
    monkeypatch.setattr(engines, "dask_available", lambda: False)
    code, _, err = run(capsys, "release", spec, "--project", project, "--out", tmp / "out",
                       "--engine", "dask")
    assert code == 2 and err.count("\n") == 1 and "pip install 'dpstudio[dask]'" in err
    _nothing_charged(project, tmp / "out")
