"""Tasks on a Dask cluster: submitted, followed, cancelled, and their errors in one line.

:func:`gather_tasks` is how every partitioned query runs its worker tasks: one future per
task, polled so that progress moves per task and a cancel is seen within 50 ms, the
pending tasks cancelled on the first error or cancel, and a lost worker or a failed task
turned into one :class:`~dpstudio.execution.engines.ExecutionError` line. No noise is ever
drawn here: a failed or cancelled gather leaves nothing to charge.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from dpstudio.data.errors import DataError, shorten
from dpstudio.engine.errors import EngineError
from dpstudio.execution.engines import ExecutionError
from dpstudio.jobs import Cancelled

__all__ = ["check_cancelled", "gather_tasks", "report_progress"]

#: How often a running gather looks at its futures and at the cancel flag (seconds).
POLL_SECONDS = 0.05
#: How long fetching one finished task's (small) result may take before it is looked at
#: again on the next round (its worker may have died with it since it finished).
RESULT_SECONDS = 2.0
#: How often a gather with nothing finishing asks the scheduler how many workers it has.
WORKER_CHECK_SECONDS = 1.0
#: How long that question may wait for the scheduler's answer: a stalled scheduler would
#: otherwise hold the gather, and a cancel with it, for as long as it stalls.
WORKER_ASK_SECONDS = 2.0
#: A scheduler that has not answered that question for this long is given up on: a busy
#: one answers within seconds; one whose event loop is stuck never tells a task's end.
NO_ANSWER_SECONDS = 120.0
#: How long cancelling a gather's pending tasks may take (the scheduler is told at once).
CANCEL_SECONDS = 5.0
#: A cluster with no worker for this long is given up on (its tasks would wait forever).
NO_WORKER_SECONDS = 60.0


def check_cancelled(state: Any) -> None:
    """Raise :class:`~dpstudio.jobs.Cancelled` when ``state`` (may be None) says so."""
    if state is not None and state.cancelled():
        raise Cancelled()


def report_progress(state: Any, fraction: float, text: str) -> None:
    """Tell ``state`` (may be None) how far the work is."""
    if state is not None:
        state.progress(fraction, text)


def gather_tasks(client: Any, fn: Callable[..., Any], args: Sequence[tuple], state: Any,
                 text: str) -> list[Any]:
    """Run ``fn(*a)`` for every ``a`` in ``args`` on ``client``'s cluster; their results
    in order.

    ``state`` receives progress (``text``) per finished task and may cancel: the pending
    tasks are then cancelled and :class:`~dpstudio.jobs.Cancelled` raised. A task's own
    :class:`DataError`/:class:`EngineError` is re-raised as it is; anything else (a
    ``KilledWorker``, a lost connection, a cluster left without workers) becomes one
    :class:`ExecutionError` line.

    A worker that dies mid-task (killed, out of memory, its machine gone) costs nothing
    but time: the scheduler reruns its tasks elsewhere and only the rerun's result is
    kept, up to ``distributed.scheduler.allowed-failures`` deaths per task (3 by default;
    then ``KilledWorker``). A task that *raises* is not rerun: reading a file is
    deterministic, and a second try would fail the same way.
    """
    # pure=False: two releases of one file are two draws of the rounding, never cached.
    futures = [client.submit(fn, *a, pure=False, key=f"dpstudio-{i}-{uuid.uuid4().hex}")
               for i, a in enumerate(args)]
    out: list[Any] = [None] * len(futures)
    waiting = set(range(len(futures)))
    watch = _Workers(client)
    try:
        while waiting:
            check_cancelled(state)
            # A failed task first: its error is the answer, whatever else has finished.
            finished = sorted((i for i in waiting if futures[i].done()),
                              key=lambda i: (futures[i].status != "error", i))
            got = 0
            for i in finished:
                try:
                    out[i] = futures[i].result(timeout=RESULT_SECONDS)  # or its own error
                except TimeoutError:
                    if futures[i].status == "error":  # the task's own TimeoutError
                        raise
                    # Finished, then its worker died with the result: it is being
                    # computed again (a blocking wait here would never end without
                    # a worker). Looked at again on the next round.
                    continue
                waiting.discard(i)
                got += 1
            if got:
                report_progress(state, 1.0 - len(waiting) / len(futures), text)
            else:
                watch.check()
                time.sleep(POLL_SECONDS)
        check_cancelled(state)  # a cancel as the last task finished: still before any noise
    except (DataError, EngineError, Cancelled):
        _cancel(client, futures)
        raise
    except Exception as exc:  # KilledWorker, a lost connection, a worker's own failure
        _cancel(client, futures)
        raise ExecutionError(f"the Dask cluster could not finish the query "
                             f"({_reason(exc)}); nothing was released") from None
    except BaseException:  # KeyboardInterrupt: nothing left running on a remote cluster
        _cancel(client, futures)
        raise
    return out


def _cancel(client: Any, futures: list[Any]) -> None:
    """Cancel the tasks still pending; a cluster already gone has nothing to cancel.

    Asked from a thread of its own and waited for :data:`CANCEL_SECONDS` at most: the
    client's cancel waits on its event loop without a bound, and a stuck loop (the reason
    a gather may be giving up) would hold the caller, and its one-line error, for ever.
    """
    def cancel() -> None:
        with contextlib.suppress(Exception):
            client.cancel(futures)

    asking = threading.Thread(target=cancel, name="dpstudio-dask-cancel", daemon=True)
    asking.start()
    asking.join(CANCEL_SECONDS)


def _reason(exc: BaseException) -> str:
    """What went wrong on the cluster, in a few words (within one line)."""
    name = type(exc).__name__
    if name == "KilledWorker":
        tries = getattr(exc, "allowed_failures", None)
        tries = "every time" if tries is None else f"all {int(tries) + 1} times"
        return (f"KilledWorker: a worker died {tries} it ran one of the query's tasks; a "
                "file too large for a worker's memory?")
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    return f"{name}: {shorten(line, 120)}" if line else name


class _Workers:
    """Notices a cluster left without workers: its tasks would wait for one forever.

    Asks the scheduler every :data:`WORKER_CHECK_SECONDS` at most, and raises
    :class:`ExecutionError` once it has had no worker for :data:`NO_WORKER_SECONDS` (a
    local cluster's nanny restarts a dead worker within seconds; a remote cluster may be
    scaling up), or has not answered for :data:`NO_ANSWER_SECONDS` (its event loop
    stalled: no task's end would ever be heard of either).
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self.asked = time.monotonic()
        self.since: float | None = None
        self.silent: float | None = None  # since when the scheduler has not answered

    def check(self) -> None:
        now = time.monotonic()
        if now - self.asked < WORKER_CHECK_SECONDS:
            return
        self.asked = now
        try:
            workers = len(self.client.nthreads(callback_timeout=WORKER_ASK_SECONDS))
        except TimeoutError:  # a scheduler slow to answer: asked again next time, ...
            self.silent = now if self.silent is None else self.silent
            if now - self.silent >= NO_ANSWER_SECONDS:  # ... but not for ever
                raise ExecutionError(f"the Dask scheduler has not answered for "
                                     f"{NO_ANSWER_SECONDS:g} s; nothing was released"
                                     ) from None
            return
        except Exception:  # the scheduler is gone: the futures say so
            return
        self.silent = None
        if workers:
            self.since = None
        elif self.since is None:
            self.since = now
        elif now - self.since >= NO_WORKER_SECONDS:
            raise ExecutionError(f"the Dask cluster has had no workers for "
                                 f"{NO_WORKER_SECONDS:g} s; nothing was released")
