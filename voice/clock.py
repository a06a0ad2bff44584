"""The clocks durations are measured on: monotonic, in integer nanoseconds. The server uses the real one; tests
inject :class:`FakeClock`, which only moves when told to."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """A monotonic clock in integer nanoseconds."""

    def now_ns(self) -> int: ...


class MonotonicClock:
    """The real clock: :func:`time.perf_counter_ns` (monotonic, highest resolution)."""

    def now_ns(self) -> int:
        return time.perf_counter_ns()


class FakeClock:
    """A clock that only moves when told to (tests)."""

    def __init__(self, start_ns: int = 1_000_000_000) -> None:
        self._now_ns = start_ns
        self._lock = threading.Lock()

    def now_ns(self) -> int:
        with self._lock:
            return self._now_ns

    def advance_ms(self, ms: float) -> None:
        with self._lock:
            self._now_ns += round(ms * 1_000_000)
