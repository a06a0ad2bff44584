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

from voice.wire.events import AudioStart, Error, Interrupt, ReplyText, ServerEvent, Transcript, decode_server
from voice.wire.protocol import UNKNOWN_TYPE, ClientMessage, Played, ProtocolError, Start, encode_client
from voice.wire.report import TurnReport

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
    """Plays reply audio, counting how much of each turn's audio it has handed to the speaker; ``clear`` drops
    everything queued (barge-in). Written by the event loop, read by PortAudio's thread (the lock)."""

    def __init__(self) -> None:
        self._buf = np.zeros(0, np.int16)
        self._lock = threading.Lock()
        self._turn = 0  # the turn whose audio arrives now (0: none announced yet)
        self._rates: dict[int, int] = {}  # each announced turn's sample rate
        self._queued: list[list[int]] = []  # [turn id, its samples still in the buffer], in play order
        self._played: dict[int, int] = {}  # samples handed to the speaker, per turn
        self.output_latency_s = 0.0
        """How long a sample handed to the speaker takes to be heard (the output stream's latency)."""

    def start_turn(self, turn_id: int, rate_hz: int) -> None:
        """The audio that follows is turn ``turn_id``'s, at ``rate_hz`` (``audio_start``)."""
        with self._lock:
            self._turn, self._rates[turn_id] = turn_id, rate_hz

    def add(self, pcm: bytes) -> None:
        samples = np.frombuffer(pcm, np.int16)
        with self._lock:
            self._buf = np.concatenate([self._buf, samples])
            if self._queued and self._queued[-1][0] == self._turn:
                self._queued[-1][1] += len(samples)
            else:
                self._queued.append([self._turn, len(samples)])

    def clear(self) -> None:
        with self._lock:
            self._buf = np.zeros(0, np.int16)
            self._queued.clear()

    def heard_ms(self, turn_id: int) -> float | None:
        """How much of turn ``turn_id``'s audio has been heard, in ms (None: it had no audio)."""
        with self._lock:
            rate = self._rates.get(turn_id)
            played = self._played.get(turn_id, 0)
        if rate is None:
            return None
        return max(0.0, played * 1000 / rate - self.output_latency_s * 1000)

    def callback(self, out: np.ndarray, frames: int, _time: Any, _status: Any) -> None:
        with self._lock:
            n = min(frames, len(self._buf))
            out[:n, 0] = self._buf[:n]
            out[n:, 0] = 0
            self._buf = self._buf[n:]
            while n and self._queued:
                turn, queued = self._queued[0]
                taken = min(n, queued)
                self._played[turn] = self._played.get(turn, 0) + taken
                n -= taken
                if taken == queued:
                    self._queued.pop(0)
                else:
                    self._queued[0][1] -= taken


def _on_event(
    ev: ServerEvent | ProtocolError, player: Player, start_output: Callable[[int], None]
) -> ClientMessage | None:
    """Act on one server event: play, stop playing, or print it. Returns a message to send back, if any: on
    ``interrupt``, how much of the reply had been heard (``played``), so the server keeps that in the history."""
    match ev:
        case AudioStart(turn_id=turn_id, sample_rate=rate):
            start_output(rate)
            player.start_turn(turn_id, rate)
        case Interrupt(turn_id=turn_id):
            heard_ms = player.heard_ms(turn_id)
            player.clear()
            return None if heard_ms is None else Played(turn_id, played_ms=round(heard_ms, 1))
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
    return None


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
                player.output_latency_s = float(getattr(out_stream, "latency", 0.0))

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
                        answer = _on_event(decode_server(message), player, start_output)
                        if answer is not None:
                            with contextlib.suppress(ConnectionClosed):  # the session ended: nothing to correct
                                await ws.send(encode_client(answer))
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
