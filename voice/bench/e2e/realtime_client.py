"""A microphone-like client of ``/v1/realtime`` (for ``voice bench e2e --protocol realtime``).

It speaks exactly as :func:`voice.client.converse` does (real-time 20 ms frames, then the clip's room tone
until the reply; the same client clock), but in Realtime events: base64 ``input_audio_buffer.append`` at 24 kHz up, and
``response.output_audio.delta`` down. It fills the same :class:`~voice.client.Conversation`, so mouth-to-ear
is measured and reconciled the same way. The server's report comes with the opt-in ``voice.turn_report`` event
(sent after ``response.done``, so it does not touch the measured audio); ``response.done``'s metadata is the
fallback.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import ssl as ssl_lib
import time
import urllib.parse
from collections.abc import Sequence
from typing import Any

import numpy as np
import soxr
from websockets.asyncio.client import ClientConnection, connect

from voice.audio import float_to_pcm16
from voice.client import Conversation, SpokenClip, _answered, _send_when_due
from voice.serve.realtime import REALTIME_PATH, REALTIME_RATE_HZ
from voice.serve.realtime.front import TURN_REPORT_QUERY
from voice.serve.realtime.report import report_from_metadata


def realtime_url(url: str, model: str = "voice") -> str:
    """``ws://host:port/`` (or any path) → ``ws://host:port/v1/realtime?model=…&voice_events=1``."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.urlencode({"model": model, TURN_REPORT_QUERY: "1"})
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, REALTIME_PATH, query, ""))


async def _reader(ws: ClientConnection, conv: Conversation, reported: asyncio.Event) -> None:
    turn_id = 0  # the server's turn ids count VAD turns from 1, like speech_stopped events here
    responses: dict[str, int] = {}
    async for message in ws:
        now = time.perf_counter_ns()
        ev = json.loads(message)  # text frames only: a binary frame would fail here, as in the OpenAI SDK
        conv.events.append((now, ev))
        kind = ev.get("type")
        if kind == "session.created":
            conv.session_id = str(ev["session"].get("id", ""))
        elif kind == "error":
            err = ev.get("error") or {}
            conv.errors.append({"code": err.get("code"), "message": err.get("message")})
        elif kind == "input_audio_buffer.speech_stopped":
            turn_id += 1
            conv.turn(turn_id).speech_ended_ns = now
        elif kind == "conversation.item.input_audio_transcription.completed" and turn_id:
            t = conv.turn(turn_id)
            t.transcript = ev.get("transcript", "")
            if not t.transcript:  # nothing heard: no response follows
                t.report, t.report_ns = {"turn_id": turn_id, "outcome": "no_speech", "stages_ms": {}}, now
        elif isinstance(kind, str) and kind.startswith("response."):
            _on_response(kind, ev, conv, responses, turn_id, now)
        elif kind == "voice.turn_report":
            report = ev.get("report") or {}
            tid = report.get("turn_id")
            if isinstance(tid, int) and tid in conv.turns:
                t = conv.turns[tid]
                t.report = report
                silence = (report.get("stages_ms") or {}).get("endpoint_silence")
                if t.trailing_silence_ms is None and isinstance(silence, int | float):
                    # Realtime's speech_stopped says where the input was, not how long the server waited
                    # after the speech: our report does (for the first answer of a split utterance).
                    t.trailing_silence_ms = float(silence)
            reported.set()


def _on_response(
    kind: str, ev: dict[str, Any], conv: Conversation, responses: dict[str, int], turn_id: int, now: int
) -> None:
    """A ``response.*`` event: its response joins the current turn (``responses``: response id → turn id),
    and its audio, transcript and end go to that turn."""
    if kind == "response.created":
        if turn_id:
            responses[ev["response"]["id"]] = turn_id
        return
    rid = ev["response"].get("id") if kind == "response.done" else ev.get("response_id")
    if rid not in responses:
        return
    t = conv.turn(responses[rid])
    if kind == "response.content_part.added":
        t.sample_rate = REALTIME_RATE_HZ
    elif kind == "response.output_audio.delta":
        t.chunks.append((now, base64.b64decode(ev["delta"])))
    elif kind == "response.output_audio_transcript.delta":
        t.reply_text.append(ev["delta"])
    elif kind == "response.done":
        t.interrupted = ev["response"].get("status") == "cancelled"
        t.report, t.report_ns = report_from_metadata(ev["response"]), now


async def converse_realtime(
    url: str,
    utterances: Sequence[SpokenClip],
    *,
    frame_ms: int = 20,
    reply_timeout_s: float = 60.0,
    token: str | None = None,
    settle_s: float = 2.0,
    ssl: ssl_lib.SSLContext | None = None,
) -> Conversation:
    """Speak each utterance through ``/v1/realtime`` (server VAD), then its room tone (or silence) until answered.

    The same pacing, answered-rule and ``ssl`` as :func:`voice.client.converse`. Cancelling closes the
    connection."""
    conv = Conversation()
    headers = {"Authorization": f"Bearer {token}"} if token else None
    rate = REALTIME_RATE_HZ
    frame = rate * frame_ms // 1000
    # Resampled before the clock starts: the client's own cost stays out of the measurement.
    clips = [_at_rate(u, rate) for u in utterances]
    tls: dict[str, Any] = {"ssl": ssl} if ssl is not None else {}  # ssl=None is refused for wss://
    async with connect(
        realtime_url(url), max_size=2**24, additional_headers=headers, compression=None, **tls
    ) as ws:
        reported = asyncio.Event()
        reader = asyncio.create_task(_reader(ws, conv, reported))
        settle_ns = round(settle_s * 1e9)
        try:
            t0 = time.perf_counter_ns()
            sent = 0
            for n, clip in enumerate(clips, start=1):
                pcm, end_sample = clip.audio, clip.speech_end_sample
                begin, before = sent, set(conv.turns)
                speech_end_ns: int | None = None
                i = 0
                while True:
                    if i >= len(pcm) and (
                        reader.done() or _answered(conv, speech_end_ns, before, time.perf_counter_ns(), settle_ns)
                    ):
                        break
                    chunk = clip.chunk(i, frame)
                    message = json.dumps({"type": "input_audio_buffer.append",
                                          "audio": base64.b64encode(float_to_pcm16(chunk)).decode("ascii")})
                    i += len(chunk)
                    sent += len(chunk)
                    await _send_when_due(conv, t0 + round(sent * 1e9 / rate))
                    await ws.send(message)
                    if speech_end_ns is None and i >= end_sample:
                        speech_end_ns = t0 + round((begin + end_sample) * 1e9 / rate)
                    if (sent - begin) / rate > len(pcm) / rate + reply_timeout_s:
                        raise TimeoutError(f"no reply to utterance {n} within {reply_timeout_s} s")
                new_ids = sorted(set(conv.turns) - before)
                conv.utterance_turns.append(new_ids)
                if new_ids:
                    conv.turns[new_ids[-1]].speech_end_ns = speech_end_ns
            # The opt-in report follows response.done at once: give it a moment, then leave.
            def waiting() -> bool:
                return any(
                    t.report is not None and t.report.get("outcome") != "no_speech" and "llm" not in t.report
                    for t in conv.turns.values()
                )

            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2.0):
                    while waiting():
                        reported.clear()
                        await reported.wait()
        finally:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
    return conv


def _at_rate(clip: SpokenClip, rate_hz: int) -> SpokenClip:
    """``clip`` resampled to ``rate_hz`` (its room tone too)."""
    def at(audio: np.ndarray) -> np.ndarray:
        return np.asarray(soxr.resample(audio.astype(np.float32), clip.rate_hz, rate_hz), np.float32)

    tone = None
    if clip.room_tone is not None and len(clip.room_tone):  # the middle of three: its loop stays seamless
        n = round(len(clip.room_tone) * rate_hz / clip.rate_hz)
        tone = at(np.tile(clip.room_tone, 3))[n : 2 * n]
    return SpokenClip(at(clip.audio), rate_hz, round(clip.speech_end_sample * rate_hz / clip.rate_hz), tone)
