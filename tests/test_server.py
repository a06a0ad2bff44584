"""The server over real sockets (127.0.0.1, port 0) with tagged fakes: full turns, every bad input of issue 2
while another session's turn is in flight, barge-in, the shared-model queue stage, output resampling,
reset, end_turn and stop."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Awaitable, Callable

import numpy as np
import pytest

from tests.netkit import http_get, running, server_config, until
from tests.units import FAKE_MS, MS
from voice.reliability.probe import Probe
from voice.reliability.tagged import reply_for, tagged_runtime, tagged_speech
from voice.serve.server import VoiceServer
from voice.turn.pipeline import Utterance

SCALE = 0.1 * FAKE_MS  # fake model times × 0.1: a short turn takes ~40 MS of "compute"


def stage_sum(report: dict[str, object]) -> float:
    stages = report["stages_ms"]
    assert isinstance(stages, dict)
    return float(sum(stages.values()))


async def test_full_turn_over_a_real_websocket() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        status, body = await http_get(srv.port, "/health")
        assert status == 200 and json.loads(body)["status"] == "ready"
        p = await Probe.connect(srv.url)
        assert p.session_id
        report = await p.turn(tagged_speech("s1t1"))
        kinds = [e["type"] for e in p.events]
        # The reply is spoken in clauses (its first one cut after [tts] max_first_chunk_words): one
        # reply_text each, in a row.
        kinds = [k for i, k in enumerate(kinds) if not (k == "reply_text" and kinds[i - 1] == "reply_text")]
        assert kinds == [
            "ready",
            "speech_started",
            "speech_ended",
            "transcript",
            "audio_start",
            "reply_text",
            "audio_end",
            "turn_report",
        ]
        assert p.of_type("transcript")[0]["text"] == "s1t1"
        assert " ".join(e["text"] for e in p.of_type("reply_text")) == reply_for("s1t1")
        assert report["outcome"] == "ok" and report["session_id"] == p.session_id and report["turn_id"] == 1
        assert report["total_ms"] == pytest.approx(stage_sum(report), abs=0.01)
        # Every byte of reply audio arrived, attributed to turn 1 (16 kHz s16le: 32 bytes per ms).
        assert p.audio_bytes[1] == pytest.approx(report["reply_audio_ms"] * 32, abs=2)
        assert p.stray_audio == 0
        assert p.bad_events == []  # every event the server sent decodes to its type
        await p.close()
        await until(lambda: not srv.sessions)
        assert srv.metrics.turns["ok"] == 1 and srv.metrics.stage_count("total") == 1


# ---------------------------------------------------------------------------------------------- bad input
async def _send_text(p: Probe, text: str) -> None:
    await p.ws.send(text)


async def _send_bytes(p: Probe, data: bytes) -> None:
    await p.ws.send(data)


BadInput = tuple[str, bool, Callable[[Probe], Awaitable[None]], str | int]
BAD_INPUTS: list[BadInput] = [
    # (name, send a start first?, what to send, expected error code or close code)
    ("malformed json", True, lambda p: _send_text(p, '{"type": "start", '), "bad_json"),
    ("json array", True, lambda p: _send_text(p, "[1, 2]"), "bad_json"),
    ("no type", True, lambda p: _send_text(p, '{"kind": "start"}'), "bad_message"),
    ("unknown type", True, lambda p: _send_text(p, '{"type": "dance"}'), "unknown_type"),
    ("start twice", True, lambda p: _send_text(p, '{"type": "start", "sample_rate": 16000}'), "already_started"),
    ("audio before start", False, lambda p: _send_bytes(p, b"\x00\x01" * 160), "not_started"),
    ("odd byte count", True, lambda p: _send_bytes(p, b"\x00" * 321), "odd_length"),
    ("zero sample rate", False, lambda p: _send_text(p, '{"type": "start", "sample_rate": 0}'), "bad_sample_rate"),
    (
        "absurd sample rate",
        False,
        lambda p: _send_text(p, '{"type": "start", "sample_rate": 10000000000}'),
        "bad_sample_rate",
    ),
    (
        "absurd output rate",
        False,
        lambda p: _send_text(p, '{"type": "start", "sample_rate": 16000, "output_sample_rate": 3}'),
        "bad_sample_rate",
    ),
    ("sample rate as text", False, lambda p: _send_text(p, '{"type": "start", "sample_rate": "16k"}'), "bad_message"),
    ("stereo", False, lambda p: _send_text(p, '{"type": "start", "sample_rate": 16000, "channels": 2}'), "bad_message"),
    ("oversized binary", True, lambda p: _send_bytes(p, b"\x00" * (300 * 1024)), 1009),
    ("oversized text", True, lambda p: _send_text(p, " " * (300 * 1024)), 1009),
]


@pytest.mark.parametrize(("name", "started", "send", "expect"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
async def test_bad_input_gets_an_error_and_the_turn_in_flight_finishes(
    name: str, started: bool, send: Callable[[Probe], Awaitable[None]], expect: str | int
) -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        busy = await Probe.connect(srv.url)
        since = len(busy.events)
        await busy.say(tagged_speech("long1"))
        await busy.wait_type("audio_start", 5, since)  # turn 1 of the other session is in flight
        bad = await Probe.connect(srv.url, start=None if started else {})
        await send(bad)
        if isinstance(expect, int):
            assert await bad.wait_closed(5) == expect
        else:
            err = await bad.wait_type("error", 5)
            assert err["code"] == expect and err["message"] and err["fatal"] is False
            # The session goes on: start it if needed and run a turn.
            if bad.session_id == "":
                await bad.send_json({"type": "start", "sample_rate": 16000})
                bad.session_id = (await bad.wait_type("ready", 5))["session_id"]
            report = await bad.turn(tagged_speech("s2t1"))
            assert report["outcome"] == "ok" and report["session_id"] == bad.session_id
        report = await busy.wait_type("turn_report", 20, since, turn_id=1)
        assert report["outcome"] == "ok" and report["reply_text"] == reply_for("long1")
        assert busy.errors() == []
        assert srv.metrics.errors[expect if isinstance(expect, str) else "internal"] == (
            1 if isinstance(expect, str) else 0
        )
        await busy.close()
        await bad.close()


async def test_bad_input_on_the_same_session_does_not_lose_its_turn() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        await p.say(tagged_speech("long1"))
        await p.wait_type("audio_start", 5)
        for text in ("nonsense", '{"type": 7}', '{"type": "start", "sample_rate": 16000}'):
            await p.ws.send(text)
        await p.ws.send(b"\x01")
        report = await p.wait_type("turn_report", 20, turn_id=1)
        assert report["outcome"] == "ok" and report["reply_text"] == reply_for("long1")
        assert [e["code"] for e in p.errors()] == ["bad_json", "bad_message", "already_started", "odd_length"]
        await p.close()


# ---------------------------------------------------------------------------------------------- barge-in
async def test_barge_in_over_the_socket() -> None:
    runtime = tagged_runtime(SCALE)
    activity = runtime.watch()
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        await p.say(tagged_speech("long1"))
        await p.wait_type("audio_start", 5)
        await until(lambda: p.audio_frames[1] >= 3)
        since = len(p.events)
        await p.send_audio(tagged_speech("s1t2"))  # the user talks over the reply
        interrupt = await p.wait_type("interrupt", 5, since)
        assert interrupt["turn_id"] == 1
        report1 = await p.wait_type("turn_report", 5, turn_id=1)
        assert report1["cancelled"] is True and report1["outcome"] == "cancelled"
        # The models were let go of at once: LLM and TTS stopped long before the end of the long reply.
        await until(activity.idle, 250 * MS)
        assert report1["generated_tokens"] < len(reply_for("long1").split())
        await p.send_audio(np.zeros(8000, np.int16))  # the end of the interrupting utterance
        report2 = await p.wait_type("turn_report", 10, turn_id=2)
        assert report2["outcome"] == "ok" and report2["reply_text"] == reply_for("s1t2")
        assert p.audio_after_interrupt == 0  # no audio of turn 1 after its interrupt
        kinds = [e["type"] for e in p.events]
        assert kinds.index("speech_started", kinds.index("audio_start")) < kinds.index("interrupt")
        # Metrics: the cancelled turn is counted as cancelled and left out of the latency statistics.
        assert srv.metrics.turns == {"cancelled": 1, "ok": 1}
        assert srv.metrics.stage_count("total") == 1
        _, text = await http_get(srv.port, "/metrics")
        assert 'voice_turns_total{outcome="cancelled"} 1' in text
        assert 'voice_stage_latency_ms_count{stage="total"} 1' in text
        await p.close()


@pytest.mark.parametrize("speculate_after_ms", [0, 32])
async def test_a_cancelled_turn_lets_go_of_its_audio(speculate_after_ms: int) -> None:
    """A turn cancelled by barge-in, and still the session's last, holds no reference to its utterance: a
    cancelled task keeps its error, whose traceback keeps the turn's frames and so the audio. Both kinds of
    turn: started at the endpoint, and a speculative reply committed there."""
    runtime = tagged_runtime(SCALE)
    async with running(runtime, turn={"speculate_after_ms": speculate_after_ms}) as srv:
        p = await Probe.connect(srv.url)
        await p.say(tagged_speech("long1"))
        await p.wait_type("audio_start", 5)
        await p.send_audio(tagged_speech("s1t2"))  # the user talks over the reply, and goes on talking
        report1 = await p.wait_type("turn_report", 5, turn_id=1)
        assert report1["outcome"] == "cancelled" and not p.of_type("speech_ended")[1:]
        gc.collect()
        ms = report1["utterance_ms"]
        assert [o for o in gc.get_objects() if isinstance(o, Utterance) and round(len(o.audio) / 16, 1) == ms] == []
        await p.close()


async def test_speech_during_playback_of_a_finished_reply_interrupts_playback() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        report = await p.turn(tagged_speech("s1t1"))  # ~2 s of reply audio, all sent at once
        assert report["outcome"] == "ok" and report["reply_audio_ms"] > 1000
        since = len(p.events)
        await p.send_audio(tagged_speech("s1t2"))
        interrupt = await p.wait_type("interrupt", 5, since)
        assert interrupt == {"type": "interrupt", "turn_id": 1, "playback_only": True}
        await p.send_audio(np.zeros(8000, np.int16))
        assert (await p.wait_type("turn_report", 5, turn_id=2))["outcome"] == "ok"
        assert srv.metrics.turns == {"ok": 2}  # the finished turn keeps its report
        await p.close()


async def test_a_turn_talked_over_keeps_in_the_history_only_what_was_heard() -> None:
    """Clauses are sent as soon as they are synthesized, long before they play: the user talks while the first
    (~1.7 s of audio) plays and two or more were sent; the history keeps fewer than were sent."""
    runtime = tagged_runtime(SCALE, itl_ms=200)  # 20 MS a word: the 88-word reply is still being written
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        await p.say(tagged_speech("long1"))
        await until(lambda: sum(e.get("turn_id") == 1 for e in p.of_type("reply_text")) >= 2)
        await p.send_audio(tagged_speech("s1t2"))
        report1 = await p.wait_type("turn_report", 5, turn_id=1)
        assert report1["outcome"] == "cancelled"
        await p.send_audio(np.zeros(8000, np.int16))
        assert (await p.wait_type("turn_report", 5, turn_id=2))["outcome"] == "ok"
        said = [m.content for m in runtime.llm.prompts[-1] if m.role == "assistant"]  # type: ignore[attr-defined]
        heard, sent = said[-1].removesuffix(" …"), report1["reply_text"]
        assert said[-1].endswith(" …") and heard.startswith("Okay, here is") and sent.startswith(heard + " ")
        await p.close()


async def test_speech_during_playback_keeps_in_the_history_only_what_was_heard() -> None:
    """The whole long reply (10 clauses, ~25 s of audio) is sent in well under its first clause's 2.4 s; the user
    talks at once, so the next prompt holds the reply's first clause or two (of its ~2.4 s), marked as cut short."""
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        report = await p.turn(tagged_speech("long1"))
        assert report["outcome"] == "ok" and report["reply_audio_ms"] > 20_000
        since = len(p.events)
        await p.send_audio(tagged_speech("s1t2"))
        assert (await p.wait_type("interrupt", 5, since))["playback_only"] is True
        await p.send_audio(np.zeros(8000, np.int16))
        assert (await p.wait_type("turn_report", 5, turn_id=2))["outcome"] == "ok"
        said = [m.content for m in runtime.llm.prompts[-1] if m.role == "assistant"]  # type: ignore[attr-defined]
        heard = said[-1].removesuffix(" …")
        assert said[-1].endswith(" …") and heard.startswith("Okay, here is") and reply_for("long1").startswith(heard)
        assert "Part 2 of" not in heard
        await p.close()


@pytest.mark.parametrize(("played_ms", "kept"), [(1_000_000.0, "all"), (1.0, "first")])
async def test_the_clients_report_of_what_it_played_redoes_the_cut(played_ms: float, kept: str) -> None:
    """The server's estimate keeps the long reply's first clause or two (above); a client that says it had
    played all of it (or 1 ms of it) when it stopped gets the whole reply (or the first clause) kept instead."""
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        report = await p.turn(tagged_speech("long1"))
        since = len(p.events)
        await p.send_audio(tagged_speech("s1t2"))
        assert (await p.wait_type("interrupt", 5, since))["playback_only"] is True
        await p.send_json({"type": "played", "turn_id": 1, "played_ms": played_ms})
        await p.send_audio(np.zeros(8000, np.int16))
        assert (await p.wait_type("turn_report", 5, turn_id=2))["outcome"] == "ok"
        said = [m.content for m in runtime.llm.prompts[-1] if m.role == "assistant"]  # type: ignore[attr-defined]
        clauses = [e["text"] for e in p.of_type("reply_text") if e["turn_id"] == 1]
        assert len(clauses) > 2 and " ".join(clauses) == report["reply_text"]
        assert said[-1] == (report["reply_text"] if kept == "all" else clauses[0] + " …")
        assert p.errors() == []
        await p.close()


# ---------------------------------------------------------------------------------------------- sharing
async def test_second_session_waits_for_the_model_and_the_wait_is_a_queue_stage() -> None:
    runtime = tagged_runtime(0.5 * FAKE_MS)  # STT 50 MS
    async with running(runtime) as srv:
        a = await Probe.connect(srv.url)
        b = await Probe.connect(srv.url)
        await a.send_audio(tagged_speech("s1t1"))
        await b.send_audio(tagged_speech("s2t1"))
        await asyncio.gather(a.send_json({"type": "end_turn"}), b.send_json({"type": "end_turn"}))
        ra, rb = await asyncio.gather(a.wait_type("turn_report", 10), b.wait_type("turn_report", 10))
        assert ra["outcome"] == rb["outcome"] == "ok"
        first, second = sorted((ra, rb), key=lambda r: r["stages_ms"]["stt_queue"])
        # The second STT waited for the first one to finish: its queue stage shows the wait.
        assert second["stages_ms"]["stt_queue"] >= 0.8 * first["stages_ms"]["stt"]
        assert first["stages_ms"]["stt_queue"] < 0.5 * first["stages_ms"]["stt"]
        assert second["total_ms"] == pytest.approx(stage_sum(second), abs=0.01)
        await a.close()
        await b.close()


async def test_busy_when_the_model_queue_is_full() -> None:
    runtime = tagged_runtime(0.5 * FAKE_MS, max_queue=1)
    async with running(runtime, {"max_queue": 1}) as srv:
        a = await Probe.connect(srv.url)
        b = await Probe.connect(srv.url)
        await a.send_audio(tagged_speech("long1"))
        await b.send_audio(tagged_speech("s2t1"))
        await a.send_json({"type": "end_turn"})
        await a.wait_type("transcript", 5)  # a holds the only place (its LLM is generating)
        await b.send_json({"type": "end_turn"})
        err = await b.wait_type("error", 5)
        assert err["code"] == "busy" and "max_queue=1" in err["message"]
        assert (await b.wait_type("turn_report", 5))["outcome"] == "busy"
        assert (await a.wait_type("turn_report", 20))["outcome"] == "ok"
        # Once a's LLM is done, b gets the model.
        assert (await b.turn(tagged_speech("s2t2")))["outcome"] == "ok"
        assert srv.metrics.errors["busy"] == 1
        await a.close()
        await b.close()


# ---------------------------------------------------------------------------------------------- formats
@pytest.mark.parametrize(("out_rate", "in_rate"), [(48000, 16000), (22050, 8000), (16000, 44100)])
async def test_output_sample_rate_conversion(out_rate: int, in_rate: int) -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url, start={"sample_rate": in_rate, "output_sample_rate": out_rate})
        ready = p.of_type("ready")[0]
        assert ready["output_sample_rate"] == out_rate and ready["input_sample_rate"] == in_rate
        t = np.arange(int(0.6 * in_rate)) / in_rate
        speech = (0.3 * 32767 * np.sin(2 * np.pi * 300 * t)).astype(np.int16)
        since = len(p.events)
        await p.send_audio(speech, rate_hz=in_rate)
        await p.send_audio(np.zeros(in_rate // 2, np.int16), rate_hz=in_rate)
        report = await p.wait_type("turn_report", 10, since)
        assert report["outcome"] == "ok"
        assert p.of_type("transcript")[0]["text"] == "hello there"  # heard after resampling to 16 kHz
        assert p.of_type("audio_start")[0]["sample_rate"] == out_rate
        assert p.audio_bytes[1] / 2 == pytest.approx(report["reply_audio_ms"] * out_rate / 1000, rel=0.01)
        await p.close()


# ---------------------------------------------------------------------------------------------- control
async def test_reset_forgets_the_conversation() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        await p.turn(tagged_speech("s1t1"))
        await p.turn(tagged_speech("s1t2"))
        prompts = runtime.llm.prompts  # type: ignore[attr-defined]
        assert [m.content for m in prompts[-1] if m.role == "user"] == ["s1t1", "s1t2"]
        await p.send_json({"type": "reset"})
        await p.turn(tagged_speech("s1t3"))
        assert [m.role for m in prompts[-1]] == ["system", "user"] and prompts[-1][1].content == "s1t3"
        # Reset during a reply stops it (reported as cancelled) before forgetting.
        since = len(p.events)
        await p.say(tagged_speech("long4"))
        await p.wait_type("audio_start", 5, since)
        await p.send_json({"type": "reset"})
        assert (await p.wait_type("turn_report", 5, since))["outcome"] == "cancelled"
        assert (await p.turn(tagged_speech("s1t5")))["outcome"] == "ok"
        assert [m.role for m in prompts[-1]] == ["system", "user"]
        await p.close()


async def test_end_turn_forces_the_endpoint() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        await p.send_json({"type": "end_turn"})  # outside speech: nothing happens
        await p.send_audio(tagged_speech("s1t1", seconds=2.0))  # no trailing silence
        await p.send_json({"type": "end_turn"})
        ended = await p.wait_type("speech_ended", 5)
        assert ended["forced"] is True and ended["trailing_silence_ms"] == 0
        report = await p.wait_type("turn_report", 5)
        assert report["outcome"] == "ok" and report["forced_endpoint"] is True
        assert report["utterance_ms"] >= 2000 - 32  # all but the last partial VAD frame (512 samples)
        assert p.errors() == [] and len(p.of_type("speech_ended")) == 1
        await p.close()


async def test_stop_finishes_the_turn_in_flight_then_closes_normally() -> None:
    runtime = tagged_runtime(SCALE)
    async with running(runtime) as srv:
        p = await Probe.connect(srv.url)
        await p.say(tagged_speech("long1"))
        await p.wait_type("transcript", 5)
        await p.send_json({"type": "stop"})
        assert await p.wait_closed(20) == 1000
        report = p.of_type("turn_report")[0]
        assert report["outcome"] == "ok" and p.audio_bytes[1] == pytest.approx(report["reply_audio_ms"] * 32, abs=2)
        await until(lambda: not srv.sessions)


async def test_health_and_metrics() -> None:
    srv = VoiceServer(server_config(), None)
    await srv.start()
    try:
        status, body = await http_get(srv.port, "/health")
        assert status == 503 and json.loads(body)["status"] == "loading"
        p = await Probe.connect(srv.url, start={})
        assert await p.wait_closed(5) == 1013  # models still loading: try again later
        srv.runtime = tagged_runtime(SCALE)
        status, body = await http_get(srv.port, "/health")
        assert status == 200 and json.loads(body) == {"status": "ready", "sessions": 0}
        p = await Probe.connect(srv.url)
        await p.turn(tagged_speech("s1t1"))
        status, text = await http_get(srv.port, "/metrics")
        assert status == 200
        for line in (
            "voice_ready 1",
            'voice_turns_total{outcome="ok"} 1',
            "voice_sessions_active 1",
            "voice_queue_depth 0",
            'voice_stage_latency_ms_count{stage="stt"} 1',
            'voice_closes_total{code="1013"} 1',
        ):
            assert line in text.splitlines(), line
        await p.close()
    finally:
        await srv.shutdown()
