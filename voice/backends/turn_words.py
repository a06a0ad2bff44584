"""The end of a turn read from its words by a small language model (``[turn] words_model``).

A second llama.cpp instance of a catalogue GGUF (by default the assistant's own SmolLM2-135M: ~100 MB more), apart
from the LLM that answers, so neither disturbs the other's KV cache. :meth:`WordsEndModel.end_probability` renders
the words as the user's message after the assistant's system prompt (``[llm] system_prompt``) in the GGUF's chat
template, cuts the prompt right after them, and returns the probability that the next token ends the sentence or
the turn (:mod:`voice.turn.words_end`). The system prompt is the context a reader needs: with the template's own
generic one, SmolLM2 reads "tell me a joke" and "stop" as sentences that go on (P 0.015 and 0.005); told it is a
voice assistant, as turns that end (0.24 and 0.027), while "what is the capital of" stays at 0.0001. The head
(system prompt and user header) is evaluated once; each call evaluates only the words, about 5–25 tokens. It runs
on the VAD thread, as the audio end-of-turn model does, with ``THREADS`` llama.cpp thread(s). Blocking; one call
at a time (a lock).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from voice.backends.llm_llama import PLAIN_TEMPLATE, log_softmax
from voice.models import ModelMissingError, find_gguf
from voice.runtime.kvcache import common_prefix
from voice.turn.words_end import ends_p, is_ending, normalize, user_prefix

#: llama.cpp threads: the words are a few tokens, and the speculative reply's STT and LLM use the cores meanwhile.
THREADS = 1
#: Context of the instance: the template's head and the words of one utterance (a long one is cut to its end).
N_CTX = 512
#: At most this many tokens of the words are read (their end: that is where the turn ends or goes on).
MAX_WORD_TOKENS = 256
_PLACEHOLDER = "WORDSWORDS"


class WordsEndModel:
    """The probability that an utterance's words end the turn, from a GGUF language model (module docstring)."""

    def __init__(self, model_dir: Path, name: str, system_prompt: str = "") -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        path = find_gguf(model_dir, name)
        try:
            self._llm = Llama(
                model_path=str(path),
                n_ctx=N_CTX,
                n_threads=THREADS,
                n_threads_batch=THREADS,
                verbose=False,
            )
        except ValueError as e:  # llama-cpp-python raises ValueError for unreadable models
            raise ModelMissingError(f"cannot load {path}: {e}; run: voice models pull {name}") from None
        model = self._llm._model
        formatter = Jinja2ChatFormatter(
            template=self._llm.metadata.get("tokenizer.chat_template") or PLAIN_TEMPLATE,
            eos_token=model.token_get_text(self._llm.token_eos()),
            bos_token=model.token_get_text(self._llm.token_bos()),
            add_generation_prompt=False,
        )
        messages: list[Any] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        rendered = formatter(messages=[*messages, {"role": "user", "content": _PLACEHOLDER}])
        self._add_bos = not rendered.added_special
        head = user_prefix(rendered.prompt, _PLACEHOLDER)[: -len(_PLACEHOLDER)]
        tail = rendered.prompt[len(head) + len(_PLACEHOLDER) :]
        self._head_tokens = list(self._llm.tokenize(head.encode("utf-8"), add_bos=self._add_bos, special=True))
        turn_end = self._llm.tokenize(tail.encode("utf-8"), add_bos=False, special=True)[:1]
        self.ending_ids = np.asarray(sorted({*turn_end, *self._ending_pieces()}), dtype=np.int64)
        """The tokens whose probabilities are summed: the template's end-of-turn token and the sentence ends."""
        self._lock = threading.Lock()
        with self._lock:
            self._llm.reset()  # type: ignore[no-untyped-call]
            self._llm.eval(self._head_tokens)

    def _tokens(self, words: str) -> list[int]:
        """The template's head (its special tokens as such), then the words (never read as special tokens)."""
        return self._head_tokens + list(self._llm.tokenize(words.encode("utf-8"), add_bos=False, special=False))

    def _ending_pieces(self) -> list[int]:
        out = []
        for i in range(self._llm.n_vocab()):
            if is_ending(self._llm.detokenize([i]).decode("utf-8", errors="replace")):
                out.append(i)
        return out

    def end_probability(self, text: str) -> float | None:
        """The probability that the turn ends after ``text`` (a transcript); None when it holds no words."""
        words = normalize(text)
        if not words:
            return None
        tokens = self._tokens(words)
        n_head = len(self._head_tokens)
        if len(tokens) - n_head > MAX_WORD_TOKENS:
            tokens = tokens[:n_head] + tokens[-MAX_WORD_TOKENS:]
        with self._lock:
            # Only the head is reused: the words are evaluated in one batch every time, so the answer does not
            # depend on the words read before (llama.cpp's sums differ slightly with the batch's size).
            cached = np.asarray(self._llm._input_ids, dtype=np.int64)
            keep = min(common_prefix(cached, np.asarray(tokens, dtype=np.int64)), n_head)
            self._llm.n_tokens = keep  # eval() drops the KV cells after it
            self._llm.eval(tokens[keep:])
            logits = np.ctypeslib.as_array(self._llm._ctx.get_logits_ith(-1), shape=(self._llm.n_vocab(),))
            return ends_p(log_softmax(logits)[self.ending_ids])
