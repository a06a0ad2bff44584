"""Server → client events of the websocket protocol, typed: one frozen dataclass per event, a pure encoder and
a pure decoder (no I/O). The client → server half is :mod:`voice.wire.protocol`; ``docs/protocol.md`` describes
both, and ``tests/test_events.py`` checks that its tables list exactly these fields.

The server builds these and hands them to its sinks (:class:`voice.serve.outbox.Outbox` encodes them as JSON text
frames, the Realtime front translates them). Clients (``voice.client``, ``voice.talk``, the reliability probe)
decode what they receive with :func:`decode_server`, which accepts events from newer servers: fields it does
not know are ignored, and a type it does not know comes back as a :class:`voice.wire.protocol.ProtocolError` with
code ``unknown_type`` that a client may skip.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from voice.wire.protocol import BAD_JSON, BAD_MESSAGE, UNKNOWN_TYPE, ProtocolError
from voice.wire.report import LlmMetrics, TurnReport


@dataclass(frozen=True)
class Ready:
    """Answer to ``start``: the session is open."""

    TYPE: ClassVar[str] = "ready"
    session_id: str
    """This connection's conversation id (also in every ``turn_report``)."""
    protocol: int
    """Protocol version (:data:`voice.wire.protocol.PROTOCOL_VERSION`)."""
    input_sample_rate: int
    """The client's audio rate in Hz, as declared in ``start``."""
    output_sample_rate: int
    """The rate of reply audio in Hz."""


@dataclass(frozen=True)
class SpeechStarted:
    """The VAD heard speech begin. If a reply is playing, it is being interrupted (see :class:`Interrupt`)."""

    TYPE: ClassVar[str] = "speech_started"
    audio_offset_ms: float
    """Where speech began, in ms of the uploaded stream."""


@dataclass(frozen=True)
class SpeechEnded:
    """The turn is over: transcription starts (for a speculative turn its held output follows at once)."""

    TYPE: ClassVar[str] = "speech_ended"
    turn_id: int
    """Counts this session's turns from 1."""
    forced: bool
    """Ended by the utterance cap or ``end_turn``, not by silence."""
    trailing_silence_ms: float
    """The silence the server waited for, in ms."""


@dataclass(frozen=True)
class Transcript:
    """What the user said (empty: no reply follows, outcome ``no_speech``)."""

    TYPE: ClassVar[str] = "transcript"
    turn_id: int
    text: str


@dataclass(frozen=True)
class AudioStart:
    """Announces the reply audio's format, before its first binary chunk."""

    TYPE: ClassVar[str] = "audio_start"
    turn_id: int
    sample_rate: int
    """Reply audio rate in Hz."""
    chunk_ms: int
    """Length of each binary chunk in ms (the last one of a clause may be shorter)."""
    channels: int = 1
    """Always 1 (mono)."""
    format: str = "s16le"
    """Always PCM signed 16-bit little-endian."""


@dataclass(frozen=True)
class ReplyText:
    """The clause whose audio follows (sent before that clause's chunks)."""

    TYPE: ClassVar[str] = "reply_text"
    turn_id: int
    text: str


@dataclass(frozen=True)
class AudioEnd:
    """All audio of the reply was sent."""

    TYPE: ClassVar[str] = "audio_end"
    turn_id: int
    audio_ms: float
    """Length of the reply audio in ms."""


@dataclass(frozen=True)
class Interrupt:
    """Barge-in: the turn was cancelled. Drop any of its audio not yet played; none of it follows."""

    TYPE: ClassVar[str] = "interrupt"
    turn_id: int
    playback_only: bool = False
    """The reply had been sent completely and only its playback is stopped (the turn itself had ended)."""


@dataclass(frozen=True)
class Error:
    """Bad input or a failed turn (codes in ``docs/protocol.md``)."""

    TYPE: ClassVar[str] = "error"
    code: str
    message: str
    """Says what was wrong, in words."""
    fatal: bool
    """The connection closes next."""
    retry_after_ms: int | None = None
    """With ``busy``: when a place should free up, in ms (sent only then)."""

    @classmethod
    def of(cls, err: ProtocolError) -> Error:
        return cls(err.code, err.message, err.close_code is not None, err.retry_after_ms)


ServerEvent = (
    Ready | SpeechStarted | SpeechEnded | Transcript | AudioStart | ReplyText | AudioEnd | Interrupt | Error
    | TurnReport
)
"""Every server event. A turn's latency report travels as ``turn_report``: :class:`voice.wire.report.TurnReport`."""

EVENT_TYPES: dict[str, type[Any]] = {
    cls.TYPE: cls for cls in (Ready, SpeechStarted, SpeechEnded, Transcript, AudioStart, ReplyText, AudioEnd,
                              Interrupt, Error)
}
EVENT_TYPES["turn_report"] = TurnReport

_OMITTED_WHEN_NONE = {(Error, "retry_after_ms")}


def event_type(ev: ServerEvent) -> str:
    """The wire ``type`` of an event."""
    return "turn_report" if isinstance(ev, TurnReport) else ev.TYPE


def encode_server(ev: ServerEvent) -> str:
    """One server event as a JSON text frame."""
    if isinstance(ev, TurnReport):
        fields = ev.to_dict()
    else:
        fields = {
            f.name: getattr(ev, f.name)
            for f in dataclasses.fields(ev)
            if not ((type(ev), f.name) in _OMITTED_WHEN_NONE and getattr(ev, f.name) is None)
        }
    return json.dumps({"type": event_type(ev), **fields}, separators=(",", ":"))


def decode_server(text: str) -> ServerEvent | ProtocolError:
    """One text frame from the server, typed; a :class:`ProtocolError` names what was wrong with it."""
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        return ProtocolError(BAD_JSON, f"server events must be JSON objects: {e}")
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return ProtocolError(BAD_MESSAGE, f"not a server event (a JSON object with a 'type'): {text[:80]!r}")
    cls = EVENT_TYPES.get(obj["type"])
    if cls is None:
        return ProtocolError(UNKNOWN_TYPE, f"unknown server event type {obj['type']!r}")
    try:
        ev: ServerEvent = _build(cls, obj, obj["type"])
    except ValueError as e:
        return ProtocolError(BAD_MESSAGE, str(e))
    return ev


# ---------------------------------------------------------------------------- typed fields from JSON
def _build(cls: type[Any], obj: dict[str, Any], where: str) -> Any:
    """A dataclass from a JSON object: each field checked against its annotation; unknown keys ignored
    (newer servers add fields), a missing field with a default takes it."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in obj:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{where} needs a field '{f.name}'")
            continue
        values[f.name] = _value(hints[f.name], obj[f.name], f"{where}.{f.name}")
    return cls(**values)


_SCALARS: dict[Any, Callable[[Any], bool]] = {
    bool: lambda v: isinstance(v, bool),
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),
    float: lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    str: lambda v: isinstance(v, str),
}


def _value(hint: Any, value: Any, where: str) -> Any:
    """``value`` checked against ``hint`` (and an int made a float where a float is expected)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = (a for a in args if a is not type(None))
        return _value(inner, value, where)
    if hint in _SCALARS:
        if _SCALARS[hint](value):
            return float(value) if hint is float else value
    elif origin is tuple and isinstance(value, list):
        return tuple(_value(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    elif origin is dict and isinstance(value, dict):
        return {str(k): _value(args[1], v, f"{where}.{k}") for k, v in value.items()}
    elif hint is LlmMetrics and isinstance(value, dict):
        return _build(LlmMetrics, value, where)
    raise ValueError(f"{where} must be {_name(hint)}, got {value!r}")


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint)
