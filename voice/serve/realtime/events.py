"""Realtime client events, decoded from text frames. Pure: no I/O, never raises for bad network input.

Each supported client event becomes a frozen dataclass; anything else becomes a :class:`RealtimeError` that
the connection sends back as a non-fatal ``error`` event (the connection stays open).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: OpenAI's cap on one ``input_audio_buffer.append`` (base64 characters).
MAX_APPEND_CHARS = 15 * 1024 * 1024


@dataclass(frozen=True)
class RealtimeError:
    """A fault to report as an ``error`` event: ``type`` is ``invalid_request_error`` for client faults."""

    code: str
    message: str
    param: str | None = None
    event_id: str | None = None
    """The client event that caused it (its ``event_id``), when it had one."""
    type: str = "invalid_request_error"


@dataclass(frozen=True)
class SessionUpdate:
    session: dict[str, Any]
    event_id: str | None = None


@dataclass(frozen=True)
class AudioAppend:
    pcm: bytes
    """PCM s16le mono at 24 kHz, decoded from base64 (an even number of bytes)."""
    event_id: str | None = None


@dataclass(frozen=True)
class AudioCommit:
    event_id: str | None = None


@dataclass(frozen=True)
class AudioClear:
    event_id: str | None = None


@dataclass(frozen=True)
class ResponseCreate:
    event_id: str | None = None


@dataclass(frozen=True)
class ResponseCancel:
    response_id: str | None = None
    event_id: str | None = None


@dataclass(frozen=True)
class ItemCreate:
    """A text message added to the conversation (``input_text`` / ``text`` / ``output_text`` parts)."""

    role: str
    """``user``, ``assistant`` or ``system``."""
    text: str
    item_id: str | None = None
    event_id: str | None = None


@dataclass(frozen=True)
class ItemTruncate:
    """The client played only ``audio_end_ms`` of an assistant item's audio (barge-in)."""

    item_id: str
    content_index: int
    audio_end_ms: int
    event_id: str | None = None


@dataclass(frozen=True)
class Ignored:
    """A known event that needs no answer here (``output_audio_buffer.clear`` is for WebRTC only)."""

    type: str
    event_id: str | None = None


ClientEvent = (
    SessionUpdate
    | AudioAppend
    | AudioCommit
    | AudioClear
    | ResponseCreate
    | ResponseCancel
    | ItemCreate
    | ItemTruncate
    | Ignored
)

SUPPORTED = (
    "session.update, input_audio_buffer.append, input_audio_buffer.commit, input_audio_buffer.clear, "
    "response.create, response.cancel, conversation.item.create, conversation.item.truncate"
)


def _bad(message: str, param: str | None, event_id: str | None, code: str = "invalid_value") -> RealtimeError:
    return RealtimeError(code, message, param, event_id)


def decode_client_event(frame: str | bytes) -> ClientEvent | RealtimeError:
    """Decode one frame from a Realtime client."""
    if isinstance(frame, bytes):
        return RealtimeError(
            "binary_frame_not_supported",
            "binary frames are not part of the Realtime protocol: send audio as base64 in "
            "input_audio_buffer.append",
        )
    try:
        obj = json.loads(frame)
    except (json.JSONDecodeError, RecursionError) as e:
        return RealtimeError("invalid_json", f"events must be JSON objects: {e}")
    if not isinstance(obj, dict):
        return RealtimeError("invalid_json", f"events must be JSON objects, got {type(obj).__name__}")
    raw_id = obj.get("event_id")
    event_id = raw_id if isinstance(raw_id, str) else None
    kind = obj.get("type")
    if not isinstance(kind, str):
        return _bad("every event needs a string field 'type'", "type", event_id, "missing_required_parameter")
    decode = _DECODERS.get(kind)
    if decode is not None:
        return decode(obj, event_id)
    return RealtimeError(
        "unsupported_event",
        f"event type {kind!r} is not supported by this server; supported: {SUPPORTED}",
        "type",
        event_id,
    )


def _decode_append(audio: object, event_id: str | None) -> AudioAppend | RealtimeError:
    if not isinstance(audio, str):
        return _bad("input_audio_buffer.append needs a base64 string 'audio'", "audio", event_id,
                    "missing_required_parameter")
    if len(audio) > MAX_APPEND_CHARS:
        return _bad(f"'audio' is {len(audio)} base64 characters; at most {MAX_APPEND_CHARS}", "audio", event_id)
    try:
        pcm = base64.b64decode(audio, validate=True)
    except (binascii.Error, ValueError) as e:
        return _bad(f"'audio' is not valid base64: {e}", "audio", event_id)
    if len(pcm) % 2:
        return _bad(f"'audio' decodes to {len(pcm)} bytes: PCM16 needs an even byte count", "audio", event_id)
    return AudioAppend(pcm, event_id)


_TEXT_PARTS = {"input_text", "text", "output_text"}


def _decode_item(item: object, event_id: str | None) -> ItemCreate | RealtimeError:
    if not isinstance(item, dict):
        return _bad("conversation.item.create needs an object 'item'", "item", event_id, "missing_required_parameter")
    if item.get("type") != "message":
        return _bad(f"only items of type 'message' are supported, got {item.get('type')!r}", "item.type", event_id)
    role = item.get("role")
    if role not in ("user", "assistant", "system"):
        return _bad(f"item.role must be user, assistant or system, got {role!r}", "item.role", event_id)
    content = item.get("content")
    if not isinstance(content, list) or not content:
        return _bad("item.content must be a non-empty list of text parts", "item.content", event_id)
    texts: list[str] = []
    for i, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in _TEXT_PARTS or not isinstance(part.get("text"), str):
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            return _bad(
                f"item.content[{i}] must be a text part (input_text/text/output_text with 'text'), got {kind!r}; "
                "send audio with input_audio_buffer.append",
                f"item.content[{i}]",
                event_id,
            )
        texts.append(part["text"])
    raw = item.get("id")
    return ItemCreate(str(role), " ".join(t.strip() for t in texts).strip(), raw if isinstance(raw, str) else None,
                      event_id)


def _decode_truncate(obj: dict[str, Any], event_id: str | None) -> ItemTruncate | RealtimeError:
    item_id = obj.get("item_id")
    if not isinstance(item_id, str):
        return _bad("conversation.item.truncate needs a string 'item_id'", "item_id", event_id,
                    "missing_required_parameter")
    values: list[int] = []
    for name in ("content_index", "audio_end_ms"):
        v = obj.get(name, 0 if name == "content_index" else None)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            return _bad(f"'{name}' must be an integer of 0 or more, got {v!r}", name, event_id)
        values.append(v)
    return ItemTruncate(item_id, values[0], values[1], event_id)


def _decode_session_update(obj: dict[str, Any], event_id: str | None) -> SessionUpdate | RealtimeError:
    """``session.update``: its ``session`` object, checked later against what this server supports."""
    session = obj.get("session")
    if not isinstance(session, dict):
        return _bad("session.update needs an object 'session'", "session", event_id, "missing_required_parameter")
    return SessionUpdate(session, event_id)


def _decode_cancel(obj: dict[str, Any], event_id: str | None) -> ResponseCancel:
    """``response.cancel``, for one response or (no id) the one in progress."""
    rid = obj.get("response_id")
    return ResponseCancel(rid if isinstance(rid, str) else None, event_id)


#: The decoder of each client event type this server supports (``output_audio_buffer.clear`` is accepted and
#: ignored: it is for WebRTC clients).
_DECODERS: dict[str, Callable[[dict[str, Any], str | None], ClientEvent | RealtimeError]] = {
    "session.update": _decode_session_update,
    "input_audio_buffer.append": lambda obj, event_id: _decode_append(obj.get("audio"), event_id),
    "input_audio_buffer.commit": lambda _obj, event_id: AudioCommit(event_id),
    "input_audio_buffer.clear": lambda _obj, event_id: AudioClear(event_id),
    "response.create": lambda _obj, event_id: ResponseCreate(event_id),
    "response.cancel": _decode_cancel,
    "conversation.item.create": lambda obj, event_id: _decode_item(obj.get("item"), event_id),
    "conversation.item.truncate": _decode_truncate,
    "output_audio_buffer.clear": lambda _obj, event_id: Ignored("output_audio_buffer.clear", event_id),
}
