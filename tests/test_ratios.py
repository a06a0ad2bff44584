"""Ratios over the amounts said (:mod:`voice.skills.ratios`): how many groups an amount makes, and an amount scaled,
in one turn or from the user's earlier statement; near-misses left to the others."""

from __future__ import annotations

import pytest

from voice.skills import ratios
from voice.skills.answer import clean

#: (turn, what the reply must end with)
IN_ONE_TURN = (
    ("I've got 72 tulip bulbs and want them in rows of eight, how many rows is that?", "is 9 rows."),
    ("the roll is ten metres long and each strip needs 2.5 metres, how many strips can I get?", "is 4 strips."),
    ("each box holds 12 and I have 50 eggs, how many boxes do I need?", "so 5 boxes."),  # needed: rounded up
    ("I have 30 kids and want groups of four, how many groups can I make?", "so 7 groups."),  # made: rounded down
    ("there are 45 chairs in rows of 10, how many rows?", "is 4.5."),  # no verb to round by
    ("I baked 48 cookies and want to put 6 in each bag, how many bags do I need?", "is 8 bags."),  # "each" after
    ("one litre covers 12 square metres, how many litres for 60 square metres?", "5 litres for 60 square metres."),
    ("it's 30 mils of dye for every 60 of developer, how much dye for 150 of developer?", "75 mils for 150."),
    # "one tin" names the thing the amount after it is of; "a day" says the amount is of one day asked about.
    ("one tin covers twelve square metres and the wall is 48 square metres, how many tins do I need?", "is 4 tins."),
    ("the bag is 2000 grams and she eats 50 grams a day, how many days will it last?", "is 40 days."),
)

#: turns it must not read
LEAVES = (
    "I have 3 cats and 2 dogs, how many pets?",  # nothing said of one pet
    "How many metres is 10 feet?",  # a conversion
    "each box holds 12 and I have 50 and 3 more, how many boxes do I need?",  # three amounts
    "each box holds 0 and I have 50, how many boxes do I need?",  # nothing to divide by
    "How many legs does a spider have?",
    "one litre covers 12 square metres, how many litres for 60 square feet?",  # another unit
    "The pasta needs 12 minutes for 4 people, how many minutes at 6 o'clock?",  # the clock's
    "the bag is 2000 grams and she eats 50 grams a day, how many weeks will it last?",  # "a day" is not a week
    # "a week" is the half kilo's, which the quantities do not read: not 7 divided by 4 (the twenty-fifth set)
    "she puts on half a kilo a week and she's four kilos now, how many weeks until she's seven kilos",
)


@pytest.mark.parametrize(("turn", "end"), IN_ONE_TURN)
def test_a_ratio_said_in_one_turn_is_read(turn: str, end: str) -> None:
    reply = ratios.answer(clean(turn))
    assert reply is not None and reply.endswith(end), reply


@pytest.mark.parametrize("turn", LEAVES)
def test_near_misses_are_left_to_the_others(turn: str) -> None:
    assert ratios.answer(clean(turn)) is None


def test_an_amount_told_earlier_is_scaled() -> None:
    told = ["The recipe needs 200 grams of flour for four people.", "What's the capital of Peru?"]
    assert ratios.follow_up(clean("How much flour would I need for eight people?"), told) == (
        "200 grams for 4 people is 400 grams for 8 people."
    )
    assert ratios.follow_up(clean("How much flour for eight cakes?"), told) is None  # people, not cakes
    assert ratios.follow_up(clean("How much flour for eight people?"), ["How much flour for 4 people?"]) is None


def test_a_dozen_is_a_number() -> None:
    from voice.skills.numbers import parse_number

    assert [parse_number(s) for s in ("a dozen", "three dozen", "dozen")] == [12.0, 36.0, None]
    reply = ratios.answer(clean("I baked three dozen cookies and each tin holds 9, how many tins do I need?"))
    assert reply == "36 divided by 9 is 4 tins."
