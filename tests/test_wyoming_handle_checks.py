"""Home Assistant's ``handle`` goes through the checks a websocket turn does: text with nothing to answer is asked
again without the LLM and off the history, and the LLM's reply meets the echo, claim and ``[llm] not_sure`` checks
(:mod:`voice.turn.checked_stream`). Scripted fake LLMs on a real Wyoming socket."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable

import pytest

from tests.conftest import make_config
from tests.test_wyoming import handle, started
from tests.units import FAKE_MS
from voice.config.config import Config
from voice.reliability.tagged import tagged_runtime
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import Heard
from voice.skills.capabilities import WHAT_I_CAN_DO
from voice.skills.timers import CANNOT_RING
from voice.wyoming.server import WyomingServer

pytestmark = pytest.mark.timeout(60)
CONFIG = make_config()
ASK_AGAIN = CONFIG.stt.ask_again_reply
NOT_SURE = CONFIG.llm.not_sure_reply


def answers(replies: dict[str, str], logprobs: dict[str, float] | None = None) -> FakeLlm:
    """A fake LLM that answers each question from ``replies`` ("Okay." otherwise), its words scored by
    ``logprobs`` (a word not in it is sure)."""
    reply_to: Callable[[str], str] = lambda text: replies.get(text, "Okay.")  # noqa: E731
    return FakeLlm(reply_to=reply_to, word_logprobs=logprobs, itl_ms=1.0, ttft_floor_ms=1.0)


async def serve(llm: FakeLlm, config: Config = CONFIG) -> AsyncIterator[WyomingServer]:
    srv = await started(config, tagged_runtime(0.05 * FAKE_MS, llm=llm))
    try:
        yield srv
    finally:
        await srv.shutdown()  # closes the runtime


@pytest.mark.parametrize("text", ["4 7 1 9 3 8", "...", "?!", "1, 2, 3."])
async def test_text_with_nothing_to_answer_is_asked_again_without_the_llm(text: str) -> None:
    llm = answers({})
    async for srv in serve(llm):
        assert await handle(srv.port, text, "c") == ASK_AGAIN
        assert llm.prompts == []
        assert await handle(srv.port, "Tell me a joke.", "c") == "Okay."
        assert [m.content for m in llm.prompts[-1] if m.role != "system"] == ["Tell me a joke."]  # off the record


async def test_an_echo_of_the_question_is_asked_again_and_the_history_holds_what_was_said() -> None:
    said = "He wrote the Harry Potter books."
    llm = answers({said: said, "Next one.": "Okay."})
    async for srv in serve(llm):
        assert await handle(srv.port, said, "c") == ASK_AGAIN
        await handle(srv.port, "Next one.", "c")
        assert [(m.role, m.content) for m in llm.prompts[-1][1:]] == [
            ("user", said),
            ("assistant", ASK_AGAIN),
            ("user", "Next one."),
        ]


async def test_a_claim_the_system_prompt_denies_becomes_what_it_can_do() -> None:
    llm = answers({"Turn the lights on please": "Sure! I'll turn on the lights for you."})
    async for srv in serve(llm):
        assert await handle(srv.port, "Turn the lights on please", "c") == WHAT_I_CAN_DO


@pytest.mark.parametrize(
    ("logprob", "heard", "typed_gated", "expected"),
    [
        (-0.1, True, True, "Lyon is in France."),
        (-3.0, True, True, NOT_SURE),
        (-3.0, False, True, NOT_SURE),  # typed, gated by default ([llm] not_sure_typed)
        (-3.0, True, False, NOT_SURE),  # words our STT sent: a spoken question, gated whatever not_sure_typed says
        (-3.0, False, False, "Lyon is in France."),  # typed, [llm] not_sure_typed off: not gated
    ],
)
async def test_a_first_sentence_the_model_was_unsure_of_becomes_not_sure(
    logprob: float, heard: bool, typed_gated: bool, expected: str
) -> None:
    reply = "Lyon is in France."
    llm = answers({"Where is Lyon?": reply}, logprobs={w: logprob for w in reply.split()})
    config = dataclasses.replace(CONFIG, llm=dataclasses.replace(CONFIG.llm, not_sure_typed=typed_gated))
    async for srv in serve(llm, config):
        if heard:  # as Home Assistant does: our STT transcribed it on another connection
            srv.heard_recently.remember(Heard("Where is Lyon?", -0.1))
        assert await handle(srv.port, "Where is Lyon?", "c") == expected


@pytest.mark.parametrize("text", ["Set a timer for 10 minutes.", "Cancel all timers.", "How long is left on my timer?"])
async def test_a_timer_command_is_told_honestly_that_nothing_here_can_ring(text: str) -> None:
    llm = answers({text: "Timer set for 10 minutes."})  # what a model says to it: a timer that never rings
    async for srv in serve(llm):
        assert await handle(srv.port, text, "c") == CANNOT_RING
        assert llm.prompts == []
