"""What ``voice bench speculative`` measured, typed: one decoded reply, a row per prompt and decoding, the
summary per model, kind and decoding, and the whole result, with the JSON each is written as (``to_json``,
the keys and their order as they were when the results were dicts) and read back from (``from_json``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import Machine
from voice.bench.markdown import fields_json
from voice.bench.stats import Described, read_described


@dataclass(frozen=True)
class Decoded:
    """One greedy reply (not in the JSON: the rows summarize the repeats). Times from ``generate`` called."""

    text: str
    n_tokens: int
    token_ms: tuple[float, ...]
    """When each token came."""
    ttft_ms: float | None
    itl_mean_ms: float | None
    itl_p95_ms: float | None
    tps: float | None
    """Tokens per second (1000 / mean ITL)."""
    e2e_ms: float | None
    decode_steps: int | None = None
    """Batched decode steps (speculative decoding only, as the ones below)."""
    proposed_tokens: int | None = None
    tokens_per_step: float | None = None


@dataclass(frozen=True)
class SpeedUp:
    """A speculative decoding's row against the baseline's, on the same prompt (medians over the repeats)."""

    tokens_per_step: float
    """Generated tokens per batched decode step (1: no proposal accepted)."""
    compared_tokens: int
    """N, the tokens both decodings produced in every repeat."""
    e2e_common_baseline_ms: float | None
    """The baseline's time to the N-th token."""
    e2e_common_speculative_ms: float | None
    tps_speedup: float | None
    """Speculative tokens/s over the baseline's."""
    e2e_speedup: float | None
    """Baseline time to the N-th token over the speculative one (above 1: faster)."""
    ttft_ratio: float | None
    """Speculative TTFT over the baseline's (above 1: slower to the first token)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens_per_step": self.tokens_per_step,
            "compared_tokens": self.compared_tokens,
            "e2e_common_ms": {"baseline": self.e2e_common_baseline_ms, "speculative": self.e2e_common_speculative_ms},
            "tps_speedup": self.tps_speedup,
            "e2e_speedup": self.e2e_speedup,
            "ttft_ratio": self.ttft_ratio,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpeedUp:
        common = data["e2e_common_ms"]
        return cls(
            data["tokens_per_step"],
            data["compared_tokens"],
            common["baseline"],
            common["speculative"],
            data["tps_speedup"],
            data["e2e_speedup"],
            data["ttft_ratio"],
        )


@dataclass(frozen=True)
class PromptRow:
    """One prompt decoded one way (baseline or a prompt-lookup variant), over the repeats."""

    llm: str
    prompt: str
    kind: str
    """The prompt's kind (``short``, ``repeat``…): the summary groups by it."""
    variant: str
    """``baseline`` or ``prompt-lookup <draft tokens>``."""
    n_tokens: int
    """Tokens of the first repeat's reply."""
    same_output_as_baseline: bool
    first_difference_at_char: int | None
    deterministic_across_repeats: bool
    text: str
    """The first repeat's reply."""
    ttft_ms: Described
    itl_mean_ms: Described
    tps: Described
    e2e_ms: Described
    speedup: SpeedUp | None
    """Against the baseline; None for the baseline itself."""

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in fields_json(self).items() if k != "speedup"}
        return {**d, **(self.speedup.to_json() if self.speedup is not None else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PromptRow:
        own = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name != "speedup"}
        statistics = read_described(own, "ttft_ms", "itl_mean_ms", "tps", "e2e_ms")
        return cls(**statistics, speedup=SpeedUp.from_json(data) if "compared_tokens" in data else None)


@dataclass(frozen=True)
class KindSummary:
    """Per model, kind of prompt and decoding: medians over the prompts of their p50s and speed-ups (2 decimals;
    None when no prompt had the value)."""

    llm: str
    kind: str
    variant: str
    prompts: int
    tokens_p50: float | None
    ttft_ms_p50: float | None
    itl_ms_p50: float | None
    tps_p50: float | None
    e2e_ms_p50: float | None
    tps_speedup: float | None
    e2e_speedup: float | None
    ttft_ratio: float | None
    tokens_per_step: float | None
    same_outputs: str
    """``<same>/<prompts>``: prompts whose reply was the baseline's."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class SpeculativeMeta:
    """How the run was made."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    n_ctx: int
    n_batch: int
    n_threads: int
    temperature: float
    draft_tokens: tuple[int, ...]
    """The prompt-lookup variants' numbers of draft tokens."""
    ngram: int
    """Prompt lookup's longest n-gram."""
    repeats: int
    prompts_file: str
    system_prompt: str

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        return {**d, "machine": self.machine.to_json(), "draft_tokens": list(self.draft_tokens)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpeculativeMeta:
        machine = Machine.from_json(data["machine"])
        return cls(**{**data, "machine": machine, "draft_tokens": tuple(data["draft_tokens"])})


@dataclass(frozen=True)
class SpeculativeResult:
    """A ``voice bench speculative`` run."""

    meta: SpeculativeMeta
    summary: tuple[KindSummary, ...]
    rows: tuple[PromptRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench speculative",
            "schema": 1,
            "meta": self.meta.to_json(),
            "summary": [s.to_json() for s in self.summary],
            "rows": [r.to_json() for r in self.rows],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpeculativeResult:
        return cls(
            SpeculativeMeta.from_json(data["meta"]),
            tuple(KindSummary(**s) for s in data["summary"]),
            tuple(PromptRow.from_json(r) for r in data["rows"]),
        )

    def with_machine(self, machine: Machine) -> SpeculativeResult:
        return dataclasses.replace(self, meta=dataclasses.replace(self.meta, machine=machine))
