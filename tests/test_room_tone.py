"""After a clip, the bench's client goes on with the clip's own room tone, as a room's noise goes on after the
speaker stops; a noise bed cut to digital silence would put the end of speech where the noise stops."""

from __future__ import annotations

import numpy as np

from tests.conftest import tone
from voice.bench.clips import room_tone
from voice.bench.mix.mixing import HARD_MIXES, ROOM_AFTER_MS, apply_mix
from voice.client import SpokenClip
from voice.turn.endpoint import level_db

RATE = 16_000


def noisy_clip(seed: int = 3) -> tuple[np.ndarray, int, int, np.ndarray]:
    """0.6 s of noise, 0.8 s of 'speech', 0.6 s of noise, with a chime-like beep 300 ms before the speech and a
    loud 'breath' 200 ms after it; returns (audio, speech start, speech end, the noise alone)."""
    rng = np.random.default_rng(seed)
    hum = 0.01 * np.sin(2 * np.pi * 97.0 * np.arange(2 * RATE) / RATE)  # a hum shows any seam in the loop
    noise = (hum + 0.0002 * rng.standard_normal(2 * RATE)).astype(np.float32)
    audio = noise.copy()
    start, end = int(0.6 * RATE), int(1.4 * RATE)
    audio[start:end] += tone(0.8)
    audio[start - int(0.35 * RATE) : start - int(0.3 * RATE)] += tone(0.05, amplitude=0.5)
    breath = int(1.6 * RATE)
    audio[breath : breath + int(0.1 * RATE)] += (0.1 * rng.standard_normal(int(0.1 * RATE))).astype(np.float32)
    return audio, start, end, noise


def test_room_tone_is_the_clips_background_without_its_transients() -> None:
    audio, start, end, noise = noisy_clip()
    loop = room_tone(audio, RATE, start, end)
    assert loop is not None and len(loop) >= int(0.1 * RATE)
    # As loud as the noise, not as the beep or the breath (which are 14+ dB louder).
    assert abs(level_db(loop) - level_db(noise)) < 1.5
    # Seamless: the step from its last sample to its first is like any step inside it.
    steps = np.abs(np.diff(np.concatenate([loop, loop[:1]])))
    assert steps[-1] <= np.percentile(steps, 99)


def test_no_room_tone_from_digital_silence_or_a_clip_with_no_room() -> None:
    audio = np.concatenate([np.zeros(RATE, np.float32), tone(0.5), np.zeros(RATE, np.float32)])
    assert room_tone(audio, RATE, RATE, RATE + RATE // 2) is None
    tight = tone(1.0)
    assert room_tone(tight, RATE, 160, len(tight) - 160) is None


def test_the_client_goes_on_with_the_room_tone_after_the_clip() -> None:
    audio, start, end, _ = noisy_clip()
    loop = room_tone(audio, RATE, start, end)
    assert loop is not None
    clip = SpokenClip(audio, RATE, end, loop)
    # Across the end of the clip: its last samples, then the loop from its start, then round again.
    across = clip.chunk(len(audio) - 100, 100 + 2 * len(loop))
    assert np.array_equal(across[:100], audio[-100:])
    assert np.array_equal(across[100 : 100 + len(loop)], loop)
    assert np.array_equal(across[100 + len(loop) :], loop)
    # Mid-way through the loop, it goes on where it was.
    assert np.array_equal(clip.chunk(len(audio) + 37, 10), loop[37:47])
    # Without room tone: digital silence, as before.
    assert not np.any(SpokenClip(audio, RATE, end).chunk(len(audio), 320))


def test_a_mixed_clip_keeps_its_background_after_the_speech() -> None:
    clean = np.concatenate([np.zeros(RATE // 2, np.float32), tone(1.0)])  # speech to the very end of the file
    for mix in HARD_MIXES:
        mixed, end = apply_mix(clean, RATE // 2, len(clean), mix)
        assert len(mixed) - end >= ROOM_AFTER_MS * RATE // 1000
        if mix.noise_snr_db is not None or mix.music_snr_db is not None:
            assert room_tone(mixed, RATE, RATE // 2, end) is not None, mix.name
