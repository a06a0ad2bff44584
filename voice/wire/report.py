"""The latency report of one turn, as the server sends it (the ``turn_report`` event) and the tools read it back:
the hand-over marks and stage names of a turn, the LLM's streaming metrics and :class:`TurnReport`. The timer
that makes a report is :mod:`voice.turn.budget`.

LLM metrics follow the usual serving definitions:

* ``ttft_ms``   time to first token: LLM start (after any queue wait) → first generated token
* ``itl_ms``    inter-token latency: gaps between consecutive generated tokens (mean and p95)
* ``tps``       tokens per second of the stream, ``1000 / itl_mean_ms``
* ``e2e_ms``    LLM start → last token; ``e2e_ms == ttft_ms + (n_tokens - 1) * itl_mean_ms``
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

#: Hand-over marks in pipeline order; stage ``i`` runs from ``MARKS[i]`` to ``MARKS[i + 1]``.
MARKS: tuple[str, ...] = (
    "speech_end",  # the user's last voiced audio (when it arrived, less the silence after it)
    "endpoint",  # the VAD decided the turn is over
    "stt_start",  # the STT model (and compute slot) was acquired
    "stt_done",  # transcript ready
    "llm_start",  # the LLM (and compute slot) was acquired; prompt evaluation starts
    "first_token",  # first generated token
    "first_clause",  # the sentence splitter released the first speakable clause
    "tts_start",  # the TTS (and compute slot) was acquired for that clause
    "tts_first_audio",  # first synthesized audio of the reply
    "first_audio_sent",  # first reply audio chunk handed to the websocket
)

#: Stage names, one per consecutive pair of marks.
STAGES: tuple[str, ...] = (
    "endpoint_silence",
    "stt_queue",
    "stt",
    "llm_queue",
    "llm_ttft",
    "first_clause",
    "tts_queue",
    "tts_first_audio",
    "send",
)


def ns_to_ms(ns: int) -> float:
    return round(ns / 1_000_000, 3)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank-interpolated percentile (``q`` in 0..100) of a non-empty sequence."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    s = sorted(values)
    if len(s) == 1:
        return s[0]
    k = (len(s) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


@dataclass(frozen=True)
class LlmMetrics:
    """Streaming metrics of one generation, in milliseconds (see the module docstring)."""

    n_tokens: int
    ttft_ms: float
    itl_mean_ms: float
    itl_p95_ms: float
    tps: float
    e2e_ms: float
    spread_ms: float = 0.0
    """First → last token arrival: with ``n_tokens``, how the stream arrived (a few ms for many tokens after
    a long TTFT: buffered on the way, see :mod:`voice.backends.streamcheck`)."""

    @classmethod
    def from_marks(cls, start_ns: int, token_ns: Sequence[int]) -> LlmMetrics | None:
        """Metrics from the LLM start time and the arrival time of each generated token."""
        if not token_ns:
            return None
        gaps = [b - a for a, b in itertools.pairwise(token_ns)]
        itl_mean = statistics.fmean(gaps) if gaps else 0.0
        return cls(
            n_tokens=len(token_ns),
            ttft_ms=ns_to_ms(token_ns[0] - start_ns),
            itl_mean_ms=round(itl_mean / 1e6, 3),
            itl_p95_ms=round(percentile(gaps, 95) / 1e6, 3) if gaps else 0.0,
            tps=round(1e9 / itl_mean, 2) if itl_mean > 0 else 0.0,
            e2e_ms=ns_to_ms(token_ns[-1] - start_ns),
            spread_ms=ns_to_ms(token_ns[-1] - token_ns[0]),
        )


@dataclass(frozen=True)
class TurnReport:
    """The latency report of one turn. All durations are milliseconds."""

    session_id: str
    turn_id: int
    stages_ms: dict[str, float]
    total_ms: float | None
    target_ms: int
    over_budget: tuple[str, ...]
    cancelled: bool
    prompt_tokens_reused: int = 0
    prompt_tokens_evaluated: int = 0
    generated_tokens: int = 0
    llm: LlmMetrics | None = None
    transcript: str = ""
    reply_text: str = ""
    reply_audio_ms: float = 0.0
    utterance_ms: float = 0.0
    forced_endpoint: bool = False
    history_trimmed: int = 0
    outcome: str = "ok"  # ok | cancelled | no_speech | error
    speculative: bool = False
    """The reply was started at a pause, before the end of the turn was confirmed."""
    speculation_lead_ms: float = 0.0
    """How long before the endpoint the speculative reply started (work hidden in the silence)."""
    work_to_first_audio_ms: float | None = None
    """The reply's work, from its start to its first audio being ready (the TTS's first chunk, not yet sent):
    from the pause a speculative reply started at, else from the endpoint. Unlike the stages it is not clipped
    at the endpoint, so it tells a fast model from a slow one whose work the silence hid; longer than
    ``speculation_lead_ms`` when the audio came after the endpoint. None: the turn made no audio."""
    speculations_discarded: int = 0
    """Speculative replies started and thrown away during this utterance (the user went on speaking)."""
    turn_score: float | None = None
    """The end-of-turn model's probability that the turn was complete (None: no model)."""
    turn_words_p: float | None = None
    """The words model's probability that the transcript heard at the pause ends the turn (``[turn] words_model``;
    None: no such model, no words read by the end, or words the grammar already called unfinished): with
    ``turn_score`` and the silence waited, why a turn ended when it did."""
    stt_avg_logprob: float | None = None
    """The STT's mean log-probability per token for this utterance (its confidence; None: not transcribed, or the
    STT gives none)."""
    stt_min_word_prob: float | None = None
    """The probability of the least likely word the STT heard (None: not measured)."""
    stt_no_speech_prob: float | None = None
    """Whisper's probability that the utterance held no speech (None: the STT gives none)."""
    answer_logprob_mean: float | None = None
    """How sure the LLM was of its reply's first sentence: its tokens' mean log-probability, the first token left
    out (:mod:`voice.conversation.answer_confidence`; None: a skill answered, or the backend gives none)."""
    answer_logprob_min: float | None = None
    """The lowest of those log-probabilities."""
    asked_again: bool = False
    """The reply asked the user to say it again: the STT was unsure (``[stt] ask_again``), and neither the words
    heard nor the reply went into the history; or the LLM's reply only echoed the user's words and was replaced
    (:mod:`voice.conversation.reply_check`), and both did."""
    initiator: str = "user"
    """Who started the turn: ``user`` (they spoke or typed) or ``timer`` (a timer rang: the server speaks by
    itself; ``speech_end`` and ``endpoint`` are then the moment it was due, so ``total_ms`` is how late the
    announcement's first audio was)."""
    kv_restore_ms: float = 0.0
    """Time spent restoring this conversation's saved KV state before its prompt (0: none restored)."""
    kv_evicted: bool = False
    """This conversation's saved KV state had been evicted (the KV cache was full): its history was evaluated again."""
    kv_reevaluated_tokens: int = 0
    """Prompt tokens evaluated again because of that eviction (part of ``prompt_tokens_evaluated``)."""
    kv_cache_mb: float = 0.0
    """Saved KV states of all conversations in memory when this turn's prompt was planned."""
    stage_budgets_ms: dict[str, float] = field(default_factory=dict)
    """Each stage's allocation from ``[budget]`` (what ``over_budget`` compares against)."""
    stage_offsets_ms: dict[str, float] = field(default_factory=dict)
    """When each stage starts, in ms after the end of the user's speech (for timelines); stages after a
    missing one (a turn that ended early) have no offset."""
    reply_audio_sent_spread_ms: float | None = None
    """From the first reply audio chunk handed to the websocket to the last (server clock): how long the
    reply took to leave the server. A client that receives it in much less time sits behind a buffer
    (:mod:`voice.bench.burst`). None when fewer than two chunks were sent."""

    def to_dict(self, *, include_text: bool = True) -> dict[str, Any]:
        d = asdict(self)
        d["over_budget"] = list(self.over_budget)
        # Stages flattened as "<stage>_ms" for tools that want one flat object.
        for name, value in self.stages_ms.items():
            d[f"{name}_ms"] = value
        if not include_text:
            d.pop("transcript")
            d.pop("reply_text")
        return d

    def summary_line(self) -> str:
        """A readable one-line summary; over-budget stages are marked with ``!``."""
        parts = []
        for name, value in self.stages_ms.items():
            flag = "!" if name in self.over_budget else ""
            parts.append(f"{name} {value:.0f}{flag}")
        total = "n/a" if self.total_ms is None else f"{self.total_ms:.0f} ms"
        verdict = ""
        if self.total_ms is not None:
            verdict = " OVER" if self.total_ms > self.target_ms else " ok"
        head = f"[{self.session_id} turn {self.turn_id}] {self.outcome}: total {total} / {self.target_ms} ms{verdict}"
        llm = ""
        if self.llm is not None:
            llm = (
                f" | llm ttft {self.llm.ttft_ms:.0f} ms itl {self.llm.itl_mean_ms:.1f} ms"
                f" ({self.llm.tps:.0f} tok/s) n={self.llm.n_tokens}"
                f" | prompt reused {self.prompt_tokens_reused} evaluated {self.prompt_tokens_evaluated}"
            )
        return f"{head} | " + " · ".join(parts) + " (ms, ! = over budget)" + llm


