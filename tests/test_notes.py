"""What the user asked the assistant to remember is said back when a question is about it, and only then
(voice.skills.notes)."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest

from tests.skills_chat import converse
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage, TextDelta
from voice.skills.notes import answer

TOLD = [
    "Please remember that my passport is in the blue folder.",
    "What is the capital of Peru?",
    "Don't forget that we are meeting Ana at the station.",
    "Keep in mind that I left the car at the north gate.",
]


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("Where is my passport?", "You told me your passport is in the blue folder."),
        ("Where did I put my passport?", "You told me your passport is in the blue folder."),
        ("Who are we meeting?", "You told me you are meeting Ana at the station."),
        ("Where did I leave the car?", "You told me you left the car at the north gate."),
        ("Where are my glasses?", None),  # told nothing about them: the LLM answers
        ("What is the capital of Spain?", None),  # not about the user
    ],
)
def test_a_question_about_a_note_gets_it_back_in_the_assistants_words(question: str, reply: str | None) -> None:
    assert answer(question, TOLD) == reply


@pytest.mark.parametrize(
    ("statement", "reply"),
    [
        ("Remember that I parked on level 2.", "OK, I'll remember that you parked on level 2."),
        ("remember my bike lock code is 1234", "OK, I'll remember that your bike lock code is 1234."),
        ("Just so you remember, I parked on level four.", "OK, I'll remember that you parked on level four."),
        ("So you know, my keys are in the drawer.", "OK, I'll remember that your keys are in the drawer."),
        ("So you know, the shop closes at six.", None),  # not about the user
        ("Remember I parked on level 4, spot 8-12?", "OK, I'll remember that you parked on level 4, spot 8-12."),
        ("Remember to buy milk.", None),  # a reminder, not a note: the calendar refusal or the LLM
        ("I remember that day well.", None),
        ("Do you remember me?", None),
    ],
)
def test_a_note_is_acknowledged(statement: str, reply: str | None) -> None:
    assert answer(statement, []) == reply


def test_a_plain_statement_about_the_user_is_a_note_but_not_acknowledged() -> None:
    """"I parked on level three, row B." (no "remember"): the LLM replies to it, and it is found again later."""
    told = ["I left my umbrella at the office.", "What is the capital of Peru?"]
    assert answer(told[0], []) is None
    assert answer("Where did I leave my umbrella?", told) == "You told me you left your umbrella at the office."
    assert answer("Did I leave the oven on?", told) is None  # nothing about an oven was said
    assert answer("I'm bored.", []) is None
    # Only a question that recalls what was said searches plain statements: a how-to is a new question.
    assert answer("How do I bake a cake?", ["I want to bake a cake."]) is None
    assert answer("What do I need to bake a cake?", ["I want to bake a cake."]) is None
    recalled = answer("What did I say I wanted to bake?", ["I want to bake a cake."])
    assert recalled == "You told me you want to bake a cake."
    # A fact of voice.skills.personal_facts is not a note: the question needs knowledge on top of it (the LLM's).
    assert answer("Which country do I live in?", ["I live in Lisbon."]) is None
    assert answer("Which country does my sister live in?", ["My sister lives in Paris."]) is None
    # …but a question that asks what was said gets it back, fact or not.
    said = answer("What did I say my brother was called?", ["my brother's name is tomas"])
    assert said == "You told me your brother's name is tomas."
    assert answer("What year did I say I was born?", ["I was born in 1986."]) == "You told me you were born in 1986."


@pytest.mark.parametrize(
    ("told", "question", "reply"),
    [
        # A question about something of the user's whose every word they said of it finds that statement.
        ("My dentist appointment is on Thursday at 3.", "When's my dentist appointment?",
         "You told me your dentist appointment is on Thursday at 3."),
        ("My passport expires in March.", "When does my passport expire?",
         "You told me your passport expires in March."),
        ("My locker number is 417.", "What was my locker number?", "You told me your locker number is 417."),
        # A request to say it back is a recall.
        ("My membership number is 7732.", "Can you tell me my membership number?",
         "You told me your membership number is 7732."),
        ("I parked on level 3.", "Do you remember where I parked?", "You told me you parked on level 3."),
        ("My student number is 20418.", "Can you repeat my student number?",
         "You told me your student number is 20418."),
        ("My PIN is 4471.", "Say my PIN back to me.", "You told me your PIN is 4471."),
        ("My messages are from Tom.", "Read my messages.", None),  # a request, not a recall
        # "How many/much … did I say": a recall, as "what did I say" is; without "say" it asks for a sum.
        ("I've got 11 parcels left on the van.", "How many parcels did I say I had left?",
         "You told me you've got 11 parcels left on the van."),
        ("I sold 30 jars of honey.", "How many jars did I sell?", None),
        # A word of the question the statement does not say: the question asks more than was told.
        ("My car is red.", "What colour is my car?", None),
        ("My son is tall.", "How old is my son?", None),
        # …unless it asks a form of answer the statement gives (a number, a time, a day), or names the kind of
        # answer ("which station") beside two words said.
        ("My son is 7.", "How old is my son?", "You told me your son is 7."),
        ("My seat on the train is 42C.", "What was my seat number again?",
         "You told me your seat on the train is 42C."),
        ("My train leaves from Paddington.", "Which station does my train leave from?",
         "You told me your train leaves from Paddington."),
        ("Our ship docks in Lisbon on Thursday.", "Which day do we dock in Lisbon?",
         "You told me your ship docks in Lisbon on Thursday."),
        ("My car is fast.", "What speed does my car do?", None),  # one word said beside the kind asked
        ("My son has 2 cats.", "How old is my son?", None),  # a number, but not an age
        ("My flight leaves tomorrow from gate 5.", "What time does my flight leave?", None),  # not a time of day
        ("My flight leaves at 6.40 tomorrow.", "What time does my flight leave?",
         "You told me your flight leaves at 6.40 tomorrow."),
        # A question of what the user does is about the user, as one with "my" is.
        ("I'm meeting Sven at the fountain.", "Where am I meeting Sven?",
         "You told me you're meeting Sven at the fountain."),
        ("My train goes from platform 11.", "Which platform am I going from?",
         "You told me your train goes from platform 11."),
        ("I want to buy a bike.", "Where can I buy a bike?", None),  # advice, not what was said
        ("My dentist appointment is on Thursday.", "Can you move my dentist appointment?", None),  # not a recall
    ],
)  # fmt: skip
def test_a_question_about_something_of_the_users_finds_what_they_said_of_it(
    told: str, question: str, reply: str | None
) -> None:
    assert answer(question, [told, "What is the capital of Peru?"]) == reply


def test_the_wrapper_finds_a_note_behind_an_interjection() -> None:
    llm = SkillsLlm(FakeLlm(replies=("From the model.",)), clock=lambda: datetime(2026, 12, 4, 12))
    messages = [
        ChatMessage("user", "I'm allergic to peanuts, just so you know."),
        ChatMessage("assistant", "OK."),
        ChatMessage("user", "Can you suggest a quick snack?"),
        ChatMessage("assistant", "Try an apple."),
        ChatMessage("user", "Wait, what did I say I was allergic to?"),
    ]
    events = llm.generate(messages, max_tokens=16, cancel=threading.Event())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == (
        "You told me you're allergic to peanuts, just so you know."
    )


def test_the_latest_note_on_a_thing_wins_and_the_wrapper_answers_it() -> None:
    said = ["Remember that I parked on level 2.", "Remember that I parked on level 5 now.", "Where did I park?"]
    llm = SkillsLlm(FakeLlm(replies=("From the model.",)), clock=lambda: datetime(2026, 12, 4, 12))
    _, replies = converse(llm, said)
    assert replies[-1] == "You told me you parked on level 5 now."


@pytest.mark.parametrize(
    ("told", "question", "reply"),
    [
        # A note about a thing, not the user ("remember the spare key is …"): kept as asked, and found again.
        ("Remember the spare key is taped under the mailbox.", "Where did I say the spare key is?",
         "You told me the spare key is taped under the mailbox."),
        ("Note that the wifi password is blue tiger 42.", "What did I say the wifi password was?",
         "You told me the wifi password is blue tiger 42."),
        # A question of where or when a thing is finds the note that names it, not one where it is only a place.
        ("Remember I put the passports in the top drawer.", "Where are the passports?",
         "You told me you put the passports in the top drawer."),
        ("Remember the spare key is taped under the mailbox.", "Where is the spare key again?",
         "You told me the spare key is taped under the mailbox."),
        ("Remember the spare key is taped under the mailbox.", "Where is the mailbox?", None),
        ("Remember we meet Ana at the station.", "Where is the station?", None),
        ("I put the passports in the top drawer.", "Where are the passports?", None),  # not asked to be kept
        # A statement of a thing of the user's, whatever it opens with.
        ("The gate code at my mum's building is 4419.", "What's the gate code at my mum's building?",
         "You told me the gate code at your mum's building is 4419."),
        # Not a note (no "my"), but a statement of the thing asked for: said back as worded (the fortieth set).
        ("The gate code at the office is 4419.", "What's the gate code at my office?",
         "You told me the gate code at the office is 4419."),
    ],
)  # fmt: skip
def test_a_note_of_a_thing_is_found_by_a_question_that_names_it(told: str, question: str, reply: str | None) -> None:
    assert answer(question, [told, "What is the capital of Peru?"]) == reply


def test_a_note_of_a_thing_is_acknowledged_but_a_thing_that_does_something_is_not() -> None:
    said = answer("Remember the spare key is under the blue flowerpot.", [])
    assert said == "OK, I'll remember that the spare key is under the blue flowerpot."
    assert answer("So you know, the shop closes at six.", []) is None


@pytest.mark.parametrize(
    ("told", "question", "reply"),
    [
        # A statement of a thing, about the user or not, is said back to a question of that thing.
        ("The float in the till this morning was 150 pounds.", "Right, how much was the float again?",
         "You told me the float in the till this morning was 150 pounds."),
        ("The gate code for the farm is 2580.", "What was that gate code?",
         "You told me the gate code for the farm is 2580."),
        ("Make a note, the reception starts at half six.", "When does the reception start?",
         "You told me the reception starts at half six."),
        # Asked as the user's own, or what time it does it, or told after "remember that" (the fortieth set).
        ("The locker code at the running club is 4719.", "Now what's my locker code?",
         "You told me the locker code at the running club is 4719."),
        ("Remember that the quiz starts at 815.", "What time does the quiz start?",
         "You told me the quiz starts at 815."),
        # …only when the thing is what the statement is about, not a place in it or another thing.
        ("We meet at the station at 5.", "Where is the station?", None),
        ("The gate code for the farm is 2580.", "What was the door code?", None),
        ("The recipe says 200 grams of flour.", "What is the recipe?", None),
        ("The float was 150 pounds?", "How much was the float?", None),  # a question, not a statement
        ("The manager is on holiday.", "Who is the manager?", None),  # said of the thing, not who it is
        # Asked as what the user said it was: about the user only by "did I say".
        ("The boiler pressure was 1.2 bar when I got here.", "What did I say the boiler pressure was?",
         "You told me the boiler pressure was 1.2 bar when you got here."),
        ("The living room is 4.5 metres wide.", "How wide did I say the living room is?",
         "You told me the living room is 4.5 metres wide."),
        ("The boiler pressure was 1.2 bar.", "What did I say the tyre pressure was?", None),
    ],
)  # fmt: skip
def test_a_statement_of_a_thing_is_said_back_to_a_question_of_it(told: str, question: str, reply: str | None) -> None:
    assert answer(question, [told, "What is the capital of Peru?"]) == reply
