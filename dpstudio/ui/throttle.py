"""A rate limiter for bursts of changes (a slider drag): first call at once, then one per
interval, and always the last one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QObject, QTimer

__all__ = ["Throttle"]


class Throttle(QObject):
    """Call ``callback`` at once, then at most every ``interval_ms`` while calls keep coming.

    A slider drag sends dozens of changes a second: the first is computed immediately
    (no added latency), later ones are collapsed so that one runs per interval, and the
    last one always runs (trailing edge).
    """

    def __init__(self, callback: Callable[[], object], interval_ms: int = 30,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._callback = callback
        self._interval = int(interval_ms)
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._fire)

    def __call__(self) -> None:
        if self._timer.isActive():
            return  # the trailing call is already scheduled
        elapsed = self._clock.elapsed() if self._clock.isValid() else self._interval
        if elapsed >= self._interval:
            self._fire()
        else:
            self._timer.start(self._interval - int(elapsed))

    def pending(self) -> bool:
        return self._timer.isActive()

    def stop(self) -> None:
        self._timer.stop()

    def _fire(self) -> None:
        self._clock.restart()
        self._callback()
