"""The area of a rectangle from its two sides (:mod:`voice.skills.areas`), said in the turn or told before; and a
part of a group told before (:func:`voice.skills.ratios.follow_up`)."""

from __future__ import annotations

import pytest

from voice.skills import areas, ratios
from voice.skills.answer import clean


@pytest.mark.parametrize(
    ("turn", "reply"),
    [
        ("my room is four metres by three metres, what's the area?", "4 by 3 metres is 12 square metres."),
        ("how many square metres is a room four point two by three metres", "4.2 by 3 metres is 12.6 square metres."),
        ("the bed is three metres long and one point two metres wide what's the area so I can order topsoil",
         "3 by 1.2 metres is 3.6 square metres."),
        ("the patio is 12 feet by 10, how many square feet is it?", "12 by 10 feet is 120 square feet."),
        # Not: no word of area, two units, two pairs, no unit at all.
        ("my room is four metres by three metres, is that big?", None),
        ("the room is 4 metres by 10 feet, what's the area?", None),
        ("one room is 4 by 3 metres and the other 5 by 4 metres, what's the area?", None),
        ("it's 4 by 3, what's the area?", None),
    ],
)  # fmt: skip
def test_the_area_of_two_sides_said_in_the_turn(turn: str, reply: str | None) -> None:
    assert areas.answer(clean(turn)) == reply


@pytest.mark.parametrize(
    ("earlier", "question", "reply"),
    [
        (["My bedroom is four metres by three point five metres."], "What's the floor area then?",
         "4 by 3.5 metres is 14 square metres."),
        (["The pond will be 3 metres long and 2 metres wide.", "What time is it?"], "How many square metres is that?",
         "3 by 2 metres is 6 square metres."),
        (["My bedroom is 4 metres by 3 metres."], "What's the area of a 5 by 4 metre room?", None),  # its own sides
        (["My bedroom is 4 metres long."], "What's the area?", None),  # one side told
        (["The kitchen is 4 metres by 3 metres."], "What's the area of the kitchen?",
         "4 by 3 metres is 12 square metres."),
        (["The kitchen is 4 metres by 3 metres."], "What's the area of France?", None),  # not the thing told
    ],
)  # fmt: skip
def test_the_area_of_two_sides_told_before(earlier: list[str], question: str, reply: str | None) -> None:
    assert areas.follow_up(clean(question), earlier) == reply


@pytest.mark.parametrize(
    ("earlier", "question", "reply"),
    [
        (["There are 42 people in my tour group."], "If half of them go to the museum how many is that?",
         "Half of 42 people is 21."),
        (["I've got forty eight eggs."], "If I use a quarter of them, how many is that?",
         "A quarter of 48 eggs is 12."),
        # Not: the rest asked for, two amounts told, another number in the question.
        (["There are 30 of us."], "If a third of them go, how many are left?", None),
        (["There are 28 of us and 4 teachers."], "If half of them go, how many is that?", None),
        (["There are 28 of us."], "If half of them bring 2 friends, how many is that?", None),
    ],
)  # fmt: skip
def test_a_part_of_a_group_told_before(earlier: list[str], question: str, reply: str | None) -> None:
    assert ratios.follow_up(clean(question), earlier) == reply
