"""Trimming the silent lead of the reply's first audio."""

from __future__ import annotations

import numpy as np

from voice.audio import trim_lead_silence

RATE_HZ = 22_050


def test_the_silent_lead_goes_and_the_onset_stays() -> None:
    lead = np.zeros(int(0.05 * RATE_HZ), np.int16)
    hiss = np.full(int(0.02 * RATE_HZ), 100, np.int16)  # 0.3 % of full scale: silence still
    voice = (np.sin(np.arange(RATE_HZ // 10) / 5) * 8000).astype(np.int16)
    pcm = np.concatenate([lead, hiss, voice])
    out = trim_lead_silence(pcm, RATE_HZ, keep_ms=10)
    keep = int(RATE_HZ * 0.01)
    first = int(np.nonzero(np.abs(voice) > 327)[0][0])  # the first sample over 1 % of full scale
    assert len(out) == len(voice) - first + keep
    assert np.array_equal(out[keep:], voice[first:])


def test_silence_alone_and_no_lead_are_left_as_they_are() -> None:
    quiet = np.zeros(1000, np.int16)
    assert trim_lead_silence(quiet, RATE_HZ, keep_ms=10) is quiet
    loud = np.full(1000, 20000, np.int16)
    assert len(trim_lead_silence(loud, RATE_HZ, keep_ms=10)) == 1000


def test_the_sessions_resampler_holds_back_little_audio() -> None:
    """What a 24/48 kHz client's audio waits in the streaming resampler is added to every endpoint."""
    import soxr

    from voice.turn.listener import RESAMPLE_QUALITY

    for rate in (24_000, 48_000):
        stream = soxr.ResampleStream(rate, 16_000, 1, dtype="float32", quality=RESAMPLE_QUALITY)
        chunk = rate // 50  # 20 ms
        out = sum(len(stream.resample_chunk(np.zeros(chunk, np.float32))) for _ in range(50))
        held_back_ms = (16_000 - out) / 16
        assert held_back_ms <= 8.0, (rate, held_back_ms)
