"""Long work as pure functions ``run(params, state)``: progress and cancellation.

The engine's long computations take a ``state`` object and call ``state.progress(f)``
now and then and ``check(state)`` between steps. The UI passes a state that forwards
progress to its worker thread and answers "cancelled?" when a newer request arrives;
tests and the CLI pass :class:`NullState`. No Qt here: the protocol is plain Python.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Cancelled", "NullState", "State", "check"]


class Cancelled(Exception):
    """Raised inside a job when its state says it was cancelled."""


class State(Protocol):
    """What a job may ask of its caller."""

    def progress(self, fraction: float, message: str = "") -> None:
        """Report that ``fraction`` (0…1) of the work is done."""

    def cancelled(self) -> bool:
        """Whether the caller no longer wants the result."""


class NullState:
    """A state that records progress and is never cancelled (tests, CLI)."""

    def __init__(self) -> None:
        self.fractions: list[float] = []

    def progress(self, fraction: float, message: str = "") -> None:
        self.fractions.append(float(fraction))

    def cancelled(self) -> bool:
        return False


def check(state: State | None) -> None:
    """Raise :class:`Cancelled` if ``state`` was cancelled."""
    if state is not None and state.cancelled():
        raise Cancelled()
