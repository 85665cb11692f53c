"""Faults on the Dask path (issue 16): a worker lost mid-query is rerun elsewhere and the
release is right, or the release is one line and nothing is charged or written; a
cancelled release draws no noise and charges nothing; nothing of a cluster is left
running afterwards (threads of this process, worker processes).

Workers die for real here: a task closes its own worker (a threads cluster) or ends its
own process (a processes cluster) the first time it runs, and returns nonsense from the
attempt that dies, so a release that kept that attempt's result would be wrong.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import multiprocessing
import os
import threading
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import dask  # noqa: E402  (after distributed: its config defaults are loaded then)

from dpstudio.cli import main  # noqa: E402
from dpstudio.engine.queries import QuerySpec  # noqa: E402
from dpstudio.engine.queries.partial import partial_sums  # noqa: E402
from dpstudio.engine.rng import SimulationSource  # noqa: E402
from dpstudio.execution import engines, futures, partitions  # noqa: E402
from dpstudio.execution import run as execution_run  # noqa: E402
from dpstudio.execution.engines import ExecutionError, dask_cluster  # noqa: E402
from dpstudio.jobs import Cancelled  # noqa: E402
from dpstudio.project import Project, load_spec  # noqa: E402

KILLED = "part-1.parquet"  # the file whose task loses its worker
SPEC = {"column": "score", "query": "sum", "mechanism": "laplace", "epsilon": 0.25}


def _own_threads() -> set[int]:
    return {t.ident for t in threading.enumerate()}


pytestmark = pytest.mark.usefixtures("nothing_left_running")


@pytest.fixture
def env(tmp_path, monkeypatch, capsys):
    """A folder of 4 Parquet files (whole numbers: the rounding is exact, the sums
    deterministic), its sidecar, a project with one release already charged, and
    clusters of 2 single-thread workers (threads unless a test says otherwise)."""
    monkeypatch.setattr(engines, "LOCAL_PROCESSES", False)
    monkeypatch.setattr(execution_run, "dask_cluster", functools.partial(
        engines.dask_cluster, n_workers=2, threads_per_worker=1))
    work, markers = tmp_path / "work", tmp_path / "markers"
    folder = work / "scores"
    folder.mkdir(parents=True)
    markers.mkdir()
    rng = np.random.default_rng(21)
    for i in range(4):
        score = rng.integers(-20, 130, 2000).astype(float)
        score[rng.random(2000) < 0.05] = np.nan
        pd.DataFrame({"score": score}).to_parquet(folder / f"part-{i}.parquet")
    (work / "scores.schema.json").write_text(json.dumps(
        {"schema_version": 1, "columns": [{"name": "score", "type": "numeric", "lower": 0,
                                           "upper": 100}]}))
    project = work / "p.dpstudio"
    assert _cli(capsys, "project", "init", project, "--epsilon", "5")[0] == 0
    spec = _spec(work, folder, "first")
    code, _, err = _cli(capsys, "release", spec, "--project", project, "--out", work / "out",
                        "--engine", "pandas")
    assert code == 0, err
    return work, folder, project, markers


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _spec(work: Path, folder: Path, name: str) -> Path:
    path = work / f"{name}.toml"
    lines = ["schema_version = 1", f"dataset = {json.dumps(str(folder))}",
             f"name = {json.dumps(name)}"] + [f"{k} = {json.dumps(v)}" for k, v in SPEC.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _expected(folder: Path):
    """The folder's exact integer aggregates, computed here from the whole column."""
    values = pd.concat([pd.read_parquet(f) for f in sorted(folder.glob("*.parquet"))])
    spec = QuerySpec("sum", "laplace", 0.25, bounds=(0, 100), column="score")
    one, other = (partial_sums(values["score"].to_numpy(), spec, SimulationSource(s))
                  for s in (1, 2))
    assert one == other  # on the grid: no rounding is random, the sums are the data's
    return one


def _snapshot(work: Path, project: Path):
    """The ledger, the budget left and every file under the working folder."""
    with Project.open(project) as p:
        ledger = [(r.id, r.status, r.epsilon) for r in p.ledger()]
        remaining = [p.remaining(d) for d in p.datasets()]
    files = sorted(str(f.relative_to(work)) for f in work.rglob("*")
                   if not f.name.endswith((".lock", "-journal", "-wal", "-shm")))
    return ledger, remaining, files


@contextlib.contextmanager
def _printed_by_distributed():
    """What Dask would print on the terminal: outside pytest, distributed prints its log
    lines through a handler of its own on the ``distributed`` logger (under pytest, whose
    handler is on the root logger, it adds none); one like it, printing to a string."""
    import logging

    printed = io.StringIO()
    handler = logging.StreamHandler(printed)
    logger = logging.getLogger("distributed")
    logger.addHandler(handler)
    try:
        yield printed
    finally:
        logger.removeHandler(handler)


def _capture_totals(monkeypatch):
    """The exact aggregates each release's noise is drawn for (never exported)."""
    seen = []
    real = execution_run.result_from_sums

    def spy(analysis, total, source, notes=()):
        seen.append(total)
        return real(analysis, total, source, notes)

    monkeypatch.setattr(execution_run, "result_from_sums", spy)
    return seen


def _nonsense(partial):
    """What the attempt that dies returns: kept, it would make the release wrong."""
    return dataclasses.replace(partial, sums=tuple((n, v * 1000 + 7) for n, v in partial.sums),
                               size=partial.size + 1)


def _closing_own_worker(markers: str, every_time: bool = False):
    """``file_partial`` whose task for :data:`KILLED` closes the worker it runs on (the
    first time, or every time), then returns nonsense from the dying worker."""
    real = partitions.file_partial

    def task(*args):
        partial, entry = real(*args)
        marker = Path(markers) / f"{Path(args[0]).name}.{len(os.listdir(markers))}"
        if Path(args[0]).name == KILLED and (every_time or not os.listdir(markers)):
            marker.touch()
            worker = distributed.get_worker()
            worker.loop.add_callback(worker.close, executor_wait=False)
            deadline = time.monotonic() + 10
            while worker.status.name != "closed" and time.monotonic() < deadline:
                time.sleep(0.01)
            return _nonsense(partial), entry
        return partial, entry

    return task


def _ending_own_process(markers: str):
    """``file_partial`` whose task for :data:`KILLED` ends its worker's process the first
    time it runs (the nanny starts another; the scheduler reruns the task)."""
    real = partitions.file_partial

    def task(*args):
        if Path(args[0]).name == KILLED and not os.listdir(markers):
            (Path(markers) / "killed").touch()
            os._exit(1)  # the worker process dies here, mid-query, without a word
        return real(*args)

    return task


def test_a_worker_closed_mid_query_is_rerun_and_the_release_is_right(env, capsys,
                                                                       monkeypatch):
    work, folder, project, markers = env
    totals = _capture_totals(monkeypatch)
    monkeypatch.setattr(partitions, "file_partial", _closing_own_worker(str(markers)))
    spec = _spec(work, folder, "rerun")
    ledger, remaining, _ = _snapshot(work, project)
    with _printed_by_distributed() as printed:
        code, out, err = _cli(capsys, "release", spec, "--project", project, "--out",
                              work / "out", "--engine", "dask", "--json")
    assert code == 0, err
    assert printed.getvalue() == ""
    assert len(os.listdir(markers)) == 1  # a worker did die under the task
    assert totals == [_expected(folder)]  # the rerun's sums, never the dying attempt's
    record = json.loads(out)
    assert record["status"] == "done" and record["epsilon"] == 0.25
    after, left, _ = _snapshot(work, project)
    assert after[:-1] == ledger and after[-1][1:] == ("done", Decimal("0.25"))
    assert left[0][0] == remaining[0][0] - Decimal("0.25")  # charged once


def test_a_worker_process_killed_mid_query_is_rerun(env, capsys, monkeypatch):
    """Once with worker processes: one ends itself mid-task, the nanny starts another."""
    work, folder, project, markers = env
    monkeypatch.setattr(engines, "LOCAL_PROCESSES", True)
    totals = _capture_totals(monkeypatch)
    monkeypatch.setattr(partitions, "file_partial", _ending_own_process(str(markers)))
    code, out, err = _cli(capsys, "release", _spec(work, folder, "proc"), "--project",
                          project, "--out", work / "out", "--engine", "dask", "--json")
    assert code == 0, err
    assert os.listdir(markers) == ["killed"]
    assert totals == [_expected(folder)]
    manifest = next(f["path"] for f in json.loads(out)["files"]
                    if f["name"].endswith("manifest.json"))
    execution = json.loads(Path(manifest).read_text(encoding="utf-8"))["execution"]
    assert execution["engine"] == "dask" and execution["workers"] == 2
    assert execution["partitions"] == 4


def test_a_task_whose_workers_die_past_the_allowed_failures_is_one_line_charging_nothing(
        env, capsys, monkeypatch):
    work, folder, project, markers = env
    totals = _capture_totals(monkeypatch)
    monkeypatch.setattr(partitions, "file_partial",
                        _closing_own_worker(str(markers), every_time=True))
    spec = _spec(work, folder, "killed")
    before = _snapshot(work, project)
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            _printed_by_distributed() as printed:
        code, _, err = _cli(capsys, "release", spec, "--project",
                            project, "--out", work / "out", "--engine", "dask")
    assert code == 2 and err.count("\n") == 1, err
    assert printed.getvalue() == ""  # Dask's own log lines are not printed around it
    assert "KilledWorker: a worker died all 2 times it ran one of the query's tasks" in err
    assert "nothing was released" in err
    assert len(os.listdir(markers)) == 2  # both workers died under the task
    assert totals == []  # no noise drawn
    assert _snapshot(work, project) == before  # no ledger row, same budget, no file


def test_a_cluster_left_without_workers_is_one_line(env, capsys, monkeypatch):
    """The one worker dies and nothing replaces it: the tasks would wait forever."""
    work, folder, project, markers = env
    monkeypatch.setattr(execution_run, "dask_cluster", functools.partial(
        engines.dask_cluster, n_workers=1, threads_per_worker=1))
    monkeypatch.setattr(futures, "NO_WORKER_SECONDS", 0.3)
    monkeypatch.setattr(futures, "WORKER_CHECK_SECONDS", 0.05)
    monkeypatch.setattr(partitions, "file_partial", _closing_own_worker(str(markers)))
    spec = _spec(work, folder, "orphan")
    before = _snapshot(work, project)
    answer = []
    # In a thread: a release waiting forever for a worker fails this test, never hangs it.
    release = threading.Thread(target=lambda: answer.append(_cli(
        capsys, "release", spec, "--project", project, "--out", work / "out", "--engine",
        "dask")), daemon=True)
    release.start()
    release.join(timeout=20)
    assert answer, "the release still waits for a worker"
    code, _, err = answer[0]
    assert code == 2 and err.count("\n") == 1, err
    assert "the Dask cluster has had no workers for 0.3 s; nothing was released" in err
    assert _snapshot(work, project) == before


def _slow_after_first():
    """``file_partial`` taking its time on every file but the first (still pending when
    the first is done)."""
    real = partitions.file_partial

    def task(*args):
        if Path(args[0]).name != "part-0.parquet":
            time.sleep(0.3)
        return real(*args)

    return task


class _CancelAfterFirst:
    """A state the user cancels once the first file is summed (mid-sum)."""

    def __init__(self):
        self.done = 0

    def progress(self, fraction, message=""):
        self.done += 1

    def cancelled(self):
        return self.done >= 1


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_cancelled_release_draws_nothing_charges_nothing_and_writes_nothing(
        env, monkeypatch, engine):
    work, folder, project, _ = env
    totals = _capture_totals(monkeypatch)
    state = _CancelAfterFirst()
    real = execution_run.sum_on_files
    # The application's release job gives its state to the project's release, which
    # hands it to sum_where_data_is; here it is given where the sums are computed.
    monkeypatch.setattr(execution_run, "sum_on_files",
                        lambda *a, **k: real(*a, **(k | {"state": state})))
    monkeypatch.setattr(partitions, "file_partial", _slow_after_first())
    spec = dataclasses.replace(load_spec(_spec(work, folder, f"cancel-{engine}")),
                               engine=engine)
    before = _snapshot(work, project)
    with Project.open(project) as p, pytest.raises(Cancelled):
        p.release(spec, work / "out-cancelled")
    assert state.done == 1  # cancelled mid-sum: one file summed, the others pending
    assert totals == []  # no noise drawn
    assert _snapshot(work, project) == before  # nothing charged, no folder, no file


def test_an_unreachable_scheduler_leaves_no_client_thread_behind(left_running):
    before = _own_threads()
    with pytest.raises(ExecutionError, match="cannot reach the Dask scheduler"):
        with dask_cluster("tcp://127.0.0.1:9", timeout=0.3):
            pass
    assert left_running(before, wait=1.0) == []


def test_a_local_cluster_of_processes_is_gone_after_the_block(left_running):
    before = _own_threads()
    with dask_cluster(processes=True, n_workers=1, threads_per_worker=1) as cluster:
        assert cluster.client.submit(sum, [2, 3]).result() == 5
        assert multiprocessing.active_children()
    assert left_running(before) == []


class _Lost:
    """A future whose task finished, then lost its result with its worker: done at
    first sight, then computed again (its result ready on a later round)."""

    def __init__(self, value, lost_rounds):
        self.value, self.lost, self.status = value, lost_rounds, "finished"

    def done(self):
        return True

    def result(self, timeout=None):
        if timeout is None:
            raise AssertionError("a blocking wait: it never ends if no worker is left")
        if self.lost:
            self.lost -= 1
            raise TimeoutError()
        return self.value


class _Client:
    def __init__(self, futures):
        self.futures, self.cancelled = futures, []

    def submit(self, fn, *args, **kwargs):
        return self.futures[args[0]]

    def cancel(self, futures):
        self.cancelled.extend(futures)

    def nthreads(self):
        return {"w": 1}


def test_a_result_lost_after_its_task_finished_is_waited_for_again_never_blocked_on():
    client = _Client([_Lost(10, 0), _Lost(11, 3), _Lost(12, 1)])
    state = _Progress()
    assert futures.gather_tasks(client, None, [(0,), (1,), (2,)], state, "x") == [10, 11, 12]
    assert state.fractions[-1] == 1.0 and client.cancelled == []


def test_a_failed_task_is_the_answer_before_results_that_were_lost():
    class Failed(_Lost):
        def result(self, timeout=None):
            raise distributed.KilledWorker("dpstudio-1", None, 1)

    lost, failed = _Lost(10, 10**6), Failed(None, 0)
    failed.status = "error"
    client = _Client([lost, failed])
    with pytest.raises(ExecutionError, match="KilledWorker: a worker died all 2 times"):
        futures.gather_tasks(client, None, [(0,), (1,)], None, "x")
    assert lost.lost == 10**6  # never waited for
    assert client.cancelled


class _Progress:
    def __init__(self):
        self.fractions = []

    def progress(self, fraction, message=""):
        self.fractions.append(fraction)

    def cancelled(self):
        return False
