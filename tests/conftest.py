"""Fixtures shared by every test folder."""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import sys
import threading
import time
import traceback

import pytest

# scipy.stats imported once here, on the main thread, before any worker thread: its first
# import from a UI worker, through pytest's assertion-rewriting import hook, stalled a UI
# test for minutes (stack in _clone_window ← fmt21_delta, in a worker, while the main
# thread processed events). The application imports it in workers with no such hook.
import scipy.stats  # noqa: E402,F401


def _left_running(before: set[int], wait: float) -> list[str]:
    """Threads (other than distributed's shared offload thread) and child processes
    started since ``before`` that are still running after up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        left = [t.name for t in threading.enumerate() if t.ident not in before
                and not t.name.startswith(("Dask-Offload", WATCH_NAME))]
        left += [f"process {p.pid}" for p in multiprocessing.active_children()]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@pytest.fixture
def left_running():
    """``left_running(before, wait=5.0)``: what a test left running (see above)."""
    return lambda before, wait=5.0: _left_running(before, wait)


@pytest.fixture(scope="module")
def nothing_left_running():
    """No client loop, worker thread or worker process left after a module's tests (a
    module asks for it with ``pytestmark = pytest.mark.usefixtures(...)``)."""
    before = {t.ident for t in threading.enumerate()}
    yield
    assert _left_running(before, 5.0) == []


# -- a hung test ends the run, and says where, in its last lines -------------------------

#: A test (setup, call and teardown) still running after this many seconds has hung: the
#: run prints every thread's stack, then a short summary, and exits with status 3. A hang
#: then costs minutes rather than CI's whole allowance, and the last lines of the log (all
#: a CI page may keep) name the test and where each thread of ours is waiting.
HANG_SECONDS = float(os.environ.get("DPSTUDIO_TEST_HANG_SECONDS", "300"))
WATCH_NAME = "test-hang-watch"


def _ours(frame) -> str:
    """The innermost frames of ``frame``'s stack in dpstudio or the tests, and the very
    innermost one, in one line."""
    stack = traceback.extract_stack(frame)
    mine = [f for f in stack if ("dpstudio" in f.filename or "tests" in f.filename)
            and "site-packages" not in f.filename]
    shown = [f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in mine[-3:]]
    if stack and (not mine or stack[-1] is not mine[-1]):
        last = stack[-1]
        shown.append(f"… {os.path.basename(last.filename)}:{last.lineno} {last.name}")
    return " ← ".join(reversed(shown)) or "(no Python frame)"


def _hung(nodeid: str, config) -> None:
    out = sys.__stderr__
    try:
        # Capture off: stderr is the terminal (or CI's log) again, not pytest's buffer,
        # which os._exit would throw away.
        capture = config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.suspend_global_capture(in_=False)
        out.write(f"\n\n{nodeid} has run for more than {HANG_SECONDS:g} s: every "
                  "thread's stack follows, then a summary.\n")
        out.flush()
        faulthandler.dump_traceback(file=out, all_threads=True)
        frames = sys._current_frames()
        out.write(f"\nHUNG TEST {nodeid}\n")
        for t in threading.enumerate():
            if t.name != WATCH_NAME and t.ident in frames:
                out.write(f"  thread {t.name}: {_ours(frames[t.ident])}\n")
        out.write(f"HUNG TEST {nodeid}: the run stops here (exit status 3).\n")
        out.flush()
    finally:
        os._exit(3)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    watch = threading.Timer(HANG_SECONDS, _hung, args=(item.nodeid, item.config))
    watch.name, watch.daemon = WATCH_NAME, True
    watch.start()
    try:
        yield
    finally:
        watch.cancel()
