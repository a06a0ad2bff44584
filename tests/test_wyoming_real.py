"""The Wyoming server with the real default models, driven like Home Assistant's Assist pipeline: speech →
``transcript``, the transcript → ``handled``, the reply streamed → audio, and that audio (Piper's 22.05 kHz,
so the resampling path) transcribed back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.handle import Handled
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tests.conftest import make_config
from tests.test_real_models import espeak, words
from tests.test_wyoming import Client, audio_groups
from voice.loader import load_runtime
from voice.runtime.runtime import ModelRuntime
from voice.wyoming.server import WyomingServer

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def real() -> Iterator[ModelRuntime]:
    runtime = load_runtime(make_config())
    yield runtime
    runtime.close()


async def transcribe(port: int, pcm: bytes, rate: int) -> str:
    fmt = {"rate": rate, "width": 2, "channels": 1}
    async with Client("127.0.0.1", port) as c:
        await c.write_event(Transcribe(language="en").event())
        await c.write_event(AudioStart(**fmt).event())
        for i in range(0, len(pcm), 2048):
            await c.write_event(AudioChunk(**fmt, audio=pcm[i : i + 2048]).event())
        await c.write_event(AudioStop().event())
        return Transcript.from_event(await c.read()).text


async def test_an_assist_pipeline_turn_through_wyoming_with_the_real_models(real: ModelRuntime, tmp_path: Path) -> None:
    runtime = ModelRuntime(vad=real.vad, stt=real.stt, llm=real.llm, tts=real.tts)
    server = WyomingServer(make_config().with_wyoming(port=0), runtime)
    await server.start()
    try:
        question = espeak("Turn on the kitchen light.", tmp_path)
        heard = await transcribe(server.port, (question * 32767).astype("<i2").tobytes(), 16000)
        assert "kitchen" in words(heard) and "light" in words(heard)

        async with Client("127.0.0.1", server.port) as c:
            await c.write_event(Transcript(heard, context={"conversation_id": "real"}, language="en").event())
            reply = Handled.from_event(await c.read()).text or ""
        assert reply.strip()

        async with Client("127.0.0.1", server.port) as c:  # Home Assistant streams the reply text to TTS
            await c.write_event(SynthesizeStart().event())
            for word in reply.split(" "):
                await c.write_event(SynthesizeChunk(word + " ").event())
            await c.write_event(Synthesize(text=reply).event())
            await c.write_event(SynthesizeStop().event())
            groups = await audio_groups(c, until="synthesize-stopped")
        assert groups and all(fmt == {"rate": real.tts.sample_rate, "width": 2, "channels": 1} for fmt, _ in groups)
        spoken = b"".join(audio for _, audio in groups)
        assert len(spoken) / 2 / real.tts.sample_rate > 0.5  # seconds of speech

        back = words(await transcribe(server.port, spoken, real.tts.sample_rate))
        said = words(reply).split()
        assert sum(w in back.split() for w in said) >= len(said) // 2, (reply, back)
        assert len(server.conversations) == 1
    finally:
        await server.shutdown()
