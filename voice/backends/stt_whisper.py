"""Speech to text with faster-whisper (CTranslate2), loaded and warmed at start-up."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from voice.config import SttConfig


class WhisperStt:
    def __init__(self, model_dir: Path, config: SttConfig) -> None:
        from faster_whisper import WhisperModel

        self.config = config
        self._model = WhisperModel(
            str(model_dir),
            device="cpu",
            compute_type=config.compute_type,
            cpu_threads=config.cpu_threads,
            num_workers=1,
        )
        self.transcribe(np.zeros(16000, np.float32))  # warm up: first call allocates and JITs kernels

    def transcribe(self, audio: np.ndarray) -> str:
        """Blocking. The segment generator is lazy — decoding happens while iterating — so it is
        consumed here, inside the worker thread."""
        segments, _info = self._model.transcribe(
            audio,
            language=self.config.language or None,
            beam_size=self.config.beam_size,
            temperature=0.0,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,
        )
        return " ".join(s.text.strip() for s in segments).strip()
