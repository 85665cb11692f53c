"""Fixtures shared by every test folder."""

from __future__ import annotations

import multiprocessing
import threading
import time

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
                and not t.name.startswith("Dask-Offload")]
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
