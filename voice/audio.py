"""Audio helpers: loading files, converting formats, and finding where speech ends in a recording."""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soxr

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")


class AudioFileError(ValueError):
    """A recording that cannot be read; the message names the file."""


def load_audio(path: Path, rate_hz: int = 16_000) -> np.ndarray:
    """Read a WAV/FLAC/OGG file (any rate, mono or stereo) as float32 mono at ``rate_hz``."""
    import soundfile

    try:
        data, file_rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except Exception as e:  # soundfile raises several types
        raise AudioFileError(f"cannot read audio file {path}: {e}") from None
    mono: np.ndarray = data.mean(axis=1).astype(np.float32)
    if file_rate != rate_hz:
        mono = np.asarray(soxr.resample(mono, file_rate, rate_hz), dtype=np.float32)
    return mono


def float_to_pcm16(audio: np.ndarray) -> bytes:
    pcm: bytes = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    return pcm


def pcm16_to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


def write_wav(path: Path, pcm: bytes, rate_hz: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate_hz)
        w.writeframes(pcm)


@dataclass(frozen=True)
class EnergyAnalysis:
    """Where speech is in a clip, by short-time energy (10 ms windows)."""

    first_voiced_sample: int
    last_voiced_sample: int
    threshold_db: float
    noise_floor_db: float
    peak_db: float
    ignored_bursts: int = 0
    """Short isolated bursts (clicks, taps) left out, when ``min_segment_ms`` asked for it."""

    METHOD = (
        "speech end = end of the last 10 ms window whose RMS is above max(noise floor + 12 dB, peak - 40 dB), "
        "noise floor = 10th and peak = 99th percentile of window RMS in dBFS"
    )
    BURST_METHOD = (
        "; voiced windows closer than {bridge:g} ms are joined into stretches, and a stretch with under "
        "{min_segment:g} ms of voiced windows (a click, a tap, a breath) is ignored unless nothing longer is voiced"
    )


def _drop_bursts(voiced: np.ndarray, min_windows: int, bridge_windows: int) -> tuple[np.ndarray, int]:
    """Voiced window indices without stretches of fewer than ``min_windows`` voiced windows (stretches are
    split where consecutive voiced windows are more than ``bridge_windows`` apart)."""
    splits = np.nonzero(np.diff(voiced) > bridge_windows)[0] + 1
    segments = np.split(voiced, splits)
    kept = [seg for seg in segments if len(seg) >= min_windows]
    if not kept:
        kept = [max(segments, key=len)]
    return np.concatenate(kept), len(segments) - len(kept)


def analyse_speech(
    audio: np.ndarray,
    rate_hz: int,
    window_ms: float = 10.0,
    *,
    min_segment_ms: float = 0.0,
    bridge_ms: float = 150.0,
) -> EnergyAnalysis:
    """Find the first and last voiced samples of a clip from its energy, independent of any VAD model.

    ``min_segment_ms`` > 0 ignores isolated bursts — stretches of voiced windows (joined across gaps up
    to ``bridge_ms``) with less voiced time than that — such as a mouse click at the end of a recording
    (:data:`EnergyAnalysis.BURST_METHOD`). The default (0) keeps every voiced window."""
    n = max(1, int(rate_hz * window_ms / 1000))
    frames = len(audio) // n
    if frames == 0:
        raise AudioFileError("clip is shorter than one 10 ms window")
    windows = audio[: frames * n].reshape(frames, n).astype(np.float64)
    rms_db = 20 * np.log10(np.sqrt(np.mean(windows**2, axis=1)) + 1e-10)
    floor = float(np.percentile(rms_db, 10))
    peak = float(np.percentile(rms_db, 99))
    threshold = max(floor + 12.0, peak - 40.0)
    voiced = np.nonzero(rms_db > threshold)[0]
    if len(voiced) == 0 or peak < -60:
        raise AudioFileError("no speech found in clip (it is silent or pure noise)")
    ignored = 0
    if min_segment_ms > 0:
        voiced, ignored = _drop_bursts(
            voiced, max(1, round(min_segment_ms / window_ms)), max(1, round(bridge_ms / window_ms))
        )
    return EnergyAnalysis(
        first_voiced_sample=int(voiced[0] * n),
        last_voiced_sample=int((voiced[-1] + 1) * n),
        threshold_db=round(threshold, 1),
        noise_floor_db=round(floor, 1),
        peak_db=round(peak, 1),
        ignored_bursts=ignored,
    )


def first_sound_sample(pcm: np.ndarray, threshold: float = 0.01) -> int | None:
    """Index of the first sample whose magnitude exceeds ``threshold`` (float scale), or None."""
    idx = np.nonzero(np.abs(pcm) > threshold)[0]
    return int(idx[0]) if len(idx) else None


def trim_lead_silence(pcm16: np.ndarray, rate_hz: int, keep_ms: float, threshold: float = 0.01) -> np.ndarray:
    """``pcm16`` (int16) without its silent start, keeping ``keep_ms`` before the first sound (so the
    onset is not clipped). All silence stays as it is: nothing to trim is nothing to say."""
    first = first_sound_sample(pcm16.astype(np.float32) / 32768.0, threshold)
    if first is None:
        return pcm16
    return pcm16[max(0, first - int(rate_hz * keep_ms / 1000)) :]
