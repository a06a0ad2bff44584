"""The events of an OpenAI-compatible chat-completions stream, parsed: pure, no socket.

One ``data:`` payload is a :class:`Chunk` (its text, finish reason, usage, an error the server reported mid-reply,
and each token's log-probability); :func:`deltas_of` turns a chunk into the
:class:`~voice.runtime.model_api.TextDelta` s the runtime streams, one per token where the server says which tokens
spell the text. :mod:`voice.backends.llm_openai` reads the stream and uses these.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from voice.runtime.model_api import PromptInfo, TextDelta


@dataclass(frozen=True)
class Usage:
    """What the server says the prompt cost (from the stream's ``usage`` or llama.cpp's ``timings``)."""

    prompt_tokens: int
    cached_tokens: int
    """Prompt tokens served from the server's prefix cache (0 when it does not say)."""


@dataclass(frozen=True)
class Chunk:
    """One ``data:`` event of a chat-completions stream."""

    text: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    error: str | None = None
    """An error the server reported inside the stream (vLLM and llama.cpp do, mid-reply)."""
    tokens: tuple[tuple[str, float], ...] = ()
    """Each token of :attr:`text` with its natural-log probability (``choices[0].logprobs.content``); empty when
    the server sent none."""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_chunk(data: str) -> Chunk:
    """Parse one SSE ``data`` payload (not ``[DONE]``). Raises :class:`ValueError` for anything that is not
    a chat-completions chunk."""
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as e:
        raise ValueError(f"a stream event is not JSON ({e}): {data[:120]!r}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"a stream event is not a JSON object: {data[:120]!r}")
    err = obj.get("error")
    if err is not None:
        msg = err.get("message", err) if isinstance(err, dict) else err
        return Chunk(error=str(msg))
    text, finish = "", None
    tokens: tuple[tuple[str, float], ...] = ()
    choices = obj.get("choices") or []
    if not isinstance(choices, list):
        raise ValueError(f"a stream event's choices is not a list: {data[:120]!r}")
    if choices:
        choice = choices[0] if isinstance(choices[0], dict) else {}
        delta = choice.get("delta") or {}
        content = delta.get("content") if isinstance(delta, dict) else None
        text = content if isinstance(content, str) else ""
        reason = choice.get("finish_reason")
        finish = reason if isinstance(reason, str) else None
        tokens = _token_logprobs(choice.get("logprobs"))
    return Chunk(text=text, finish_reason=finish, usage=_usage(obj), tokens=tokens)


def _token_logprobs(logprobs: Any) -> tuple[tuple[str, float], ...]:
    """``choices[0].logprobs`` as (token, log-probability) pairs; empty unless every entry has both."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return ()
    pairs = []
    for entry in content:
        token = entry.get("token") if isinstance(entry, dict) else None
        lp = entry.get("logprob") if isinstance(entry, dict) else None
        if not isinstance(token, str) or not isinstance(lp, int | float) or isinstance(lp, bool):
            return ()
        pairs.append((token, float(lp)))
    return tuple(pairs)


def deltas_of(chunk: Chunk) -> list[TextDelta]:
    """The :class:`TextDelta` s of a chunk with text: one per token when its tokens spell the text, else one for
    the chunk (scored by the mean of its tokens' log-probabilities, or None when it came with none)."""
    if chunk.tokens and "".join(t for t, _ in chunk.tokens) == chunk.text:
        return [TextDelta(t, lp) for t, lp in chunk.tokens if t]
    lps = [lp for _, lp in chunk.tokens]
    return [TextDelta(chunk.text, sum(lps) / len(lps) if lps else None)]


def _usage(obj: dict[str, Any]) -> Usage | None:
    usage = obj.get("usage")
    if isinstance(usage, dict) and (prompt := _int(usage.get("prompt_tokens"))) is not None:
        details = usage.get("prompt_tokens_details")
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else None
        if cached is None and isinstance(timings := obj.get("timings"), dict):
            cached = _int(timings.get("cache_n"))
        return Usage(prompt_tokens=prompt, cached_tokens=min(cached or 0, prompt))
    timings = obj.get("timings")  # llama.cpp's server without usage: prompt_n evaluated, cache_n reused
    if isinstance(timings, dict):
        evaluated, cached = _int(timings.get("prompt_n")), _int(timings.get("cache_n"))
        if evaluated is not None and cached is not None:
            return Usage(prompt_tokens=evaluated + cached, cached_tokens=cached)
    return None


def prompt_info(usage: Usage) -> PromptInfo:
    return PromptInfo(
        prompt_tokens=usage.prompt_tokens,
        reused_tokens=usage.cached_tokens,
        evaluated_tokens=usage.prompt_tokens - usage.cached_tokens,
    )
