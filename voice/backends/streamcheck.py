"""Does a token stream arrive as it is generated, or in one lump at the end (buffered on the way)?

A reverse proxy that buffers responses, or compression of ``text/event-stream``, holds a serving engine's
token stream back and releases it all at once: nothing is seen until everything is done, so the TTFT the
user gets is the whole generation time, while every server-side number looks fine. The sign is in the
arrival times alone: after a long wait, (almost) every token arrives within a few milliseconds. A real
stream spreads its tokens over the generation (a decode step per token, milliseconds each even on a GPU).

Pure functions over arrival times (monotonic ns); the caller measures them and logs the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BufferingRule:
    """When a stream counts as buffered: at least ``min_tokens`` tokens, at least ``burst_share`` of them in
    one burst (arrivals all within ``burst_window_ms``), and the wait before that burst at least
    ``min_wait_ratio`` times the burst's own length and at least ``min_wait_ms``."""

    min_tokens: int = 8
    """Shorter streams say too little (a one-clause reply may fit in one network packet)."""
    burst_window_ms: float = 5.0
    """Tokens arriving this close together came in one lump: engines take a few ms per decode step even
    on a GPU, while a released buffer is parsed in microseconds per token. A window rather than a gap
    between neighbours, so one scheduler hiccup while a lump is parsed does not split it."""
    burst_share: float = 0.8
    min_wait_ratio: float = 4.0
    min_wait_ms: float = 20.0


@dataclass(frozen=True)
class StreamShape:
    """How the tokens of one stream arrived (durations in ms from the request, or between arrivals)."""

    n_tokens: int
    ttft_ms: float
    """Request sent → first token arrived."""
    spread_ms: float
    """First token → last token arrived."""
    burst_tokens: int
    """Tokens in the largest burst (consecutive arrivals within ``burst_window_ms``)."""
    burst_ms: float
    """How long that burst lasted, first to last arrival."""
    wait_ms: float
    """Request sent → the burst's first token."""
    buffered: bool
    """The rule's verdict: the stream looks held back and released at once."""


def stream_shape(start_ns: int, arrivals_ns: Sequence[int], rule: BufferingRule = BufferingRule()) -> StreamShape:
    """The shape of a stream from the request time and each token's arrival time (monotonic ns, in order)."""
    n = len(arrivals_ns)
    if n == 0:
        return StreamShape(0, 0.0, 0.0, 0, 0.0, 0.0, False)
    window_ns = rule.burst_window_ms * 1e6
    best_start, best_len = 0, 1
    first = 0
    for last in range(n):  # the longest run of arrivals spanning at most the window (two pointers)
        while arrivals_ns[last] - arrivals_ns[first] > window_ns:
            first += 1
        if last - first + 1 > best_len:
            best_start, best_len = first, last - first + 1
    burst_ms = (arrivals_ns[best_start + best_len - 1] - arrivals_ns[best_start]) / 1e6
    wait_ms = (arrivals_ns[best_start] - start_ns) / 1e6
    buffered = (
        n >= rule.min_tokens
        and best_len >= rule.burst_share * n
        and wait_ms >= rule.min_wait_ms
        and wait_ms >= rule.min_wait_ratio * burst_ms
    )
    return StreamShape(
        n_tokens=n,
        ttft_ms=round((arrivals_ns[0] - start_ns) / 1e6, 3),
        spread_ms=round((arrivals_ns[-1] - arrivals_ns[0]) / 1e6, 3),
        burst_tokens=best_len,
        burst_ms=round(burst_ms, 3),
        wait_ms=round(wait_ms, 3),
        buffered=buffered,
    )


def buffering_warning(shape: StreamShape, source: str) -> str:
    """The log line for a stream that looks buffered: what was seen and what to check."""
    return (
        f"the token stream from {source} looks buffered: {shape.burst_tokens} of {shape.n_tokens} tokens "
        f"arrived within {shape.burst_ms:.1f} ms after a wait of {shape.wait_ms:.0f} ms, so the TTFT users get "
        "is the whole generation time. Something between here and the server holds the stream back: check "
        "a reverse proxy's response buffering (nginx: `proxy_buffering off;` for this location, or the server "
        "sending `X-Accel-Buffering: no`), compression of text/event-stream (gzip/brotli on the proxy or "
        "the server), and any API gateway or load balancer that buffers responses"
    )
