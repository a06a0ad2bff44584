"""An amount per one of another (:mod:`voice.skills.unit_rates`): the price of one of several, and a speed; turns
it must read, with the reply each must give, and turns it must leave."""

from __future__ import annotations

import pytest

from voice.skills import unit_rates
from voice.skills.answer import clean


@pytest.mark.parametrize(
    ("turn", "reply"),
    [
        ("we filled up with forty five litres and it came to sixty three euros so how much was that per litre",
         "63 euros for 45 litres is 1 euro and 40 cents a litre."),
        ("forty five litres cost sixty three euros, how much is one litre?",
         "63 euros for 45 litres is 1 euro and 40 cents a litre."),
        ("three bags cost two pounds fifty, how much is each bag?",
         "2 pounds and 50 pence for 3 bags is about 83 pence a bag."),  # rounded: "about"
        ("it's three for two pounds fifty, how much is one?", "2 pounds and 50 pence for 3 is about 83 pence each."),
        ("a dozen eggs cost three dollars, how much is each egg?", "3 dollars for 12 eggs is 25 cents an egg."),
        ("four coffees came to eleven pounds twenty, how much each?",
         "11 pounds and 20 pence for 4 coffees is 2 pounds and 80 pence each."),
        ("we drove eighty kilometres in two and a half hours, what was our average speed?",
         "80 kilometres in 2.5 hours is 32 kilometres an hour."),
        ("I ran ten kilometres in fifty minutes, how fast was that?",
         "10 kilometres in 50 minutes is 12 kilometres an hour."),
        ("we did 100 miles in three hours, what was our average speed?",
         "100 miles in 3 hours is about 33.3 miles an hour."),
        # Whisper's "100 and 32" is one number, 132 (not 32 dollars for 100)
        ("the bill came to 100 and 32 dollars and there were six of us, how much does each person pay",
         "132 dollars for 6 is 22 dollars a person."),
    ],
)  # fmt: skip
def test_an_amount_per_one_of_another(turn: str, reply: str) -> None:
    assert unit_rates.answer(clean(turn)) == reply


@pytest.mark.parametrize(
    "turn",
    [
        "how much is a litre of milk",  # one amount: a price to look up, not a sum
        "three bags cost two pounds fifty, how much per litre?",  # the count is of another thing
        "two coffees and a cake came to 9 pounds and 3 pounds, how much each?",  # two amounts of money
        "we drove 80 kilometres and 20 miles, what was our average speed?",  # no time
        "we left at 9 o'clock and drove 80 kilometres, how fast was that?",  # a time of day is the clock's
    ],
)
def test_turns_that_are_not_a_rate(turn: str) -> None:
    assert unit_rates.answer(clean(turn)) is None
