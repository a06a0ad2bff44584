"""The words of the speculative transcript reach the end-of-turn decision through a Session (no sockets, fake
runtime and clock): words that cannot end a sentence keep the long window although the model scored the turn
complete; other words, or the lever off, let the turn end after the complete window. The turn report says what
the models read, and the e2e bench keeps it per turn."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import cast

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config, silence, tone
from tests.test_session_speculation import Client, feed, start, until
from voice.bench.clips import Clip
from voice.bench.e2e.report import _heard_and_said, end_evidence
from voice.bench.e2e.turn import PlanItem, TurnResult, turn_result
from voice.client import ClientTurn, Conversation
from voice.clock import FakeClock
from voice.runtime.fakes import Delay, FakeLlm, FakeStt
from voice.serve.session import Session
from voice.turn.endpoint import EndpointEvent
from voice.wire.report import TurnReport


async def ended_after(fake_runtime: RuntimeFactory, words: str, *, text_evidence: bool, silence_s: float) -> bool:
    """Speech, then ``silence_s`` of silence, with a model that scores every pause complete and an STT that
    hears ``words``: whether the turn ended (``speech_ended`` sent) by then."""
    clock = FakeClock()
    delay = Delay(clock)
    runtime = fake_runtime(
        clock=clock,
        stt=FakeStt(texts=(words,), latency_ms=50.0, delay=delay),
        llm=FakeLlm(replies=("Fine.",), delay=delay),
        turn_score=lambda audio: 0.9,
    )
    config = make_config(
        vad={"silence_ms": 320, "pre_roll_ms": 64, "min_speech_ms": 64},
        turn={
            "speculate_after_ms": 32,
            "complete_silence_ms": 320,
            "incomplete_silence_ms": 960,
            "text_evidence": text_evidence,
        },
        tts={"min_first_clause_words": 1},
    )
    reports: list[TurnReport] = []
    session = Session("s", runtime, config, clock, on_report=reports.append)
    client = Client(session)
    await start(session)
    heard: list[str] = []
    hear_words = session.listener.hear_words

    async def noting(text: str, pause_seq: int) -> list[EndpointEvent]:
        events = await hear_words(text, pause_seq)
        heard.append(text)
        return events

    session.listener.hear_words = noting  # type: ignore[method-assign]  # observed, not replaced
    await feed(session, clock, np.concatenate([silence(0.2), tone(0.6), silence(0.128)]))
    if text_evidence:  # the words arrive inside the complete window, however slow the worker threads are
        await until(lambda: bool(heard))
    for _ in range(int((silence_s - 0.128) / 0.064)):
        await feed(session, clock, silence(0.064))
    ended = "speech_ended" in client.types()
    await session.cancel_turns()
    await client.close()
    return ended


@pytest.mark.parametrize(
    ("words", "text_evidence", "ended"),
    [
        ("Set a timer for...", True, False),  # the words veto the complete score
        ("What is the capital of", True, False),
        ("What time is it?", True, True),
        ("This is a test.", True, True),  # no veto: the score decides
        ("Set a timer for...", False, True),  # the lever off: the score alone
    ],
)
async def test_the_words_can_keep_the_turn_open(
    fake_runtime: RuntimeFactory, words: str, text_evidence: bool, ended: bool
) -> None:
    assert await ended_after(fake_runtime, words, text_evidence=text_evidence, silence_s=0.6) is ended


async def test_vetoed_words_still_end_the_turn_after_the_long_window(fake_runtime: RuntimeFactory) -> None:
    assert await ended_after(fake_runtime, "Set a timer for...", text_evidence=True, silence_s=1.3)


@pytest.mark.parametrize("model", ["smollm2-135m", ""])
async def test_the_turn_report_says_what_the_words_model_read(fake_runtime: RuntimeFactory, model: str) -> None:
    """The report carries the score and the words model's probability that set the window: why the turn ended
    when it did (None without the model)."""
    clock = FakeClock()
    delay = Delay(clock)
    heard: list[str] = []

    def words_end(text: str) -> float:
        heard.append(text)
        return 0.37

    runtime = fake_runtime(
        clock=clock,
        stt=FakeStt(texts=("Cancel all timers.",), latency_ms=50.0, delay=delay),
        llm=FakeLlm(replies=("Fine.",), delay=delay),
        turn_score=lambda audio: 0.1,
        words_end=words_end,
    )
    config = make_config(
        vad={"silence_ms": 320, "pre_roll_ms": 64, "min_speech_ms": 64},
        turn={"speculate_after_ms": 32, "complete_silence_ms": 320, "incomplete_silence_ms": 960,
              "words_model": model},
        tts={"min_first_clause_words": 1},
    )  # fmt: skip
    reports: list[TurnReport] = []
    session = Session("s", runtime, config, clock, on_report=reports.append)
    client = Client(session)
    await start(session)
    await feed(session, clock, np.concatenate([silence(0.2), tone(0.6), silence(0.4)]))
    if model:  # the words are read in a worker thread: let them arrive (the silence has passed 320 ms)
        await until(lambda: bool(heard))
    for _ in range(int(0.9 / 0.064)):
        await feed(session, clock, silence(0.064))
    await until(lambda: bool(reports))
    await session.cancel_turns()
    await client.close()
    (report,) = reports
    assert report.turn_score == 0.1
    assert report.turn_words_p == (0.37 if model else None)
    assert heard == (["Cancel all timers."] if model else [])


@pytest.mark.parametrize(
    ("report", "score", "words_p", "shown"),
    [
        ({"turn_score": 0.12, "turn_words_p": 0.0041}, 0.12, 0.0041, "0.12 / 0.004"),
        ({"turn_score": 0.9}, 0.9, None, "0.90 / –"),
        ({}, None, None, None),  # a server without the model (or older): no key written, no evidence shown
    ],
)
def test_an_e2e_turn_carries_the_end_evidence_and_writes_it_only_when_known(
    report: dict[str, object], score: float | None, words_p: float | None, shown: str | None
) -> None:
    clip = SimpleNamespace(name="a.wav", reference=None, speech_end_s=1.0, speech_end=SimpleNamespace(ambiguous=None))
    conv = Conversation(turns={1: ClientTurn(1, report={"outcome": "ok", **report})}, session_id="s",
                        utterance_turns=[[1]])  # fmt: skip
    res = turn_result(PlanItem(cast(Clip, clip), "measured", 1), conv)
    assert (res.turn_score, res.turn_words_p) == (score, words_p)
    written = json.loads(json.dumps(res.to_dict()))
    assert ("turn_words_p" in written) == (words_p is not None) and ("turn_score" in written) == (score is not None)
    assert TurnResult.from_dict(written) == res
    assert end_evidence(res.turn_score, res.turn_words_p) == shown
    table = "\n".join(_heard_and_said([res]))
    assert ("end: score / words" in table) == (shown is not None)  # older results keep the table they had
