"""Every wait on Dask ends (round 25): a local cluster that does not start, a scheduler that
stops answering, a cancel while a cluster starts or while the scheduler stalls. Each is
one sentence (or the job's Cancelled) within a bound, never a caller held for ever (a
window's job, and a test fixture waiting for it, hung a whole run on a loaded 2-core CI).

The stalls are simulated: a ``LocalCluster`` whose start waits on a gate, and a real
threads cluster whose scheduler handler answers only after seconds (the event loop stays
free, as on a machine too loaded to schedule the scheduler)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")

from dpstudio.execution import engines, futures  # noqa: E402
from dpstudio.execution.engines import ExecutionError, dask_cluster  # noqa: E402
from dpstudio.jobs import Cancelled  # noqa: E402

pytestmark = pytest.mark.usefixtures("nothing_left_running")

#: How long a simulated stall lasts: far past every bound the fixes set in these tests.
STALL_SECONDS = 4.0


class _CancelAfter:
    """A job state cancelled ``seconds`` after it is made."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def cancelled(self) -> bool:
        return time.monotonic() >= self.at

    def progress(self, fraction: float, message: str = "") -> None:
        pass


class _Made:
    """A stand-in cluster or client: records that it was closed."""

    def __init__(self) -> None:
        self.closed = threading.Event()

    def close(self, timeout=None) -> None:
        self.closed.set()


@pytest.fixture
def slow_start(monkeypatch):
    """``LocalCluster`` starts only once the returned gate is set (or after the stall);
    the stand-ins it made are in the returned list."""
    gate, made = threading.Event(), []

    def stalled(*args, **kwargs):
        gate.wait(STALL_SECONDS)
        made.append(_Made())
        return made[-1]

    def connect(target, timeout=None):
        made.append(_Made())
        return made[-1]

    monkeypatch.setattr(distributed, "LocalCluster", stalled)
    monkeypatch.setattr(engines, "_connect", connect)
    yield gate, made
    gate.set()


def test_a_local_cluster_that_does_not_start_is_one_sentence_within_its_bound(
        slow_start, monkeypatch):
    gate, made = slow_start
    monkeypatch.setattr(engines, "START_SECONDS", 0.5)
    t0 = time.monotonic()
    with pytest.raises(ExecutionError) as err:
        with dask_cluster(processes=False):
            pass
    assert time.monotonic() - t0 < 2.0
    assert str(err.value) == ("the local Dask cluster did not start within 0.5 s; "
                              "nothing was run")
    # The start given up on ends later: what it made is closed then, by its own thread.
    gate.set()
    deadline = time.monotonic() + 5
    while len(made) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(made) == 2
    assert all(m.closed.wait(5) for m in made)


def test_a_cancel_while_the_local_cluster_starts_is_seen_at_once(slow_start):
    gate, made = slow_start
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        with dask_cluster(processes=False, state=_CancelAfter(0.2)):
            pass
    assert time.monotonic() - t0 < 1.5  # the start's own bound is a minute
    gate.set()
    deadline = time.monotonic() + 5
    while len(made) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(made) == 2 and all(m.closed.wait(5) for m in made)


def test_a_start_that_fails_is_still_one_sentence(monkeypatch):
    def refused(*args, **kwargs):
        raise OSError("no free port\nsecond line")

    monkeypatch.setattr(distributed, "LocalCluster", refused)
    with pytest.raises(ExecutionError) as err:
        with dask_cluster(processes=False):
            pass
    assert str(err.value) == "could not start a local Dask cluster (no free port)"


def _stall(cluster, handler: str) -> threading.Event:
    """The running scheduler's ``handler`` answers only after :data:`STALL_SECONDS` (or
    once the returned event is set); its event loop stays free meanwhile."""
    scheduler = cluster.scheduler
    real, release = scheduler.handlers[handler], threading.Event()

    async def slow(*args, **kwargs):
        deadline = time.monotonic() + STALL_SECONDS
        while not release.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        out = real(*args, **kwargs)
        return await out if asyncio.iscoroutine(out) else out

    scheduler.handlers[handler] = slow
    return release


def test_a_scheduler_that_stops_answering_is_one_sentence(monkeypatch):
    monkeypatch.setattr(engines, "ASK_SECONDS", 0.5)
    real_connect, releases = engines._connect, []

    def connect_then_stall(target, timeout=None):
        client = real_connect(target, timeout)
        releases.append(_stall(target, "identity"))  # after the client's own handshake
        return client

    monkeypatch.setattr(engines, "_connect", connect_then_stall)
    t0 = time.monotonic()
    try:
        with pytest.raises(ExecutionError) as err:
            with dask_cluster(processes=False, n_workers=1, threads_per_worker=1):
                pass
        assert time.monotonic() - t0 < 0.5 + 3.0 + 1.0  # start ≲ 3 s loaded, then 0.5 s
    finally:
        for r in releases:
            r.set()
    assert str(err.value) == "the Dask scheduler did not answer within 0.5 s; nothing was run"


def test_a_cancel_is_seen_while_the_scheduler_stalls_on_the_workers_question(monkeypatch):
    monkeypatch.setattr(futures, "WORKER_CHECK_SECONDS", 0.05)
    monkeypatch.setattr(futures, "WORKER_ASK_SECONDS", 0.3)
    with dask_cluster(processes=False, n_workers=1, threads_per_worker=1) as cluster:
        release = _stall(cluster.client.cluster, "ncores")
        try:
            t0 = time.monotonic()
            with pytest.raises(Cancelled):
                # A task still running when the cancel comes (a builtin: it pickles).
                futures.gather_tasks(cluster.client, time.sleep, [(1.5,)],
                                     _CancelAfter(0.3), "waiting")
            waited = time.monotonic() - t0
        finally:
            release.set()
    assert waited < 1.5, waited  # not the stall's 4 s


def test_a_gather_whose_scheduler_loop_is_stuck_gives_up_in_one_sentence(monkeypatch):
    monkeypatch.setattr(futures, "WORKER_CHECK_SECONDS", 0.05)
    monkeypatch.setattr(futures, "WORKER_ASK_SECONDS", 0.2)
    monkeypatch.setattr(futures, "NO_ANSWER_SECONDS", 0.5)
    monkeypatch.setattr(futures, "CANCEL_SECONDS", 0.3)
    with dask_cluster(processes=False, n_workers=1, threads_per_worker=1) as cluster:
        loop = cluster.client.loop
        # The event loop the scheduler, the worker and the client share is blocked: no
        # task's end is heard of, and no question is answered, for the stall's length.
        loop.add_callback(time.sleep, STALL_SECONDS)
        t0 = time.monotonic()
        with pytest.raises(ExecutionError) as err:
            futures.gather_tasks(cluster.client, time.sleep, [(0.01,)], None, "waiting")
        waited = time.monotonic() - t0
    assert waited < 2.5, waited  # not the stall's 4 s
    assert str(err.value) == ("the Dask scheduler has not answered for 0.5 s; nothing was "
                              "released")
