"""Speech to text with faster-whisper (CTranslate2), loaded and warmed at start-up.

faster-whisper's ``transcribe()`` pads every utterance to Whisper's 30 s window (3000 mel frames) before
encoding, so a 2 s question costs as much as 30 s of audio (~400 ms for tiny.en on 2 cores). CTranslate2
accepts shorter encoder input, so with ``[stt] min_window_s > 0`` an utterance is encoded at its real length
plus ``pad_s`` of padding (at least ``min_window_s``), about 4x faster. Short windows can make the decoder
run on (repeating the sentence until the length cap), so the short path is guarded and falls back to the
full window when in doubt:

* the output length is capped by the audio's duration (``20 + 6 tokens per second``);
* a decode that repeats itself, hits that cap, compresses too well (zlib ratio > 2.4, Whisper's own test)
  or has a low average log-probability is thrown away and the utterance is transcribed on the full window.

``benchmarks/results/*-stt-window.md`` compares both paths on every clip (speed and normalized WER).

The short path's decoder runs with ``[stt] decode_threads`` (1), the encoder with ``cpu_threads`` (2): a decoder
step (one token, a few small matrices) is too small to share between two threads, and on this 2-core machine
two threads made it 2-3x slower, while the encoder gains from both. CTranslate2 fixes a model's threads when it
is loaded, so a different count loads a second copy for decoding. The full-window path is faster-whisper's and
uses ``cpu_threads`` for both.

With ``[stt] unsure_beam_size``, a short-window decode under ``ask_again_below_logprob`` is decoded again with
that beam from the same encoder output, and the surer of the two is kept (before the guard above): only unsure
utterances pay for it.

``[stt] initial_prompt`` and ``[stt] hotwords`` give Whisper context before every utterance (names, domain
words, spelling). Both paths build the same decoder prompt, faster-whisper's ``get_prompt``:
``<|startofprev|> hotwords initial_prompt <|startoftranscript|>…<|notimestamps|>``. On espeak-ng test phrases
tiny.en hears "Kubernetes" as "Qber League's" and "Zanzibar" as "then the Marvin" without them, and right
with them (tests/test_real_models.py).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np

from voice.config.config import SttConfig
from voice.runtime.model_api import Heard

#: Whisper's own compression-ratio threshold for a degenerate (repeating) decode.
MAX_COMPRESSION_RATIO = 2.4
#: Average log-probability per token under which a short-window decode is not trusted.
MIN_AVG_LOGPROB = -1.0
#: A repeated run of at least this many tokens, immediately following itself, is a loop.
MIN_REPEAT_TOKENS = 3


def repeats_itself(tokens: list[int], min_run: int = MIN_REPEAT_TOKENS) -> bool:
    """True if some run of ``min_run`` or more tokens is immediately repeated."""
    n_tokens = len(tokens)
    for start in range(n_tokens):
        for run in range(min_run, (n_tokens - start) // 2 + 1):
            if tokens[start : start + run] == tokens[start + run : start + 2 * run]:
                return True
    return False


def silence_level(features: np.ndarray) -> float:
    """The log-mel value of digital silence in these features: what Whisper saw after speech in training
    (OpenAI's Whisper pads the audio with zeros; faster-whisper pads the features with zeros, a level no audio
    has). The extractor floors log10 power at its maximum - 8 and maps x to (x + 4) / 4, so silence is the
    features' maximum - 2."""
    return float(features.max()) - 2.0


def log_mel(audio: np.ndarray) -> np.ndarray:
    """Whisper's 80-band log-mel features of 16 kHz ``audio`` (faster-whisper's extractor, as tiny and base take)."""
    from faster_whisper.feature_extractor import FeatureExtractor

    return np.asarray(FeatureExtractor()(audio))


def compression_ratio(text: str) -> float:
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


class WhisperStt:
    def __init__(self, model_dir: Path, config: SttConfig) -> None:
        from faster_whisper import WhisperModel
        from faster_whisper.tokenizer import Tokenizer

        self.config = config
        self._model = WhisperModel(
            str(model_dir),
            device="cpu",
            compute_type=config.compute_type,
            cpu_threads=config.cpu_threads,
            num_workers=1,
        )
        self._decoder: Any = self._model.model
        if config.decode_threads != config.cpu_threads:
            import ctranslate2

            self._decoder = ctranslate2.models.Whisper(
                str(model_dir), device="cpu", compute_type=config.compute_type, intra_threads=config.decode_threads
            )
        multilingual = self._model.model.is_multilingual
        self._tokenizer = Tokenizer(
            self._model.hf_tokenizer,
            multilingual,
            task="transcribe",
            language=(config.language or "en") if multilingual else None,
        )
        context = config.initial_prompt.strip()
        self._previous_tokens: list[int] = self._tokenizer.encode(" " + context) if context else []
        self._hotwords = " ".join(w.strip() for w in config.hotwords) or None
        limit = self._model.max_length // 2 - 1
        n_context = len(self._previous_tokens) + len(
            self._tokenizer.encode(" " + self._hotwords) if self._hotwords else []
        )
        if n_context > limit:
            raise ValueError(
                f"[stt] initial_prompt and hotwords are {n_context} tokens; Whisper reads at most {limit}"
            )
        self._prompt: list[int] = self._model.get_prompt(
            self._tokenizer, self._previous_tokens, without_timestamps=True, hotwords=self._hotwords
        )
        self._word_probs_on = config.ask_again and config.ask_again_llm_below_word_prob > 0
        """Word probabilities cost a decoder pass (~15 ms): read only when a bar uses them."""
        self.short_windows = 0
        """Utterances transcribed on a short window."""
        self.fallbacks = 0
        """Short-window decodes that were not trusted and redone on the full window."""
        self.unsure_redecodes = 0
        """Unsure short-window decodes decoded again with ``[stt] unsure_beam_size``."""
        self.unsure_redecodes_kept = 0
        """Of those, the ones whose second decode was surer (and replaced the first)."""
        self.unsure_full_windows = 0
        """Unsure short-window transcripts transcribed again on the full window (``[stt] unsure_full_window``)."""
        self.unsure_full_windows_kept = 0
        """Of those, the ones where the full window was surer (and replaced the short one)."""
        self.transcribe(np.zeros(16000, np.float32))  # warm up: first call allocates and JITs kernels
        self.transcribe_full(np.zeros(16000, np.float32))

    def transcribe(self, audio: np.ndarray) -> str:
        """Blocking: the short window when configured and trusted, else the full 30 s window."""
        return self.hear(audio).text

    def hear(self, audio: np.ndarray) -> Heard:
        """:meth:`transcribe` with the decoder's mean log-probability per token."""
        if self.config.min_window_s > 0 and len(audio) / 16000 + self.config.pad_s < 30.0:
            heard = self._short(audio)
            if heard is not None:
                self.short_windows += 1
                if self.config.unsure_full_window and self.config.doubtful(heard.avg_logprob):
                    return self._surer(heard, audio)
                return heard
            self.fallbacks += 1
        return self._full(audio)

    def _surer(self, heard: Heard, audio: np.ndarray) -> Heard:
        """``[stt] unsure_full_window``: the full window's transcript of an utterance the short window was unsure
        of, when the full window is surer."""
        self.unsure_full_windows += 1
        full = self._full(audio)
        if full.avg_logprob is None or heard.avg_logprob is None or full.avg_logprob <= heard.avg_logprob:
            return heard
        self.unsure_full_windows_kept += 1
        return full

    def transcribe_full(self, audio: np.ndarray) -> str:
        """faster-whisper's own path on the full 30 s window."""
        return self._full(audio).text

    def _full(self, audio: np.ndarray) -> Heard:
        """faster-whisper's own path. The segment generator is lazy — decoding happens while iterating —
        so it is consumed here, inside the worker thread. The confidence is the segments' mean log-probability
        per token, weighted by their tokens."""
        segments, _info = self._model.transcribe(
            audio,
            language=self.config.language or None,
            beam_size=self.config.beam_size,
            temperature=0.0,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,
            initial_prompt=self.config.initial_prompt.strip() or None,
            hotwords=self._hotwords,
            word_timestamps=self._word_probs_on,
        )
        segments = list(segments)
        tokens = sum(len(s.tokens) for s in segments)
        avg = sum(s.avg_logprob * len(s.tokens) for s in segments) / tokens if tokens else None
        word_probs = [w.probability for s in segments for w in s.words or ()]
        return Heard(
            " ".join(s.text.strip() for s in segments).strip(),
            avg,
            min(word_probs) if word_probs else None,
            max((s.no_speech_prob for s in segments), default=None),
        )

    def _short(self, audio: np.ndarray) -> Heard | None:
        """Encode the real length (+ padding) and decode greedily; None when the result is not trusted."""
        features = self._model.feature_extractor(audio)
        frames = features.shape[-1]
        window = max(self.config.min_window_s * 100, frames + self.config.pad_s * 100)
        n_frames = min(3000, int(window))
        fill = silence_level(features) if self.config.pad_silence else 0.0
        padded = np.full((features.shape[0], n_frames), fill, np.float32)
        padded[:, : min(frames, n_frames)] = features[:, :n_frames]
        encoded = self._model.encode(padded)
        max_new = int(20 + 6 * len(audio) / 16000)
        tokens, avg_logprob, no_speech_prob = self._decode(encoded, self.config.beam_size, max_new)
        if self.config.unsure_beam_size and self.config.doubtful(avg_logprob):
            self.unsure_redecodes += 1
            again, again_logprob, _ = self._decode(encoded, self.config.unsure_beam_size, max_new)
            if again_logprob > avg_logprob:
                self.unsure_redecodes_kept += 1
                tokens, avg_logprob = again, again_logprob
        text = str(self._tokenizer.decode(tokens)).strip()
        if (
            len(tokens) >= max_new
            or repeats_itself(tokens)
            or compression_ratio(text) > MAX_COMPRESSION_RATIO
            or avg_logprob < MIN_AVG_LOGPROB
        ):
            return None
        word_probs = self._word_probs(encoded, tokens, min(frames, n_frames)) if self._word_probs_on else []
        return Heard(text, avg_logprob, min(word_probs) if word_probs else None, no_speech_prob)

    def _decode(self, encoded: Any, beam_size: int, max_new: int) -> tuple[list[int], float, float]:
        """Decode the encoder's output: the tokens, their mean log-probability (CTranslate2's score is the
        sum over the tokens and the end of text, divided by their count) and the no-speech probability."""
        result: Any = self._decoder.generate(
            encoded,
            [self._prompt],
            beam_size=beam_size,
            max_length=len(self._prompt) + max_new,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=[-1],
        )[0]
        tokens: list[int] = list(result.sequences_ids[0])
        avg_logprob = float(result.scores[0]) * len(tokens) / (len(tokens) + 1) if tokens else 0.0
        return tokens, avg_logprob, float(result.no_speech_prob)

    def _word_probs(self, encoded: Any, tokens: list[int], n_frames: int) -> list[float]:
        """Each word's probability: its tokens' mean probability with the decoded text forced (one decoder pass,
        CTranslate2's ``align``), words split as faster-whisper's word timestamps split them."""
        text_tokens = [t for t in tokens if t < self._tokenizer.eot]
        if not text_tokens:
            return []
        aligned: Any = self._decoder.align(encoded, self._tokenizer.sot_sequence, [text_tokens], n_frames)[0]
        probs = list(aligned.text_token_probs)
        _words, word_tokens = self._tokenizer.split_to_word_tokens(text_tokens)
        found: list[float] = []
        start = 0
        for piece in word_tokens:
            end = start + len(piece)
            if any(c.isalnum() for c in self._tokenizer.decode(piece)) and probs[start:end]:
                found.append(float(np.mean(probs[start:end])))
            start = end
        return found
