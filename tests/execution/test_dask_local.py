"""Local, shuffle and secure-aggregation protocols on Dask (a LocalCluster of threads).

Each file's rows are randomized on a worker and only the protocol's integer aggregate
comes back; the result has the pandas path's keys; the files' aggregates on the cluster
equal those computed file by file in this process, with the same spawned seeds; a
release makes one OS-CSPRNG source per task; heavy hitters are refused in one sentence.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from dpstudio.analysis import AnalysisSpec, run  # noqa: E402
from dpstudio.cli import main  # noqa: E402
from dpstudio.data.folders import open_files  # noqa: E402
from dpstudio.engine.local.partial import LocalPartial, plan_local  # noqa: E402
from dpstudio.engine.queries import QuerySpec  # noqa: E402
from dpstudio.engine.rng import SecureSource, SimulationSource  # noqa: E402
from dpstudio.execution import local_partitions  # noqa: E402
from dpstudio.execution.engines import ExecutionError, dask_cluster  # noqa: E402
from dpstudio.execution.local_partitions import local_on_files  # noqa: E402
from dpstudio.execution.partitions import folder_values  # noqa: E402
from dpstudio.execution.run import run_on_files, sum_on_files  # noqa: E402


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("local_many")
    rng = np.random.default_rng(5)
    for i in range(4):
        n = 1500 + 400 * i
        age = rng.uniform(0, 100, n)
        age[rng.random(n) < 0.03] = np.nan
        pd.DataFrame({"age": age, "sex": rng.choice(["f", "m", "x", None], n)}).to_parquet(
            root / f"part-{i}.parquet")
    return open_files(root)


@pytest.fixture(scope="module")
def cluster():
    with dask_cluster(processes=False, n_workers=2, threads_per_worker=1) as c:
        yield c


KRR = QuerySpec("histogram", "krr", 1.0, categories=("f", "m"), column="sex")
ANALYSES = [
    ("krr", AnalysisSpec("local", KRR), "category"),
    ("cms", AnalysisSpec("local", QuerySpec("histogram", "cms", 2.0, categories=("f", "m"),
                                            column="sex")), "category"),
    ("duchi", AnalysisSpec("local", QuerySpec("mean", "duchi", 1.0, bounds=(0, 100),
                                              column="age")), "numeric"),
    ("cloak", AnalysisSpec("shuffle", QuerySpec("mean", "cloak", 1.0, delta=1e-6,
                                                bounds=(0, 100), column="age")), "numeric"),
    ("blanket", AnalysisSpec("shuffle", QuerySpec("sum", "blanket", 1.0, delta=1e-6,
                                                  bounds=(0, 100), column="age")), "numeric"),
    ("skellam", AnalysisSpec("distributed", QuerySpec("mean", "skellam", 1.0, delta=1e-6,
                                                      bounds=(0, 100), column="age",
                                                      params={"max_dropouts": 20}),
                             dropouts=12), "numeric"),
]


@pytest.mark.parametrize("name, analysis, reader", ANALYSES, ids=[a[0] for a in ANALYSES])
def test_dask_runs_the_protocol_with_the_pandas_paths_fields(folder, cluster, name,
                                                             analysis, reader):
    out = run_on_files(analysis, folder, SimulationSource(7), seed=11, processes=False)
    pandas = run(analysis, folder_values(folder, analysis.query.column, reader),
                 SimulationSource(7))
    got, want = out.result.to_dict(analyst=True), pandas.to_dict(analyst=True)
    assert got.keys() == want.keys()
    assert got["analyst_only"] == want["analyst_only"]  # clamped and missing: exact counts
    assert (got["n"], got["epsilon"], got["delta"]) == (want["n"], want["epsilon"],
                                                       want["delta"])
    if isinstance(want["stderr"], dict):  # a histogram: per category, plug-in errors
        assert got["stderr"].keys() == want["stderr"].keys() == got["estimate"].keys()
        # KRR plugs its (differently drawn) estimated counts into the variance; CMS's
        # variance does not depend on the counts.
        rel = 0.02 if name == "krr" else 1e-9
        for cell, se in want["stderr"].items():
            assert got["stderr"][cell] == pytest.approx(se, rel=rel), cell
            # the same count within its error
            assert abs(got["estimate"][cell] - want["estimate"][cell]) < 6 * se, cell
    else:
        assert got["stderr"] == pytest.approx(want["stderr"], rel=1e-6)
        # the same sum or mean within its error
        assert abs(got["value"] - want["value"]) < 6 * got["stderr"]
    assert out.execution["engine"] == "dask" and out.execution["partitions"] == 4
    assert out.result.simulated


def test_the_files_aggregates_on_dask_equal_those_in_this_process(folder, cluster):
    plan = plan_local("oue", {"epsilon": 1.0}, categories=("f", "m"),
                      source=SimulationSource(0))
    here, _ = local_on_files(folder, "sex", "category", plan, seed=3)
    there, _ = local_on_files(folder, "sex", "category", plan, client=cluster.client, seed=3)
    assert here == there and here.n == sum(len(pd.read_parquet(f)) for f in folder.files)


def test_only_integer_aggregates_of_the_declared_shape_reach_the_client(
        folder, cluster, monkeypatch):
    import dpstudio.engine.local.partial as partial

    seen = []
    real = partial.add_local_partials

    def spy(parts):
        seen.extend(parts)
        return real(parts)

    monkeypatch.setattr(partial, "add_local_partials", spy)
    plan = plan_local("sue", {"epsilon": 1.0}, categories=("f", "m", "x"),
                      source=SimulationSource(0))
    local_on_files(folder, "sex", "category", plan, client=cluster.client, seed=1)
    assert len(seen) == len(folder.files)
    for part in seen:  # four support counts (three categories and "other"), n and two counts
        assert type(part) is LocalPartial and len(part.counts) == plan.size == 4
        assert all(type(v) is int for v in part.integers())


def test_a_release_draws_from_the_os_csprng_on_every_worker(folder, cluster, monkeypatch):
    made = []
    real = local_partitions.SecureSource

    def counted():
        made.append(1)
        return real()

    monkeypatch.setattr(local_partitions, "SecureSource", counted)
    out = run_on_files(AnalysisSpec("local", KRR), folder, SecureSource(), seed=99,
                       processes=False)  # a seed with a secure source is ignored
    assert len(made) == len(folder.files)
    assert out.result.engine.simulated is False and out.result.records is None


def test_what_does_not_reduce_to_sums_is_refused_in_one_sentence(folder):
    hh = AnalysisSpec("local", QuerySpec("heavy_hitters", "sfp", 2.0, column="sex"))
    with pytest.raises(ExecutionError, match="sequence-fragment puzzle reads every report"):
        run_on_files(hh, folder, SecureSource(), processes=False)
    # The project's exact-sums path stays central: one sentence, before any cluster.
    with pytest.raises(ExecutionError, match="central-model"):
        sum_on_files(AnalysisSpec("local", KRR), folder, engine="pandas")


def test_dpstudio_query_runs_a_local_histogram_on_dask(folder, capsys, monkeypatch):
    from dpstudio.execution import engines

    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)  # threads: quick in tests
    args = ["query", str(folder.source), "--trust-model", "local", "--mechanism", "krr",
            "--query", "histogram", "--column", "sex", "--categories", "f,m",
            "--epsilon", "1", "--simulate", "4", "--json"]
    assert main(args + ["--engine", "dask"]) == 0
    dask = json.loads(capsys.readouterr().out)
    assert main(args + ["--engine", "pandas"]) == 0
    pandas = json.loads(capsys.readouterr().out)
    assert dask.keys() == pandas.keys() and dask["n"] == pandas["n"]
    assert dask["execution"]["engine"] == "dask"
    assert main(args + ["--engine", "dask", "--export-records", "r.csv"]) == 2
    assert "--export-records needs every report" in capsys.readouterr().err


def test_worker_processes_run_the_shuffle_and_secure_sums(folder):
    """The plans travel to a worker process (pickled) and back come only the sums."""
    from dpstudio.engine.distributed.partial import SumPartial, plan_secure_partial
    from dpstudio.engine.shuffle.partial import plan_shuffle_partial
    from dpstudio.execution.local_partitions import sum_protocol_on_files

    rows = sum(len(pd.read_parquet(f)) for f in folder.files)
    runs = [(lambda n: plan_shuffle_partial(n, (0, 100), "cloak", 1.0, 1e-6, "mean"), 0),
            (lambda n: plan_secure_partial(n, (0, 100), "skellam", 1.0, 1e-6, dropouts=5,
                                           max_dropouts=5), 5)]
    with dask_cluster(processes=True, n_workers=1, threads_per_worker=1) as c:
        for make_plan, drops in runs:
            plan, total, files = sum_protocol_on_files(
                folder, "age", make_plan, client=c.client, dropouts=drops, fingerprint=True,
                source=SecureSource())
            assert type(total) is SumPartial and total.n == plan.n == rows
            assert total.survivors == rows - drops and len(files) == len(folder.files)
