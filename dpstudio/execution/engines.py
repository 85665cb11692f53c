"""The execution engine's choice and the Dask cluster a query runs on.

``pandas`` runs in this process; ``dask`` runs one task per file on a cluster: the one at
``--scheduler ADDRESS`` (``tcp://host:8786``), or a ``distributed.LocalCluster`` started
here and closed when the work is done; ``auto`` picks Dask when the data on disk is more
than :data:`AUTO_MEMORY_FRACTION` of this machine's memory.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from dpstudio.data.errors import DataError, shorten
from dpstudio.jobs import Cancelled

__all__ = ["AUTO_MEMORY_FRACTION", "ENGINES", "LOCAL_SCHEDULER", "Cluster", "ExecutionError",
           "choose_engine",
           "dask_available", "dask_cluster", "in_process", "require_dask"]

ENGINES = ("pandas", "dask", "auto")
#: What the manifest's ``execution.scheduler`` says of a cluster started in-process.
LOCAL_SCHEDULER = "local"
#: ``auto`` runs on Dask above this share of physical memory in data files. The in-process
#: path peaks near 3× the raw bytes of the columns it reads, and compressed Parquet grows
#: 2–4× once decoded: an eighth keeps the pandas path under about all of memory at worst.
AUTO_MEMORY_FRACTION = 0.125
INSTALL_HINT = "pip install 'dpstudio[dask]'"
#: Whether a local cluster's workers are processes (parallel numpy and parsing on every
#: core) or threads of this process (tests: quick to start, nothing left behind).
LOCAL_PROCESSES = True
#: How long closing a local cluster may take before it is left to the interpreter's exit (a
#: worker stuck in a task would otherwise hold the caller, and the window, for ever).
CLOSE_SECONDS = 60.0
#: How long a local cluster (its scheduler, its workers and the client's connection) may
#: take to start: Dask itself waits for ever, and a start that stalls on a loaded machine
#: would hold the caller (a window's job, a test's fixture) with it.
START_SECONDS = 60.0
#: How long one question to the scheduler (its workers and their threads) may wait for an
#: answer: an RPC to a scheduler that accepted the connection but stalls has no end either.
ASK_SECONDS = 30.0
#: How often a starting local cluster's caller looks at its cancel flag (seconds).
START_POLL_SECONDS = 0.05


class ExecutionError(DataError):
    """A query that could not run on the chosen engine (one line; exit code 2)."""


def dask_available() -> bool:
    """Whether ``dask.dataframe`` and ``distributed`` can be imported."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("dask", "distributed"))


def require_dask() -> None:
    """Raise :class:`ExecutionError` saying how to install Dask, when it is not."""
    if not dask_available():
        raise ExecutionError(f"the dask engine needs Dask, which is not installed: "
                             f"{INSTALL_HINT}")


def physical_memory() -> int:
    """This machine's physical memory in bytes (0 when the system does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 0


def choose_engine(requested: str, data_bytes: int, memory: int | None = None) -> str:
    """``pandas`` or ``dask`` for the engine asked for and the size of the data.

    ``auto`` is ``dask`` when the files hold more than :data:`AUTO_MEMORY_FRACTION` of
    ``memory`` (physical memory by default) and Dask is installed, else ``pandas``.
    """
    if requested not in ENGINES:
        raise ExecutionError(f"unknown engine {requested!r} (choose from {', '.join(ENGINES)})")
    if requested != "auto":
        return requested
    memory = physical_memory() if memory is None else memory
    large = memory > 0 and data_bytes > AUTO_MEMORY_FRACTION * memory
    return "dask" if large and dask_available() else "pandas"


@dataclass(frozen=True)
class Cluster:
    """A connected Dask client and what the manifest says of its cluster."""

    client: Any
    scheduler: str
    workers: int
    threads: int
    memory_bytes: int

    def describe(self) -> dict[str, Any]:
        """The manifest's ``execution`` fields for this cluster."""
        return {"engine": "dask", "scheduler": self.scheduler, "workers": self.workers,
                "threads": self.threads, "memory_bytes": self.memory_bytes}


def in_process(partitions: int) -> dict[str, Any]:
    """The manifest's ``execution`` fields of the pandas path: this process, one thread.

    The same keys as :meth:`Cluster.describe` (``scheduler`` is None: no cluster), so
    every release's manifest says where its sums were computed in one shape.
    """
    return {"engine": "pandas", "scheduler": None, "workers": 1, "threads": 1,
            "memory_bytes": physical_memory(), "partitions": int(partitions)}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return shorten(text.splitlines()[0] if text else type(exc).__name__, 120)


@functools.cache
def _client_class() -> type:
    """``distributed.Client``, stopping its event-loop thread when it cannot connect.

    A client starts its event-loop thread ("IO loop") before it connects, and does not
    stop it when connecting fails: one such thread would be left running for the life of
    this process per unreachable scheduler (or cluster that failed to answer).
    """
    from distributed import Client

    class _Client(Client):
        def start(self, **kwargs: Any) -> None:
            try:
                super().start(**kwargs)
            except BaseException:
                with contextlib.suppress(Exception):
                    self.close()
                runner = getattr(self, "_loop_runner", None)
                if runner is not None:
                    with contextlib.suppress(Exception):
                        runner.stop()
                raise

    return _Client


def _connect(target: Any, timeout: float | None = None) -> Any:
    """A client of ``target`` (an address or a local cluster), never the default one;
    ``timeout`` None: Dask's own connect timeout."""
    extra = {} if timeout is None else {"timeout": timeout}
    return _client_class()(target, set_as_default=False, **extra)


def _close(client: Any, cluster: Any) -> None:
    """Close ``client`` and then ``cluster`` (either may be None), each within its bound."""
    if client is not None:
        with contextlib.suppress(Exception):  # a lost scheduler: nothing left to tell
            client.close()
    if cluster is not None:
        with contextlib.suppress(TimeoutError):  # asyncio's too (3.11)
            cluster.close(timeout=CLOSE_SECONDS)


def _start_local(make: Callable[[], tuple[Any, Any]], state: Any,
                 seconds: float) -> tuple[Any, Any]:
    """``make()``'s (cluster, client), made in a thread of its own and waited for at most
    ``seconds``, and only while ``state`` (may be None) is not cancelled.

    A start given up on is left to finish in its thread, which then closes what it made:
    nothing of a late cluster is left running, and the caller is not held by it.
    """
    lock, done = threading.Lock(), threading.Event()
    box: dict[str, Any] = {}

    def start() -> None:
        try:
            made, error = make(), None
        except BaseException as exc:  # handed to the caller, re-raised there
            made, error = None, exc
        with lock:
            late = box.get("abandoned", False)
            if not late:
                box["made"], box["error"] = made, error
            done.set()
        if late and made is not None:
            _close(*reversed(made))

    def give_up() -> bool:
        """Leave the start to its thread; False when it has just finished after all."""
        with lock:
            box["abandoned"] = not done.is_set()
            return box["abandoned"]

    thread = threading.Thread(target=start, name="dpstudio-dask-start", daemon=True)
    thread.start()
    deadline, reason = time.monotonic() + seconds, None
    try:
        while reason is None and not done.wait(START_POLL_SECONDS):
            if state is not None and state.cancelled():
                reason = Cancelled()
            elif time.monotonic() >= deadline:
                reason = ExecutionError(f"the local Dask cluster did not start within "
                                        f"{seconds:g} s; nothing was run")
    except BaseException:  # KeyboardInterrupt: whatever starts is closed, now or later
        if not give_up() and box.get("made") is not None:
            _close(*reversed(box["made"]))
        raise
    if reason is not None and give_up():
        raise reason
    thread.join()  # its last step (the box) is done: the thread ends at once
    if box["error"] is not None:
        raise box["error"]
    return box["made"]


def _workers(client: Any) -> list[dict[str, Any]]:
    """The scheduler's description of each of its workers, asked within a bound."""
    try:
        info = client.sync(client.scheduler.identity, n_workers=-1,
                           callback_timeout=ASK_SECONDS)
    except TimeoutError:
        raise ExecutionError(f"the Dask scheduler did not answer within {ASK_SECONDS:g} s; "
                             "nothing was run") from None
    return list(info.get("workers", {}).values())


@contextlib.contextmanager
def dask_cluster(scheduler: str | None = None, *, processes: bool | None = None,
                 n_workers: int | None = None, threads_per_worker: int | None = None,
                 timeout: float = 10.0, state: Any = None) -> Iterator[Cluster]:
    """A Dask client for the work inside the ``with``: the scheduler at ``scheduler``, or a
    ``LocalCluster`` started here (``processes=False``: threads in this process) and
    closed, with its workers, when the block ends.

    Raises :class:`ExecutionError` in one line when Dask is missing, the scheduler
    cannot be reached or does not answer, or the local cluster cannot start (or does not
    within :data:`START_SECONDS`); :class:`~dpstudio.jobs.Cancelled` when ``state`` (may
    be None) is cancelled while a local cluster starts. Whatever happens inside the
    block, the client, its event-loop thread and a local cluster's workers (threads or
    processes) are closed before it ends.
    """
    require_dask()
    from distributed import LocalCluster

    cluster = client = None
    try:
        if scheduler:
            try:
                client = _connect(scheduler, timeout)
            except (OSError, TimeoutError, ValueError, TypeError) as exc:
                raise ExecutionError(f"cannot reach the Dask scheduler at "
                                     f"{shorten(scheduler, 80)} ({_first_line(exc)})"
                                     ) from None
            shown = scheduler
        else:
            processes = LOCAL_PROCESSES if processes is None else processes

            def make() -> tuple[Any, Any]:
                # The scheduler's web server always starts (its metrics routes): on this
                # machine only, on a free port, never the fixed 8787 another cluster holds.
                made = LocalCluster(processes=processes, n_workers=n_workers,
                                    threads_per_worker=threads_per_worker,
                                    dashboard_address="127.0.0.1:0",
                                    # Its scheduler's and nannies' log lines (a worker
                                    # restarted, a task given up on) are not printed:
                                    # the answer, or one line, says what happened.
                                    silence_logs=logging.CRITICAL,
                                    # Workers as processes talk over TCP: this machine.
                                    **({"host": "127.0.0.1"} if processes else {}))
                try:
                    return made, _connect(made)
                except BaseException:
                    _close(None, made)
                    raise

            try:
                cluster, client = _start_local(make, state, START_SECONDS)
            except (OSError, RuntimeError, TimeoutError) as exc:
                raise ExecutionError(f"could not start a local Dask cluster "
                                     f"({_first_line(exc)})") from None
            shown = LOCAL_SCHEDULER
        workers = _workers(client)
        yield Cluster(client, shown, len(workers), sum(int(w.get("nthreads", 0)) for w in workers),
                      sum(int(w.get("memory_limit", 0) or 0) for w in workers))
    finally:
        _close(client, cluster)
