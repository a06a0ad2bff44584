"""Safe defaults and limits of issue 4: bind checks, Origin allowlist, token (header or start message, constant
time, never logged), no transcript above DEBUG, model paths inside the models folder, and every limit in
``[server]`` with the close code or error it produces."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.conftest import make_config
from tests.netkit import http_get, http_get_full, running
from tests.units import FAKE_MS, MS
from voice.config.config import ConfigError
from voice.models import DEFAULT_CATALOGUE, Catalogue, ModelError, ModelMissingError, ModelPathError
from voice.models.preflight import check_model_files
from voice.reliability.probe import Probe
from voice.reliability.tagged import tagged_runtime, tagged_speech
from voice.serve.security import check_bind

TOKEN = "correct-horse-battery-staple-42"
SCALE = 0.1 * FAKE_MS  # fake model times × 0.1
CLI = [sys.executable, "-c", "import sys; from voice.cli import main; sys.exit(main())"]


# ---------------------------------------------------------------------------------------------- binding
@pytest.mark.parametrize(
    ("host", "token", "ok"),
    [
        ("127.0.0.1", "", True),
        ("localhost", "", True),
        ("::1", "", True),
        ("127.0.0.2", "", True),
        ("0.0.0.0", "", False),
        ("::", "", False),
        ("", "", False),  # an empty host listens on every interface
        ("192.168.1.10", "", False),
        ("my-laptop.local", "", False),
        ("0.0.0.0", "short", False),
        ("0.0.0.0", TOKEN, True),
    ],
)
def test_binding_beyond_loopback_needs_a_long_token(host: str, token: str, ok: bool) -> None:
    config = make_config(server={"host": host, "token": token})
    if ok:
        check_bind(config)
    else:
        with pytest.raises(ConfigError, match="refusing to listen"):
            check_bind(config)


def test_serve_on_all_interfaces_without_a_token_is_stopped_with_an_explanation(tmp_path: Path) -> None:
    t0 = time.monotonic()
    done = subprocess.run([*CLI, "serve", "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "refusing to listen on all interfaces" in done.stderr and "token" in done.stderr
    assert "127.0.0.1" in done.stderr  # ...and what to do instead
    assert time.monotonic() - t0 < 10  # refused before any model is touched
    config = tmp_path / "c.toml"
    config.write_text('[server]\nhost = "0.0.0.0"\ntoken = "abc"\n')
    done = subprocess.run([*CLI, "serve", "--config", str(config)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "shorter than 16 characters" in done.stderr


# ---------------------------------------------------------------------------------------------- origin
async def test_browser_origins_are_checked_against_the_allowlist() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime, {"allowed_origins": ["https://voice.example.org"]}) as srv:
        port = srv.port
        for origin in (
            None,  # not a browser
            f"http://localhost:{port}",
            f"http://127.0.0.1:{port}",
            f"HTTP://LOCALHOST:{port}",
            "https://voice.example.org",
        ):
            p = await Probe.connect(srv.url, origin=origin)
            assert p.session_id, origin
            await p.close()
        for origin in (
            "https://evil.example.com",
            "null",  # sandboxed iframes, file:// pages
            f"http://localhost:{port + 1}",  # another local app's page
            f"http://localhost.evil.example.com:{port}",
        ):
            with pytest.raises(InvalidStatus) as e:
                await Probe.connect(srv.url, origin=origin)
            assert e.value.response.status_code == 403, origin
        assert srv.metrics.errors["forbidden_origin"] == 4
        assert not srv.sessions


async def test_the_browser_page_is_served_and_cannot_be_framed_by_other_sites() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        status, headers, body = await http_get_full(srv.port, "/")
        assert status == 200 and "<title>voice" in body
        assert headers["content-type"].startswith("text/html")
        assert headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        p = await Probe.connect(srv.url, origin=f"http://127.0.0.1:{srv.port}")  # what the page does
        assert (await p.turn(tagged_speech("s1t1")))["outcome"] == "ok"
        await p.close()
        status, _ = await http_get(srv.port, "/anything-else")
        assert status == 426  # not a websocket request, not a page


# ---------------------------------------------------------------------------------------------- token
async def test_token_in_the_header_or_in_the_start_message(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[int] = []
    real_compare = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append(1)
        return real_compare(a, b)

    monkeypatch.setattr("voice.serve.security.hmac.compare_digest", spy)
    runtime = tagged_runtime(SCALE)
    async with running(runtime, {"token": TOKEN}) as srv:
        p = await Probe.connect(srv.url, token=TOKEN)  # Authorization: Bearer
        assert (await p.turn(tagged_speech("s1t1")))["outcome"] == "ok"
        await p.close()
        p = await Probe.connect(srv.url, start={"token": TOKEN})  # browsers: in the start message
        assert (await p.turn(tagged_speech("s2t1")))["outcome"] == "ok"
        await p.close()
        assert compared, "tokens are compared with hmac.compare_digest (constant time)"
        with pytest.raises(InvalidStatus) as e:
            await Probe.connect(srv.url, token="wrong-token-of-some-length")
        assert e.value.response.status_code == 401
        status, _ = await http_get(srv.port, "/metrics")
        assert status == 401  # metrics need the token too
        status, _ = await http_get(srv.port, "/metrics", {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200
        status, _ = await http_get(srv.port, "/health")
        assert status == 200  # health stays open (it tells nothing about conversations)


@pytest.mark.parametrize(
    "first",
    [
        json.dumps({"type": "start", "sample_rate": 16000}),
        json.dumps({"type": "start", "sample_rate": 16000, "token": "wrong-token-of-some-length"}),
        json.dumps({"type": "start", "sample_rate": 16000, "token": TOKEN[:-1]}),
        json.dumps({"type": "reset"}),
        "not json",
        b"\x00\x00" * 160,
    ],
    ids=["no token", "wrong token", "prefix of the token", "other message", "bad json", "audio"],
)
async def test_without_a_valid_token_the_connection_is_closed_1008(first: str | bytes) -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime, {"token": TOKEN}) as srv:
        p = await Probe.connect(srv.url, start={})
        await p.ws.send(first)
        err = await p.wait_type("error", 5)
        assert err["code"] == "unauthorized" and err["fatal"] is True
        assert await p.wait_closed(5) == 1008
        assert not p.of_type("ready")
        assert srv.metrics.errors["unauthorized"] == 1


async def test_a_connection_that_never_starts_is_closed() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime, {"token": TOKEN, "start_timeout_s": 300 * MS}) as srv:
        p = await Probe.connect(srv.url, start={})
        t0 = time.monotonic()
        assert await p.wait_closed(5) == 1001
        assert 250 * MS < time.monotonic() - t0 < 2000 * MS
        assert p.errors()[0]["code"] == "timeout" and "no start message" in p.errors()[0]["message"]


async def test_the_token_is_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("websockets", "voice"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        runtime = tagged_runtime(SCALE)
        async with running(runtime, {"token": TOKEN}) as srv:
            p = await Probe.connect(srv.url, token=TOKEN)
            await p.turn(tagged_speech("s1t1"))
            await p.close()
            p = await Probe.connect(srv.url, start={"token": TOKEN})
            await p.turn(tagged_speech("s1t2"))
            await p.close()
            with pytest.raises(InvalidStatus):
                await Probe.connect(srv.url, token=TOKEN + "x")
    finally:
        for name in ("websockets", "voice"):
            logging.getLogger(name).setLevel(logging.NOTSET)
    server_side = [r for r in caplog.records if not r.name.startswith("websockets.client")]
    assert any(r.name == "voice.websockets" and r.levelno == logging.DEBUG for r in server_side)  # it did log
    for r in server_side:
        assert TOKEN not in r.getMessage(), (r.name, r.getMessage())


# ---------------------------------------------------------------------------------------------- privacy
@pytest.mark.parametrize("record", [False, True])
async def test_no_transcript_above_debug_and_no_audio_on_disk_unless_recording(
    record: bool, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.INFO)
    runtime = tagged_runtime(SCALE)
    async with running(runtime, {"record": record, "turn_log": "logs/turns.jsonl"}) as srv:
        p = await Probe.connect(srv.url)
        await p.turn(tagged_speech("secret42"))
        await p.close()
    info = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert any("secret42" in m for m in info) is record
    files = sorted(str(f.relative_to(tmp_path)) for f in await asyncio.to_thread(lambda: list(tmp_path.rglob("*"))))
    assert files == ["logs", "logs/turns.jsonl"]  # the turn log, and no audio anywhere
    text = await asyncio.to_thread((tmp_path / "logs/turns.jsonl").read_text)
    line = json.loads(text.splitlines()[0])
    assert ("transcript" in line) is record and ("secret42" in json.dumps(line)) is record


# ---------------------------------------------------------------------------------------------- model paths
def _fake_models(root: Path, catalogue: Catalogue, *, skip: str = "") -> None:
    """Every default model's files, sparse, with the catalogue's sizes (and the GGUF magic)."""
    config = make_config()
    for name in (config.stt.model, config.llm.model, config.tts.model, config.turn.end_of_turn_model):
        entry = catalogue.get(name)
        folder = root / entry.kind / entry.name
        folder.mkdir(parents=True, exist_ok=True)
        for f in entry.files:
            if f.name == skip:
                continue
            with (folder / f.name).open("wb") as fh:
                fh.write(b"GGUF" if f.name.endswith(".gguf") else b"\0")
                fh.truncate(f.size_bytes)


def test_model_files_are_checked_before_loading(tmp_path: Path) -> None:
    catalogue = Catalogue.load(DEFAULT_CATALOGUE)
    config = make_config()
    root = tmp_path / "models"
    _fake_models(root, catalogue)
    # STT, LLM, TTS, the end-of-turn model and the words model (SmolLM2 again, as [turn] words_model)
    assert len(check_model_files(config, root, catalogue)) == 5
    gguf = next((root / "llm").rglob("*.gguf"))
    # Wrong magic.
    with gguf.open("r+b") as fh:
        fh.write(b"GGML")
    with pytest.raises(ModelMissingError, match=f"{gguf}.*not a GGUF"):
        check_model_files(config, root, catalogue)
    # Truncated.
    with gguf.open("r+b") as fh:
        fh.write(b"GGUF")
        fh.truncate(1000)
    with pytest.raises(ModelMissingError, match=f"{gguf} has 1000 bytes"):
        check_model_files(config, root, catalogue)
    # Missing.
    gguf.unlink()
    with pytest.raises(ModelMissingError, match=f"{gguf} is missing"):
        check_model_files(config, root, catalogue)


@pytest.mark.parametrize("what", ["folder", "file"])
def test_model_paths_must_stay_inside_the_models_folder(tmp_path: Path, what: str) -> None:
    catalogue = Catalogue.load(DEFAULT_CATALOGUE)
    config = make_config()
    root, outside = tmp_path / "models", tmp_path / "elsewhere"
    _fake_models(root, catalogue)
    _fake_models(outside, catalogue)
    entry = catalogue.get(config.llm.model)
    folder = root / "llm" / entry.name
    if what == "folder":
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()
        folder.symlink_to(outside / "llm" / entry.name)
        bad = folder
    else:
        bad = folder / entry.files[0].name
        bad.unlink()
        bad.symlink_to(outside / "llm" / entry.name / entry.files[0].name)
    with pytest.raises(ModelPathError, match="outside the models folder") as e:
        check_model_files(config, root, catalogue)
    assert str(bad.relative_to(root)) in str(e.value) or str(bad) in str(e.value)
    # A symlink that stays inside the folder is fine.
    assert isinstance(e.value, ModelError)


# ---------------------------------------------------------------------------------------------- limits
async def test_max_sessions_then_1013_try_again_later() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime, {"max_sessions": 3}) as srv:
        probes = [await Probe.connect(srv.url) for _ in range(3)]
        extra = await Probe.connect(srv.url, start={})
        assert await extra.wait_closed(5) == 1013
        assert "try again later" in extra.close_reason
        await probes[0].close()
        await srv.wait_sessions(lambda s: len(s) == 2, 5)
        again = await Probe.connect(srv.url)  # a place is free again
        assert (await again.turn(tagged_speech("s4t1")))["outcome"] == "ok"
        for p in [*probes[1:], again]:
            await p.close()
        assert srv.metrics.errors["too_many_sessions"] == 1


@pytest.mark.parametrize(("key", "words"), [("idle_timeout_s", "idle timeout"), ("session_max_s", "session time")])
async def test_idle_and_session_time_limits_send_an_error_then_close_1001(key: str, words: str) -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime, {key: 600 * MS}) as srv:
        p = await Probe.connect(srv.url)
        if key == "session_max_s":  # keep talking: only the session limit can end it
            with contextlib.suppress(ConnectionClosed):
                for _ in range(30):
                    await p.send_audio(np.zeros(800, np.int16))
                    await asyncio.sleep(100 * MS)  # 50 ms of audio every 100 MS
        assert await p.wait_closed(5) == 1001
        err = p.errors()[-1]
        assert err["code"] == "timeout" and words in err["message"] and err["fatal"] is True
        assert srv.metrics.closes[1001] == 1


async def test_audio_faster_than_the_ingress_limit_is_refused() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime, {"max_ingress_realtime": 4.0}) as srv:
        p = await Probe.connect(srv.url)
        await p.send_audio(np.zeros(16000 * 6, np.int16), frame_s=0.5)  # 6 s of audio in a few ms
        err = await p.wait_type("error", 5)
        assert err["code"] == "rate_limited" and err["fatal"] is False
        # The 2 s burst was accepted, the rest refused frame by frame; the session goes on.
        assert len(p.errors()) >= 6
        await asyncio.sleep(1000 * MS)  # the ingress allowance refills
        assert (await p.turn(tagged_speech("s1t1"), silence_s=0.4))["outcome"] == "ok"
        await p.close()


async def test_an_utterance_is_ended_by_force_at_max_utterance_s() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime, vad={"max_utterance_s": 1.0}) as srv:
        p = await Probe.connect(srv.url)
        await p.send_audio(tagged_speech("s1t1", seconds=1.5))
        ended = await p.wait_type("speech_ended", 5)
        assert ended["forced"] is True
        report = await p.wait_type("turn_report", 5)
        assert report["forced_endpoint"] is True and 990 <= report["utterance_ms"] <= 1100
        await p.close()


def test_every_limit_is_in_config_toml_with_a_comment() -> None:
    from voice.config.config import DEFAULT_CONFIG_PATH

    text = DEFAULT_CONFIG_PATH.read_text()
    for key in (
        "max_message_bytes",
        "max_ingress_realtime",
        "max_utterance_s",
        "session_max_s",
        "idle_timeout_s",
        "max_sessions",
        "max_queue",
        "start_timeout_s",
        "ping_interval_s",
        "ping_timeout_s",
        "write_limit_bytes",
        "send_queue_frames",
        "shutdown_grace_s",
    ):
        line = next(line for line in text.splitlines() if line.startswith(f"{key} ="))
        assert "#" in line, key


def test_limits_must_be_usable() -> None:
    for key, value in (("max_sessions", 0), ("idle_timeout_s", 0.0), ("max_message_bytes", 10)):
        with pytest.raises(ConfigError, match=key):
            make_config(server={key: value})
        with pytest.raises(ConfigError, match=key):  # also when a valid config is changed (CLI flags)
            make_config().with_server(**{key: value})


@pytest.fixture(autouse=True)
def _no_models_root_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOICE_MODELS_ROOT", raising=False)
