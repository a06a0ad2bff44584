"""The Wyoming wire format, decoded without I/O (sans-I/O, like websockets' protocol core).

An event is a JSON header line ``{"type", "data"?, "data_length"?, "payload_length"?, "version"?}\\n``,
followed by ``data_length`` bytes of JSON (merged into ``data``) and ``payload_length`` bytes of payload
(PCM audio). The ``wyoming`` package's own reader returns ``None`` on anything malformed (the connection
just ends) and reads any announced length into memory; this decoder bounds every event to
``max_event_bytes`` and says what was wrong, so the server can answer with an ``error`` event.

Writing uses the ``wyoming`` package (:func:`wyoming.event.async_write_event`, :func:`write_event`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from wyoming.event import Event


@dataclass(frozen=True)
class FramingError:
    """Bytes that are not a Wyoming event. ``fatal``: the stream cannot be resynchronised (close it)."""

    message: str
    fatal: bool


def _length(header: dict[str, Any], key: str) -> int | str:
    value = header.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"{key} must be a non-negative integer, got {value!r}"
    return value


class FrameDecoder:
    """Feed bytes with :meth:`receive`; it returns the events (and framing errors) now complete, in order.

    A header line that is not a JSON object with a string ``type`` is an error but not fatal: the next
    line starts afresh. An event over ``max_event_bytes``, a bad length, or data that is not a JSON object
    is fatal (the bytes that follow cannot be told apart from the next event), and so is anything after it.
    """

    def __init__(self, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self._buf = bytearray()
        self._header: dict[str, Any] | None = None
        self._data_len = 0
        self._payload_len = 0
        self.broken = False

    def receive(self, data: bytes) -> list[Event | FramingError]:
        if self.broken:
            return []
        self._buf += data
        out: list[Event | FramingError] = []
        while not self.broken:
            item = self._next()
            if item is None:
                break
            out.append(item)
        return out

    def _fatal(self, message: str) -> FramingError:
        self.broken = True
        self._buf.clear()
        return FramingError(message, fatal=True)

    def _next(self) -> Event | FramingError | None:
        while self._header is None:
            end = self._buf.find(b"\n")
            if end < 0:
                if len(self._buf) > self.max_event_bytes:
                    return self._fatal(
                        f"no end of line in the first {self.max_event_bytes} bytes of an event header"
                    )
                return None
            line = bytes(self._buf[:end])
            del self._buf[: end + 1]
            if not line.strip():
                continue  # blank lines between events are harmless
            error = self._read_header(line)
            if error is not None:
                return error
        assert self._header is not None
        need = self._data_len + self._payload_len
        if len(self._buf) < need:
            return None
        header, self._header = self._header, None
        data: dict[str, Any] = header.get("data") or {}
        if self._data_len:
            try:
                extra = json.loads(bytes(self._buf[: self._data_len]))
            except ValueError as e:
                return self._fatal(f"the data of a {header['type']!r} event is not JSON: {e}")
            if not isinstance(extra, dict):
                return self._fatal(f"the data of a {header['type']!r} event is not a JSON object")
            data = {**data, **extra}
        payload = bytes(self._buf[self._data_len : need]) if self._payload_len else None
        del self._buf[:need]
        return Event(type=header["type"], data=data, payload=payload)

    def _read_header(self, line: bytes) -> FramingError | None:
        shown = line[:60].decode("utf-8", "replace")
        try:
            header = json.loads(line)
        except (ValueError, RecursionError):
            return FramingError(f"not a Wyoming event (the header line is not JSON): {shown!r}", fatal=False)
        if not isinstance(header, dict) or not isinstance(header.get("type"), str) or not header["type"]:
            return FramingError(
                f'not a Wyoming event (no "type" string in the header): {shown!r}', fatal=False
            )
        if header.get("data") is not None and not isinstance(header["data"], dict):
            return FramingError(f'the "data" of a {header["type"]!r} event is not a JSON object', fatal=False)
        lengths = [_length(header, "data_length"), _length(header, "payload_length")]
        for n in lengths:
            if isinstance(n, str):
                return self._fatal(n)
        data_len, payload_len = int(lengths[0]), int(lengths[1])
        if len(line) + data_len + payload_len > self.max_event_bytes:
            return self._fatal(
                f"a {header['type']!r} event of {len(line) + data_len + payload_len} bytes is larger than "
                f"the limit of {self.max_event_bytes} bytes ([wyoming] max_event_bytes)"
            )
        self._header, self._data_len, self._payload_len = header, data_len, payload_len
        return None
