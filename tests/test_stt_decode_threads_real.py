"""``[stt] decode_threads``: Whisper's decoder on its own copy of the model, with its own thread count, hears the
same words with the same confidence as the decoder that shares the encoder's copy and threads (the encoder's
output is handed from one copy to the other). Real tiny.en, on espeak-ng questions and, where present, the
recordings of ../shared/speech."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SPEECH_DIR
from voice.audio import load_audio
from voice.backends.stt_whisper import WhisperStt
from voice.config.config import SttConfig
from voice.models import DEFAULT_MODELS_ROOT

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]

QUESTIONS = ("What is the capital of France?", "Set a timer for ten minutes.", "Who wrote Romeo and Juliet?")


def spoken(text: str, tmp: Path) -> np.ndarray:
    wav = tmp / "q.wav"
    subprocess.run(["espeak-ng", "-w", str(wav), text], check=True)
    return load_audio(wav)


def test_decoder_on_its_own_threads_hears_the_same(tmp_path: Path) -> None:
    model_dir = DEFAULT_MODELS_ROOT / "stt" / "tiny.en"
    shared = WhisperStt(model_dir, SttConfig(cpu_threads=2, decode_threads=2))
    split = WhisperStt(model_dir, SttConfig(cpu_threads=2, decode_threads=1))
    clips = [spoken(q, tmp_path) for q in QUESTIONS]
    if (SPEECH_DIR / "transcripts.tsv").exists():
        clips += [load_audio(p) for p in sorted(SPEECH_DIR.glob("*.wav"))]
    for audio in clips:
        one, other = shared.hear(audio), split.hear(audio)
        assert one.text == other.text and one.text
        assert one.avg_logprob is not None and other.avg_logprob is not None
        assert abs(one.avg_logprob - other.avg_logprob) < 1e-3, (one, other)
    assert split.fallbacks == shared.fallbacks  # the guard judged both decodes alike
