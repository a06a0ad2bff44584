"""The task that rings a conversation's timers: it sleeps until the soonest one is due, then asks the session to
ring what is due (:meth:`voice.serve.session.Session.ring_due`, which speaks each as a turn of its own).

Cancellation: :meth:`Ringer.stop` cancels the task and waits for it (session end, reset); :meth:`Ringer.arm`
starts it again when timers exist. The task ends by itself when no timer is left.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from voice.skills.timers import TimerBook

#: A timer that falls due while the user is speaking rings this long after the next check (seconds).
RING_RETRY_S = 0.2
#: The ringer looks at the conversation's timers at least this often (seconds).
RING_CHECK_S = 1.0


class Ringer:
    """Rings the timers of one conversation (see the module docstring)."""

    def __init__(
        self,
        timers: Callable[[], TimerBook],
        now_ns: Callable[[], int],
        ring_due: Callable[[], Awaitable[int]],
        name: str,
    ) -> None:
        self._timers = timers
        """The conversation's timers, looked up each time (the conversation is replaced when a speculative
        reply is committed)."""
        self._now_ns = now_ns
        self._ring_due = ring_due
        self._name = name
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def arm(self) -> None:
        """Make sure the task runs while the conversation has timers, and let it look at them again."""
        if not self._timers().timers:
            return
        if not self.running:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name=self._name)
        self._changed.set()

    async def stop(self) -> None:
        """Cancel the task and wait until it stopped."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def _loop(self) -> None:
        while (due_ns := self._timers().next_due_ns()) is not None:
            wait_s = (due_ns - self._now_ns()) / 1e9
            if wait_s > 0:
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=min(wait_s, RING_CHECK_S))
                continue
            if not await self._ring_due():
                await asyncio.sleep(RING_RETRY_S)
