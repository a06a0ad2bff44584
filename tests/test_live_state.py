"""One rule for questions about how things are right now (voice.skills.live_state): a question for a value or a
state, tied to now or to here, or asking for a reading or whether something is on, gets the honest "I can't see
that"; facts that do not change, the clock, advice and questions about the assistant do not."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.skills_chat import reply_to
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage
from voice.skills.live_state import REPLY, asks_live_state, cannot_see

DECLINE = [
    # a reading tied to a place at home
    "What is the temperature in the living room?",
    "Can you tell me what the temperature is in the bedroom?",
    "What's the air quality outside?",
    "How busy is the supermarket right now?",
    # a state one can only check
    "Is the front door locked?",
    "Is the light on?",
    "Are the kitchen lights still on?",
    "Is the oven on in the kitchen?",
    "Is the garage door open?",
    "Is the number 12 bus running on time?",  # "on time" is a state here, not the clock's
    "Is my train delayed?",
    "Is the 802 to Paddington running late?",
    # a reading with nothing to read it of
    "What is the humidity?",
    "How's the traffic?",
    "What's the weather like?",
    "What are the headlines?",
    "What is the exchange rate?",
    # prices whatever they are of
    "What is the stock price of Apple?",
    "What is the price of gold?",
    # tied to now, tonight, tomorrow, last night
    "What was the score last night?",
    "Who won the game last night?",
    "Did we win yesterday?",
    "What's the latest news?",
    "What is the weather in Paris tomorrow?",
    "Will it be sunny tomorrow?",
    "What's on TV tonight?",
    "What is happening in the world today?",
    # the weather itself
    "How cold is it outside?",
    "How warm is it?",
    "Is it raining?",
    "Okay, is it snowing in Oslo?",
    # what a thing of the user's shows, says or reads
    "Is the baby monitor showing she's asleep?",
    "What does the thermostat say?",
    "What's the gas meter reading?",
    "Does my fitness tracker say I slept well?",
    "Is the smoke alarm beeping?",
    "What's the score in the football match?",  # a score is never a fact
]

KEEP = [
    # the clock's, or "in time" that asks nothing of a state
    "Will I get there in time?",
    "Is it on time?",
    # facts that do not change
    "What is the capital of France?",
    "How hot is the sun?",
    "What is the boiling point of water?",
    "What is the temperature of the sun?",
    "What is the temperature on Mars?",
    "What's the weather like on Mars?",
    "What is the speed of light?",
    "What happened in 1969?",
    "How many legs does a spider have?",
    "Is the earth round?",
    "Is the shop open on Sundays?",
    "What is the difference between weather and climate?",
    # the clock's
    "What time is it right now?",
    "What day is it today?",
    "What year is it now?",
    "What's the date tomorrow?",
    "Is tomorrow the weekend?",
    "Which is it today?",  # the clock's, misheard: nothing is named whose state is asked
    # advice, opinion, identity
    "What should I cook tonight?",
    "What is the best thing to do at home?",
    "What is a good movie to watch tonight?",
    "How do I lock the front door?",
    "How does a thermostat work?",
    "Who is the current president of France?",
    # about the assistant, or the user
    "How are you today?",
    "What do you think of the news?",
    "What is my name?",
    "Which country do I live in?",
    # not a question
    "Tell me a joke.",
    "Set a timer for 5 minutes.",
    "Why is the sky blue?",
    # showing or saying, of nothing of the user's
    "What does a red traffic light show?",
    "How do you say hello in French?",
    "What's the highest score in bowling?",  # a record, not the score now
    "What do you say to someone on their birthday?",
]


@pytest.mark.parametrize("text", DECLINE)
def test_a_question_about_how_things_are_now_is_declined(text: str) -> None:
    assert asks_live_state(text), text
    assert cannot_see(text) == REPLY


@pytest.mark.parametrize("text", KEEP)
def test_facts_the_clock_advice_and_the_assistant_are_not_declined(text: str) -> None:
    assert not asks_live_state(text), text


def _reply(llm: SkillsLlm, text: str) -> str:
    return reply_to(llm, [ChatMessage("user", text)], max_tokens=16)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What time is it right now?", "14"),  # the clock comes first
        ("What is the humidity?", REPLY),
        ("Is the front door locked?", "lights, doors or appliances"),  # capabilities knows this one by name
        ("What is the capital of France?", "Paris"),
        ("Who wrote Hamlet?", "the model"),
    ],
)
def test_it_runs_after_every_skill_and_before_the_model(text: str, expected: str) -> None:
    llm = SkillsLlm(FakeLlm(replies=("the model",)), clock=lambda: datetime(2026, 12, 5, 14, 30))
    assert expected in _reply(llm, text)
