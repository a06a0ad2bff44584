"""Audio between Wyoming and the models: client PCM → the STT's float32 mono 16 kHz, and TTS int16 → events.

Wyoming states the format once in ``audio-start`` (``rate`` in Hz, ``width`` in bytes per sample,
``channels``); the payload of each ``audio-chunk`` is little-endian interleaved PCM in that format.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import soxr
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event

from voice.audio import pcm16_to_float

STT_RATE_HZ = 16_000
MIN_RATE_HZ = 8_000
MAX_RATE_HZ = 48_000
MAX_CHANNELS = 2
WIDTHS = (1, 2, 4)


@dataclass(frozen=True)
class PcmFormat:
    rate_hz: int
    width_bytes: int
    """1 (unsigned 8-bit), 2 (signed 16-bit) or 4 (signed 32-bit)."""
    channels: int

    @property
    def frame_bytes(self) -> int:
        return self.width_bytes * self.channels

    def bytes_per_s(self) -> int:
        return self.rate_hz * self.frame_bytes


def parse_format(data: dict[str, object], what: str) -> PcmFormat | str:
    """The format in an ``audio-start``/``audio-chunk``'s data, or a message saying what is wrong. The bounds
    keep a connection's audio buffer small (``max_audio_s`` of 48 kHz 32-bit stereo is 11.5 MB at 30 s)."""
    values: dict[str, int] = {}
    for key in ("rate", "width", "channels"):
        v = data.get(key)
        if isinstance(v, bool) or not isinstance(v, int):
            return f'{what}: "{key}" must be an integer, got {v!r}'
        values[key] = v
    fmt = PcmFormat(values["rate"], values["width"], values["channels"])
    if not MIN_RATE_HZ <= fmt.rate_hz <= MAX_RATE_HZ:
        return f"{what}: rate {fmt.rate_hz} Hz is outside {MIN_RATE_HZ}..{MAX_RATE_HZ}"
    if fmt.width_bytes not in WIDTHS:
        return f"{what}: width {fmt.width_bytes} is not 1, 2 or 4 bytes per sample"
    if not 1 <= fmt.channels <= MAX_CHANNELS:
        return f"{what}: channels {fmt.channels} is outside 1..{MAX_CHANNELS}"
    return fmt


def to_stt_audio(pcm: bytes, fmt: PcmFormat) -> np.ndarray:
    """float32 mono 16 kHz from interleaved PCM (``len(pcm)`` a multiple of the frame size). 16-bit mono
    at 16 kHz is converted exactly (``/ 32768``): no resampling, no mixing."""
    samples = to_float_mono(pcm, fmt)
    if fmt.rate_hz != STT_RATE_HZ and len(samples):
        samples = np.asarray(soxr.resample(samples, fmt.rate_hz, STT_RATE_HZ), dtype=np.float32)
    return samples


def to_float_mono(pcm: bytes, fmt: PcmFormat) -> np.ndarray:
    """float32 mono at ``fmt.rate_hz`` from interleaved PCM (channels averaged)."""
    if fmt.width_bytes == 1:
        samples = (np.frombuffer(pcm, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif fmt.width_bytes == 2:
        samples = pcm16_to_float(pcm)
    else:
        samples = (np.frombuffer(pcm, dtype="<i4").astype(np.float64) / 2**31).astype(np.float32)
    if fmt.channels > 1:
        samples = samples.reshape(-1, fmt.channels).mean(axis=1, dtype=np.float32)
    return samples


def audio_start(rate_hz: int) -> Event:
    """``audio-start`` of our TTS output: 16-bit mono at ``rate_hz``."""
    return AudioStart(rate=rate_hz, width=2, channels=1).event()


def audio_stop() -> Event:
    return AudioStop().event()


def audio_chunk(data: bytes, rate_hz: int) -> Event:
    """One ``audio-chunk`` event of int16 mono little-endian ``data``."""
    return AudioChunk(rate=rate_hz, width=2, channels=1, audio=data).event()
