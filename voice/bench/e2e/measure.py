"""``voice bench e2e``: mouth-to-ear latency heard at the client, reconciled with the server's stage log.

Every clip is spoken into the server over a websocket as a microphone would: in real time, in 20 ms
frames, then the clip's room tone until the reply has come (:func:`voice.client.converse`). On the client's monotonic
clock:

* **speech end** = the clip's reference speech end (:mod:`voice.turn.speech_end`: an offline speech
  detector locates the last speech, the background-subtracted energy envelope places its end), independent
  of the server's endpointing, or the end annotated in ``transcripts.tsv``;
* **first audio** = when the first non-silent reply sample would sound: arrival of its chunk plus its offset
  inside the chunk (a player starts a chunk on arrival or when the previous one ends, whichever is later);
* **mouth-to-ear** = first audio − speech end.

The server's ``turn_report`` (joined by turn id) gives its stages; the **reconciliation error** is
mouth-to-ear minus the sum of those stages. It is split into what explains it: the offset between the
server's speech end and the clip's (the arrival of ``speech_ended`` minus the server's ``endpoint_silence``),
the silent lead of the reply audio, and a residual (transport, clocks, anything else). One turn's analysis is
in :mod:`voice.bench.e2e.turn`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import ssl
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voice.audio import write_wav
from voice.bench import burst, stats
from voice.bench.clips import BenchError
from voice.bench.e2e.meta import E2eMethod
from voice.bench.e2e.result import E2eSummary
from voice.bench.e2e.turn import UNCERTAIN_METHOD, PlanItem, TurnResult, turn_result
from voice.bench.machine import Guard
from voice.client import Conversation, converse
from voice.config.config import Config
from voice.runtime.runtime import ModelRuntime
from voice.turn.speech_end import METHOD as SPEECH_END_METHOD

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
    "speech-end offset (server speech end − clip speech end, estimated as arrival of `speech_ended` − "
    "the server's endpoint_silence), reply lead silence (first audible sample − first reply chunk arrival) "
    "and a residual (transport and everything else)"
)
PROTOCOL_METHOD = {
    "native": "native protocol at /: PCM16 binary frames up at the clip's rate, reply PCM at the voice's rate",
    "realtime": "OpenAI Realtime-compatible /v1/realtime: base64 PCM16 at 24 kHz in JSON text frames both ways, "
    "server VAD; the server's report read from the opt-in voice.turn_report event",
}
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



def verdict_lines(summary: E2eSummary) -> list[str]:
    p50, p95, n = summary.p50_ms, summary.p95_ms, summary.n_measured
    if p50 is None:
        return ["no turn produced a measurable reply: no verdict"]
    words = {"yes": "MEETS", "p50 only": "MEETS AT THE MEDIAN ONLY", "no": "MISSES", "n/a": "n/a"}
    n_uncertain = summary.n_uncertain
    tail = [
        f"{n_uncertain} uncertain turn(s) left out of the verdict and percentiles (not counted within target)"
    ] if n_uncertain else []
    if summary.asked_again:
        tail.append(f"{summary.asked_again} of {n} turns asked to say it again ([stt] ask_again): their quick "
                    "reply answers nothing, and they are in the percentiles")
    return [
        f"{words[summary.meets_target]} the {stats.TARGET_MS} ms target: p50 {p50:.0f} ms, p95 {p95:.0f} ms "
        f"({p50 / stats.TARGET_MS:.1f}x the target at p50); {summary.within_target} of {n} turns within it",
        f"{words[summary.meets_human_gap]} the ~{stats.HUMAN_GAP_MS} ms human gap between turns "
        f"(Stivers et al. 2009, PNAS): p50 is {p50 / stats.HUMAN_GAP_MS:.1f}x it; "
        f"{summary.within_human_gap} of {n} turns within it",
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
    talk: Callable[..., Coroutine[Any, Any, Conversation]] = converse
    if opts.protocol == "realtime":
        from voice.bench.e2e.realtime_client import converse_realtime

        talk = converse_realtime
    return asyncio.run(
        talk(
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
    runtime: ModelRuntime,
    plan: Sequence[PlanItem],
    opts: E2eOptions,
    on_turn: Callable[[TurnResult], None] = lambda r: None,
    guard: Guard | None = None,
) -> list[TurnResult]:
    """Start a :class:`~voice.serve.server.VoiceServer` on 127.0.0.1 (any free port), run the plan, shut down."""
    from voice.serve.server import VoiceServer

    server_config = config.with_server(host="127.0.0.1", port=0, turn_log="", token="")
    server = VoiceServer(server_config, runtime)
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
    names = (
        "voice.serve.server",
        "voice.serve.session",
        "voice.turn.pipeline",
        "voice.runtime.runtime",
        "voice.websockets",
        "websockets",
    )
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


def method_meta(opts: E2eOptions) -> E2eMethod:
    return E2eMethod(
        speech_end=SPEECH_END_METHOD,
        uncertain=UNCERTAIN_METHOD,
        first_audio=FIRST_AUDIO_METHOD,
        reconciliation=RECONCILIATION_METHOD,
        sessions=SESSION_NOTE,
        pacing=f"real time, {opts.frame_ms} ms frames, then silence until the turn report",
        wer=stats.WER_NORMALIZATION,
        wer_normalized=stats.WER_WHISPER_NORMALIZATION,
        clock="client time.perf_counter_ns (monotonic)",
        protocol=PROTOCOL_METHOD[opts.protocol],
        burst=burst.METHOD,
        repeats=opts.repeats,
        warmup=opts.warmup,
    )
