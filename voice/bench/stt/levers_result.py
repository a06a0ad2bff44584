"""What ``voice bench stt --variants`` measured, typed: a summary per variant, a row per clip, and the whole
result, with the JSON each is written as (``to_json``: the keys and their order as they were when the results
were dicts) and read back from (``from_json``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import Machine


@dataclass(frozen=True)
class LeverSummary:
    """One variant over all the clips: time (each clip's time the p50 of its repeats; p50/p95 over the clips,
    1 decimal; None without clips) and normalized WER (3 decimals; None without words)."""

    p50_ms: float | None
    p95_ms: float | None
    recordings_p50_ms: float | None
    """Over the recordings only."""
    recordings_p95_ms: float | None
    spoken_set_p50_ms: float | None
    """Over the quality set's questions spoken by espeak-ng only."""
    spoken_set_p95_ms: float | None
    fallbacks: int
    """Clips whose first repeat fell back to the 30 s window."""
    wer_by_group: dict[str, float | None]
    """Per group (``recordings``, ``espeak-ng:<voice>``), in the order of the clips."""
    wer_spoken_set: float | None
    """Over every espeak-ng voice together."""


@dataclass(frozen=True)
class LeverVariant:
    """One ``[[variant]]``: its name, its ``[stt]`` settings and its summary."""

    name: str
    stt: dict[str, Any]
    """The variant's whole ``[stt]`` section as it was run (its keys change as options are added)."""
    summary: LeverSummary
    """(In the JSON, its keys stand in the variant.)"""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "stt": self.stt, **dataclasses.asdict(self.summary)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LeverVariant:
        own = {f.name: data[f.name] for f in dataclasses.fields(LeverSummary)}
        return cls(data["name"], data["stt"], LeverSummary(**own))


@dataclass(frozen=True)
class LeverClipRow:
    """One clip: what each variant heard (its first repeat) and its time (the p50 of its repeats, 1 decimal)."""

    clip: str
    group: str
    """``recordings`` or ``espeak-ng:<voice>``."""
    reference: str
    texts: tuple[str, ...]
    """Per variant, in their order."""
    ms: tuple[float, ...]
    """Per variant, in their order."""

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "texts": list(self.texts), "ms": list(self.ms)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LeverClipRow:
        return cls(**{**data, "texts": tuple(data["texts"]), "ms": tuple(data["ms"])})


@dataclass(frozen=True)
class LeversResult:
    """A ``voice bench stt --variants`` run."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    repeats: int
    """Times every variant transcribed every clip."""
    variants: tuple[LeverVariant, ...]
    clips: tuple[LeverClipRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "machine": self.machine.to_json(),
            "repeats": self.repeats,
            "variants": [v.to_json() for v in self.variants],
            "clips": [c.to_json() for c in self.clips],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LeversResult:
        return cls(
            Machine.from_json(data["machine"]),
            data["repeats"],
            tuple(LeverVariant.from_json(v) for v in data["variants"]),
            tuple(LeverClipRow.from_json(c) for c in data["clips"]),
        )

    def with_machine(self, machine: Machine) -> LeversResult:
        return dataclasses.replace(self, machine=machine)
