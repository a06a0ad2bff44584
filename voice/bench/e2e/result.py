"""What ``voice bench e2e`` measured, typed: the summary of a run's turns (:func:`summarize`), with the turns it
names (failed, uncertain, in a burst), and the whole result; with the JSON each is written as (``to_json``: the
keys and their order as they were when the summary was a dict) and read back from (``from_json``). Durations are
in milliseconds; a :class:`~voice.bench.stats.Described` is a sample's ``n``, ``p50``, ``p95``, ``max``, ``min``
and ``mean``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from voice.bench import stats
from voice.bench.e2e.meta import ClipInfo, E2eMeta
from voice.bench.e2e.turn import TurnResult, stage_names
from voice.bench.machine_record import Machine
from voice.bench.stats import Described, read_described


@dataclass(frozen=True)
class NamedTurn:
    """A turn the summary names: its clip and repeat."""

    clip: str
    repeat: int


@dataclass(frozen=True)
class FailedTurn(NamedTurn):
    """A turn without a mouth-to-ear."""

    outcome: str
    """``timeout``, ``error``, ``no_turn``, ``no_audio``, …"""
    error: str | None


@dataclass(frozen=True)
class UncertainTurn(NamedTurn):
    """A turn whose mouth-to-ear is not trusted (left out of every statistic)."""

    mouth_to_ear_ms: float | None
    why: str | None
    """What makes it untrusted (the reference speech end ambiguous, a reply too early, …)."""


@dataclass(frozen=True)
class BurstTurn(NamedTurn):
    """A turn whose reply audio arrived in a burst (:mod:`voice.bench.burst`)."""

    why: str
    """How fast the chunks came against the audio they carry and the time the server took to send them."""


@dataclass(frozen=True)
class E2eSummary:
    """Statistics of a run's turns; the percentiles are over the measured turns that are not uncertain."""

    n_turns: int
    n_measured: int
    """Turns with a mouth-to-ear that is not uncertain (the percentiles' sample)."""
    n_failed: int
    failed: tuple[FailedTurn, ...]
    n_uncertain: int
    uncertain: tuple[UncertainTurn, ...]
    p50_ms: float | None
    """Mouth-to-ear p50 (None: no turn measured)."""
    p95_ms: float | None
    max_ms: float | None
    min_ms: float | None
    mean_ms: float | None
    stages: dict[str, Described]
    """The server's stages (ms), each over the turns that have it, in the budget's order."""
    server_total: Described
    """Sum of the server's stages (ms)."""
    p50_reconciliation_error_ms: float | None
    reconciliation_error: Described
    """Mouth-to-ear − sum of the server's stages (ms)."""
    reconciliation_error_abs_max_ms: float | None
    speech_end_offset: Described
    """The server's speech end − the clip's (ms)."""
    reply_lead_silence: Described
    """First audible reply sample − first reply chunk's arrival (ms)."""
    residual: Described
    """The reconciliation error not explained by the two above (ms)."""
    wer: float | None
    """Corpus word error rate, all clips pooled (None: no reference)."""
    wer_normalized: float | None
    """The same after Whisper's English normalizer."""
    wer_mean: float | None
    """Mean of the per-turn rates."""
    reply_tokens: Described
    reply_audio_s: Described
    """Reply audio length (seconds)."""
    llm_ttft: Described
    """The LLM's time to first token (ms)."""
    llm_itl: Described
    """The LLM's mean inter-token latency per turn (ms)."""
    llm_tps: Described
    """The LLM's tokens per second."""
    within_target: int
    """Turns within ``stats.TARGET_MS``."""
    within_human_gap: int
    """Turns within ``stats.HUMAN_GAP_MS``."""
    meets_target: str
    """:func:`~voice.bench.stats.verdict`: ``yes``, ``p50 only``, ``no`` or ``n/a``."""
    meets_human_gap: str
    asked_again: int
    """Turns that asked to say it again ([stt] ask_again)."""
    split_clips: tuple[str, ...]
    """Clips heard as more than one turn, sorted."""
    false_endpoints: int
    split_turns_interrupting: int
    """Split turns whose first answer talked over the user."""
    split_first_answer_p50_ms: float | None
    other_cpu_percent_max: float
    """Most of the machine's CPU other processes used during a turn (%)."""
    send_lag_max_ms: float
    send_lag_before_endpoint_max_ms: float
    n_burst: int
    n_burst_judged: int
    burst: tuple[BurstTurn, ...]
    work_to_first_audio: Described | None = None
    """The server's work on each reply from its start (the pause, for a speculative reply) to its first audio
    being ready (ms; :attr:`TurnResult.work_to_first_audio_ms`). None, and left out of the JSON: no turn has
    it (a result made before it, or no audio)."""

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if self.work_to_first_audio is None:
            del d["work_to_first_audio"]
        for key in ("failed", "uncertain", "split_clips", "burst"):
            d[key] = list(d[key])
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> E2eSummary:
        return cls(
            **{
                **read_described(data, *_DESCRIBED),
                "stages": {name: Described.from_json(d) for name, d in data["stages"].items()},
                "failed": tuple(FailedTurn(**f) for f in data["failed"]),
                "uncertain": tuple(UncertainTurn(**u) for u in data["uncertain"]),
                "split_clips": tuple(data["split_clips"]),
                "burst": tuple(BurstTurn(**b) for b in data["burst"]),
            }
        )


_DESCRIBED = (
    "server_total", "reconciliation_error", "speech_end_offset", "reply_lead_silence", "residual", "reply_tokens",
    "reply_audio_s", "llm_ttft", "llm_itl", "llm_tps", "work_to_first_audio",
)  # fmt: skip
"""The summary's statistics (besides the stages')."""


def summarize(turns: Sequence[TurnResult], normalize: Callable[[str], str] = stats.whisper_normalize) -> E2eSummary:
    """Statistics of the turns given (pass the measured ones); ``uncertain`` turns are counted, not used."""
    measured = [t for t in turns if t.mouth_to_ear_ms is not None]
    uncertain = [t for t in measured if t.uncertain]
    ok = [t for t in measured if not t.uncertain]
    m2e = [t.mouth_to_ear_ms for t in ok if t.mouth_to_ear_ms is not None]
    d = stats.describe(m2e)
    recon = [t.reconciliation_error_ms for t in ok if t.reconciliation_error_ms is not None]
    rd = stats.describe(recon)

    def col(name: str) -> Described:
        return stats.describe([float(v) for t in ok if (v := getattr(t, name)) is not None])

    def llm_col(key: str) -> Described:
        return stats.describe([float(t.llm[key]) for t in ok if t.llm and t.llm.get(key) is not None])

    pairs = [(t.reference, t.transcript) for t in turns if t.reference is not None and t.outcome != "no_turn"]
    wers = [t.wer for t in turns if t.wer is not None]
    p50, p95 = d.p50, d.p95
    work = col("work_to_first_audio_ms")
    return E2eSummary(
        n_turns=len(turns),
        n_measured=len(ok),
        n_failed=len(turns) - len(measured),
        failed=tuple(FailedTurn(t.clip, t.repeat, t.outcome, t.error) for t in turns if t not in measured),
        n_uncertain=len(uncertain),
        uncertain=tuple(UncertainTurn(t.clip, t.repeat, t.mouth_to_ear_ms, t.uncertain) for t in uncertain),
        p50_ms=p50,
        p95_ms=p95,
        max_ms=d.max,
        min_ms=d.min,
        mean_ms=d.mean,
        stages={s: stats.describe([t.stages_ms[s] for t in ok if s in t.stages_ms]) for s in stage_names(ok)},
        server_total=col("server_total_ms"),
        p50_reconciliation_error_ms=rd.p50,
        reconciliation_error=rd,
        reconciliation_error_abs_max_ms=round(max(abs(x) for x in recon), 1) if recon else None,
        speech_end_offset=col("speech_end_offset_ms"),
        reply_lead_silence=col("reply_lead_silence_ms"),
        residual=col("residual_ms"),
        wer=stats.corpus_wer(pairs),
        wer_normalized=stats.corpus_wer_normalized(pairs, normalize),
        wer_mean=round(sum(wers) / len(wers), 4) if wers else None,
        reply_tokens=col("reply_tokens"),
        reply_audio_s=col("reply_audio_s"),
        llm_ttft=llm_col("ttft_ms"),
        llm_itl=llm_col("itl_mean_ms"),
        llm_tps=llm_col("tps"),
        within_target=sum(1 for x in m2e if x <= stats.TARGET_MS),
        within_human_gap=sum(1 for x in m2e if x <= stats.HUMAN_GAP_MS),
        meets_target=stats.verdict(p50, p95, stats.TARGET_MS),
        meets_human_gap=stats.verdict(p50, p95, stats.HUMAN_GAP_MS),
        asked_again=sum(1 for t in ok if t.asked_again),
        split_clips=tuple(sorted({t.clip for t in turns if t.turns_heard > 1})),
        false_endpoints=sum(max(0, t.turns_heard - 1) for t in turns),
        split_turns_interrupting=sum(1 for t in turns if t.first_answer_interrupted),
        split_first_answer_p50_ms=stats.describe(
            [t.first_answer_ms for t in turns if t.first_answer_ms is not None]
        ).p50,
        other_cpu_percent_max=max((t.other_cpu_percent or 0.0 for t in turns), default=0.0),
        send_lag_max_ms=max((t.send_lag_max_ms for t in turns), default=0.0),
        send_lag_before_endpoint_max_ms=max((t.send_lag_before_endpoint_ms for t in turns), default=0.0),
        n_burst=sum(1 for t in turns if t.burst),
        n_burst_judged=sum(1 for t in turns if t.burst is not None),
        burst=tuple(BurstTurn(t.clip, t.repeat, t.burst_why) for t in turns if t.burst),
        work_to_first_audio=work if work.n else None,
    )


@dataclass
class E2eResult:
    """A ``voice bench e2e`` run: how it was made, its clips and every turn spoken (the summary is made from
    them)."""

    meta: E2eMeta
    """The machine, the speech folder, the method (:func:`voice.bench.e2e.measure.method_meta`), the server, the models
    and their configuration (in-process), the RAM peak."""
    clips: list[ClipInfo]
    """Each clip's :meth:`~voice.bench.clips.Clip.describe`."""
    turns: list[TurnResult]
    """Warm-up and measured, in the order spoken."""
    warnings: list[str] = field(default_factory=list)
    direct: list[TurnResult] = field(default_factory=list)
    """With ``--compare-direct``: the same plan spoken to the server directly (:mod:`voice.bench.e2e.compare`)."""

    @property
    def machine(self) -> Machine:
        """The machine record (the meta's), completed at the end of the run."""
        return self.meta.machine

    def with_machine(self, machine: Machine) -> E2eResult:
        return dataclasses.replace(self, meta=dataclasses.replace(self.meta, machine=machine))

    @property
    def measured(self) -> list[TurnResult]:
        return [t for t in self.turns if t.phase == "measured"]

    @property
    def first_turn(self) -> TurnResult | None:
        return next((t for t in self.turns if t.first_after_load), None)

    def summary(self) -> E2eSummary:
        return summarize(self.measured, self._normalize)

    @property
    def _normalize(self) -> Callable[[str], str]:
        """How this run's normalized WER is scored: as its meta says (an older run keeps its numbers)."""
        return stats.normalizer_for(self.meta.method.wer_normalized)

    def to_json(self) -> dict[str, Any]:
        first = self.first_turn
        return {
            "tool": "voice bench e2e",
            "schema": 1,
            "meta": self.meta.to_json(),
            "clips": [c.to_json() for c in self.clips],
            "summary": self.summary().to_json(),
            "first_turn_after_load": first.to_dict() if first else None,
            "turns": [t.to_dict() for t in self.measured],
            "warmup_turns": [t.to_dict() for t in self.turns if t.phase != "measured"],
            "warnings": self.warnings,
            **(self._compared() if self.direct else {}),
        }

    def _compared(self) -> dict[str, Any]:
        from voice.bench.e2e.pairing import added_latency

        direct = [t for t in self.direct if t.phase == "measured"]
        return {
            "added_latency": added_latency(self.measured, direct).to_json(),
            "direct_summary": summarize(direct, self._normalize).to_json(),
            "direct_turns": [t.to_dict() for t in direct],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> E2eResult:
        """The run written as ``data``: its turns read back (the summary is made again from them)."""
        turns = [TurnResult.from_dict(t) for t in (*data["warmup_turns"], *data["turns"])]
        direct = [TurnResult.from_dict(t) for t in data.get("direct_turns", [])]
        meta, clips = E2eMeta.from_json(data["meta"]), [ClipInfo.from_json(c) for c in data["clips"]]
        return cls(meta, clips, turns, data["warnings"], direct)
