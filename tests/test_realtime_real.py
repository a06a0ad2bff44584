"""``/v1/realtime`` with the real default models, driven by the real openai SDK: a spoken question answered
through server VAD, then one committed by hand (manual mode) and answered on ``response.create``."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import make_config
from tests.test_real_models import bare_llm, espeak, words
from tests.test_realtime_sdk import STRICT, Seen, append_paced, receive_until
from voice.audio import float_to_pcm16
from voice.loader import load_runtime
from voice.runtime.runtime import ModelRuntime
from voice.serve.server import VoiceServer

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]
openai = pytest.importorskip("openai")


@pytest.fixture(scope="module")
def real() -> Iterator[ModelRuntime]:
    runtime = load_runtime(make_config())
    yield runtime
    runtime.close()


async def test_openai_sdk_against_the_real_models(real: ModelRuntime, tmp_path: Path) -> None:
    # The LLM's turns and their KV reuse, not the country skill's answers.
    runtime = ModelRuntime(vad=real.vad, stt=real.stt, llm=bare_llm(real), tts=real.tts, turn_score=real.turn_score)
    server = VoiceServer(make_config(server={"port": 0}), runtime)
    await server.start()
    try:
        client = openai.AsyncOpenAI(api_key="local", base_url=f"http://127.0.0.1:{server.port}/v1",
                                    websocket_base_url=f"ws://127.0.0.1:{server.port}/v1")
        async with client.realtime.connect(model="voice") as conn:
            seen = Seen()
            france = float_to_pcm16(espeak("What is the capital of France?", tmp_path, 24_000))
            pcm = np.frombuffer(france, "<i2")
            # Paced like a microphone (20 ms frames in real time), then silence until the reply is done.
            sender = asyncio.create_task(
                append_paced(conn, np.concatenate([pcm, np.zeros(24_000 * 3, np.int16)]), pace_s=0.02)
            )
            first = await receive_until(conn, seen, "response.done", timeout_s=120)
            await sender
            await conn.session.update(session={"type": "realtime", "audio": {"input": {"turn_detection": None}}})
            await receive_until(conn, seen, "session.updated")
            germany = float_to_pcm16(espeak("What is the capital of Germany?", tmp_path, 24_000))
            await conn.input_audio_buffer.append(audio=base64.b64encode(germany).decode())
            await conn.input_audio_buffer.commit()
            await conn.response.create()
            second = await receive_until(conn, seen, "response.done", timeout_s=120, count=2)
            heard = seen.of("conversation.item.input_audio_transcription.completed")
            if len(heard) < 2:
                await receive_until(conn, seen, "conversation.item.input_audio_transcription.completed", count=2)
                heard = seen.of("conversation.item.input_audio_transcription.completed")
    finally:
        await server.shutdown()
        runtime.close()
    assert STRICT is not None and not seen.of("error"), [e.error.message for e in seen.of("error")]
    assert "france" in words(heard[0].transcript) and "germany" in words(heard[1].transcript)
    for done, answer in ((first, "paris"), (second, "berlin")):
        assert done.response.status == "completed"
        transcript = done.response.output[0].content[0].transcript
        assert answer in words(transcript), transcript
        assert float(done.response.metadata["voice.total_ms"]) > 0
    audio = [e for e in seen.of("response.output_audio.delta") if e.response_id == first.response.id]
    assert sum(len(base64.b64decode(e.delta)) for e in audio) / 48 == pytest.approx(
        server.reports[0].reply_audio_ms, abs=1
    )
    # The second turn reused the first exchange from the KV cache.
    assert second.response.usage.input_token_details.cached_tokens > first.response.usage.input_tokens
