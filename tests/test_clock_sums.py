"""Sums of times of day (:mod:`voice.skills.clock_sums`): turns it must read, with the reply each must give, and
turns it must leave (an amount is never read as a time; a timer is the timers')."""

from __future__ import annotations

from datetime import datetime

import pytest

from voice.skills import clock_sums
from voice.skills.answer import clean

NOW = datetime(2026, 12, 7, 10, 0)


@pytest.mark.parametrize(
    ("turn", "reply"),
    [
        # Between two told times; one said without am or pm is the one under twelve hours on.
        ("the train was meant to come at six fifty and it's now seven twenty five how many minutes late is it",
         "From 06:50 to 07:25 is 35 minutes."),
        ("the shop opens at nine and closes at five thirty, how many hours is it open?",
         "From 09:00 to 17:30 is 8 hours and 30 minutes."),
        ("how long is it from quarter past nine to eleven o'clock", "From 09:15 to 11:00 is 1 hour and 45 minutes."),
        ("the bus came at ten past eight and I got here at eight forty, how long did it take?",
         "From 08:10 to 08:40 is 30 minutes."),
        ("it's now 11:50, how long until midnight?", "From 23:50 to 00:00 is 10 minutes."),
        ("we start at 10 pm and stop at 2 am, how many hours is that?", "From 22:00 to 02:00 is 4 hours."),
        ("If my shift starts at 7 pm and finishes at 730 in the morning how long is that?",  # as Whisper writes it
         "From 19:00 to 07:30 is 12 hours and 30 minutes."),
        # A told time and a span after it.
        ("the train leaves at nine forty and it takes two hours and fifty minutes, what time do we get in?",
         "2 hours and 50 minutes after 09:40 is 12:30."),
        ("if I leave at half past seven and it takes forty five minutes what time will I arrive",
         "45 minutes after 07:30 is 08:15."),
        ("my shift starts at seven pm and it's twelve and a half hours long so what time do I finish",
         "12 hours and 30 minutes after 19:00 is 07:30."),
        ("the film starts at quarter to eight and is two hours long, when will it finish?",
         "2 hours after 07:45 is 09:45."),
        # From now until a time.
        ("how long until five o'clock", "It's 10:00 now: 17:00 is 7 hours away."),
        ("how many minutes until 6 pm?", "It's 10:00 now: 18:00 is 8 hours away."),
        ("how long till half past ten", "It's 10:00 now: 10:30 is 30 minutes away."),
    ],
)  # fmt: skip
def test_sums_of_times_of_day(turn: str, reply: str) -> None:
    assert clock_sums.answer(clean(turn), NOW) == reply


@pytest.mark.parametrize(
    "turn",
    [
        "what time is it",
        "I've got 3 kids and it takes 20 minutes, how long?",  # no time of day
        "the meeting is at ten, how many people are coming?",  # a time, no sum of times
        "how long is left on the timer I set at 6",  # the timers'
        "the pasta needs 12 minutes and I put it on at 6 o'clock, how long is left?",  # the clock now is needed
        "it's two and I've got five more to do, how many is that",  # "it's two" is no time
        "I sold six fifty and bought seven twenty five, how many more is that",  # amounts: no anchor, no clock word
    ],
)
def test_turns_that_are_not_sums_of_times(turn: str) -> None:
    assert clock_sums.answer(clean(turn), NOW) is None
