"""The websocket protocol, client → server, as pure decode functions (no I/O). See ``docs/protocol.md``; the
server → client events are :mod:`voice.wire.events`.

Text frames carry JSON objects with a ``type``; binary frames carry audio as PCM s16le mono.
Decoding never raises for bad input from the network: it returns a :class:`ProtocolError` that the
server sends back as an ``error`` event (:class:`voice.wire.events.Error`), or turns into a close code when the
connection cannot go on.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

PROTOCOL_VERSION = 1
MIN_SAMPLE_RATE_HZ = 8_000
MAX_SAMPLE_RATE_HZ = 192_000


# ----------------------------------------------------------------------------- client → server
@dataclass(frozen=True)
class Start:
    """Opens the audio stream. Must be the first message."""

    sample_rate: int
    """Sample rate of the client's audio in Hz (8000..192000); the server resamples."""
    channels: int = 1
    """Only mono (1) is accepted."""
    output_sample_rate: int | None = None
    """Sample rate wanted for reply audio in Hz; ``None`` keeps the voice's native rate."""
    token: str | None = None
    """Access token, for clients that cannot set an Authorization header (browsers)."""


@dataclass(frozen=True)
class EndTurn:
    """Ends the current utterance now (push-to-talk), without waiting for the silence window."""


@dataclass(frozen=True)
class Reset:
    """Forgets the conversation history (the system prompt stays cached)."""


@dataclass(frozen=True)
class Stop:
    """The client is done: the server finishes the turn in flight, then closes (1000)."""


@dataclass(frozen=True)
class Played:
    """What the client played of a turn's reply (optional; the browser page and ``voice talk`` send it): once
    when its first sample plays, and again, with ``played_ms``, when it stops the reply on ``interrupt``."""

    turn_id: int
    """The turn whose reply this is about."""
    mouth_to_ear_ms: float | None = None
    """The client's own latency: its last voiced microphone frame → its first played sample, in ms."""
    played_ms: float | None = None
    """How much of the turn's reply audio the client had played when it stopped it, in ms. The server then
    keeps in the history the clauses that had started by that point, instead of its own estimate."""


ClientMessage = Start | EndTurn | Reset | Stop | Played


@dataclass(frozen=True)
class ProtocolError:
    """Bad input. ``close_code`` is set when the connection cannot go on."""

    code: str
    message: str
    close_code: int | None = None
    retry_after_ms: int | None = None
    """For ``busy``: when to try again (an estimate), sent as ``retry_after_ms`` in the error event."""


# Error codes sent in ``error`` events.
BAD_JSON = "bad_json"
BAD_MESSAGE = "bad_message"
UNKNOWN_TYPE = "unknown_type"
NOT_STARTED = "not_started"
ALREADY_STARTED = "already_started"
ODD_LENGTH = "odd_length"
BAD_SAMPLE_RATE = "bad_sample_rate"
UNAUTHORIZED = "unauthorized"
RATE_LIMITED = "rate_limited"
BUSY = "busy"
TIMEOUT = "timeout"
CONTEXT = "context"
INTERNAL = "internal"
SHUTTING_DOWN = "shutting_down"

# Close codes (RFC 6455 and the IANA registry).
CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_PROTOCOL_ERROR = 1002
CLOSE_INVALID_DATA = 1007
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL = 1011
CLOSE_TRY_AGAIN_LATER = 1013


def _int_field(obj: dict[str, Any], name: str, *, required: bool) -> int | ProtocolError | None:
    value = obj.get(name)
    if value is None:
        if required:
            return ProtocolError(BAD_MESSAGE, f"'{obj.get('type')}' needs an integer field '{name}'")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return ProtocolError(BAD_MESSAGE, f"field '{name}' must be an integer, got {value!r}")
    return value


def _check_rate(name: str, rate: int) -> ProtocolError | None:
    if not MIN_SAMPLE_RATE_HZ <= rate <= MAX_SAMPLE_RATE_HZ:
        return ProtocolError(
            BAD_SAMPLE_RATE,
            f"{name} {rate} Hz is outside {MIN_SAMPLE_RATE_HZ}..{MAX_SAMPLE_RATE_HZ} Hz; "
            "send the real rate of your audio, e.g. 16000",
        )
    return None


_START_FIELDS = {"type", "sample_rate", "channels", "format", "output_sample_rate", "token"}


def decode_client_text(text: str) -> ClientMessage | ProtocolError:
    """Decode one text frame from a client."""
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        return ProtocolError(BAD_JSON, f"text frames must be JSON objects: {e}")
    if not isinstance(obj, dict):
        return ProtocolError(BAD_JSON, f"text frames must be JSON objects, got {type(obj).__name__}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        return ProtocolError(BAD_MESSAGE, "every message needs a string field 'type'")
    if kind == "start":
        return _decode_start(obj)
    if kind == "played":
        return _decode_played(obj)
    simple: dict[str, ClientMessage] = {"end_turn": EndTurn(), "reset": Reset(), "stop": Stop()}
    if kind in simple:
        return simple[kind]
    return ProtocolError(
        UNKNOWN_TYPE, f"unknown message type {kind!r}; known: start, end_turn, reset, stop, played"
    )


def _decode_start(obj: dict[str, Any]) -> Start | ProtocolError:
    unknown = set(obj) - _START_FIELDS
    if unknown:
        return ProtocolError(BAD_MESSAGE, f"unknown field(s) in start: {', '.join(sorted(unknown))}")
    fmt = obj.get("format", "s16le")
    if fmt != "s16le":
        return ProtocolError(BAD_MESSAGE, f"format {fmt!r} is not supported; send PCM 's16le'")
    rate = _int_field(obj, "sample_rate", required=True)
    if isinstance(rate, ProtocolError):
        return rate
    assert rate is not None
    channels = _int_field(obj, "channels", required=False)
    if isinstance(channels, ProtocolError):
        return channels
    if channels not in (None, 1):
        return ProtocolError(BAD_MESSAGE, f"channels={channels}: send mono audio (channels=1)")
    out_rate = _int_field(obj, "output_sample_rate", required=False)
    if isinstance(out_rate, ProtocolError):
        return out_rate
    for name, r in (("sample_rate", rate), ("output_sample_rate", out_rate)):
        if r is not None and (err := _check_rate(name, r)) is not None:
            return err
    token = obj.get("token")
    if token is not None and not isinstance(token, str):
        return ProtocolError(BAD_MESSAGE, "field 'token' must be a string")
    return Start(sample_rate=rate, channels=1, output_sample_rate=out_rate, token=token)


_CLIENT_TYPES: dict[type[Any], str] = {
    Start: "start", EndTurn: "end_turn", Reset: "reset", Stop: "stop", Played: "played"
}


def encode_client(msg: ClientMessage) -> str:
    """One client message as a JSON text frame (optional fields left out when ``None``)."""
    fields = {k: v for k, v in dataclasses.asdict(msg).items() if v is not None}
    return json.dumps({"type": _CLIENT_TYPES[type(msg)], **fields}, separators=(",", ":"))


_PLAYED_FIELDS = {"type", "turn_id", "mouth_to_ear_ms", "played_ms"}


def _decode_played(obj: dict[str, Any]) -> Played | ProtocolError:
    unknown = set(obj) - _PLAYED_FIELDS
    if unknown:
        return ProtocolError(BAD_MESSAGE, f"unknown field(s) in played: {', '.join(sorted(unknown))}")
    turn_id = _int_field(obj, "turn_id", required=True)
    if isinstance(turn_id, ProtocolError):
        return turn_id
    assert turn_id is not None
    if turn_id < 1:
        return ProtocolError(BAD_MESSAGE, f"field 'turn_id' must be a turn id (1 or more), got {turn_id}")
    values: dict[str, float | None] = {}
    for name in ("mouth_to_ear_ms", "played_ms"):
        ms = obj.get(name)
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, int | float) or not 0 <= ms < 3_600_000):
            return ProtocolError(BAD_MESSAGE, f"field {name!r} must be milliseconds (0 or more), got {ms!r}")
        values[name] = None if ms is None else float(ms)
    return Played(turn_id, values["mouth_to_ear_ms"], values["played_ms"])


def check_audio_frame(data: bytes, *, started: bool) -> ProtocolError | None:
    """Validate a binary frame of PCM s16le audio."""
    if not started:
        return ProtocolError(NOT_STARTED, "send a 'start' message (with sample_rate) before audio")
    if len(data) % 2:
        return ProtocolError(
            ODD_LENGTH, f"audio frame of {len(data)} bytes: PCM s16le frames need an even byte count"
        )
    return None
