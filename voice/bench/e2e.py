"""``voice bench e2e``: mouth-to-ear latency heard at the client, reconciled with the server's stage log.

Every clip is spoken into the server over a websocket as a microphone would: in real time, in 20 ms
frames, then silence until the reply has come (:func:`voice.client.converse`). On the client's monotonic
clock:

* **speech end** = the clip's reference speech end (:mod:`voice.speech_end`: an offline speech
  detector locates the last speech, the background-subtracted energy envelope places its end), independent
  of the server's endpointing, or the end annotated in ``transcripts.tsv``;
* **first audio** = when the first non-silent reply sample would sound: arrival of its chunk plus its offset
  inside the chunk (a player starts a chunk on arrival or when the previous one ends, whichever is later);
* **mouth-to-ear** = first audio − speech end.

The server's ``turn_report`` (joined by turn id) gives its stages; the **reconciliation error** is
mouth-to-ear minus the sum of those stages. It is split into what explains it: the offset between the
server VAD's speech end and the clip's (estimated from the arrival of ``speech_ended`` minus the silence
the VAD waited), the silent lead of the reply audio, and a residual (transport, clocks, anything else).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import resource
import ssl
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.audio import write_wav
from voice.bench import burst, stats
from voice.bench.clips import BenchError, Clip
from voice.bench.machine import Guard
from voice.budget import STAGES
from voice.client import ClientTurn, Conversation, converse
from voice.config import Config
from voice.engine import Engines
from voice.speech_end import METHOD as SPEECH_END_METHOD

log = logging.getLogger("voice.bench")

SESSION_NOTE = (
    "each clip is spoken in its own session (a new websocket connection), so no conversation history "
    "carries over between clips; the LLM's system-prompt prefix stays cached across sessions, as in a "
    "running server"
)
FIRST_AUDIO_METHOD = (
    "first audio = arrival at the client of the chunk holding the first reply sample above 0.01 full scale "
    "(-40 dBFS), plus that sample's offset in the chunk (a player starting each chunk on arrival or when "
    "the previous chunk ends, whichever is later)"
)
RECONCILIATION_METHOD = (
    "reconciliation error = client mouth-to-ear − sum of the server's stages; explained by "
    "speech-end offset (server VAD speech end − clip speech end, estimated as arrival of `speech_ended` − "
    "the VAD's trailing silence), reply lead silence (first audible sample − first reply chunk arrival) "
    "and a residual (transport and everything else)"
)
PROTOCOL_METHOD = {
    "native": "native protocol at /: PCM16 binary frames up at the clip's rate, reply PCM at the voice's rate",
    "realtime": "OpenAI Realtime-compatible /v1/realtime: base64 PCM16 at 24 kHz in JSON text frames both ways, "
    "server VAD; the server's report read from the opt-in voice.turn_report event",
}
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
class E2eOptions:
    repeats: int = 2
    warmup: int = 1
    reply_timeout_s: float = 60.0
    settle_s: float = 2.0
    frame_ms: int = 20
    save_audio: Path | None = None
    token: str | None = None
    protocol: str = "native"
    """``native`` (``/``) or ``realtime`` (``/v1/realtime``, the OpenAI Realtime-compatible endpoint)."""
    ca_file: Path | None = None
    """Trust this CA (PEM) for a ``wss://`` URL, e.g. a proxy's self-signed certificate."""


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

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for name, value in self.stages_ms.items():
            d[f"{name}_ms"] = value
        return d


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
    if item.clip.reference is not None:
        res.wer = stats.wer(item.clip.reference, res.transcript)
        res.wer_normalized = stats.corpus_wer_normalized([(item.clip.reference, res.transcript)])
    res.stages_ms = {k: float(v) for k, v in (report.get("stages_ms") or {}).items()}
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


def summarize(turns: Sequence[TurnResult]) -> dict[str, Any]:
    """Statistics of the turns given (pass the measured ones); ``uncertain`` turns are counted, not used."""
    measured = [t for t in turns if t.mouth_to_ear_ms is not None]
    uncertain = [t for t in measured if t.uncertain]
    ok = [t for t in measured if not t.uncertain]
    m2e = [t.mouth_to_ear_ms for t in ok if t.mouth_to_ear_ms is not None]
    d = stats.describe(m2e)
    recon = [t.reconciliation_error_ms for t in ok if t.reconciliation_error_ms is not None]
    rd = stats.describe(recon)

    def col(name: str) -> list[float]:
        return [float(v) for t in ok if (v := getattr(t, name)) is not None]

    def llm_col(key: str) -> list[float]:
        return [float(t.llm[key]) for t in ok if t.llm and t.llm.get(key) is not None]

    pairs = [(t.reference, t.transcript) for t in turns if t.reference is not None and t.outcome != "no_turn"]
    wers = [t.wer for t in turns if t.wer is not None]
    p50, p95 = d["p50"], d["p95"]
    return {
        "n_turns": len(turns),
        "n_measured": len(ok),
        "n_failed": len(turns) - len(measured),
        "failed": [
            {"clip": t.clip, "repeat": t.repeat, "outcome": t.outcome, "error": t.error}
            for t in turns
            if t not in measured
        ],
        "n_uncertain": len(uncertain),
        "uncertain": [
            {"clip": t.clip, "repeat": t.repeat, "mouth_to_ear_ms": t.mouth_to_ear_ms, "why": t.uncertain}
            for t in uncertain
        ],
        "p50_ms": p50,
        "p95_ms": p95,
        "max_ms": d["max"],
        "min_ms": d["min"],
        "mean_ms": d["mean"],
        "stages": {
            s: stats.describe([t.stages_ms[s] for t in ok if s in t.stages_ms]) for s in stage_names(ok)
        },
        "server_total": stats.describe(col("server_total_ms")),
        "p50_reconciliation_error_ms": rd["p50"],
        "reconciliation_error": rd,
        "reconciliation_error_abs_max_ms": round(max(abs(x) for x in recon), 1) if recon else None,
        "speech_end_offset": stats.describe(col("speech_end_offset_ms")),
        "reply_lead_silence": stats.describe(col("reply_lead_silence_ms")),
        "residual": stats.describe(col("residual_ms")),
        "wer": stats.corpus_wer(pairs),
        "wer_normalized": stats.corpus_wer_normalized(pairs),
        "wer_mean": round(sum(wers) / len(wers), 4) if wers else None,
        "reply_tokens": stats.describe(col("reply_tokens")),
        "reply_audio_s": stats.describe(col("reply_audio_s")),
        "llm_ttft": stats.describe(llm_col("ttft_ms")),
        "llm_itl": stats.describe(llm_col("itl_mean_ms")),
        "llm_tps": stats.describe(llm_col("tps")),
        "within_target": sum(1 for x in m2e if x <= stats.TARGET_MS),
        "within_human_gap": sum(1 for x in m2e if x <= stats.HUMAN_GAP_MS),
        "meets_target": stats.verdict(p50, p95, stats.TARGET_MS),
        "meets_human_gap": stats.verdict(p50, p95, stats.HUMAN_GAP_MS),
        "split_clips": sorted({t.clip for t in turns if t.turns_heard > 1}),
        "false_endpoints": sum(max(0, t.turns_heard - 1) for t in turns),
        "split_turns_interrupting": sum(1 for t in turns if t.first_answer_interrupted),
        "split_first_answer_p50_ms": stats.describe(
            [t.first_answer_ms for t in turns if t.first_answer_ms is not None]
        )["p50"],
        "other_cpu_percent_max": max((t.other_cpu_percent or 0.0 for t in turns), default=0.0),
        "send_lag_max_ms": max((t.send_lag_max_ms for t in turns), default=0.0),
        "send_lag_before_endpoint_max_ms": max((t.send_lag_before_endpoint_ms for t in turns), default=0.0),
        "n_burst": sum(1 for t in turns if t.burst),
        "n_burst_judged": sum(1 for t in turns if t.burst is not None),
        "burst": [{"clip": t.clip, "repeat": t.repeat, "why": t.burst_why} for t in turns if t.burst],
    }


def verdict_lines(summary: dict[str, Any]) -> list[str]:
    p50, p95, n = summary["p50_ms"], summary["p95_ms"], summary["n_measured"]
    if p50 is None:
        return ["no turn produced a measurable reply: no verdict"]
    words = {"yes": "MEETS", "p50 only": "MEETS AT THE MEDIAN ONLY", "no": "MISSES", "n/a": "n/a"}
    n_uncertain = summary.get("n_uncertain", 0)
    tail = [
        f"{n_uncertain} uncertain turn(s) left out of the verdict and percentiles (not counted within target)"
    ] if n_uncertain else []
    return [
        f"{words[summary['meets_target']]} the {stats.TARGET_MS} ms target: p50 {p50:.0f} ms, p95 {p95:.0f} ms "
        f"({p50 / stats.TARGET_MS:.1f}x the target at p50); {summary['within_target']} of {n} turns within it",
        f"{words[summary['meets_human_gap']]} the ~{stats.HUMAN_GAP_MS} ms human gap between turns "
        f"(Stivers et al. 2009, PNAS): p50 is {p50 / stats.HUMAN_GAP_MS:.1f}x it; "
        f"{summary['within_human_gap']} of {n} turns within it",
        *tail,
    ]


# ---------------------------------------------------------------------------------------------- running


def tls_context(url: str, ca_file: Path | None) -> ssl.SSLContext | None:
    """The TLS context for ``url``: None for ``ws://`` (and for ``wss://`` without a CA file: the system's
    trusted CAs), else one that trusts ``ca_file``. Raises BenchError for a CA file that cannot be used."""
    if ca_file is None or not url.startswith("wss://"):
        return None
    try:
        return ssl.create_default_context(cafile=str(ca_file))
    except (OSError, ssl.SSLError) as e:
        raise BenchError(f"cannot use --ca-file {ca_file}: {e}") from None


def _speak(url: str, item: PlanItem, opts: E2eOptions) -> Conversation:
    """One clip in one session, on a client event loop of its own (in the calling thread), so that the
    server's event loop (in-process runs) never delays the client's pacing or arrival timestamps."""
    if opts.protocol == "realtime":
        from voice.realtime.client import converse_realtime

        return asyncio.run(
            converse_realtime(
                url,
                [item.clip.utterance()],
                frame_ms=opts.frame_ms,
                reply_timeout_s=opts.reply_timeout_s,
                token=opts.token,
                settle_s=opts.settle_s,
                ssl=tls_context(url, opts.ca_file),
            )
        )
    return asyncio.run(
        converse(
            url,
            [item.clip.utterance()],
            frame_ms=opts.frame_ms,
            reply_timeout_s=opts.reply_timeout_s,
            token=opts.token,
            settle_s=opts.settle_s,
            ssl=tls_context(url, opts.ca_file),
        )
    )


def _save_audio(directory: Path, item: PlanItem, conv: Conversation, res: TurnResult) -> None:
    if res.turn_id is None:
        return
    turn = conv.turns[res.turn_id]
    if not turn.pcm or not turn.sample_rate:
        return
    tag = f"r{item.repeat}" if item.phase == "measured" else "warmup"
    path = directory / f"{Path(item.clip.name).stem}-{tag}.wav"
    write_wav(path, turn.pcm, turn.sample_rate)
    res.audio_file = str(path)


async def _speak_once(
    url: str, n: int, item: PlanItem, opts: E2eOptions
) -> tuple[TurnResult, Conversation | None]:
    try:
        conv = await asyncio.to_thread(_speak, url, item, opts)
    except OSError as e:
        if n == 0:
            raise BenchError(f"cannot talk to the server at {url}: {e}") from None
        return TurnResult(
            item.clip.name, item.repeat, item.phase, item.first_after_load, "error", error=str(e)
        ), None
    except Exception as e:  # a timeout or a dropped connection: record it, go on
        outcome = "timeout" if isinstance(e, TimeoutError) else "error"
        error = f"{type(e).__name__}: {e}"
        return TurnResult(
            item.clip.name, item.repeat, item.phase, item.first_after_load, outcome, error=error
        ), None
    return turn_result(item, conv), conv


async def run_plan(
    url: str,
    plan: Sequence[PlanItem],
    opts: E2eOptions,
    on_turn: Callable[[TurnResult], None] = lambda r: None,
    guard: Guard | None = None,
) -> list[TurnResult]:
    """Speak every plan item into the server at ``url``, one session each, one after another.

    With a ``guard``, a turn during which other processes used too much of the CPU is spoken again."""
    results: list[TurnResult] = []
    for n, item in enumerate(plan):
        attempt = 0
        while True:
            start = guard.start() if guard is not None else None
            res, conv = await _speak_once(url, n, item, opts)
            if guard is None or start is None:
                break
            what = f"{item.clip.name} ({'warm-up' if item.phase == 'warmup' else f'repeat {item.repeat}'})"
            if await asyncio.to_thread(guard.check, start, attempt, what):
                res.other_cpu_percent = guard.shares[-1]
                break
            attempt += 1
        if conv is not None and opts.save_audio is not None:
            _save_audio(opts.save_audio, item, conv, res)
        results.append(res)
        on_turn(res)
    return results


async def run_plan_in_process(
    config: Config,
    engines: Engines,
    plan: Sequence[PlanItem],
    opts: E2eOptions,
    on_turn: Callable[[TurnResult], None] = lambda r: None,
    guard: Guard | None = None,
) -> list[TurnResult]:
    """Start a :class:`~voice.server.VoiceServer` on 127.0.0.1 (any free port), run the plan, shut down."""
    from voice.server import VoiceServer

    server_config = config.with_server(host="127.0.0.1", port=0, turn_log="", token="")
    server = VoiceServer(server_config, engines)
    with _quiet_server_logs():
        await server.start()
        try:
            return await run_plan(server.url, plan, opts, on_turn, guard)
        finally:
            with contextlib.suppress(Exception):
                await server.shutdown()


@contextlib.contextmanager
def _quiet_server_logs() -> Iterator[None]:
    """The bench prints its own table; the server's per-turn INFO lines would mix into it (kept at DEBUG)."""
    names = ("voice.server", "voice.session", "voice.turn", "voice.engine", "voice.websockets", "websockets")
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    if not log.isEnabledFor(logging.DEBUG):
        for lg in loggers:
            lg.setLevel(max(logging.WARNING, lg.level))
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def ram_peak_mb() -> float:
    """Peak resident memory of this process so far (ru_maxrss; models + server + client when in-process)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


@dataclass
class E2eResult:
    meta: dict[str, Any]
    clips: list[dict[str, Any]]
    turns: list[TurnResult]
    warnings: list[str] = field(default_factory=list)
    direct: list[TurnResult] = field(default_factory=list)
    """With ``--compare-direct``: the same plan spoken to the server directly (:mod:`voice.bench.e2e_compare`)."""

    @property
    def measured(self) -> list[TurnResult]:
        return [t for t in self.turns if t.phase == "measured"]

    @property
    def first_turn(self) -> TurnResult | None:
        return next((t for t in self.turns if t.first_after_load), None)

    def summary(self) -> dict[str, Any]:
        return summarize(self.measured)

    def to_json(self) -> dict[str, Any]:
        first = self.first_turn
        return {
            "tool": "voice bench e2e",
            "schema": 1,
            "meta": self.meta,
            "clips": self.clips,
            "summary": self.summary(),
            "first_turn_after_load": first.to_dict() if first else None,
            "turns": [t.to_dict() for t in self.measured],
            "warmup_turns": [t.to_dict() for t in self.turns if t.phase != "measured"],
            "warnings": self.warnings,
            **(self._compared() if self.direct else {}),
        }

    def _compared(self) -> dict[str, Any]:
        from voice.bench.pairing import added_latency

        direct = [t for t in self.direct if t.phase == "measured"]
        return {
            "added_latency": added_latency(self.measured, direct),
            "direct_summary": summarize(direct),
            "direct_turns": [t.to_dict() for t in direct],
        }


def method_meta(opts: E2eOptions) -> dict[str, Any]:
    return {
        "speech_end": SPEECH_END_METHOD,
        "uncertain": UNCERTAIN_METHOD,
        "first_audio": FIRST_AUDIO_METHOD,
        "reconciliation": RECONCILIATION_METHOD,
        "sessions": SESSION_NOTE,
        "pacing": f"real time, {opts.frame_ms} ms frames, then silence until the turn report",
        "wer": stats.WER_NORMALIZATION,
        "wer_normalized": stats.WER_WHISPER_NORMALIZATION,
        "clock": "client time.perf_counter_ns (monotonic)",
        "protocol": PROTOCOL_METHOD[opts.protocol],
        "burst": burst.METHOD,
        "repeats": opts.repeats,
        "warmup": opts.warmup,
    }
