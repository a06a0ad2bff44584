"""The STT's word probabilities (``Heard.min_word_prob``) and no-speech probability, with real tiny.en: a word the
decoder made up scores lower than words it heard. Espeak-ng questions and, where present, the recordings of
../shared/speech, each heard forwards and reversed (the same sounds, no English words: whatever Whisper writes
for it is a guess)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import SPEECH_DIR
from tests.test_stt_decode_threads_real import QUESTIONS, spoken
from voice.audio import load_audio
from voice.backends.stt_whisper import WhisperStt
from voice.config.config import SttConfig
from voice.models import DEFAULT_MODELS_ROOT

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]


def test_words_heard_are_likelier_than_words_guessed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    stt = WhisperStt(DEFAULT_MODELS_ROOT / "stt" / "tiny.en", SttConfig(ask_again_llm_below_word_prob=0.3))
    clips = [spoken(q, tmp_path) for q in QUESTIONS]
    if (SPEECH_DIR / "transcripts.tsv").exists():
        clips += [load_audio(p) for p in sorted(SPEECH_DIR.glob("*.wav"))]
    heard = [stt.hear(audio) for audio in clips]
    guessed = [stt.hear(np.ascontiguousarray(audio[::-1])) for audio in clips]
    for h in heard:
        assert h.text and h.min_word_prob is not None and 0.0 < h.min_word_prob <= 1.0, h
        assert h.no_speech_prob is not None and 0.0 <= h.no_speech_prob <= 1.0, h
    words = [g.min_word_prob for g in guessed if g.text and g.min_word_prob is not None]
    assert words, "reversed speech was heard as nothing at all"
    # Reversed speech: the least likely word of what Whisper writes is far less likely than in what it heard.
    assert np.median(words) < np.median([h.min_word_prob for h in heard]) / 2, (heard, guessed)


def test_with_the_bar_off_the_words_are_not_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The decoder pass that reads them (~15 ms) is paid only when ``[stt] ask_again_llm_below_word_prob`` is on."""
    off = WhisperStt(DEFAULT_MODELS_ROOT / "stt" / "tiny.en", SttConfig(ask_again_llm_below_word_prob=0.0))
    heard = off.hear(spoken(QUESTIONS[0], tmp_path))
    assert heard.text and heard.min_word_prob is None and heard.no_speech_prob is not None
