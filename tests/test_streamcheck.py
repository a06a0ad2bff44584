"""The token-stream buffering detector, on arrival times given as data."""

from __future__ import annotations

import pytest

from voice.backends.streamcheck import BufferingRule, buffering_warning, stream_shape

MS = 1_000_000  # ns


def arrivals(first_ms: float, gaps_ms: list[float]) -> list[int]:
    out = [int(first_ms * MS)]
    for g in gaps_ms:
        out.append(out[-1] + int(g * MS))
    return out


def test_a_progressive_stream_is_not_buffered() -> None:
    shape = stream_shape(0, arrivals(120, [9.0] * 29))  # 30 tokens at ~110 tok/s
    assert not shape.buffered
    assert shape.n_tokens == 30
    assert shape.ttft_ms == 120
    assert shape.spread_ms == pytest.approx(29 * 9.0)
    assert shape.burst_tokens == 1


def test_everything_at_the_end_after_a_long_wait_is_buffered() -> None:
    shape = stream_shape(0, arrivals(400, [0.05] * 29))
    assert shape.buffered
    assert shape.burst_tokens == 30
    assert shape.wait_ms == 400
    assert shape.burst_ms == pytest.approx(29 * 0.05, abs=0.01)


def test_a_stream_released_in_one_lump_after_a_few_real_tokens_is_buffered() -> None:
    # Two tokens streamed, then the proxy's buffer held the other 28 until the end.
    shape = stream_shape(0, arrivals(100, [10.0, 300.0] + [0.02] * 27))
    assert shape.buffered
    assert shape.burst_tokens == 28
    assert shape.wait_ms == pytest.approx(410)


def test_short_replies_say_too_little() -> None:
    assert not stream_shape(0, arrivals(400, [0.05] * 5)).buffered  # 6 tokens < min_tokens


def test_a_fast_engine_with_a_short_ttft_is_not_flagged() -> None:
    # 20 tokens at 2 ms each (a fast engine on a GPU) after 6 ms.
    assert not stream_shape(0, arrivals(6, [2.0] * 19)).buffered
    # Even at 0.5 ms per token the window holds too few of them.
    assert not stream_shape(0, arrivals(30, [0.5] * 39)).buffered


def test_a_hiccup_while_the_lump_is_parsed_does_not_hide_it() -> None:
    # 12 tokens released at once; the parsing thread lost the core for 3 ms after the fifth.
    shape = stream_shape(0, arrivals(300, [0.02] * 4 + [3.0] + [0.02] * 6))
    assert shape.buffered and shape.burst_tokens == 12


def test_bursty_but_spread_streams_are_not_flagged() -> None:
    # Tokens in pairs (two per network read), pairs 20 ms apart: no burst holds most tokens.
    gaps = [0.1, 20.0] * 10
    assert not stream_shape(0, arrivals(50, gaps[:-1])).buffered


def test_the_rule_is_adjustable() -> None:
    times = arrivals(400, [0.05] * 29)
    assert not stream_shape(0, times, BufferingRule(min_tokens=50)).buffered
    assert not stream_shape(0, times, BufferingRule(min_wait_ms=500)).buffered


def test_an_empty_stream() -> None:
    shape = stream_shape(5, [])
    assert shape.n_tokens == 0 and not shape.buffered


def test_the_warning_says_what_to_check() -> None:
    msg = buffering_warning(stream_shape(0, arrivals(400, [0.05] * 29)), "the LLM server at http://x/v1")
    assert "30 of 30 tokens" in msg and "400 ms" in msg and "http://x/v1" in msg
    for what in ("proxy_buffering off", "X-Accel-Buffering: no", "compression"):
        assert what in msg
