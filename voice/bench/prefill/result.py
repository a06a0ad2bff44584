"""What ``voice bench prefill`` measured, typed: the timings at one prompt length, a row per model and length,
how the run was made, and the whole result, with the JSON each is written as (``to_json``: the keys and their
order as they were when the results were dicts) and read back from (``from_json``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import Machine
from voice.bench.stats import Described, read_described


@dataclass(frozen=True)
class LengthTiming:
    """Time to first token at one prompt length, over the repeats, from a fresh context and after a cached
    prefix."""

    uncached_ms: Described
    """TTFT from an empty KV cache: the whole prompt evaluated."""
    cached_ms: Described
    """TTFT just after a turn with the same prefix: only the new question evaluated."""
    uncached_samples_ms: tuple[float, ...]
    """Each repeat's uncached TTFT (2 decimals)."""
    cached_samples_ms: tuple[float, ...]
    """Each repeat's cached TTFT (2 decimals)."""
    cached_evaluated_tokens: int | None
    """Most tokens a cached run evaluated (None: no repeats)."""
    cached_reused_tokens: int | None
    """Fewest tokens a cached run took from the cache (None: no repeats)."""
    ratio_p50: float | None
    """Uncached p50 over cached p50 (2 decimals; None when either is missing or zero)."""

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        return {
            **d,
            "uncached_samples_ms": list(self.uncached_samples_ms),
            "cached_samples_ms": list(self.cached_samples_ms),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LengthTiming:
        own = {f.name: data[f.name] for f in dataclasses.fields(cls)}
        return cls(
            **{
                **read_described(own, "uncached_ms", "cached_ms"),
                "uncached_samples_ms": tuple(own["uncached_samples_ms"]),
                "cached_samples_ms": tuple(own["cached_samples_ms"]),
            }
        )


@dataclass(frozen=True)
class PrefillRow:
    """One model at one prompt length."""

    llm: str
    """The LLM's catalogue name."""
    target_tokens: int
    """The prompt length asked for (``--lengths``)."""
    prompt_tokens: int
    """The prompt's length as rendered: as close to the target as whole words allow, never over it."""
    timing: LengthTiming
    """Its TTFT, uncached and cached (in the JSON, its keys stand in the row)."""
    prefill_tokens_per_s: int | None
    """Prompt tokens over the uncached TTFT p50, per second (None when that is missing or zero)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "llm": self.llm,
            "target_tokens": self.target_tokens,
            "prompt_tokens": self.prompt_tokens,
            **self.timing.to_json(),
            "prefill_tokens_per_s": self.prefill_tokens_per_s,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PrefillRow:
        return cls(
            data["llm"],
            data["target_tokens"],
            data["prompt_tokens"],
            LengthTiming.from_json(data),
            data["prefill_tokens_per_s"],
        )


@dataclass(frozen=True)
class PrefillMeta:
    """How the run was made."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    n_ctx: int
    """``[llm] n_ctx``: the context window, in tokens."""
    n_batch: int
    """``[llm] n_batch``: tokens evaluated per batch."""
    n_threads: int
    """``[llm] n_threads``."""
    llm_ttft_budget_ms: int
    """``[budget] llm_ttft_ms``: the LLM's share of the mouth-to-ear target (a line on the chart)."""
    repeats: int
    """Measured rounds per length (after one warm-up round)."""
    text: str
    """The document the prompts are cut from."""
    question: str
    """The user's question at the end of every prompt."""
    previous_question: str
    """The question of the turn before a cached run (same prefix)."""

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "machine": self.machine.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PrefillMeta:
        return cls(**{**data, "machine": Machine.from_json(data["machine"])})


@dataclass(frozen=True)
class PrefillResult:
    """A ``voice bench prefill`` run."""

    meta: PrefillMeta
    rows: tuple[PrefillRow, ...]
    """Per model (in the order given), per length (shortest first); lengths that do not fit n_ctx left out."""

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench prefill",
            "schema": 1,
            "meta": self.meta.to_json(),
            "rows": [r.to_json() for r in self.rows],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PrefillResult:
        return cls(PrefillMeta.from_json(data["meta"]), tuple(PrefillRow.from_json(r) for r in data["rows"]))

    def with_machine(self, machine: Machine) -> PrefillResult:
        return dataclasses.replace(self, meta=dataclasses.replace(self.meta, machine=machine))
