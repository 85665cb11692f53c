"""Run engine jobs off the UI thread: the newest request wins, results arrive on the UI thread.

Jobs are the engine's pure functions ``fn(*args, state=state)`` (see
:mod:`dpstudio.jobs`). Each job has a *key* (e.g. ``"utility"``): submitting a new
job with a key cancels the previous one with that key — its ``state.cancelled()`` turns
true, and whatever it returns is dropped. One worker thread runs them in order (Orange3's
and napari's pattern), so a stale job that has not started yet costs nothing.

Whether a result is still wanted is decided on the UI thread, when it is delivered: a job
that ended just before a newer request with its key was made must not answer that request
(nor say its key is idle while the newer job runs). Progress too: a step reported just
before a cancel arrives after it, and would write "Summing… 20%" over "Cancelled".
"""

from __future__ import annotations

import itertools
import sys
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from dpstudio.engine.errors import EngineError
from dpstudio.jobs import Cancelled

__all__ = ["Coalescer", "JobRunner"]


class _State:
    """The engine's job state for one submission: cancelled once superseded."""

    def __init__(self, runner: JobRunner, key: str, generation: int) -> None:
        self._runner, self._key, self._generation = runner, key, generation

    def cancelled(self) -> bool:
        return self._runner._generation(self._key) != self._generation

    def progress(self, fraction: float, message: str = "") -> None:
        if not self.cancelled():
            self._runner._sig_step.emit(self._key, self._generation, float(fraction),
                                        message)


class JobRunner(QObject):
    """One worker thread; per-key generations decide which result is still wanted.

    ``sig_finished``, ``sig_failed``, ``sig_progress`` and a job's end in ``sig_busy`` are
    emitted on the thread the runner lives in (the UI thread), and only for the newest
    request of a key.
    """

    sig_finished = Signal(str, object)   # key, result
    sig_failed = Signal(str, str)        # key, one-line message
    sig_progress = Signal(str, float, str)
    sig_busy = Signal(str, bool)         # key, whether a job for it is under way
    # From the worker thread to this object's thread: key, generation, result or message.
    _sig_done = Signal(str, int, object)
    _sig_error = Signal(str, int, str)
    _sig_step = Signal(str, int, float, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpstudio-job")
        self._lock = threading.Lock()
        self._generations: dict[str, int] = {}
        self._counter = itertools.count(1)
        self._futures: dict[str, Future] = {}
        self._live: dict[Future, str] = {}
        self._sig_done.connect(self._deliver)
        self._sig_error.connect(self._deliver_error)
        self._sig_step.connect(self._deliver_progress)

    def _generation(self, key: str) -> int:
        with self._lock:
            return self._generations.get(key, 0)

    def submit(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
        """Run ``fn(*args, state=…, **kwargs)`` in the worker; supersede ``key``'s last job."""
        with self._lock:
            generation = next(self._counter)
            self._generations[key] = generation
        state = _State(self, key, generation)
        self.sig_busy.emit(key, True)
        future = self._pool.submit(self._run, key, generation, state, fn, args, kwargs)
        self._futures[key] = future
        # Every job not yet ended, superseded ones too: shutdown waits for whichever runs.
        with self._lock:
            self._live[future] = key
        future.add_done_callback(self._ended)
        return generation

    def _ended(self, future: Future) -> None:
        with self._lock:
            self._live.pop(future, None)

    def cancel(self, key: str) -> None:
        """Drop whatever ``key``'s current job would return."""
        with self._lock:
            self._generations[key] = next(self._counter)
        self.sig_busy.emit(key, False)

    def is_current(self, key: str, generation: int) -> bool:
        return self._generation(key) == generation

    def _run(self, key, generation, state, fn, args, kwargs) -> None:
        if state.cancelled():
            return
        try:
            result = fn(*args, state=state, **kwargs)
        except Cancelled:
            return
        except EngineError as err:
            if self.is_current(key, generation):
                self._sig_error.emit(key, generation, str(err))
            return
        except Exception as err:  # a bug: say so in one line, keep the details on stderr
            traceback.print_exc()
            if self.is_current(key, generation):
                self._sig_error.emit(key, generation,
                                     f"internal error: {type(err).__name__}: {err}")
            return
        if self.is_current(key, generation):
            self._sig_done.emit(key, generation, result)

    # The three receivers of the worker thread's signals are declared slots: PySide 6.8+
    # can crash delivering a queued signal from a non-Qt thread to an undeclared Python
    # method (PYSIDE-3124; seen once here, a segfault entering _deliver in a full run).
    @Slot(str, int, object)
    def _deliver(self, key: str, generation: int, result: Any) -> None:
        # Checked again here: a newer request may have come while this one waited in the
        # event queue.
        if self.is_current(key, generation):
            self.sig_finished.emit(key, result)
            self.sig_busy.emit(key, False)

    @Slot(str, int, float, str)
    def _deliver_progress(self, key: str, generation: int, fraction: float,
                          message: str) -> None:
        if self.is_current(key, generation):
            self.sig_progress.emit(key, fraction, message)

    @Slot(str, int, str)
    def _deliver_error(self, key: str, generation: int, message: str) -> None:
        if self.is_current(key, generation):
            self.sig_failed.emit(key, message)
            self.sig_busy.emit(key, False)

    def wait(self, key: str, timeout: float = 30.0) -> None:
        """Block until ``key``'s last job ended (tests and shutdown only)."""
        future = self._futures.get(key)
        if future is not None:
            future.result(timeout=timeout)

    def shutdown(self, timeout: float | None = None) -> bool:
        """Stop for good: every job is cancelled (one not started never runs) and the
        running one waited for, for ever (``timeout`` None: a release is never cut) or at
        most ``timeout`` seconds. True when it ended; else it is left to end in its thread
        (its result dropped), and stderr says which job would not stop.
        """
        with self._lock:
            for key in self._generations:
                self._generations[key] = next(self._counter)
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            running = dict(self._live)
        _, left = wait(list(running), timeout=timeout)
        if left:
            keys = ", ".join(sorted({repr(running[f]) for f in left}))
            print(f"dpstudio: the {keys} job did not stop within {timeout:g} s of its "
                  "cancel; it is left to end in its thread", file=sys.stderr)
            return False
        self._pool.shutdown(wait=True)  # its thread ends as soon as the job has
        return True


class Coalescer(QObject):
    """Collapse a burst of calls into one, ``delay_ms`` after the last (slider drags).

    ``coalescer(value)`` restarts the timer; when it fires, ``callback`` gets the last value.
    """

    def __init__(self, callback: Callable[[Any], None], delay_ms: int = 30,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._callback = callback
        self._value: Any = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._fire)

    def __call__(self, value: Any = None) -> None:
        self._value = value
        self._timer.start()

    def flush(self) -> None:
        """Fire now if a call is pending."""
        if self._timer.isActive():
            self._timer.stop()
            self._fire()

    def _fire(self) -> None:
        self._callback(self._value)
