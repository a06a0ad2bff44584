"""Elliptical follow-ups are written out from the user's previous question, and only those: a new request that
happens to start with "how about" is left as it is (voice.conversation.ellipsis)."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest

from tests.conftest import make_config
from voice.conversation.ellipsis import resolve
from voice.conversation.follow_ups import resolve_messages
from voice.conversation.prompt_view import PromptView
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage, TextDelta


@pytest.mark.parametrize(
    ("previous", "follow_up", "full"),
    [
        ("What is the population of Japan?", "What about China?", "What is the population of China?"),
        ("What's the capital of Egypt?", "And Kenya?", "What's the capital of Kenya?"),
        ("Who is the president of Brazil?", "And of Argentina?", "Who is the president of Argentina?"),
        ("How many people live in New York now?", "How about Los Angeles?", "How many people live in Los Angeles now?"),
        ("Who wrote Hamlet?", "How about Macbeth?", "Who wrote Macbeth?"),
        ("When did the Eiffel Tower open?", "How about the Shard?", "When did the Shard open?"),
        ("Is the library open on Sunday?", "What about Monday?", "Is the library open on Monday?"),
        ("How many metres are in a kilometre?", "And in half a kilometre?", "How many metres are in half a kilometre?"),
        ("How many grams are in a pound?", "what about an ounce", "How many grams are in an ounce?"),
        ("How many feet are in 3 miles?", "What about 5 miles?", "How many feet are in 5 miles?"),
        ("What should I cook for lunch?", "And for dinner?", "What should I cook for dinner?"),
        ("Convert 3 pints to litres.", "What about ten pints?", "Convert ten pints to litres?"),  # a command before
        ("What is 5 kilos in pounds?", "And what about twelve kilos?", "What is twelve kilos in pounds?"),
        (
            "What is 20 degrees Celsius in Fahrenheit?",
            "What about 35 degrees Celsius?",
            "What is 35 degrees Celsius in Fahrenheit?",
        ),
        ("what is the capital of Peru", "how about Chile", "what is the capital of Chile?"),  # as Whisper writes
        ("How long does a horse live?", "And a cat?", "How long does a cat live?"),
        ("How many wheels does a car have?", "and the bicycle", "How many wheels does the bicycle have?"),
        ("What is the capital of France?", "And the population?", "What is the population of France?"),
        ("How many players are on a soccer team?", "What about a rugby team?", "How many players are on a rugby team?"),
        # a bare number for the number of the question's only amount
        ("Convert 5 kilometers to miles.", "And what about 10?", "Convert 10 kilometers to miles?"),
        ("How many kilometres are in ten miles?", "What about twenty five?", "How many kilometres are in twenty five miles?"),  # noqa: E501
        ("How many feet are in 3 miles?", "And 2.5?", "How many feet are in 2.5 miles?"),
        ("What is 20 degrees Celsius in Fahrenheit?", "What about 35?", "What is 35 degrees Celsius in Fahrenheit?"),
        ("How many feet are in 3 miles?", "What about 2.5 miles?", "How many feet are in 2.5 miles?"),
        ("What's 20 degrees Celsius in Fahrenheit?", "Hmm, and what about minus 10?", "What's minus 10 degrees Celsius in Fahrenheit?"),  # noqa: E501
        # "And" with an amount of a unit
        ("Convert 100 feet to metres, please.", "And 250 feet?", "Convert 250 feet to metres, please?"),
        ("How many kilometres are in ten miles?", "and 3 miles", "How many kilometres are in 3 miles?"),
        # interjections before it
        ("What is the capital of France?", "Um, and what about Germany?", "What is the capital of Germany?"),
    ],
)  # fmt: skip
def test_an_elliptical_follow_up_is_written_out_from_the_previous_question(
    previous: str, follow_up: str, full: str
) -> None:
    assert resolve(follow_up, previous) == full


@pytest.mark.parametrize(
    ("previous", "follow_up"),
    [
        ("What's the weather in Paris?", "How about a joke?"),  # a new request
        ("How many feet are in a mile?", "What about a song?"),
        ("What is your name?", "What about you?"),  # a pronoun
        ("What's 15% of 80?", "What about 20%?"),  # no word to go on
        ("What did Caesar do?", "And then what happened?"),
        ("What is the capital of France?", "And what river flows through it?"),
        ("I live in France.", "How about Germany?"),  # not a question
        ("What is the capital of France?", "and on Spain"),  # no "on" in the question
        ("What is the date today?", "How about Friday?"),  # nothing to replace
        ("Who painted the Mona Lisa?", "Which country was he from?"),
        (
            "What is the capital of France?",
            "How about the longest river in the whole wide world?",
        ),  # too long
        ("What's the weather in Paris?", "And a joke?"),  # not another of "the weather"
        ("What is 6 times 7?", "What about 8?"),  # either number
        ("Convert 5 kilometers to miles in 2 steps.", "What about 10?"),  # another number
        ("What's the capital of France?", "What about 10?"),  # no amount
        ("Set a timer for 5 minutes.", "What about 10?"),  # not a question (the timers' own follow-up)
        ("How many feet are in 3 miles?", "10?"),  # neither "and" nor "what about"
        ("How many feet are in 3 miles?", "250 feet?"),
        ("What's the capital of France?", "And 250 feet?"),  # no amount to replace
        ("What is 6 times 7?", "And minus 8?"),  # either number
        ("Can you tell me a story?", "How about a joke?"),  # "how about" a thing: only for the same noun
        ("How far is the sun from the earth?", "And the moon?"),  # which of the two?
        ("How many grams are in 3 pounds?", "What about an ounce?"),  # a unit for an amount
        ("Tell me a story.", "How about a joke?"),
    ],
)
def test_other_turns_are_left_as_they_are(previous: str, follow_up: str) -> None:
    assert resolve(follow_up, previous) is None


def test_a_follow_up_of_a_follow_up_is_resolved_from_the_one_written_out() -> None:
    said = ["What is the capital of Egypt?", "And Kenya?", "How about Peru?", "Thanks."]
    messages = [ChatMessage("user", said[0]), ChatMessage("assistant", "Cairo.")]
    messages += [ChatMessage("user", s) for s in said[1:]]
    users = [m.content for m in resolve_messages(messages) if m.role == "user"]
    assert users == [said[0], "What is the capital of Kenya?", "What is the capital of Peru?", "Thanks."]
    assert [m.content for m in messages if m.role == "user"] == said  # the conversation itself is unchanged


def test_the_model_sees_the_question_written_out_unless_switched_off() -> None:
    messages = [ChatMessage("user", "What is the capital of Peru?"), ChatMessage("assistant", "Lima."),
                ChatMessage("user", "how about Chile")]  # fmt: skip
    assert PromptView(make_config().llm).apply(messages)[-1].content == "What is the capital of Chile?"
    off = make_config(llm={"resolve_follow_ups": False}).llm
    assert PromptView(off).apply(messages)[-1].content == "How about Chile?"  # tidied only


@pytest.mark.parametrize("resolve_follow_ups", [True, False])
def test_the_skills_answer_a_follow_up_written_out(resolve_follow_ups: bool) -> None:
    messages = [ChatMessage("user", "How many feet are in a mile?"), ChatMessage("assistant", "5280 feet."),
                ChatMessage("user", "And in a quarter of a mile?")]  # fmt: skip
    llm = SkillsLlm(
        FakeLlm(replies=("I am the LLM.",)),
        clock=lambda: datetime(2026, 12, 4, 12),
        resolve_follow_ups=resolve_follow_ups,
    )
    reply = "".join(
        e.text
        for e in llm.generate(messages, max_tokens=32, cancel=threading.Event())
        if isinstance(e, TextDelta)
    )
    assert ("1320" in reply) == resolve_follow_ups
    assert (reply == "I am the LLM.") != resolve_follow_ups


def test_each_turn_renders_the_earlier_turns_as_before_so_the_cached_prefix_still_covers_them() -> None:
    """The prompt of every turn starts with the prompt of the turn before (what llama.cpp's prefix cache reuses):
    a follow-up written out once is written out the same way on every later turn."""
    said = [
        "What is the capital of Egypt?",
        "And Kenya?",
        "How many feet are in a mile?",
        "And in half a mile?",
    ]
    view = PromptView(make_config().llm)
    conversation: list[ChatMessage] = []
    before: list[ChatMessage] = []  # the prompt the previous turn evaluated
    for text in said:
        conversation.append(ChatMessage("user", text))
        now = view.apply(conversation)
        assert now[: len(before)] == before
        before = now
        conversation.append(ChatMessage("assistant", "A reply."))
    assert [m.content for m in before if m.role == "user"][1::2] == [
        "What is the capital of Kenya?",
        "How many feet are in half a mile?",
    ]
