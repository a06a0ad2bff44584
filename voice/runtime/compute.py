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

    TURN = -1
    """The end-of-turn model: one short call (~36 ms) that decides when the turn ends, and so when the
    held reply may be let out (``[turn] score_in_gate``)."""
    TTS = 0
    STT = 1
    LLM = 2


class StepCancelled(Exception):
    """The step's cancel event was set while it waited for the gate: it must not run."""


class ComputeGate:
    """A priority lock for compute steps, usable from any thread. ``enabled=False`` makes it a no-op.

    A step given a ``cancel`` event stops waiting as soon as the event is set (raising
    :class:`StepCancelled`), so a cancelled turn never waits for another model's step to finish just to
    run one more step of its own. Use :meth:`cancel_event` for events that wake the gate when set.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._cond = threading.Condition()
        self._busy = False
        self._waiting: list[tuple[int, int]] = []
        self._seq = itertools.count()

    def cancel_event(self, *on_set: Callable[[], object]) -> threading.Event:
        """An event that, when set, also wakes the steps waiting for this gate (and calls ``on_set``:
        e.g. a model's ``interrupt()``, which stops the step in progress)."""
        return _WakingEvent(self, on_set)

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    @contextlib.contextmanager
    def slot(self, priority: Priority, cancel: threading.Event | None = None) -> Iterator[None]:
        """Hold the cores for one step. Blocks the calling (worker) thread until granted; raises
        :class:`StepCancelled` instead if ``cancel`` is (or gets) set first."""
        if cancel is not None and cancel.is_set():
            raise StepCancelled
        if not self.enabled:
            yield
            return
        ticket = (int(priority), next(self._seq))
        with self._cond:
            heapq.heappush(self._waiting, ticket)
            while self._busy or self._waiting[0] != ticket:
                if cancel is not None and cancel.is_set():
                    self._waiting.remove(ticket)
                    heapq.heapify(self._waiting)
                    self._cond.notify_all()
                    raise StepCancelled
                self._cond.wait()
            heapq.heappop(self._waiting)
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()


class _WakingEvent(threading.Event):
    def __init__(self, gate: ComputeGate, on_set: tuple[Callable[[], object], ...]) -> None:
        super().__init__()
        self._gate = gate
        self._on_set = on_set

    def set(self) -> None:
        first = not self.is_set()
        super().set()
        self._gate.wake()
        if first:
            for fn in self._on_set:
                fn()


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
