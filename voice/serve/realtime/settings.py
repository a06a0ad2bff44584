"""The session settings a Realtime client may change with ``session.update``, and what they mean here.

Pure: :func:`apply_update` checks a ``session`` object against what this server supports and returns new
:class:`RealtimeSettings` (or an error naming the field: the whole update is then refused, as OpenAI does);
:func:`session_config` turns settings into the session's :class:`~voice.config.config.Config`; :func:`session_object`
is the effective session as sent in ``session.created`` / ``session.updated``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.config.config import Config, ConfigError
from voice.serve.realtime import REALTIME_RATE_HZ
from voice.serve.realtime.events import RealtimeError

PCM_FORMAT: dict[str, Any] = {"type": "audio/pcm", "rate": REALTIME_RATE_HZ}


@dataclass(frozen=True)
class RealtimeSettings:
    model: str
    """What the client asked for (``?model=``); echoed back, the server's own models answer."""
    instructions: str
    server_vad: bool = True
    """False: ``turn_detection: null`` (the client commits each utterance and asks for each response)."""
    silence_ms: int | None = None
    """``silence_duration_ms``; None: the server's own end-of-turn settings."""
    threshold: float | None = None
    prefix_padding_ms: int | None = None
    interrupt_response: bool | None = None
    text_only: bool = False
    """``output_modalities: ["text"]``: replies are not synthesized."""


def _int(v: object, lo: int, hi: int) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        return None
    return v


def apply_update(
    s: RealtimeSettings, session: dict[str, Any], event_id: str | None
) -> RealtimeSettings | RealtimeError:
    """The settings after a ``session.update`` (fields left out keep their value)."""

    def bad(param: str, message: str) -> RealtimeError:
        return RealtimeError("invalid_value", message, f"session.{param}", event_id)

    kind = session.get("type", "realtime")
    if kind != "realtime":
        return bad("type", f"only 'realtime' sessions are supported, got {kind!r}")
    changes: dict[str, Any] = {}
    if "instructions" in session:
        if not isinstance(session["instructions"], str):
            return bad("instructions", "instructions must be a string")
        changes["instructions"] = session["instructions"]
    if "output_modalities" in session:
        mods = session["output_modalities"]
        if mods == ["audio"] or mods == ["audio", "text"] or mods == ["text", "audio"]:
            changes["text_only"] = False
        elif mods == ["text"]:
            changes["text_only"] = True
        else:
            return bad("output_modalities", f"output_modalities must be ['audio'] or ['text'], got {mods!r}")
    if session.get("tools"):
        return bad("tools", "tools (function calling) are not supported by this server")
    err = _audio_changes(session.get("audio"), changes)
    if err is not None:
        return bad(*err)
    return dataclasses.replace(s, **changes)


def _audio_changes(audio: Any, changes: dict[str, Any]) -> tuple[str, str] | None:
    """Checks ``session.audio`` (formats: PCM at 24 kHz only) and adds its turn detection to ``changes``;
    returns (parameter, message) for what is wrong."""
    if audio is not None and not isinstance(audio, dict):
        return "audio", "audio must be an object"
    audio = audio or {}
    for side in ("input", "output"):
        part = audio.get(side)
        if part is None:
            continue
        if not isinstance(part, dict):
            return f"audio.{side}", f"audio.{side} must be an object"
        fmt = part.get("format")
        pcm = isinstance(fmt, dict) and fmt.get("type") == "audio/pcm"
        if fmt is not None and (not pcm or fmt.get("rate", REALTIME_RATE_HZ) != REALTIME_RATE_HZ):
            return f"audio.{side}.format", f"only audio/pcm at {REALTIME_RATE_HZ} Hz is supported, got {fmt!r}"
    inp = audio.get("input") or {}
    if "turn_detection" not in inp:
        return None
    td = inp["turn_detection"]
    if td is None:
        changes["server_vad"] = False
        return None
    if not isinstance(td, dict) or td.get("type", "server_vad") not in ("server_vad", "semantic_vad"):
        return "audio.input.turn_detection", f"turn_detection must be null or server_vad, got {td!r}"
    err = _vad_changes(td, changes)
    return None if err is None else (f"audio.input.turn_detection.{err[0]}", err[1])


def _vad_changes(td: dict[str, Any], changes: dict[str, Any]) -> tuple[str, str] | None:
    changes["server_vad"] = True
    if td.get("create_response") is False:
        return "create_response", "create_response false is not supported: a turn heard by the VAD is answered"
    if "silence_duration_ms" in td:
        v = _int(td["silence_duration_ms"], 32, 10_000)
        if v is None:
            return "silence_duration_ms", f"silence_duration_ms must be 32..10000 ms, got {td['silence_duration_ms']!r}"
        changes["silence_ms"] = v
    if "prefix_padding_ms" in td:
        v = _int(td["prefix_padding_ms"], 0, 2000)
        if v is None:
            return "prefix_padding_ms", f"prefix_padding_ms must be 0..2000 ms, got {td['prefix_padding_ms']!r}"
        changes["prefix_padding_ms"] = v
    if "threshold" in td:
        t = td["threshold"]
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0.0 < t < 1.0:
            return "threshold", f"threshold must be between 0 and 1, got {t!r}"
        changes["threshold"] = float(t)
    if "interrupt_response" in td:
        if not isinstance(td["interrupt_response"], bool):
            return "interrupt_response", "interrupt_response must be true or false"
        changes["interrupt_response"] = td["interrupt_response"]
    return None


def session_config(base: Config, s: RealtimeSettings) -> Config:
    """The session's config: the server's, with the client's settings applied. Raises ConfigError."""
    vad, turn = base.vad, base.turn
    if s.silence_ms is not None:
        ms = s.silence_ms
        vad = dataclasses.replace(vad, silence_ms=ms)
        turn = dataclasses.replace(
            turn,
            complete_silence_ms=ms,
            incomplete_silence_ms=max(ms, turn.incomplete_silence_ms),
            speculate_after_ms=min(turn.speculate_after_ms, ms),
            score_after_ms=min(turn.score_after_ms, ms),
        )
    if s.threshold is not None:
        vad = dataclasses.replace(vad, threshold=s.threshold, neg_threshold=min(vad.neg_threshold, s.threshold))
    if s.prefix_padding_ms is not None:
        vad = dataclasses.replace(vad, pre_roll_ms=s.prefix_padding_ms)
    if s.interrupt_response is not None:
        vad = dataclasses.replace(vad, barge_in=s.interrupt_response)
    llm = dataclasses.replace(base.llm, system_prompt=s.instructions)
    try:
        return dataclasses.replace(base, vad=vad, turn=turn, llm=llm)
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:  # pragma: no cover - every value was checked above
        raise ConfigError(str(e)) from None


def effective_silence_ms(config: Config, turn_model: bool) -> int:
    """The silence that ends a turn (what ``silence_duration_ms`` reports): with an end-of-turn model, the
    window of a turn it scores complete."""
    return config.turn.complete_silence_ms if turn_model else config.vad.silence_ms


def session_object(session_id: str, s: RealtimeSettings, config: Config, *, turn_model: bool) -> dict[str, Any]:
    """The effective session, as in ``session.created`` / ``session.updated`` (``turn_model``: an end-of-turn
    model is loaded)."""
    vad = config.vad
    turn_detection: dict[str, Any] | None = None
    if s.server_vad:
        turn_detection = {
            "type": "server_vad",
            "threshold": vad.threshold,
            "prefix_padding_ms": vad.pre_roll_ms,
            "silence_duration_ms": effective_silence_ms(config, turn_model),
            "create_response": True,
            "interrupt_response": vad.barge_in,
            "idle_timeout_ms": None,
        }
    return {
        "type": "realtime",
        "object": "realtime.session",
        "id": session_id,
        "model": s.model,
        "output_modalities": ["text"] if s.text_only else ["audio"],
        "instructions": s.instructions,
        "audio": {
            "input": {
                "format": dict(PCM_FORMAT),
                "transcription": {"model": config.stt.model, "language": config.stt.language or None},
                "noise_reduction": None,
                "turn_detection": turn_detection,
            },
            "output": {"format": dict(PCM_FORMAT), "voice": config.tts.model, "speed": 1.0},
        },
        "max_output_tokens": config.llm.max_reply_tokens,
        "tools": [],
        "tool_choice": "auto",
    }
