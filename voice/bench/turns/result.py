"""What ``voice bench turns`` measured, typed: per recordings folder and per end-of-turn setting, the whole loop's
mouth-to-ear (``voice bench e2e``) beside the mid-sentence pauses the setting cuts short (``voice bench pauses``),
with the JSON each is written as and read back from."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import Machine
from voice.bench.pauses.result import cut_pct


@dataclass(frozen=True)
class TurnsRow:
    """One setting on one folder of recordings."""

    variant: str
    m2e_p50_ms: float | None
    """Mouth-to-ear over the e2e run's measured turns (None: no turn was measured)."""
    m2e_p95_ms: float | None
    turns: int
    """Turns measured by the e2e run."""
    within_250_ms: int
    """Of them, the turns whose mouth-to-ear was at most 250 ms."""
    within_500_ms: int
    endpoint_silence_p50_ms: float | None
    """The server's wait for the end of the turn (its stage), p50 over the e2e turns."""
    endpoint_silence_p95_ms: float | None
    work_p50_ms: float | None
    """The reply's work from its start (the pause, for a speculative reply) to its first audio, p50 (None: the
    e2e result does not carry it)."""
    delay_p50_ms: float | None
    """Offline (``voice bench pauses``): endpoint − the speech end of the whole clips."""
    delay_p95_ms: float | None
    cut: dict[str, int]
    """Per pause length (ms, as a string): clips whose turn ended inside a mid-sentence pause of that length."""
    tested: dict[str, int]
    """Per pause length: the clips tested at that length."""
    long_waits: int | None
    """Whole clips whose turn waited the end-of-turn model's long window (None: no model in this setting's run)."""
    finished_turns: int | None
    error: str | None = None
    """Why a run of this setting gave no result (its last lines of output), else None."""

    def cut_pct(self, short: bool) -> float | None:
        """The share of pauses cut short, under 300 ms (``short``) or of 300 ms and more (None: none tested)."""
        share = cut_pct(self.cut, self.tested, short)
        return None if share is None else round(share, 1)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnsRow:
        return cls(**data)


@dataclass(frozen=True)
class TurnsSet:
    """Every setting on one folder of recordings."""

    speech_dir: str
    clips: tuple[str, ...]
    rows: tuple[TurnsRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {"speech_dir": self.speech_dir, "clips": list(self.clips), "rows": [r.to_json() for r in self.rows]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnsSet:
        return cls(data["speech_dir"], tuple(data["clips"]), tuple(TurnsRow.from_json(r) for r in data["rows"]))


@dataclass(frozen=True)
class TurnsResult:
    """A ``voice bench turns`` run."""

    machine: Machine
    variants_file: str
    variants: tuple[str, ...]
    """The settings' names, in the file's order."""
    default: str | None
    """The name of the setting with no keys of its own (the config's point), if there is one."""
    repeats: int
    pauses_ms: tuple[int, ...]
    text_delay_ms: float
    sets: tuple[TurnsSet, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench turns",
            "machine": self.machine.to_json(),
            "variants_file": self.variants_file,
            "variants": list(self.variants),
            "default": self.default,
            "repeats": self.repeats,
            "pauses_ms": list(self.pauses_ms),
            "text_delay_ms": self.text_delay_ms,
            "sets": [s.to_json() for s in self.sets],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnsResult:
        return cls(
            Machine.from_json(data["machine"]),
            data["variants_file"],
            tuple(data["variants"]),
            data["default"],
            data["repeats"],
            tuple(data["pauses_ms"]),
            data["text_delay_ms"],
            tuple(TurnsSet.from_json(s) for s in data["sets"]),
        )

    def with_machine(self, machine: Machine) -> TurnsResult:
        return dataclasses.replace(self, machine=machine)
