"""The LLM: llama-cpp-python with the GGUF's own chat template and a reused KV prefix (prompt caching).

``Llama.generate`` keeps the KV cache of the tokens it evaluated last and, for a new prompt, evaluates only
what follows the longest common token prefix. The conversation is rendered the same way every turn and
the system prompt never changes, so each turn evaluates only the new user message (plus the template's
glue), and the system prompt is evaluated once, at start-up. :class:`~voice.runtime.model_api.PromptInfo` reports the
split, computed with the same rule ``generate`` applies.

With ``[llm] kv_cache_mb`` > 0, the KV state of each conversation is saved after its generation (one
sequence's KV cells, ``llama_state_seq_get_data``: ~23 KB per token for SmolLM2-135M) into a
:class:`~voice.runtime.kvcache.KvCache`, and restored before its next turn if the live context holds another
conversation's (:mod:`voice.runtime.kvcache` says how states are chosen and evicted). So sessions that take turns
each evaluate only their new tokens. The restore copies cells, it does not recompute them: the output is the
same as without the cache.
"""

from __future__ import annotations

import codecs
import ctypes
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from voice.config.config import LlmConfig
from voice.conversation.loops import ReplyGuard
from voice.conversation.prompt_view import PromptView
from voice.models import ModelMissingError, find_gguf
from voice.runtime.kvcache import KvCache, KvPlan, KvStats, common_prefix
from voice.runtime.model_api import ChatMessage, LlmEvent, PromptInfo, TextDelta

# Used when a GGUF has no chat template (base models such as Gemma 3 270M).
PLAIN_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}\n\n"
    "{% elif m['role'] == 'user' %}User: {{ m['content'] }}\n"
    "{% else %}Assistant: {{ m['content'] }}\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)


@dataclass(frozen=True)
class DraftStats:
    """What a draft model from :func:`prompt_lookup_draft` has done since it was made."""

    calls: int
    """Batched decode steps it was asked to propose tokens for."""
    proposed_tokens: int
    """Tokens it proposed, accepted or not."""


def prompt_lookup_draft(max_ngram_size: int, num_pred_tokens: int) -> Any:
    """llama-cpp-python's prompt-lookup draft model, counting its calls and proposals.

    Pass it as ``LlamaLlm(..., draft_model=...)``; :attr:`LlamaLlm.draft_stats` then reads the counters. It
    proposes the tokens that followed the last n-gram (up to ``max_ngram_size`` tokens) wherever it occurred
    earlier in the context, ``num_pred_tokens`` at a time.
    """
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    class Counting(LlamaPromptLookupDecoding):
        calls = 0
        proposed = 0

        def __call__(self, input_ids: Any, /, **kwargs: Any) -> Any:
            out = super().__call__(input_ids, **kwargs)
            self.calls += 1
            self.proposed += len(out)
            return out

    return Counting(max_ngram_size=max_ngram_size, num_pred_tokens=num_pred_tokens)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log softmax(``logits``) in float64, computed stably."""
    x = logits.astype(np.float64)
    top = float(x.max())
    return x - top - float(np.log(np.exp(x - top).sum()))


def token_logprob(logits: np.ndarray, token: int) -> float:
    """log softmax(``logits``)[``token``]."""
    return float(log_softmax(logits)[token])


class LlamaLlm:
    def __init__(self, model_dir: Path, config: LlmConfig, *, draft_model: Any = None) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.config = config
        path = find_gguf(model_dir, config.model)
        try:
            self._llm = Llama(
                model_path=str(path),
                n_ctx=config.n_ctx,
                n_batch=config.n_batch,
                n_threads=config.n_threads,
                n_threads_batch=config.n_threads,
                draft_model=draft_model,
                verbose=False,
            )
        except ValueError as e:  # llama-cpp-python raises ValueError for unreadable models
            raise ModelMissingError(
                f"cannot load {path}: {e}; run: voice models pull {config.model}"
            ) from None
        model = self._llm._model
        template = self._llm.metadata.get("tokenizer.chat_template") or PLAIN_TEMPLATE
        self.has_chat_template = "tokenizer.chat_template" in self._llm.metadata
        self._formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=model.token_get_text(self._llm.token_eos()),
            bos_token=model.token_get_text(self._llm.token_bos()),
            add_generation_prompt=True,
        )
        self._lock = threading.Lock()
        self._kv: KvCache[bytes] = KvCache(config.kv_cache_mb * 1024 * 1024)
        self._common_tokens = 0  # the prompt prefix every conversation starts with (set by warm)
        self.view = PromptView(config)
        self.warm(ChatMessage("system", config.system_prompt))

    @property
    def n_ctx(self) -> int:
        return int(self._llm.n_ctx())

    def tokens(self, messages: Sequence[ChatMessage]) -> tuple[list[int], list[str]]:
        """Token ids of the rendered prompt (ending with the assistant header) and the stop strings."""
        chat: list[Any] = [{"role": m.role, "content": m.content} for m in messages]
        rendered = self._formatter(messages=chat)
        ids = self._llm.tokenize(
            rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True
        )
        stop = rendered.stop if isinstance(rendered.stop, list) else [rendered.stop] if rendered.stop else []
        return ids, stop

    def count_tokens(self, messages: Sequence[ChatMessage]) -> int:
        """Tokens of the prompt as :meth:`generate` will render it (tidied, with the grounding notes if on)."""
        messages = self.view.preview(messages)
        return len(self.tokens(messages)[0])

    def warm(self, system: ChatMessage) -> None:
        """Evaluate the part of the prompt every turn starts with (the system prompt), once."""
        a, _ = self.tokens([system, ChatMessage("user", "a")])
        b, _ = self.tokens([system, ChatMessage("user", "b")])
        prefix = a[: common_prefix(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))]
        with self._lock:
            self._llm.reset()  # type: ignore[no-untyped-call]
            self._llm.eval(prefix)
            self._common_tokens = len(prefix)
            self._save_state()

    # ------------------------------------------------------------------ per-conversation KV states
    def kv_stats(self) -> KvStats:
        """Size and counters of the saved KV states (``/metrics``)."""
        return self._kv.stats()

    def _live_prefix(self, tokens: Sequence[int]) -> int:
        return common_prefix(np.asarray(self._llm._input_ids, dtype=np.int64), np.asarray(tokens, dtype=np.int64))

    def _save_state(self) -> None:
        """Save the live context's KV cells (sequence 0) keyed by its tokens. Under ``_lock``."""
        if not self._kv.enabled or self._llm.n_tokens == 0:
            return
        import llama_cpp

        t0 = time.perf_counter()
        ctx = self._llm._ctx.ctx
        size = int(llama_cpp.llama_state_seq_get_size(ctx, 0))
        buf = (ctypes.c_uint8 * size)()
        written = int(llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0))
        self._kv.put(list(self._llm._input_ids), bytes(buf)[:written], written, common_tokens=self._common_tokens)
        self._kv.timed_save((time.perf_counter() - t0) * 1000)

    def _restore_state(self, key: tuple[int, ...]) -> float:
        """Make the saved state ``key`` the live context; returns the milliseconds it took. Under ``_lock``."""
        import llama_cpp

        t0 = time.perf_counter()
        data = self._kv.get(key)
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if not llama_cpp.llama_state_seq_set_data(self._llm._ctx.ctx, buf, len(data), 0):
            self._llm.reset()  # type: ignore[no-untyped-call]
            raise RuntimeError(f"llama.cpp could not restore a saved KV state of {len(key)} tokens")
        self._llm.input_ids[: len(key)] = key
        self._llm.n_tokens = len(key)
        self._llm._requires_eval = True  # the logits are not restored: generate re-evaluates a token
        ms = (time.perf_counter() - t0) * 1000
        self._kv.timed_restore(ms)
        return ms

    def plan(self, tokens: Sequence[int]) -> PromptInfo:
        """How many of ``tokens`` the KV cache already holds (the rule ``Llama.generate`` applies)."""
        cached = list(self._llm._input_ids)
        common = 0
        for x, y in zip(cached, tokens, strict=False):
            if x != y:
                break
            common += 1
        if common == len(tokens):
            reused = (
                len(tokens) if len(cached) == len(tokens) and not self._llm._requires_eval else common - 1
            )
        else:
            reused = common
        reused = max(reused, 0)
        return PromptInfo(
            prompt_tokens=len(tokens), reused_tokens=reused, evaluated_tokens=len(tokens) - reused
        )

    def generate(
        self, messages: Sequence[ChatMessage], *, max_tokens: int, cancel: threading.Event
    ) -> Iterator[LlmEvent]:
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("the LLM instance is already generating (one inference at a time)")
        try:
            messages = self.view.apply(messages)
            tokens, stops = self.tokens(messages)
            if len(tokens) + max_tokens > self.n_ctx:
                raise ValueError(f"prompt of {len(tokens)} tokens + {max_tokens} reply tokens exceeds n_ctx")
            kv = self._kv.plan(tokens, self._live_prefix(tokens))
            restore_ms = self._restore_state(kv.restore) if kv.restore is not None else 0.0
            yield self._prompt_info(tokens, kv, restore_ms)
            try:
                yield from self._stream(tokens, stops, max_tokens, cancel)
            finally:
                self._save_state()
        finally:
            self._lock.release()

    def _prompt_info(self, tokens: Sequence[int], kv: KvPlan, restore_ms: float) -> PromptInfo:
        p = self.plan(tokens)
        return PromptInfo(
            prompt_tokens=p.prompt_tokens,
            reused_tokens=p.reused_tokens,
            evaluated_tokens=p.evaluated_tokens,
            kv_restore_ms=round(restore_ms, 3),
            kv_reevaluated_tokens=min(kv.reevaluated_tokens, p.evaluated_tokens),
            kv_cache_bytes=self._kv.stats().bytes_in_use,
        )

    def _stream(
        self, tokens: list[int], stops: list[str], max_tokens: int, cancel: threading.Event
    ) -> Iterator[TextDelta]:
        import llama_cpp

        vocab = self._llm._model.vocab
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text = ""
        temp = self.config.temperature
        steps = self._llm.generate(
            tokens,
            temp=temp,
            top_k=1 if temp == 0 else 40,
            repeat_penalty=self.config.repeat_penalty,
            reset=True,
        )
        guard = ReplyGuard(max_sentences=self.config.max_reply_sentences)
        for n, tok in enumerate(steps, start=1):
            if cancel.is_set() or llama_cpp.llama_vocab_is_eog(vocab, tok):
                return
            piece = decoder.decode(self._llm.detokenize([tok]))
            text += piece
            if any(s and s in text for s in stops):
                return
            if guard.stop_before(piece):
                return
            yield TextDelta(piece, self._logprob(tok))
            if n >= max_tokens:
                return

    def _logprob(self, token: int) -> float | None:
        """The log-probability of ``token`` under the logits it was sampled from: the last evaluated position's,
        still in the context until the next step evaluates it. With a draft model several positions are
        evaluated at once, so which row belongs to ``token`` is not known here: None."""
        if self._llm.draft_model is not None:
            return None
        ptr = self._llm._ctx.get_logits_ith(-1)
        logits = np.ctypeslib.as_array(ptr, shape=(self._llm.n_vocab(),))
        return token_logprob(logits, token)

    # ------------------------------------------------------------------ for benchmarks
    def reset_cache(self) -> None:
        """Empty the KV cache and the saved states, so that the next prompt is evaluated from its first token."""
        with self._lock:
            self._llm.reset()  # type: ignore[no-untyped-call]
            self._kv.clear()

    def greedy_steps(self, tokens: Sequence[int]) -> Generator[int, None, None]:
        """Greedy token ids after ``tokens``, one llama.cpp decode step per ``next()``, without end.

        No stop strings and no end-of-generation check: for benchmarks that time or interleave single steps.
        Like :meth:`generate`, it holds the instance from the first ``next()`` until closed.
        """
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("the LLM instance is already generating (one inference at a time)")
        try:
            yield from self._llm.generate(list(tokens), temp=0.0, top_k=1, reset=True)
        finally:
            self._lock.release()

    @property
    def draft_stats(self) -> DraftStats | None:
        """The counters of a draft model made by :func:`prompt_lookup_draft`; None for any other or none."""
        draft = self._llm.draft_model
        calls, proposed = getattr(draft, "calls", None), getattr(draft, "proposed", None)
        if not isinstance(calls, int) or not isinstance(proposed, int):
            return None
        return DraftStats(calls=calls, proposed_tokens=proposed)
