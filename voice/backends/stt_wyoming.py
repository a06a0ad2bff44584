"""Speech-to-text on a Wyoming server (e.g. ``wyoming-faster-whisper``), chosen with ``[stt] backend = "wyoming"``.

One connection per utterance, the sequence Home Assistant uses: ``transcribe``, ``audio-start``
(16 kHz, 16-bit, mono), ``audio-chunk``s, ``audio-stop``, then read until ``transcript``. Blocking; runs in
a model worker thread. Failures raise :class:`~voice.wyoming.client.WyomingClientError` naming the server.
"""

from __future__ import annotations

import threading

import numpy as np
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.info import Describe

from voice.config.config import SttConfig
from voice.runtime.model_api import Heard
from voice.wyoming.client import WyomingClientError, WyomingRequest

RATE_HZ = 16_000
CHUNK_SAMPLES = 1024


class WyomingStt:
    def __init__(self, config: SttConfig) -> None:
        self.uri = config.uri
        self.language = config.language or None
        self.timeout_s = config.timeout_s
        self._current: WyomingRequest | None = None
        self._lock = threading.Lock()
        self.check()

    def check(self) -> None:
        """Ask the server what it offers (``describe``): it must be up and offer speech-to-text."""
        with WyomingRequest(self.uri, self.timeout_s) as request:
            request.send(Describe().event())
            info = request.read()
        asr = info.data.get("asr") if info.type == "info" else None
        if not asr:
            raise WyomingClientError(f"the Wyoming server at {self.uri} offers no speech-to-text (asr)")

    def hear(self, audio: np.ndarray) -> Heard:
        """Wyoming's ``transcript`` carries no confidence."""
        return Heard(self.transcribe(audio))

    def transcribe(self, audio: np.ndarray) -> str:
        pcm = np.clip(np.rint(audio * 32768), -32768, 32767).astype("<i2")  # the exact inverse of / 32768
        fmt = {"rate": RATE_HZ, "width": 2, "channels": 1}
        with WyomingRequest(self.uri, self.timeout_s) as request:
            with self._lock:
                self._current = request
            try:
                request.send(
                    Transcribe(language=self.language).event(),
                    AudioStart(**fmt).event(),
                    *(
                        AudioChunk(**fmt, audio=pcm[i : i + CHUNK_SAMPLES].tobytes()).event()
                        for i in range(0, len(pcm), CHUNK_SAMPLES)
                    ),
                    AudioStop().event(),
                )
                while (event := request.read()).type != "transcript":
                    pass  # transcript-start/-chunk of a streaming server: the final transcript follows
            finally:
                with self._lock:
                    self._current = None
        text = event.data.get("text")
        if not isinstance(text, str):
            raise WyomingClientError(f"the Wyoming server at {self.uri} sent a transcript without text")
        return text

    def interrupt(self) -> None:
        """Abort the transcription in progress (called from another thread when the turn is cancelled)."""
        with self._lock:
            if self._current is not None:
                self._current.abort()
