"""What ``voice bench pauses`` measured, typed: a row per endpointing strategy and the whole result, with the
JSON each is written as (``to_json``: the keys and their order as they were when the results were dicts) and read
back from (``from_json``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import Machine

#: Pauses shorter than this must never be cut (issue 30): reports count them apart from the longer ones.
SHORT_PAUSE_MS = 300


def cut_pct(cut: Mapping[str, int], tested: Mapping[str, int], short: bool) -> float | None:
    """The share (%) of mid-sentence pauses cut short, of the pause lengths (ms, as strings, the keys of ``tested``)
    under :data:`SHORT_PAUSE_MS` (``short``) or at and over it; None when none was tested."""
    lengths = [p for p in tested if (int(p) < SHORT_PAUSE_MS) == short]
    n_tested = sum(tested[p] for p in lengths)
    return 100.0 * sum(cut[p] for p in lengths) / n_tested if n_tested else None


@dataclass(frozen=True)
class StrategyRow:
    """One endpointing strategy over all the clips."""

    strategy: str
    """Its label (``silence 300 ms (config)``, ``smart-turn (320/960 ms)``, ``… + end on energy``, …)."""
    false_endpoints: dict[str, int]
    """Per pause length (ms, as a string): the clips on which a turn ended inside the pause."""
    tested: dict[str, int] | None
    """Per pause length (ms, as a string): the clips tested at that length (those whose own gap at the splice
    point is not longer). None in results made before clips could be left out: every clip was tested."""
    clips: int
    """Clips in the run."""
    end_of_turn_delay_p50_ms: float | None
    """Endpoint − the clip's energy speech end, on the whole clips (None: no turn ended after the speech)."""
    end_of_turn_delay_p95_ms: float | None
    turns_ended_inside_whole_clips: int
    """Endpoints before the speech end of the whole clips (on the speakers' own pauses)."""
    long_waits: int | None = None
    """Whole clips whose turn waited the end-of-turn model's long window (:func:`~voice.bench.pauses.measure.
    waited_long`); None in results made before it was counted."""
    finished_turns: int | None = None
    """Whole clips on which a turn ended after the speech (the denominator of :attr:`long_waits`)."""

    def tested_at(self, pause_ms: str) -> int:
        """Clips tested at the pause length ``pause_ms`` (every clip in results without :attr:`tested`)."""
        return self.clips if self.tested is None else self.tested.get(pause_ms, self.clips)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for key in ("tested", "long_waits", "finished_turns"):
            if d[key] is None:  # as the results made before it wrote it
                del d[key]
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StrategyRow:
        return cls(**{"tested": None, **data})


@dataclass(frozen=True)
class PausesResult:
    """A ``voice bench pauses`` run."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    speech_dir: str
    """The folder the clips were read from."""
    clips: tuple[str, ...]
    """The clips' file names, in their order."""
    pauses_ms: tuple[int, ...]
    """The pause lengths spliced in (``--pauses``)."""
    vad: dict[str, Any]
    """The config's whole ``[vad]`` section (its keys change as options are added)."""
    turn: dict[str, Any]
    """The config's whole ``[turn]`` section (its keys change as options are added)."""
    strategies: tuple[StrategyRow, ...]
    long_waits_rule: str | None = None
    """How :attr:`StrategyRow.long_waits` were counted: ``"window"``, the turns that waited the long window of
    silence (since 2026-12-07); None in results made before, which counted the turns whose last score was under
    ``complete_threshold``."""

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench pauses",
            "machine": self.machine.to_json(),
            "speech_dir": self.speech_dir,
            "clips": list(self.clips),
            "pauses_ms": list(self.pauses_ms),
            "vad": self.vad,
            "turn": self.turn,
            "strategies": [s.to_json() for s in self.strategies],
            **({"long_waits_rule": self.long_waits_rule} if self.long_waits_rule is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PausesResult:
        return cls(
            Machine.from_json(data["machine"]),
            data["speech_dir"],
            tuple(data["clips"]),
            tuple(data["pauses_ms"]),
            data["vad"],
            data["turn"],
            tuple(StrategyRow.from_json(s) for s in data["strategies"]),
            data.get("long_waits_rule"),
        )

    def with_machine(self, machine: Machine) -> PausesResult:
        return dataclasses.replace(self, machine=machine)
