"""An amount per one of another: the price of one of several bought together ("45 litres came to 63 euros, how much
is that per litre?", "three bags cost two pounds fifty, how much is each bag?"), and a speed from a distance and a
time ("we drove 80 kilometres in two and a half hours, what was our average speed?").

SmolLM2-135M answered these with an apology or a made-up sum (the thirty-sixth and thirty-ninth held-out sets' first
runs, and the multi-buy price the thirty-seventh showed). They are read with the quantities of
:mod:`voice.skills.word_problems`: exactly two amounts, of which the question names which is per one of the other:

- **Price of one.** "How much … per / a / each / for one <thing>", "how much is one <thing>", "how much each": one
  amount of money and one count (of that thing, when it is named) → the money divided by the count.
- **Speed.** "Average speed", "how fast", "what speed": one distance (kilometres, miles) and one time (hours,
  minutes) → the distance per hour.

Anything else (three amounts, two of money, a count of another thing than the one asked, a time of day) goes on.
The reply says what it divided, and "about" when the result was rounded. Pure.
"""

from __future__ import annotations

import math
import re

from voice.skills.money_sums import normalize_money, say_amount
from voice.skills.numbers import say_number
from voice.skills.word_classes import singular
from voice.skills.word_problems import Quantity, asked_part, quantities, told_by_clock

_EACH = (
    r"(?:how much (?:is |was |are |were |does |did |do |would )?(?:that |it |they |those |these |one )?"
    r"(?:(?:cost )?(?:per|a|an|each|for one|for each|for a) (?P<x>[a-z]+)|each(?: one)?|apiece|cost each)"
    r"|how much (?:is|was|does|did|would) (?:one|each|a single) (?P<y>[a-z]+)|how much (?:is|was|for) (?:just )?one$)"
)
_PRICE_OF_ONE = re.compile(rf"\b{_EACH}\b")
_AND_MONEY = re.compile(r"\b\d*00 and (?:\d|[a-z]+ )[\w.]* ?(?:dollars?|pounds?|euros?|quid|bucks?)\b")
"""A hundred and an amount of money, as Whisper writes "a hundred and thirty two dollars" ("100 and 32 dollars"),
which the quantities read as two: a count and the money."""
_SPEED = re.compile(r"\b(?:average speed|how fast|what speed|what was (?:my|our|the) speed)\b")
_DISTANCES = {"kilometre": "kilometres", "kilometer": "kilometres", "km": "kilometres", "mile": "miles"}
_TIMES_H = {"hour": 1.0, "hr": 1.0, "minute": 1 / 60, "min": 1 / 60}


def answer(t: str) -> str | None:
    """The price of one or the speed asked in ``t`` (a cleaned transcript), with both amounts in it, else None."""
    if told_by_clock(t):
        return None
    qs = quantities(t)
    if qs is None or _AND_MONEY.search(normalize_money(t)):
        return None
    asked = asked_part(t)
    if (m := _PRICE_OF_ONE.search(asked)) is not None:
        thing = m["x"] or m["y"]
        one = {"", singular(thing or "")}
        said = [q for q in qs if not (q.value == 1 and q.unit in one)]  # "how much is one (litre)": not an amount
        return _price_of_one(said, thing)
    if _SPEED.search(asked):
        return _speed(qs)
    return None


def _price_of_one(qs: list[Quantity], thing: str | None) -> str | None:
    if len(qs) != 2 or qs[0].currency == qs[1].currency or any(q.per for q in qs):
        return None
    money, count = (qs[0], qs[1]) if qs[0].currency else (qs[1], qs[0])
    wanted = singular(thing) if thing and singular(thing) not in ("one", "piece", "item", "unit") else ""
    if count.value <= 0 or (wanted and count.noun and count.unit != wanted):
        return None  # "how much per litre" of 3 bags: not the count's price
    each = money.value / count.value
    about = "" if math.isclose(each, round(each, 2)) else "about "
    per = f"{'an' if wanted[:1] in tuple('aeiou') else 'a'} {wanted}" if wanted else "each"
    return f"{money.said()} for {count.said()} is {about}{say_amount(each, money.noun)} {per}."


def _speed(qs: list[Quantity]) -> str | None:
    if len(qs) != 2 or any(q.per or q.currency for q in qs):
        return None
    distance = next((q for q in qs if q.unit in _DISTANCES), None)
    time = next((q for q in qs if q.unit in _TIMES_H), None)
    if distance is None or time is None or time.value <= 0:
        return None
    per_hour = distance.value / (time.value * _TIMES_H[time.unit])
    about = "" if math.isclose(per_hour, round(per_hour, 1)) else "about "
    unit = _DISTANCES[distance.unit]
    return f"{distance.said()} in {time.said()} is {about}{say_number(round(per_hour, 1))} {unit} an hour."

