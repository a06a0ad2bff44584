"""A websocket client that talks like a microphone: real-time 20 ms frames, then the clip's room tone (or
silence) until the reply.

Used by ``voice demo``, ``voice bench`` and the tests. All times are the client's monotonic clock
(:func:`time.perf_counter_ns`). A frame of samples ``[k, k+F)`` is sent when its last sample has been
"captured", i.e. at ``t0 + (k+F)/rate``, and sample ``k`` was spoken at ``t0 + k/rate`` — so the
frame-buffering delay a real microphone adds is part of what is measured.

One utterance may be heard by the server as several turns (a pause longer than its silence window
splits it). The utterance's speech end belongs to the *last* of them: :attr:`Conversation.utterance_turns`
lists the turn ids each utterance produced, and only the last one gets ``speech_end_ns``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl as ssl_lib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect

from voice.audio import first_sound_sample, float_to_pcm16, pcm16_to_float
from voice.wire.events import (
    AudioStart,
    Error,
    Interrupt,
    Ready,
    ReplyText,
    ServerEvent,
    SpeechEnded,
    Transcript,
    decode_server,
)
from voice.wire.protocol import UNKNOWN_TYPE, ProtocolError, Start, Stop, encode_client
from voice.wire.report import TurnReport

LATE_FRAME_MS = 2.0
"""Frames sent later than this behind their real-time schedule are recorded in ``Conversation.late_frames``."""


@dataclass
class ClientTurn:
    """What the client saw of one turn."""

    turn_id: int
    speech_end_ns: int | None = None
    report: dict[str, Any] | None = None
    transcript: str = ""
    reply_text: list[str] = field(default_factory=list)
    sample_rate: int = 0
    chunks: list[tuple[int, bytes]] = field(default_factory=list)
    interrupted: bool = False
    speech_ended_ns: int | None = None
    """Arrival of the server's ``speech_ended`` event for this turn (client clock)."""
    trailing_silence_ms: float | None = None
    """The silence the server's VAD waited before ending the turn (from ``speech_ended``)."""
    report_ns: int | None = None
    """Arrival of the ``turn_report``."""

    def on_event(self, ev: ServerEvent, now_ns: int) -> None:
        """Take in one of this turn's events, arrived at ``now_ns``."""
        match ev:
            case SpeechEnded(trailing_silence_ms=silence):
                self.speech_ended_ns, self.trailing_silence_ms = now_ns, silence
            case Transcript(text=text):
                self.transcript = text
            case AudioStart(sample_rate=rate):
                self.sample_rate = rate
            case ReplyText(text=text):
                self.reply_text.append(text)
            case Interrupt():
                self.interrupted = True
            case TurnReport() as report:
                self.report, self.report_ns = report.to_dict(), now_ns

    def first_chunk_ns(self) -> int | None:
        """Arrival of the first reply audio chunk, silent or not."""
        return self.chunks[0][0] if self.chunks else None

    @property
    def pcm(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    def first_audio_ns(self, threshold: float = 0.01) -> int | None:
        """When the first non-silent reply sample would sound, on a player that starts each chunk on
        arrival or when the previous chunk has finished playing, whichever is later."""
        play_end_ns = 0
        for arrival_ns, chunk in self.chunks:
            samples = pcm16_to_float(chunk)
            start_ns = max(arrival_ns, play_end_ns)
            i = first_sound_sample(samples, threshold)
            if i is not None:
                return start_ns + round(i * 1e9 / self.sample_rate)
            play_end_ns = start_ns + round(len(samples) * 1e9 / self.sample_rate)
        return None

    def mouth_to_ear_ms(self) -> float | None:
        first = self.first_audio_ns()
        if first is None or self.speech_end_ns is None:
            return None
        return (first - self.speech_end_ns) / 1e6


@dataclass
class Conversation:
    turns: dict[int, ClientTurn] = field(default_factory=dict)
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    session_id: str = ""
    utterance_turns: list[list[int]] = field(default_factory=list)
    """For each utterance spoken, the ids of the turns the server heard in it (in order)."""
    max_send_lag_ms: float = 0.0
    """Worst lateness of a frame against its real-time schedule (a busy client would distort timing)."""
    late_frames: list[tuple[int, float]] = field(default_factory=list)
    """(send time ns, lateness ms) of every frame sent more than ``LATE_FRAME_MS`` behind its schedule."""

    def max_send_lag_before_ms(self, t_ns: int) -> float:
        """Worst frame lateness among frames sent before ``t_ns`` (0 if none was late)."""
        return max((lag for sent, lag in self.late_frames if sent <= t_ns), default=0.0)

    def turn(self, turn_id: int) -> ClientTurn:
        return self.turns.setdefault(turn_id, ClientTurn(turn_id))


@dataclass(frozen=True)
class SpokenClip:
    """A clip to speak: float audio in [-1, 1] at ``rate_hz`` and where its speech ends (sample index)."""

    audio: np.ndarray
    rate_hz: int
    speech_end_sample: int
    room_tone: np.ndarray | None = None
    """What the room sounds like, looped seamlessly (at ``rate_hz``): it goes on after the clip until the reply,
    as a room's noise goes on after a speaker stops. None: digital silence."""

    def chunk(self, at: int, samples: int) -> np.ndarray:
        """``samples`` of what is heard from sample ``at`` on: the clip, then its room tone (or silence)."""
        head = self.audio[at : at + samples]
        rest = samples - len(head)
        if rest == 0:
            return head
        if self.room_tone is None or len(self.room_tone) == 0:
            tail = np.zeros(rest, np.float32)
        else:
            start = (at + len(head) - len(self.audio)) % len(self.room_tone)
            tail = np.resize(np.roll(self.room_tone, -start), rest).astype(np.float32)
        return np.concatenate([head, tail]) if len(head) else tail


async def _reader(ws: ClientConnection, conv: Conversation, current_audio_turn: list[int]) -> None:
    async for message in ws:
        now = time.perf_counter_ns()
        if isinstance(message, bytes):
            if current_audio_turn:
                conv.turn(current_audio_turn[-1]).chunks.append((now, message))
            continue
        raw = json.loads(message)
        conv.events.append((now, raw))
        match decode_server(message):
            case Ready(session_id=session_id):
                conv.session_id = session_id
            case Error():
                conv.errors.append(raw)
            case ProtocolError() as bad:  # a malformed event is an error; an unknown type, a newer server's
                if bad.code != UNKNOWN_TYPE:
                    conv.errors.append({"code": "bad_server_event", "message": bad.message})
            case AudioStart(turn_id=tid) as ev:
                conv.turn(tid).on_event(ev, now)
                current_audio_turn.append(tid)
            case SpeechEnded() | Transcript() | ReplyText() | Interrupt() | TurnReport() as ev:
                conv.turn(ev.turn_id).on_event(ev, now)


async def _send_when_due(conv: Conversation, due_ns: int) -> None:
    """Wait until a frame is due (real-time pacing), and record how late it goes out."""
    delay = (due_ns - time.perf_counter_ns()) / 1e9
    if delay > 0:
        await asyncio.sleep(delay)
    sent_ns = time.perf_counter_ns()
    lag_ms = (sent_ns - due_ns) / 1e6
    conv.max_send_lag_ms = max(conv.max_send_lag_ms, lag_ms)
    if lag_ms > LATE_FRAME_MS:
        conv.late_frames.append((sent_ns, round(lag_ms, 2)))


def _answered(
    conv: Conversation, speech_end_ns: int | None, before: set[int], now_ns: int, settle_ns: int
) -> bool:
    """The utterance has been answered: it produced a turn, every turn seen so far has its report, and
    either a turn ended after the utterance's speech did, or ``settle_ns`` have passed since the speech end
    (the server's VAD may end the turn a little *before* the end an energy analysis finds, e.g. on a
    trailing breath or click; without this the client would stream silence until it times out)."""
    if speech_end_ns is None:
        return False
    new = [t for tid, t in conv.turns.items() if tid not in before]
    if not new or not all(t.report is not None for t in conv.turns.values()):
        return False
    ended_after = any(t.speech_ended_ns is not None and t.speech_ended_ns >= speech_end_ns for t in new)
    return ended_after or now_ns >= speech_end_ns + settle_ns


def _playback_end_ns(conv: Conversation, turn_ids: Sequence[int]) -> int:
    """When the replies of these turns would have finished playing (now, if none had audio)."""
    end_ns = time.perf_counter_ns()
    for tid in turn_ids:
        t = conv.turns[tid]
        first = t.first_chunk_ns()
        if first is not None and t.sample_rate:
            end_ns = max(end_ns, first + round(len(t.pcm) / 2 * 1e9 / t.sample_rate))
    return end_ns


async def converse(
    url: str,
    utterances: Sequence[SpokenClip],
    *,
    frame_ms: int = 20,
    realtime: bool = True,
    reply_timeout_s: float = 60.0,
    token: str | None = None,
    output_sample_rate: int | None = None,
    settle_s: float = 2.0,
    ssl: ssl_lib.SSLContext | None = None,
    pauses_s: Sequence[float] = (),
    start_delay_s: float = 0.0,
) -> Conversation:
    """Speak each utterance in turn, then its room tone (or silence) until that turn's report arrives.

    ``settle_s``: if no turn ended after the utterance's speech end, it counts as answered once every turn
    has its report and this long has passed since the speech end (longer than the server's silence window).
    ``ssl``: the TLS context for a ``wss://`` URL (None: the system's trusted CAs).
    ``pauses_s[n]``: after utterance ``n`` is answered, go on streaming silence while its reply would play
    (from its first chunk's arrival, for the reply audio's duration) and then this many seconds more, as a
    person listens and then pauses before speaking again. ``start_delay_s``: silence before the first
    utterance. Cancelling closes the connection."""
    conv = Conversation()
    audio_turn: list[int] = []
    headers = {"Authorization": f"Bearer {token}"} if token else None
    tls: dict[str, Any] = {"ssl": ssl} if ssl is not None else {}  # ssl=None is refused for wss://
    async with connect(url, max_size=2**22, additional_headers=headers, **tls) as ws:
        rate = utterances[0].rate_hz if utterances else 16000
        await ws.send(encode_client(Start(rate, output_sample_rate=output_sample_rate or None)))
        reader = asyncio.create_task(_reader(ws, conv, audio_turn))
        settle_ns = round(settle_s * 1e9)
        try:
            t0 = time.perf_counter_ns()
            sent_samples = 0
            rate_ns = 1e9 / rate
            frame = rate * frame_ms // 1000

            async def silence_until(until_ns: int) -> None:
                nonlocal sent_samples
                while t0 + round(sent_samples * rate_ns) < until_ns and not reader.done():
                    sent_samples += frame
                    due = t0 + round(sent_samples * rate_ns)
                    await asyncio.sleep(max(0.0, (due - time.perf_counter_ns()) / 1e9))
                    await ws.send(float_to_pcm16(np.zeros(frame, np.float32)))

            await silence_until(t0 + round(start_delay_s * 1e9))
            for n, utt in enumerate(utterances, start=1):
                frame = rate * frame_ms // 1000
                begin = sent_samples
                before = set(conv.turns)
                speech_end_ns: int | None = None
                pcm = utt.audio
                i = 0
                while True:
                    if i >= len(pcm):
                        now = time.perf_counter_ns()
                        if reader.done() or _answered(conv, speech_end_ns, before, now, settle_ns):
                            break
                    chunk = utt.chunk(i, frame)
                    i += len(chunk)
                    sent_samples += len(chunk)
                    if realtime:
                        await _send_when_due(conv, t0 + round(sent_samples * 1e9 / rate))
                    await ws.send(float_to_pcm16(chunk))
                    if speech_end_ns is None and i >= utt.speech_end_sample:
                        speech_end_ns = t0 + round((begin + utt.speech_end_sample) * 1e9 / rate)
                    if (sent_samples - begin) / rate > len(pcm) / rate + reply_timeout_s:
                        raise TimeoutError(f"no reply to utterance {n} within {reply_timeout_s} s")
                new_ids = sorted(set(conv.turns) - before)
                conv.utterance_turns.append(new_ids)
                if new_ids:
                    # The speech end of the utterance is the end of its last turn's speech.
                    conv.turns[new_ids[-1]].speech_end_ns = speech_end_ns
                if n <= len(pauses_s):
                    await silence_until(_playback_end_ns(conv, new_ids) + round(pauses_s[n - 1] * 1e9))
            await ws.send(encode_client(Stop()))
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(reader, 10)
        finally:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
    return conv
