"""The Dask execution path on a LocalCluster (threads: quick, nothing left behind).

The exact integer sums from one task per file equal the in-process path's on the same
files; only integer aggregates of the declared shape come back from the workers; the
cluster is closed afterwards; an unreachable scheduler is one sentence.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from dpstudio.analysis import AnalysisSpec, run  # noqa: E402
from dpstudio.data.folders import files_fingerprint, hash_bytes, open_files  # noqa: E402
from dpstudio.engine.queries import QuerySpec  # noqa: E402
from dpstudio.engine.queries.partial import Partial, add_partials, partial_sums  # noqa: E402
from dpstudio.engine.queries.spec import noisy_statistics  # noqa: E402
from dpstudio.engine.rng import SecureSource, SimulationSource  # noqa: E402
from dpstudio.execution import partitions  # noqa: E402
from dpstudio.execution.engines import ExecutionError, dask_cluster  # noqa: E402
from dpstudio.execution.partitions import folder_values, sum_files  # noqa: E402
from dpstudio.execution.run import run_on_files  # noqa: E402
from dpstudio.jobs import Cancelled  # noqa: E402


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    rng = np.random.default_rng(3)
    for i in range(5):
        n = 3000 + 500 * i
        age = rng.integers(-5, 120, n).astype(float)
        age[rng.random(n) < 0.02] = np.nan
        pd.DataFrame({"age": age, "sex": rng.choice(["f", "m", "x", None], n)}).to_parquet(
            root / f"part-{i}.parquet")
    return open_files(root)


@pytest.fixture(scope="module")
def cluster():
    with dask_cluster(processes=False, n_workers=2, threads_per_worker=1) as c:
        yield c


ANALYSES = [
    ("count", QuerySpec("count", "laplace", 1.0, column="age"), "numeric"),
    ("mean", QuerySpec("mean", "laplace", 1.0, bounds=(0, 100), column="age"), "numeric"),
    # Whole numbers and squares on every grid here: no rounding is random, so the sums
    # must agree bit for bit (off the grid, test_partial_sums checks the rounding's law).
    ("variance", QuerySpec("variance", "gaussian", 4.0, delta=1e-6, bounds=(0, 100),
                           column="age"), "numeric"),
    ("bins", QuerySpec("histogram", "laplace", 1.0, bounds=(0, 100), bins=20, column="age"),
     "numeric"),
    ("labels", QuerySpec("histogram", "laplace", 1.0, categories=("f", "m"), column="sex"),
     "category"),
    ("median", QuerySpec("median", "exponential", 1.0, bounds=(0, 100), column="age"),
     "numeric"),
]


@pytest.mark.parametrize("name, spec, reader", ANALYSES, ids=[a[0] for a in ANALYSES])
def test_dask_sums_equal_the_in_process_sums_and_the_release_is_the_same(
        folder, cluster, name, spec, reader):
    total, entries = sum_files(folder, spec.column, reader, spec, client=cluster.client,
                               seed=11, fingerprint=True)
    values = folder_values(folder, spec.column, reader)
    whole = partial_sums(values, spec, SimulationSource(0))  # one partition, in process
    assert (total.sums, total.cells, total.size, total.rows, total.clamped, total.missing) == (
        whole.sums, whole.cells, whole.size, whole.rows, whole.clamped, whole.missing)
    # The fingerprint entries were hashed from the bytes the tasks parsed.
    assert [e.name for e in entries] == [p.name for p in folder.files]
    assert files_fingerprint(entries) == files_fingerprint(
        [hash_bytes(p, p.read_bytes(), folder.files[0].parent) for p in folder.files])
    # Through the analysis layer: the same result as the pandas path, same noise draw.
    analysis = AnalysisSpec("central", spec)
    dask = run_on_files(analysis, folder, SimulationSource(7), seed=11, processes=False)
    pandas = run(analysis, values, SimulationSource(7))
    assert dask.result.to_dict(analyst=True) == pandas.to_dict(analyst=True)
    assert dask.execution["engine"] == "dask" and dask.execution["partitions"] == 5


def test_only_integer_aggregates_of_the_declared_shape_reach_the_client(
        folder, cluster, monkeypatch):
    seen = []
    real = partitions.add_partials

    def spy(parts):
        seen.extend(parts)
        return real(parts)

    monkeypatch.setattr(partitions, "add_partials", spy)
    spec = QuerySpec("mean", "laplace", 1.0, bounds=(0, 100), column="age")
    sum_files(folder, "age", "numeric", spec, client=cluster.client)
    assert len(seen) == len(folder.files)
    names = [n for n, *_ in noisy_statistics(spec)]
    for part in seen:
        assert type(part) is Partial and part.cells == ()
        assert [n for n, _ in part.sums] == names
        assert all(type(v) is int for v in part.integers())


def test_a_release_draws_from_the_os_csprng_on_every_worker(folder, cluster, monkeypatch):
    spec = QuerySpec("mean", "laplace", 1.0, bounds=(0, 100), column="age")
    made = []
    real = partitions.SecureSource

    def counted():
        made.append(threading.get_ident())
        return real()

    monkeypatch.setattr(partitions, "SecureSource", counted)
    out = run_on_files(AnalysisSpec("central", spec), folder, SecureSource(), seed=99,
                       processes=False)  # a seed with a secure source is ignored
    assert len(made) == len(folder.files)  # one fresh CSPRNG per task, none shipped
    assert out.result.engine.simulated is False


def test_the_local_cluster_is_closed_afterwards(folder, monkeypatch):
    import time

    import distributed

    started = []

    class Recorded(distributed.LocalCluster):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            started.append(self)

    monkeypatch.setattr(distributed, "LocalCluster", Recorded)
    before = {t.ident for t in threading.enumerate()}
    spec = QuerySpec("count", "laplace", 1.0, column="age")
    run_on_files(AnalysisSpec("central", spec), folder, SecureSource(), processes=False)
    assert len(started) == 1 and started[0].status.name == "closed"
    assert not started[0].scheduler_info.get("workers")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # daemon threads too: nothing of it left running
        # (distributed's one offload pool is process-wide, shared by every client)
        left = [t.name for t in threading.enumerate() if t.ident not in before
                and not t.name.startswith("Dask-Offload")]
        if not left:
            break
        time.sleep(0.05)
    assert not left


def test_an_unreachable_scheduler_is_one_sentence():
    with pytest.raises(ExecutionError, match="cannot reach the Dask scheduler at "
                                             "tcp://127.0.0.1:9") as err:
        with dask_cluster("tcp://127.0.0.1:9", timeout=0.5):
            pass
    assert "\n" not in str(err.value)


def test_a_cancelled_sum_stops_before_any_noise(folder, cluster):
    class Stop:
        def progress(self, *_):
            pass

        def cancelled(self):
            return True

    spec = QuerySpec("count", "laplace", 1.0, column="age")
    with pytest.raises(Cancelled):
        sum_files(folder, "age", "numeric", spec, client=cluster.client, state=Stop())


def test_unsupported_analyses_are_refused_in_one_sentence(folder):
    q = QuerySpec("heavy_hitters", "sfp", 1.0, column="sex")
    with pytest.raises(ExecutionError, match="dask engine does not run heavy hitters"):
        run_on_files(AnalysisSpec("local", q), folder, SecureSource(), processes=False)


def test_a_bad_file_is_the_loaders_one_line(tmp_path, cluster):
    pd.DataFrame({"age": [1.0]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"age": ["x"]}).to_parquet(tmp_path / "b.parquet")
    ds = open_files(tmp_path)
    spec = QuerySpec("sum", "laplace", 1.0, bounds=(0, 1), column="age")
    with pytest.raises(Exception, match="not numeric"):
        sum_files(ds, "age", "numeric", spec, client=cluster.client)
    assert add_partials([]) == Partial()
