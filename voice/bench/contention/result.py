"""What ``voice bench contention`` measured, typed: each mode's statistics, one run per OpenMP wait policy (or
the current environment), and the whole result, with the JSON each is written as (``to_json``: the keys and
their order as they were when the results were dicts) and read back from (``from_json``: a policy's child
process writes its run as JSON)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.machine_record import GuardSummary, Machine
from voice.bench.markdown import fields_json
from voice.bench.stats import Described, read_described

TOGETHER_MODES = ("both, no gate", "both, gate")
"""The modes in which both jobs run at once (the others: ``stt alone``, ``llm alone``)."""


def _key(field_name: str) -> str:
    """A field's JSON key: its name without the unit suffix the JSON never had."""
    return field_name.removesuffix("_ms")


@dataclass(frozen=True)
class Together:
    """Both jobs released by one barrier in one mode, over the repeats. Slowdowns are p50 / p50 of the same job
    alone (2 decimals; None when either is missing or zero)."""

    stt_ms: Described
    """STT's wall time, from the barrier to its end."""
    llm_ms: Described
    """The LLM's wall time, from the barrier to its last token."""
    stt_wait_ms: Described
    """Time STT spent blocked in ``gate.slot()``."""
    llm_wait_ms: Described
    """Time the LLM spent blocked in ``gate.slot()``, over all its steps."""
    stt_compute_ms: Described
    """STT's wall time less its gate wait."""
    llm_compute_ms: Described
    """The LLM's wall time less its gate wait."""
    stt_compute_slowdown: float | None
    """STT's compute p50 over its wall time alone: how much the LLM slowed its own work down."""
    llm_compute_slowdown: float | None
    """The LLM's compute p50 over its wall time alone."""
    makespan_ms: Described
    """From the barrier until the later job ends."""
    stt_slowdown: float | None
    """STT's wall time p50 over its wall time alone."""
    llm_slowdown: float | None
    """The LLM's wall time p50 over its wall time alone."""
    makespan_vs_serial: float | None
    """The makespan p50 over STT alone + LLM alone (p50s)."""

    def to_json(self) -> dict[str, Any]:
        return {_key(name): value for name, value in fields_json(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Together:
        own = {f.name: data[_key(f.name)] for f in dataclasses.fields(cls)}
        return cls(**read_described(own, *_TOGETHER_DESCRIBED))


_TOGETHER_DESCRIBED = (
    "stt_ms", "llm_ms", "stt_wait_ms", "llm_wait_ms", "stt_compute_ms", "llm_compute_ms", "makespan_ms",
)  # fmt: skip
"""The statistics of :class:`Together`."""


@dataclass(frozen=True)
class ContentionSummary:
    """Every mode's statistics (wall times in ms)."""

    stt_alone_ms: Described
    """STT's wall time with nothing else running."""
    llm_alone_ms: Described
    """The LLM's wall time with nothing else running."""
    serial_makespan_p50_ms: float
    """STT alone + LLM alone (p50s): both done one after the other."""
    no_gate: Together
    """Both at once with ``ComputeGate(enabled=False)``."""
    gate: Together
    """Both at once through ``ComputeGate()``."""

    def together(self) -> tuple[tuple[str, Together], ...]:
        """The modes in which both jobs run at once, by name (:data:`TOGETHER_MODES`)."""
        return (TOGETHER_MODES[0], self.no_gate), (TOGETHER_MODES[1], self.gate)

    def to_json(self) -> dict[str, Any]:
        return {
            "stt alone": {"stt": self.stt_alone_ms.to_json()},
            "llm alone": {"llm": self.llm_alone_ms.to_json()},
            "serial_makespan_p50_ms": self.serial_makespan_p50_ms,
            **{mode: together.to_json() for mode, together in self.together()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ContentionSummary:
        return cls(
            Described.from_json(data["stt alone"]["stt"]),
            Described.from_json(data["llm alone"]["llm"]),
            data["serial_makespan_p50_ms"],
            Together.from_json(data[TOGETHER_MODES[0]]),
            Together.from_json(data[TOGETHER_MODES[1]]),
        )


@dataclass(frozen=True)
class PolicyRun:
    """Every mode measured in one process, under one OpenMP wait policy (or the current environment)."""

    stt: str
    """The STT model's name."""
    llm: str
    """The LLM's name."""
    clip: str
    """The recording STT transcribes."""
    clip_s: float
    """Its length in seconds (2 decimals)."""
    transcript: str
    """What STT heard in it."""
    tokens: int
    """Tokens the LLM generates per job."""
    repeats: int
    """Measured rounds (after one warm-up round)."""
    effective_env: dict[str, str | None]
    """``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``, ``OMP_NUM_THREADS`` as the process had them (None: unset)."""
    stt_cpu_threads: int
    """``[stt] cpu_threads``."""
    llm_n_threads: int
    """``[llm] n_threads``."""
    samples_ms: dict[str, dict[str, list[float]]]
    """Per mode, each series' samples (``stt``, ``llm``, their ``_wait``, ``makespan``), 1 decimal."""
    summary: ContentionSummary
    """The statistics of those samples."""
    guard: GuardSummary | None
    """The guard's record (:meth:`voice.bench.machine.Guard.summary`), None without a guard."""
    policy_note: str = ""
    """What the environment was, in words."""

    def to_json(self) -> dict[str, Any]:
        return {
            "stt": self.stt,
            "llm": self.llm,
            "clip": self.clip,
            "clip_s": self.clip_s,
            "transcript": self.transcript,
            "tokens": self.tokens,
            "repeats": self.repeats,
            "effective_env": dict(self.effective_env),
            "threads": {"stt_cpu_threads": self.stt_cpu_threads, "llm_n_threads": self.llm_n_threads},
            "samples_ms": {m: {k: list(v) for k, v in d.items()} for m, d in self.samples_ms.items()},
            "summary": self.summary.to_json(),
            "guard": self.guard.to_json() if self.guard is not None else None,
            "policy_note": self.policy_note,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PolicyRun:
        return cls(
            **{k: data[k] for k in ("stt", "llm", "clip", "clip_s", "transcript", "tokens", "repeats")},
            effective_env=data["effective_env"],
            stt_cpu_threads=data["threads"]["stt_cpu_threads"],
            llm_n_threads=data["threads"]["llm_n_threads"],
            samples_ms=data["samples_ms"],
            summary=ContentionSummary.from_json(data["summary"]),
            guard=GuardSummary.from_json(data["guard"]) if data["guard"] is not None else None,
            policy_note=data["policy_note"],
        )


@dataclass(frozen=True)
class ContentionResult:
    """A ``voice bench contention`` run: one :class:`PolicyRun` per wait policy, or the current environment's."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    results: dict[str, PolicyRun]
    """By policy name (``current environment`` without ``--wait-policies``), in the order they ran."""

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench contention",
            "schema": 1,
            "meta": {"machine": self.machine.to_json()},
            "results": {name: res.to_json() for name, res in self.results.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ContentionResult:
        results = {k: PolicyRun.from_json(v) for k, v in data["results"].items()}
        return cls(Machine.from_json(data["meta"]["machine"]), results)

    def with_machine(self, machine: Machine) -> ContentionResult:
        return dataclasses.replace(self, machine=machine)
