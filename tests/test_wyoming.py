"""The Wyoming server over real sockets with the real ``wyoming`` package's ``AsyncTcpClient``, replaying the
exact sequences Home Assistant's ``components/wyoming`` sends (data.py, stt.py, tts.py, conversation.py),
against the tagged fake models."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import Handled
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tests.conftest import make_config
from tests.netkit import until
from tests.units import FAKE_MS, MS
from voice.cli import main
from voice.config.config import Config
from voice.reliability.tagged import echo_reply, reply_for, tagged_runtime, tagged_speech
from voice.runtime.fakes import FakeLlm
from voice.runtime.runtime import ModelRuntime
from voice.wyoming.server import WyomingServer

pytestmark = pytest.mark.timeout(60)
RATE = 16000
FMT = {"rate": RATE, "width": 2, "channels": 1}
WAIT_S = 10.0  # a safety net for reads that normally take milliseconds


class Client(AsyncTcpClient):
    """``AsyncTcpClient`` that can connect from a chosen local address (127.0.0.2, 127.0.0.3: all loopback)."""

    def __init__(self, host: str, port: int, local: str | None = None) -> None:
        super().__init__(host, port, read_timeout=WAIT_S)
        self.local = local

    async def connect(self) -> None:
        local_addr = (self.local, 0) if self.local else None
        self._reader, self._writer = await asyncio.open_connection(
            self.host, self.port, local_addr=local_addr
        )

    async def read(self) -> Event:
        ev = await self.read_event()
        assert ev is not None, "the server closed the connection"
        return ev


@pytest.fixture
def runtime() -> Iterator[ModelRuntime]:
    e = tagged_runtime(0.05 * FAKE_MS)
    yield e
    e.close()


async def started(config: Config, runtime: ModelRuntime | None) -> WyomingServer:
    server = WyomingServer(config.with_wyoming(port=0), runtime)
    await server.start()
    return server


@pytest.fixture
async def server(runtime: ModelRuntime) -> AsyncIterator[WyomingServer]:
    srv = await started(make_config(), runtime)
    yield srv
    srv.runtime = None  # the fixture closes the runtime
    await srv.shutdown()


def chunks(pcm: np.ndarray, samples: int = 1024) -> list[bytes]:
    return [pcm[i : i + samples].tobytes() for i in range(0, len(pcm), samples)]


async def transcribe(c: Client, pcm: np.ndarray) -> Event:
    """Home Assistant's stt.py: transcribe, audio-start, audio-chunk…, audio-stop; then read the answer."""
    await c.write_event(Transcribe(language="en").event())
    await c.write_event(AudioStart(**FMT).event())
    for chunk in chunks(pcm):
        await c.write_event(AudioChunk(**FMT, audio=chunk).event())
    await c.write_event(AudioStop().event())
    return await c.read()


async def handle(port: int, text: str, conversation_id: str) -> str:
    """Home Assistant's conversation.py: one connection per request, read until handled."""
    async with Client("127.0.0.1", port) as c:
        await c.write_event(
            Transcript(text, context={"conversation_id": conversation_id}, language="en").event()
        )
        ev = await c.read()
        assert Handled.is_type(ev.type), ev
        answer = Handled.from_event(ev)
        assert answer.context == {"conversation_id": conversation_id}
        return answer.text or ""


async def audio_groups(c: Client, until: str) -> list[tuple[dict[str, int], bytes]]:
    """Read audio-start/-chunk…/-stop groups until an event of type ``until``; each group's format and audio."""
    groups: list[tuple[dict[str, int], bytes]] = []
    fmt: dict[str, int] | None = None
    audio = bytearray()
    while True:
        ev = await c.read()
        assert ev.type != "error", ev.data
        if AudioStart.is_type(ev.type):
            assert fmt is None, "audio-start inside a group"
            start = AudioStart.from_event(ev)
            fmt, audio = {"rate": start.rate, "width": start.width, "channels": start.channels}, bytearray()
        elif AudioChunk.is_type(ev.type):
            chunk = AudioChunk.from_event(ev)
            assert fmt == {"rate": chunk.rate, "width": chunk.width, "channels": chunk.channels}
            audio += chunk.audio
        elif AudioStop.is_type(ev.type):
            assert fmt is not None, "audio-stop without audio-start"
            groups.append((fmt, bytes(audio)))
            fmt = None
        if ev.type == until:
            assert fmt is None
            return groups


async def test_describe_is_answered_within_a_second_with_three_installed_programs(
    server: WyomingServer,
) -> None:
    async with Client("127.0.0.1", server.port) as c:
        await c.write_event(Describe().event())
        info = Info.from_event(await asyncio.wait_for(c.read(), 1.0))  # Home Assistant gives up after 1 s
    assert info.asr[0].installed and info.tts[0].installed and info.handle[0].installed
    assert (
        info.asr[0].models[0].installed
        and info.tts[0].voices[0].installed
        and info.handle[0].models[0].installed
    )
    assert info.tts[0].supports_synthesize_streaming


async def test_home_assistant_stt_sequence_gets_the_transcript(server: WyomingServer) -> None:
    async with Client("127.0.0.1", server.port) as c:
        ev = await transcribe(c, tagged_speech("w1", 0.5))
    assert Transcript.is_type(ev.type) and Transcript.from_event(ev).text == "w1"
    assert Transcript.from_event(ev).language == "en"


async def test_audio_in_another_format_is_converted_before_transcription(server: WyomingServer) -> None:
    stereo_48k = np.repeat(tagged_speech("x", 0.5, rate_hz=48000)[:, None], 2, axis=1)
    fmt = {"rate": 48000, "width": 2, "channels": 2}
    async with Client("127.0.0.1", server.port) as c:
        await c.write_event(AudioStart(**fmt).event())
        await c.write_event(AudioChunk(**fmt, audio=stereo_48k.tobytes()).event())
        await c.write_event(AudioStop().event())
        ev = await c.read()
    # Resampling destroys the tag written into sample values: the fake STT then gives its default text.
    assert Transcript.from_event(ev).text == "hello there"


async def test_handle_remembers_each_conversation_apart(server: WyomingServer, runtime: ModelRuntime) -> None:
    llm = runtime.llm
    assert isinstance(llm, FakeLlm) and llm.reply_to is echo_reply
    assert await handle(server.port, "first a1", "c1") == reply_for("a1")
    assert await handle(server.port, "first b1", "c2") == reply_for("b1")
    assert await handle(server.port, "second a2", "c1") == reply_for("a2")
    assert await handle(server.port, "second b2", "c2") == reply_for("b2")
    c1_second = [(m.role, m.content) for m in llm.prompts[2]]
    c2_second = [(m.role, m.content) for m in llm.prompts[3]]
    assert c1_second[1:] == [
        ("user", "first a1"),
        ("assistant", reply_for("a1")),
        ("user", "second a2"),
    ]
    assert c2_second[1:] == [("user", "first b1"), ("assistant", reply_for("b1")), ("user", "second b2")]
    assert c1_second[0] == ("system", make_config().llm.system_prompt)


async def test_synthesize_answers_one_audio_group_in_one_format(
    server: WyomingServer, runtime: ModelRuntime
) -> None:
    async with Client("127.0.0.1", server.port) as c:
        await c.write_event(Synthesize(text="Hello there, my friend. How are you?").event())
        groups = await audio_groups(c, until="audio-stop")
    [(fmt, audio)] = groups
    assert fmt == {"rate": runtime.tts.sample_rate, "width": 2, "channels": 1}
    assert len(audio) > 0 and len(audio) % 2 == 0
    assert runtime.tts.texts == ["Hello there, my friend.", "How are you?"]  # type: ignore[attr-defined]


async def test_streamed_text_is_spoken_before_the_stream_ends(
    server: WyomingServer, runtime: ModelRuntime
) -> None:
    async with Client("127.0.0.1", server.port) as c:
        await c.write_event(SynthesizeStart().event())
        await c.write_event(SynthesizeChunk("Hello ").event())
        await c.write_event(SynthesizeChunk("there. How").event())
        # The first sentence's audio arrives while the stream is still open (no synthesize-stop yet).
        [(fmt, first)] = await audio_groups(c, until="audio-stop")
        assert fmt["rate"] == runtime.tts.sample_rate and len(first) > 0
        await c.write_event(SynthesizeChunk(" are you?").event())
        await c.write_event(Synthesize(text="Hello there. How are you?").event())  # the compatibility copy
        await c.write_event(SynthesizeStop().event())
        rest = await audio_groups(c, until="synthesize-stopped")
    assert len(rest) == 1 and len(rest[0][1]) > 0
    assert runtime.tts.texts == ["Hello there.", "How are you?"]  # type: ignore[attr-defined]


async def test_garbage_gets_an_error_and_the_server_keeps_serving(server: WyomingServer) -> None:
    async with Client("127.0.0.1", server.port) as c:
        assert c._writer is not None
        c._writer.write(b"GET / HTTP/1.1\r\n")  # not a Wyoming event: an error, the connection goes on
        await c._writer.drain()
        err = Error.from_event(await c.read())
        assert err.code == "bad_frame" and "not JSON" in err.text
        await c.write_event(Event("run-satellite"))
        err = Error.from_event(await c.read())
        assert err.code == "unknown_type"
        await c.write_event(Describe().event())
        assert Info.is_type((await c.read()).type)
    async with Client("127.0.0.1", server.port) as bad:
        assert bad._writer is not None
        bad._writer.write(
            b'{"type": "audio-chunk", "payload_length": 999999999}\n'
        )  # over the size limit: fatal
        await bad._writer.drain()
        err = Error.from_event(await bad.read())
        assert err.code == "bad_frame" and "larger than the limit" in err.text
        assert await bad.read_event() is None  # closed
    async with Client("127.0.0.1", server.port) as c:  # others are served as before
        ev = await transcribe(c, tagged_speech("w2", 0.3))
        assert Transcript.from_event(ev).text == "w2"


async def test_requests_while_the_models_load_get_an_error_but_describe_works() -> None:
    srv = await started(make_config(), None)
    try:
        async with Client("127.0.0.1", srv.port) as c:
            await c.write_event(Describe().event())
            assert Info.is_type((await c.read()).type)
            err = Error.from_event(await transcribe(c, tagged_speech("w3", 0.2)))
            assert err.code == "loading"
    finally:
        await srv.shutdown()


async def test_only_allowlisted_addresses_are_served(runtime: ModelRuntime) -> None:
    srv = await started(make_config(wyoming={"allowed_clients": ["127.0.0.2"]}), runtime)
    try:
        async with Client("127.0.0.1", srv.port, local="127.0.0.3") as c:
            await c.write_event(Describe().event())
            err = await c.read()
            assert err.type == "error" and Error.from_event(err).code == "forbidden"
            assert "127.0.0.3" in Error.from_event(err).text
            assert await c.read_event() is None  # closed, nothing answered
        async with Client("127.0.0.1", srv.port, local="127.0.0.2") as c:
            ev = await transcribe(c, tagged_speech("ok", 0.3))
            assert Transcript.from_event(ev).text == "ok"
        assert srv.refused == 1
    finally:
        srv.runtime = None
        await srv.shutdown()


async def test_no_audio_is_written_to_disk(
    server: WyomingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, tmp, cwd = tmp_path / "home", tmp_path / "tmp", tmp_path / "cwd"
    for d in (home, tmp, cwd):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.chdir(cwd)
    async with Client("127.0.0.1", server.port) as c:
        ev = await transcribe(c, tagged_speech("secret", 1.0))
        assert Transcript.from_event(ev).text == "secret"
        await c.write_event(Synthesize(text="Nothing of this is kept.").event())
        await audio_groups(c, until="audio-stop")
    assert [p for d in (home, tmp, cwd) for p in d.rglob("*")] == []
    assert set(os.listdir(tmp_path)) == {"home", "tmp", "cwd"}


async def test_a_client_that_leaves_mid_answer_frees_the_models() -> None:
    runtime = tagged_runtime(FAKE_MS)  # 10 ms per token: the long reply takes about a second
    activity = runtime.watch()
    srv = await started(make_config(), runtime)
    try:
        async with Client("127.0.0.1", srv.port) as c:
            await c.write_event(Transcript("tell me longx", context={"conversation_id": "z"}).event())
            for _ in range(200):  # until the LLM is generating
                if activity.active["llm"]:
                    break
                await asyncio.sleep(0.005)
            assert activity.active["llm"]
        for _ in range(400):
            if activity.idle():
                break
            await asyncio.sleep(0.005)
        assert activity.idle()
        assert await handle(srv.port, "again y", "z") == reply_for("y")  # still serving
    finally:
        await srv.shutdown()  # closes the runtime


async def test_connections_over_the_limit_are_refused_as_busy(runtime: ModelRuntime) -> None:
    srv = await started(make_config(wyoming={"max_connections": 1}), runtime)
    try:
        async with Client("127.0.0.1", srv.port) as first:
            await first.write_event(Describe().event())
            assert Info.is_type((await first.read()).type)
            async with Client("127.0.0.1", srv.port) as second:
                await second.write_event(Describe().event())
                err = Error.from_event(await second.read())
                assert err.code == "busy" and "max_connections" in err.text
                assert await second.read_event() is None
        await until(lambda: srv.connections == 0)
        async with Client("127.0.0.1", srv.port) as again:  # the first one left: room again
            await again.write_event(Describe().event())
            assert Info.is_type((await again.read()).type)
    finally:
        srv.runtime = None
        await srv.shutdown()


async def test_an_idle_client_is_closed_but_not_one_waiting_for_its_answer() -> None:
    runtime = tagged_runtime(FAKE_MS)  # the long reply takes about a second, idle_timeout_s is 0.3 s
    srv = await started(make_config(wyoming={"idle_timeout_s": 300 * MS}), runtime)
    try:
        async with Client("127.0.0.1", srv.port) as c:
            await c.write_event(Transcript("tell me longy", context={"conversation_id": "w"}).event())
            assert Handled.from_event(await c.read()).text == reply_for("longy")
            err = Error.from_event(await c.read())  # then, idle: closed
            assert err.code == "timeout" and await c.read_event() is None
    finally:
        await srv.shutdown()


def test_the_command_refuses_to_listen_beyond_loopback_without_an_allowlist(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["wyoming", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "without an allowlist" in err and "--allow" in err
    assert main(["wyoming", "--host", "0.0.0.0", "--allow", "ha.local"]) == 2
    assert "not an IP address" in capsys.readouterr().err
