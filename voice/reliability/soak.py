"""``voice soak``: many turns over concurrent sessions against an in-process server, with the figures.

Every turn is traced end to end. With fakes, each utterance carries a tag (see :mod:`.tagged`) that the
fake STT hears and the fake LLM repeats; with real models each session asks its own question, whose
keyword the transcript must contain. A turn is *dropped* (lost) when it never gets an answer, *duplicated* when
a tag or turn id is reported twice, *mis-routed* when a session receives a reply that was not its own. A
``busy`` reply (the server's model queue was full, ``[server] max_queue``) is its own outcome: the client
waits the ``retry_after_ms`` it was given and asks again, as a well-behaved client would, and the figures
count how many tries each turn needed. Process figures (RSS, open files, threads, asyncio tasks) are taken
after a warm-up with no client connected, and again after the clients have left.

Disconnect trials (fault 1) open a session, ask for a long reply, drop the connection at a random point
(clean close or TCP reset) and measure the time from the drop to the last model worker letting go of
its model; then a new session must complete a turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from voice.config.config import Config
from voice.reliability.figures import MIB, Process, SoakFigures, StopTrial
from voice.reliability.probe import Probe
from voice.reliability.tagged import tagged_speech
from voice.runtime.activity import ModelActivity
from voice.runtime.runtime import DEFAULT_RETRY_AFTER_MS, ModelRuntime
from voice.serve.server import VoiceServer
from voice.wire.report import TurnReport, percentile


@dataclass(frozen=True)
class Ask:
    """One utterance of a soak: int16 audio at 16 kHz and what its transcript must contain."""

    audio: np.ndarray
    expect: str
    exact: bool = True
    """Fakes: the transcript is exactly ``expect``. Real models: it contains the keyword ``expect``."""
    foreign: tuple[str, ...] = ()
    """Keywords of the other sessions' questions: hearing one of them means a mis-routed turn."""


AskFactory = Callable[[int, int], Ask]  # (session index, turn index) -> Ask


QUESTIONS: tuple[tuple[str, str], ...] = (
    ("France", "What is the capital of France?"),
    ("Germany", "What is the capital of Germany?"),
    ("Italy", "What is the capital of Italy?"),
    ("Spain", "What is the capital of Spain?"),
    ("Japan", "What is the capital of Japan?"),
    ("Egypt", "What is the capital of Egypt?"),
    ("Canada", "What is the capital of Canada?"),
    ("Brazil", "What is the capital of Brazil?"),
)
LONG_QUESTION = ("story", "Tell me a long story about a dragon and a knight.")


def real_asks(runtime: ModelRuntime) -> tuple[AskFactory, Callable[[int], Ask]]:
    """Questions spoken by the project's own TTS (one per session, by index), and a long request."""
    from voice.demo import synthesize_question

    def speak(text: str) -> np.ndarray:
        utt = synthesize_question(runtime, text)
        return np.asarray(np.clip(utt.audio, -1, 1) * 32767, dtype=np.int16)

    keywords = [k for k, _ in QUESTIONS]
    audio = [speak(q) for _, q in QUESTIONS]
    long_audio = speak(LONG_QUESTION[1])

    def ask(session: int, turn: int) -> Ask:
        i = session % len(QUESTIONS)
        return Ask(audio[i], keywords[i], exact=False, foreign=tuple(k for k in keywords if k != keywords[i]))

    def long_ask(trial: int) -> Ask:
        return Ask(long_audio, LONG_QUESTION[0], exact=False)

    return ask, long_ask


def fake_ask(session: int, turn: int) -> Ask:
    return Ask(tagged_speech(f"s{session}t{turn}", seconds=0.4), f"s{session}t{turn}")


def fake_long_ask(trial: int) -> Ask:
    return Ask(tagged_speech(f"long{trial}", seconds=0.4), f"long{trial}")


def _answered_this_ask(a: Ask, transcript: str, reply: str) -> tuple[bool, bool]:
    """Whether the turn heard this session's ask and replied to it, and whether the STT misheard it. With real
    models a plain mishearing is counted, not failed: the turn heard something that is not another session's
    question, and said something."""
    if a.exact:
        return transcript == a.expect and a.expect in reply, False
    heard = transcript.lower()
    misheard = a.expect.lower() not in heard  # the STT got it wrong, but it was this session's audio
    heard_ok = not misheard or not any(w.lower() in heard for w in a.foreign)
    return heard_ok and bool(reply), misheard


async def _answered(
    probe: Probe, a: Ask, timeout_s: float, figures: SoakFigures, report_ids: list[int]
) -> dict[str, Any]:
    """Say ``a`` until the server answers it, as a well-behaved client: a ``busy`` reply (the model queue was
    full) is waited out for its ``retry_after_ms`` and the question asked again, until ``timeout_s`` has passed
    (then TimeoutError: the turn is lost). Returns the report of the turn that answered."""
    deadline = time.monotonic() + timeout_s
    retries = 0
    while True:
        report = await probe.turn(a.audio, max(0.0, deadline - time.monotonic()))
        figures.outcomes[report["outcome"]] += 1
        if report["outcome"] != "busy":
            figures.retries_per_turn[retries] += 1
            return report
        busy = [e for e in probe.errors() if e["code"] == "busy"]
        wait_ms = (busy[-1].get("retry_after_ms") if busy else None) or DEFAULT_RETRY_AFTER_MS
        report_ids += [e["turn_id"] for e in probe.events if e["type"] == "turn_report"]
        for err in probe.errors():
            figures.client_errors[err["code"]] += 1
        probe.forget_events()
        retries += 1
        if time.monotonic() + wait_ms / 1000 >= deadline:
            raise TimeoutError(f"still busy after {retries} tries")
        await asyncio.sleep(wait_ms / 1000)


async def _session_worker(
    url: str,
    index: int,
    asks: list[int],
    ask: AskFactory,
    figures: SoakFigures,
    timeout_s: float,
    seen: Counter[str],
) -> None:
    """Session ``index`` says ``ask(index, k)`` for each k in ``asks``, one turn after the other, and
    checks every reply. Asks are made lazily and the event log is dropped after each turn, so the
    client's own memory does not grow with the number of turns."""
    probe = await Probe.connect(url)
    report_ids: list[int] = []
    try:
        for k in asks:
            a = ask(index, k)
            try:
                report = await _answered(probe, a, timeout_s, figures, report_ids)
            except (TimeoutError, ConnectionError) as e:
                figures.dropped += 1
                figures.problems.append(f"session {index}: no answer for {a.expect!r}: {e}"[:300])
                if isinstance(e, ConnectionError):
                    break
                continue
            tid = report["turn_id"]
            mine = [e for e in probe.events if e.get("turn_id") == tid]
            transcript = next((e["text"] for e in mine if e["type"] == "transcript"), "")
            reply = " ".join(e["text"] for e in mine if e["type"] == "reply_text")
            answered, misheard = _answered_this_ask(a, transcript, reply)
            figures.misheard += misheard
            if report["session_id"] != probe.session_id or not answered:
                figures.misrouted += 1
                figures.problems.append(
                    f"session {index} ({probe.session_id}) asked {a.expect!r}, got report of session "
                    f"{report['session_id']} heard {transcript!r} replied {reply[:60]!r}"
                )
            elif report["outcome"] == "ok":
                figures.turns_ok += 1
            else:
                figures.dropped += 1
                figures.problems.append(f"session {index}: {a.expect!r} ended {report['outcome']}")
            if a.exact:
                seen[a.expect] += 1
            report_ids += [e["turn_id"] for e in probe.events if e["type"] == "turn_report"]
            for err in probe.errors():
                figures.client_errors[err["code"]] += 1
            probe.forget_events()
        # One report per turn, turn ids 1..n in order.
        dupes = sum(c - 1 for c in Counter(report_ids).values() if c > 1)
        if dupes:
            figures.duplicated += dupes
            figures.problems.append(f"session {index}: turn ids reported twice: {report_ids}")
        if report_ids != list(range(1, len(report_ids) + 1)):
            figures.problems.append(f"session {index}: turn reports not 1..n in order: {report_ids[:20]}")
        if probe.stray_audio or probe.audio_after_interrupt:
            figures.misrouted += 1
            figures.problems.append(f"session {index}: audio outside a turn ({probe.stray_audio} frames)")
    finally:
        await probe.close()


def _kv_mib(runtime: ModelRuntime) -> float:
    """The LLM's saved KV states in memory now, MiB (0 when it keeps none)."""
    stats = runtime.kv_stats()
    return 0.0 if stats is None else round(stats.bytes_in_use / MIB, 1)


async def _wait_no_sessions(server: VoiceServer, timeout_s: float = 10.0) -> None:
    await server.wait_sessions(lambda s: not s, timeout_s)


async def _settle() -> None:
    for _ in range(3):
        gc.collect()
        await asyncio.sleep(0.05)


async def stop_trial(
    server: VoiceServer, activity: ModelActivity, long_ask: Ask, short_ask: Ask,
    *, mode: str, point: str, delay_s: float, timeout_s: float = 30.0,
) -> StopTrial:  # fmt: skip
    """Drop a session mid-reply; measure how fast the models are free (``activity``: attached to the server's
    runtime before it ran anything); then run a turn on a new session."""
    probe = await Probe.connect(server.url)
    since = len(probe.events)
    await probe.say_to_the_end(long_ask.audio)
    await probe.wait_type(point, timeout_s, since)
    if delay_s:
        await asyncio.sleep(delay_s)
    in_flight = not probe.of_type("turn_report")
    sid = probe.session_id
    busy = not activity.idle()
    t0 = time.perf_counter_ns()
    closing: asyncio.Task[None] | None = None
    if mode == "reset":
        probe.reset()
    else:
        closing = asyncio.create_task(probe.close())
    await server.wait_sessions(lambda s: sid not in s, 10.0)
    cleanup_ms = (time.perf_counter_ns() - t0) / 1e6
    released = {m: ns for m, ns in activity.released_ns.items() if ns >= t0}
    last_model = max(released, key=lambda m: released[m]) if released else ""
    stop_ms = (released[last_model] - t0) / 1e6 if released else 0.0
    if not activity.idle():
        stop_ms = max(stop_ms, cleanup_ms, 1e9)  # a model is still busy: a failure, whatever it is doing
    if closing is not None:
        with contextlib.suppress(BaseException):
            await closing
    with contextlib.suppress(BaseException):
        await probe.reader
    nxt = await Probe.connect(server.url)
    try:
        report = await nxt.turn(short_ask.audio, timeout_s)
        answered, misheard = _answered_this_ask(short_ask, report["transcript"], report["reply_text"])
        next_ok = report["outcome"] == "ok" and answered
        next_outcome = f"{report['outcome']}, heard {report['transcript']!r}" + (" (misheard)" if misheard else "")
    except (TimeoutError, ConnectionError) as e:
        next_ok, next_outcome = False, f"no answer: {e}"[:200]
    finally:
        await nxt.close()
    return StopTrial(
        mode,
        point,
        round(delay_s * 1000, 1),
        in_flight,
        busy,
        round(stop_ms, 2),
        last_model,
        round(cleanup_ms, 2),
        next_ok,
        next_outcome,
    )


async def _stop_trials(
    server: VoiceServer, activity: ModelActivity, figures: SoakFigures, ask: AskFactory,
    long_ask: Callable[[int], Ask], trials: int, delay_s: float, timeout_s: float, seed: int,
    progress: Callable[[str], None],
) -> None:  # fmt: skip
    """``trials`` disconnect trials (:func:`stop_trial`), alternating clean closes and TCP resets."""
    rng = random.Random(seed)
    for n in range(trials):
        mode = "reset" if n % 2 else "close"
        point, delay = rng.choice(("transcript", "audio_start")), rng.uniform(0, delay_s)
        try:
            trial = await stop_trial(
                server, activity, long_ask(n), ask(0, 10_000 + n), mode=mode, point=point, delay_s=delay,
                timeout_s=timeout_s,
            )  # fmt: skip
        except (TimeoutError, ConnectionError) as e:  # the trial never reached its point: a failure, not a crash
            trial = StopTrial(mode, point, round(delay * 1000, 1), False, False, 0.0, "", 0.0, False, f"{e}"[:200])
        figures.stop_trials.append(trial)
        if not trial.next_ok:
            figures.problems.append(f"disconnect trial {n}: the next turn failed: {trial.next_outcome}")
        if (n + 1) % 10 == 0:
            progress(f"disconnect trials: {n + 1}/{trials}")


async def run_soak(
    runtime: ModelRuntime,
    config: Config,
    *,
    mode: str,
    turns: int,
    sessions: int,
    ask: AskFactory = fake_ask,
    long_ask: Callable[[int], Ask] = fake_long_ask,
    warmup_turns: int = 2,
    stop_trials: int = 0,
    stop_delay_s: float = 0.1,
    turn_timeout_s: float = 60.0,
    seed: int = 1,
    progress: Callable[[str], None] = lambda s: None,
) -> SoakFigures:
    """Run the soak against an in-process server; the runtime is closed at the end."""
    activity = runtime.watch()
    server = VoiceServer(config, runtime)
    await server.start()
    figures = SoakFigures(mode=mode, sessions=sessions, turns_planned=turns)
    ok_reports: list[tuple[str, float | None]] = []  # (transcript, total_ms) of each ok turn
    try:
        # Warm-up: every session does a few turns at once (thread pools and caches reach their size).
        progress(f"warm-up: {warmup_turns} turn(s) on each of {sessions} sessions")
        warm = SoakFigures(mode=mode, sessions=sessions, turns_planned=warmup_turns * sessions)
        await asyncio.gather(
            *(
                _session_worker(server.url, i, [100_000 + k for k in range(warmup_turns)], ask, warm,
                                turn_timeout_s, Counter())
                for i in range(sessions)
            )
        )
        if warm.turns_ok != warm.turns_planned:
            figures.problems.append(f"warm-up: {warm.problems[:3]}")
        await _wait_no_sessions(server)
        await _settle()
        figures.baseline = Process.now()
        figures.kv_mib_baseline = _kv_mib(runtime)
        figures.rss_peak_mib = figures.baseline.rss_mib

        step = max(1, turns // 10)

        def on_report(r: TurnReport) -> None:
            if r.outcome == "ok":
                ok_reports.append((r.transcript, r.total_ms))
                if len(ok_reports) % step == 0:  # RSS after every tenth of the turns
                    figures.rss_timeline.append(Process.now().rss_mib)

        server.report_hooks.append(on_report)
        plans: list[list[int]] = [[] for _ in range(sessions)]
        for n in range(turns):
            plans[n % sessions].append(n // sessions)
        seen: Counter[str] = Counter()

        async def sample_rss() -> None:
            while True:
                figures.rss_peak_mib = max(figures.rss_peak_mib, Process.now().rss_mib)
                await asyncio.sleep(0.5)

        progress(f"soak: {turns} turns over {sessions} sessions")
        sampler = asyncio.create_task(sample_rss())
        t0 = time.perf_counter()
        await asyncio.gather(
            *(_session_worker(server.url, i, plans[i], ask, figures, turn_timeout_s, seen) for i in range(sessions))
        )
        figures.duration_s = round(time.perf_counter() - t0, 2)
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
        server.report_hooks.clear()
        extra = sum(c - 1 for c in seen.values() if c > 1)
        figures.duplicated += extra
        # Server side: each tag transcribed once, by the session that said it.
        by_tag = Counter(transcript for transcript, _ in ok_reports)
        figures.duplicated += sum(c - 1 for t, c in by_tag.items() if c > 1 and t in seen)
        totals = [total for _, total in ok_reports if total is not None]
        if totals:
            figures.total_ms_p50 = round(statistics.median(totals), 1)
            figures.total_ms_p95 = round(percentile(totals, 95), 1)
        await _wait_no_sessions(server)
        await _settle()
        figures.after = Process.now()
        figures.kv_mib_after = _kv_mib(runtime)
        figures.server_sessions_after = len(server.sessions)
        new_threads = figures.after.thread_names - figures.baseline.thread_names
        if new_threads:
            figures.problems.append(f"threads started during the soak: {dict(new_threads)}")

        await _stop_trials(
            server, activity, figures, ask, long_ask, stop_trials, stop_delay_s, turn_timeout_s, seed, progress
        )
    finally:
        await server.shutdown()
    return figures
