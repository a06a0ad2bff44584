"""A speculative turn's output, held until the end of the user's turn is confirmed.

When the user pauses, the session starts the reply at once (STT → LLM → TTS) instead of waiting out the
silence window. Whatever that turn sends goes into a :class:`HeldSink` and whatever it remembers into a
copy of the history. Then exactly one of two state transitions happens, on the event loop:

* :meth:`HeldSink.commit` — the turn really ended: the held frames are handed on, in order, to the real
  sink, and every later frame goes straight through. (The session also adopts the history copy.)
* :meth:`HeldSink.discard` — the user spoke again: everything held is dropped and every later frame is
  dropped too. The session cancels the turn task; nothing of it ever reaches the client or the history.

Cancellation: :meth:`HeldSink.flush` runs as its own task after a commit; cancelling it stops handing on
frames (the connection is going away). ``send_*`` never block while held: the speculative turn is bounded
by ``max_reply_tokens`` like any turn.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from voice.turn.delivery import ReplySink
from voice.wire.events import ServerEvent, Transcript


class SpeculationState(enum.Enum):
    HELD = "held"
    FLUSHING = "flushing"
    LIVE = "live"
    DISCARDED = "discarded"


@dataclass(frozen=True)
class _Event:
    event: ServerEvent


@dataclass(frozen=True)
class _Audio:
    turn_id: int
    pcm: bytes
    on_sent: Callable[[], None] | None


class HeldSink:
    """A :class:`~voice.turn.delivery.ReplySink` that holds frames until :meth:`commit` or :meth:`discard`."""

    def __init__(self, target: ReplySink, on_transcript: Callable[[str], None] | None = None) -> None:
        self._target = target
        self._on_transcript = on_transcript
        """Told the words of the speculative turn as soon as it sends its transcript, while still held (the
        session hands them to the end-of-turn decision: ``[turn] text_evidence``)."""
        self._held: deque[_Event | _Audio] = deque()
        self.state = SpeculationState.HELD
        self.held_frames_peak = 0

    @property
    def held_frames(self) -> int:
        return len(self._held)

    @property
    def committed(self) -> bool:
        return self.state in (SpeculationState.FLUSHING, SpeculationState.LIVE)

    async def send_event(self, ev: ServerEvent) -> None:
        if (
            isinstance(ev, Transcript)
            and self.state is SpeculationState.HELD
            and self._on_transcript is not None
        ):
            self._on_transcript(ev.text)
        if self.state is SpeculationState.LIVE:
            await self._target.send_event(ev)
        elif self.state is not SpeculationState.DISCARDED:
            self._hold(_Event(ev))

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        if self.state is SpeculationState.LIVE:
            await self._target.send_audio(turn_id, pcm, on_sent)
        elif self.state is not SpeculationState.DISCARDED:
            self._hold(_Audio(turn_id, pcm, on_sent))

    def drop_turn(self, turn_id: int) -> None:
        self._held = deque(f for f in self._held if not (isinstance(f, _Audio) and f.turn_id == turn_id))
        if self.committed:
            self._target.drop_turn(turn_id)

    def _hold(self, frame: _Event | _Audio) -> None:
        self._held.append(frame)
        self.held_frames_peak = max(self.held_frames_peak, len(self._held))

    def commit(self) -> None:
        """The turn is real: from now on frames go to the target (run :meth:`flush` to send the held ones)."""
        if self.state is SpeculationState.HELD:
            self.state = SpeculationState.FLUSHING

    def discard(self) -> None:
        """The turn is void: drop what is held and everything it still sends."""
        self.state = SpeculationState.DISCARDED
        self._held.clear()

    async def flush(self) -> None:
        """Hand the held frames to the target in order, then go live. Frames the turn sends meanwhile
        queue behind them, so the order is kept."""
        while self.state is SpeculationState.FLUSHING and self._held:
            frame = self._held.popleft()
            if isinstance(frame, _Event):
                await self._target.send_event(frame.event)
            else:
                await self._target.send_audio(frame.turn_id, frame.pcm, frame.on_sent)
        if self.state is SpeculationState.FLUSHING:
            self.state = SpeculationState.LIVE
