"""Long work as pure functions ``run(params, state)``: progress and cancellation.

The engine's long computations take a ``state`` object and call ``state.progress(f)``
now and then and ``check(state)`` between steps. The UI passes a state that forwards
progress to its worker thread and answers "cancelled?" when a newer request arrives;
tests and the CLI pass :class:`NullState`. No Qt here: the protocol is plain Python.

It sits at the top of the package, outside every layer, because the engine, the data
loader and the application all speak it (import-linter's layers keep data and engine
independent of each other).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Cancelled", "NullState", "State", "check", "scaled"]


class Cancelled(Exception):
    """Raised inside a job when its state says it was cancelled.

    Parameters
    ----------
    *args
        As :class:`Exception`; :func:`check` raises it without any.
    """


class State(Protocol):
    """What a job may ask of its caller.

    A structural protocol: any object with these two methods is a state.

    Attributes
    ----------
    progress : callable
        ``progress(fraction, message="")``, called now and then by the job.
    cancelled : callable
        ``cancelled() -> bool``, asked between steps (see :func:`check`).
    """

    def progress(self, fraction: float, message: str = "") -> None:
        """Report that ``fraction`` (0…1) of the work is done.

        Parameters
        ----------
        fraction : float
            Share of the job done, nondecreasing from 0 to 1.
        message : str, optional
            What the job is doing, for a status line.
        """

    def cancelled(self) -> bool:
        """Whether the caller no longer wants the result."""


class NullState:
    """A state that records progress and is never cancelled (tests, CLI).

    Attributes
    ----------
    fractions : list of float
        Every fraction reported, in order.
    """

    def __init__(self) -> None:
        self.fractions: list[float] = []

    def progress(self, fraction: float, message: str = "") -> None:
        """Record ``fraction``; the message is ignored.

        Parameters
        ----------
        fraction : float
            Share of the job done.
        message : str, optional
            Ignored.
        """
        self.fractions.append(float(fraction))

    def cancelled(self) -> bool:
        """Never cancelled: always False."""
        return False


def check(state: State | None) -> None:
    """Raise :class:`Cancelled` if ``state`` was cancelled.

    Parameters
    ----------
    state : State or None
        The job's state; None (no caller listening) never cancels.

    Raises
    ------
    Cancelled
        If the caller no longer wants the result.
    """
    if state is not None and state.cancelled():
        raise Cancelled()


class _Scaled:
    """A stage's view of its job's state: its fractions 0…1 land in [start, stop]."""

    def __init__(self, state: State, start: float, stop: float) -> None:
        self._state, self._start, self._width = state, float(start), float(stop) - float(start)

    def progress(self, fraction: float, message: str = "") -> None:
        self._state.progress(self._start + self._width * float(fraction), message)

    def cancelled(self) -> bool:
        return self._state.cancelled()


def scaled(state: State | None, start: float, stop: float) -> State | None:
    """The state a stage of a longer job reports to: its progress 0…1 maps to start…stop.

    A job made of stages (mask, then unmask; one direction, then the other) passes each
    stage ``scaled(state, a, b)``, so the whole job's progress still runs once from 0 to 1.

    Parameters
    ----------
    state : State or None
        The whole job's state.
    start, stop : float
        The share of the whole job this stage covers, 0 ≤ start ≤ stop ≤ 1.

    Returns
    -------
    State or None
        None when ``state`` is None (nothing to report to), else a state forwarding the
        scaled progress and the cancellation.
    """
    return None if state is None else _Scaled(state, start, stop)
