"""Local-model releases from a folder, and from one file on Dask, through the project
(issue 16): each file's rows are randomized where they are, each task from its own OS
CSPRNG; only the reports' integer tallies come back; the estimator runs once, in the
charge step. The charge, the stored loss, the manifest's fields and the files are those
of the same release from one file in pandas, except the collector's records: none exist,
and the manifest says so.

A release has no seed, so the estimates are compared with the exact variance of each
estimator (closed forms below, on the sample's known rows), not with each other.
"""

from __future__ import annotations

import functools
import json
import math
import shutil
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from dps_project_helpers import folder_state, run, write_spec  # noqa: E402

from dpstudio.analysis import AnalysisSpec  # noqa: E402
from dpstudio.analysis.capabilities import release_refusal  # noqa: E402
from dpstudio.data import sample_path  # noqa: E402
from dpstudio.engine.queries import QuerySpec  # noqa: E402
from dpstudio.engine.rng import SecureSource  # noqa: E402
from dpstudio.execution import engines, local_partitions  # noqa: E402
from dpstudio.execution import run as execution_run  # noqa: E402
from dpstudio.jobs import Cancelled  # noqa: E402
from dpstudio.project import Project, load_spec, release_files  # noqa: E402

FILES = 3
TOTAL_EPSILON = 3
CATEGORIES = ["Arts", "Business", "Engineering", "Law", "Medicine", "Science"]
KRR = {"column": "faculty", "query": "histogram", "mechanism": "krr", "epsilon": 1.0}
DUCHI = {"column": "hours_studied_per_week", "query": "mean", "mechanism": "duchi",
         "epsilon": 1.0}
LOW, HIGH = 0.0, 80.0  # hours_studied_per_week's declared bounds (the sidecar)
#: (dataset, engine): the folder on both engines, the same rows as one file on both.
WAYS = (("folder", "pandas"), ("folder", "dask"), ("one", "pandas"), ("one", "dask"))


pytestmark = pytest.mark.usefixtures("nothing_left_running")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The survey sample as one CSV (with its sidecar) and its rows as a folder of three
    Parquet files (the same sidecar beside the folder)."""
    root = tmp_path_factory.mktemp("local-folder")
    src = sample_path("survey")
    sidecar = src.with_name(src.name + ".schema.json")
    one = root / "survey.csv"
    shutil.copyfile(src, one)
    shutil.copyfile(sidecar, root / "survey.csv.schema.json")
    folder = root / "survey"
    folder.mkdir()
    frame = pd.read_csv(one)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), FILES)):
        frame.iloc[part].to_parquet(folder / f"part-{i}.parquet", index=False)
    shutil.copyfile(sidecar, root / "survey.schema.json")
    return root, {"one": one, "folder": folder}, frame


@pytest.fixture
def threads(monkeypatch):
    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)
    monkeypatch.setattr(execution_run, "dask_cluster", functools.partial(
        engines.dask_cluster, n_workers=2, threads_per_worker=1))


@pytest.fixture
def sources(monkeypatch):
    """The random source every file's task randomized with (threads: same process)."""
    seen = []
    real = local_partitions._source

    def spy(seed):
        source = real(seed)
        seen.append(source)
        return source

    monkeypatch.setattr(local_partitions, "_source", spy)
    return seen


def _project(capsys, root: Path, name: str) -> Path:
    project = root / f"{name}.dpstudio"
    code, _, err = run(capsys, "project", "init", project, "--epsilon", str(TOTAL_EPSILON),
                       "--delta", "1e-5", "--relation", "replace")
    assert code == 0, err
    return project


def _release(capsys, root, dataset, engine, name, fields):
    project = _project(capsys, root, name)
    spec = write_spec(root / f"{name}.toml", dataset, name=name, trust_model="local",
                      formats=["csv", "json"], engine=engine, **fields)
    out = root / "out" / name
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out,
                          "--json")
    assert code == 0, err
    record = json.loads(text)
    manifest = json.loads(next(out.glob("*.manifest.json")).read_text(encoding="utf-8"))
    rows = json.loads(next(p for p in out.glob("*.json") if not p.name.endswith(
        (".manifest.json", ".records.json"))).read_text(encoding="utf-8"))["rows"]
    return project, out, record, manifest, rows


def _keys(value, prefix=""):
    if not isinstance(value, dict):
        return set()
    out = set()
    for k, v in value.items():
        out.add(prefix + k)
        out |= _keys(v, prefix + k + ".")
    return out


def _shape(manifest):
    """A manifest's field paths but where it ran, which files it read, and what it says of
    the records (the only fields a release computed where the data is may differ in)."""
    return {k for k in _keys(manifest) if not k.startswith(("execution.", "dataset.files"))
            and k not in ("local.records", "local.records_note")}


def _krr_exact_sd(frame) -> dict[str, float]:
    """K-RR's count estimator ĉ_v = (C_v − n q)/(p − q): Var C_v = c_v p(1−p) + (n − c_v)
    q(1−q) on the sample's true counts (k = 6 declared cells + "other")."""
    k, e = len(CATEGORIES) + 1, math.e
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    n = len(frame)
    counts = frame["faculty"].value_counts()
    out = {}
    for cell in CATEGORIES + ["(other or missing)"]:
        c = float(counts.get(cell, 0))
        out[cell] = math.sqrt(c * p * (1 - p) + (n - c) * q * (1 - q)) / (p - q)
    return out


def _duchi_exact(frame) -> tuple[float, float]:
    """Duchi's mean on [−1, 1]: each report ±B with mean t_i, variance B² − t_i²; the mean
    and its exact standard deviation, mapped back to the declared bounds."""
    x = np.clip(frame["hours_studied_per_week"].to_numpy(float), LOW, HIGH)
    t = 2 * (x - LOW) / (HIGH - LOW) - 1
    b = (math.e + 1) / (math.e - 1)
    half = (HIGH - LOW) / 2
    return float(x.mean()), half * math.sqrt(float(np.sum(b * b - t * t))) / t.size


@pytest.mark.parametrize("fields", [KRR, DUCHI], ids=["krr-histogram", "duchi-mean"])
def test_a_local_release_from_a_folder_is_the_one_file_release(
        data, capsys, threads, sources, fields):
    root, datasets, frame = data
    ways = {}
    for dataset, engine in WAYS:
        before = len(sources)
        name = f"{fields['mechanism']}-{dataset}-{engine}"
        ways[dataset, engine] = _release(capsys, root, datasets[dataset], engine, name,
                                         fields)
        tasks = sources[before:]
        if (dataset, engine) == ("one", "pandas"):
            assert tasks == []  # read in-process: run_local, records and all
        else:  # one task per file, each from its own OS CSPRNG (no seed shipped)
            assert len(tasks) == (FILES if dataset == "folder" else 1)
            assert all(isinstance(s, SecureSource) for s in tasks)
            assert len({id(s) for s in tasks}) == len(tasks)
    reference = ways["one", "pandas"]
    for (dataset, engine), (project, _, record, manifest, rows) in ways.items():
        where = f"{dataset}/{engine}"
        # One charge: the engine object's (ε, δ), on the ledger and in the manifest.
        assert (record["epsilon"], record["delta"]) == (1.0, 0.0), where
        assert manifest["privacy"] == reference[3]["privacy"], where
        with Project.open(project) as p:
            (released,) = p.ledger()
            assert (released.epsilon, released.delta) == (Decimal(1), Decimal(0))
            assert released.loss == reference_loss(reference), where
            assert p.remaining(released.dataset_id) == (Decimal(TOTAL_EPSILON) - 1,
                                                        Decimal("1e-5"))
        assert _shape(manifest) == _shape(reference[3]), where
        assert manifest["mechanism"] == reference[3]["mechanism"], where
        assert manifest["local"]["reports"] == len(frame)
        assert set(manifest["execution"]) == {"engine", "scheduler", "workers", "threads",
                                              "memory_bytes", "partitions"}, where
        assert manifest["execution"]["engine"] == engine
        if dataset == "folder":
            assert manifest["execution"]["partitions"] == FILES
            assert [f["name"] for f in manifest["dataset"]["files"]] == [
                f"part-{i}.parquet" for i in range(FILES)]
            assert manifest["dataset"]["fingerprint_algorithm"] == "files-sha256-v1"
        # The estimate, against the truth, from the exact variance of the estimator.
        if fields["query"] == "histogram":
            sd, truth = _krr_exact_sd(frame), frame["faculty"].value_counts()
            assert [r["cell"] for r in rows] == list(sd)
            for r in rows:
                assert abs(r["value"] - truth.get(r["cell"], 0)) <= 4.5 * sd[r["cell"]], r
                # The published standard error: the plug-in of the same variance (estimated
                # counts in place of the true ones, hence the loose tolerance).
                assert r["std_error"] == pytest.approx(sd[r["cell"]], rel=0.15)
        else:
            mean, sd = _duchi_exact(frame)
            (r,) = rows
            assert abs(r["value"] - mean) <= 4.5 * sd, (r, mean, sd)
            assert r["std_error"] == pytest.approx(sd, rel=0.05)
    if fields["mechanism"] == "krr":
        assert reference_loss(reference)["mechanism"] == "randomized_response"
        assert reference_loss(reference)["k"] == len(CATEGORIES) + 1


def reference_loss(way) -> dict:
    with Project.open(way[0]) as p:
        return p.ledger()[0].loss


def test_no_records_leave_a_file_and_the_manifest_says_so(data, capsys, threads):
    root, datasets, _ = data
    for dataset, engine in (("folder", "pandas"), ("one", "dask")):
        name = f"records-{dataset}-{engine}"
        project, out, _, manifest, _ = _release(capsys, root, datasets[dataset], engine,
                                                name, KRR)
        assert not [n for n in folder_state(out) if ".records." in n]
        assert manifest["local"]["records"] is None
        assert manifest["local"]["records_note"] == release_files.NO_RECORDS
        assert release_files.NO_RECORDS.count(". ") == 0  # one sentence
        assert manifest["local"]["record_columns"] == []
        assert not [f for f in manifest["files"] if f["role"].startswith("records/")]
        with Project.open(project) as p:
            assert {f.name for f in p.ledger()[0].files} == set(folder_state(out))
    # The one-file pandas release still exports what its collector received.
    _, out, _, manifest, _ = _release(capsys, root, datasets["one"], "pandas",
                                      "records-one-pandas", KRR)
    assert [n for n in folder_state(out) if ".records." in n]
    assert "records" not in manifest["local"]


@pytest.mark.parametrize("trust_model", ["shuffle", "distributed"])
def test_shuffle_and_secure_aggregation_on_a_folder_get_the_projects_sentence(
        data, capsys, trust_model):
    root, datasets, _ = data
    mechanism = "cloak" if trust_model == "shuffle" else "secagg_gaussian"
    analysis = AnalysisSpec(trust_model, QuerySpec("sum", mechanism, 1.0,
                                                   column="hours_studied_per_week"))
    assert release_refusal(analysis) is None  # released from one file (issue 14) ...
    sentence = release_files.files_refusal(analysis)  # ... but not from a folder yet
    assert sentence and "release it from one file" in sentence and "\n" not in sentence
    project = _project(capsys, root, f"refused-{trust_model}")
    spec = write_spec(root / f"refused-{trust_model}.toml", datasets["folder"],
                      column="hours_studied_per_week", trust_model=trust_model)
    code, _, err = run(capsys, "release", spec, "--project", project, "--out",
                       root / "out" / f"refused-{trust_model}")
    assert code != 0
    assert "exact sums of a folder" not in err and "dask engine" not in err
    assert len(err.strip().splitlines()) == 1, err
    with Project.open(project) as p:
        assert p.ledger() == []


class _CancelAfterFirstFile:
    """A state that cancels once the first file is randomized."""

    def __init__(self) -> None:
        self.seen = 0

    def progress(self, fraction, text=""):
        self.seen += 1

    def cancelled(self) -> bool:
        return self.seen > 0


def test_a_cancelled_local_folder_release_charges_and_writes_nothing(data, capsys):
    root, datasets, _ = data
    project = _project(capsys, root, "cancelled")
    spec = load_spec(write_spec(root / "cancelled.toml", datasets["folder"],
                                trust_model="local", engine="pandas", **KRR))
    out = root / "out" / "cancelled"
    with Project.open(project) as p:
        with pytest.raises(Cancelled):
            p.release(spec, out, state=_CancelAfterFirstFile())
        assert p.ledger() == [] and p.datasets() == []
    assert folder_state(out) == {}


def test_dpstudio_release_of_a_local_folder_spec_end_to_end(data, capsys):
    root, datasets, _ = data
    project = _project(capsys, root, "cli")
    spec = write_spec(root / "cli.toml", datasets["folder"], trust_model="local",
                      report=True, **DUCHI)
    out = root / "out" / "cli"
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 0, err
    assert "release #1 done" in text
    names = set(folder_state(out))
    stem = "r0001-mean-hours_studied_per_week"
    assert names == {f"{stem}{x}" for x in (".csv", ".json", ".report.html", ".report.pdf",
                                             ".manifest.json")}
    code, text, err = run(capsys, "verify", out / f"{stem}.manifest.json")
    assert code == 0, err + text
    # A script for a local folder release does not exist yet: one sentence, nothing spent.
    spec = write_spec(root / "cli-script.toml", datasets["folder"], trust_model="local",
                      script=True, **DUCHI)
    code, _, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code != 0 and "no script yet" in err and len(err.strip().splitlines()) == 1
    with Project.open(project) as p:
        assert len(p.ledger()) == 1


def test_what_a_folder_does_not_release_is_refused_in_one_line(data, capsys):
    """A model is neither central sums nor local tallies: refused before any file is read,
    in the project's sentence, nothing registered or charged."""
    root, datasets, _ = data
    project = _project(capsys, root, "model")
    spec = write_spec(root / "model.toml", datasets["folder"], column="cheated_on_exam",
                      query="logistic_regression", mechanism="dp_erm_logistic",
                      epsilon=1.0, features=["hours_studied_per_week", "gpa"],
                      params={"lambda": 0.05})
    code, _, err = run(capsys, "release", spec, "--project", project, "--out",
                       root / "out" / "model")
    assert code == 2 and err.count("\n") == 1, err
    assert "or a local-model histogram or mean for now, not a model" in err
    with Project.open(project) as p:
        assert p.ledger() == [] and p.datasets() == []
