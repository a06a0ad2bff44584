"""The buffering detector (voice/bench/burst.py) on arrival lists: progressive, bursty, and undecidable."""

from __future__ import annotations

import pytest

from voice.bench.burst import BURST_RATIO, judge

MS_NS = 1_000_000
CHUNK_MS = 40.0


def arrivals(*gaps_ms: float, start_ns: int = 5_000 * MS_NS) -> list[int]:
    """Arrival times: the first at ``start_ns``, then each after the gap given."""
    out = [start_ns]
    for gap in gaps_ms:
        out.append(out[-1] + round(gap * MS_NS))
    return out


def clauses(*sizes: int, gap_ms: float, in_clause_ms: float = 0.05) -> list[int]:
    """Chunks of clauses of ``sizes`` chunks: close together inside a clause, ``gap_ms`` between clauses
    (what the server sends: each clause is synthesized, then its chunks go out at once)."""
    gaps: list[float] = []
    for k, size in enumerate(sizes):
        if k:
            gaps.append(gap_ms)
        gaps += [in_clause_ms] * (size - 1)
    return arrivals(*gaps)


def test_clauses_arriving_as_they_were_sent_are_progressive() -> None:
    got = clauses(5, 20, 20, gap_ms=700.0)  # 45 chunks of 40 ms: 1.8 s of audio, sent over ~1.4 s
    v = judge(got, 45 * CHUNK_MS, sent_spread_ms=1402.0)
    assert v.burst is False
    assert v.chunks == 45 and v.audio_ms == 1800.0
    assert v.arrival_spread_ms == pytest.approx(1400 + 42 * 0.05, abs=0.1)


def test_the_same_chunks_in_one_lump_are_a_burst() -> None:
    got = clauses(45, gap_ms=0.0, in_clause_ms=0.1)  # all 45 within 4.4 ms
    v = judge(got, 45 * CHUNK_MS, sent_spread_ms=1402.0)
    assert v.burst is True
    assert v.arrival_spread_ms == pytest.approx(4.4, abs=0.1)
    assert "buffered" in v.why and "1402" in v.why


def test_a_buffer_that_flushes_twice_is_still_a_burst_when_short() -> None:
    # Two flushes 50 ms apart of audio sent over 1.4 s: less than a quarter of either.
    got = clauses(20, 25, gap_ms=50.0)
    assert judge(got, 45 * CHUNK_MS, sent_spread_ms=1400.0).burst is True


@pytest.mark.parametrize(
    ("spread_fraction", "burst"),
    [(BURST_RATIO * 0.9, True), (BURST_RATIO * 1.1, False)],
)
def test_the_threshold_is_a_fraction_of_the_send_spread(spread_fraction: float, burst: bool) -> None:
    sent_ms = 2000.0  # the audio (4 s) is longer: the send spread is the binding comparison
    got = arrivals(*[sent_ms * spread_fraction / 9] * 9)
    assert judge(got, 4000.0, sent_spread_ms=sent_ms).burst is burst


def test_audio_arriving_over_its_own_duration_is_not_a_burst_even_if_sent_slowly() -> None:
    # The server took 4 s (a slow TTS) to send 1 s of audio, which arrived over 0.9 s: the listener hears it
    # without a gap, so nothing on the path held it back in a way that matters.
    got = arrivals(*[100.0] * 9)
    assert judge(got, 1000.0, sent_spread_ms=4000.0).burst is False


@pytest.mark.parametrize(
    ("got", "sent", "why"),
    [
        ([], 900.0, "0 chunk"),
        ([10 * MS_NS], 900.0, "1 chunk"),
        (arrivals(0.1, 0.1), None, "no send spread"),
        (arrivals(0.1, 0.1), 30.0, "within 30 ms"),  # the server itself sent it at once: one short clause
    ],
)
def test_undecidable_turns_say_why(got: list[int], sent: float | None, why: str) -> None:
    v = judge(got, 120.0, sent_spread_ms=sent)
    assert v.burst is None and why in v.why


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="arrival order"):
        judge([3, 2], 80.0, 500.0)
    with pytest.raises(ValueError, match="ratio"):
        judge([1, 2], 80.0, 500.0, ratio=1.5)
