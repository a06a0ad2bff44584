"""Unit conversion, a local skill: "how many metres are in a mile", "what is 5 pounds in kilograms",
"convert 100 degrees Celsius to Fahrenheit", "how many grams are in half a kilogram", "how many tablespoons
are in a cup", "60 miles per hour in km/h". Exact factors (SI definitions; US gallon, pint, quart, cup, fluid
ounce and spoons), answered without the LLM. Months and years have no fixed length: a year is 12 months,
365 days (366 in a leap year, which the reply says), a month 28 to 31 days.

:func:`convert` takes a cleaned transcript (lower case, no final punctuation) and returns the reply, or None
when it names no two known units of the same kind. A conversion asked for whose unit to convert from was not heard
("how many seconds are there in another?": "an hour" misheard), or whose unit to convert to is no unit ("how many
drums is 2.5 kg?": "grams" misheard), gets :data:`UNCLEAR`, not the LLM's guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from voice.skills.numbers import (
    DIGITS_PATTERN,
    NUMBER_PATTERN,
    NUMBER_WORDS,
    parse_amount,
    parse_fraction,
    parse_number,
    say_number,
)
from voice.skills.unit_amounts import asked_in, in_the_smaller_unit
from voice.skills.word_classes import DETERMINERS, FUNCTION_WORDS, QUESTION_WORDS, singular, words_in

UNCLEAR = "I didn't catch what to convert. Could you say it again?"
"""The reply to a conversion asked for whose unit to convert from was not heard."""

# name → (dimension, factor to the base unit). Plurals and spellings are folded by :func:`_unit`.
_UNITS: dict[str, tuple[str, float]] = {
    "millimetre": ("length", 0.001), "centimetre": ("length", 0.01), "metre": ("length", 1.0),
    "kilometre": ("length", 1000.0), "inch": ("length", 0.0254), "foot": ("length", 0.3048),
    "yard": ("length", 0.9144), "mile": ("length", 1609.344),
    "milligram": ("mass", 1e-6), "gram": ("mass", 0.001), "kilogram": ("mass", 1.0), "tonne": ("mass", 1000.0),
    "pound": ("mass", 0.45359237), "ounce": ("mass", 0.028349523125), "stone": ("mass", 6.35029318),
    "millisecond": ("time", 0.001), "second": ("time", 1.0), "minute": ("time", 60.0), "hour": ("time", 3600.0),
    "day": ("time", 86400.0), "week": ("time", 604800.0), "leapyear": ("time", 366 * 86400.0),
    "millilitre": ("volume", 0.001), "litre": ("volume", 1.0), "gallon": ("volume", 3.785411784),
    "cup": ("volume", 0.2365882365), "tablespoon": ("volume", 0.01478676478125),
    "teaspoon": ("volume", 0.00492892159375), "pint": ("volume", 0.473176473), "quart": ("volume", 0.946352946),
    "floz": ("volume", 0.0295735295625),
    "mph": ("speed", 0.44704), "kph": ("speed", 1 / 3.6), "knot": ("speed", 1852 / 3600),
    "month": ("calendar", 1.0), "year": ("calendar", 12.0), "decade": ("calendar", 120.0),
    "century": ("calendar", 1200.0), "millennium": ("calendar", 12000.0),
}  # fmt: skip
_DAYS_IN_YEAR = 365  # a common year; a leap year has one more
_ALIASES = {
    "meter": "metre", "kilometer": "kilometre", "centimeter": "centimetre", "millimeter": "millimetre",
    "km": "kilometre", "cm": "centimetre", "mm": "millimetre", "m": "metre", "feet": "foot", "inches": "inch",
    "kg": "kilogram", "kilo": "kilogram", "g": "gram", "mg": "milligram", "lb": "pound", "lbs": "pound",
    "oz": "ounce", "ton": "tonne", "liter": "litre", "milliliter": "millilitre", "ml": "millilitre", "l": "litre",
    "sec": "second", "secs": "second", "min": "minute", "mins": "minute", "hr": "hour", "hrs": "hour",
    "centuries": "century", "millennia": "millennium", "yr": "year", "yrs": "year", "tbsp": "tablespoon",
    "tsp": "teaspoon", "gramme": "gram", "kilogramme": "kilogram", "milligramme": "milligram",
}  # fmt: skip
#: Units of more than one word, made one before matching (the patterns take one word per unit).
_PHRASES = (
    (r"\bfluid ounces?\b|\bfl\.? ?oz\b", "floz"),
    (r"\bmiles (?:per|an) hour\b", "mph"),
    (r"\b(?:kilomet(?:re|er)s?|km) (?:per|an) hour\b|\bkm/h\b|\bkmh\b", "kph"),
)
_SAID = {"floz": ("fluid ounce", "fluid ounces"), "mph": ("mile per hour", "miles per hour"),
         "kph": ("kilometre per hour", "kilometres per hour")}  # fmt: skip
_TEMPERATURES = {"celsius": "Celsius", "centigrade": "Celsius", "fahrenheit": "Fahrenheit"}
_NUMBER = r"(?:a|an|one|[\w.,/-]+(?: [\w-]+){0,4}?)"
_AND_A_PART = r"(?: and (?P<part>a half|a quarter|three quarters))?"  # "an hour and a half"


_NO_SOURCE = re.compile(r"how many (?P<to>[a-z]+) (?:are |is )?(?:there )?(?:in|make|makes|make up) (?P<rest>[a-z ]+)")


def _unit(word: str) -> str | None:
    w = word.strip()
    if w in _UNITS:
        return w
    if w in _ALIASES:
        return _ALIASES[w]
    for suffix in ("es", "s"):
        if w.endswith(suffix) and (stem := w[: -len(suffix)]) and (stem in _UNITS or stem in _ALIASES):
            return _unit(stem)
    return None


def _one_word_units(text: str) -> str:
    """``text`` with the units of more than one word made one ("miles per hour" → "mph")."""
    for phrase, unit in _PHRASES:
        text = re.sub(phrase, unit, text)
    return text


def is_unit(word: str) -> bool:
    """``word`` names a unit this module converts ("miles", "kg", "Fahrenheit")."""
    w = word.strip().lower()
    return _unit(w) is not None or w in _TEMPERATURES


def _plural(unit: str, n: float) -> str:
    if unit == "leapyear":
        return "leap year" if n == 1 else "leap years"
    if unit in _SAID:
        return _SAID[unit][n != 1]
    if n == 1:
        return unit
    return {"foot": "feet", "inch": "inches", "century": "centuries", "millennium": "millennia"}.get(unit, unit + "s")


def _amount(text: str) -> float | None:
    t = text.strip()
    if t in ("a", "an", "one"):
        return 1.0
    return parse_amount(t)


def _temperature(t: str) -> str | None:
    m = re.fullmatch(
        # one stray word before is Whisper's for "what's" at times ("was 50 degrees Fahrenheit in Celsius", "it's")
        rf"(?:what is |what'?s |convert |(?!(?:minus|negative|{NUMBER_WORDS})\b)[a-z]+(?:'[a-z]+)? "
        rf"(?=-?\d|(?:{NUMBER_WORDS})\b))?"
        rf"(?P<n>-?{_NUMBER}) (?:degrees? )?"
        r"(?P<a>celsius|centigrade|fahrenheit)"
        r" (?:in|to|into) (?:degrees )?(?P<b>celsius|centigrade|fahrenheit)",
        t,
    )
    if not m or (n := _amount(m.group("n"))) is None:
        return None
    a, b = _TEMPERATURES[m.group("a")], _TEMPERATURES[m.group("b")]
    if a == b:
        return None
    out = n * 9 / 5 + 32 if a == "Celsius" else (n - 32) * 5 / 9
    return f"{say_number(n)} degrees {a} is {say_number(round(out, 1))} degrees {b}."


def _compound(t: str) -> str | None:
    """The conversion of an amount said in two units ("what's five foot ten in centimetres"), said back as asked."""
    if (found := in_the_smaller_unit(t)) is None:
        return None
    rewritten, total, said = found
    if asked_in(t, total):
        return f"{said[:1].upper()}{said[1:]} is {total}."  # "how many seconds is three minutes forty seconds"
    reply = convert(rewritten)
    return reply.replace(total, said, 1) if reply is not None and reply != UNCLEAR else None


def convert(t: str) -> str | None:
    """The reply to a unit conversion question in cleaned transcript ``t``, else None."""
    if (reply := _temperature(t) or _compound(t)) is not None:
        return reply
    t = _one_word_units(t.replace("leap year", "leapyear"))  # a leap year is one unit of a fixed 366 days
    if (m := _NO_SOURCE.fullmatch(t)) and _unit(m.group("to")) and set(m.group("rest").split()) <= DETERMINERS:
        return UNCLEAR  # "how many seconds are there in another": the unit after the article was not heard
    m = re.fullmatch(
        rf"how many (?P<to>[a-z]+) (?:are |is )?(?:there )?(?:in|is|make|makes|make up) (?P<n>{_NUMBER}) "
        rf"(?P<from>[a-z]+){_AND_A_PART}",
        t,
    ) or re.fullmatch(
        rf"(?:what is |what'?s |convert |how much is |how far is |how long is |how heavy is )?(?P<n>{_NUMBER}) "
        rf"(?P<from>[a-z]+){_AND_A_PART} (?:in|to|into|as|and) (?P<to>[a-z]+)",  # "and": Whisper's "in"
        t,
    )
    if not m:
        return None
    how_many = m.re.pattern.startswith("how many")
    # "how many days are in the week", "in every week": one, in this form only
    n = 1.0 if how_many and m.group("n") in ("the", "every", "each", "one") else _amount(m.group("n"))
    if n is not None and m.group("part"):
        n += parse_amount(m.group("part")) or 0.0
    src, dst = _unit(m.group("from")), _unit(m.group("to"))
    if src is None or dst is None or n is None or src == dst:
        # "how many drums is 2.5 kg": a conversion's form, its unit to convert to misheard ("grams")
        unheard = how_many and " is " in m.group() and src and dst is None and n and m["to"] not in FUNCTION_WORDS
        return UNCLEAR if unheard else None
    n_said = m.group("n").strip()
    if n == 1:
        said = f"{_article(n_said, src)} {_plural(src, 1)}"
    elif parse_number(n_said) is None or m.group("part") or re.search(r"\band (?:a|three) (?:half|quarters?)$", n_said):
        # "half a kilogram", "an hour and a half", "one and a half": as said
        said = " ".join(w for w in (n_said, m.group("from"), m.group("part") and f"and {m.group('part')}") if w)
    else:
        said = f"{say_number(n)} {_plural(src, n)}"
    (dim_a, fa), (dim_b, fb) = _UNITS[src], _UNITS[dst]
    if dst == "leapyear":  # "how many leap years in a century" counts them: not a conversion
        return None
    if src == "leapyear" and dst == "week" and n == 1:
        return "A leap year has 52 weeks and 2 days."
    if "calendar" in (dim_a, dim_b) and dim_a != dim_b:
        return _calendar(n, src, dst, said, how_many)
    if dim_a != dim_b:
        a, b = _plural(src, 2).capitalize(), _plural(dst, 2)
        return f"{a} measure {dim_a} and {b} measure {dim_b}: they don't convert."
    return _reply(n * fa / fb, dst, said, how_many)


def _article(said: str, unit: str) -> str:
    if said in ("a", "an"):
        return said
    return "an" if unit[0] in "aeiou" or unit == "hour" else "a"


def _shown(x: float) -> str:
    return say_number(round(x, 4) if abs(x) >= 0.01 else float(f"{x:.3g}"))


def _reply(out: float, dst: str, said: str, how_many: bool) -> str:
    if how_many:
        return f"There are {_shown(out)} {_plural(dst, out)} in {said}."
    return f"{said[:1].upper()}{said[1:]} is {_shown(out)} {_plural(dst, out)}."


def _calendar(n: float, src: str, dst: str, said: str, how_many: bool) -> str | None:
    """Years (and decades, centuries) against days, weeks and shorter units: common years of 365 days, with
    the leap year's count beside it for a single year. A month against them only as its range of days."""
    if "month" in (src, dst):
        if n == 1 and src == "month" and dst in ("day", "week"):
            return "A month has 28 to 31 days: about 4.3 weeks." if dst == "week" else "A month has 28 to 31 days."
        return None
    if _UNITS[dst][0] == "calendar":  # "how many years is 1000 days": years of 365 days
        years = n * _UNITS[src][1] / (_DAYS_IN_YEAR * _UNITS["day"][1])
        return f"{_reply(years * 12 / _UNITS[dst][1], dst, said, how_many)[:-1]}, counting 365 days a year."
    if _UNITS[dst][0] != "time":
        return None
    years = n * _UNITS[src][1] / 12
    common = years * _DAYS_IN_YEAR * _UNITS["day"][1] / _UNITS[dst][1]
    if dst == "week":
        days = round(years * _DAYS_IN_YEAR)
        weeks = f"{days // 7} weeks" + (f" and {days % 7} day{'s' if days % 7 > 1 else ''}" if days % 7 else "")
        if years == 1:
            return f"A year has {weeks}, or 52 weeks and 2 days in a leap year."
        return f"{said.capitalize()} {'has' if years == 1 else 'have'} {weeks}, counting 365 days a year."
    if years == 1:
        leap = (_DAYS_IN_YEAR + 1) * _UNITS["day"][1] / _UNITS[dst][1]
        return f"{_reply(common, dst, said, how_many)[:-1]}, or {_shown(leap)} in a leap year."
    return f"{_reply(common, dst, said, how_many)[:-1]}, counting 365 days a year."


_THAT_IN = (
    r"(?:what'?s|what is|how much is|how many [a-z]+ is|how far is|how tall is|how long is|how heavy is|how hot is"
    r"|how cold is) (?:that|it|this)(?: in| to)",
    r"(?:convert|change|turn|put) (?:that|it|this) (?:in|to|into)",
    r"(?:what|how) about in|in",
)
_HOW_MANY_IS_THAT = (
    r"how many (?P<to>[a-z/ ]+?) (?:(?:is|are) (?:that|it|this)|(?:would|will|does) (?:that|it|this) "
    r"(?:be|make|come to))"
)
"""A conversion that names the unit before "that": "how many miles is that", "how many ounces would that be"."""
_PREVIOUS_AMOUNT = re.compile(r"(?<![\w.,])(-?\d[\d,]*(?:\.\d+)?) ?((?:degrees? )?[a-z]+(?: per hour)?)\b")
_SAID_NUMBER = rf"(?<![\w.,])(?:{DIGITS_PATTERN} and )?{NUMBER_PATTERN}"
"""A number as said, also as Whisper writes "three hundred and twenty" at times: "300 and 20"."""
_SAID_AMOUNT = re.compile(rf"(?P<n>{_SAID_NUMBER}{_AND_A_PART}) ?(?P<unit>[a-z]+)\b")


def _asked_unit(t: str) -> str | None:
    """The unit a question that refers back asks for ("how much is that in feet", "in kilometres", "how many
    miles is that"), with units of more than one word made one; None: ``t`` is no such question."""
    m = re.fullmatch(rf"(?:and |so |ok |okay |now )?(?:{'|'.join(_THAT_IN)}) (?:degrees )?(?P<to>[a-z/ ]+?)", t)
    m = m or re.fullmatch(rf"(?:and |so |ok |okay |now |but )*{_HOW_MANY_IS_THAT}", t)
    return _one_word_units(m.group("to")) if m else None


def convert_previous(t: str, previous_reply: str) -> str | None:
    """A conversion of the previous answer's amount ("And how much is that in feet?", "What is it in
    Fahrenheit?", "In kilometres?", "How many miles is that?"): the last amount in ``previous_reply`` with a unit
    of the kind asked for, converted; else None. ``t`` is a cleaned transcript."""
    to = _asked_unit(t)
    if to is None:
        return None
    if to in _TEMPERATURES:
        return _previous_temperature(previous_reply, _TEMPERATURES[to])
    dst = _unit(to)
    if dst is None or _UNITS[dst][0] == "calendar":
        return None
    for n, word in reversed(_PREVIOUS_AMOUNT.findall(_one_word_units(previous_reply.lower()))):
        src = _unit(word)
        if src is not None and src != dst and _UNITS[src][0] == _UNITS[dst][0]:
            return convert(f"{n.replace(',', '')} {word} in {dst}")
    return None


def convert_said_before(t: str, before: str) -> str | None:
    """A question at the end of a turn that refers back to an amount said earlier in the same turn ("I ran 5
    kilometres this morning, which felt like forever, how many miles is that?"): the one amount said in ``before``
    with a unit of the kind asked for, converted; else None, also when ``before`` holds another amount of that kind
    or any other number (which one is meant, or what they come to, would be a guess). ``t`` is the question,
    cleaned. A temperature asked for is the one temperature said ("the thermometer says thirty degrees celsius,
    what's that in fahrenheit?")."""
    to = _asked_unit(t)
    if to in _TEMPERATURES:
        return _said_temperature(before.lower(), _TEMPERATURES[to])
    dst = _unit(to) if to is not None else None
    if dst is None or _UNITS[dst][0] == "calendar":
        return None
    said = _one_word_units(before.lower())
    if (two := in_the_smaller_unit(said)) is not None and _unit(two[1].split()[-1]) == dst:
        return f"{two[2][:1].upper()}{two[2][1:]} is {two[1]}."  # "a song that's 3 minutes 40 seconds" … in seconds
    said = two[0] if two is not None else said  # "I'm five foot ten"
    found = [
        m
        for m in _SAID_AMOUNT.finditer(said)
        if (unit := _unit(m.group("unit"))) is not None and unit != dst and _UNITS[unit][0] == _UNITS[dst][0]
    ]
    if not found and (part := _SAID_PART.search(said)) is not None:
        around = said[: part.start()] + " " + said[part.end() :]
        return None if re.search(_SAID_NUMBER, around) else _said_part(part, dst)  # "…five eighths of an inch"
    if len(found) != 1:
        return None  # none, or two ("250 grams of sugar and 100 grams of butter": each, or their sum?)
    amount = found[0]
    inside = range(amount.start(), amount.end())
    if any(m.group() != "one" and m.start() not in inside for m in re.finditer(_SAID_NUMBER, said)):
        return None  # another number ("the track is 400 metres and I ran 10 laps": "that" is 4 kilometres)
    return convert(f"{amount.group('n').strip().replace(',', '')} {amount.group('unit')} in {dst}")


_SAID_PART = re.compile(
    r"\b(?P<n>(?:(?:an?|one|two|three|four|five|six|seven|eight|nine|\d+) )?(?:half|halves|thirds?|quarters?|fifths?"
    r"|sixths?|eighths?|tenths?))(?P<of> of)? (?P<art>an?) (?P<unit>[a-z]+)\b"
)
"""A part of a unit said before a question that refers back to it: "five eighths of an inch", "a quarter of a mile"."""


def _said_part(m: re.Match[str], dst: str) -> str | None:
    """The one part of a unit ``m`` found, in ``dst``, when it is a fraction of a unit of the kind asked for."""
    src = _unit(m["unit"])
    if parse_fraction(m["n"]) is None or src is None or src == dst or _UNITS[src][0] != _UNITS[dst][0]:
        return None
    return convert(f"{m['n']}{m['of'] or ''} {m['art']} {m['unit']} in {dst}")


_SAID_TEMPERATURE = re.compile(
    rf"(?P<n>(?:minus |negative )?{_SAID_NUMBER}) (?:degrees? )?(?P<scale>celsius|centigrade|fahrenheit)\b"
)


def _said_temperature(said: str, dst: str) -> str | None:
    """The one temperature said in ``said`` with its scale ("the thermometer says thirty degrees celsius"), in
    ``dst`` ("Fahrenheit"); None when ``said`` holds none, two, or any other number."""
    found = list(_SAID_TEMPERATURE.finditer(said))
    if len(found) != 1 or _TEMPERATURES[found[0]["scale"]] == dst:
        return None
    inside = range(found[0].start(), found[0].end())
    if any(m.group() != "one" and m.start() not in inside for m in re.finditer(_SAID_NUMBER, said)):
        return None  # "it was 30 degrees at 2 o'clock": which is asked is not in the words
    return _temperature(f"{found[0]['n']} degrees {found[0]['scale']} in {dst.lower()}")


_OF_A_THING = re.compile(
    r"(?:(?:and|so|ok|okay|now|but|right) )*(?:how many (?P<to>[a-z/ ]+?) (?:is|are|was|were) (?P<thing>(?:the|my|our)"
    r" [a-z' ]+?)|(?:what'?s|what is|what was|how (?:long|far|tall|heavy|big|much|high|wide|deep) (?:is|are|was))"
    r" (?P<thing_>(?:the|my|our) [a-z' ]+?) in (?P<to_>[a-z/ ]+?))(?: again| then| now)?"
)
"""A conversion asked of a thing by its name: "how many miles is the trail", "what's my suitcase in pounds"."""


def convert_told(t: str, earlier_user_turns: Sequence[str]) -> str | None:
    """A conversion asked of a thing the user told one amount of, in any earlier turn ("The trail we're doing is
    18 kilometres long." … "What time is it?" … "How many miles is the trail?"): the latest statement that says every
    word of the thing's name, its one amount of the kind asked for converted (:func:`convert_said_before`); else
    None. ``t`` is the question, cleaned."""
    if (m := _OF_A_THING.fullmatch(t)) is None:
        return None
    thing = {singular(w) for w in words_in(m["thing"] or m["thing_"])} - FUNCTION_WORDS
    asked = f"how many {m['to'] or m['to_']} is that"
    for turn in reversed(earlier_user_turns):
        said = words_in(turn)
        if not thing or not said or said[0] in QUESTION_WORDS or turn.rstrip().endswith("?"):
            continue  # a question is not a statement of an amount
        if thing <= {singular(w) for w in said} and (reply := convert_said_before(asked, turn)) is not None:
            return reply
    return None


def _previous_temperature(previous_reply: str, dst: str) -> str | None:
    text = re.sub(r"\s*°\s*([cf])\b", lambda m: " degrees " + {"c": "celsius", "f": "fahrenheit"}[m.group(1)],
                  previous_reply.lower())  # fmt: skip
    found = re.findall(r"(-?\d[\d,]*(?:\.\d+)?) degrees? (celsius|centigrade|fahrenheit)\b", text)
    scales = {_TEMPERATURES[w] for w in re.findall(r"\b(celsius|centigrade|fahrenheit)\b", text)}
    if not found and len(scales) == 1:  # "The boiling point of water in Celsius is 100 degrees."
        found = [(n, next(iter(scales)).lower()) for n in re.findall(r"(-?\d[\d,]*(?:\.\d+)?) degrees?\b", text)]
    for n, unit in reversed(found):
        if _TEMPERATURES[unit] != dst:
            return _temperature(f"{n.replace(',', '')} degrees {unit} in {dst.lower()}")
    return None

