"""What ``voice bench remote`` measured, typed: the question set asked of each LLM backend (in-process, through the
server), the recordings spoken with each, and the whole result; with the JSON each is written as (``to_json``: the
keys and their order as they were when the result was a dict) and read back from (``from_json``). The backends are
named as in :data:`voice.bench.remote.measure.BACKENDS` (``in-process``, ``server``), in that order.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.e2e.result import E2eSummary
from voice.bench.e2e.turn import TurnResult
from voice.bench.machine_record import Machine
from voice.bench.markdown import fields_json
from voice.bench.quality.result import TextRow, TextSummary


@dataclass(frozen=True)
class TextBackend:
    """The question set asked of one LLM backend (``voice bench quality``'s text mode, skills off)."""

    summary: TextSummary
    rows: tuple[TextRow, ...]
    """One per item, in the set's order."""

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary.to_json(), "rows": [r.to_json() for r in self.rows]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TextBackend:
        return cls(TextSummary.from_json(data["summary"]), tuple(map(TextRow.from_json, data["rows"])))


@dataclass(frozen=True)
class TextComparison:
    """The question set asked of both backends, item by item."""

    same_replies: int
    """Items whose reply was the same text both ways (greedy decoding: all of them, when nothing differs)."""
    items: int
    """Items asked."""
    backends: dict[str, TextBackend]

    def to_json(self) -> dict[str, Any]:
        return {**fields_json(self), "backends": {name: b.to_json() for name, b in self.backends.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TextComparison:
        backends = {name: TextBackend.from_json(b) for name, b in data["backends"].items()}
        return cls(data["same_replies"], data["items"], backends)


@dataclass(frozen=True)
class E2eBackend:
    """The recordings spoken into an in-process server with one LLM backend."""

    summary: E2eSummary
    """Over the turns after the warm-up."""
    turns: tuple[TurnResult, ...]
    """Warm-up and measured, in the order spoken; written with every field of a turn (without the copies of its
    stages that ``voice bench e2e`` writes beside them)."""

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary.to_json(), "turns": [t.fields_dict() for t in self.turns]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> E2eBackend:
        return cls(E2eSummary.from_json(data["summary"]), tuple(map(TurnResult.from_dict, data["turns"])))


@dataclass(frozen=True)
class E2eComparison:
    """The recordings spoken with both backends; written as one key per backend."""

    backends: dict[str, E2eBackend]

    def to_json(self) -> dict[str, Any]:
        return {name: b.to_json() for name, b in self.backends.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> E2eComparison:
        return cls({name: E2eBackend.from_json(b) for name, b in data.items()})


@dataclass(frozen=True)
class RemoteResult:
    """A ``voice bench remote`` run: where the server was, then both comparisons."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    settings: dict[str, int]
    """The llama.cpp settings (:func:`~voice.bench.llms.llm_settings`): ``n_ctx``, ``n_batch``, ``n_threads``."""
    server: str
    """``--url``, or the ``llama_cpp.server`` started on loopback and its address."""
    model: str
    """The model the server was asked for."""
    temperature: float
    """``[llm] temperature`` (greedy: 0)."""
    text: TextComparison
    e2e: E2eComparison | None
    """None with ``--no-e2e``."""

    def to_json(self) -> dict[str, Any]:
        return {
            **fields_json(self),
            "machine": self.machine.to_json(),
            "text": self.text.to_json(),
            "e2e": None if self.e2e is None else self.e2e.to_json(),
        }

    def with_machine(self, machine: Machine) -> RemoteResult:
        return dataclasses.replace(self, machine=machine)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RemoteResult:
        return cls(
            machine=Machine.from_json(data["machine"]),
            settings=data["settings"],
            server=data["server"],
            model=data["model"],
            temperature=data["temperature"],
            text=TextComparison.from_json(data["text"]),
            e2e=None if data["e2e"] is None else E2eComparison.from_json(data["e2e"]),
        )
