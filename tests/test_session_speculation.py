"""A speculative reply, end to end through a Session without sockets (fake runtime, fake clock).

The session starts the reply at the first pause and holds it. If the user goes on speaking it is thrown
away: nothing of it may reach the client or the conversation. If the endpoint confirms the turn, its frames
go out after ``speech_ended``, in order, and the report says it was speculative.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config, silence, tone
from voice.clock import FakeClock
from voice.runtime.fakes import Delay, FakeLlm, FakeStt
from voice.serve.session import Session
from voice.wire.report import STAGES, TurnReport

RATE_HZ = 16_000
FRAME_S = 0.032
SILENCE_MS = 480


def pcm(samples: np.ndarray) -> list[bytes]:
    """16-bit PCM in 32 ms frames."""
    n = int(RATE_HZ * FRAME_S)
    s16 = (np.clip(samples, -1, 1) * 32767).astype("<i2")
    return [s16[i : i + n].tobytes() for i in range(0, len(s16), n)]


class Client:
    """The socket's side of the outbox: takes every frame as the writer task would, and decodes events."""

    def __init__(self, session: Session) -> None:
        self.events: list[dict[str, object]] = []
        self._session = session
        self._task = asyncio.create_task(self._drain())

    async def _drain(self) -> None:
        while (frame := await self._session.outbox.next_frame()) is not None:
            data, on_sent = frame
            if on_sent is not None:
                on_sent()
            self.events.append(json.loads(data) if isinstance(data, str) else {"type": "<audio>"})

    def types(self) -> list[object]:
        return [e["type"] for e in self.events]

    async def close(self) -> None:
        self._session.outbox.close()
        await self._task


async def until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Let the event loop run until ``predicate`` holds (the fakes take no real time: a few iterations)."""
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.001)


async def feed(session: Session, clock: FakeClock, samples: np.ndarray) -> None:
    """Send the audio in real-time frames: the clock advances 32 ms per frame."""
    for frame in pcm(samples):
        clock.advance_ms(FRAME_S * 1000)
        assert await session.on_audio(frame) is None


async def reply_held(session: Session) -> None:
    """Wait until the speculative reply holds frames and has stopped producing more (it now waits for the
    endpoint with its whole reply held: the fakes take no real time)."""
    await until(lambda: session.speculator.held_frames > 0)
    seen = -1
    while seen != session.speculator.held_frames:
        seen = session.speculator.held_frames
        await asyncio.sleep(0.05)


def make_session(
    fake_runtime: RuntimeFactory, clock: FakeClock, turn_score: Callable[[np.ndarray], float] | None = None
) -> tuple[Session, list[TurnReport]]:
    delay = Delay(clock)
    runtime = fake_runtime(
        clock=clock,
        stt=FakeStt(texts=("first words", "second words"), latency_ms=50.0, delay=delay),
        llm=FakeLlm(replies=("Reply one.", "Reply two."), delay=delay),
        turn_score=turn_score,
    )
    config = make_config(
        vad={"silence_ms": SILENCE_MS, "pre_roll_ms": 64, "min_speech_ms": 64},
        turn={"speculate_after_ms": 96},
        tts={"min_first_clause_words": 1},
    )
    reports: list[TurnReport] = []
    return Session("s", runtime, config, clock, on_report=reports.append), reports


async def start(session: Session) -> None:
    assert await session.on_text(json.dumps({"type": "start", "sample_rate": RATE_HZ})) is None


async def held_at_a_pause(
    fake_runtime: RuntimeFactory,
) -> tuple[FakeClock, Session, list[TurnReport], Client]:
    """A session that heard speech and then a 200 ms pause: its speculative reply (started after 96 ms) is
    ready and held; the client has heard nothing of it."""
    clock = FakeClock()
    session, reports = make_session(fake_runtime, clock)
    client = Client(session)
    await start(session)
    await feed(session, clock, np.concatenate([silence(0.2), tone(0.6), silence(0.2)]))
    await reply_held(session)
    assert session.speculator.started == 1
    assert client.types() == ["ready", "speech_started"]
    return clock, session, reports, client


async def test_a_discarded_speculation_never_reaches_the_client_nor_the_history(
    fake_runtime: RuntimeFactory,
) -> None:
    clock, session, reports, client = await held_at_a_pause(fake_runtime)
    # The user goes on: the held reply is thrown away; the second pause ends the turn.
    await feed(session, clock, np.concatenate([tone(0.4), silence(SILENCE_MS / 1000 + 0.1)]))
    assert await session.wait_turns(timeout_s=10)
    await client.close()
    assert session.speculator.started == 2 and session.speculator.discarded == 1
    texts = [e.get("text") for e in client.events if e["type"] in ("transcript", "reply_text")]
    assert texts == ["second words", "Reply two."]
    assert client.types().count("speech_ended") == 1
    assert [m.content for m in session.history.messages] == ["second words", "Reply two."]
    (report,) = reports
    assert report.outcome == "ok" and report.speculative and report.speculations_discarded == 1
    assert report.transcript == "second words"


async def test_a_committed_speculation_goes_out_after_speech_ended_in_order(
    fake_runtime: RuntimeFactory,
) -> None:
    clock, session, reports, client = await held_at_a_pause(fake_runtime)
    await feed(session, clock, silence(SILENCE_MS / 1000))
    assert await session.wait_turns(timeout_s=10)
    await client.close()
    types = client.types()[2:]
    assert types[0] == "speech_ended" and types[-1] == "turn_report"
    assert types.index("transcript") < types.index("reply_text") < types.index("<audio>")
    (report,) = reports
    assert report.speculative and report.speculations_discarded == 0 and report.outcome == "ok"
    # Everything before the endpoint is time saved: the stages up to the first token are 0 ms.
    assert report.stages_ms["stt"] == 0.0 and report.stages_ms["llm_ttft"] == 0.0
    # Started after 96 ms of silence, committed at the endpoint (480 ms); the fakes' latencies advance
    # the same clock meanwhile, so the lead is at least the gap between the two.
    assert report.speculation_lead_ms >= SILENCE_MS - 96 - 32
    # The work from the pause to the first audio is not hidden like the stages: it is what they clip at the
    # endpoint (the lead, when the audio came after it) plus what is left of it after the endpoint.
    after = sum(report.stages_ms[s] for s in STAGES[1:STAGES.index("tts_first_audio") + 1])
    work = report.work_to_first_audio_ms
    assert work is not None and 0 < work <= report.speculation_lead_ms + after + 0.1
    if after > 0:
        assert work == pytest.approx(report.speculation_lead_ms + after, abs=0.1)
    assert [m.content for m in session.history.messages] == ["first words", "Reply one."]


async def test_without_speculation_the_reply_starts_at_the_endpoint(fake_runtime: RuntimeFactory) -> None:
    clock = FakeClock()
    runtime = fake_runtime(clock=clock)
    config = make_config(vad={"silence_ms": SILENCE_MS, "min_speech_ms": 64}, turn={"speculate_after_ms": 0})
    reports: list[TurnReport] = []
    session = Session("s", runtime, config, clock, on_report=reports.append)
    client = Client(session)
    await start(session)
    await feed(session, clock, np.concatenate([tone(0.6), silence(SILENCE_MS / 1000 + 0.1)]))
    assert await session.wait_turns(timeout_s=10)
    await client.close()
    (report,) = reports
    assert session.speculator.started == 0 and not report.speculative
    assert report.stages_ms["stt"] > 0.0 and "speech_ended" in client.types()
    # Started at the endpoint: its work is the stages from there to the first audio.
    after = sum(report.stages_ms[s] for s in STAGES[1:STAGES.index("tts_first_audio") + 1])
    assert report.work_to_first_audio_ms == pytest.approx(after, abs=0.01)


async def test_the_end_of_turn_model_runs_after_the_speculation_started(fake_runtime: RuntimeFactory) -> None:
    clock = FakeClock()
    started_when_asked: list[int] = []
    sessions: list[Session] = []

    def score(audio: np.ndarray) -> float:
        started_when_asked.append(sessions[0].speculator.started)
        return 0.9  # complete: the turn ends after [turn] complete_silence_ms

    session, reports = make_session(fake_runtime, clock, turn_score=score)
    sessions.append(session)
    client = Client(session)
    await start(session)
    await feed(session, clock, np.concatenate([silence(0.2), tone(0.6), silence(0.5)]))
    assert await session.wait_turns(timeout_s=10)
    await client.close()
    assert started_when_asked == [1]  # the reply was already under way when the model was asked
    (report,) = reports
    assert report.turn_score == 0.9 and report.speculative


def test_the_users_wait_starts_at_the_last_sound_not_where_the_vad_noticed() -> None:
    from voice.turn.endpoint import SpeechEnded
    from voice.turn.listener import silence_after_speech_ms

    # 450 ms of silence after the sound, of which the VAD counted 320 (it noticed the end 130 ms late).
    audio = np.concatenate([silence(0.3), tone(0.5), silence(0.45)])
    ev = SpeechEnded(audio, trailing_silence_ms=320.0, forced=False, voiced_ms=500.0)
    assert abs(silence_after_speech_ms(ev) - 450.0) <= 10.0
    # Never less than what the VAD counted; audio with no sound in it keeps the VAD's count.
    assert silence_after_speech_ms(SpeechEnded(audio, 600.0, False, 500.0)) == 600.0
    assert silence_after_speech_ms(SpeechEnded(silence(1.0), 320.0, False, 500.0)) == 320.0


def test_with_the_vads_probabilities_the_wait_starts_where_the_reference_puts_the_speech_end() -> None:
    """The session uses the benchmarks' reference method (voice.turn.speech_end) on the VAD's own per-frame
    probabilities, so the server's endpoint_silence agrees with the client's reference speech end, also when
    a soft tail or a click follows the speech."""
    from voice.turn.endpoint import SpeechEnded
    from voice.turn.listener import _with_speech_end, silence_after_speech_ms

    rng = np.random.default_rng(7)
    noise = lambda s: (0.003 * rng.standard_normal(int(16000 * s))).astype(np.float32)  # noqa: E731
    breath = np.zeros(int(0.45 * 16000), np.float32)
    breath[3200:5600] = 0.05 * rng.standard_normal(2400)  # a breath 200-350 ms after: loud, not voiced speech
    for tail in (noise(0.45), noise(0.45) + breath):
        audio = np.concatenate([noise(0.3), tone(0.5) + noise(0.5), tail])
        # Silero-like: speech from the tone's start, still "speech" 128 ms after it ended (its lag).
        probs = np.zeros(-(-len(audio) // 512), np.float32)
        probs[int(0.3 * 16000) // 512 : int((0.8 + 0.128) * 16000) // 512] = 0.9
        ev = SpeechEnded(audio, 320.0, False, 500.0, None, probs, 512)
        assert abs(silence_after_speech_ms(ev) - 450.0) <= 10.0
    # A long utterance: only its last seconds are analysed, with the same result.
    long_audio = np.concatenate([noise(0.3), tone(4.5) + noise(4.5), noise(0.45)])
    long_probs = np.zeros(-(-len(long_audio) // 512), np.float32)
    long_probs[int(0.3 * 16000) // 512 : int((4.8 + 0.128) * 16000) // 512] = 0.9
    long_ev = SpeechEnded(long_audio, 320.0, False, 4500.0, None, long_probs, 512)
    assert abs(silence_after_speech_ms(long_ev) - 450.0) <= 10.0
    # The session works it out in the VAD's thread and carries it on the event: the event loop only reads it.
    (done,) = _with_speech_end([long_ev])
    assert isinstance(done, SpeechEnded) and done.silence_after_speech_ms == silence_after_speech_ms(long_ev)
    assert silence_after_speech_ms(dataclasses.replace(long_ev, silence_after_speech_ms=123.0)) == 123.0
    # Without the probabilities (frames of mixed sizes) the energy estimate is kept: it takes the breath for
    # the end of speech.
    assert silence_after_speech_ms(SpeechEnded(audio, 320.0, False, 500.0)) < 320.0 + 10.0


async def scoring_order(fake_runtime: RuntimeFactory, *, in_gate: bool) -> list[str]:
    """What happened first: the end of another model's compute step (holding the gate when the pause came),
    or the end-of-turn model's call."""
    import threading

    from tests.units import MS
    from voice.runtime.compute import Priority

    clock = FakeClock()
    order: list[str] = []
    session, _ = make_session(fake_runtime, clock, turn_score=lambda _audio: order.append("score") or 0.9)
    turn = dataclasses.replace(session.config.turn, score_in_gate=in_gate)
    session.configure(dataclasses.replace(session.config, turn=turn))
    holding, release = threading.Event(), threading.Event()

    def other_step() -> None:  # e.g. a llama.cpp step of another session's reply
        with session.runtime.gate.slot(Priority.LLM):
            holding.set()
            release.wait(10)
            order.append("step")

    step = threading.Thread(target=other_step)
    step.start()
    holding.wait(10)
    timer = threading.Timer(50 * MS, release.set)
    timer.start()
    client = Client(session)
    await start(session)
    await feed(session, clock, np.concatenate([silence(0.2), tone(0.6), silence(0.5)]))
    release.set()
    step.join(10)
    timer.cancel()
    await session.wait_turns(timeout_s=10)
    await client.close()
    return order


async def test_the_end_of_turn_model_waits_for_the_cores_in_the_gate(fake_runtime: RuntimeFactory) -> None:
    # In the gate it never runs beside another compute step; on the VAD thread (the old way) it does.
    assert await scoring_order(fake_runtime, in_gate=True) == ["step", "score"]
    assert await scoring_order(fake_runtime, in_gate=False) == ["score", "step"]
