"""``voice bench load``: how many people can talk to one server at once within the latency target.

For each N in ``--sessions``, N simulated talkers speak at the same time, each in its own websocket session
(:func:`voice.client.converse` on a thread and event loop of its own, as in ``voice bench e2e``): a
multi-turn conversation of the shared recordings, in real time. After each reply a talker goes on streaming
silence while the reply would play (its audio's duration from its first chunk), then for a human pause drawn
uniformly from ``pause_min_s..pause_max_s``, and speaks its next clip. Talkers start spread over
``start_spread_s`` so that they do not all speak in step. Pauses, start offsets and clip order come from a
seeded generator: the same sitting twice speaks the same timeline.

Per N it reports mouth-to-ear (p50/p95, as in ``voice bench e2e``: the clip's reference speech end to the
first audible reply sample), the queue waits (the server's ``stt_queue`` + ``llm_queue`` + ``tts_queue``),
the ``busy`` rejections (and the retry hints they carried), and the prompt tokens each turn evaluated. The
**capacity** is the largest N at which p95 mouth-to-ear is at most ``CAPACITY_P95_MS`` and no turn was
refused as ``busy``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from voice.bench import stats
from voice.bench.clips import BenchError, Clip
from voice.bench.e2e.measure import _quiet_server_logs
from voice.bench.load.result import LevelSummary, LoadOptions, LoadTurn, TalkerRecord
from voice.client import Conversation, converse
from voice.config.config import Config
from voice.runtime.runtime import ModelRuntime

CAPACITY_P95_MS = 800.0
"""A level is within capacity when its p95 mouth-to-ear is at most this (and nothing was refused)."""
QUEUE_STAGES = ("stt_queue", "llm_queue", "tts_queue")

CAPACITY_METHOD = (
    f"capacity = the largest N at which p95 mouth-to-ear ≤ {CAPACITY_P95_MS:g} ms over the turns that got a "
    "reply, and no turn was refused `busy` (a refused turn is not served at all)"
)


@dataclass(frozen=True)
class TalkerPlan:
    talker: int
    clips: tuple[Clip, ...]
    pauses_s: tuple[float, ...]
    """Silence after each reply has played, before the next utterance."""
    start_delay_s: float

    def record(self) -> TalkerRecord:
        """The plan as the result records it (the clips by name)."""
        return TalkerRecord(self.talker, tuple(c.name for c in self.clips), self.pauses_s, self.start_delay_s)


def make_talkers(clips: Sequence[Clip], n: int, opts: LoadOptions) -> list[TalkerPlan]:
    """N talkers; talker ``i`` starts at clip ``i`` and goes on through the list (so neighbours differ)."""
    if not clips:
        raise BenchError("no clips to speak")
    plans = []
    for i in range(n):
        rng = random.Random(f"{opts.seed}-{n}-{i}")
        chosen = tuple(clips[(i + k) % len(clips)] for k in range(opts.turns))
        pauses = tuple(round(rng.uniform(opts.pause_min_s, opts.pause_max_s), 3) for _ in range(opts.turns))
        start = 0.0 if i == 0 else round(rng.uniform(0, opts.start_spread_s), 3)
        plans.append(TalkerPlan(i, chosen, pauses, start))
    return plans


def _num(report: dict[str, Any], key: str) -> float | None:
    v = report.get(key)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def turns_of(n: int, plan: TalkerPlan, conv: Conversation) -> list[LoadTurn]:
    """One :class:`LoadTurn` per utterance the talker spoke (an utterance heard as several turns counts as its
    last, where its speech ended)."""
    out = []
    for k, clip in enumerate(plan.clips):
        ids = conv.utterance_turns[k] if k < len(conv.utterance_turns) else []
        if not ids:
            out.append(LoadTurn(n, plan.talker, k + 1, clip.name, "no_turn"))
            continue
        last = conv.turns[ids[-1]]
        report = last.report or {}
        stages = {str(s): float(v) for s, v in (report.get("stages_ms") or {}).items()}
        llm = report.get("llm") if isinstance(report.get("llm"), dict) else None
        evaluated = _num(report, "prompt_tokens_evaluated")
        reused = _num(report, "prompt_tokens_reused")
        m2e = last.mouth_to_ear_ms()
        outcome = str(report.get("outcome", "no_report"))
        out.append(
            LoadTurn(
                sessions=n,
                talker=plan.talker,
                turn=k + 1,
                clip=clip.name,
                outcome="no_audio" if outcome == "ok" and m2e is None else outcome,
                mouth_to_ear_ms=None if m2e is None else round(m2e, 1),
                queue_ms=round(sum(stages.get(s, 0.0) for s in QUEUE_STAGES), 1) if stages else None,
                stages_ms=stages,
                ttft_ms=float(llm["ttft_ms"]) if llm and llm.get("ttft_ms") is not None else None,
                prompt_tokens=None if evaluated is None or reused is None else int(evaluated + reused),
                prompt_tokens_evaluated=None if evaluated is None else int(evaluated),
                kv_restore_ms=_num(report, "kv_restore_ms"),
                kv_evicted=bool(report.get("kv_evicted", False)),
                kv_cache_mb=_num(report, "kv_cache_mb"),
                reply_audio_ms=_num(report, "reply_audio_ms"),
            )
        )
    return out


def summarize_level(n: int, turns: Sequence[LoadTurn], retry_hints_ms: Sequence[int] = ()) -> LevelSummary:
    """Statistics of one level (N talkers)."""
    heard = [t for t in turns if t.outcome == "ok" and t.mouth_to_ear_ms is not None]
    m2e = stats.describe([t.mouth_to_ear_ms for t in heard if t.mouth_to_ear_ms is not None])
    busy = sum(1 for t in turns if t.outcome == "busy")
    llm_turns = [t for t in heard if t.prompt_tokens]  # skills answer without the LLM (0 prompt tokens)
    later = [t for t in llm_turns if t.turn > 1]
    return LevelSummary(
        sessions=n,
        turns=len(turns),
        ok=len(heard),
        busy=busy,
        failed=len(turns) - len(heard) - busy,
        outcomes={o: sum(1 for t in turns if t.outcome == o) for o in sorted({t.outcome for t in turns})},
        mouth_to_ear=m2e,
        queue=stats.describe([t.queue_ms for t in heard if t.queue_ms is not None]),
        llm_queue=stats.describe([t.stages_ms["llm_queue"] for t in heard if "llm_queue" in t.stages_ms]),
        ttft=stats.describe([t.ttft_ms for t in llm_turns if t.ttft_ms is not None]),
        prompt_tokens_evaluated=stats.describe(
            [t.prompt_tokens_evaluated for t in llm_turns if t.prompt_tokens_evaluated is not None]
        ),
        prompt_tokens_evaluated_after_first_turn=stats.describe(
            [t.prompt_tokens_evaluated for t in later if t.prompt_tokens_evaluated is not None]
        ),
        prompt_tokens=stats.describe([t.prompt_tokens for t in llm_turns if t.prompt_tokens is not None]),
        kv_restore=stats.describe([t.kv_restore_ms for t in llm_turns if t.kv_restore_ms]),
        kv_evicted_turns=sum(1 for t in turns if t.kv_evicted),
        kv_cache_mb_max=max((t.kv_cache_mb or 0.0 for t in turns), default=0.0),
        retry_after_ms=stats.describe([float(x) for x in retry_hints_ms]),
        within_capacity=within_capacity(m2e.p95, busy),
    )


def within_capacity(p95_ms: float | int | None, busy: int) -> bool:
    return p95_ms is not None and p95_ms <= CAPACITY_P95_MS and busy == 0


def capacity(levels: Sequence[LevelSummary]) -> int | None:
    """The largest N whose level is within capacity (None: not even the smallest one)."""
    ok = [lv.sessions for lv in levels if lv.within_capacity]
    return max(ok) if ok else None


# ---------------------------------------------------------------------------------------------- running


def _talk(url: str, plan: TalkerPlan, opts: LoadOptions) -> Conversation:
    return asyncio.run(
        converse(
            url,
            [c.utterance() for c in plan.clips],
            frame_ms=opts.frame_ms,
            reply_timeout_s=opts.reply_timeout_s,
            token=opts.token,
            pauses_s=plan.pauses_s,
            start_delay_s=plan.start_delay_s,
        )
    )


async def run_level(url: str, n: int, clips: Sequence[Clip], opts: LoadOptions) -> LevelSummary:
    """N talkers at once; returns the level's summary with its turns."""
    plans = make_talkers(clips, n, opts)
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="talker") as pool:
        results = await asyncio.gather(
            *(loop.run_in_executor(pool, _talk, url, p, opts) for p in plans), return_exceptions=True
        )
    turns: list[LoadTurn] = []
    hints: list[int] = []
    for plan, res in zip(plans, results, strict=True):
        if isinstance(res, BaseException):
            if isinstance(res, OSError) and n == min(opts.sessions):
                raise BenchError(f"cannot talk to the server at {url}: {res}") from None
            error = f"{type(res).__name__}: {res}"
            turns += [LoadTurn(n, plan.talker, k + 1, c.name, "error", error=error) for k, c in enumerate(plan.clips)]
            continue
        turns += turns_of(n, plan, res)
        hints += [int(e["retry_after_ms"]) for e in res.errors if e.get("code") == "busy" and "retry_after_ms" in e]
    summary = summarize_level(n, turns, hints)
    return dataclasses.replace(summary, talkers=tuple(p.record() for p in plans), turn_results=tuple(turns))


async def run_sweep(
    url: str,
    clips: Sequence[Clip],
    opts: LoadOptions,
    on_level: Callable[[LevelSummary], None] = lambda lv: None,
    warmup: bool = True,
) -> list[LevelSummary]:
    """A warm-up conversation (one talker, one turn, not counted), then every level in order."""
    if warmup:
        one = dataclasses.replace(opts, turns=1, sessions=(1,))
        await run_level(url, 1, clips, one)
    levels = []
    for n in opts.sessions:
        level = await run_level(url, n, clips, opts)
        levels.append(level)
        on_level(level)
    return levels


async def run_sweep_in_process(
    config: Config,
    runtime: ModelRuntime,
    clips: Sequence[Clip],
    opts: LoadOptions,
    on_level: Callable[[LevelSummary], None] = lambda lv: None,
    warmup: bool = True,
) -> list[LevelSummary]:
    """Start a :class:`~voice.serve.server.VoiceServer` on 127.0.0.1 (any free port), run the sweep, shut down."""
    from voice.serve.server import VoiceServer

    server_config = config.with_server(host="127.0.0.1", port=0, turn_log="", token="")
    server = VoiceServer(server_config, runtime)
    with _quiet_server_logs():
        await server.start()
        try:
            return await run_sweep(server.url, clips, opts, on_level, warmup)
        finally:
            with contextlib.suppress(Exception):
                await server.shutdown()
