"""Word problems of ratios: how many groups an amount makes, and an amount scaled to another.

The thirty-first held-out set showed both, answered by SmolLM2-135M with invented sums: "seventy two tulip bulbs
… in neat rows of eight how many rows is that" ("72 * 72 = 5164"), "a roll of wallpaper that's ten metres long and
each strip needs to be two point five metres how many strips", "the recipe needs two hundred grams of flour for four
people" … "how much flour would I need for eight people", "one litre covers twelve square metres how many litres
for sixty". They are read with the quantities of :mod:`voice.skills.word_problems`, by two rules:

- **Groups.** The question asks "how many <things>" of a noun no amount is counted in, and of exactly two amounts of
  one kind, one is said of one such thing ("rows of eight", "each strip needs to be 2.5 metres", "each can covers 40
  square metres", "6 in each bag"; "each", "every", "per", "one", not "a"): the other divided by it. When it does
  not divide, "need" or "buy" rounds up ("4 cans") and "get", "make", "cut", "fill" or "fit" rounds down ("3
  strips"); otherwise the exact quotient is said.
- **Scaling.** The question asks "how much" or "how many" with exactly one amount in it, C, and before it (in the
  turn, or in the user's latest earlier statement that held exactly two) stand A of one thing and B of C's kind
  ("200 grams of flour for 4 people" … "for 8 people"): A times C over B.

Nothing else is read: three amounts for groups, a divisor of zero, units that do not match, or a turn with an
amount said as a fraction ("half a kilo a week"), which the quantities do not read, go on to the LLM.
The reply says what it divided or scaled. Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence

from voice.skills.money_sums import normalize_money
from voice.skills.numbers import fraction_words, parse_fraction, say_number
from voice.skills.word_classes import QUESTION_WORDS, singular, words_in
from voice.skills.word_problems import Quantity, asked_part, quantities, quantity_spans, told_by_clock

_HOW_MANY_THINGS = re.compile(r"\bhow many (?P<x>[a-z]+)\b")
_ROUND_UP = re.compile(r"\b(?:need|needs|buy|get enough|have to)\b")
_ROUND_DOWN = re.compile(r"\b(?:get|make|cut|fill|fit|plant|pack)\b")
_HOW = re.compile(r"\bhow (?:much|many)\b")
_ONE_THING = re.compile(r"\b(?:each|every|per|one) ([a-z]+)\b")
"""Words that say an amount is of one thing: "each strip needs 2.5 metres". Not "a": "half a kilo a week, she's four
kilos" says the week of the half kilo, not of the four (the twenty-fifth set)."""
_ONE_AFTER = re.compile(r"[\w.]+(?: [a-z]+)? (?:(?:in|on|into|for|to) )?(?:each|every|per) ([a-z]+)\b")
"""An amount said of one thing named after it: "6 in each bag", "6 cookies per bag"."""
_UNREAD_PART = re.compile(r"\b(?:half|halves|quarters?|thirds?)\b")
"""An amount said as a fraction, which the quantities do not read: a ratio around it would be missing a term."""
_THINGS_OF = re.compile(r"\b([a-z]+) of $")


def answer(t: str) -> str | None:
    """The reply to a ratio asked with all its amounts in ``t`` (a cleaned transcript), else None."""
    if told_by_clock(t) or _UNREAD_PART.search(t):
        return None
    return _scaled(t, None) or _groups(t)


def follow_up(t: str, earlier: Sequence[str]) -> str | None:
    """The reply to an amount scaled from the user's latest earlier statement with two amounts in it, or a part of
    the one amount it told (:func:`_part_of_told`), else None."""
    if told_by_clock(t):
        return None
    if (m := _PART_OF_THEM.search(t)) is not None:
        return _part_of_told(m, t, earlier)
    if _UNREAD_PART.search(t):
        return None
    told = next((qs for qs in _statements(earlier) if len(qs) == 2), None)
    return _scaled(t, told) if told is not None else None


def _statements(earlier: Sequence[str]) -> Iterator[list[Quantity]]:
    """The quantities of each of the user's earlier statements that said any, newest first (questions passed over)."""
    for turn in reversed(earlier):
        text = re.sub(r"[.!]+$", "", turn.lower().strip())
        if "?" in text or (words_in(text)[:1] and words_in(text)[0] in QUESTION_WORDS):
            continue
        if told := quantities(text):
            yield told


_PART_OF_THEM = re.compile(
    r"\b(?P<part>half|a half|a third|a quarter|two thirds|three quarters|a fifth|a tenth)"
    r" of (?:them|those|us|the [a-z]+)\b"
)
"""A part of a group told before: "if half of them go to the museum, how many is that?"."""
_THE_REST = re.compile(r"\b(?:left|remaining|rest|others|other|stay|staying|stays|don'?t|do not|not)\b")
"""Words that ask for the rest of the group, not the part: "if a third of them go, how many are left?"."""


def _part_of_told(m: re.Match[str], t: str, earlier: Sequence[str]) -> str | None:
    """A part of the one amount the user's latest earlier statement told ("There are 28 of us." … "If half of them
    go, how many is that?"), when ``t`` asks how many and says no other number; else None."""
    part = parse_fraction(m["part"])
    if part is None or not _HOW.search(t) or quantities(t[: m.start()] + t[m.end() :]) or _THE_REST.search(t):
        return None
    told = next(_statements(earlier), None)
    if told is None or len(told) != 1 or told[0].per:
        return None
    said = fraction_words(m["part"])
    return f"{said[:1].upper()}{said[1:]} of {told[0].said()} is {say_number(told[0].value * part)}."


def _groups(t: str) -> str | None:
    asked = _HOW_MANY_THINGS.search(asked_part(t))
    spans = quantity_spans(t)
    if asked is None or spans is None:
        return None
    thing = singular(asked["x"])
    spans = [(q, at) for q, at in spans if not (q.value == 1 and q.unit == thing)]  # "one tin covers 12 square metres"
    if len(spans) != 2:
        return None
    (a, a_at), (b, b_at) = spans
    if thing in {a.unit, b.unit} or (a.unit and b.unit and a.unit != b.unit):
        return None  # "how many metres": a conversion or a sum, not groups
    text = normalize_money(t)

    def of_one(said: str) -> bool:
        """``said`` (the words before an amount) names one of the things: "each strip …", "rows of"."""
        named = _ONE_THING.findall(said) + _THINGS_OF.findall(said)
        return any(w == asked["x"] or singular(w) == thing or asked["x"] in (w + "s", w + "es") for w in named)

    def per_one(at: int) -> bool:
        """The amount at ``at`` is said of one of the things after it: "6 in each bag", "6 cookies per bag"."""
        after = _ONE_AFTER.match(text[at:])
        return after is not None and of_one(f"each {after[1]}")

    one_a = of_one(text[:a_at]) or per_one(a_at) or singular(a.per) == thing  # "50 grams a day" … "how many days"
    one_b = of_one(text[a_at:b_at]) or per_one(b_at) or singular(b.per) == thing
    if one_a == one_b:
        return None
    whole, one = (b, a) if one_a else (a, b)
    if one.value == 0:
        return None
    exact = whole.value / one.value
    things = asked["x"]
    # "72 divided by 8", "10 metres divided by 2.5 metres": the nouns only when both amounts have one
    named = bool(one.noun) and whole.noun not in ("", "them")
    said_whole, said_one = (whole.said(), one.said()) if named else (say_number(whole.value), say_number(one.value))
    said = f"{said_whole} divided by {said_one} is {say_number(round(exact, 2))}"
    if math.isclose(exact, round(exact)):
        return f"{said} {things}."
    if _ROUND_UP.search(t):
        return f"{said}, so {math.ceil(exact)} {things}."
    if _ROUND_DOWN.search(t):
        return f"{said}, so {math.floor(exact)} {things}."
    return f"{said}."


def _scaled(t: str, told: list[Quantity] | None) -> str | None:
    if not _HOW.search(asked_part(t)):
        return None
    spans = quantity_spans(t)
    if spans is None:
        return None
    start = len(normalize_money(t)) - len(asked_part(normalize_money(t)))
    in_question = [q for q, at in spans if at >= start]
    before = [q for q, at in spans if at < start] if told is None else told
    if len(in_question) != 1 or len(before) != 2 or (told is not None and len(spans) != 1):
        return None
    c = in_question[0]
    a, b = before
    if not a.noun or a.noun == "them" or a.unit == b.unit or b.unit != c.unit or b.value == 0 or c.per or a.per:
        return None
    value = a.value * c.value / b.value
    noun = a.noun if a.currency or value == 1 or a.noun.endswith("s") else a.noun + "s"  # "1 litre" → "5 litres"
    scaled = Quantity(value, noun, currency=a.currency)
    return f"{a.said()} for {b.said()} is {scaled.said()} for {c.said()}."
