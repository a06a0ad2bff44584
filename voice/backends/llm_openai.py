"""The LLM on a serving engine: any OpenAI-compatible streaming chat-completions server.

That covers llama.cpp's server, llama-cpp-python's ``python -m llama_cpp.server``, vLLM, SGLang and Ollama:
``POST {base_url}/chat/completions`` with ``stream: true``, read as server-sent events with httpx2's
``EventSource`` (one ``data:`` JSON chunk per token or few tokens, ``data: [DONE]`` at the end).

* **Sentence streaming** is unchanged: each content delta becomes a :class:`~voice.runtime.model_api.TextDelta` the
  moment it arrives, so the runtime's token marks give TTFT and ITL *as received*, network included.
* **Prompt report**: the server renders the chat template and keeps its own prefix cache. With
  ``stream_options: {include_usage: true}`` a server reports ``usage`` in its last chunk (vLLM, SGLang,
  Ollama, llama.cpp's server); ``usage.prompt_tokens_details.cached_tokens`` (or llama.cpp's
  ``timings.cache_n``) is the reused prefix. So the :class:`~voice.runtime.model_api.PromptInfo` comes **last**, after
  the reply; a server that reports no usage (llama-cpp-python's server) gives none, and the report's
  prompt-token fields stay 0.
* **Token counting** (``count_tokens``, used to trim the history to ``n_ctx``) is an estimate, not a
  round trip: the OpenAI API has no tokenize endpoint, the engines' own ones differ (vLLM's ``/tokenize``
  takes messages, llama.cpp's takes text, Ollama has none), and one more request per count would sit on
  the critical path before every reply. The estimate is deliberately high (a token per 3 characters,
  English BPE averages ~4, plus 5 per message for the template's glue), so the trimmed prompt fits; a
  prompt the server still refuses fails the turn with the server's message.
* **Cancellation** (barge-in): the runtime calls :meth:`OpenAiLlm.interrupt` from the event loop's thread
  when the turn is cancelled. It shuts the stream's socket down, so the worker thread's blocking read
  returns at once (it does not wait for the server's next token: measured here, interrupt → generator ended
  in 0.5 ms median, 0.8 ms max over 20 trials with the worker blocked in the read),
  the generator ends, and the server sees the connection close and stops generating (vLLM aborts the
  request, llama_cpp.server logs "disconnected"). Between tokens the ``cancel`` event is checked too. A
  cancel during the TCP connect waits for it (at most ``connect_timeout_s``), and one before the response
  headers arrived waits for them (servers built on Starlette/FastAPI, llama_cpp.server and vLLM among them,
  send them at once; a server that sends them with its first token makes that wait up to the TTFT).
* **Failures** raise :class:`LlmServerError` naming the server and what to check (not reachable, no
  token within ``read_timeout_s``, an HTTP error status, a stream cut before its end, or ended with
  ``[DONE]`` but no ``finish_reason``: a server that gave up on the reply); the turn reports
  it to the client as an ``internal`` error event and the session keeps serving.
* **Log-probabilities**: with ``[llm] request_logprobs`` the request asks for them (``logprobs: true,
  top_logprobs: 1``, in the OpenAI API; vLLM, SGLang, llama.cpp's and llama-cpp-python's servers give them), so
  the first sentence's confidence, and with it the ``[llm] not_sure`` gate
  (:mod:`voice.conversation.answer_confidence`), works on a remote model as on a local one.
  Each token of a chunk becomes its own :class:`~voice.runtime.model_api.TextDelta` with its log-probability (a
  chunk whose tokens do not spell its text is one delta, scored by their mean). A server that refuses the field
  (an HTTP error naming ``logprobs``) is asked once more without it, and from then on never; a warning says the
  gate is off for its replies, as for a server that sends none.
* **Buffering**: the arrival times of the tokens go through :func:`voice.backends.streamcheck.stream_shape`; a
  stream that arrives in one lump after a long wait is logged as a warning saying what to check.

The stream never uses this machine's cores for the model, so the runtime does not put its steps through
the compute gate (``uses_local_compute = False``).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2

from voice.backends.openai_stream import Usage, deltas_of, parse_chunk, prompt_info
from voice.backends.streamcheck import buffering_warning, stream_shape
from voice.config.config import LlmConfig
from voice.conversation.loops import ReplyGuard
from voice.conversation.prompt_view import PromptView
from voice.models import ModelError
from voice.runtime.model_api import ChatMessage, LlmEvent, TextDelta

log = logging.getLogger("voice.llm_openai")
# httpx2 logs every request at INFO: one line per turn in the server's log says nothing the turn line doesn't.
logging.getLogger("httpx2").setLevel(logging.WARNING)

CHARS_PER_TOKEN_ESTIMATE = 3.0
"""Deliberately fewer than English BPE's ~4 characters per token: the estimate errs high."""
TOKENS_PER_MESSAGE_ESTIMATE = 5
"""The chat template's glue around each message (``<|im_start|>role\\n … <|im_end|>\\n``)."""
REPLY_HEADER_TOKENS_ESTIMATE = 5


class LlmServerError(RuntimeError):
    """The LLM server gave no usable reply; the message names the server and what to check."""


def estimate_tokens(messages: Sequence[ChatMessage]) -> int:
    """A high estimate of the rendered prompt's length in tokens (see the module docstring)."""
    return REPLY_HEADER_TOKENS_ESTIMATE + sum(
        TOKENS_PER_MESSAGE_ESTIMATE + math.ceil(len(m.content) / CHARS_PER_TOKEN_ESTIMATE) for m in messages
    )


class OpenAiLlm:
    """An :class:`~voice.runtime.model_api.Llm` whose model runs on an OpenAI-compatible server."""

    uses_local_compute = False
    """The runtime skips the compute gate for this model's steps (they only read a socket)."""

    def __init__(self, config: LlmConfig, *, warm: bool = True) -> None:
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        headers = {"Accept-Encoding": "identity"}  # compressed event streams arrive late, in lumps
        if config.api_key_env:
            key = os.environ.get(config.api_key_env)
            if not key:
                raise ModelError(
                    f"[llm] api_key_env = {config.api_key_env!r}, but that environment variable is not set"
                )
            headers["Authorization"] = f"Bearer {key}"
        t = config.read_timeout_s
        self._client = httpx2.Client(
            headers=headers,
            timeout=httpx2.Timeout(connect=config.connect_timeout_s, read=t, write=t, pool=t),
            trust_env=False,  # the LLM server is addressed directly: no proxy from the environment
        )
        self.view = PromptView(config)
        self.logprobs = config.request_logprobs
        """Ask the server for the tokens' log-probabilities (``[llm] request_logprobs``; False once it refused them)."""
        self._lock = threading.Lock()
        self._response: httpx2.Response | None = None
        if warm:
            self.warm(ChatMessage("system", config.system_prompt))

    @property
    def n_ctx(self) -> int:
        """The context configured in ``[llm] n_ctx`` (set it to the server's context per request)."""
        return self.config.n_ctx

    def count_tokens(self, messages: Sequence[ChatMessage]) -> int:
        messages = self.view.preview(messages)
        return estimate_tokens(messages)

    def warm(self, system: ChatMessage) -> None:
        """One tiny request, so the server caches the system prompt's prefix and the connection is open.

        A server that is not up yet is logged, not fatal: turns fail with an error event until it is."""
        try:
            for _ in self._stream([system, ChatMessage("user", "Hi")], 1, threading.Event(), check=False):
                pass
        except LlmServerError as e:
            log.warning("the LLM server is not ready yet (turns fail until it is): %s", e)

    def close(self) -> None:
        self._client.close()

    def interrupt(self) -> None:
        """Stop the stream in progress at once, from any thread (see the module docstring)."""
        with self._lock:
            response = self._response
        if response is None:
            return
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def generate(
        self, messages: Sequence[ChatMessage], *, max_tokens: int, cancel: threading.Event
    ) -> Iterator[LlmEvent]:
        """TextDeltas as they arrive, then one PromptInfo if the server reported usage (see the module
        docstring). The request is sent at the first ``next()``."""
        messages = self.view.apply(messages)
        return self._stream(messages, max_tokens, cancel)

    def _body(self, messages: Sequence[ChatMessage], max_tokens: int) -> dict[str, Any]:
        c = self.config
        body: dict[str, Any] = {
            "model": c.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": max_tokens,
            "temperature": c.temperature,
        }
        if self.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 1  # llama-cpp-python's server gives none without it
        if c.repeat_penalty != 1.0:
            body["repeat_penalty"] = c.repeat_penalty  # llama.cpp's name; vLLM and Ollama ignore it
        return body

    def _stream(
        self, messages: Sequence[ChatMessage], max_tokens: int, cancel: threading.Event, *, check: bool = True
    ) -> Iterator[LlmEvent]:
        where = f"the LLM server at {self.url}"
        start_ns = time.perf_counter_ns()
        state = _StreamState(ReplyGuard(max_sentences=self.config.max_reply_sentences))
        refused = False
        try:
            with self._client.stream("POST", self.url, json=self._body(messages, max_tokens)) as response:
                with self._lock:
                    self._response = response
                try:
                    if cancel.is_set():
                        return
                    if response.status_code < 400:
                        yield from _deltas(response, state, cancel, where)
                    else:
                        body = response.read().decode("utf-8", "replace").strip()
                        refused = self._refuses_logprobs(response.status_code, body, where)
                        if not refused:
                            raise LlmServerError(
                                f"{where} answered HTTP {response.status_code} {response.reason_phrase}: "
                                f"{body[:300]}"
                            )
                finally:
                    with self._lock:
                        self._response = None
        except (httpx2.TransportError, ValueError) as e:
            interrupted = isinstance(e, httpx2.TransportError) and not isinstance(
                e, httpx2.TimeoutException | httpx2.ConnectError | httpx2.SSEError
            )
            if interrupted and cancel.is_set():
                return  # our own interrupt() shut the socket
            raise self._failure(e, where, len(state.arrivals_ns)) from None
        if refused:  # once: the body no longer asks for log-probabilities
            yield from self._stream(messages, max_tokens, cancel, check=check)
            return
        if cancel.is_set():
            return
        if not state.ended:
            raise LlmServerError(
                f"{where} closed the stream mid-reply after {len(state.arrivals_ns)} tokens (no finish_reason, "
                "no [DONE])"
            )
        shape = stream_shape(start_ns, state.arrivals_ns)
        if check and shape.buffered:
            log.warning(buffering_warning(shape, where))
        if state.usage is not None:
            yield prompt_info(state.usage)

    def _refuses_logprobs(self, status: int, body: str, where: str) -> bool:
        """The server answered a request that asked for log-probabilities with an error naming them: stop asking."""
        if not (self.logprobs and "logprob" in body.lower()):
            return False
        self.logprobs = False
        log.warning(
            "%s refused log-probabilities (HTTP %d: %s): asking without them from now on; [llm] not_sure cannot "
            "judge its replies",
            where,
            status,
            body[:200],
        )
        return True

    def _failure(self, e: Exception, where: str, tokens: int) -> LlmServerError:
        """What went wrong on the way to or from the server, in words."""
        if isinstance(e, httpx2.ConnectTimeout):
            return LlmServerError(
                f"cannot reach {where}: no connection within connect_timeout_s="
                f"{self.config.connect_timeout_s:g} s ([llm] base_url; is the server up?)"
            )
        if isinstance(e, httpx2.TimeoutException):
            what = "stalled mid-reply" if tokens else "sent no first token (overloaded, or still loading?)"
            return LlmServerError(f"{where} {what} within read_timeout_s={self.config.read_timeout_s:g} s")
        if isinstance(e, httpx2.ConnectError):
            return LlmServerError(f"cannot reach {where} ([llm] base_url; is the server up?): {e}")
        if isinstance(e, httpx2.SSEError):
            return LlmServerError(f"{where} did not answer with an event stream: {e}")
        if isinstance(e, ValueError):
            return LlmServerError(f"{where} sent something that is not a chat-completions stream: {e}")
        return LlmServerError(f"{where} cut the stream after {tokens} tokens: {type(e).__name__}: {e}")


@dataclass
class _StreamState:
    """What one reply's stream has brought so far."""

    guard: ReplyGuard
    arrivals_ns: list[int] = field(default_factory=list)
    usage: Usage | None = None
    ended: bool = False
    """A finish_reason arrived, or the reply was stopped here (closing the stream stops the server's generation)."""


def _deltas(
    response: httpx2.Response, state: _StreamState, cancel: threading.Event, where: str
) -> Iterator[TextDelta]:
    """The reply's text as the server streams it (server-sent events), until ``[DONE]``, a stop or a cancel."""
    for sse in httpx2.EventSource(response):
        if sse.data == "[DONE]":
            if not state.ended:  # every engine sends a finish_reason first, unless it gave up
                raise LlmServerError(
                    f"{where} ended the stream after {len(state.arrivals_ns)} tokens without a "
                    "finish_reason: it interrupted the reply (llama_cpp.server does when "
                    "another request arrives: start it with --interrupt_requests false)"
                )
            return
        chunk = parse_chunk(sse.data)
        if chunk.error is not None:
            raise LlmServerError(f"{where} reported an error mid-reply: {chunk.error}")
        state.usage = chunk.usage or state.usage
        state.ended = state.ended or chunk.finish_reason is not None
        if not chunk.text:
            continue
        if state.guard.stop_before(chunk.text):
            state.ended = True
            return
        state.arrivals_ns.append(time.perf_counter_ns())
        yield from deltas_of(chunk)
        if cancel.is_set():
            return
