"""The outgoing frames of one connection: a bounded queue between a session's turns and its writer task.

It is the :class:`~voice.turn.delivery.ReplySink` of a session. Backpressure: ``send_*`` wait while the queue is full,
so a slow client slows its own turn, never the server. Barge-in: the audio of a dropped turn is discarded,
queued or not. Closing (the connection is gone) discards everything and never blocks a sender again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from voice.wire.events import ServerEvent, encode_server


@dataclass(frozen=True)
class _Audio:
    turn_id: int
    pcm: bytes | str
    """A binary frame of PCM, or a text frame carrying it (a protocol that sends audio as JSON)."""
    on_sent: Callable[[], None] | None


class Outbox:
    """A bounded queue of outgoing frames (the :class:`~voice.turn.delivery.ReplySink` of a session).

    ``send_*`` wait while the queue is full, so a slow client slows its own turn (backpressure) without
    unbounded memory: at most ``maxsize`` frames are held. Audio of a dropped (interrupted) turn is
    discarded, queued or not. After :meth:`close` (the connection is gone) every send returns at once
    and discards its frame, and a waiting :meth:`next_frame` returns ``None``: nothing blocks on a dead
    connection.
    """

    def __init__(self, maxsize: int = 256) -> None:
        self.maxsize = maxsize
        self._items: deque[str | _Audio] = deque()
        self._space = asyncio.Event()
        self._ready = asyncio.Event()
        self._dropped: set[int] = set()
        self.closed = False
        self.bytes_queued = 0
        self.peak_bytes = 0
        self.peak_frames = 0

    async def _put(self, item: str | _Audio) -> None:
        while not self.closed and len(self._items) >= self.maxsize:
            self._space.clear()
            await self._space.wait()
        if self.closed:
            return
        self._items.append(item)
        self.bytes_queued += len(item) if isinstance(item, str) else len(item.pcm)
        self.peak_bytes = max(self.peak_bytes, self.bytes_queued)
        self.peak_frames = max(self.peak_frames, len(self._items))
        self._ready.set()

    async def send_event(self, ev: ServerEvent) -> None:
        await self._put(encode_server(ev))

    async def send_text(self, text: str) -> None:
        """Queue a text frame that is already encoded."""
        await self._put(text)

    def post_event(self, ev: ServerEvent) -> None:
        """Queue an event without waiting, even past ``maxsize`` (for reports that must not be lost
        and cannot wait: a few bytes per turn)."""
        self.post_text(encode_server(ev))

    def post_text(self, text: str) -> None:
        """:meth:`post_event` for a text frame that is already encoded."""
        if not self.closed:
            self._items.append(text)
            self.bytes_queued += len(text)
            self._ready.set()

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        await self._put_audio(turn_id, pcm, on_sent)

    async def _put_audio(self, turn_id: int, frame: bytes | str, on_sent: Callable[[], None] | None) -> None:
        """Queue one frame of a turn's audio (binary, or text for JSON protocols); dropped with the turn."""
        if turn_id not in self._dropped:
            await self._put(_Audio(turn_id, frame, on_sent))

    def drop_turn(self, turn_id: int) -> None:
        """Discard this turn's audio: what is queued now and whatever it still sends."""
        self._dropped.add(turn_id)
        kept = deque(i for i in self._items if isinstance(i, str) or i.turn_id != turn_id)
        if len(kept) != len(self._items):
            self._items = kept
            self.bytes_queued = sum(len(i) if isinstance(i, str) else len(i.pcm) for i in kept)
            self._space.set()

    def forget_turn(self, turn_id: int) -> None:
        """The turn is over and sends nothing more: stop remembering it was dropped."""
        self._dropped.discard(turn_id)

    def __len__(self) -> int:
        return len(self._items)

    def close(self) -> None:
        """The connection is gone: discard everything and never block a sender again."""
        self.closed = True
        self._items.clear()
        self.bytes_queued = 0
        self._space.set()
        self._ready.set()

    async def next_frame(self) -> tuple[str | bytes, Callable[[], None] | None] | None:
        """The next frame to send (waits for one); ``None`` once the outbox is closed."""
        while True:
            while not self._items and not self.closed:
                self._ready.clear()
                await self._ready.wait()
            if self.closed:
                return None
            item = self._items.popleft()
            self._space.set()
            if isinstance(item, str):
                self.bytes_queued -= len(item)
                return item, None
            self.bytes_queued -= len(item.pcm)
            if item.turn_id not in self._dropped:
                return item.pcm, item.on_sent

    async def drain(self, timeout_s: float) -> bool:
        """Wait until everything queued was taken by the writer (or the outbox closed); False on timeout."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while self._items and not self.closed:
                    self._space.clear()
                    await self._space.wait()
                return True
        return False
