"""The Wyoming STT and TTS backends against the real PyPI servers, ``wyoming-faster-whisper`` and
``wyoming-piper``, started on loopback with our catalogue models (the dev extra pins both).

How each loads a local model without downloading (read in their source, 3.8.1 and 2.5.2):
* wyoming-faster-whisper: ``--model DIR`` is handed to ``faster_whisper.WhisperModel``, which loads a folder
  as is; ``--local-files-only`` (and ``HF_HUB_OFFLINE=1``) make anything else an error, not a download;
  ``--stt-library faster-whisper`` keeps it from probing other libraries.
* wyoming-piper: a ``--voice`` that is not in its voices.json but names an existing ``.onnx`` (with its
  ``.onnx.json``) is a custom voice, loaded from that path; nothing is fetched (``--update-voices`` is off).
Both get an empty temporary ``--data-dir``, which must stay empty.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soxr

from tests.conftest import make_config
from tests.netkit import free_port, running
from tests.test_real_models import espeak, words
from voice.backends.stt_wyoming import WyomingStt
from voice.backends.tts_wyoming import WyomingTts
from voice.config.config import Config
from voice.loader import load_runtime
from voice.models import DEFAULT_MODELS_ROOT
from voice.reliability.probe import Probe
from voice.wyoming.client import WyomingClientError

pytest.importorskip("wyoming_faster_whisper", reason="wyoming-faster-whisper is not installed (the dev extra pins it)")
pytest.importorskip("wyoming_piper", reason="wyoming-piper is not installed (the dev extra pins it)")

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]
STT_DIR = DEFAULT_MODELS_ROOT / "stt" / "tiny.en"
VOICE = DEFAULT_MODELS_ROOT / "tts" / "joe-medium" / "en_US-joe-medium.onnx"
START_S = 120.0


def _wait_listening(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not listen within {START_S:g} s:\n{log.read_text()[-3000:]}")


class Spawned:
    def __init__(self, module: str, args: list[str], tmp: Path) -> None:
        self.port = free_port()
        self.uri = f"tcp://127.0.0.1:{self.port}"
        self.data_dir = tmp / f"{module}-data"
        self.data_dir.mkdir()
        self.log = tmp / f"{module}.log"
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        cmd = [sys.executable, "-m", module, "--uri", self.uri, "--data-dir", str(self.data_dir), *args]
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _wait_listening(self.proc, self.port, self.log)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_whisper(tmp: Path) -> Spawned:
    args = ["--model", str(STT_DIR), "--local-files-only", "--stt-library", "faster-whisper", "--language", "en"]
    return Spawned("wyoming_faster_whisper", [*args, "--beam-size", "1", "--cpu-threads", "2"], tmp)


def start_piper(tmp: Path) -> Spawned:
    return Spawned("wyoming_piper", ["--voice", str(VOICE)], tmp)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Spawned, Spawned]]:
    tmp = tmp_path_factory.mktemp("wyoming-servers")
    whisper = start_whisper(tmp)
    try:
        piper = start_piper(tmp)
    except BaseException:
        whisper.stop()
        raise
    yield whisper, piper
    whisper.stop()
    piper.stop()
    # Nothing was downloaded into (or written to) their data folders.
    assert list(whisper.data_dir.rglob("*")) == [] and list(piper.data_dir.rglob("*")) == []


def config_for(whisper: Spawned, piper: Spawned) -> Config:
    return make_config(
        stt={"backend": "wyoming", "uri": whisper.uri}, tts={"backend": "wyoming", "uri": piper.uri}
    )


def test_speech_to_text_and_back_through_the_two_servers(servers: tuple[Spawned, Spawned], tmp_path: Path) -> None:
    whisper, piper = servers
    config = config_for(whisper, piper)
    stt = WyomingStt(config.stt)
    heard = stt.transcribe(espeak("Turn on the kitchen light.", tmp_path))
    assert "kitchen" in words(heard) and "light" in words(heard)
    tts = WyomingTts(config.tts)
    assert tts.sample_rate == 22050  # the voice's own rate, from its audio-start
    audio = np.concatenate(list(tts.synthesize("The weather is lovely today.")))
    assert len(audio) / tts.sample_rate > 0.8

    back = words(stt.transcribe(np.asarray(soxr.resample(audio.astype(np.float32) / 32768, 22050, 16000))))
    assert "weather" in back and "lovely" in back


async def test_a_voice_turn_with_stt_and_tts_on_the_wyoming_servers(
    servers: tuple[Spawned, Spawned], tmp_path: Path
) -> None:
    whisper, piper = servers
    runtime = await asyncio.to_thread(load_runtime, config_for(whisper, piper))
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        speech = (espeak("Turn on the kitchen light.", tmp_path) * 32767).astype(np.int16)
        report = await p.turn(speech, timeout_s=120, silence_s=1.5)
        assert report["outcome"] == "ok", p.errors()
        assert "kitchen" in words(report["transcript"]) and report["reply_audio_ms"] > 0
        await p.close()


def test_a_server_that_dies_mid_request_is_a_clear_error(tmp_path: Path) -> None:
    piper = start_piper(tmp_path)
    try:
        tts = WyomingTts(make_config(tts={"backend": "wyoming", "uri": piper.uri}).tts)
        text = " ".join(["This is a long sentence that takes the voice a while to speak, and then some more."] * 6)
        steps = iter(tts.synthesize(text))
        assert len(next(steps))  # the request is under way: the first sentence's audio came
        piper.proc.kill()  # while it synthesizes the rest
        with pytest.raises(WyomingClientError, match=f"{piper.uri} closed the connection mid-request"):
            list(steps)
        # Gone for good before the next request: a killed process may still hold its listening socket for a
        # moment after the request's connection was reset, and a connect then lands in its backlog.
        piper.proc.wait(10)
        with pytest.raises(WyomingClientError, match="cannot connect"):
            list(tts.synthesize("Hello."))
    finally:
        piper.stop()
