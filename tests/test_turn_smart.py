"""Smart Turn's input: the last 8 s, left-padded, normalized, as Whisper log-mel (no model needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voice.backends.turn_smart import (
    FRAMES,
    SAMPLE_RATE_HZ,
    model_file,
    smart_turn_features,
    whisper_features,
)
from voice.models import ModelMissingError


def chirp(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE_HZ)) / SAMPLE_RATE_HZ
    return (0.3 * np.sin(2 * np.pi * (200 + 300 * t) * t)).astype(np.float32)


def test_features_have_the_model_shape_and_short_audio_sits_at_the_end() -> None:
    ex = whisper_features()
    f = smart_turn_features(chirp(2.0), ex)
    assert f.shape == (1, 80, FRAMES) and f.dtype == np.float32
    energy = f[0].mean(axis=0)
    # 2 s of sound at the end of an 8 s window: the first 6 s are the padding's floor, the last 2 s are not.
    assert np.ptp(energy[:550]) < 1e-3
    assert energy[650:].mean() > energy[:550].mean() + 0.1


def test_only_the_last_8_seconds_count() -> None:
    ex = whisper_features()
    tail = chirp(8.0)
    longer = np.concatenate([np.random.default_rng(0).normal(0, 0.5, 3 * SAMPLE_RATE_HZ).astype(np.float32), tail])
    assert np.allclose(smart_turn_features(longer, ex), smart_turn_features(tail, ex))


def test_loudness_does_not_matter() -> None:
    ex = whisper_features()
    quiet, loud = chirp(3.0) * 0.05, chirp(3.0)
    assert np.allclose(smart_turn_features(quiet, ex), smart_turn_features(loud, ex), atol=1e-3)


def test_the_model_directory_must_hold_one_onnx_file(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match=r"no \.onnx file"):
        model_file(tmp_path)
    (tmp_path / "smart-turn-v3.1-cpu.onnx").write_bytes(b"x")
    assert model_file(tmp_path).name == "smart-turn-v3.1-cpu.onnx"
    (tmp_path / "other.onnx").write_bytes(b"x")
    with pytest.raises(ModelMissingError, match=r"2 \.onnx files \(other\.onnx, smart-turn-v3\.1-cpu\.onnx\)"):
        model_file(tmp_path)
