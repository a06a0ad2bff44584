"""Text-to-speech on a Wyoming server (e.g. ``wyoming-piper``), chosen with ``[tts] backend = "wyoming"``.

One connection per clause: ``synthesize {text, voice}`` → ``audio-start``, ``audio-chunk``s,
``audio-stop``. :attr:`sample_rate` is learnt when the backend is made, from a short synthesis (which also
warms the server); audio in another format later is converted to it. Blocking and lazy: each step of
:meth:`WyomingTts.synthesize` reads one chunk, so a cancelled turn stops between chunks, and
:meth:`interrupt` (from another thread) aborts the request at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import soxr
from wyoming.tts import Synthesize, SynthesizeVoice

from voice.config.config import TtsConfig
from voice.wyoming.client import WyomingClientError, WyomingRequest
from voice.wyoming.pcm import PcmFormat, parse_format, to_float_mono

PROBE_TEXT = "Ready."


class WyomingTts:
    sample_rate: int

    def __init__(self, config: TtsConfig) -> None:
        self.uri = config.uri
        self.voice = SynthesizeVoice(name=config.voice) if config.voice else None
        self.timeout_s = config.timeout_s
        self._current: WyomingRequest | None = None
        self._lock = threading.Lock()
        self.sample_rate = 0
        for _ in self.synthesize(PROBE_TEXT):  # learns the rate from audio-start
            pass
        if not self.sample_rate:
            raise WyomingClientError(f"the Wyoming server at {self.uri} sent no audio for {PROBE_TEXT!r}")

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        with WyomingRequest(self.uri, self.timeout_s) as request:
            with self._lock:
                self._current = request
            try:
                request.send(Synthesize(text=text, voice=self.voice).event())
                fmt: PcmFormat | None = None
                resampler: soxr.ResampleStream | None = None  # when the server's rate is not ours
                while True:
                    event = request.read()
                    if event.type == "audio-start":
                        fmt, resampler = self._start(event.data, resampler)
                    elif event.type == "audio-chunk":
                        pcm = self._chunk(event.payload or b"", fmt, resampler)
                        if pcm is not None:
                            yield pcm
                    elif event.type == "audio-stop":
                        if resampler is not None:
                            yield _int16(resampler.resample_chunk(np.zeros(0, np.float32), last=True))
                        return
            finally:
                with self._lock:
                    self._current = None

    def _start(
        self, data: dict[str, object], resampler: soxr.ResampleStream | None
    ) -> tuple[PcmFormat, soxr.ResampleStream | None]:
        """The reply's format (from audio-start), and a new resampler when its rate is not ours (else the one
        in use is kept)."""
        got = parse_format(data, f"the audio-start of the Wyoming server at {self.uri}")
        if isinstance(got, str):
            raise WyomingClientError(got)
        if not self.sample_rate:
            self.sample_rate = got.rate_hz
        if got.rate_hz == self.sample_rate:
            return got, resampler
        return got, soxr.ResampleStream(got.rate_hz, self.sample_rate, 1, dtype="float32")

    def _chunk(
        self, payload: bytes, fmt: PcmFormat | None, resampler: soxr.ResampleStream | None
    ) -> np.ndarray | None:
        """An audio-chunk as int16 mono at our rate (None for an empty one)."""
        if fmt is None:
            raise WyomingClientError(f"the Wyoming server at {self.uri} sent audio-chunk before audio-start")
        if len(payload) % fmt.frame_bytes:
            raise WyomingClientError(f"the Wyoming server at {self.uri} sent an audio-chunk of partial frames")
        if not payload:
            return None
        if resampler is None and fmt.width_bytes == 2 and fmt.channels == 1:
            return np.frombuffer(payload, dtype="<i2").astype(np.int16)
        mono = to_float_mono(payload, fmt)
        if resampler is not None:
            mono = resampler.resample_chunk(mono)
        return _int16(mono)

    def interrupt(self) -> None:
        """Abort the synthesis in progress (called from another thread when the turn is cancelled)."""
        with self._lock:
            if self._current is not None:
                self._current.abort()


def _int16(audio: np.ndarray) -> np.ndarray:
    out: np.ndarray = (np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16)
    return out
