"""The socket side of ``/v1/realtime``: client events drive a :class:`~voice.serve.session.Session`, whose output is
translated on its way into the outbox.

The session is the native one (same VAD, speculation, STT window, sentence streaming, turn reports): it is
started at 24 kHz both ways, and its :class:`~voice.serve.outbox.Outbox` is a :class:`RealtimeOutbox`, which
translates every native event and PCM chunk (:class:`~voice.serve.realtime.translate.Translator`) as it is queued,
so the order of the native stream is kept and only text frames reach the client.

* Server VAD (the default): ``input_audio_buffer.append`` feeds the session's VAD like binary frames do.
* Manual (``turn_detection: null``): appended audio is buffered here (at most ``[vad] max_utterance_s``, at any
  pace: there is no VAD to protect); ``commit`` makes it a user item, ``response.create`` runs the turn on it
  (STT, then the reply), counted from the commit.
* ``response.create`` without committed audio answers the conversation as it stands (after a text item).

Cancelling :meth:`RealtimeFront.on_message` is safe: the session's own cancellation rules apply.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.parse
from collections.abc import Callable

import numpy as np
import soxr

from voice.audio import pcm16_to_float
from voice.clock import Clock
from voice.config.config import Config, ConfigError
from voice.runtime.runtime import ModelRuntime
from voice.serve.outbox import Outbox
from voice.serve.realtime import REALTIME_RATE_HZ
from voice.serve.realtime.events import (
    AudioAppend,
    AudioClear,
    AudioCommit,
    Ignored,
    ItemCreate,
    ItemTruncate,
    RealtimeError,
    ResponseCancel,
    ResponseCreate,
    SessionUpdate,
    decode_client_event,
)
from voice.serve.realtime.settings import RealtimeSettings, apply_update, session_config, session_object
from voice.serve.realtime.translate import BYTES_PER_MS, Translator
from voice.serve.session import Session
from voice.turn.endpoint import STT_SAMPLE_RATE_HZ
from voice.wire.events import ServerEvent
from voice.wire.protocol import ProtocolError
from voice.wire.report import TurnReport

log = logging.getLogger("voice.serve.realtime")

#: Shortest audio a manual commit accepts (as OpenAI: ``input_audio_buffer_commit_empty`` under 100 ms).
MIN_COMMIT_MS = 100
#: Query parameter that opts in to our full report as a ``voice.turn_report`` event after ``response.done``.
TURN_REPORT_QUERY = "voice_events"


class RealtimeOutbox(Outbox):
    """An outbox that translates the session's native events and audio into Realtime text frames.

    Translating and queueing are one step under a lock: a sender waiting for room in the queue (backpressure)
    cannot be overtaken by another's frames, so the client sees them in the order they were translated (no
    audio delta of a response after the ``speech_started`` that cancelled it)."""

    def __init__(self, translator: Translator, maxsize: int = 256) -> None:
        super().__init__(maxsize)
        self.translator = translator
        self._order = asyncio.Lock()

    async def send_event(self, ev: ServerEvent) -> None:
        async with self._order:
            for frame in self.translator.native(ev):
                await super().send_text(frame)

    def post_event(self, ev: ServerEvent) -> None:
        for frame in self.translator.native(ev):
            super().post_text(frame)

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        async with self._order:
            frame = self.translator.audio(turn_id, pcm)
            if frame is None:  # the response is being cancelled: nothing more of it goes out
                if on_sent is not None:
                    on_sent()
                return
            await self._put_audio(turn_id, frame, on_sent)

    async def send_frames(self, frames: list[str]) -> None:
        """Queue frames that are already Realtime events."""
        async with self._order:
            for frame in frames:
                await super().send_text(frame)


def wants_turn_reports(path: str) -> bool:
    """``?voice_events=1`` (e.g. ``connect(..., extra_query={"voice_events": "1"})``) opts in."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    return query.get(TURN_REPORT_QUERY, ["0"])[-1] in ("1", "true", "yes")


def requested_model(path: str) -> str:
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    return query.get("model", ["voice"])[-1][:200]


class RealtimeFront:
    """One ``/v1/realtime`` connection: decodes client events and drives its session."""

    def __init__(
        self,
        session_id: str,
        runtime: ModelRuntime,
        config: Config,
        clock: Clock,
        *,
        path: str = "/v1/realtime",
        on_report: Callable[[TurnReport], None] = lambda r: None,
        on_error: Callable[[ProtocolError], None] = lambda e: None,
        on_client_error: Callable[[str], None] = lambda code: None,
    ) -> None:
        self.on_client_error = on_client_error
        """Called with the code of every error sent for a bad client event (the server counts them)."""
        self.base_config = config
        self.settings = RealtimeSettings(model=requested_model(path), instructions=config.llm.system_prompt)
        self.translator = Translator(session_id, barge_in=config.vad.barge_in, turn_reports=wants_turn_reports(path))
        self.outbox = RealtimeOutbox(self.translator, config.server.send_queue_frames)
        self.session = Session(
            session_id, runtime, config, clock, on_report=on_report, on_error=on_error, outbox=self.outbox
        )
        self.translator.session = self._session_object(self.settings, config)
        self._buffer: list[bytes] = []
        self._buffered_bytes = 0
        self._committed: list[tuple[bytes, int]] = []
        """Manual mode: committed audio not yet answered, with the commit time (ns)."""
        self._last_user_text = ""

    async def start(self) -> None:
        """Open the session at 24 kHz both ways; the client gets ``session.created``."""
        await self.session.on_text(
            json.dumps({"type": "start", "sample_rate": REALTIME_RATE_HZ, "output_sample_rate": REALTIME_RATE_HZ})
        )

    async def _send_error(self, err: RealtimeError) -> None:
        log.warning("[%s] realtime %s: %s", self.session.id, err.code, err.message)
        self.on_client_error(err.code)
        await self.outbox.send_frames(self.translator.error(err))

    async def on_message(self, message: str | bytes) -> ProtocolError | None:
        """Handle one client frame; a returned error is sent by the server (in the native shape, translated)."""
        ev = decode_client_event(message)
        if isinstance(ev, RealtimeError):
            await self._send_error(ev)
        elif isinstance(ev, AudioAppend):
            return await self._append(ev)
        elif isinstance(ev, SessionUpdate):
            await self._update(ev)
        elif isinstance(ev, AudioCommit):
            await self._commit(ev)
        elif isinstance(ev, AudioClear):
            self._buffer.clear()
            self._buffered_bytes = 0
            if self.settings.server_vad and self.session.in_speech:
                self.session.configure(self.session.config)  # the VAD forgets the utterance in progress
            await self.outbox.send_frames(self.translator.cleared())
        elif isinstance(ev, ResponseCreate):
            await self._respond(ev)
        elif isinstance(ev, ResponseCancel):
            await self._cancel(ev)
        elif isinstance(ev, ItemCreate):
            await self._item(ev)
        elif isinstance(ev, ItemTruncate):
            await self._truncate(ev)
        else:
            assert isinstance(ev, Ignored)
        return None

    # ------------------------------------------------------------------ audio
    async def _append(self, ev: AudioAppend) -> ProtocolError | None:
        self.translator.audio_in_ms += len(ev.pcm) / BYTES_PER_MS
        if self.settings.server_vad:
            return await self.session.on_audio(ev.pcm)
        cap = round(self.base_config.vad.max_utterance_s * REALTIME_RATE_HZ * 2)
        if self._buffered_bytes + len(ev.pcm) > cap:
            await self._send_error(RealtimeError(
                "input_audio_buffer_too_large",
                f"the input buffer would hold more than {self.base_config.vad.max_utterance_s:g} s "
                "([vad] max_utterance_s); commit or clear it (audio dropped)",
                "audio", ev.event_id,
            ))
            return None
        self._buffer.append(ev.pcm)
        self._buffered_bytes += len(ev.pcm)
        return None

    async def _commit(self, ev: AudioCommit) -> None:
        if self.settings.server_vad and self.session.in_speech:
            await self.session.on_text('{"type":"end_turn"}')  # ends the utterance now: the VAD's turn follows
            return
        if self.settings.server_vad or self._buffered_bytes < MIN_COMMIT_MS * BYTES_PER_MS:
            what = "no speech in progress" if self.settings.server_vad else (
                f"{self._buffered_bytes / BYTES_PER_MS:.0f} ms of audio in the input buffer"
            )
            await self._send_error(RealtimeError(
                "input_audio_buffer_commit_empty",
                f"nothing to commit ({what}); commit at least {MIN_COMMIT_MS} ms of audio",
                None, ev.event_id,
            ))
            return
        pcm = b"".join(self._buffer)
        self._buffer.clear()
        self._buffered_bytes = 0
        self._committed.append((pcm, self.session.clock.now_ns()))
        await self.outbox.send_frames(self.translator.committed(len(pcm) / BYTES_PER_MS / 1000))

    # ------------------------------------------------------------------ responses
    async def _respond(self, ev: ResponseCreate) -> None:
        if self.translator.response_active:
            await self._send_error(RealtimeError(
                "conversation_already_has_active_response",
                "a response is already in progress; cancel it (response.cancel) or wait for response.done",
                None, ev.event_id,
            ))
            return
        await self.outbox.send_frames(self.translator.request_response(self.settings.text_only))
        if self._committed:
            pcm = b"".join(p for p, _ in self._committed)
            ended_ns = self._committed[-1][1]
            self._committed.clear()
            audio = pcm16_to_float(pcm)
            audio = soxr.resample(audio, REALTIME_RATE_HZ, STT_SAMPLE_RATE_HZ).astype(np.float32)
            await self.session.end_utterance(audio, ended_ns=ended_ns)
        else:
            await self.session.end_utterance(None, text=self._last_user_text)

    async def _cancel(self, ev: ResponseCancel) -> None:
        if not self.translator.response_active:
            await self._send_error(RealtimeError(
                "response_cancel_not_active", "there is no response in progress to cancel", None, ev.event_id
            ))
            return
        self.translator.cancel_requested()
        await self.session.cancel_turns()

    # ------------------------------------------------------------------ conversation
    async def _item(self, ev: ItemCreate) -> None:
        if ev.role == "system":
            await self._send_error(RealtimeError(
                "unsupported_item", "system messages are not supported here: set session.instructions instead",
                "item.role", ev.event_id,
            ))
            return
        if not ev.text:
            await self._send_error(RealtimeError("invalid_value", "the item's text is empty", "item.content",
                                                 ev.event_id))
            return
        self.session.history.add("user" if ev.role == "user" else "assistant", ev.text)
        if ev.role == "user":
            self._last_user_text = ev.text
        frames, _ = self.translator.item_created(ev.role, ev.text, ev.item_id)
        await self.outbox.send_frames(frames)

    async def _truncate(self, ev: ItemTruncate) -> None:
        latest = self.translator.is_latest_assistant_item(ev.item_id)
        answer = self.translator.truncated(ev.item_id, ev.content_index, ev.audio_end_ms)
        if answer is None:
            await self._send_error(RealtimeError(
                "item_truncate_invalid_item_id", f"no assistant audio item {ev.item_id!r} to truncate", "item_id",
                ev.event_id,
            ))
            return
        frames, heard = answer
        if latest:
            self._truncate_history(heard)
        await self.outbox.send_frames(frames)

    def _truncate_history(self, heard: str) -> None:
        """The last assistant message becomes what the user heard of it (the next turn knows it was cut)."""
        history = self.session.history
        reply = next((m for m in reversed(history.messages) if m.role == "assistant"), None)
        if reply is not None:
            history.cut_reply(reply, heard)

    # ------------------------------------------------------------------ settings
    def _session_object(self, settings: RealtimeSettings, config: Config) -> dict[str, object]:
        return session_object(self.session.id, settings, config, turn_model=self.session.runtime.turn_score is not None)

    async def _update(self, ev: SessionUpdate) -> None:
        new = apply_update(self.settings, ev.session, ev.event_id)
        if isinstance(new, RealtimeError):
            await self._send_error(new)
            return
        try:
            config = session_config(self.base_config, new)
        except ConfigError as e:
            await self._send_error(RealtimeError("invalid_value", str(e), "session.audio.input.turn_detection",
                                                 ev.event_id))
            return
        session = self.session
        if (config.vad, config.turn) != (session.config.vad, session.config.turn) or new.server_vad != (
            self.settings.server_vad
        ):
            session.configure(config)  # the VAD starts afresh with the new settings
        else:
            session.config = config
        if not new.server_vad and self.settings.server_vad:
            self._buffer.clear()
            self._buffered_bytes = 0
        self.settings = new
        session.speak_replies = not new.text_only
        self.translator.text_only = new.text_only
        self.translator.barge_in = config.vad.barge_in
        self.translator.session = self._session_object(new, config)
        await self.outbox.send_frames(self.translator.session_updated())
