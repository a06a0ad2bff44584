"""What ``voice bench load`` measured, typed: each turn, each level (N talkers at once), each variant of the
server and the whole result, with the JSON each is written as (``to_json``, the keys and their order as they
were when the results were dicts) and read back from (``from_json``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from voice.bench.clips import BenchError
from voice.bench.machine_record import Machine
from voice.bench.markdown import fields_json
from voice.bench.stats import Described, read_described
from voice.runtime.kvcache import KvStats


@dataclass(frozen=True)
class LoadOptions:
    sessions: tuple[int, ...] = (1, 2, 4, 8)
    turns: int = 4
    """Turns per conversation (utterances each talker speaks)."""
    pause_min_s: float = 0.2
    pause_max_s: float = 0.6
    start_spread_s: float = 2.0
    seed: int = 1
    reply_timeout_s: float = 60.0
    frame_ms: int = 20
    token: str | None = None

    def __post_init__(self) -> None:
        if not self.sessions or min(self.sessions) < 1:
            raise BenchError("--sessions needs positive session counts, e.g. 1,2,4,8")
        if self.turns < 1:
            raise BenchError("--turns must be at least 1")
        if not 0 <= self.pause_min_s <= self.pause_max_s:
            raise BenchError("need 0 <= pause min <= pause max")

    def to_json(self) -> dict[str, Any]:
        """The options as a result records them: without the token."""
        return {**dataclasses.asdict(self), "sessions": list(self.sessions), "token": None}


@dataclass(frozen=True)
class LoadTurn:
    """One utterance of one talker, as the client and the server's report saw it. Durations in ms."""

    sessions: int
    talker: int
    turn: int
    """1-based position in the talker's conversation."""
    clip: str
    outcome: str
    mouth_to_ear_ms: float | None = None
    queue_ms: float | None = None
    """stt_queue + llm_queue + tts_queue of the server's report."""
    stages_ms: dict[str, float] = field(default_factory=dict)
    ttft_ms: float | None = None
    prompt_tokens: int | None = None
    prompt_tokens_evaluated: int | None = None
    kv_restore_ms: float | None = None
    kv_evicted: bool = False
    kv_cache_mb: float | None = None
    reply_audio_ms: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class TalkerRecord:
    """A talker's plan as the result records it."""

    talker: int
    clips: tuple[str, ...]
    pauses_s: tuple[float, ...]
    """Silence after each reply has played, before the next utterance."""
    start_delay_s: float

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "clips": list(self.clips), "pauses_s": list(self.pauses_s)}


@dataclass(frozen=True)
class LevelSummary:
    """One level: N talkers at once."""

    sessions: int
    """N."""
    turns: int
    """Utterances spoken (``turn_results`` has them)."""
    ok: int
    """Turns answered with audio."""
    busy: int
    """Turns the server refused as busy."""
    failed: int
    outcomes: dict[str, int]
    """Turns per outcome."""
    mouth_to_ear: Described
    """Over the turns answered with audio, in ms."""
    queue: Described
    llm_queue: Described
    ttft: Described
    """Over the turns the LLM answered (a skill's answer evaluates no prompt tokens)."""
    prompt_tokens_evaluated: Described
    prompt_tokens_evaluated_after_first_turn: Described
    prompt_tokens: Described
    kv_restore: Described
    kv_evicted_turns: int
    kv_cache_mb_max: float
    retry_after_ms: Described
    """The retry hints the ``busy`` errors carried."""
    within_capacity: bool
    talkers: tuple[TalkerRecord, ...] = ()
    turn_results: tuple[LoadTurn, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d = fields_json(self)
        return {
            **d,
            "talkers": [t.to_json() for t in self.talkers],
            "turn_results": [dataclasses.asdict(t) for t in self.turn_results],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LevelSummary:
        talkers = tuple(
            TalkerRecord(t["talker"], tuple(t["clips"]), tuple(t["pauses_s"]), t["start_delay_s"])
            for t in data["talkers"]
        )
        turns = tuple(LoadTurn(**t) for t in data["turn_results"])
        return cls(**{**read_described(data, *_DESCRIBED), "talkers": talkers, "turn_results": turns})


_DESCRIBED = (
    "mouth_to_ear", "queue", "llm_queue", "ttft", "prompt_tokens_evaluated", "prompt_tokens_evaluated_after_first_turn",
    "prompt_tokens", "kv_restore", "retry_after_ms",
)  # fmt: skip
"""A level's statistics."""


@dataclass(frozen=True)
class InProcess:
    """A variant's in-process server: its models' loading and KV cache."""

    load_s: float
    kv_stats: KvStats | None
    """The per-conversation KV cache's counters at the end (None: off)."""
    config: dict[str, Any]
    """The configuration it ran with (as JSON, without the token)."""

    def to_json(self) -> dict[str, Any]:
        kv = dataclasses.asdict(self.kv_stats) if self.kv_stats is not None else None
        return {"load_s": self.load_s, "kv_stats": kv, "config": self.config}


@dataclass(frozen=True)
class LoadVariant:
    """One sweep of the levels against one server (the KV cache off or on, or an external server)."""

    name: str
    levels: tuple[LevelSummary, ...]
    capacity: int | None
    """The largest N within capacity; None: not even the smallest."""
    in_process: InProcess | None
    """None for an external server."""

    def to_json(self) -> dict[str, Any]:
        levels = [lv.to_json() for lv in self.levels]
        own = {"name": self.name, "levels": levels, "capacity": self.capacity}
        return {**own, **(self.in_process.to_json() if self.in_process is not None else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadVariant:
        in_process = None
        if "load_s" in data:
            kv = KvStats(**data["kv_stats"]) if data["kv_stats"] is not None else None
            in_process = InProcess(data["load_s"], kv, data["config"])
        levels = tuple(LevelSummary.from_json(lv) for lv in data["levels"])
        return cls(data["name"], levels, data["capacity"], in_process)


@dataclass(frozen=True)
class LoadMethod:
    """How the sitting measures, in words (the Markdown's method section)."""

    talkers: str
    capacity: str
    first_audio: str
    speech_end: str


@dataclass(frozen=True)
class LoadMeta:
    """How the sitting was made."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    speech_dir: str
    clips: tuple[str, ...]
    options: LoadOptions
    method: LoadMethod
    models: dict[str, str] | None
    """The ``stt``, ``llm`` and ``tts`` models; None for an external server."""
    server: str
    ram_peak_mb: float | None
    """This process's peak memory (models + server + client); None (not in the JSON) for an external server."""

    def to_json(self) -> dict[str, Any]:
        d = fields_json(self)
        d.update(
            machine=self.machine.to_json(),
            clips=list(self.clips),
            options=self.options.to_json(),
            method=dataclasses.asdict(self.method),
        )
        if self.ram_peak_mb is None:
            del d["ram_peak_mb"]
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadMeta:
        options = LoadOptions(**{**data["options"], "sessions": tuple(data["options"]["sessions"])})
        method = LoadMethod(**data["method"])
        return cls(**{**data, "machine": Machine.from_json(data["machine"]), "clips": tuple(data["clips"]),
                      "options": options, "method": method, "ram_peak_mb": data.get("ram_peak_mb")})  # fmt: skip


@dataclass(frozen=True)
class LoadResult:
    """A ``voice bench load`` sitting."""

    meta: LoadMeta
    variants: tuple[LoadVariant, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench load",
            "schema": 1,
            "meta": self.meta.to_json(),
            "variants": [v.to_json() for v in self.variants],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadResult:
        return cls(LoadMeta.from_json(data["meta"]), tuple(LoadVariant.from_json(v) for v in data["variants"]))

    def with_machine(self, machine: Machine) -> LoadResult:
        return dataclasses.replace(self, meta=dataclasses.replace(self.meta, machine=machine))
