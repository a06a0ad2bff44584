"""Requests the assistant cannot carry out: matched by intent, with phrasings that are not in the quality set.

Both directions are checked: requests that need a missing ability get the honest reply naming it, and questions
*about* the same things go to the LLM. A pattern that only knew the quality set's sentences fails here.
"""

from __future__ import annotations

import pytest

from voice.bench.quality.question_set import REFUSAL
from voice.skills.capabilities import LIMITS, cannot, limit_for

NEEDS = [
    ("Switch the kitchen lights off, please.", "devices"),
    ("Could you dim the bedroom lamp?", "devices"),
    ("Hey, turn off all the lights.", "devices"),
    ("Turn the heating up.", "devices"),
    ("Open the garage.", "devices"),
    ("Unlock the back door.", "devices"),
    ("Did I leave the oven on?", "devices"),
    ("Are the windows closed?", "devices"),
    ("Set the air conditioning to 19.", "devices"),
    ("Can you bump the thermostat up to 22 degrees?", "devices"),
    ("Crank up the heating.", "devices"),
    ("Mute the TV.", "devices"),
    ("How warm is it in here?", "sensors"),
    ("What's the humidity in the bedroom?", "sensors"),
    ("Is it going to snow this weekend?", "weather"),
    ("Do I need an umbrella?", "weather"),
    ("How's the weather in London?", "weather"),
    ("What will the temperature be tomorrow?", "weather"),
    ("Any news this morning?", "news"),
    ("Read me the latest headlines.", "news"),
    ("How much is a Tesla share price worth?", "news"),
    ("Who won the match last night?", "news"),
    ("Play Bohemian Rhapsody by Queen.", "media"),
    ("Can you play the radio?", "media"),
    ("Next song.", "media"),
    ("Text my sister that I'm late.", "phone"),
    ("Please call Dave.", "phone"),
    ("Send an email to my boss.", "phone"),
    ("Read me my newest messages.", "phone"),  # 2026-12-04, after the third held-out set
    ("Check my inbox.", "phone"),
    ("Do I have any new emails?", "phone"),
    ("called my mother.", "phone"),  # tiny.en's "Call my mother." (main set, spoken, 2026-12-05)
    ("Texted my brother.", "phone"),
    ("Who is winning the Arsenal game?", "news"),
    ("Is there much traffic on the motorway?", "maps"),  # 2026-12-04, after the fourth held-out set
    ("Navigate to the nearest petrol station.", "maps"),
    ("How far is it to walk to the station?", "maps"),
    ("What was the final score in the match yesterday?", "news"),
    ("Open Spotify.", "apps"),
    ("Launch the terminal.", "apps"),
    ("Search the web for pizza places.", "apps"),
    ("Remind me to buy milk.", "calendar"),
    ("Wake me up at seven.", "calendar"),
    ("Do I have any meetings on Friday?", "calendar"),
    ("Add eggs to my shopping list.", "calendar"),
    ("Order me a pizza.", "calendar"),
    ("Show me the doorbell camera.", "camera"),
    ("Who's at the door?", "camera"),
    ("Can you see me?", "camera"),
]

FOR_THE_LLM = [
    "How does a thermostat work?",
    "Can you bump up my mood with a joke?",
    "Why does it rain?",
    "What causes thunderstorms?",
    "What is the temperature on the surface of Venus?",
    "What is a weather front?",
    "Who invented the telephone?",
    "I called my mother.",
    "Called my mother yesterday, she says hello.",
    "What is it called?",
    "Who invented the camera?",
    "What is fake news?",
    "How do you play chess?",
    "Can you play twenty questions with me?",
    "Let's play a game.",
    "In what order are the planets?",
    "What is the schedule of the Tour de France?",
    "Tell me a joke about lamps.",
    "What is the capital of Spain?",
    "How many minutes are in two hours?",
    "Set a timer for five minutes.",
    "What time is it?",
    "Thanks, that's all.",
    "Explain how a garage door opener works.",
    "How do I write a good email?",
    "What is the highest score in bowling?",
    "Who won the first World Cup?",
    "What causes traffic jams?",
    "How does a traffic light work?",
    "What's the way to say hello in French?",
    "Give me directions to make a paper plane.",
]


@pytest.mark.parametrize(("request_text", "ability"), NEEDS)
def test_a_request_for_a_missing_ability_is_refused_honestly(request_text: str, ability: str) -> None:
    found = limit_for(request_text)
    assert found is not None and found.name == ability
    reply = cannot(request_text)
    assert reply is not None and REFUSAL.search(reply)  # the quality bench's own honest-refusal check


@pytest.mark.parametrize("question", FOR_THE_LLM)
def test_a_question_about_the_same_things_goes_to_the_llm(question: str) -> None:
    assert limit_for(question) is None


def test_every_limit_says_what_it_cannot_do_and_is_tested() -> None:
    assert {lim.name for lim in LIMITS} == {ability for _, ability in NEEDS}
    assert all(REFUSAL.search(lim.reply) for lim in LIMITS)


def test_the_skills_layer_refuses_before_the_llm_and_passes_the_rest_on() -> None:
    import threading

    from voice.conversation.skills_llm import SkillsLlm
    from voice.runtime.fakes import FakeLlm
    from voice.runtime.model_api import ChatMessage, PromptInfo, TextDelta

    llm = SkillsLlm(FakeLlm(replies=("The lamp is on.", "A thermostat measures heat.")))
    sys = ChatMessage("system", "S")

    def ask(text: str) -> list[object]:
        return list(llm.generate([sys, ChatMessage("user", text)], max_tokens=9, cancel=threading.Event()))

    refused = ask("Turn on the living room lamp.")
    assert refused[0] == PromptInfo(0, 0, 0) and refused[1:] == [TextDelta(LIMITS[0].reply)]
    passed = "".join(e.text for e in ask("How does a thermostat work?") if isinstance(e, TextDelta))
    assert "The lamp is on." in passed and llm.answered == 1  # the model's first reply, unused until now
