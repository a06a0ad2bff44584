"""``/v1/realtime`` driven by the real ``openai`` SDK (``AsyncOpenAI(...).realtime.connect``) against the tagged
fakes over real sockets; every frame received is validated against the SDK's own event models (strict pydantic)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from tests.netkit import http_get_full, running
from tests.units import FAKE_MS
from voice.reliability.tagged import reply_for, tagged_runtime
from voice.serve.server import VoiceServer

openai = pytest.importorskip("openai")
from openai import AsyncOpenAI  # noqa: E402
from openai.types.realtime import RealtimeServerEvent  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

STRICT: TypeAdapter[Any] = TypeAdapter(RealtimeServerEvent)
SCALE = 0.1 * FAKE_MS
RATE = 24_000
HEARD = "hello there"  # the tagged STT's answer to untagged audio (a tag does not survive 24→16 kHz)


def tone_24k(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.3 * 32767 * np.sin(2 * np.pi * 300 * t)).astype(np.int16)


def silence_24k(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), np.int16)


def b64(pcm: np.ndarray) -> str:
    return base64.b64encode(pcm.astype("<i2").tobytes()).decode()


def client(srv: VoiceServer, key: str = "local") -> AsyncOpenAI:
    return AsyncOpenAI(
        api_key=key, base_url=f"http://127.0.0.1:{srv.port}/v1", websocket_base_url=f"ws://127.0.0.1:{srv.port}/v1"
    )


@dataclass
class Seen:
    """Every event received, validated strictly and parsed by the SDK."""

    events: list[Any] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


async def receive_until(conn: Any, seen: Seen, kind: str, timeout_s: float = 20.0, count: int = 1) -> Any:
    """Receive (validating each frame) until the ``count``-th event of ``kind``; returns it."""
    async with asyncio.timeout(timeout_s):
        while len(seen.of(kind)) < count:
            raw = await conn.recv_bytes()
            STRICT.validate_json(raw)  # raises on a missing/mistyped field or an unknown type
            seen.events.append(conn.parse_event(raw))
    return seen.of(kind)[count - 1]


def is_subsequence(wanted: Sequence[str], got: Sequence[str]) -> bool:
    it = iter(got)
    return all(any(g == w for g in it) for w in wanted)


async def append_paced(conn: Any, pcm: np.ndarray, frame: int = 480, pace_s: float = 0.0) -> None:
    for i in range(0, len(pcm), frame):
        await conn.input_audio_buffer.append(audio=b64(pcm[i : i + frame]))
        await asyncio.sleep(pace_s)


@contextlib.asynccontextmanager
async def realtime(srv: VoiceServer, **kw: Any) -> AsyncIterator[Any]:
    async with client(srv).realtime.connect(model="local", **kw) as conn:
        yield conn


SERVER_VAD_TURN = [
    "session.created",
    "session.updated",
    "input_audio_buffer.speech_started",
    "input_audio_buffer.speech_stopped",
    "input_audio_buffer.committed",
    "conversation.item.input_audio_transcription.completed",
    "response.created",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_audio_transcript.delta",
    "response.output_audio.delta",
    "response.output_audio.done",
    "response.output_audio_transcript.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.done",
]


async def test_a_spoken_turn_with_server_vad() -> None:
    async with running(tagged_runtime(SCALE)) as srv, realtime(srv) as conn:
        seen = Seen()
        created = await receive_until(conn, seen, "session.created")
        assert created.session.audio.input.format.rate == RATE
        await conn.session.update(session={
            "type": "realtime", "output_modalities": ["audio"], "instructions": "Be brief.",
            "audio": {"input": {"format": {"type": "audio/pcm", "rate": RATE},
                                "turn_detection": {"type": "server_vad", "silence_duration_ms": 400}},
                      "output": {"format": {"type": "audio/pcm", "rate": RATE}}}})
        updated = await receive_until(conn, seen, "session.updated")
        assert updated.session.audio.input.turn_detection.silence_duration_ms == 400
        assert updated.session.instructions == "Be brief."
        await append_paced(conn, np.concatenate([tone_24k(0.6), silence_24k(1.0)]))
        done = await receive_until(conn, seen, "response.done")
    assert is_subsequence(SERVER_VAD_TURN, seen.kinds), seen.kinds
    # Ids are consistent: one user item from speech_started to its transcript, one response and item throughout.
    user_item = seen.of("input_audio_buffer.speech_started")[0].item_id
    assert seen.of("input_audio_buffer.speech_stopped")[0].item_id == user_item
    assert seen.of("input_audio_buffer.committed")[0].item_id == user_item
    heard = seen.of("conversation.item.input_audio_transcription.completed")[0]
    assert heard.item_id == user_item and heard.transcript == HEARD
    response_id = seen.of("response.created")[0].response.id
    deltas = [e for e in seen.events if getattr(e, "response_id", None) is not None]
    assert {e.response_id for e in deltas} == {response_id}
    assert len({e.event_id for e in seen.events}) == len(seen.events)
    # The reply: its text, all its audio (24 kHz PCM16: 48 bytes per ms), its report.
    transcript = "".join(e.delta for e in seen.of("response.output_audio_transcript.delta"))
    assert transcript == reply_for("there")
    audio = b"".join(base64.b64decode(e.delta) for e in seen.of("response.output_audio.delta"))
    report = srv.reports[-1]
    assert done.response.status == "completed" and len(audio) % 2 == 0
    assert len(audio) / 48 == pytest.approx(report.reply_audio_ms, abs=1)
    assert done.response.output[0].content[0].transcript == transcript
    usage = done.response.usage
    assert usage.output_tokens == report.generated_tokens > 0
    assert usage.input_token_details.cached_tokens == report.prompt_tokens_reused
    assert usage.input_tokens == report.prompt_tokens_reused + report.prompt_tokens_evaluated
    meta = done.response.metadata
    assert meta["voice.turn_id"] == "1" and float(meta["voice.total_ms"]) == report.total_ms
    # The system prompt was the session's instructions; no non-standard event was sent.
    assert srv.runtime is not None and srv.runtime.llm.prompts[-1][0].content == "Be brief."  # type: ignore[attr-defined]
    assert not [k for k in seen.kinds if k.startswith("voice.")]


async def test_manual_commit_of_a_whole_clip_then_response_create() -> None:
    # A whole 8 s clip in ONE append (~1 MB of base64): over the native message and ingress limits.
    clip = np.concatenate([tone_24k(7.5), silence_24k(0.5)])
    async with running(tagged_runtime(SCALE)) as srv, realtime(srv) as conn:
        seen = Seen()
        await conn.session.update(session={"type": "realtime", "audio": {"input": {"turn_detection": None}}})
        updated = await receive_until(conn, seen, "session.updated")
        assert updated.session.audio.input.turn_detection is None
        await conn.input_audio_buffer.append(audio=b64(clip))
        await conn.input_audio_buffer.commit()
        committed = await receive_until(conn, seen, "input_audio_buffer.committed")
        await conn.response.create()
        done = await receive_until(conn, seen, "response.done")
        heard = seen.of("conversation.item.input_audio_transcription.completed")
        if not heard:
            heard = [await receive_until(conn, seen, "conversation.item.input_audio_transcription.completed")]
    assert heard[0].item_id == committed.item_id and heard[0].transcript == HEARD
    # No VAD in manual mode: the whole clip is one utterance, and nothing was endpointed by the server.
    assert "input_audio_buffer.speech_started" not in seen.kinds
    assert done.response.status == "completed"
    assert "".join(e.delta for e in seen.of("response.output_audio_transcript.delta")) == reply_for("there")
    assert srv.reports[-1].utterance_ms == pytest.approx(8000, abs=20)
    assert not [e for e in seen.of("error")], [e.error.message for e in seen.of("error")]


async def test_barge_in_cancels_the_response() -> None:
    # A slow reply (100 ms per token) so that it is still being generated when the user speaks again.
    runtime = tagged_runtime(1.0 * FAKE_MS, itl_ms=100.0, stt_ms=10.0)
    async with running(runtime) as srv, realtime(srv) as conn:
        seen = Seen()
        await append_paced(conn, np.concatenate([tone_24k(0.5), silence_24k(0.6)]))
        first = await receive_until(conn, seen, "response.output_audio.delta")
        n_before = len(seen.events)
        await append_paced(conn, tone_24k(0.5))
        done = await receive_until(conn, seen, "response.done")
        later = seen.events[n_before:]
        # The client played 0 ms of it: the reply is cut from the history (LiveKit and pipecat do this).
        history = next(iter(srv.sessions.values())).session.history
        assert any(m.role == "assistant" for m in history.messages)
        await conn.conversation.item.truncate(item_id=first.item_id, content_index=0, audio_end_ms=0)
        truncated = await receive_until(conn, seen, "conversation.item.truncated")
        assert truncated.item_id == first.item_id and truncated.audio_end_ms == 0
        assert history.messages[-1].role == "user"
    assert done.response.id == first.response_id
    assert done.response.status == "cancelled"
    assert done.response.status_details.reason == "turn_detected"
    kinds = [e.type for e in later]
    assert "input_audio_buffer.speech_started" in kinds
    after_speech = later[kinds.index("input_audio_buffer.speech_started") :]
    assert not [e for e in after_speech if e.type == "response.output_audio.delta"]
    assert srv.reports[0].outcome == "cancelled"


async def test_response_cancel_and_text_items() -> None:
    runtime = tagged_runtime(1.0 * FAKE_MS, itl_ms=100.0)
    async with running(runtime) as srv, realtime(srv) as conn:
        seen = Seen()
        await conn.response.cancel()  # nothing to cancel: a non-fatal error (the SDK's own example does this)
        err = await receive_until(conn, seen, "error")
        assert err.error.code == "response_cancel_not_active"
        await conn.conversation.item.create(
            item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "say w1"}]}
        )
        await receive_until(conn, seen, "conversation.item.done")
        await conn.response.create()
        await receive_until(conn, seen, "response.output_audio.delta")
        await conn.response.cancel()
        done = await receive_until(conn, seen, "response.done")
    assert done.response.status == "cancelled" and done.response.status_details.reason == "client_cancelled"
    assert srv.reports[-1].transcript == "say w1" and srv.reports[-1].outcome == "cancelled"


async def test_a_bad_event_gets_an_error_and_the_connection_survives() -> None:
    async with running(tagged_runtime(SCALE)) as srv, realtime(srv) as conn:
        seen = Seen()
        await conn.send_raw('{"type": "x"}')
        err = await receive_until(conn, seen, "error")
        assert err.error.type == "invalid_request_error" and "'x'" in err.error.message
        await conn.send_raw("not json")
        await conn.send_raw('{"type": "input_audio_buffer.append", "audio": "%%%"}')
        await conn.send_raw('{"type": "session.update", "session": {"output_modalities": ["video"]}}')
        await receive_until(conn, seen, "error", count=4)
        messages = [e.error.message for e in seen.of("error")]
        assert "JSON" in messages[1] and "base64" in messages[2] and seen.of("error")[3].error.param == (
            "session.output_modalities"
        )
        # Still serving: a text-only turn.
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        await append_paced(conn, np.concatenate([tone_24k(0.5), silence_24k(0.6)]))
        done = await receive_until(conn, seen, "response.done")
    assert done.response.status == "completed"
    assert "".join(e.delta for e in seen.of("response.output_text.delta")) == reply_for("there")
    assert not seen.of("response.output_audio.delta")


async def test_opt_in_turn_reports() -> None:
    async with running(tagged_runtime(SCALE)) as srv, realtime(srv, extra_query={"voice_events": "1"}) as conn:
        await append_paced(conn, np.concatenate([tone_24k(0.5), silence_24k(0.6)]))
        kinds: list[str] = []
        async with asyncio.timeout(20):
            while not kinds or kinds[-1] != "voice.turn_report":
                raw = await conn.recv_bytes()
                kinds.append(json.loads(raw)["type"])
    assert kinds.index("response.done") == len(kinds) - 2  # right after the response it reports on
    report = json.loads(raw)["report"]
    assert report["outcome"] == "ok" and report["total_ms"] == srv.reports[-1].total_ms


async def test_wrong_key_is_401_and_unknown_paths_404() -> None:
    from websockets.exceptions import InvalidStatus

    async with running(tagged_runtime(SCALE), server={"token": "s3cret-token-of-16+chars"}) as srv:
        with pytest.raises(InvalidStatus) as info:
            async with client(srv, key="wrong").realtime.connect(model="local"):
                pass
        assert info.value.response.status_code == 401
        async with client(srv, key="s3cret-token-of-16+chars").realtime.connect(model="local") as conn:
            assert (await receive_until(conn, Seen(), "session.created")).session.model == "local"
        headers = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
        status, _, _ = await http_get_full(srv.port, "/v1/other", headers)
        assert status == 404
        status, _, _ = await http_get_full(srv.port, "/health")
        assert status == 200
