"""The model interfaces the pipeline needs. Real backends live in ``voice.backends``; fakes in ``voice.runtime.fakes``.

Every method that runs a model (transcribe, generate, count_tokens, synthesize, probability) is blocking and is
called from a worker thread, never from the event loop; ``Vad.stream()`` only makes a stream's state.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True)
class PromptInfo:
    """What prompt evaluation cost: tokens reused from the KV cache vs evaluated anew."""

    prompt_tokens: int
    reused_tokens: int
    evaluated_tokens: int
    trimmed_messages: int = 0
    """History messages dropped to fit the context window."""
    kv_restore_ms: float = 0.0
    """Time spent copying this conversation's saved KV state back into the context (0: none restored)."""
    kv_reevaluated_tokens: int = 0
    """Of ``evaluated_tokens``, those a saved KV state held until it was evicted (the KV cache was full)."""
    kv_cache_bytes: int = 0
    """Saved KV states in memory when the prompt was planned (0: no per-conversation KV cache)."""


@dataclass(frozen=True)
class TextDelta:
    """A piece of generated text (one token's worth)."""

    text: str
    logprob: float | None = None
    """The model's natural-log probability of this token, from its raw logits (before any repeat penalty);
    None when the backend cannot say (a skill's reply, a server that gives none, speculative decoding)."""


LlmEvent = PromptInfo | TextDelta


class VadStream(Protocol):
    """Streaming voice-activity detection for one audio stream (keeps its own recurrent state)."""

    frame_samples: int
    """Samples per frame at 16 kHz (512 for Silero)."""

    def probability(self, frame: np.ndarray) -> float:
        """Speech probability of one frame of ``frame_samples`` float32 samples."""
        ...

    def reset(self) -> None: ...


class Vad(Protocol):
    def stream(self) -> VadStream:
        """A new stream with fresh state; the model itself is shared."""
        ...


@dataclass(frozen=True)
class Heard:
    """What the STT made of an utterance, and how sure it was."""

    text: str
    avg_logprob: float | None = None
    """Mean log-probability per token of the decoded text (Whisper's own confidence; None: the backend does
    not say). Near 0 is sure; below about -0.6 the words are often wrong (voice.turn.pipeline asks again)."""
    min_word_prob: float | None = None
    """The probability of its least likely word (each word's tokens' mean probability under the decoder, read
    with the decoded text forced, as faster-whisper's word timestamps give it; None: not measured or no word).
    One misheard word in a sentence the mean hides shows here."""
    no_speech_prob: float | None = None
    """Whisper's probability that the audio holds no speech (its no-speech token at the first step; None: the
    backend does not say)."""


class Stt(Protocol):
    def transcribe(self, audio: np.ndarray) -> str:
        """Transcribe float32 mono 16 kHz audio; returns the text (may be empty)."""
        ...

    def hear(self, audio: np.ndarray) -> Heard:
        """:meth:`transcribe`, with the decoder's confidence."""
        ...


class Llm(Protocol):
    def count_tokens(self, messages: Sequence[ChatMessage]) -> int:
        """Prompt length in tokens of ``messages`` rendered with the chat template, plus the reply header."""
        ...

    @property
    def n_ctx(self) -> int: ...

    def generate(
        self, messages: Sequence[ChatMessage], *, max_tokens: int, cancel: threading.Event
    ) -> Iterator[LlmEvent]:
        """Yield one :class:`PromptInfo` first, then :class:`TextDelta` per token. (An LLM on a server learns
        the prompt's cost only at the end of the stream: it yields its PromptInfo last, or none.)

        Lazy: every step of the iterator is blocking model work, so the caller iterates it in a worker
        thread (one step at a time under the compute gate). Setting ``cancel`` stops it after the current
        token.
        """
        ...


class Tts(Protocol):
    sample_rate: int

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        """Yield int16 mono audio at ``sample_rate``, one piece per synthesis step (lazy, blocking)."""
        ...
