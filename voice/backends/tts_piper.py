"""Text to speech with Piper (onnxruntime): a sentence at a time, or a sentence in pieces.

With ``[tts] stream_first_ms = 0`` a sentence is one onnxruntime call (0.1-1 s here) and one piece of audio.
Otherwise the voice's graph is cut at its waveform decoder (:mod:`voice.backends.piper_stream`) and a sentence
comes out in pieces: the first ~``stream_first_ms`` of audio after the front and a short decode, then longer
pieces, the same samples one call gives, at a fixed gain instead of Piper's per-sentence peak normalisation
(which needs the whole sentence first: :data:`STREAM_GAIN`).

:meth:`PiperTts.interrupt` (called from another thread on barge-in or disconnect) sets onnxruntime's terminate
flag, so the call in progress stops early instead of holding the model until the sentence is done.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from voice.backends import piper_stream
from voice.backends.onnx import session_options
from voice.config.config import TtsConfig
from voice.models import ModelMissingError

#: The gain of the audio decoded in pieces. Piper scales each sentence to full scale, which needs its loudest
#: sample before the first is sent; pieces get one gain instead. The voice's raw peaks over 183 reply sentences
#: (joe-medium): p50 0.53, p95 0.69, max 0.80, so 1.25 brings the loudest to full scale and the median sentence
#: to 3.6 dB under Piper's level, the same for every sentence. Samples beyond full scale are clipped.
STREAM_GAIN = 1.25


class _Terminator:
    """The RunOptions every call of a voice's sessions uses; ``terminate`` on them stops the call in progress."""

    def __init__(self) -> None:
        import onnxruntime

        self._new_options = onnxruntime.RunOptions
        self.options = onnxruntime.RunOptions()

    def rearm(self) -> None:
        self.options = self._new_options()


class _InterruptibleSession:
    """Wraps an onnxruntime session so every run uses the terminator's RunOptions."""

    def __init__(self, session: Any, terminator: _Terminator) -> None:
        self._session = session
        self._terminator = terminator

    def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
        return self._session.run(output_names, input_feed, self._terminator.options)

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
        self._terminator = _Terminator()

        def session(model: str | bytes) -> _InterruptibleSession:
            ort = onnxruntime.InferenceSession(
                model, sess_options=session_options(config.onnx_threads), providers=["CPUExecutionProvider"]
            )
            return _InterruptibleSession(ort, self._terminator)

        self._first_frames = 0
        if config.stream_first_ms > 0:
            parts = piper_stream.split(onnx_path)
            self._front, self._decoder = session(parts.front), session(parts.decoder)
            self._frames_input = parts.frames_input
            frame_ms = 1000 * piper_config.hop_length / piper_config.sample_rate
            self._first_frames = max(1, round(config.stream_first_ms / frame_ms))
            voice_session = self._front  # Piper's own synthesis is not used: only its phonemizer
        else:
            voice_session = session(str(onnx_path))
        self._voice = PiperVoice(session=voice_session, config=piper_config)
        self._syn = SynthesisConfig(length_scale=config.length_scale)
        self._scales = np.array(
            [piper_config.noise_scale, config.length_scale, piper_config.noise_w_scale], dtype=np.float32
        )
        self._hop = int(piper_config.hop_length)
        self.sample_rate: int = int(piper_config.sample_rate)
        for _ in self.synthesize("Hello."):  # warm up
            pass

    def interrupt(self) -> None:
        """Stop the synthesis step in progress (thread-safe); the generator then ends."""
        self._terminator.options.terminate = True

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        """Lazy: each step synthesizes one sentence (Piper splits the text itself), or with ``stream_first_ms``
        one piece of a sentence."""
        self._terminator.rearm()
        options = self._terminator.options
        steps = self._pieces(text) if self._first_frames else self._sentences(text)
        while True:
            try:
                piece = next(steps, None)
            except Exception:
                if options.terminate:
                    return  # interrupted: onnxruntime raised "Exiting due to terminate flag"
                raise
            if piece is None or options.terminate:
                return
            yield piece

    def _sentences(self, text: str) -> Iterator[np.ndarray]:
        for chunk in self._voice.synthesize(text, syn_config=self._syn):
            yield np.asarray(chunk.audio_int16_array, dtype=np.int16).reshape(-1)

    def _pieces(self, text: str) -> Iterator[np.ndarray]:
        for ids in self.phoneme_ids(text):
            yield from self.decode(self.frames(ids), self._first_frames)

    def frames(self, phoneme_ids: list[int]) -> np.ndarray:
        """The acoustic frames of one sentence (the front's output, shape (1, channels, frames)); needs
        ``stream_first_ms``."""
        feed = {
            "input": np.array([phoneme_ids], dtype=np.int64),
            "input_lengths": np.array([len(phoneme_ids)], dtype=np.int64),
            "scales": self._scales,
        }
        return np.asarray(self._front.run(None, feed)[0])

    def decode(self, frames: np.ndarray, first_frames: int) -> Iterator[np.ndarray]:
        """The waveform of ``frames`` in pieces (:func:`voice.backends.piper_stream.pieces`), int16 at
        :data:`STREAM_GAIN`; needs ``stream_first_ms``."""
        for piece in piper_stream.pieces(int(frames.shape[2]), first_frames):
            span = np.ascontiguousarray(frames[:, :, piece.context_start : piece.context_end])
            audio = np.asarray(self._decoder.run(None, {self._frames_input: span})[0]).reshape(-1)
            lead = (piece.start - piece.context_start) * self._hop
            audio = audio[lead : lead + (piece.end - piece.start) * self._hop]
            yield np.clip(audio * (STREAM_GAIN * 32767), -32767, 32767).astype(np.int16)

    def phoneme_ids(self, text: str) -> list[list[int]]:
        """Each sentence of ``text`` as Piper's phoneme ids."""
        return [self._voice.phonemes_to_ids(p) for p in self._voice.phonemize(text) if p]
