"""Text to speech with Piper (onnxruntime), one sentence per synthesis step."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from voice.backends.onnx import session_options
from voice.config import TtsConfig
from voice.models import ModelMissingError


class PiperTts:
    def __init__(self, model_dir: Path, config: TtsConfig) -> None:
        import json

        import onnxruntime
        from piper import PiperVoice, SynthesisConfig
        from piper.config import PiperConfig

        models = sorted(model_dir.glob("*.onnx"))
        if not models:
            raise ModelMissingError(f"no .onnx voice in {model_dir}; run: voice models pull {config.model}")
        onnx_path = models[0]
        cfg_path = onnx_path.with_name(onnx_path.name + ".json")
        with cfg_path.open(encoding="utf-8") as f:
            piper_config = PiperConfig.from_dict(json.load(f))
        session = onnxruntime.InferenceSession(
            str(onnx_path),
            sess_options=session_options(config.onnx_threads),
            providers=["CPUExecutionProvider"],
        )
        self._voice = PiperVoice(session=session, config=piper_config)
        self._syn = SynthesisConfig(length_scale=config.length_scale)
        self.sample_rate: int = int(piper_config.sample_rate)
        for _ in self.synthesize("Hello."):  # warm up
            pass

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        """Lazy: each step synthesizes one sentence (Piper splits the text itself)."""
        for chunk in self._voice.synthesize(text, syn_config=self._syn):
            yield np.asarray(chunk.audio_int16_array, dtype=np.int16).reshape(-1)
