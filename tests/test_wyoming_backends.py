"""The Wyoming STT and TTS backends (``[stt]``/``[tts] backend = "wyoming"``) against our own Wyoming server on
tagged fakes, and against misbehaving servers: not up, dying mid-request, garbage, an error event, silence.
Each failure is a clear error naming the server; over a websocket session it is an ``error`` event and the
session keeps serving. (The real ``wyoming-faster-whisper`` and ``wyoming-piper``: test_wyoming_real_servers.py.)"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

import numpy as np
import pytest
from wyoming.asr import Transcript
from wyoming.event import Event, async_write_event

from tests.conftest import make_config
from tests.netkit import running
from tests.units import FAKE_MS
from voice.backends.stt_wyoming import WyomingStt
from voice.backends.tts_wyoming import WyomingTts
from voice.config.config import Config, ConfigError
from voice.reliability.probe import Probe
from voice.reliability.tagged import reply_for, tagged_runtime, tagged_speech
from voice.runtime.runtime import ModelRuntime
from voice.wyoming.client import WyomingClientError
from voice.wyoming.framing import FrameDecoder
from voice.wyoming.info import info_event
from voice.wyoming.server import WyomingServer

pytestmark = pytest.mark.timeout(60)


def backends_config(uri: str, timeout_s: float = 10.0) -> Config:
    return make_config(
        stt={"backend": "wyoming", "uri": uri, "timeout_s": timeout_s},
        tts={"backend": "wyoming", "uri": uri, "timeout_s": timeout_s},
    )


@pytest.fixture
def fakes() -> Iterator[ModelRuntime]:
    e = tagged_runtime(0.05 * FAKE_MS)
    yield e
    e.close()


@pytest.fixture
async def wyoming_uri(fakes: ModelRuntime) -> AsyncIterator[str]:
    """``voice wyoming`` on tagged fakes: a well-behaved Wyoming server."""
    srv = WyomingServer(make_config().with_wyoming(port=0), fakes)
    await srv.start()
    yield srv.uri
    srv.runtime = None
    await srv.shutdown()


# ---------------------------------------------------------------------------------------------- working
async def test_stt_backend_transcribes_through_a_wyoming_server(wyoming_uri: str) -> None:
    stt = await asyncio.to_thread(WyomingStt, backends_config(wyoming_uri).stt)
    speech = tagged_speech("remote1", 0.5).astype(np.float32) / 32768.0
    assert await asyncio.to_thread(stt.transcribe, speech) == "remote1"  # the tag survives the round trip


async def test_tts_backend_learns_the_rate_and_yields_int16_audio(wyoming_uri: str, fakes: ModelRuntime) -> None:
    tts = await asyncio.to_thread(WyomingTts, backends_config(wyoming_uri).tts)
    assert tts.sample_rate == fakes.tts.sample_rate
    pieces = await asyncio.to_thread(lambda: list(tts.synthesize("Hello there.")))
    audio = np.concatenate(pieces)
    assert audio.dtype == np.int16
    expected_ms = len("Hello there.") * fakes.tts.audio_ms_per_char  # type: ignore[attr-defined]
    assert len(audio) / tts.sample_rate * 1000 == pytest.approx(expected_ms, abs=15)  # lead silence trimmed


async def test_a_websocket_session_on_wyoming_backends(wyoming_uri: str) -> None:
    local = tagged_runtime(0.05 * FAKE_MS)
    config = backends_config(wyoming_uri)
    stt = await asyncio.to_thread(WyomingStt, config.stt)
    tts = await asyncio.to_thread(WyomingTts, config.tts)
    runtime = ModelRuntime(vad=local.vad, stt=stt, llm=local.llm, tts=tts)
    local.close()
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        report = await p.turn(tagged_speech("viaw1"))
        assert report["outcome"] == "ok" and report["transcript"] == "viaw1"
        assert report["reply_text"] == reply_for("viaw1") and report["reply_audio_ms"] > 0
        await p.close()


# ---------------------------------------------------------------------------------------------- failing


class FakeServer:
    """A Wyoming server that answers ``describe`` properly and every other request as told, in turn:
    ``ok`` (a transcript / audio), ``close`` (drops the connection), ``garbage``, ``error``, ``silent``."""

    def __init__(self, script: list[str]) -> None:
        self.script = list(script)
        self.requests = 0
        self._server: asyncio.Server | None = None
        self.uri = ""

    async def __aenter__(self) -> FakeServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.uri = f"tcp://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder(1 << 22)
        try:
            while data := await reader.read(65536):
                for ev in decoder.receive(data):
                    assert isinstance(ev, Event)
                    if ev.type == "describe":
                        await async_write_event(info_event(make_config()), writer)
                    elif ev.type in ("audio-chunk", "synthesize"):
                        if ev.type == "audio-chunk" and self.requests:  # act once per request
                            continue
                        self.requests += 1
                        if await self._act(self.script.pop(0) if self.script else "ok", ev, writer):
                            return
                    elif ev.type == "audio-stop":
                        self.requests = 0
                        await async_write_event(Transcript("hello there").event(), writer)
        finally:
            writer.close()

    async def _act(self, what: str, ev: Event, writer: asyncio.StreamWriter) -> bool:
        """Returns True when the connection is to end now."""
        if what == "close":
            return True
        if what == "garbage":
            writer.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            return False
        if what == "error":
            await async_write_event(Event("error", {"text": "model exploded", "code": "internal"}), writer)
            return True
        if what == "silent":
            await asyncio.sleep(30)
            return True
        if ev.type == "synthesize":
            fmt = {"rate": 16000, "width": 2, "channels": 1}
            await async_write_event(Event("audio-start", fmt), writer)
            await async_write_event(Event("audio-chunk", fmt, np.full(1600, 1000, np.int16).tobytes()), writer)
            await async_write_event(Event("audio-stop"), writer)
        return False


@pytest.mark.parametrize(
    ("script", "words"),
    [
        (["close"], "closed the connection mid-request"),
        (["garbage"], "not a Wyoming event"),
        (["error"], r"answered with an error: model exploded \(internal\)"),
        (["silent"], "sent nothing for 0.3 s"),
    ],
)
async def test_each_failure_of_the_server_is_a_clear_error_naming_it(script: list[str], words: str) -> None:
    async with FakeServer(script) as server:
        config = backends_config(server.uri, timeout_s=0.3)
        stt = await asyncio.to_thread(WyomingStt, config.stt)
        with pytest.raises(WyomingClientError, match=words) as e:
            await asyncio.to_thread(stt.transcribe, np.zeros(8000, np.float32))
        assert server.uri in str(e.value)
        assert await asyncio.to_thread(stt.transcribe, np.zeros(8000, np.float32)) == "hello there"  # then fine


async def test_tts_failures_are_clear_errors_too() -> None:
    async with FakeServer(["ok", "close", "garbage"]) as server:  # the first "ok" is the rate probe
        tts = await asyncio.to_thread(WyomingTts, backends_config(server.uri, timeout_s=0.3).tts)
        assert tts.sample_rate == 16000
        for words in ("closed the connection mid-request", "not a Wyoming event"):
            with pytest.raises(WyomingClientError, match=words):
                await asyncio.to_thread(lambda: list(tts.synthesize("Hi.")))
        assert len(np.concatenate(await asyncio.to_thread(lambda: list(tts.synthesize("Hi."))))) == 1600


async def test_a_server_that_is_not_up_is_named_when_the_backend_is_made() -> None:
    async with FakeServer([]) as server:
        uri = server.uri
    for make in (WyomingStt, WyomingTts):
        section = backends_config(uri)
        with pytest.raises(WyomingClientError, match=f"cannot connect to the Wyoming server at {uri}.*is it running"):
            await asyncio.to_thread(make, section.stt if make is WyomingStt else section.tts)  # type: ignore[arg-type]


async def test_a_session_gets_an_error_event_when_the_stt_server_fails_and_keeps_serving() -> None:
    local = tagged_runtime(0.05 * FAKE_MS)
    async with FakeServer(["close"]) as server:
        stt = await asyncio.to_thread(WyomingStt, backends_config(server.uri).stt)
        runtime = ModelRuntime(vad=local.vad, stt=stt, llm=local.llm, tts=local.tts)
        local.close()
        # No speculative turn at the first pause: the failing transcription is the committed turn's own.
        async with running(runtime, turn={"speculate_after_ms": 0}) as srv:
            p = await Probe.connect(srv.url)
            first = await p.turn(tagged_speech("t1"))
            [err] = p.errors()
            assert first["outcome"] == "error" and err["code"] == "internal"
            assert "closed the connection mid-request" in err["message"] and server.uri in err["message"]
            second = await p.turn(tagged_speech("t2"))
            assert second["outcome"] == "ok" and second["transcript"] == "hello there"
            await p.close()


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"stt": {"backend": "remote"}}, r"\[stt\] backend must be one of local, wyoming"),
        ({"stt": {"backend": "wyoming"}}, r"\[stt\] uri: '' is not a tcp://HOST:PORT"),
        ({"tts": {"backend": "wyoming", "uri": "http://x:1"}}, r"\[tts\] uri: 'http://x:1'"),
        ({"tts": {"timeout_s": 0}}, r"\[tts\] timeout_s must be positive"),
    ],
)
def test_bad_backend_settings_are_refused(values: dict[str, dict[str, object]], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        make_config(**values)
