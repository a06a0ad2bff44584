"""A websocket client that talks like a microphone: real-time 20 ms frames, then silence until the reply.

Used by ``voice demo``, ``voice bench`` and the tests. All times are the client's monotonic clock
(:func:`time.perf_counter_ns`). A frame of samples ``[k, k+F)`` is sent when its last sample has been
"captured", i.e. at ``t0 + (k+F)/rate``, and sample ``k`` was spoken at ``t0 + k/rate`` — so the
frame-buffering delay a real microphone adds is part of what is measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect

from voice.audio import first_sound_sample, float_to_pcm16, pcm16_to_float


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

    def turn(self, turn_id: int) -> ClientTurn:
        return self.turns.setdefault(turn_id, ClientTurn(turn_id))


@dataclass(frozen=True)
class Utterance:
    """A clip to speak: int16-range float audio at ``rate_hz`` and where its speech ends (sample index)."""

    audio: np.ndarray
    rate_hz: int
    speech_end_sample: int


async def _reader(ws: ClientConnection, conv: Conversation, current_audio_turn: list[int]) -> None:
    async for message in ws:
        now = time.perf_counter_ns()
        if isinstance(message, bytes):
            if current_audio_turn:
                conv.turn(current_audio_turn[-1]).chunks.append((now, message))
            continue
        ev = json.loads(message)
        conv.events.append((now, ev))
        kind = ev.get("type")
        tid = ev.get("turn_id")
        if kind == "ready":
            conv.session_id = ev["session_id"]
        elif kind == "error":
            conv.errors.append(ev)
        elif kind == "speech_ended" and tid is not None:
            conv.turn(tid)
        elif kind == "transcript" and tid is not None:
            conv.turn(tid).transcript = ev["text"]
        elif kind == "audio_start" and tid is not None:
            conv.turn(tid).sample_rate = ev["sample_rate"]
            current_audio_turn.append(tid)
        elif kind == "reply_text" and tid is not None:
            conv.turn(tid).reply_text.append(ev["text"])
        elif kind == "interrupt" and tid is not None:
            conv.turn(tid).interrupted = True
        elif kind == "turn_report" and tid is not None:
            conv.turn(tid).report = ev


def _answered(conv: Conversation, speech_end_ns: int | None) -> bool:
    """A turn ended after the clip's speech did, and every turn seen so far has its report."""
    if speech_end_ns is None:
        return False
    ended_after = any(ev.get("type") == "speech_ended" and t >= speech_end_ns for t, ev in conv.events)
    return ended_after and all(t.report is not None for t in conv.turns.values())


async def converse(
    url: str,
    utterances: Sequence[Utterance],
    *,
    frame_ms: int = 20,
    realtime: bool = True,
    reply_timeout_s: float = 60.0,
    token: str | None = None,
    output_sample_rate: int | None = None,
) -> Conversation:
    """Speak each utterance in turn, streaming silence after it until that turn's report arrives."""
    conv = Conversation()
    audio_turn: list[int] = []
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with connect(url, max_size=2**22, additional_headers=headers) as ws:
        rate = utterances[0].rate_hz if utterances else 16000
        start: dict[str, Any] = {"type": "start", "sample_rate": rate}
        if output_sample_rate:
            start["output_sample_rate"] = output_sample_rate
        await ws.send(json.dumps(start))
        reader = asyncio.create_task(_reader(ws, conv, audio_turn))
        try:
            t0 = time.perf_counter_ns()
            sent_samples = 0
            for n, utt in enumerate(utterances, start=1):
                frame = rate * frame_ms // 1000
                begin = sent_samples
                speech_end_ns: int | None = None
                pcm = utt.audio
                i = 0
                while True:
                    if i < len(pcm):
                        chunk = pcm[i : i + frame]
                    else:
                        chunk = np.zeros(frame, np.float32)
                        if reader.done() or _answered(conv, speech_end_ns):
                            break
                    i += len(chunk)
                    sent_samples += len(chunk)
                    if realtime:
                        due = t0 + round(sent_samples * 1e9 / rate)
                        delay = (due - time.perf_counter_ns()) / 1e9
                        if delay > 0:
                            await asyncio.sleep(delay)
                    await ws.send(float_to_pcm16(chunk))
                    if speech_end_ns is None and i >= utt.speech_end_sample:
                        speech_end_ns = t0 + round((begin + utt.speech_end_sample) * 1e9 / rate)
                    if (sent_samples - begin) / rate > len(pcm) / rate + reply_timeout_s:
                        raise TimeoutError(f"no reply to utterance {n} within {reply_timeout_s} s")
                turn_ids = sorted(conv.turns)
                if turn_ids:
                    conv.turns[turn_ids[-1]].speech_end_ns = speech_end_ns
            await ws.send(json.dumps({"type": "stop"}))
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(reader, 10)
        finally:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
    return conv
