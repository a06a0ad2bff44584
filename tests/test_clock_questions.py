"""Questions about the present moment are answered exactly however they are put; questions about another moment,
or about a timer, are left to the LLM and the timers."""

from __future__ import annotations

from datetime import datetime

import pytest

from voice.skills.answer import answer as skills_answer
from voice.skills.answer import clean
from voice.skills.clock_questions import answer

NOW = datetime(2026, 12, 4, 17, 20)  # a Friday


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        # the time
        ("What time is it?", "It's 17:20."),
        ("Do you know what time it is?", "It's 17:20."),
        ("What's the exact time?", "It's 17:20."),
        ("Time, please.", "It's 17:20."),
        ("Could you tell me the time right now?", "It's 17:20."),
        ("What is the current time?", "It's 17:20."),
        # the date, also of tomorrow and yesterday
        ("Give me the date, please.", "Today is Friday, 4 December 2026."),
        ("What's today's date?", "Today is Friday, 4 December 2026."),
        ("The date today?", "Today is Friday, 4 December 2026."),
        ("What date is it?", "Today is Friday, 4 December 2026."),
        ("What's the date tomorrow?", "Tomorrow is Saturday, 5 December 2026."),
        ("What was the date yesterday?", "Yesterday was Thursday, 3 December 2026."),
        # the weekday, and yes/no about it
        ("Which day of the week is it?", "Today is Friday."),
        ("Sorry, what day on the week is it today?", "Today is Friday."),  # tiny.en's "on" (sixth set, spoken)
        ("What day is today?", "Today is Friday."),
        ("What day is it tomorrow?", "Tomorrow is Saturday."),
        ("Is today Friday?", "Yes, today is Friday."),
        ("Is it a Saturday?", "No, today is Friday."),
        ("Is tomorrow Sunday?", "No, tomorrow is Saturday."),
        # the month and the year
        ("What year are we in?", "It's 2026."),
        ("Do you know what month we're in?", "It's December."),
        ("Which year is it now?", "It's 2026."),
        ("What's the current month?", "It's December."),
        ("What month is this?", "It's December."),
        # as Whisper sometimes writes them (heard from flite voices)
        ("Which months are we in now?", "It's December."),
        ("Do you know what months were in?", "It's December."),
        ("What month were in?", "It's December."),
        # put otherwise, but about nothing else than the present moment
        ("Got the time?", "It's 17:20."),
        ("How late is it getting?", "It's 17:20."),
        ("What time have you got?", "It's 17:20."),
        ("Today's date, please.", "Today is Friday, 4 December 2026."),
        ("What day of the month is it?", "Today is Friday, 4 December 2026."),
        ("Tell me what day it is.", "Today is Friday."),
        ("Is it the weekend?", "No, today is Friday."),
        ("Is tomorrow the weekend?", "Yes, tomorrow is Saturday."),
        ("Was yesterday a Thursday?", "Yes, yesterday was Thursday."),
        ("Are we in December?", "Yes, it's December."),
        ("Are we in May?", "No, it's December."),
    ],
)
def test_the_present_moment_is_answered_however_it_is_asked(question: str, reply: str) -> None:
    assert answer(clean(question), NOW) == reply
    assert skills_answer(question, NOW) == reply  # and through the skills, which clean the transcript first


@pytest.mark.parametrize(
    "question",
    [
        "What time does the bakery open?",
        "What's the time difference between London and Tokyo?",
        "What year did the war end?",
        "In what year did people first land on the moon?",
        "What day is Christmas this year?",
        "What day of the week was the moon landing?",
        "What's the date of the Battle of Hastings?",
        "Tell me the date you were released.",
        "Update the date on my document.",
        "This month is busy.",
        "How much time is left on the timer?",
        "Set a timer for ten minutes.",
        "How long is left on my timer?",
        # words of the clock, but about something else
        "How are you today?",
        "What are you doing today?",
        "What happened today?",
        "Have a nice day.",
        "Good day!",
        "What year were you made?",
        "What day is good for a meeting?",
        "March.",
        "November tomorrow?",  # a name and a day with no "is it": a fragment ("…in Chicago, November tomorrow?")
        "May I ask you something?",
        "How many days are in a week?",
        "How many months are in a year?",
        "Which months have 31 days?",
        "What months are in winter?",
        "What month were you born in?",
        # a number makes it about something else (Whisper's "What's 15 percent of 80?")
        "Was 15% on May 2.",
        "How late is the bakery open?",
        "Is it 3 in March?",
    ],
)
def test_another_moment_or_a_timer_is_not_answered_with_the_clock(question: str) -> None:
    assert answer(clean(question), NOW) is None
