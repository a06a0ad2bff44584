"""A stand-in for the ``sounddevice`` package (PortAudio) for ``voice talk`` tests: put this folder first
on ``sys.path``. The microphone delivers a block of silence every 20 ms from its own thread, as PortAudio
does; ``FAKE_SD_REFUSE=input`` (or ``output``) makes opening that stream fail like an unsupported rate."""

from __future__ import annotations

import os
import threading
from typing import Any


class PortAudioError(Exception):
    pass


def query_devices() -> list[dict[str, int]]:
    return [{"max_input_channels": 1, "max_output_channels": 0}, {"max_input_channels": 0, "max_output_channels": 2}]


def _refuse(which: str, samplerate: int) -> None:
    if os.environ.get("FAKE_SD_REFUSE") == which:
        raise PortAudioError(f"Error opening {which} stream: Invalid sample rate {samplerate} [PaErrorCode -9997]")


class RawInputStream:
    def __init__(self, *, samplerate: int, blocksize: int, callback: Any, **_: Any) -> None:
        _refuse("input", samplerate)
        self._block = bytes(2 * blocksize)
        self._callback = callback
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-portaudio", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self._callback(self._block, len(self._block) // 2, None, None)

    def __enter__(self) -> RawInputStream:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


class OutputStream:
    def __init__(self, *, samplerate: int, **_: Any) -> None:
        _refuse("output", samplerate)

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass
