"""Text to speech with Piper (onnxruntime), one sentence per synthesis step.

A sentence is one onnxruntime call (0.1-1 s here). :meth:`PiperTts.interrupt` (called from another thread
on barge-in or disconnect) sets onnxruntime's terminate flag, so the call in progress stops early instead
of holding the model until the sentence is done.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from voice.backends.onnx import session_options
from voice.config.config import TtsConfig
from voice.models import ModelMissingError


class _InterruptibleSession:
    """Wraps Piper's onnxruntime session so every run uses our RunOptions (whose terminate flag we own)."""

    def __init__(self, session: Any) -> None:
        import onnxruntime

        self._session = session
        self._new_options = onnxruntime.RunOptions
        self.options = onnxruntime.RunOptions()

    def rearm(self) -> None:
        self.options = self._new_options()

    def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
        return self._session.run(output_names, input_feed, self.options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


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
        self._session = _InterruptibleSession(session)
        self._voice = PiperVoice(session=self._session, config=piper_config)
        self._syn = SynthesisConfig(length_scale=config.length_scale)
        self.sample_rate: int = int(piper_config.sample_rate)
        for _ in self.synthesize("Hello."):  # warm up
            pass

    def interrupt(self) -> None:
        """Stop the synthesis step in progress (thread-safe); the generator then ends."""
        self._session.options.terminate = True

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        """Lazy: each step synthesizes one sentence (Piper splits the text itself)."""
        self._session.rearm()
        options = self._session.options
        chunks = iter(self._voice.synthesize(text, syn_config=self._syn))
        while True:
            try:
                chunk = next(chunks, None)
            except Exception:
                if options.terminate:
                    return  # interrupted: onnxruntime raised "Exiting due to terminate flag"
                raise
            if chunk is None or options.terminate:
                return
            yield np.asarray(chunk.audio_int16_array, dtype=np.int16).reshape(-1)
