"""Tasks on a Dask cluster: submitted, followed, cancelled, and their errors in one line.

:func:`gather_tasks` is how every partitioned query runs its worker tasks: one future per
task, polled so that progress moves per task and a cancel is seen within 50 ms, the
pending tasks cancelled on the first error or cancel, and a lost worker or a failed task
turned into one :class:`~dpstudio.execution.engines.ExecutionError` line. No noise is ever
drawn here: a failed or cancelled gather leaves nothing to charge.
"""

from __future__ import annotations

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
    ``KilledWorker``, a lost connection) becomes one :class:`ExecutionError` line.
    """
    # pure=False: two releases of one file are two draws of the rounding, never cached.
    futures = [client.submit(fn, *a, pure=False, key=f"dpstudio-{i}-{uuid.uuid4().hex}")
               for i, a in enumerate(args)]
    out: list[Any] = [None] * len(futures)
    waiting = set(range(len(futures)))
    try:
        while waiting:
            check_cancelled(state)
            finished = [i for i in waiting if futures[i].done()]
            for i in finished:
                out[i] = futures[i].result()  # re-raises a task's own error
                waiting.discard(i)
            if finished:
                report_progress(state, 1.0 - len(waiting) / len(futures), text)
            else:
                time.sleep(POLL_SECONDS)
    except (DataError, EngineError, Cancelled):
        client.cancel(futures)
        raise
    except Exception as exc:  # KilledWorker, a lost connection, a worker's own failure
        client.cancel(futures)
        line = str(exc).splitlines()[0] if str(exc) else ""
        raise ExecutionError(f"the Dask cluster could not finish the query "
                             f"({type(exc).__name__}{': ' + shorten(line, 120) if line else ''});"
                             " nothing was released") from None
    return out
