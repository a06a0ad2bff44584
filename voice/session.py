"""Per-connection state: the audio stream, VAD and endpointing, the conversation, the current turn.

The session is driven by the server's reader task (:meth:`Session.on_text`, :meth:`Session.on_audio`) and
writes through an :class:`Outbox` drained by the writer task. It owns at most one running turn task;
speech that starts while a turn runs cancels it (barge-in) when ``[vad] barge_in`` is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import soxr

from voice.budget import Clock, TurnReport, TurnTimer
from voice.config import Config
from voice.endpoint import STT_SAMPLE_RATE_HZ, Endpointer, SpeechEnded, SpeechStarted
from voice.engine import Engines
from voice.history import History
from voice.protocol import (
    PROTOCOL_VERSION,
    RATE_LIMITED,
    EndTurn,
    ProtocolError,
    Reset,
    Start,
    Stop,
    check_audio_frame,
    decode_client_text,
    event,
)
from voice.stages import VadStream
from voice.turn import Utterance, run_turn

log = logging.getLogger("voice.session")


@dataclass(frozen=True)
class _Audio:
    turn_id: int
    pcm: bytes
    on_sent: Callable[[], None] | None


class Outbox:
    """A bounded queue of outgoing frames (the :class:`~voice.turn.ReplySink` of a session).

    ``put`` waits when the queue is full, so a slow client slows its own turn (backpressure) without
    unbounded memory. Audio of a dropped (interrupted) turn is discarded before it reaches the socket.
    """

    def __init__(self, maxsize: int = 256) -> None:
        self.queue: asyncio.Queue[str | _Audio] = asyncio.Queue(maxsize=maxsize)
        self._dropped: set[int] = set()

    async def send_event(self, text: str) -> None:
        await self.queue.put(text)

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        if turn_id not in self._dropped:
            await self.queue.put(_Audio(turn_id, pcm, on_sent))

    def drop_turn(self, turn_id: int) -> None:
        self._dropped.add(turn_id)

    async def next_frame(self) -> tuple[str | bytes, Callable[[], None] | None] | None:
        """The next frame to send, skipping dropped audio; ``None`` never (waits)."""
        while True:
            item = await self.queue.get()
            if isinstance(item, str):
                return item, None
            if item.turn_id not in self._dropped:
                return item.pcm, item.on_sent


class Session:
    """One client connection's conversation."""

    def __init__(
        self,
        session_id: str,
        engines: Engines,
        config: Config,
        clock: Clock,
        *,
        on_report: Callable[[TurnReport], None] = lambda r: None,
        outbox: Outbox | None = None,
    ) -> None:
        self.id = session_id
        self.engines = engines
        self.config = config
        self.clock = clock
        self.on_report = on_report
        self.outbox = outbox or Outbox()
        self.history = History()
        self.started: Start | None = None
        self.stopping = False
        self._endpointer = Endpointer(config.vad)
        self._vad: VadStream | None = None
        self._resampler: soxr.ResampleStream | None = None
        self._pending = np.zeros(0, np.float32)
        self._turn: asyncio.Task[TurnReport] | None = None
        self._turn_id = 0
        self._audio_in_s = 0.0
        self._start_ns = clock.now_ns()
        self.turns: list[asyncio.Task[TurnReport]] = []

    # ------------------------------------------------------------------ input
    async def on_text(self, text: str) -> ProtocolError | None:
        """Handle a text frame; returns an error to report (``close_code`` set: close the connection)."""
        msg = decode_client_text(text)
        if isinstance(msg, ProtocolError):
            return msg
        if isinstance(msg, Start):
            if self.started is not None:
                return ProtocolError("already_started", "the stream is already started; send audio")
            self.started = msg
            self._start_ns = self.clock.now_ns()
            if msg.sample_rate != STT_SAMPLE_RATE_HZ:
                self._resampler = soxr.ResampleStream(msg.sample_rate, STT_SAMPLE_RATE_HZ, 1, dtype="float32")
            self._vad = self.engines.vad.stream()
            await self.outbox.send_event(
                event(
                    "ready",
                    session_id=self.id,
                    protocol=PROTOCOL_VERSION,
                    input_sample_rate=msg.sample_rate,
                    output_sample_rate=self.output_rate,
                )
            )
        elif isinstance(msg, EndTurn):
            for ev in self._endpointer.force_end():
                await self._on_endpoint_event(ev)
        elif isinstance(msg, Reset):
            self.history.clear()
        elif isinstance(msg, Stop):
            self.stopping = True
        return None

    @property
    def output_rate(self) -> int:
        if self.started is not None and self.started.output_sample_rate:
            return self.started.output_sample_rate
        return self.engines.tts.sample_rate

    async def on_audio(self, data: bytes) -> ProtocolError | None:
        """Handle a binary frame of PCM s16le audio at the declared rate."""
        err = check_audio_frame(data, started=self.started is not None)
        if err is not None:
            return err
        assert self.started is not None and self._vad is not None
        seconds = len(data) / 2 / self.started.sample_rate
        elapsed_s = (self.clock.now_ns() - self._start_ns) / 1e9
        limit = self.config.server.max_ingress_realtime
        if self._audio_in_s + seconds > limit * elapsed_s + 2.0:
            return ProtocolError(
                RATE_LIMITED,
                f"audio is arriving faster than {limit:g}x real time; pace it (frame dropped)",
            )
        self._audio_in_s += seconds
        samples = np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0
        if self._resampler is not None:
            samples = self._resampler.resample_chunk(samples)
        self._pending = np.concatenate([self._pending, samples])
        n = self._vad.frame_samples
        frames = [self._pending[i : i + n] for i in range(0, len(self._pending) - n + 1, n)]
        self._pending = self._pending[len(frames) * n :]
        if not frames:
            return None
        vad = self._vad
        probs = await asyncio.to_thread(lambda: [vad.probability(f) for f in frames])
        for frame, p in zip(frames, probs, strict=True):
            for ev in self._endpointer.feed(frame, p):
                await self._on_endpoint_event(ev)
        return None

    # ------------------------------------------------------------------ turns
    async def _on_endpoint_event(self, ev: SpeechStarted | SpeechEnded) -> None:
        now_ns = self.clock.now_ns()
        if isinstance(ev, SpeechStarted):
            await self.outbox.send_event(
                event("speech_started", audio_offset_ms=round(ev.audio_offset_ms, 1))
            )
            if self.config.vad.barge_in and self._turn is not None and not self._turn.done():
                log.info("[%s] barge-in: cancelling turn %d", self.id, self._turn_id)
                self._turn.cancel()
            return
        self._turn_id += 1
        timer = TurnTimer(self.clock, self.id, self._turn_id)
        timer.mark("speech_end", at_ns=now_ns - round(ev.trailing_silence_ms * 1e6))
        timer.mark("endpoint", at_ns=now_ns)
        await self.outbox.send_event(
            event(
                "speech_ended",
                turn_id=self._turn_id,
                forced=ev.forced,
                trailing_silence_ms=round(ev.trailing_silence_ms, 1),
            )
        )
        utterance = Utterance(ev.audio, ev.trailing_silence_ms, ev.forced)
        previous = self._turn
        self._turn = asyncio.create_task(self._run(previous, utterance, timer), name=f"{self.id}-turn")
        self.turns.append(self._turn)
        self.turns = [t for t in self.turns if not t.done()]

    async def _run(
        self, previous: asyncio.Task[TurnReport] | None, utterance: Utterance, timer: TurnTimer
    ) -> TurnReport:
        if previous is not None:
            with contextlib.suppress(BaseException):
                await previous
        return await run_turn(
            self.engines,
            self.config,
            self.history,
            utterance,
            timer,
            self.outbox,
            output_rate_hz=self.output_rate,
            on_report=self.on_report,
        )

    async def cancel_turns(self) -> None:
        """Cancel the running turn (if any) and wait until it has stopped."""
        pending = [t for t in self.turns if not t.done()]
        for t in pending:
            t.cancel()
        for t in pending:
            with contextlib.suppress(BaseException):
                await t

    async def wait_turns(self) -> None:
        """Wait for turns in flight to finish."""
        for t in list(self.turns):
            with contextlib.suppress(BaseException):
                await t
