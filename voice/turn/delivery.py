"""Reply audio on its way out: where a turn's events and audio go (:class:`ReplySink`), and how many chunks
of a turn were queued and how many handed to the socket.

The turn waits (:meth:`Delivery.wait`) until all were sent before it reports; the first one sent is the turn's
last mark (``first_audio_sent``), and the spread from first to last tells a client behind a buffering proxy
(``reply_audio_sent_spread_ms``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from voice.turn.budget import TurnTimer
from voice.wire import events


class ReplySink(Protocol):
    """Where a turn's events and audio go (the session's writer; a list in tests)."""

    async def send_event(self, ev: events.ServerEvent) -> None:
        """Queue a server event."""

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        """Queue one chunk of reply audio; ``on_sent`` runs once it was handed to the socket."""

    def drop_turn(self, turn_id: int) -> None:
        """Discard audio of this turn not yet sent (barge-in)."""


class Delivery:
    """Counts reply chunks queued and handed to the socket; :meth:`wait` until all were sent."""

    def __init__(self, timer: TurnTimer) -> None:
        self.timer = timer
        self.queued = 0
        self.sent = 0
        self.first_sent_ns: int | None = None
        self.last_sent_ns: int | None = None
        self._all_sent = asyncio.Event()
        self._all_sent.set()

    def on_sent_callback(self) -> Callable[[], None]:
        self.queued += 1
        self._all_sent.clear()
        first = self.queued == 1

        def sent() -> None:
            if first:
                self.first_sent_ns = self.timer.mark("first_audio_sent")
            self.last_sent_ns = self.timer.clock.now_ns()
            self.sent += 1
            if self.sent >= self.queued:
                self._all_sent.set()

        return sent

    async def wait(self) -> None:
        """Wait until every queued chunk was sent. Cancelling only stops the wait."""
        await self._all_sent.wait()

    def spread_ms(self) -> float | None:
        """First chunk sent → last chunk sent, in ms (None before two chunks were sent)."""
        if self.sent < 2 or self.first_sent_ns is None or self.last_sent_ns is None:
            return None
        return round((self.last_sent_ns - self.first_sent_ns) / 1e6, 1)
