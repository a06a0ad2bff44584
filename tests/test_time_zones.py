"""The time in another place (:mod:`voice.skills.time_zones`) and a moment some span from now
(:mod:`voice.skills.clock_offsets`): tables of questions with the reply each must give at a fixed moment, and
questions neither may take (the clock skill's, or not about a moment)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from voice.skills import clock_offsets, time_zones
from voice.skills.answer import answer, clean

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)  # a Monday; no zone below changes its clocks in December


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("What time is it in Tokyo?", "In Tokyo it's 19:00 on Monday."),  # a city that names a zone
        ("what's the time in new york right now", "In New York it's 05:00 on Monday."),
        ("What time is it in Auckland?", "In Auckland it's 23:00 on Monday."),
        ("what time is it in honolulu", "In Honolulu it's 00:00 on Monday."),
        ("What time is it in Japan?", "In Japan it's 19:00 on Monday."),  # a country with one zone
        ("what time is it in the uk", "In the United Kingdom it's 10:00 on Monday."),  # its names as people say them
        ("What time is it in India?", "In India it's 15:30 on Monday."),
        ("What time is it in America?", "The United States has more than one time zone: ask me about a city there."),
        ("what time is it in narnia", "I don't know the time zone of Narnia, so I can't tell you the time there."),
        # Not a place: left to the other skills.
        ("what time is it in three hours", None),
        ("what time is it in here", None),
        ("what time is it in the morning there", None),
        ("what time is it", None),
    ],
)
def test_the_time_in_a_place(question: str, reply: str | None) -> None:
    assert time_zones.answer(clean(question), NOW) == reply


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("What time will it be in 45 minutes?", "In 45 minutes it will be 10:45."),
        ("what time is it in three hours", "In 3 hours it will be 13:00."),
        ("what time will it be in an hour and a half", "In 1 hour and 30 minutes it will be 11:30."),
        ("what time will it be in twenty hours", "In 20 hours it will be 06:00 on Tuesday."),
        ("What time was it three hours ago?", "3 hours ago it was 07:00."),
        ("what day will it be in ten days", "In 10 days it will be Thursday."),
        ("what's the date two weeks from today", "In 2 weeks it will be Monday, 21 December 2026."),
        ("what day is it in a fortnight", "In a fortnight it will be Monday."),
        ("what day was it three days ago", "3 days ago it was Friday."),
        ("what's the date in three months", "In 3 months it will be Sunday, 7 March 2027."),
        ("what's the date in a year", "In a year it will be Tuesday, 7 December 2027."),
        # Not a span in numbers and units: left alone.
        ("what time is it in tokyo", None),
        ("what day is it in the morning", None),
        ("what's the date in half a month", None),  # not a whole month
        ("what time is it", None),
    ],
)
def test_a_moment_some_span_from_now(question: str, reply: str | None) -> None:
    assert clock_offsets.answer(clean(question), NOW) == reply


def test_the_end_of_a_month_a_month_on_is_the_next_months_last_day() -> None:
    then = datetime(2027, 1, 31, 9, 0, tzinfo=UTC)
    assert clock_offsets.answer("what's the date in a month", then) == "In a month it will be Sunday, 28 February 2027."


@pytest.mark.parametrize(
    "question",
    ["what time is it in three hours", "what time is it in tokyo", "what day is it in a fortnight",
     "what time is it in narnia"],
)  # fmt: skip
def test_the_clock_skill_does_not_answer_the_time_here_and_now_for_another_moment_or_place(question: str) -> None:
    """Before these skills, each got the time or the day here and now: confidently wrong."""
    reply = answer(question, NOW)
    assert reply is not None and reply not in ("It's 10:00.", "Today is Monday.")
