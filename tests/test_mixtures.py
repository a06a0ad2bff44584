"""Mixtures said in parts (:mod:`voice.skills.mixtures`): turns it must read, with the reply each must give, and
turns it must leave."""

from __future__ import annotations

import pytest

from voice.skills import mixtures
from voice.skills.answer import clean


@pytest.mark.parametrize(
    ("turn", "reply"),
    [
        ("this colour mixes one part dye to three parts developer so if I use forty mils of dye how much developer",
         "1 part dye to 3 parts developer: 40 mils of dye takes 120 mils of developer."),
        ("it's two parts flour to one part butter and I've got 300 grams of flour, how much butter?",
         "2 parts flour to 1 part butter: 300 grams of flour takes 150 grams of butter."),
        ("mix one part dye to three parts developer and I need two hundred millilitres in total, how much dye?",
         "1 part dye to 3 parts developer: 200 millilitres in all has 50 millilitres of dye."),
        ("the squash is one part cordial to four parts water and the jug holds a litre, how much cordial do I need?",
         "1 part cordial to 4 parts water: 1 litre in all has 0.2 litres of cordial."),
    ],
)  # fmt: skip
def test_a_part_of_a_mixture(turn: str, reply: str) -> None:
    assert mixtures.answer(clean(turn)) == reply


@pytest.mark.parametrize(
    "turn",
    [
        "one part dye to three parts developer, how much dye?",  # no amount
        "two parts gin to one part tonic with 50 ml of gin and 20 ml of lime, how much tonic?",  # two amounts
        # the amount's thing was not heard, and nothing says it is the whole: not 40 in all (the 37th set, spoken)
        "this color mixes one part nine to three parts developer so if I use 40 mils of how much developer is that",
        "one part dye to three parts developer and 40 mils of dye, how much shampoo?",  # neither part asked
    ],
)
def test_turns_that_are_not_a_mixture_to_read(turn: str) -> None:
    assert mixtures.answer(clean(turn)) is None
