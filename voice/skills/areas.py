"""The area of a rectangle from its two sides: "my room is four metres by three metres, what's the area?", "the pond
will be three metres long and two metres wide" … "how many square metres is that?".

SmolLM2-135M guessed these (a lead the thirty-sixth to thirty-ninth held-out sets' first runs showed). Two lengths
of one unit said as "A by B" (or "A <unit> long and B <unit> wide"), in the turn or in the user's latest earlier
statement that says two, and a question that asks for an area ("area", "square <unit>", "how big is it in
square…") → A times B in square units. A length with no unit of its own takes the other's ("4 by 3 metres"). Other
units, three lengths, or no word of area: left alone. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from voice.skills.numbers import NUMBER_PATTERN, parse_number, say_number
from voice.skills.turn_parts import numbers_in
from voice.skills.word_classes import FUNCTION_WORDS, singular, words_in

_LENGTHS = {
    "metre": "metres", "metres": "metres", "meter": "metres", "meters": "metres", "m": "metres",
    "foot": "feet", "feet": "feet", "ft": "feet", "centimetre": "centimetres", "centimetres": "centimetres",
    "centimeter": "centimetres", "centimeters": "centimetres", "cm": "centimetres", "inch": "inches",
    "inches": "inches", "yard": "yards", "yards": "yards", "kilometre": "kilometres", "kilometres": "kilometres",
    "mile": "miles", "miles": "miles",
}  # fmt: skip
_UNIT = "|".join(sorted(_LENGTHS, key=len, reverse=True))
_SIDES = re.compile(
    rf"\b(?P<a>{NUMBER_PATTERN})(?: (?P<ua>{_UNIT}))?(?: long| wide)? (?:by|x|times) (?P<b>{NUMBER_PATTERN})"
    rf"(?: (?P<ub>{_UNIT}))?\b"
    rf"|\b(?P<a_>{NUMBER_PATTERN}) (?P<ua_>{_UNIT}) (?:long|wide) and (?P<b_>{NUMBER_PATTERN}) (?P<ub_>{_UNIT})"
    r" (?:wide|long|deep)\b"
)
_OF_A_THING = re.compile(r"\b(?:area|square [a-z]+) (?:of|in) (?P<thing>[a-z' ]+?)(?: then| again| now)?$")
_ASKS_AREA = re.compile(rf"\b(?:area|square (?:{_UNIT})|floor space|how big is (?:it|that|the [a-z]+))\b")


def _sides(text: str) -> tuple[float, float, str] | None:
    """The two sides ``text`` says, and their unit (as the reply says it); None unless exactly one pair of one unit."""
    found = list(_SIDES.finditer(text))
    if len(found) != 1:
        return None
    m = found[0]
    a, b = parse_number(m["a"] or m["a_"]), parse_number(m["b"] or m["b_"])
    units = {_LENGTHS[u] for u in (m["ua"] or m["ua_"], m["ub"] or m["ub_"]) if u}
    if a is None or b is None or len(units) != 1 or a <= 0 or b <= 0:
        return None
    return a, b, units.pop()


def _area(a: float, b: float, unit: str) -> str:
    return f"{say_number(a)} by {say_number(b)} {unit} is {say_number(round(a * b, 4))} square {unit}."


def answer(t: str) -> str | None:
    """The area asked in ``t`` (a cleaned transcript) of the two sides it says, else None."""
    if not _ASKS_AREA.search(t) or (sides := _sides(t)) is None:
        return None
    return _area(*sides)


def follow_up(t: str, earlier: Sequence[str]) -> str | None:
    """The area asked in ``t`` (cleaned) of the two sides the user's latest earlier statement that says two told,
    when ``t`` says no number of its own, and that statement says every word of a thing ``t`` names ("the area of
    the kitchen"); else None."""
    if not _ASKS_AREA.search(t) or numbers_in(t):
        return None
    named = _OF_A_THING.search(t)
    thing = {singular(w) for w in words_in(named["thing"])} - FUNCTION_WORDS if named else set()
    for turn in reversed(earlier):
        if (sides := _sides(turn.lower())) is not None:
            # "what's the area of France" is not asked of the kitchen told: every word of a thing named is said
            return _area(*sides) if thing <= {singular(w) for w in words_in(turn)} else None
    return None
