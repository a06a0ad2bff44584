"""What one spoken clip measured in ``voice bench e2e``: the plan of turns, and each turn's result as the client and
the server saw it — mouth-to-ear, the server's stages, the reconciliation error and its parts, ``uncertain``
turns, split turns and the first answer (see :mod:`voice.bench.e2e.measure` for the method).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.bench import burst, stats
from voice.bench.clips import BenchError, Clip
from voice.client import ClientTurn, Conversation
from voice.wire.report import STAGES

UNCERTAIN_SLACK_MS = 20.0
"""A reply may come this much sooner after the reference speech end than the server's post-endpoint stages
take (the reference's own tolerance) before the turn is ``uncertain``."""
UNCERTAIN_METHOD = (
    "a turn is `uncertain` — shown, counted, and left out of every percentile and verdict, never counted "
    "within target — when its clip's reference speech end is ambiguous, when its first reply audio comes "
    "before the reference speech end, or when it comes sooner after it than the server's post-endpoint "
    f"stages (sum of stages − endpoint silence) take, by more than {UNCERTAIN_SLACK_MS:g} ms"
)


@dataclass(frozen=True)
class PlanItem:
    clip: Clip
    phase: str
    """``warmup`` (not in the statistics) or ``measured``."""
    repeat: int
    """1-based repeat for measured turns, 0 for warm-up turns."""
    first_after_load: bool = False


def make_plan(clips: Sequence[Clip], repeats: int, warmup: int) -> list[PlanItem]:
    """``warmup`` turns (cycling through the clips), then every clip ``repeats`` times, clip order kept."""
    if not clips:
        raise BenchError("no clips to speak")
    items = [PlanItem(clips[k % len(clips)], "warmup", 0) for k in range(max(0, warmup))]
    items += [PlanItem(c, "measured", r) for r in range(1, max(0, repeats) + 1) for c in clips]
    if items:
        items[0] = dataclasses.replace(items[0], first_after_load=True)
    return items


@dataclass
class TurnResult:
    """One clip spoken once, as the client and the server saw it. Durations in milliseconds."""

    clip: str
    repeat: int
    phase: str
    first_after_load: bool
    outcome: str
    session_id: str = ""
    turn_id: int | None = None
    turns_heard: int = 0
    first_answer_ms: float | None = None
    """Clip heard as several turns: from the pause the server first took for an end to the first reply audio
    of any of its turns (what the user heard first), or None."""
    first_answer_interrupted: bool = False
    """That first reply audio came before the clip's speech end: it talked over the user."""
    mouth_to_ear_ms: float | None = None
    stages_ms: dict[str, float] = field(default_factory=dict)
    server_total_ms: float | None = None
    work_to_first_audio_ms: float | None = None
    """The server's work on the reply, from its start (the pause, for a speculative reply; else the endpoint) to
    its first audio being ready, before or after the endpoint (the turn report's); None: no audio, or a server
    whose reports lack it (then it is left out of the JSON)."""
    turn_score: float | None = None
    """The turn report's end-of-turn model score (None: no model; left out of the JSON)."""
    turn_words_p: float | None = None
    """The turn report's words-model probability that the words end the turn (None: none; left out of the JSON)."""
    reconciliation_error_ms: float | None = None
    speech_end_offset_ms: float | None = None
    reply_lead_silence_ms: float | None = None
    residual_ms: float | None = None
    wer: float | None = None
    wer_normalized: float | None = None
    """WER after Whisper's English normalizer (numbers, spelling, contractions)."""
    uncertain: str | None = None
    """Why this turn's mouth-to-ear cannot be trusted (then it is left out of statistics), or None."""
    reference: str | None = None
    transcript: str = ""
    reply_text: str = ""
    asked_again: bool = False
    """The server was unsure of what it heard and asked to say it again ([stt] ask_again): a quick reply that
    answers nothing, counted apart in the summary."""
    reply_tokens: int | None = None
    reply_audio_s: float | None = None
    llm: dict[str, Any] | None = None
    prompt_tokens_reused: int | None = None
    prompt_tokens_evaluated: int | None = None
    speech_end_s: float = 0.0
    send_lag_max_ms: float = 0.0
    """Worst lateness of a client frame against real time, over the whole session."""
    send_lag_before_endpoint_ms: float = 0.0
    """…among frames sent before the measured turn's endpoint: only these can shift the measurement."""
    other_cpu_percent: float | None = None
    """Share of the machine's CPU that other processes used during this turn."""
    audio_file: str | None = None
    error: str | None = None
    route: str = ""
    """Which server address the turn went to when a run compares two (``direct``), else empty."""
    arrival_spread_ms: float | None = None
    """Client clock: first reply audio chunk's arrival → last chunk's."""
    audio_sent_spread_ms: float | None = None
    """Server clock (turn report): first reply audio chunk handed to the socket → last."""
    burst: bool | None = None
    """The reply audio arrived in a burst though the server sent it over time (:mod:`voice.bench.burst`):
    something on the path buffers the stream. None: cannot tell."""
    burst_why: str = ""

    @property
    def label(self) -> str:
        stem = Path(self.clip).stem
        label = f"{stem}#{self.repeat}" if self.phase == "measured" else f"{stem} (warm-up)"
        return f"{label} [{self.route}]" if self.route else label

    def fields_dict(self) -> dict[str, Any]:
        """Every field, the work from the pause and the end-of-turn evidence only when known (results made before
        them stay as written)."""
        d = dataclasses.asdict(self)
        for key in ("work_to_first_audio_ms", "turn_score", "turn_words_p"):
            if d[key] is None:
                del d[key]
        return d

    def to_dict(self) -> dict[str, Any]:
        """:meth:`fields_dict` and a copy of each stage as ``<stage>_ms``."""
        d = self.fields_dict()
        for name, value in self.stages_ms.items():
            d[f"{name}_ms"] = value
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TurnResult:
        """The turn written as ``data`` by :meth:`to_dict` (its copies of the stages left out)."""
        return cls(**{k: v for k, v in data.items() if k in _TURN_FIELDS})


_TURN_FIELDS = frozenset(f.name for f in dataclasses.fields(TurnResult))


def _r(x: float | None, nd: int = 1) -> float | None:
    return None if x is None else round(x, nd)


def _utterance_turns(conv: Conversation) -> list[int]:
    if conv.utterance_turns:
        return conv.utterance_turns[0]
    return sorted(conv.turns)


def turn_result(item: PlanItem, conv: Conversation) -> TurnResult:
    """Join what the client measured with the server's report of the last turn the clip produced."""
    res = TurnResult(
        clip=item.clip.name,
        repeat=item.repeat,
        phase=item.phase,
        first_after_load=item.first_after_load,
        outcome="no_turn",
        session_id=conv.session_id,
        reference=item.clip.reference,
        speech_end_s=round(item.clip.speech_end_s, 3),
        send_lag_max_ms=round(conv.max_send_lag_ms, 1),
    )
    ids = _utterance_turns(conv)
    res.turns_heard = len(ids)
    if conv.errors:
        res.error = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in conv.errors)
    if not ids:
        return res
    turns = [conv.turns[i] for i in ids]
    last: ClientTurn = turns[-1]
    if len(turns) > 1:
        res.first_answer_ms, res.first_answer_interrupted = first_answer(turns)
    report = last.report or {}
    res.turn_id = last.turn_id
    if last.speech_ended_ns is not None:
        res.send_lag_before_endpoint_ms = round(conv.max_send_lag_before_ms(last.speech_ended_ns), 1)
    res.outcome = str(report.get("outcome", "no_report"))
    res.transcript = " ".join(
        t for t in ((x.report or {}).get("transcript") or x.transcript for x in turns) if t
    ).strip()
    res.reply_text = str(report.get("reply_text") or " ".join(last.reply_text))
    res.asked_again = bool(report.get("asked_again", False))
    if item.clip.reference is not None:
        res.wer = stats.wer(item.clip.reference, res.transcript)
        res.wer_normalized = stats.corpus_wer_normalized([(item.clip.reference, res.transcript)])
    res.stages_ms = {k: float(v) for k, v in (report.get("stages_ms") or {}).items()}
    score, words_p = report.get("turn_score"), report.get("turn_words_p")
    res.turn_score = float(score) if isinstance(score, int | float) else None
    res.turn_words_p = float(words_p) if isinstance(words_p, int | float) else None
    work = report.get("work_to_first_audio_ms")
    res.work_to_first_audio_ms = None if work is None else float(work)
    llm = report.get("llm")
    res.llm = dict(llm) if isinstance(llm, dict) else None
    res.reply_tokens = int(llm["n_tokens"]) if isinstance(llm, dict) else report.get("generated_tokens")
    if "reply_audio_ms" in report:
        res.reply_audio_s = round(float(report["reply_audio_ms"]) / 1000, 2)
    elif last.sample_rate:
        res.reply_audio_s = round(len(last.pcm) / 2 / last.sample_rate, 2)
    res.prompt_tokens_reused = report.get("prompt_tokens_reused")
    res.prompt_tokens_evaluated = report.get("prompt_tokens_evaluated")

    m2e = last.mouth_to_ear_ms()
    res.mouth_to_ear_ms = _r(m2e)
    if res.outcome == "ok" and m2e is None:
        res.outcome = "no_audio"
    if res.stages_ms:
        res.server_total_ms = _r(sum(res.stages_ms.values()))
    if m2e is not None and res.server_total_ms is not None:
        _decompose(res, last, m2e)
    res.uncertain = uncertainty(item.clip.speech_end.ambiguous, m2e, res.stages_ms)
    if last.chunks and last.sample_rate:
        _judge_burst(res, last, report.get("reply_audio_sent_spread_ms"))
    return res


def _decompose(res: TurnResult, last: ClientTurn, m2e: float) -> None:
    """The reconciliation error (client mouth-to-ear − server stage sum) and its parts: the reply's lead
    silence, the speech-end offset (server's estimate − the reference), and what is left."""
    recon = m2e - sum(res.stages_ms.values())
    res.reconciliation_error_ms = _r(recon)
    first_audio, first_chunk = last.first_audio_ns(), last.first_chunk_ns()
    if first_audio is not None and first_chunk is not None:
        res.reply_lead_silence_ms = _r((first_audio - first_chunk) / 1e6)
    silence = res.stages_ms.get("endpoint_silence", last.trailing_silence_ms)
    if last.speech_ended_ns is not None and last.speech_end_ns is not None and silence is not None:
        server_speech_end = last.speech_ended_ns - silence * 1e6
        res.speech_end_offset_ms = _r((server_speech_end - last.speech_end_ns) / 1e6)
    if res.reply_lead_silence_ms is not None and res.speech_end_offset_ms is not None:
        res.residual_ms = _r(recon - res.reply_lead_silence_ms - res.speech_end_offset_ms)


def _judge_burst(res: TurnResult, last: ClientTurn, sent: object) -> None:
    """Did the reply's audio arrive in a lump (buffered on the way)? See :mod:`voice.bench.burst`."""
    audio_ms = sum(len(c) for _, c in last.chunks) / 2 / last.sample_rate * 1000
    v = burst.judge([t for t, _ in last.chunks], audio_ms, float(sent) if isinstance(sent, int | float) else None)
    res.arrival_spread_ms, res.audio_sent_spread_ms = v.arrival_spread_ms, v.sent_spread_ms
    res.burst, res.burst_why = v.burst, v.why


def first_answer(turns: Sequence[ClientTurn]) -> tuple[float | None, bool]:
    """For an utterance heard as several turns (in order; the last holds the utterance's speech end): the ms
    from the pause the server took for the end of the first turn that answered to that answer's first audio,
    and whether that audio came before the utterance's real speech end (it interrupted the user)."""
    speech_end_ns = turns[-1].speech_end_ns
    for t in turns:
        audio_ns = t.first_audio_ns()
        if audio_ns is None or t.speech_ended_ns is None or t.trailing_silence_ms is None:
            continue
        pause_ns = t.speech_ended_ns - t.trailing_silence_ms * 1e6
        interrupted = speech_end_ns is not None and audio_ns < speech_end_ns
        return _r((audio_ns - pause_ns) / 1e6), interrupted
    return None, False


def uncertainty(ambiguous: str | None, mouth_to_ear_ms: float | None, stages_ms: dict[str, float]) -> str | None:
    """Why a turn's mouth-to-ear cannot be trusted (:data:`UNCERTAIN_METHOD`), or None."""
    reasons = [f"speech end ambiguous: {ambiguous}"] if ambiguous else []
    if mouth_to_ear_ms is not None:
        if mouth_to_ear_ms <= 0:
            reasons.append(f"reply audio {-mouth_to_ear_ms:.0f} ms before the reference speech end")
        elif stages_ms:
            after_endpoint = sum(stages_ms.values()) - stages_ms.get("endpoint_silence", 0.0)
            if mouth_to_ear_ms < after_endpoint - UNCERTAIN_SLACK_MS:
                reasons.append(
                    f"mouth-to-ear {mouth_to_ear_ms:.0f} ms is shorter than the server's post-endpoint "
                    f"stages ({after_endpoint:.0f} ms)"
                )
    return "; ".join(reasons) or None


def stage_names(turns: Sequence[TurnResult]) -> list[str]:
    """Stages seen in the reports, in pipeline order (unknown ones after, in order of appearance)."""
    seen: list[str] = []
    for t in turns:
        for name in t.stages_ms:
            if name not in seen:
                seen.append(name)
    known = [s for s in STAGES if s in seen]
    return known + [s for s in seen if s not in STAGES]
