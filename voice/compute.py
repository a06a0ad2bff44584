"""Scheduling of compute-heavy work on a small CPU: one stage at a time, by priority.

On 2 cores, Whisper (CTranslate2) and llama.cpp running at once each slow down 15-30x: both keep worker
threads busy (and spinning), so they fight for the same cores. The :class:`ComputeGate` lets one
compute step run at a time. Steps are short and fine-grained — one LLM token, one TTS sentence, one STT
call — so a waiting step of a higher priority gets the cores within one step of the one running:
TTS of a reply (closest to the listener's ear) first, then STT of a new turn, then LLM decoding.

:func:`run_blocking` runs a blocking function in a worker thread and, if the awaiting task is cancelled,
signals the function through a :class:`threading.Event` and waits for it to return before the
cancellation propagates — so a model is never released while a thread still uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import heapq
import itertools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from typing import TypeVar

_T = TypeVar("_T")


class Priority(enum.IntEnum):
    """Lower value runs first."""

    TTS = 0
    STT = 1
    LLM = 2


class ComputeGate:
    """A priority lock for compute steps, usable from any thread. ``enabled=False`` makes it a no-op."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._cond = threading.Condition()
        self._busy = False
        self._waiting: list[tuple[int, int]] = []
        self._seq = itertools.count()

    @contextlib.contextmanager
    def slot(self, priority: Priority) -> Iterator[None]:
        """Hold the cores for one step. Blocks the calling (worker) thread until granted."""
        if not self.enabled:
            yield
            return
        ticket = (int(priority), next(self._seq))
        with self._cond:
            heapq.heappush(self._waiting, ticket)
            while self._busy or self._waiting[0] != ticket:
                self._cond.wait()
            heapq.heappop(self._waiting)
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()


async def run_blocking(
    executor: Executor | None, fn: Callable[[threading.Event], _T], cancel: threading.Event | None = None
) -> _T:
    """Run ``fn(cancel_event)`` in a worker thread.

    Cancelling the caller sets the event, waits until ``fn`` has returned (it must check the event between
    steps), then re-raises :class:`asyncio.CancelledError`.
    """
    event = cancel if cancel is not None else threading.Event()
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(executor, fn, event)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        event.set()
        with contextlib.suppress(BaseException):
            await future
        raise
