"""Fake models configured by data, for fast tests and for benchmarking the tools themselves.

Each fake "takes time" through a :class:`Delay`: with a :class:`~voice.clock.FakeClock` it advances the
clock (deterministic reports, no sleeping), otherwise it sleeps for real (tests over real sockets).
Because every compute step goes through the compute gate, fake-clock advances never overlap.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from voice.clock import FakeClock
from voice.runtime.kvcache import KvCache, KvStats
from voice.runtime.model_api import ChatMessage, Heard, LlmEvent, PromptInfo, TextDelta


@dataclass(frozen=True)
class Delay:
    clock: FakeClock | None = None
    scale: float = 1.0

    def wait_ms(self, ms: float) -> None:
        if ms <= 0:
            return
        if self.clock is not None:
            self.clock.advance_ms(ms)
        else:
            time.sleep(ms * self.scale / 1000)


class FakeVadStream:
    """Speech probability 1.0 when a frame's RMS exceeds ``rms_threshold``, else 0.0."""

    frame_samples = 512

    def __init__(self, rms_threshold: float) -> None:
        self.rms_threshold = rms_threshold

    def probability(self, frame: np.ndarray) -> float:
        rms = float(np.sqrt(np.mean(np.square(frame, dtype=np.float64)))) if len(frame) else 0.0
        return 1.0 if rms > self.rms_threshold else 0.0

    def reset(self) -> None:
        pass


@dataclass(frozen=True)
class FakeVad:
    rms_threshold: float = 0.02

    def stream(self) -> FakeVadStream:
        return FakeVadStream(self.rms_threshold)


@dataclass
class FakeStt:
    """Returns ``texts`` in turn (cycling) after ``latency_ms``; :meth:`hear` gives each the confidence of the
    same place in ``avg_logprobs`` and the least likely word's probability of the same place in ``min_word_probs``
    (each cycling too)."""

    texts: Sequence[str] = ("hello there",)
    latency_ms: float = 100.0
    delay: Delay = Delay()
    avg_logprobs: Sequence[float | None] = (None,)
    min_word_probs: Sequence[float | None] = (None,)

    def __post_init__(self) -> None:
        self._next = itertools.cycle(self.texts)
        self._confidence = itertools.cycle(self.avg_logprobs)
        self._word_confidence = itertools.cycle(self.min_word_probs)
        self.calls = 0

    def transcribe(self, audio: np.ndarray) -> str:
        self.calls += 1
        self.delay.wait_ms(self.latency_ms)
        return next(self._next)

    def hear(self, audio: np.ndarray) -> Heard:
        return Heard(self.transcribe(audio), next(self._confidence), next(self._word_confidence))


def render_words(messages: Sequence[ChatMessage]) -> list[str]:
    """The fake's "tokens": a role marker per message, then the words; plus the reply header."""
    tokens: list[str] = []
    for m in messages:
        tokens.append(f"<{m.role}>")
        tokens.extend(m.content.split())
        tokens.append("<end>")
    tokens.append("<assistant>")
    return tokens


@dataclass
class FakeLlm:
    """Streams ``replies`` in turn, one word per token, with a simulated KV prefix cache.

    Prompt evaluation costs ``prefill_ms_per_token`` for each token not already in the cache, so TTFT
    behaves like the real thing: small when the prefix is cached, growing with uncached prompt length.
    With ``kv_cache_bytes`` > 0 it also keeps per-conversation states like the real LLM (a
    :class:`~voice.runtime.kvcache.KvCache` of ``kv_bytes_per_token`` per token), so interleaved sessions each
    evaluate only their new tokens until the bound evicts their state.
    """

    replies: Sequence[str] = ("Hello! How can I help you today?",)
    reply_to: Callable[[str], str] | None = None
    """Keyed by input: the reply to the last user message's text (instead of ``replies`` in turn)."""
    prompts_kept: int | None = None
    """Keep only the last this many prompts in :attr:`prompts` (a soak makes thousands); None: all."""
    prefill_ms_per_token: float = 1.0
    ttft_floor_ms: float = 20.0
    itl_ms: float = 10.0
    context: int = 2048
    delay: Delay = Delay()
    kv_cache_bytes: int = 0
    kv_bytes_per_token: int = 1000
    word_logprobs: Mapping[str, float] | None = None
    """Each token's log-probability: its word's here, else 0.0 (sure); None: the fake gives none."""

    def __post_init__(self) -> None:
        self._next = itertools.cycle(self.replies)
        self._cache: list[str] = []
        self._lock = threading.Lock()
        self._kv: KvCache[list[str]] = KvCache(self.kv_cache_bytes)
        self._ids: dict[str, int] = {}
        self.prompts: list[list[ChatMessage]] = []

    def kv_stats(self) -> KvStats | None:
        return self._kv.stats() if self._kv.enabled else None

    def _token_ids(self, words: Sequence[str]) -> list[int]:
        return [self._ids.setdefault(w, len(self._ids)) for w in words]

    @property
    def n_ctx(self) -> int:
        return self.context

    def count_tokens(self, messages: Sequence[ChatMessage]) -> int:
        return len(render_words(messages))

    def generate(
        self, messages: Sequence[ChatMessage], *, max_tokens: int, cancel: threading.Event
    ) -> Iterator[LlmEvent]:
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("FakeLlm used by two generations at once")
        try:
            self.prompts.append(list(messages))
            if self.prompts_kept is not None and len(self.prompts) > self.prompts_kept:
                del self.prompts[: len(self.prompts) - self.prompts_kept]
            tokens = render_words(messages)
            if len(tokens) + max_tokens > self.context:
                raise ValueError(f"prompt of {len(tokens)} tokens exceeds context window {self.context}")
            reused = 0
            for a, b in zip(self._cache, tokens, strict=False):
                if a != b:
                    break
                reused += 1
            kv = self._kv.plan(self._token_ids(tokens), reused)
            if kv.restore is not None:
                self._cache = list(self._kv.get(kv.restore))
                reused = kv.cached_tokens
            evaluated = len(tokens) - reused
            yield PromptInfo(
                len(tokens),
                reused,
                evaluated,
                kv_reevaluated_tokens=min(kv.reevaluated_tokens, evaluated),
                kv_cache_bytes=self._kv.stats().bytes_in_use,
            )
            self._cache = list(tokens)
            try:
                yield from self._reply(self._words(messages), evaluated, max_tokens, cancel)
            finally:
                size = len(self._cache) * self.kv_bytes_per_token
                common = len(render_words(messages[:1]))  # the system prompt and the next role marker
                self._kv.put(self._token_ids(self._cache), list(self._cache), size, common_tokens=common)
        finally:
            self._lock.release()

    def _words(self, messages: Sequence[ChatMessage]) -> list[str]:
        if self.reply_to is None:
            return next(self._next).split(" ")
        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        return self.reply_to(user).split(" ")

    def _reply(
        self, words: list[str], evaluated: int, max_tokens: int, cancel: threading.Event
    ) -> Iterator[TextDelta]:
        for i, word in enumerate(words[:max_tokens]):
            if cancel.is_set():
                return
            if i == 0:
                self.delay.wait_ms(self.ttft_floor_ms + evaluated * self.prefill_ms_per_token)
            else:
                self.delay.wait_ms(self.itl_ms)
            piece = word if i == 0 else " " + word
            self._cache.append(word)
            yield TextDelta(piece, None if self.word_logprobs is None else self.word_logprobs.get(word, 0.0))


@dataclass
class FakeTts:
    """A 220 Hz tone lasting ``audio_ms_per_char`` per character, after ``latency_ms`` + ``rtf`` × duration."""

    sample_rate: int = 16000
    latency_ms: float = 30.0
    audio_ms_per_char: float = 60.0
    rtf: float = 0.05
    delay: Delay = Delay()

    def __post_init__(self) -> None:
        self.texts: list[str] = []

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        self.texts.append(text)
        duration_ms = len(text) * self.audio_ms_per_char
        self.delay.wait_ms(self.latency_ms + self.rtf * duration_ms)
        n = int(self.sample_rate * duration_ms / 1000)
        t = np.arange(n) / self.sample_rate
        yield (0.3 * 32767 * np.sin(2 * np.pi * 220 * t)).astype(np.int16)
