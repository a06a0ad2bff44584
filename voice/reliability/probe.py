"""A scripted websocket client for tests and soaks.

:class:`Probe` sends audio as fast as the server allows (no real-time pacing), records every event in
arrival order, counts reply audio per turn (audio belongs to the turn of the last ``audio_start``), and
flags audio of a turn that arrives after that turn's ``interrupt``. Unlike ``voice.client`` it
asserts nothing and never waits for the user: tests script what happens and when.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl as ssl_lib
import struct
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from voice.wire.events import AudioEnd, AudioStart, Interrupt, decode_server
from voice.wire.protocol import ProtocolError

Event = dict[str, Any]


MAX_TRAILING_SILENCE_S = 3.0
"""How much silence :meth:`Probe.say_to_the_end` sends after the speech at most, waiting for the end of the turn."""


class Probe:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.events: list[Event] = []
        self.arrival_ns: list[int] = []
        self.audio_bytes: Counter[int] = Counter()
        self.audio_frames: Counter[int] = Counter()
        self.audio_arrivals_ns: dict[int, list[int]] = {}
        """Per turn, when each of its audio frames arrived (``time.perf_counter_ns``)."""
        self.audio_after_interrupt = 0
        self.stray_audio = 0
        self.bad_events: list[str] = []
        """Why :func:`voice.wire.events.decode_server` refused each text frame it could not type (none expected)."""
        self.session_id = ""
        self.close_code: int | None = None
        self.close_reason = ""
        self._audio_turn: int | None = None
        self._interrupted: set[int] = set()
        self._changed = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        start: dict[str, Any] | None = None,
        token: str | None = None,
        origin: str | None = None,
        timeout_s: float = 5.0,
        ssl: ssl_lib.SSLContext | None = None,
    ) -> Probe:
        """Connect and (unless ``start`` is ``{}``) send a start message (16 kHz by default) and wait for
        ``ready``. ``ssl``: the context for a ``wss://`` URL (e.g. trusting a test CA)."""
        headers = {"Authorization": f"Bearer {token}"} if token else None
        tls: dict[str, Any] = {"ssl": ssl} if ssl is not None else {}  # ssl=None is refused for wss://
        ws = await connect(
            url,
            additional_headers=headers,
            origin=origin,  # type: ignore[arg-type]
            max_size=None,
            open_timeout=timeout_s,
            **tls,
        )
        probe = cls(ws)
        if start != {}:
            await probe.send_json({"type": "start", "sample_rate": 16000, **(start or {})})
            ready = await probe.wait_for(lambda e: e["type"] in ("ready", "error"), timeout_s)
            if ready["type"] == "ready":
                probe.session_id = ready["session_id"]
        return probe

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                if isinstance(message, bytes):
                    arrived_ns = time.perf_counter_ns()
                    tid = self._audio_turn
                    if tid is None:
                        self.stray_audio += 1
                    else:
                        if tid in self._interrupted:
                            self.audio_after_interrupt += 1
                        self.audio_bytes[tid] += len(message)
                        self.audio_frames[tid] += 1
                        self.audio_arrivals_ns.setdefault(tid, []).append(arrived_ns)
                else:
                    self.events.append(json.loads(message))  # as on the wire, for checks of the format
                    self.arrival_ns.append(time.perf_counter_ns())
                    match decode_server(message):
                        case AudioStart(turn_id=tid):
                            self._audio_turn = tid
                        case AudioEnd(turn_id=tid) if tid == self._audio_turn:
                            self._audio_turn = None
                        case Interrupt(turn_id=tid):
                            self._interrupted.add(tid)
                            if tid == self._audio_turn:
                                self._audio_turn = None
                        case ProtocolError() as bad:
                            self.bad_events.append(bad.message)
                self._changed.set()
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self.ws.close_code
            self.close_reason = self.ws.close_reason or ""
            self._changed.set()

    # ------------------------------------------------------------------ sending
    async def send_json(self, obj: Any) -> None:
        await self.ws.send(json.dumps(obj))

    async def send_audio(self, audio: np.ndarray | bytes, frame_s: float = 0.1, rate_hz: int = 16000) -> None:
        """Send int16 audio (or raw bytes) in frames of ``frame_s`` seconds, as fast as possible."""
        data = audio if isinstance(audio, bytes) else np.asarray(audio, dtype="<i2").tobytes()
        step = max(2, int(frame_s * rate_hz) * 2)
        for i in range(0, len(data), step):
            await self.ws.send(data[i : i + step])

    async def say(self, speech: np.ndarray, silence_s: float = 0.5, frame_s: float = 0.1) -> None:
        """Speech followed by silence (long enough for the endpoint)."""
        await self.send_audio(speech, frame_s)
        await self.send_audio(np.zeros(int(silence_s * 16000), np.int16), frame_s)

    # ------------------------------------------------------------------ waiting
    async def wait_for(self, pred: Callable[[Event], bool], timeout_s: float = 10.0, since: int = 0) -> Event:
        """The first event from index ``since`` on that matches; raises TimeoutError / ConnectionError."""
        deadline = time.monotonic() + timeout_s
        i = since
        while True:
            while i < len(self.events):
                ev = self.events[i]
                i += 1
                if pred(ev):
                    return ev
            if self.reader.done():
                raise ConnectionError(f"connection closed ({self.close_code} {self.close_reason!r}) while waiting")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no matching event within {timeout_s} s; last events: {self.events[-5:]}")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def wait_type(self, kind: str, timeout_s: float = 10.0, since: int = 0, **fields: Any) -> Event:
        return await self.wait_for(
            lambda e: e["type"] == kind and all(e.get(k) == v for k, v in fields.items()), timeout_s, since
        )

    async def say_to_the_end(self, speech: np.ndarray, silence_s: float = 0.5, frame_s: float = 0.1) -> None:
        """Say ``speech``, then, like a live microphone, go on sending silence (a frame every ``frame_s``, in real
        time) until the server hears the end of the turn (``speech_ended``), up to :data:`MAX_TRAILING_SILENCE_S`.
        An end-of-turn model that scores the sentence unfinished waits for more silence than ``silence_s``
        (``[turn] incomplete_silence_ms``), and a client that fell silent on the wire would wait for ever."""
        since = len(self.events)
        await self.say(speech, silence_s, frame_s)
        frame = np.zeros(int(frame_s * 16000), np.int16)
        sent_s = silence_s
        while sent_s < MAX_TRAILING_SILENCE_S and not self.reader.done():
            await asyncio.sleep(frame_s)
            if any(e["type"] == "speech_ended" for e in self.events[since:]):
                break
            await self.send_audio(frame, frame_s)
            sent_s += frame_s

    async def turn(
        self, speech: np.ndarray, timeout_s: float = 30.0, silence_s: float = 0.5, frame_s: float = 0.1
    ) -> Event:
        """Say ``speech`` (:meth:`say_to_the_end`) and return the ``turn_report`` of the turn it started."""
        since = len(self.events)
        await self.say_to_the_end(speech, silence_s, frame_s)
        ended = await self.wait_type("speech_ended", timeout_s, since)
        return await self.wait_type("turn_report", timeout_s, since, turn_id=ended["turn_id"])

    async def wait_closed(self, timeout_s: float = 10.0) -> int | None:
        """Wait until the server closed the connection; returns the close code."""
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self.reader), timeout_s)
        return self.close_code

    def forget_events(self) -> None:
        """Drop the events received so far (long soaks: the log would grow with every turn)."""
        self.events.clear()
        self.arrival_ns.clear()
        self.audio_arrivals_ns.clear()

    def of_type(self, kind: str) -> list[Event]:
        return [e for e in self.events if e["type"] == kind]

    def errors(self) -> list[Event]:
        return self.of_type("error")

    # ------------------------------------------------------------------ leaving
    async def close(self) -> None:
        """A clean close (1000)."""
        with contextlib.suppress(Exception):
            await self.ws.close()
        with contextlib.suppress(BaseException):
            await self.reader

    def reset(self) -> None:
        """Drop the TCP connection with a reset (RST), no close frame."""
        sock = self.ws.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.ws.transport.abort()
