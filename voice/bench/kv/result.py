"""What ``voice bench kv`` measured, typed: each turn's timing, the sessions at each KV bound, the long
conversation and the whole result, with the JSON each is written as (``to_json``, the keys and their order as
they were when the results were dicts) and read back from (``from_json``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import Machine
from voice.bench.markdown import fields_json
from voice.bench.stats import Described, describe, read_described
from voice.runtime.kvcache import KvStats


@dataclass(frozen=True)
class TurnTiming:
    """One turn of a conversation: its prompt, what was evaluated and how long the first token took."""

    session: int
    turn: int
    """1-based, within its conversation."""
    ttft_ms: float | None
    """``generate`` called → first text delta (restore + prompt evaluation + first token); None: no text."""
    prompt_tokens: int
    evaluated_tokens: int
    """Prompt tokens evaluated (the rest came from the live context or a saved state)."""
    reevaluated_tokens: int
    """Evaluated again because the state holding them had been evicted."""
    restore_ms: float
    """Restoring a saved state."""
    trimmed_messages: int
    """History messages dropped to fit the context window."""
    kv_cache_mb: float
    """Saved states' size after the turn."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class BoundSummary:
    """The sessions taking turns at one KV bound."""

    kv_cache_mb: int
    """The bound (0: no saved states)."""
    ttft_after_first_turn: Described
    """TTFT of each session's turns after its first, in ms."""
    evaluated_after_first_turn: Described
    prompt_tokens_after_first_turn: Described
    turns_evicted: int
    """Turns that evaluated tokens again because their state had been evicted."""
    reevaluated_tokens: int
    evictions: int
    kv_cache_mb_max: float
    """Most MB the saved states took."""
    save_ms_mean: float | None
    """Mean time to save a state (None: none saved)."""
    restore_ms_mean: float | None
    turns: tuple[TurnTiming, ...]

    @classmethod
    def of(cls, bound_mb: int, timings: list[TurnTiming], kv: KvStats | None) -> BoundSummary:
        """The summary of ``timings``, made at bound ``bound_mb``; ``kv``: the cache's counters (None when off)."""
        later = [t for t in timings if t.turn > 1]
        saves = kv.saves if kv else 0
        restores = kv.restores if kv else 0
        return cls(
            kv_cache_mb=bound_mb,
            ttft_after_first_turn=describe([t.ttft_ms for t in later if t.ttft_ms is not None]),
            evaluated_after_first_turn=describe([t.evaluated_tokens for t in later]),
            prompt_tokens_after_first_turn=describe([t.prompt_tokens for t in later]),
            turns_evicted=sum(1 for t in timings if t.reevaluated_tokens > 0),
            reevaluated_tokens=sum(t.reevaluated_tokens for t in timings),
            evictions=kv.evictions if kv else 0,
            kv_cache_mb_max=max((t.kv_cache_mb for t in timings), default=0.0),
            save_ms_mean=round(kv.save_ms_total / saves, 2) if kv and saves else None,
            restore_ms_mean=round(kv.restore_ms_total / restores, 2) if kv and restores else None,
            turns=tuple(timings),
        )

    def to_json(self) -> dict[str, Any]:
        d = fields_json(self)
        return {**d, "turns": [t.to_json() for t in self.turns]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BoundSummary:
        statistics = read_described(
            data, "ttft_after_first_turn", "evaluated_after_first_turn", "prompt_tokens_after_first_turn"
        )
        return cls(**{**statistics, "turns": tuple(TurnTiming(**t) for t in data["turns"])})


@dataclass(frozen=True)
class LongConversation:
    """One conversation through the context window."""

    kv_cache_mb: int
    turns: tuple[TurnTiming, ...]
    trim_turns: tuple[int, ...]
    """The turns that trimmed the history."""
    ttft: Described
    """TTFT over the turns, in ms."""

    @classmethod
    def of(cls, kv_cache_mb: int, turns: list[TurnTiming]) -> LongConversation:
        return cls(
            kv_cache_mb=kv_cache_mb,
            turns=tuple(turns),
            trim_turns=tuple(t.turn for t in turns if t.trimmed_messages),
            ttft=describe([t.ttft_ms for t in turns if t.ttft_ms is not None]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kv_cache_mb": self.kv_cache_mb,
            "turns": [t.to_json() for t in self.turns],
            "trim_turns": list(self.trim_turns),
            "ttft": self.ttft.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LongConversation:
        turns = tuple(TurnTiming(**t) for t in data["turns"])
        return cls(data["kv_cache_mb"], turns, tuple(data["trim_turns"]), Described.from_json(data["ttft"]))


@dataclass(frozen=True)
class KvMeta:
    """How the run was made."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    llm: str
    llm_settings: dict[str, int]
    """llama.cpp's ``n_ctx``, ``n_batch`` and ``n_threads``."""
    max_reply_tokens: int
    sessions: int
    """Conversations taking turns at each bound."""
    turns: int
    """Turns of each of them."""

    def to_json(self) -> dict[str, Any]:
        return {**fields_json(self), "machine": self.machine.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KvMeta:
        return cls(**{**data, "machine": Machine.from_json(data["machine"])})


@dataclass(frozen=True)
class KvResult:
    """A ``voice bench kv`` run."""

    meta: KvMeta
    method: str
    """How it measures (the module's docstring)."""
    bounds: tuple[BoundSummary, ...]
    long: LongConversation

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench kv",
            "schema": 1,
            "meta": self.meta.to_json(),
            "method": self.method,
            "bounds": [b.to_json() for b in self.bounds],
            "long": self.long.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KvResult:
        return cls(
            KvMeta.from_json(data["meta"]),
            data["method"],
            tuple(BoundSummary.from_json(b) for b in data["bounds"]),
            LongConversation.from_json(data["long"]),
        )

    def with_machine(self, machine: Machine) -> KvResult:
        return dataclasses.replace(self, meta=dataclasses.replace(self.meta, machine=machine))
