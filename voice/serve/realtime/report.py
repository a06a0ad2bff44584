"""A turn's report in the OpenAI Realtime API's terms, both ways: ``response.done``'s ``usage`` and
``metadata`` (a string map: at most 16 keys of 512 characters) from a :class:`~voice.wire.report.TurnReport`, and the
partial report a client reads back from them. Pure: no I/O."""

from __future__ import annotations

import json
from typing import Any

from voice.wire.report import TurnReport


def compact_json(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def usage(report: TurnReport) -> dict[str, Any]:
    """Token usage of a turn: the prompt tokens reused from the cache are the cached tokens."""
    reused, evaluated = report.prompt_tokens_reused, report.prompt_tokens_evaluated
    generated = report.generated_tokens
    return {
        "input_tokens": reused + evaluated,
        "output_tokens": generated,
        "total_tokens": reused + evaluated + generated,
        "input_token_details": {"cached_tokens": reused, "text_tokens": reused + evaluated, "audio_tokens": 0},
        "output_token_details": {"text_tokens": generated, "audio_tokens": 0},
    }


def metadata(report: TurnReport) -> dict[str, str]:
    """The turn's latency for ``response.metadata`` (a string map: at most 16 keys, 512 characters each)."""
    out = {
        "voice.turn_id": str(report.turn_id),
        "voice.outcome": report.outcome,
        "voice.total_ms": "" if report.total_ms is None else f"{report.total_ms:g}",
        "voice.target_ms": str(report.target_ms),
        "voice.stages_ms": compact_json(report.stages_ms),
        "voice.over_budget": ",".join(report.over_budget),
        "voice.reply_audio_ms": f"{report.reply_audio_ms:g}",
        "voice.speculative": "true" if report.speculative else "false",
        "voice.llm_ttft_ms": "" if report.llm is None else f"{report.llm.ttft_ms:g}",
    }
    return {k: v[:512] for k, v in out.items()}


def report_from_metadata(response: dict[str, Any]) -> dict[str, Any]:
    """The partial turn report a Realtime client reads back from ``response.done`` (its ``metadata`` and
    ``usage``): the inverse of :func:`metadata` and :func:`usage`, for clients without ``voice.turn_report``."""
    meta = response.get("metadata") or {}
    usage = response.get("usage") or {}
    cached = (usage.get("input_token_details") or {}).get("cached_tokens")
    total = meta.get("voice.total_ms")
    return {
        "turn_id": int(meta.get("voice.turn_id") or 0),
        "outcome": meta.get("voice.outcome") or response.get("status"),
        "stages_ms": json.loads(meta.get("voice.stages_ms") or "{}"),
        "total_ms": float(total) if total else None,
        "reply_audio_ms": float(meta.get("voice.reply_audio_ms") or 0),
        "generated_tokens": usage.get("output_tokens"),
        "prompt_tokens_reused": cached,
        "prompt_tokens_evaluated": None if cached is None else int(usage.get("input_tokens") or 0) - int(cached),
    }
