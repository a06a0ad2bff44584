"""``voice talk``: your microphone and speaker, connected to a running server (sounddevice).

Use headphones: the server hears what the microphone hears, so a reply played on speakers can barge in
on itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from websockets.exceptions import ConnectionClosed

from voice.budget import TurnReport
from voice.events import AudioStart, Error, Interrupt, ReplyText, ServerEvent, Transcript, decode_server
from voice.protocol import UNKNOWN_TYPE, ProtocolError, Start, encode_client

RATE_HZ = 16_000
FRAME_MS = 20


class NoAudioDeviceError(RuntimeError):
    pass


def _check_devices(sd: Any) -> None:
    """Raise :class:`NoAudioDeviceError` unless the machine has a microphone and a speaker (any devices)."""
    try:
        devices = sd.query_devices()
    except Exception as e:
        raise NoAudioDeviceError(f"cannot list audio devices: {e}") from None
    has_in = any(d["max_input_channels"] > 0 for d in devices)
    has_out = any(d["max_output_channels"] > 0 for d in devices)
    if not has_in or not has_out:
        missing = " and ".join(x for x, ok in (("microphone", has_in), ("speaker", has_out)) if not ok)
        raise NoAudioDeviceError(
            f"no {missing} found on this machine (sounddevice sees {len(devices)} device(s)). "
            "`voice talk` needs both; to try the assistant without audio hardware run `voice demo`"
        )


class Player:
    """Plays reply audio; ``clear`` drops everything queued (barge-in)."""

    def __init__(self) -> None:
        self._buf = np.zeros(0, np.int16)
        self._lock = threading.Lock()

    def add(self, pcm: bytes) -> None:
        with self._lock:
            self._buf = np.concatenate([self._buf, np.frombuffer(pcm, np.int16)])

    def clear(self) -> None:
        with self._lock:
            self._buf = np.zeros(0, np.int16)

    def callback(self, out: np.ndarray, frames: int, _time: Any, _status: Any) -> None:
        with self._lock:
            n = min(frames, len(self._buf))
            out[:n, 0] = self._buf[:n]
            out[n:, 0] = 0
            self._buf = self._buf[n:]


def _on_event(ev: ServerEvent | ProtocolError, player: Player, start_output: Callable[[int], None]) -> None:
    """Act on one server event: play, stop playing, or print it."""
    match ev:
        case AudioStart(sample_rate=rate):
            start_output(rate)
        case Interrupt():
            player.clear()
        case Transcript(text=text):
            print(f"you: {text}", file=sys.stderr)
        case ReplyText(text=text):
            print(f"assistant: {text}", file=sys.stderr)
        case TurnReport(total_ms=total, target_ms=target):
            print(f"  latency {total} ms (target {target} ms)", file=sys.stderr)
        case Error(code=code, message=message):
            print(f"server error {code}: {message}", file=sys.stderr)
        case ProtocolError(code=code, message=message) if code != UNKNOWN_TYPE:
            print(f"bad event from the server: {message}", file=sys.stderr)


async def _talk(url: str, token: str | None, input_device: str | None, output_device: str | None) -> None:
    import sounddevice as sd
    from websockets.asyncio.client import connect

    _check_devices(sd)
    loop = asyncio.get_running_loop()
    # PortAudio's thread hands microphone blocks to the event loop: no thread ever waits on this queue, so
    # nothing is left blocked when the session ends (a blocking queue.get in a worker thread kept
    # asyncio.run from returning).
    mic: asyncio.Queue[bytes] = asyncio.Queue()
    player = Player()
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(encode_client(Start(RATE_HZ)))
        out_stream: Any = None

        def start_output(rate_hz: int) -> None:
            nonlocal out_stream
            if out_stream is None:
                out_stream = sd.OutputStream(
                    samplerate=rate_hz, channels=1, dtype="int16", device=output_device, callback=player.callback
                )
                out_stream.start()

        def on_mic(indata: Any, frames: int, _t: Any, _s: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed: the block is not needed
                loop.call_soon_threadsafe(mic.put_nowait, bytes(indata))

        async def send_mic() -> None:
            with contextlib.suppress(ConnectionClosed):
                while True:
                    await ws.send(await mic.get())

        with sd.RawInputStream(
            samplerate=RATE_HZ,
            channels=1,
            dtype="int16",
            device=input_device,
            blocksize=RATE_HZ * FRAME_MS // 1000,
            callback=on_mic,
        ):
            sender = asyncio.create_task(send_mic())
            print("listening — speak (Ctrl+C to quit)", file=sys.stderr)
            try:
                async for message in ws:
                    if isinstance(message, bytes):
                        player.add(message)
                    else:
                        _on_event(decode_server(message), player, start_output)
            finally:
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sender
                if out_stream is not None:
                    out_stream.close()


def run_talk(url: str, *, token: str | None, input_device: str | None, output_device: str | None) -> int:
    """Talk until the server ends the session (exit 0) or Ctrl+C; 1 with a message for any audio or
    connection problem."""
    try:
        import sounddevice
    except OSError as e:  # PortAudio library missing
        print(f"error: audio is unavailable: {e}", file=sys.stderr)
        return 1
    try:
        asyncio.run(_talk(url, token, input_device, output_device))
    except NoAudioDeviceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except sounddevice.PortAudioError as e:  # e.g. a device that cannot record 16 kHz mono 16-bit
        print(
            f"error: the audio device refused: {e}. `voice talk` records {RATE_HZ} Hz mono 16-bit and plays "
            "the server's rate; pick other devices with --input-device/--output-device (list them with "
            "`python -m sounddevice`)",
            file=sys.stderr,
        )
        return 1
    except OSError as e:
        print(f"error: cannot connect to {url}: {e}. Is `voice serve` running?", file=sys.stderr)
        return 1
    return 0
