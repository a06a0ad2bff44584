"""What ``voice bench matrix`` measured, typed: a row per combination of models (measured, or failed), its
quality verdict, and the whole result, with the JSON each is written as (``to_json``, the keys and their order
as they were when the results were dicts) and read back from (``from_json``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from voice.bench.e2e.meta import E2eMeta
from voice.bench.e2e.result import E2eSummary
from voice.bench.machine_record import Machine
from voice.bench.markdown import fields_json

_OPTIONAL = ("log", "json", "work_to_first_audio_p50_ms", "work_to_first_audio_p95_ms", "decision_window_ms")
"""Fields left out of the JSON when None (the files went with the temporary directory; the work from the pause
of a result made before it)."""


def _row_json(row: object) -> dict[str, Any]:
    """A row's fields in order, the optional paths only when set, the quality verdict's keys at the end."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(row):  # type: ignore[arg-type]
        value = getattr(row, f.name)
        if f.name == "quality":
            out.update(value.to_json() if value is not None else {})
        elif value is not None or f.name not in _OPTIONAL:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


@dataclass(frozen=True)
class QualityVerdict:
    """A measured combination's quality (its LLM's in text mode, its STT + LLM's in spoken mode) and the joint
    verdict."""

    quality_right_pct: float | None
    """Share of the quality set answered right; None when its quality run failed."""
    quality_items: int | None
    meets_quality: bool
    """At or over the quality bar."""
    meets_turn_taking: bool
    """Meets the quality bar and the latency target at p50 or better."""
    quality_declined_pct: float | None = None
    """Share of the quality set honestly declined ("I can't …", "I don't know"); None when the quality run did
    not count the four outcomes (made before them, or failed)."""
    quality_asked_again_pct: float | None = None
    """Share where the reply asked to say it again."""
    quality_wrong_pct: float | None = None
    """Share neither right, nor declined, nor asked again: wrong answers given."""

    @property
    def outcomes(self) -> tuple[float | None, ...] | None:
        """Right, honest decline, asked again, wrong (%); None when they were not counted."""
        if self.quality_declined_pct is None:
            return None
        return (
            self.quality_right_pct,
            self.quality_declined_pct,
            self.quality_asked_again_pct,
            self.quality_wrong_pct,
        )

    def to_json(self) -> dict[str, Any]:
        """The verdict's keys; the outcomes' three after ``quality_right_pct``, only when counted (results made
        before them stay as written)."""
        d = dataclasses.asdict(self)
        shares = {k: d.pop(k) for k in _OUTCOME_KEYS}
        out = {"quality_right_pct": d.pop("quality_right_pct")}
        return out | ({} if self.outcomes is None else shares) | d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QualityVerdict:
        """From a row's JSON (which holds the row's own keys too)."""
        return cls(**{k: data[k] for k in _QUALITY if k in data})


_OUTCOME_KEYS = ("quality_declined_pct", "quality_asked_again_pct", "quality_wrong_pct")


@dataclass(frozen=True)
class ComboRun:
    """One combination's ``voice bench e2e`` process."""

    stt: str
    llm: str
    tts: str
    exit_code: int
    wall_s: float
    ram_peak_mb: float
    """``ru_maxrss`` of the process (models + server + client)."""
    log: str | None
    """Its log file; None when it went with the temporary directory."""

    @property
    def name(self) -> str:
        return f"{self.stt} + {self.llm} + {self.tts}"


@dataclass(frozen=True)
class FailedRow(ComboRun):
    """A combination whose process wrote no result."""

    error: str
    """The end of its log, or its exit code."""

    @property
    def meets_turn_taking(self) -> None:
        """Not measured: no verdict."""
        return None

    @property
    def quality_right_pct(self) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        return _row_json(self)


@dataclass(frozen=True)
class MeasuredRow(ComboRun):
    """A combination measured: figures from its ``voice bench e2e`` result (mouth-to-ear at the client, the
    server's stages; ms unless stated)."""

    json: str | None
    """Its e2e result file; None when it went with the temporary directory."""
    n_measured: int
    n_failed: int
    p50_ms: float | None
    """Mouth-to-ear."""
    p95_ms: float | None
    max_ms: float | None
    stages_p50_ms: dict[str, float]
    """p50 of each of the server's stages."""
    server_total_p50_ms: float | None
    p50_reconciliation_error_ms: float | None
    wer: float | None
    """STT word error rate over all clips pooled."""
    llm_tps_p50: float | None
    llm_ttft_p50_ms: float | None
    reply_tokens_p50: float | None
    reply_audio_s_p50: float | None
    meets_target: str
    """``yes`` (p95 within the target), ``p50 only``, ``no`` or ``n/a``."""
    meets_human_gap: str
    within_target: int
    """Turns within the target."""
    load_s: float | None
    """Loading the models."""
    load_average_at_start: tuple[float, ...]
    other_processes_cpu_percent: float | None
    redone_turns: int | None
    """Turns the guard had spoken again (with ``--max-load``)."""
    examples: dict[str, str]
    """The first measured reply to each clip."""
    work_to_first_audio_p50_ms: float | None = None
    """The server's work on a reply from its start (the pause, for a speculative reply; else the endpoint) to its
    first audio being ready, p50 over turns; None: its e2e result has none (made before it)."""
    work_to_first_audio_p95_ms: float | None = None
    decision_window_ms: float | None = None
    """The silence that work has before the turn is decided (:func:`decision_window_ms`); None: not known (an
    external server, no speculation, or no work measured)."""
    quality: QualityVerdict | None = None
    """None when quality was not measured."""

    @property
    def meets_turn_taking(self) -> bool | None:
        return None if self.quality is None else self.quality.meets_turn_taking

    @property
    def quality_right_pct(self) -> float | None:
        return None if self.quality is None else self.quality.quality_right_pct

    def to_json(self) -> dict[str, Any]:
        return _row_json(self)

    @classmethod
    def from_e2e(cls, run: ComboRun, json_path: str, data: dict[str, Any]) -> MeasuredRow:
        """The row of ``run`` from its ``voice bench e2e`` JSON ``data``, written at ``json_path``."""
        s, meta = E2eSummary.from_json(data["summary"]), E2eMeta.from_json(data["meta"])
        machine = meta.machine
        examples: dict[str, str] = {}
        for t in data["turns"]:
            examples.setdefault(t["clip"], t["reply_text"])
        work = s.work_to_first_audio
        return cls(
            **{f.name: getattr(run, f.name) for f in dataclasses.fields(run)},
            json=json_path,
            n_measured=s.n_measured,
            n_failed=s.n_failed,
            p50_ms=s.p50_ms,
            p95_ms=s.p95_ms,
            max_ms=s.max_ms,
            stages_p50_ms={k: p50 for k, v in s.stages.items() if (p50 := v.p50) is not None},  # never None
            server_total_p50_ms=s.server_total.p50,
            p50_reconciliation_error_ms=s.p50_reconciliation_error_ms,
            wer=s.wer,
            llm_tps_p50=s.llm_tps.p50,
            llm_ttft_p50_ms=s.llm_ttft.p50,
            reply_tokens_p50=s.reply_tokens.p50,
            reply_audio_s_p50=s.reply_audio_s.p50,
            meets_target=s.meets_target,
            meets_human_gap=s.meets_human_gap,
            within_target=s.within_target,
            load_s=meta.load_s,
            load_average_at_start=machine.load_average_at_start,
            other_processes_cpu_percent=machine.other_processes_cpu_percent,
            redone_turns=machine.guard.redone_samples if machine.guard is not None else None,
            examples=examples,
            work_to_first_audio_p50_ms=None if work is None else work.p50,
            work_to_first_audio_p95_ms=None if work is None else work.p95,
            decision_window_ms=None if work is None else decision_window_ms(meta.config),
        )


def decision_window_ms(config: dict[str, Any] | None) -> float | None:
    """The silence between a speculative reply's start and the end of a turn scored complete, by the configuration
    the server ran with (an e2e result's ``meta.config``): ``[turn] complete_silence_ms`` (``[vad] silence_ms``
    without an end-of-turn model) − ``[turn] speculate_after_ms``. Work from the pause within it is hidden in
    the silence; beyond it, it is latency. None: no configuration (an external server) or no speculation (all
    the work comes after the endpoint)."""
    turn, vad = (config or {}).get("turn") or {}, (config or {}).get("vad") or {}
    speculate_ms = turn.get("speculate_after_ms") or 0
    end_ms = turn.get("complete_silence_ms") if turn.get("end_of_turn_model") else vad.get("silence_ms")
    if speculate_ms <= 0 or end_ms is None or end_ms <= speculate_ms:
        return None
    return float(end_ms - speculate_ms)


Row = MeasuredRow | FailedRow
_QUALITY = tuple(f.name for f in dataclasses.fields(QualityVerdict))


def row_from_json(data: dict[str, Any]) -> Row:
    own = {k: v for k, v in data.items() if k not in _QUALITY}
    own.setdefault("log", None)
    if "error" in data:
        return FailedRow(**own)
    quality = QualityVerdict.from_json(data) if "meets_quality" in data else None
    own.setdefault("json", None)
    return MeasuredRow(
        **{**own, "load_average_at_start": tuple(own["load_average_at_start"])}, quality=quality
    )


@dataclass(frozen=True)
class MatrixMeta:
    """How the run was made."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    speech_dir: str
    clips: tuple[str, ...]
    repeats: int
    warmup: int
    models: dict[str, tuple[str, ...]]
    """The models combined: ``stt``, ``llm`` and ``tts``."""
    quality_bar_pct: float | None
    """The share of the quality set a combination must answer right; None: quality not measured."""
    quality_mode: str
    """``text`` (each LLM) or ``spoken`` (each STT + LLM)."""
    quality: dict[str, dict[str, Any]]
    """Each quality run's summary as ``voice bench quality`` wrote it (its JSON), or an ``error``."""

    def to_json(self) -> dict[str, Any]:
        d = fields_json(self)
        models = {k: list(v) for k, v in self.models.items()}
        return {**d, "machine": self.machine.to_json(), "clips": list(self.clips), "models": models}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatrixMeta:
        models = {k: tuple(v) for k, v in data["models"].items()}
        machine = Machine.from_json(data["machine"])
        return cls(**{**data, "machine": machine, "clips": tuple(data["clips"]), "models": models})


@dataclass(frozen=True)
class MatrixResult:
    """A ``voice bench matrix`` run."""

    meta: MatrixMeta
    rows: tuple[Row, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "voice bench matrix",
            "schema": 1,
            "meta": self.meta.to_json(),
            "rows": [r.to_json() for r in self.rows],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatrixResult:
        return cls(MatrixMeta.from_json(data["meta"]), tuple(row_from_json(r) for r in data["rows"]))

    def with_machine(self, machine: Machine) -> MatrixResult:
        return dataclasses.replace(self, meta=dataclasses.replace(self.meta, machine=machine))
