"""The job runner: newest request wins, stale results are dropped, errors are one line,
results arrive on the UI thread; the coalescer collapses bursts."""

import threading
import time

import pytest
from PySide6.QtCore import QCoreApplication

from dpstudio.engine.errors import QueryError
from dpstudio.jobs import check
from dpstudio.ui.worker import Coalescer, JobRunner


@pytest.fixture
def runner(qtbot):
    r = JobRunner()
    yield r
    r.shutdown()


def slow(x, state, steps=20):
    for i in range(steps):
        check(state)
        time.sleep(0.005)
        state.progress((i + 1) / steps)
    return x


def test_newest_request_wins_and_stale_results_never_arrive(qtbot, runner):
    got, threads = [], []

    def on_finished(key, result):
        got.append((key, result))
        threads.append(threading.current_thread() is threading.main_thread())

    runner.sig_finished.connect(on_finished)
    for x in range(5):
        runner.submit("utility", slow, x)
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    runner.wait("utility")
    QCoreApplication.processEvents()
    assert got == [("utility", 4)]
    assert threads == [True]  # delivered on the UI thread


def test_keys_are_independent_and_cancel_drops_the_result(qtbot, runner):
    got = []
    runner.sig_finished.connect(lambda k, r: got.append((k, r)))
    runner.submit("a", slow, "A")
    runner.submit("b", slow, "B")
    runner.cancel("b")
    qtbot.waitUntil(lambda: ("a", "A") in got, timeout=5000)
    runner.wait("b")
    QCoreApplication.processEvents()
    assert got == [("a", "A")]


def test_a_result_that_ends_just_before_a_newer_request_is_dropped(qtbot, runner):
    # The first job ends in the worker, its answer still waiting in the event queue, when
    # a newer request with its key comes: the answer is stale, and the key is not idle.
    got, busy = [], []
    runner.sig_finished.connect(lambda k, r: got.append(r))
    runner.sig_busy.connect(lambda k, b: busy.append(b))
    runner.submit("k", slow, "old", steps=1)
    runner.wait("k")
    release = threading.Event()

    def newer(state):
        release.wait(5)
        return "new"

    runner.submit("k", newer)
    QCoreApplication.processEvents()
    assert got == [] and busy[-1] is True
    release.set()
    qtbot.waitUntil(lambda: got == ["new"], timeout=5000)
    assert busy[-1] is False


def test_engine_errors_become_one_line_messages(qtbot, runner):
    def bad(state):
        raise QueryError("bounds are reversed")

    with qtbot.waitSignal(runner.sig_failed, timeout=5000) as blocker:
        runner.submit("x", bad)
    assert blocker.args == ["x", "bounds are reversed"]


def test_progress_is_reported(qtbot, runner):
    seen = []
    runner.sig_progress.connect(lambda k, f, m: seen.append(f))
    with qtbot.waitSignal(runner.sig_finished, timeout=5000):
        runner.submit("p", slow, 1, steps=4)
    QCoreApplication.processEvents()
    assert seen == [0.25, 0.5, 0.75, 1.0]


def test_coalescer_fires_once_with_the_last_value(qtbot):
    calls = []
    c = Coalescer(calls.append, delay_ms=20)
    for v in range(10):
        c(v)
    qtbot.waitUntil(lambda: bool(calls), timeout=2000)
    qtbot.wait(50)
    assert calls == [9]
    c(42)
    c.flush()
    assert calls == [9, 42]
