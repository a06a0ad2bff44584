"""The ``/v1/realtime`` adapter without sockets: client events in, the session's translated frames out of its outbox
(fake models), including the non-fatal errors a client gets for what this server does not do."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config
from voice.clock import MonotonicClock
from voice.serve.realtime.front import RealtimeFront

pytest.importorskip("openai")
from openai.types.realtime import RealtimeServerEvent
from pydantic import TypeAdapter

STRICT: TypeAdapter[Any] = TypeAdapter(RealtimeServerEvent)
RATE = 24_000


def pcm24(seconds: float, amplitude: float = 0.3) -> bytes:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * 32767 * np.sin(2 * np.pi * 300 * t)).astype("<i2").tobytes()


def msg(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


async def take(front: RealtimeFront, until: str, timeout_s: float = 10.0) -> list[dict[str, Any]]:
    """Frames from the outbox (each validated against the SDK) up to and including the first ``until``."""
    out: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout_s):
        while not out or out[-1]["type"] != until:
            item = await front.outbox.next_frame()
            assert item is not None
            frame, on_sent = item
            assert isinstance(frame, str), "a binary frame on /v1/realtime"
            STRICT.validate_json(frame)
            out.append(json.loads(frame))
            if on_sent is not None:
                on_sent()
    return out


@pytest.fixture
async def front(fake_runtime: RuntimeFactory) -> Any:
    f = RealtimeFront("t1", fake_runtime(scale=0.01), make_config(), MonotonicClock(), path="/v1/realtime?model=m")
    await f.start()
    yield f
    await f.session.cancel_turns()


async def test_manual_mode_commit_and_response(front: RealtimeFront) -> None:
    assert [e["type"] for e in await take(front, "session.created")] == ["session.created"]
    await front.on_message(msg("session.update", session={"audio": {"input": {"turn_detection": None}}}))
    assert (await take(front, "session.updated"))[-1]["session"]["audio"]["input"]["turn_detection"] is None
    await front.on_message(msg("input_audio_buffer.commit"))  # nothing yet
    err = (await take(front, "error"))[-1]["error"]
    assert err["code"] == "input_audio_buffer_commit_empty"
    await front.on_message(msg("input_audio_buffer.append", audio=base64.b64encode(pcm24(1.0)).decode()))
    await front.on_message(msg("input_audio_buffer.commit"))
    committed = (await take(front, "input_audio_buffer.committed"))[-1]
    await front.on_message(msg("response.create"))
    await front.on_message(msg("response.create"))  # one at a time
    frames = await take(front, "response.done")
    kinds = [f["type"] for f in frames]
    assert "error" in kinds and frames[kinds.index("error")]["error"]["code"] == (
        "conversation_already_has_active_response"
    )
    heard = next(f for f in frames if f["type"] == "conversation.item.input_audio_transcription.completed")
    assert heard["item_id"] == committed["item_id"] and heard["transcript"] == "what is the capital of france"
    assert frames[-1]["response"]["status"] == "completed"
    assert front.session.history.messages[0].content == "what is the capital of france"


async def test_the_manual_buffer_is_bounded(front: RealtimeFront) -> None:
    await take(front, "session.created")
    await front.on_message(msg("session.update", session={"audio": {"input": {"turn_detection": None}}}))
    await take(front, "session.updated")
    cap_s = front.base_config.vad.max_utterance_s
    big = base64.b64encode(bytes(int(cap_s * RATE * 2) + 2)).decode()
    await front.on_message(msg("input_audio_buffer.append", audio=big, event_id="ev1"))
    err = (await take(front, "error"))[-1]["error"]
    assert err["code"] == "input_audio_buffer_too_large" and err["event_id"] == "ev1"
    await front.on_message(msg("input_audio_buffer.clear"))
    assert (await take(front, "input_audio_buffer.cleared"))[-1]["type"] == "input_audio_buffer.cleared"


async def test_text_items_answered_as_text_only(front: RealtimeFront) -> None:
    await take(front, "session.created")
    await front.on_message(msg("session.update", session={"output_modalities": ["text"], "instructions": "Be terse."}))
    await take(front, "session.updated")
    await front.on_message(msg("conversation.item.create", item={
        "type": "message", "role": "system", "content": [{"type": "input_text", "text": "x"}]}))
    assert (await take(front, "error"))[-1]["error"]["param"] == "item.role"
    await front.on_message(msg("conversation.item.create", item={
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}))
    await front.on_message(msg("response.create"))
    frames = await take(front, "response.done")
    text = "".join(f["delta"] for f in frames if f["type"] == "response.output_text.delta")
    assert text == "Sure, the capital of France is Paris. It is lovely."
    assert not [f for f in frames if f["type"].startswith("response.output_audio")]
    llm = front.session.runtime.llm
    assert llm.prompts[-1][0].content == "Be terse." and llm.prompts[-1][-1].content == "hello"  # type: ignore[attr-defined]
    await front.on_message(msg("conversation.item.truncate", item_id="nope", content_index=0, audio_end_ms=5))
    assert (await take(front, "error"))[-1]["error"]["code"] == "item_truncate_invalid_item_id"
