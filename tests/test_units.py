"""Unit conversion skill. The cases are phrased unlike the quality set's items (written after them), so that
the set does not grade a skill fitted to it."""

from __future__ import annotations

import pytest

from voice.skills import _clean
from voice.units import convert

CASES = [
    ("How many feet are in a mile?", "There are 5280 feet in a mile."),
    ("how many ounces in a pound", "There are 16 ounces in a pound."),
    ("What is 5 pounds in kilograms?", "5 pounds is 2.268 kilograms."),
    ("Convert 10 miles to kilometers.", "10 miles is 16.0934 kilometres."),
    ("What is 3 feet in metres?", "3 feet is 0.9144 metres."),
    ("How many millilitres are in two litres?", "There are 2000 millilitres in 2 litres."),
    ("how many seconds are there in an hour", "There are 3600 seconds in an hour."),
    ("How many days is three weeks?", "There are 21 days in 3 weeks."),
    ("What's 98.6 degrees Fahrenheit in Celsius?", "98.6 degrees Fahrenheit is 37 degrees Celsius."),
    ("Convert 0 degrees Celsius to Fahrenheit.", "0 degrees Celsius is 32 degrees Fahrenheit."),
    ("How many hours are in the day?", "There are 24 hours in a day."),  # "the" is one, in this form only
    ("How many grams are in a mile?", "Miles measure length and grams measure mass: they don't convert."),
    # Not conversions: left to the other skills or the LLM.
    ("How many people live in Paris?", None),
    ("How many weeks are in a year?", None),  # a year is not a fixed number of weeks: the LLM answers
    ("What is the capital of France?", None),
    ("How many metres are in a metre?", None),
    ("What is the mile in feet?", None),
]


@pytest.mark.parametrize(("question", "reply"), CASES)
def test_conversions(question: str, reply: str | None) -> None:
    assert convert(_clean(question)) == reply
