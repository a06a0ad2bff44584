"""The words of the speculative transcript reach the end-of-turn decision through a Session (no sockets, fake
runtime and clock): words that cannot end a sentence keep the long window although the model scored the turn
complete; other words, or the lever off, let the turn end after the complete window."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config, silence, tone
from tests.test_session_speculation import Client, feed, start
from voice.clock import FakeClock
from voice.runtime.fakes import Delay, FakeLlm, FakeStt
from voice.serve.session import Session
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
    await feed(session, clock, np.concatenate([silence(0.2), tone(0.6)]))
    for _ in range(int(silence_s / 0.064)):  # the words arrive while the silence goes on
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
