"""--engine pandas|dask|auto and --scheduler on dpstudio query and release; spec keys."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpstudio.cli import main
from dpstudio.execution import engines
from dpstudio.project.errors import SpecError
from dpstudio.project.spec import load_spec, parse_spec, spec_text


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)  # threads: quick in tests
    root = tmp_path / "scores"
    root.mkdir()
    rng = np.random.default_rng(4)
    for i in range(3):
        pd.DataFrame({"score": rng.integers(0, 100, 2000).astype(float)}).to_parquet(
            root / f"part-{i}.parquet")
    (tmp_path / "scores.schema.json").write_text(json.dumps(
        {"schema_version": 1, "columns": [{"name": "score", "type": "numeric",
                                           "lower": 0, "upper": 100}]}))
    return root


QUERY = ("--column", "score", "--query", "mean", "--mechanism", "laplace", "--epsilon", "1",
         "--simulate", "3", "--json")


def test_a_folder_gives_the_same_answer_on_pandas_and_dask(capsys, folder):
    answers = {}
    for engine in ("pandas", "dask"):
        code, out, err = run(capsys, "query", folder, *QUERY, "--engine", engine)
        assert code == 0, err
        answers[engine] = json.loads(out)
    dask, pandas = answers["dask"], answers["pandas"]
    assert pandas["execution"] == {"engine": "pandas"}
    assert dask["execution"]["engine"] == "dask" and dask["execution"]["scheduler"] == "local"
    assert dask["execution"]["partitions"] == 3 and dask["execution"]["workers"] >= 1
    assert dask["execution"]["threads"] >= 1 and dask["execution"]["memory_bytes"] > 0
    for d in (dask, pandas):
        d.pop("execution")
    assert dask == pandas  # whole numbers on the grid, the same seeded noise


def test_a_glob_and_auto(capsys, folder):
    code, out, err = run(capsys, "query", folder / "part-*.parquet", *QUERY[:-1])
    assert code == 0, err
    assert "engine       pandas (in this process)" in out  # small data: auto is pandas
    assert engines.choose_engine("auto", 10**12, memory=8 * 10**9) == (
        "dask" if engines.dask_available() else "pandas")
    assert engines.choose_engine("auto", 10**6, memory=8 * 10**9) == "pandas"


def test_scheduler_errors_are_one_sentence(capsys, folder):
    code, _, err = run(capsys, "query", folder, *QUERY, "--scheduler", "nonsense://nowhere")
    assert code == 2 and err.count("\n") == 1
    assert "cannot reach the Dask scheduler at nonsense://nowhere" in err
    code, _, err = run(capsys, "query", folder, *QUERY, "--engine", "pandas",
                       "--scheduler", "tcp://h:8786")
    assert code == 2 and "--scheduler names a Dask cluster" in err


def test_without_dask_the_engine_says_how_to_install_it(capsys, folder, monkeypatch):
    monkeypatch.setattr(engines, "dask_available", lambda: False)
    code, _, err = run(capsys, "query", folder, *QUERY, "--engine", "dask")
    assert code == 2 and err.count("\n") == 1
    assert "pip install 'dpstudio[dask]'" in err


def test_dask_refuses_what_it_cannot_run(capsys, folder):
    code, _, err = run(capsys, "query", folder, "--column", "score", "--trust-model", "local",
                       "--query", "heavy_hitters", "--mechanism", "sfp", "--epsilon", "1",
                       "--engine", "dask")
    assert code == 2 and err.count("\n") == 1
    assert "dask engine does not run heavy hitters" in err


SPEC = {"schema_version": 1, "dataset": "d.csv", "column": "x", "query": "count",
        "mechanism": "laplace", "epsilon": 1.0}


def test_spec_keys_engine_and_scheduler(tmp_path):
    spec = parse_spec(SPEC | {"engine": "dask", "scheduler": "tcp://h:8786"})
    assert (spec.engine, spec.scheduler) == ("dask", "tcp://h:8786")
    assert parse_spec(SPEC).engine == "auto" and "engine" not in spec_text(parse_spec(SPEC))
    path = tmp_path / "s.toml"
    path.write_text(spec_text(spec))
    again = load_spec(path)
    assert (again.engine, again.scheduler) == ("dask", "tcp://h:8786")
    with pytest.raises(SpecError, match="engine must be pandas, dask or auto"):
        parse_spec(SPEC | {"engine": "spark"})
    with pytest.raises(SpecError, match="scheduler names a Dask cluster"):
        parse_spec(SPEC | {"engine": "pandas", "scheduler": "tcp://h:8786"})


def test_the_manifest_says_where_the_sums_were_computed(tmp_path):
    from dpstudio.analysis.result import public_result
    from dpstudio.engine.queries import QuerySpec, release
    from dpstudio.engine.rng import SecureSource
    from dpstudio.export.bundle import BundleInput, render_bundle

    spec = QuerySpec("sum", "laplace", 0.5, bounds=(0.0, 10.0), column="x")
    result = release(np.array([1.0, 2.0]), spec, SecureSource())

    def manifest(**kw):
        inp = BundleInput(release_id=1, uid="u" * 32, created_at="2024-01-01T00:00:00Z",
                          stem="r1", dataset_name="d", dataset_path="d", fingerprint="f" * 64,
                          schema={"schema_version": 1, "columns": []}, spec=spec,
                          public=public_result(result), epsilon=0.5, delta=0, accountant="basic",
                          budget_epsilon=3, budget_delta=0, **kw)
        return json.loads(render_bundle(inp)[-1].data)

    plain = manifest()
    assert plain["execution"] == {"engine": "pandas"}
    assert plain["dataset"]["fingerprint_algorithm"] == "sha256"
    assert "files" not in plain["dataset"]
    cluster = {"engine": "dask", "scheduler": "local", "workers": 2, "threads": 4,
               "memory_bytes": 4 << 30, "partitions": 3}
    files = [{"name": "part-0.parquet", "bytes": 10, "mtime_ns": 1, "sha256": "a" * 64}]
    m = manifest(execution=cluster, dataset_files=files)
    assert m["execution"] == cluster
    assert m["dataset"]["fingerprint_algorithm"] == "files-sha256-v1"
    assert m["dataset"]["files"] == files
    assert set(plain) - {"execution"} <= set(m)  # the existing keys are kept
