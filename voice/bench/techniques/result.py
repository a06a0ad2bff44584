"""What ``voice bench techniques`` measured, typed: a row per step (its turns' statistics beside its replies)
and the whole result, with the JSON each is written as (``to_json``: the keys and their order as they were when
the results were dicts) and read back from (``from_json``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import Machine


@dataclass(frozen=True)
class StepRow:
    """One step: its measured turns through the e2e bench's statistics (uncertain ones counted, not timed), and
    how many replies are word for word the serial step's."""

    step: str
    """The step's name (``serial``, ``speculate``, …)."""
    description: str
    """What it adds to the step before (and whether it is the configuration given)."""
    turns: int
    """Measured turns."""
    failed: int
    """Turns without a mouth-to-ear (no audio, no turn, an error)."""
    uncertain: int
    """Turns whose mouth-to-ear is not trusted (left out of the statistics)."""
    p50_ms: float | None
    """Mouth-to-ear p50 (None: no turn timed)."""
    p95_ms: float | None
    """Mouth-to-ear p95."""
    within_target: int
    """Timed turns within the mouth-to-ear target (``stats.TARGET_MS``)."""
    stages_p50_ms: dict[str, float | None]
    """The server's p50 per stage (``endpoint_silence``, ``stt``, ``llm_ttft``, …)."""
    wer_normalized: float | None
    """Corpus STT word error rate after Whisper's English normalizer."""
    replies_same_as_serial: int | None
    """Replies word for word the first step's (None on the first step)."""
    replies: dict[str, str]
    """The reply per turn, keyed ``clip#repeat``."""
    load_average_before: tuple[float, ...]
    """The machine's load average (1/5/15 min) when the step's turns began."""
    seconds: float
    """The step's wall time, loading its models included (1 decimal)."""

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "load_average_before": list(self.load_average_before)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepRow:
        return cls(**{**data, "load_average_before": tuple(data["load_average_before"])})


@dataclass(frozen=True)
class StackModels:
    """The models of the configuration given (every step loads these)."""

    stt: str
    llm: str
    tts: str


@dataclass(frozen=True)
class TechniquesResult:
    """A ``voice bench techniques`` run."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    speech_dir: str
    """The folder of recordings spoken."""
    clips: tuple[str, ...]
    """Their file names, in the order spoken."""
    repeats: int
    """Times every clip is spoken per step."""
    warmup: int
    """Warm-up turns per step, not counted."""
    models: StackModels
    steps: tuple[StepRow, ...]
    """In the order run, the first the baseline of ``replies_same_as_serial``."""

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench techniques",
            "machine": self.machine.to_json(),
            "speech_dir": self.speech_dir,
            "clips": list(self.clips),
            "repeats": self.repeats,
            "warmup": self.warmup,
            "models": dataclasses.asdict(self.models),
            "steps": [s.to_json() for s in self.steps],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TechniquesResult:
        return cls(
            Machine.from_json(data["machine"]),
            data["speech_dir"],
            tuple(data["clips"]),
            data["repeats"],
            data["warmup"],
            StackModels(**data["models"]),
            tuple(StepRow.from_json(s) for s in data["steps"]),
        )

    def with_machine(self, machine: Machine) -> TechniquesResult:
        return dataclasses.replace(self, machine=machine)
