"""Home Assistant sends our transcript's words to the agent on another connection, without the STT's confidence:
the server remembers how sure the STT was of each transcript it sent (:mod:`voice.wyoming.heard_recently`) and the
agent asks again when the words come back unsure, as a spoken ``voice serve`` turn does. The store with a fake
clock, then Home Assistant's two connections on a real Wyoming socket with a scripted STT."""

from __future__ import annotations

import numpy as np
import pytest
from wyoming.asr import Transcript

from tests.conftest import make_config
from tests.test_wyoming import Client, handle, started, transcribe
from tests.units import FAKE_MS
from voice.clock import FakeClock
from voice.reliability.tagged import tagged_runtime
from voice.runtime.fakes import FakeLlm, FakeStt
from voice.runtime.model_api import Heard
from voice.wyoming.heard_recently import HeardRecently

pytestmark = pytest.mark.timeout(60)
CONFIG = make_config()
ASK_AGAIN = CONFIG.stt.ask_again_reply


def test_a_transcript_is_taken_back_once_by_its_words_within_the_time_kept() -> None:
    clock = FakeClock()
    recent = HeardRecently(clock, keep_s=60.0)
    recent.remember(Heard("What is the tallest  mountain?", -1.2, 0.2))
    clock.advance_ms(59_000)
    assert recent.take("what is the tallest mountain?") == Heard("What is the tallest  mountain?", -1.2, 0.2)
    assert recent.take("What is the tallest mountain?") is None  # taken once
    recent.remember(Heard("Play the Beatles.", -0.1))
    clock.advance_ms(60_001)
    assert recent.take("Play the Beatles.") is None  # too old: another turn's words
    assert recent.take("never heard") is None


def test_the_oldest_goes_first_and_empty_words_are_not_kept() -> None:
    recent = HeardRecently(FakeClock(), max_entries=2)
    recent.remember(Heard("   "))
    for text in ("one", "two", "three"):
        recent.remember(Heard(text, -0.5))
    assert len(recent) == 2 and recent.take("one") is None and recent.take("three") == Heard("three", -0.5)


@pytest.mark.parametrize(("keep_s", "max_entries"), [(0.0, 4), (-1.0, 4), (60.0, 0)])
def test_a_store_that_keeps_nothing_is_refused(keep_s: float, max_entries: int) -> None:
    with pytest.raises(ValueError, match="keep_s"):
        HeardRecently(FakeClock(), keep_s=keep_s, max_entries=max_entries)


QUESTION = "What is the tallest mountain in Peru?"


@pytest.mark.parametrize(
    ("logprob", "expected"),
    [(-0.1, "Huascaran."), (-1.5, ASK_AGAIN)],  # sure: answered; under [stt] ask_again_below_logprob: asked again
)
async def test_words_our_stt_was_unsure_of_are_asked_again_by_the_agent(logprob: float, expected: str) -> None:
    llm = FakeLlm(reply_to=lambda text: "Huascaran.", itl_ms=1.0, ttft_floor_ms=1.0)
    runtime = tagged_runtime(0.05 * FAKE_MS, llm=llm)
    runtime.stt = FakeStt(texts=(QUESTION,), latency_ms=1.0, avg_logprobs=(logprob,))
    srv = await started(CONFIG, runtime)
    try:
        async with Client("127.0.0.1", srv.port) as c:  # Home Assistant's STT connection
            assert Transcript.from_event(await transcribe(c, np.zeros(8000, np.int16))).text == QUESTION
        assert await handle(srv.port, QUESTION, "c") == expected  # its agent connection, the words alone
        assert await handle(srv.port, QUESTION, "d") == "Huascaran."  # typed again later: no confidence, answered
    finally:
        await srv.shutdown()
