"""Smart Turn v3: the probability that the user's turn is complete, from how the speech sounds.

The model (catalogue ``smart-turn-v3.2``, the default, or its predecessors ``smart-turn-v3.1`` and
``smart-turn-v3.0``, from pipecat-ai/smart-turn) is a Whisper-tiny encoder with a classifier head; the three take
the same input and give the same output, so the model directory's one ``.onnx`` file is loaded whichever it is.
Its input is the last 8 s of the utterance at 16 kHz, left-padded with zeros, normalized to
zero mean and unit variance, as Whisper log-mel features (80 mels × 800 frames). faster-whisper's
``FeatureExtractor`` computes exactly those features (checked against the reference extraction: identical to
1e-4), so no feature code is copied here.

It is asked once per pause (see :mod:`voice.turn.endpoint`), by default on the VAD thread beside the speculative
reply, or with ``[turn] score_in_gate`` in a model thread holding the compute gate: two intra-op threads,
about 36 ms alone on the 2-core reference machine (45 ms on one).
Blocking; one call at a time (a lock), so several sessions share one session.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from voice.backends.onnx import session_options
from voice.models import ModelMissingError

SAMPLE_RATE_HZ = 16_000
WINDOW_SAMPLES = 8 * SAMPLE_RATE_HZ
FRAMES = 800
#: onnxruntime intra-op threads: 36 ms per call here with 2, 45 ms with 1 (it runs alone on the cores).
THREADS = 2


def whisper_features() -> Any:
    """faster-whisper's log-mel extractor with Smart Turn's 8 s window."""
    from faster_whisper.feature_extractor import FeatureExtractor

    return FeatureExtractor(feature_size=80, sampling_rate=SAMPLE_RATE_HZ, chunk_length=8)


def smart_turn_features(audio: np.ndarray, extractor: Any) -> np.ndarray:
    """The model's input for ``audio`` (float32 mono 16 kHz): shape (1, 80, 800)."""
    x = np.asarray(audio, np.float32)[-WINDOW_SAMPLES:]
    x = np.pad(x, (WINDOW_SAMPLES - len(x), 0))
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    features = extractor(x.astype(np.float32), padding=0)
    return np.asarray(features[:, :FRAMES], np.float32)[None]


def model_file(model_dir: Path) -> Path:
    """The one ``.onnx`` file of a Smart Turn model directory."""
    found = sorted(model_dir.glob("*.onnx"))
    if len(found) != 1:
        what = "no .onnx file" if not found else f"{len(found)} .onnx files ({', '.join(p.name for p in found)})"
        raise ModelMissingError(
            f"end-of-turn model directory {model_dir} holds {what}, not one; run `voice models pull` with its name"
        )
    return found[0]


class SmartTurn:
    """``score(audio) -> probability that the turn is complete`` (a :data:`voice.turn.endpoint.TurnScorer`)."""

    def __init__(self, model_dir: Path) -> None:
        import onnxruntime

        path = model_file(Path(model_dir))
        self._session = onnxruntime.InferenceSession(
            str(path), sess_options=session_options(THREADS), providers=["CPUExecutionProvider"]
        )
        self._extractor = whisper_features()
        self._lock = threading.Lock()
        self.calls = 0
        self.score(np.zeros(SAMPLE_RATE_HZ, np.float32))  # warm up

    def score(self, audio: np.ndarray) -> float:
        features = smart_turn_features(audio, self._extractor)
        with self._lock:
            out = self._session.run(None, {"input_features": features})
            self.calls += 1
        return float(np.asarray(out[0]).reshape(-1)[0])
