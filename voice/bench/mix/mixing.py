"""Hard clips: a recording with a known speech end, mixed with what real recordings carry around speech.

Each :class:`Mix` is one recipe — an onset chime before the speech, a click or a breath after it, steady
noise at a given SNR, a music bed, a quiet speaker — applied to a clean recording whose speech end is known.
Used by the tests (known answers) and by ``voice bench mix`` (hard clips from ``../shared/speech`` for the
done-criterion of the speech-end reference). Deterministic: every random part has a seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RATE_HZ = 16_000
ROOM_AFTER_MS = 500
"""The least audio a mixed clip keeps after its speech end (its background goes on)."""


@dataclass(frozen=True)
class Mix:
    """One recipe. Times in ms relative to the clean clip; levels in dB."""

    name: str
    chime_before_ms: float | None = None
    """A 2-tone chime (880/1320 Hz, 150 ms) ending this long before the speech starts."""
    click_after_ms: float | None = None
    """A 3 ms click this long after the speech end."""
    breath_after_ms: float | None = None
    """A 250 ms breath (band-passed noise, −25 dB re the speech RMS) starting this long after the speech end."""
    noise_snr_db: float | None = None
    """Steady pink-ish noise over the whole clip, at this SNR against the speech's RMS."""
    music_snr_db: float | None = None
    """A steady chord bed (three tones with a slow tremolo) over the whole clip, at this SNR."""
    gain_db: float = 0.0
    """Speech level change (a quiet speaker: −30)."""
    seed: int = 0


HARD_MIXES: tuple[Mix, ...] = (
    Mix("chime", chime_before_ms=300),
    Mix("click", click_after_ms=150),
    Mix("breath", breath_after_ms=200),
    Mix("noise15", noise_snr_db=15, seed=1),
    Mix("noise10", noise_snr_db=10, seed=2),
    Mix("music15", music_snr_db=15),
    Mix("quiet", gain_db=-30, noise_snr_db=20, seed=3),
    Mix("all", chime_before_ms=300, click_after_ms=350, noise_snr_db=15, gain_db=-10, seed=4),
)


def _speech_rms(clean: np.ndarray, first: int, last: int) -> float:
    part = clean[first:last].astype(np.float64)
    return float(np.sqrt(np.mean(part**2))) if len(part) else 0.0


def _chime(rate_hz: int) -> np.ndarray:
    t = np.arange(int(0.15 * rate_hz)) / rate_hz
    env = np.exp(-t / 0.05)
    return (0.3 * env * (np.sin(2 * np.pi * 880 * t) + 0.5 * np.sin(2 * np.pi * 1320 * t))).astype(np.float32)


def _noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS noise with a -3 dB/octave-ish tilt (white noise through a one-pole low-pass, plus white)."""
    white = rng.standard_normal(n)
    low = np.empty(n)
    acc = 0.0
    for i, x in enumerate(white):  # one-pole low-pass, a = 0.95
        acc = 0.95 * acc + 0.05 * x
        low[i] = acc
    mixed = low / (np.std(low) + 1e-12) + 0.5 * rng.standard_normal(n)
    return mixed / (np.std(mixed) + 1e-12)


def _music(n: int, rate_hz: int) -> np.ndarray:
    t = np.arange(n) / rate_hz
    chord = sum(np.sin(2 * np.pi * f * t) for f in (220.0, 277.2, 329.6))
    bed = chord * (1 + 0.3 * np.sin(2 * np.pi * 0.5 * t))
    return np.asarray(bed / (np.std(bed) + 1e-12))


def _breath(rate_hz: int, rng: np.random.Generator) -> np.ndarray:
    n = int(0.25 * rate_hz)
    x = np.diff(rng.standard_normal(n + 1))  # high-passed noise
    env = np.sin(np.pi * np.arange(n) / n) ** 2
    return np.asarray(x * env / (np.std(x * env) + 1e-12))


def apply_mix(
    clean: np.ndarray, speech_start: int, speech_end: int, mix: Mix, rate_hz: int = RATE_HZ
) -> tuple[np.ndarray, int]:
    """``clean`` (float32 mono, speech in ``[speech_start, speech_end)``) mixed by ``mix``; returns the
    mixed clip and the speech end's sample in it (shifted when the chime needs room before the speech)."""
    if not 0 <= speech_start < speech_end <= len(clean):
        raise ValueError(f"speech [{speech_start}, {speech_end}) is not inside a clip of {len(clean)} samples")
    rng = np.random.default_rng(mix.seed)
    ms = rate_hz // 1000
    speech = clean.astype(np.float64) * 10 ** (mix.gain_db / 20)
    rms = _speech_rms(speech, speech_start, speech_end)
    lead = 0
    if mix.chime_before_ms is not None:
        chime = _chime(rate_hz)
        need = len(chime) + int(mix.chime_before_ms * ms) + 100 * ms
        lead = max(0, need - speech_start)
    # A room goes on after the speech: at least ROOM_AFTER_MS of the mix's background follows it, so that the
    # client can go on with it (voice.bench.clips.room_tone) instead of cutting a noise bed to digital silence.
    tail = max(0, speech_end + ROOM_AFTER_MS * ms - len(clean))
    for after in (mix.click_after_ms, mix.breath_after_ms):
        if after is not None:
            tail = max(tail, speech_end + int((after + 400) * ms) - len(clean))
    out = np.concatenate([np.zeros(lead), speech, np.zeros(tail)])
    start, end = speech_start + lead, speech_end + lead
    if mix.chime_before_ms is not None:
        chime = _chime(rate_hz) * max(rms, 1e-4) / 0.1
        at = start - int(mix.chime_before_ms * ms) - len(chime)
        out[at : at + len(chime)] += chime
    if mix.click_after_ms is not None:
        at = end + int(mix.click_after_ms * ms)
        click = np.array([1.0, -0.8, 0.6, -0.4, 0.2] * 10)[: 3 * ms] * min(0.9, 8 * max(rms, 1e-4))
        out[at : at + len(click)] += click
    if mix.breath_after_ms is not None:
        at = end + int(mix.breath_after_ms * ms)
        breath = _breath(rate_hz, rng) * rms * 10 ** (-25 / 20)
        out[at : at + len(breath)] += breath
    if mix.noise_snr_db is not None:
        out += _noise(len(out), rng) * rms * 10 ** (-mix.noise_snr_db / 20)
    if mix.music_snr_db is not None:
        out += _music(len(out), rate_hz) * rms * 10 ** (-mix.music_snr_db / 20)
    return np.clip(out, -1.0, 1.0).astype(np.float32), end
