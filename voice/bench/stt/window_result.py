"""What ``voice bench stt`` (without ``--variants``) measured, typed: how the run was made, a row per clip, the
summary of both paths, and the whole result, with the JSON each is written as (``to_json``: the keys and their
order as they were when the results were dicts) and read back from (``from_json``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import Machine


@dataclass(frozen=True)
class SttWindowConfig:
    """How the run was made: the config's ``[stt]`` settings that matter here, and the command's options."""

    model: str
    """``[stt] model``."""
    espeak: bool
    """``--espeak``: the clips include questions spoken by espeak-ng."""
    min_window_s: float
    """``[stt] min_window_s``: the short window's least length (the default when the config turns it off)."""
    pad_s: float
    """``[stt] pad_s``: what the short window adds to the audio's length."""
    compute_type: str
    """``[stt] compute_type``."""
    cpu_threads: int
    """``[stt] cpu_threads``."""
    repeats: int
    """Times each clip was transcribed by each path."""


@dataclass(frozen=True)
class ClipResult:
    """One clip, both paths: time (the p50 of the repeats, 1 decimal) and the last repeat's transcript."""

    clip: str
    """Its file name."""
    duration_s: float
    """Its length (2 decimals)."""
    reference: str | None
    """Its transcript, if it has one (only those count in the WER)."""
    full_ms: float
    """The full 30 s window."""
    short_ms: float
    """The short window: the real length, padded, guarded."""
    full_text: str
    short_text: str
    fell_back: bool
    """The short path's last repeat fell back to the full window."""


@dataclass(frozen=True)
class Wer:
    """Word error rate over every clip with a transcript (None without words)."""

    raw: float | None
    """On the texts as written."""
    normalized: float | None
    """After Whisper's English normalizer."""


@dataclass(frozen=True)
class SttWindowSummary:
    """Both paths over all the clips (p50/p95 over the clips' times, 1 decimal)."""

    full_p50_ms: float
    full_p95_ms: float
    short_p50_ms: float
    short_p95_ms: float
    speedup_p50: float | None
    """Full p50 over short p50 (2 decimals; None when either is missing or zero)."""
    fallbacks: int
    """Clips whose short path fell back to the full window."""
    clips: int
    wer_full: Wer
    wer_short: Wer

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SttWindowSummary:
        return cls(**{**data, "wer_full": Wer(**data["wer_full"]), "wer_short": Wer(**data["wer_short"])})


@dataclass(frozen=True)
class SttWindowResult:
    """A ``voice bench stt`` run (without ``--variants``)."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    config: SttWindowConfig
    clips: tuple[ClipResult, ...]
    """In the order they were transcribed (the recordings, then espeak-ng's)."""
    summary: SttWindowSummary

    def to_json(self) -> dict[str, Any]:
        return {
            "machine": self.machine.to_json(),
            "config": dataclasses.asdict(self.config),
            "clips": [dataclasses.asdict(c) for c in self.clips],
            "summary": dataclasses.asdict(self.summary),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SttWindowResult:
        return cls(
            Machine.from_json(data["machine"]),
            SttWindowConfig(**data["config"]),
            tuple(ClipResult(**c) for c in data["clips"]),
            SttWindowSummary.from_json(data["summary"]),
        )

    def with_machine(self, machine: Machine) -> SttWindowResult:
        return dataclasses.replace(self, machine=machine)
