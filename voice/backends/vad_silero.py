"""Silero VAD v6 in streaming mode, run with onnxruntime (no torch).

faster-whisper ships the model (``faster_whisper/assets/silero_vad_v6.onnx``). Each 512-sample frame at
16 kHz is fed with the 64 samples before it as context; the LSTM state (h, c) is carried per stream.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from voice.backends.onnx import session_options
from voice.models import ModelMissingError

FRAME_SAMPLES = 512
CONTEXT_SAMPLES = 64


def default_model_path() -> Path:
    from faster_whisper.utils import get_assets_path

    return Path(get_assets_path()) / "silero_vad_v6.onnx"


class SileroVadStream:
    frame_samples = FRAME_SAMPLES

    def __init__(self, session: Any, lock: threading.Lock) -> None:
        self._session = session
        self._lock = lock
        self.reset()

    def reset(self) -> None:
        self._h = np.zeros((1, 1, 128), np.float32)
        self._c = np.zeros((1, 1, 128), np.float32)
        self._context = np.zeros(CONTEXT_SAMPLES, np.float32)

    def probability(self, frame: np.ndarray) -> float:
        if len(frame) != FRAME_SAMPLES:
            raise ValueError(f"Silero VAD needs frames of {FRAME_SAMPLES} samples, got {len(frame)}")
        x = np.concatenate([self._context, frame.astype(np.float32, copy=False)])[None, :]
        with self._lock:
            out, self._h, self._c = self._session.run(None, {"input": x, "h": self._h, "c": self._c})
        self._context = frame[-CONTEXT_SAMPLES:].astype(np.float32, copy=True)
        return float(np.asarray(out).reshape(-1)[0])


class SileroVad:
    """One shared onnxruntime session; every audio stream gets its own state."""

    def __init__(self, model_path: Path | None = None) -> None:
        import onnxruntime

        path = model_path or default_model_path()
        if not path.is_file():
            raise ModelMissingError(
                f"Silero VAD model not found at {path}; it ships with faster-whisper: reinstall it "
                "(pip install --force-reinstall faster-whisper)"
            )
        self._session = onnxruntime.InferenceSession(
            str(path), sess_options=session_options(1), providers=["CPUExecutionProvider"]
        )
        self._lock = threading.Lock()
        self.stream().probability(np.zeros(FRAME_SAMPLES, np.float32))  # warm up

    def stream(self) -> SileroVadStream:
        return SileroVadStream(self._session, self._lock)


def clip_probabilities(audio: np.ndarray, vad: SileroVad | None = None) -> np.ndarray:
    """Blocking: Silero's speech probability for every 512-sample frame of a whole 16 kHz clip (one fresh
    stream, offline; the last frame is zero-padded). Frame ``i`` covers samples ``[512 i, 512 (i + 1))``."""
    stream = (vad or SileroVad()).stream()
    n_frames = -(-len(audio) // FRAME_SAMPLES)
    padded = np.zeros(n_frames * FRAME_SAMPLES, np.float32)
    padded[: len(audio)] = audio
    return np.array(
        [stream.probability(padded[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES]) for i in range(n_frames)],
        np.float32,
    )
