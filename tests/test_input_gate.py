"""Transcripts with nothing to answer are asked again, never handed to the LLM (voice.conversation.input_gate), by
word classes: punctuation, digits, hesitation sounds, glue words, non-words and notes of sounds carry no request."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_turn import ListSink, start_timer
from voice.clock import FakeClock
from voice.conversation.history import History
from voice.conversation.input_gate import unintelligible
from voice.runtime.fakes import Delay, FakeStt
from voice.runtime.model_api import ChatMessage
from voice.turn.ask_again import needed
from voice.turn.pipeline import Utterance, run_turn

SURE = -0.1

NOTHING_TO_ANSWER = [
    ".",
    "...",
    "?!",
    " - ",
    "1 2 3 4 5",
    "7, 7, 4.",
    "42",
    "1,000.",
    "Um, uh.",
    "Hmm... mm.",
    "uh-huh",
    "Ahhh.",
    "the",
    "and, uh, so",
    "[BLANK_AUDIO]",
    "(coughs)",
    "*music*",
    "♪ ♪",
    "Shh. Brr.",
]

SOMETHING_TO_ANSWER = [
    "What?",  # asks to hear the reply again
    "Yes.",
    "No",
    "Thanks.",
    "you",  # a word, if a thin one: the LLM's
    "Why?",
    "Hello there.",
    "Um, what time is it?",
    "(coughs) What's the capital of France?",
    "In km/h?",  # a unit, not a non-word
    "R2D2",  # letters and digits: a name
    "and 30",  # the conversation may give it a meaning (see below); the gate alone finds nothing in it
    "7 times 8",
    "one two three",  # number words are words
    "Café?",
]


@pytest.mark.parametrize("text", NOTHING_TO_ANSWER)
def test_a_transcript_with_no_word_that_can_ask_is_unintelligible(text: str) -> None:
    assert unintelligible(text)
    assert needed(make_config(), text, SURE)  # asked again, however sure the STT
    assert needed(make_config(stt={"ask_again": False}), text, None)


@pytest.mark.parametrize("text", [t for t in SOMETHING_TO_ANSWER if t != "and 30"])
def test_a_transcript_with_a_word_that_can_ask_is_answered(text: str) -> None:
    assert not unintelligible(text)
    assert not needed(make_config(), text, SURE)


def test_nothing_heard_is_no_speech_not_unintelligible() -> None:
    assert not unintelligible("")
    assert not unintelligible("   ")
    assert not needed(make_config(), "", SURE)


CELSIUS = [
    ChatMessage("user", "Convert 20 degrees Celsius to Fahrenheit."),
    ChatMessage("assistant", "20 degrees Celsius is 68 degrees Fahrenheit."),
]
FEET = [
    ChatMessage("user", "How many feet are in 3 miles?"),
    ChatMessage("assistant", "3 miles is 15840 feet."),
]


@pytest.mark.parametrize(("earlier", "text"), [(CELSIUS, "and 30"), (FEET, "And 2.5?")])
def test_a_follow_up_the_conversation_gives_a_meaning_is_answered(
    earlier: list[ChatMessage], text: str
) -> None:
    assert unintelligible(text)
    assert needed(make_config(), text, SURE)  # alone: nothing to answer
    assert not needed(make_config(), text, SURE, earlier)


@pytest.mark.parametrize("text", ["1 2 3 4 5", "Um, uh.", "[BLANK_AUDIO]"])
async def test_the_turn_asks_again_without_the_llm_and_keeps_it_out_of_the_history(
    clock: FakeClock, fake_runtime: RuntimeFactory, text: str
) -> None:
    runtime = fake_runtime(clock=clock, stt=FakeStt(texts=(text,), avg_logprobs=(SURE,), delay=Delay(clock)))
    config, history, sink = make_config(), History(), ListSink()
    utterance = Utterance(np.zeros(16000, np.float32), 320.0, False)
    report = await run_turn(runtime, config, history, utterance, start_timer(clock, 1), sink)
    assert report.asked_again and report.reply_text == config.stt.ask_again_reply
    assert runtime.llm.prompts == []  # type: ignore[attr-defined]
    assert history.messages == []
    # The client is shown what was heard.
    assert {"type": "transcript", "turn_id": 1, "text": text} in sink.events
