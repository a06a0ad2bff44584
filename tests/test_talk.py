from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.sync.server import ServerConnection, serve

from voice.talk import NoAudioDeviceError, Player, _check_devices, _on_event, run_talk
from voice.wire import events
from voice.wire.events import encode_server
from voice.wire.protocol import Played


class FakeSoundDevice:
    def __init__(self, devices: list[dict[str, int]]) -> None:
        self.devices = devices

    def query_devices(self) -> list[dict[str, int]]:
        return self.devices


def test_no_devices_is_a_clear_error() -> None:
    with pytest.raises(NoAudioDeviceError, match=r"no microphone and speaker found.*voice demo"):
        _check_devices(FakeSoundDevice([]))


def test_missing_microphone_is_named() -> None:
    with pytest.raises(NoAudioDeviceError, match="no microphone found"):
        _check_devices(FakeSoundDevice([{"max_input_channels": 0, "max_output_channels": 2}]))


def test_player_plays_then_clears_on_interrupt() -> None:
    import numpy as np

    p = Player()
    p.add(np.arange(1, 6, dtype=np.int16).tobytes())
    out = np.zeros((3, 1), np.int16)
    p.callback(out, 3, None, None)
    assert out[:, 0].tolist() == [1, 2, 3]
    p.clear()
    p.callback(out, 3, None, None)
    assert out[:, 0].tolist() == [0, 0, 0]


def test_an_interrupt_is_answered_with_how_much_of_that_turn_was_heard() -> None:
    import numpy as np

    p, rates = Player(), []
    p.output_latency_s = 0.005
    assert _on_event(events.AudioStart(1, 1000, 40), p, rates.append) is None
    p.add(bytes(2 * 30))  # 30 ms of turn 1 at 1 kHz
    assert _on_event(events.AudioStart(2, 1000, 40), p, rates.append) is None
    p.add(bytes(2 * 50))  # then 50 ms of turn 2
    out = np.zeros((40, 1), np.int16)
    p.callback(out, 40, None, None)  # all of turn 1 and 10 ms of turn 2 go to the speaker
    assert rates == [1000, 1000]
    assert _on_event(events.Interrupt(2), p, rates.append) == Played(2, played_ms=5.0)  # 10 ms - 5 ms latency
    p.callback(out, 40, None, None)  # cleared: nothing more of turn 2 plays
    assert p.heard_ms(2) == 5.0 and p.heard_ms(1) == 25.0
    assert _on_event(events.Interrupt(3), p, rates.append) is None  # a turn without audio: nothing to say


# ---------------------------------------------------------------------------------------------- a whole session
FAKE_SD = Path(__file__).resolve().parent / "fake_sounddevice"
REPO = Path(__file__).resolve().parents[1]


def _one_turn(ws: ServerConnection) -> None:
    """A scripted server: ready, then (after three microphone blocks) one short reply, then it ends the session."""
    assert json.loads(ws.recv())["type"] == "start"
    ws.send(encode_server(events.Ready("s", 1, 16000, 22050)))
    blocks = 0
    while blocks < 3:
        blocks += isinstance(ws.recv(), bytes)
    ws.send(encode_server(events.Transcript(1, "hello there")))
    ws.send(encode_server(events.AudioStart(1, 22050, 40)))
    ws.send(bytes(882))
    ws.send(encode_server(events.ReplyText(1, "Hi.")))
    ws.close()


@pytest.fixture
def server_url() -> Iterator[str]:
    with serve(_one_turn, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"ws://127.0.0.1:{server.socket.getsockname()[1]}/"
        server.shutdown()
    thread.join(5)


def test_talk_exits_when_the_server_ends_the_session(server_url: str) -> None:
    """`voice talk` returns once the session ends; it used to hang in asyncio.run's shutdown, with a worker
    thread still blocked on the microphone queue. Run in a child process, so that a hang is a timeout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FAKE_SD), str(REPO)])}
    env.pop("FAKE_SD_REFUSE", None)
    done = subprocess.run(
        [sys.executable, "-m", "voice", "talk", "--url", server_url],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "you: hello there" in done.stderr and "assistant: Hi." in done.stderr


@pytest.mark.parametrize("refuse", ["input", "output"])
def test_an_audio_device_that_refuses_the_format_is_a_clear_error(
    refuse: str, server_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(FAKE_SD))
    monkeypatch.delitem(sys.modules, "sounddevice", raising=False)
    monkeypatch.setenv("FAKE_SD_REFUSE", refuse)
    assert run_talk(server_url, token=None, input_device=None, output_device=None) == 1
    err = capsys.readouterr().err
    assert f"error: the audio device refused: Error opening {refuse} stream: Invalid sample rate" in err
    assert "--input-device/--output-device" in err and "Traceback" not in err
    assert sys.modules["sounddevice"].__file__ == str(FAKE_SD / "sounddevice.py")
