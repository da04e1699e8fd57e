"""Clocks: the monotonic clock, and a manual clock for tests."""
from __future__ import annotations

import threading
from typing import Any, Callable, List, Optional, Tuple

from ._ffi import NS_PER_S, ffi, lib


class Clock:
    """A breakwater clock. ``Clock.monotonic()`` is the default of every
    policy; ``ManualClock`` moves only when told."""

    _ptr: Any

    def __init__(self, ptr: Any) -> None:
        self._ptr = ptr

    @classmethod
    def monotonic(cls) -> "Clock":
        """CLOCK_MONOTONIC (the default clock)."""
        return _MONOTONIC

    def now_ns(self) -> int:
        """The current reading in nanoseconds."""
        return lib.bw_clock_now(self._ptr)

    def now(self) -> float:
        """The current reading in seconds."""
        return self.now_ns() / NS_PER_S

    @property
    def is_manual(self) -> bool:
        return False


_MONOTONIC = Clock(lib.bw_clock_monotonic())


class ManualClock(Clock):
    """A manual clock for tests: starts at ``start`` seconds and moves only
    when :meth:`advance` or :meth:`set` is called. Thread-safe.

    A :class:`Retry` on a manual clock "sleeps" by advancing it, so retry
    tests take no real time; a :class:`Pipeline`'s coroutine attempt on a
    manual clock is cut when the clock is advanced past its time limit."""

    def __init__(self, start: float = 0.0) -> None:
        if not isinstance(start, (int, float)) or isinstance(start, bool):
            raise TypeError("start must be a number of seconds")
        if start < 0:
            raise ValueError("start must be >= 0")
        ptr = lib.bw_clock_manual_new(int(start * NS_PER_S))
        if ptr == ffi.NULL:
            raise MemoryError("manual clock")
        super().__init__(ffi.gc(ptr, lib.bw_clock_free))
        # Alarms: (reading in ns, callback) run once the clock reaches the
        # reading (see _alarm). Under _lock; run outside it.
        self._lock = threading.Lock()
        self._alarms: List[Tuple[int, Callable[[], None]]] = []

    def advance(self, seconds: float) -> None:
        """Moves the clock forward by ``seconds`` (>= 0)."""
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
            raise TypeError("seconds must be a number")
        if seconds < 0:
            raise ValueError("a monotonic clock never goes back: seconds must be >= 0")
        lib.bw_clock_manual_advance(self._ptr, round(seconds * NS_PER_S))
        self._ring()

    def set(self, seconds: float) -> None:
        """Sets the clock to ``seconds`` if that is later than now."""
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
            raise TypeError("seconds must be a number")
        lib.bw_clock_manual_set(self._ptr, round(seconds * NS_PER_S))
        self._ring()

    def _alarm(self, at_ns: int, callback: Callable[[], None]) -> Callable[[], None]:
        """Runs ``callback()`` once the clock reads ``at_ns`` or later: at
        once if it already does, else from the :meth:`advance` or
        :meth:`set` that moves it there (in that caller's thread). Returns
        a function that removes the alarm if it has not run. What a
        coroutine's time limit waits on (a manual clock has no timer)."""
        entry = (at_ns, callback)
        with self._lock:
            if lib.bw_clock_now(self._ptr) < at_ns:
                self._alarms.append(entry)
                entry = None  # type: ignore[assignment]
        if entry is not None:
            callback()

        def remove() -> None:
            with self._lock:
                try:
                    self._alarms.remove((at_ns, callback))
                except ValueError:
                    pass
        return remove

    def _ring(self) -> None:
        """Runs the alarms that are due, outside the lock."""
        with self._lock:
            if not self._alarms:
                return
            now = lib.bw_clock_now(self._ptr)
            due = [a for a in self._alarms if a[0] <= now]
            self._alarms = [a for a in self._alarms if a[0] > now]
        for _, callback in due:
            callback()

    @property
    def is_manual(self) -> bool:
        return True


def resolve(clock: Optional[Clock]) -> Clock:
    if clock is None:
        return _MONOTONIC
    if not isinstance(clock, Clock):
        raise TypeError(f"clock must be a breakwater Clock, not {type(clock).__name__}")
    return clock
