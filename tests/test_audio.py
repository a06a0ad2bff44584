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
