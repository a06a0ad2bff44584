"""An asyncio lock shared fairly between sessions: waiters are served round-robin by key, not first come first
served.

A session that queues several turns at once (a speculative reply and the committed one, replies queued with
barge-in off) would, first come first served, make every session that queued after it wait for all of them.
Round-robin serves one waiter of each waiting key in turn: the key served longest ago goes first (a key not
served while it waited goes before any that was); a key's own waiters keep their order. The lock is handed
over directly to the next waiter on release, so no newcomer can slip in between.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator


class FairLock:
    """Round-robin per key. Not thread-safe: use it from one event loop.

    Cancelling :meth:`acquire` while it waits removes the waiter; if the lock was handed to it at the moment
    it was cancelled, it passes the lock on to the next waiter, so a cancelled waiter never keeps it.
    """

    def __init__(self) -> None:
        self._locked = False
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self._served: dict[str, int] = {}
        """When each waiting key (and the holder's) was last granted the lock (a grant counter)."""
        self._grants = 0

    def locked(self) -> bool:
        return self._locked

    def waiting(self) -> dict[str, int]:
        """Waiters per key, in the order the keys will be served."""
        return {k: len(q) for k, q in self._waiting.items()}

    async def acquire(self, key: str) -> None:
        if not self._locked and not self._waiting:
            self._locked = True
            self._grant(key)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, deque()).append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # it was handed to us as we were cancelled: pass it on
            else:
                queue = self._waiting.get(key)
                if queue is not None:
                    with contextlib.suppress(ValueError):
                        queue.remove(fut)
                    if not queue:
                        del self._waiting[key]
            raise

    def release(self) -> None:
        """Hand the lock to the first waiter of the next key in turn, or unlock it."""
        if not self._locked:
            raise RuntimeError("FairLock released while not locked")
        while self._waiting:
            key = min(self._waiting, key=lambda k: self._served.get(k, -1))  # first among equals: arrival
            queue = self._waiting[key]
            fut = queue.popleft()
            if not queue:
                del self._waiting[key]
            if not fut.done():
                fut.set_result(None)  # the lock stays locked: it now belongs to that waiter
                self._grant(key)
                return
        self._locked = False

    def _grant(self, key: str) -> None:
        self._grants += 1
        self._served[key] = self._grants
        # Only the holder's and the waiting keys' turns matter: forget keys that left (no leak per session).
        self._served = {k: v for k, v in self._served.items() if k == key or k in self._waiting}

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """``async with lock.hold(session_id):`` — cancelling while waiting is safe (see the class)."""
        await self.acquire(key)
        try:
            yield
        finally:
            self.release()
