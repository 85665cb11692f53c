"""One release spec, four ways (issue 16): a bundled sample as one CSV file and the same
rows as a folder of Parquet files, each through ``--engine pandas`` and ``--engine dask``.

Every way computes the same exact integer sums, counts and bins (bit for bit: the values
here are whole numbers on every grid, or the rounding's bits are seeded alike), draws its
noise at the same scale, charges the ledger the same (ε, δ), and writes a manifest with
the same fields and the same mechanism, privacy and query sections; only where the sums
were computed (``execution``) and which files were read (``dataset``) differ, and the
manifest says so in one shape. Once on a cluster of worker processes too.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from dps_project_helpers import run, write_spec  # noqa: E402

from dpstudio.analysis import AnalysisSpec  # noqa: E402
from dpstudio.data.folders import open_files  # noqa: E402
from dpstudio.data.samples import sample_path  # noqa: E402
from dpstudio.data.schema import load_schema  # noqa: E402
from dpstudio.engine.queries import QuerySpec  # noqa: E402
from dpstudio.engine.queries.partial import partial_sums  # noqa: E402
from dpstudio.engine.rng import SimulationSource  # noqa: E402
from dpstudio.execution import engines  # noqa: E402
from dpstudio.execution import run as execution_run  # noqa: E402
from dpstudio.execution.partitions import folder_values, read_column  # noqa: E402
from dpstudio.execution.run import reader_of, sum_on_files  # noqa: E402
from dpstudio.project import release as project_release  # noqa: E402

PARTS = 4
#: The manifest's ``execution`` keys, on every engine.
EXECUTION = {"engine", "scheduler", "workers", "threads", "memory_bytes", "partitions"}
#: Manifest sections that depend on the spec and the data alone, never on the engine.
SAME = ("schema_version", "kind", "engine", "trust_model", "query", "mechanism", "privacy",
        "confidence", "randomness")

# The health sample's declared bounds and categories (its sidecar), per query.
QUERIES = {
    "count": ({"column": "age", "query": "count", "mechanism": "laplace", "epsilon": 0.5},
              {}),
    "sum": ({"column": "visits_last_year", "query": "sum", "mechanism": "laplace",
             "epsilon": 0.5}, {"bounds": (0, 52)}),
    "mean": ({"column": "age", "query": "mean", "mechanism": "gaussian", "epsilon": 0.5,
              "delta": 1e-6}, {"bounds": (18, 100)}),
    "variance": ({"column": "visits_last_year", "query": "variance",
                  "mechanism": "gaussian", "epsilon": 1.0, "delta": 1e-6},
                 {"bounds": (0, 52)}),
    "bins": ({"column": "cholesterol", "query": "histogram", "mechanism": "laplace",
              "epsilon": 0.5, "bins": 12}, {"bounds": (100, 400)}),
    "labels": ({"column": "region", "query": "histogram", "mechanism": "laplace",
                "epsilon": 0.5},
               {"categories": ("North", "South", "East", "West", "Central")}),
    "yes-no": ({"column": "diabetes", "query": "histogram", "mechanism": "laplace",
                "epsilon": 0.5}, {"categories": ("yes", "no")}),
    "median": ({"column": "age", "query": "median", "mechanism": "exponential",
                "epsilon": 0.5}, {"bounds": (18, 100)}),
}


pytestmark = pytest.mark.usefixtures("nothing_left_running")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The health sample as shipped (a CSV and its sidecar), and its rows split into a
    folder of Parquet files (the same sidecar beside the folder)."""
    root = tmp_path_factory.mktemp("engines")
    sample = sample_path("health")
    one = root / "health.csv"
    shutil.copyfile(sample, one)
    shutil.copyfile(sample.with_name(sample.name + ".schema.json"),
                    root / "health.csv.schema.json")
    folder = root / "health"
    folder.mkdir()
    frame = pd.read_csv(one)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), PARTS)):
        frame.iloc[part].to_parquet(folder / f"part-{i}.parquet", index=False)
    shutil.copyfile(sample.with_name(sample.name + ".schema.json"),
                    root / "health.schema.json")
    return root, one, folder


@pytest.fixture
def threads(monkeypatch):
    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)
    monkeypatch.setattr(execution_run, "dask_cluster", functools.partial(
        engines.dask_cluster, n_workers=2, threads_per_worker=1))


def _spy(monkeypatch):
    """The exact integer aggregates every release's noise is drawn for, in order: summed
    where the data is (captured as the noise is drawn), or, on the in-process path, the
    aggregates of the very values the release read (computed from them here)."""
    seen = []
    real_sums = execution_run.result_from_sums
    real_run = project_release.run_analysis

    def sums(analysis, total, source, notes=()):
        seen.append(total)
        return real_sums(analysis, total, source, notes)

    def in_process(analysis, values, source):
        seen.append(partial_sums(values, analysis.query, SimulationSource(0)))
        return real_run(analysis, values, source)

    monkeypatch.setattr(execution_run, "result_from_sums", sums)
    monkeypatch.setattr(project_release, "run_analysis", in_process)
    return seen


def _release(capsys, root, project, dataset, name, engine, fields):
    spec = write_spec(root / f"{name}.toml", dataset, name=name, **fields)
    code, out, err = run(capsys, "release", spec, "--project", project, "--out",
                         root / "out" / name, "--engine", engine, "--json")
    assert code == 0, err
    record = json.loads(out)
    path = next(f["path"] for f in record["files"] if f["name"].endswith("manifest.json"))
    return record, json.loads(Path(path).read_text(encoding="utf-8"))


def _project(capsys, root, name):
    project = root / f"{name}.dpstudio"
    if not project.exists():
        assert run(capsys, "project", "init", project, "--epsilon", "100", "--delta",
                   "1e-3")[0] == 0
    return project


def _keys(value, prefix=""):
    """Every key path of a manifest (into objects, not lists)."""
    if not isinstance(value, dict):
        return set()
    out = set()
    for k, v in value.items():
        out.add(prefix + k)
        out |= _keys(v, prefix + k + ".")
    return out


def _shape(manifest):
    """A manifest's fields but the execution's and the list of files read (a folder's);
    ``test_every_release_says_where_its_sums_were_computed`` checks the execution's."""
    return {k for k in _keys(manifest)
            if not k.startswith(("execution.", "dataset.files"))}


def _expected(one, folder, fields, extra):
    """The exact aggregates, computed here from each file's column as the engine reads it
    (whole numbers: no rounding is random; checked with two seeds)."""
    spec = QuerySpec(fields["query"], fields["mechanism"], fields["epsilon"],
                     delta=fields.get("delta", 0.0), bins=fields.get("bins"),
                     column=fields["column"], **extra)
    reader = ("yes_no" if fields["column"] == "diabetes" else
              "category" if "categories" in extra else "numeric")
    whole = read_column(one, "csv", fields["column"], reader)
    parts = folder_values(open_files(folder), fields["column"], reader)
    first, second = (partial_sums(v, spec, SimulationSource(s))
                     for v, s in ((whole, 1), (parts, 2)))
    assert first == second  # the same rows either way, and no rounding is random
    return first


@pytest.mark.parametrize("name", list(QUERIES))
def test_one_spec_four_ways_the_same_sums_scale_charge_and_manifest(
        data, capsys, monkeypatch, threads, name):
    root, one, folder = data
    fields, extra = QUERIES[name]
    seen = _spy(monkeypatch)
    ways = {}
    for dataset, project in ((folder, "folder"), (one, "file")):
        for engine in ("pandas", "dask"):
            ways[f"{project}-{engine}"] = _release(
                capsys, root, _project(capsys, root, project), dataset,
                f"{name}-{project}-{engine}", engine, fields)
    assert len(seen) == 4
    assert all(total == seen[0] for total in seen)  # bit for bit, every way
    assert seen[0] == _expected(one, folder, fields, extra)
    records = {k: r for k, (r, _) in ways.items()}
    manifests = {k: m for k, (_, m) in ways.items()}
    first = records["folder-pandas"]
    for record in records.values():
        assert record["result"]["noise_scale"] == first["result"]["noise_scale"]
        assert (record["epsilon"], record["delta"]) == (first["epsilon"], first["delta"])
        assert record["status"] == "done"
    shape = _shape(manifests["folder-pandas"])
    for way, manifest in manifests.items():
        assert _shape(manifest) == shape, way
        for section in SAME:
            assert manifest[section] == manifests["folder-pandas"][section], (way, section)
        assert manifest["dataset"]["schema"] == manifests["folder-pandas"]["dataset"]["schema"]
        assert manifest["execution"]["engine"] == way.split("-")[1]
    assert manifests["folder-dask"]["execution"]["partitions"] == PARTS
    assert manifests["file-dask"]["execution"]["partitions"] == 1


@pytest.mark.parametrize("way", ["folder-pandas", "folder-dask", "file-dask", "file-pandas"])
def test_every_release_says_where_its_sums_were_computed(data, capsys, threads, way):
    root, one, folder = data
    dataset, engine = (folder if way.startswith("folder") else one), way.split("-")[1]
    fields = QUERIES["count"][0]
    _, manifest = _release(capsys, root, _project(capsys, root, f"where-{way}"), dataset,
                           f"where-{way}", engine, fields)
    execution = manifest["execution"]
    assert set(execution) == EXECUTION
    assert execution["engine"] == engine
    assert execution["partitions"] == (PARTS if way.startswith("folder") else 1)
    assert execution["workers"] >= 1 and execution["threads"] >= 1
    assert execution["memory_bytes"] > 0
    assert (execution["scheduler"] == "local") == (engine == "dask")


@pytest.mark.parametrize("name", ["mean", "variance", "bins", "median", "labels", "yes-no"])
def test_off_the_grid_the_sums_are_equal_with_the_same_seeds(data, name):
    """BMI has one decimal, off every power-of-two grid: the rounding is random, and the
    Dask path's integers equal the in-process path's given the same per-file seeds."""
    root, _, folder = data
    fields, extra = QUERIES[name]
    if "bounds" in extra:
        fields, extra = fields | {"column": "bmi"}, {"bounds": (12, 60)}
    spec = QuerySpec(fields["query"], fields["mechanism"], fields["epsilon"],
                     delta=fields.get("delta", 0.0), bins=fields.get("bins"),
                     column=fields["column"], **extra)
    analysis = AnalysisSpec("central", spec)
    declared = load_schema(root / "health.schema.json").get(spec.column)
    assert reader_of(analysis, declared) == ("yes_no" if name == "yes-no" else
                                             "category" if name == "labels" else "numeric")
    ds = open_files(folder)
    local = sum_on_files(analysis, ds, engine="pandas", declared=declared, seed=5)
    dask = sum_on_files(analysis, ds, engine="dask", declared=declared, seed=5,
                        processes=False)
    assert dask.total == local.total
    other = sum_on_files(analysis, ds, engine="pandas", declared=declared, seed=6)
    if name in ("mean", "variance"):
        assert other.total != local.total  # the rounding does draw: the seeds matter


def test_on_worker_processes_a_count_and_a_histogram_are_the_same(data, capsys,
                                                                    monkeypatch):
    """Once on a cluster of worker processes, reached at its address as an existing
    cluster is (``--scheduler``): each file read, hashed and summed in another process;
    the same integers and the same release as in this process."""
    root, _, folder = data
    seen = _spy(monkeypatch)
    project = _project(capsys, root, "processes")
    with engines.dask_cluster(processes=True, n_workers=2, threads_per_worker=1) as cluster:
        address = cluster.client.scheduler.address
        for name in ("count", "bins"):
            fields = QUERIES[name][0]
            local, _ = _release(capsys, root, project, folder, f"p-{name}-pandas", "pandas",
                                fields)
            dask, manifest = _release(capsys, root, project, folder, f"p-{name}-dask",
                                      "dask", fields | {"scheduler": address})
            assert seen[-1] == seen[-2]
            assert dask["result"]["noise_scale"] == local["result"]["noise_scale"]
            assert (dask["epsilon"], dask["delta"]) == (local["epsilon"], local["delta"])
            assert manifest["execution"]["scheduler"] == address
            assert manifest["execution"]["workers"] == 2
            assert manifest["execution"]["partitions"] == PARTS
