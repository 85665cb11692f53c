"""Fixtures shared by every test folder."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest


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
