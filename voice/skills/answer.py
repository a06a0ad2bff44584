"""Local skills: exact answers matched on the transcript, without the LLM (current time and date:
:mod:`voice.skills.clock_questions`; the time in another place: :mod:`voice.skills.time_zones`; a moment some span
from now: :mod:`voice.skills.clock_offsets`; arithmetic; prices and percentages: :mod:`voice.skills.money_sums`; unit
conversion; countries' capitals, languages and currencies: :mod:`voice.skills.country_facts`; chemical elements'
symbols and atomic numbers: :mod:`voice.skills.element_facts`; the planets: :mod:`voice.skills.planet_facts`;
location, thanks; what is left or what it all comes to, from the amounts said: :mod:`voice.skills.word_problems`;
how many groups an amount makes, or an amount scaled: :mod:`voice.skills.ratios`; last, any sum left in other
words, read as an expression: :mod:`voice.skills.expressions`).
A transcript no skill takes whole is tried again from each of its last sentences or clauses, or from a word that
opens a question, longest first, so that a question said after some context is still answered ("I always forget
this. How many days are in a leap year?", "my kid asked me and I couldn't remember what's the capital of Egypt"),
and a last part that refers back to the one amount or the one country said before it is answered of it ("I ran 5
kilometres this morning, how many miles is that?", "…back from Portugal, what currency do they use there?"), and
a question said in the middle is answered from the words before the speaker's own next clause ("…what's the symbol
for lead, I always forget it"); where the parts begin and end: :mod:`voice.skills.turn_parts`. A part must keep
every number said around it, unless it says none and is asked of the skills that answer of a thing named
(:data:`NAMES`: "…on the 715 again… anyway, what's the capital of Norway?").

:func:`answer` returns the reply for a transcript it recognises, else None (the LLM answers). Numbers may be
digits or spoken words ("seven times thirty", "two hundred and five"), as Whisper writes either.
Timers keep state and ring by themselves: :mod:`voice.skills.timers`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import datetime

from voice.skills import (
    areas,
    clock_offsets,
    clock_questions,
    clock_sums,
    country_facts,
    element_facts,
    expressions,
    mixtures,
    money_sums,
    planet_facts,
    ratios,
    time_zones,
    unit_rates,
    word_problems,
)
from voice.skills.numbers import (
    fraction_words,
    parse_amount,
    parse_fraction,
    parse_number,
    say_number,
)
from voice.skills.turn_parts import last_parts, middle_parts, named_parts, numbers_in, splits
from voice.skills.units import UNCLEAR as CONVERSION_UNCLEAR
from voice.skills.units import convert, convert_previous, convert_said_before, convert_told

OPERATIONS: dict[str, Callable[[float, float], float]] = {
    "plus": lambda a, b: a + b,
    "+": lambda a, b: a + b,
    "minus": lambda a, b: a - b,
    "-": lambda a, b: a - b,
    "times": lambda a, b: a * b,
    "x": lambda a, b: a * b,
    "*": lambda a, b: a * b,
    "multiplied by": lambda a, b: a * b,
    "divided by": lambda a, b: a / b,
    "over": lambda a, b: a / b,
    "/": lambda a, b: a / b,
}
"""The arithmetic a sum may name, by the words and signs Whisper (or a reply) writes for it."""
_OP_RE = "|".join(re.escape(k) for k in sorted(OPERATIONS, key=len, reverse=True))


def clean(transcript: str) -> str:
    """The transcript as the skills see it: lower case, no end punctuation, no hesitation ("um", "uh", "er"), no
    leading "hey", "and" or "please" (a follow-up's "And what's the atomic number of silver?" is the question
    itself)."""
    t = transcript.lower().strip()
    t = re.sub(r"[?!.]+$", "", t).strip()
    t = re.sub(r"(?<=\S)(?:,? (?:um+|uh+|uhm|erm|er)\b,?)+(?= )", "", t)  # "convert um 8 km": a hesitation says nothing
    t = re.sub(r"^(hey|ok|okay|so|and|um|uh|please|can you tell me|could you tell me|tell me)[, ]+", "", t)
    t = re.sub(r"^(?:can|could|would|will) you (?:please )?(?=convert|multiply|divide|add|subtract|work out)", "", t)
    t = re.sub(r"(?<=\S)(?:,? (?:for me|please))+$", "", t)  # "convert 70 kilograms to pounds for me"
    t = re.sub(rf"(?<=\S)(?:,? (?:{_AFTERWORDS}))+$", "", t)  # "what currency do they use in spain again"
    t = _HUNDREDS_AND.sub(lambda m: str(int(m[1]) + int(m[2])), t)  # Whisper's "100 and 20 miles": 120 miles
    return re.sub(r"\s+", " ", t)


_HUNDREDS_AND = re.compile(
    r"(?<!\badd )(?<!\bbetween )(?<!\bsum of )(?<!\bproduct of )(?<!\baverage of )(?<![\d.,])"
    r"\b([1-9]\d{0,2}00) and ([1-9]\d?)\b(?![.,]\d)"
)
"""A number Whisper writes in two as it was said, "a hundred and twenty" as "100 and 20": one number, 120 ("a bill
of 100 and 32 pounds" too). Not two added ("add 200 and 50", "the sum of 100 and 20") or a range ("between")."""


_AFTERWORDS = (
    r"again|anyway|then|by the way|by any chance|do you know|you know|i wonder"
    r"|(?:just )?(?:roughly|approximately|more or less)|or so"
)
"""Words said after a question that ask nothing more: "what currency do they use in Spain again?", "…the highest
mountain in the Alps anyway", "how many feet is that roughly" (the reply is exact; a rough one is in it)."""


def _power(a: float, power: float) -> float | None:
    """``a`` to the ``power``, when it is a real number short enough to say (under 10^15), else None."""
    try:
        result = a**power
    except (OverflowError, ZeroDivisionError):
        return None
    if not isinstance(result, float) or not math.isfinite(result) or abs(result) >= 1e15:
        return None  # a complex root, or a number too long to speak
    return result


_IMPERATIVES = (  # "divide 45 by 6" → "45 divided by 6"
    (r"^divide (.+) by (.+)$", r"\1 divided by \2"),
    (r"^multiply (.+) by (.+)$", r"\1 times \2"),
    (r"^add (.+) (?:and|to) (.+)$", r"\1 plus \2"),
    (r"^(?:subtract|take away|take) (.+?)(?: away)? from (.+)$", r"\2 minus \1"),
)


def _said(text: str, value: float) -> str:
    """A number as the reply says it: digits, or a fraction in the words it was asked in ("a half")."""
    return say_number(value) if parse_number(text) is not None else fraction_words(text.strip())


def _arithmetic(t: str) -> str | None:
    t = re.sub(r"^what do (?:you|i|we) get (?:if|when) (?:you|i|we) ", "", t)  # "… if you divide 156 by 12"
    t = re.sub(r"^(what'?s|what is|what|how much is|calculate|compute|work out)\s+", "", t)  # Whisper drops "is"
    for pattern, form in _IMPERATIVES:
        t = re.sub(pattern, form, t)
    t = re.sub(r"\s*(equals?|is)$", "", t)
    t = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", t)  # twenty-five
    t = re.sub(r"(?<=\d)\s*([+*/x-])\s*(?=\d)", r" \1 ", t)  # 6x7, 6 - 7
    t = re.sub(r"(?<=\d)\s*%", " percent", t)  # Whisper writes "10%"
    m = re.fullmatch(r"(?:the )?square root (?:of |on )?(.+)", t)  # Whisper often drops the "of", or writes "on"
    if m and (n := parse_number(m.group(1))) is not None and n >= 0:
        return f"The square root of {say_number(n)} is {say_number(math.sqrt(n))}."
    m = re.fullmatch(r"(.+?) of (.+)", t)  # "a third of 60", "two thirds of ninety", "3/4 of 12"
    if m and (f := parse_fraction(m.group(1))) is not None and (b := parse_number(m.group(2))) is not None:
        part = fraction_words(re.sub(r"\s*/\s*", "/", m.group(1)))
        return f"{part[:1].upper()}{part[1:]} of {say_number(b)} is {say_number(f * b)}."
    m = re.fullmatch(r"(.+?) (squared|cubed|to the power of (.+))", t)
    if m and (a := parse_number(m.group(1))) is not None:
        power = {"squared": 2.0, "cubed": 3.0}.get(m.group(2)) or parse_number(m.group(3) or "")
        if power is not None and (result := _power(a, power)) is not None:
            said = f"to the power of {say_number(power)}" if m.group(3) else m.group(2)
            return f"{say_number(a)} {said} is {say_number(result)}."
    m = re.fullmatch(r"(.+?) percent of (.+)", t)
    if m and (a := parse_number(m.group(1))) is not None and (b := parse_number(m.group(2))) is not None:
        return f"{say_number(a)} percent of {say_number(b)} is {say_number(a * b / 100)}."
    m = re.fullmatch(rf"(.+?)\s+({_OP_RE})\s+(.+)", t)
    if not m:
        return None
    a, b = parse_amount(m.group(1)), parse_amount(m.group(3))  # "a half plus a third" too
    if a is None or b is None:
        return None
    op = m.group(2)
    if b == 0 and op in ("divided by", "over", "/"):
        return "Dividing by zero has no answer."
    word = {"+": "plus", "-": "minus", "x": "times", "*": "times", "/": "divided by", "over": "divided by"}
    said_a, said_b = _said(m.group(1), a), _said(m.group(3), b)
    reply = f"{said_a} {word.get(op, op)} {said_b} is {say_number(OPERATIONS[op](a, b))}."
    return reply[:1].upper() + reply[1:]


Skill = Callable[[str, datetime], str | None]
"""A skill: the cleaned transcript (lower case, no end punctuation) and the local time → its reply, or None."""

#: The skills :func:`answer` asks, in this order; the first reply wins. To add one, see :mod:`voice.skills`.
SKILLS: tuple[tuple[str, Skill], ...] = (
    ("time zones", time_zones.answer),  # "what time is it in Tokyo": not the time here
    ("clock offsets", clock_offsets.answer),  # "what time is it in three hours": not the time now
    ("clock", clock_questions.answer),
    ("clock sums", clock_sums.answer),  # "…meant to come at six fifty and it's now seven twenty five, how late is it?"
    ("arithmetic", lambda t, _now: _arithmetic(t)),
    ("money", lambda t, _now: money_sums.answer(t)),
    ("units", lambda t, _now: convert(t)),
    ("areas", lambda t, _now: areas.answer(t)),  # "my room is four metres by three metres, what's the area?"
    ("countries", lambda t, _now: country_facts.answer(t)),
    ("elements", lambda t, _now: element_facts.answer(t)),
    ("planets", lambda t, _now: planet_facts.answer(t)),
    ("word problems", lambda t, _now: word_problems.answer(t)),  # "…42 out of 110, how many have I got left?"
    ("mixtures", lambda t, _now: mixtures.answer(t)),  # "one part dye to three parts developer, … 40 mils of dye"
    ("ratios", lambda t, _now: ratios.answer(t)),  # "…72 bulbs in rows of eight, how many rows is that?"
    ("unit rates", lambda t, _now: unit_rates.answer(t)),  # "…45 litres came to 63 euros, how much per litre?"
    # After the skills that read numbers with their units and amounts: a sum in any words, or "say it again".
    ("expressions", lambda t, _now: expressions.answer(t)),
)


ASKING_AGAIN = frozenset({expressions.UNCLEAR, CONVERSION_UNCLEAR})
"""The skills' replies that ask the user to say it again: a sum or a conversion whose numbers or units were not
all heard. A turn answered with one counts as asking again (``TurnReport.asked_again``)."""


def asks_again(reply: str) -> bool:
    """``reply`` is one of :data:`ASKING_AGAIN`."""
    return reply.strip() in ASKING_AGAIN


def load_data() -> None:
    """Load the data of the skills that have a table (countries, elements), which they otherwise load on the first
    question that needs it (~0.1 s)."""
    country_facts.load()
    element_facts.load()


def answer(transcript: str, now: datetime, location: str = "") -> str | None:
    """The exact reply to ``transcript`` if a skill recognises it, else None. ``location`` is the configured
    one (``[llm] location``; empty: unknown)."""
    t = clean(transcript)
    if re.fullmatch(r"(where am i|where are we|what'?s my location|what is my location|what city am i in)"
                    r"( right)?( now)?", t):  # fmt: skip
        if location.strip():
            return f"You're in {location.strip()}."
        return "I don't know where you are: I have no location service, and no location is set."
    if re.fullmatch(r"(ok |okay )?(thanks|thank you)( very much| so much| a lot)?(,? that'?s all| bye| goodbye)?", t):
        return "You're welcome."
    if re.fullmatch(r"(that'?s all|that is all|bye|goodbye|good night)( for now)?(,? thanks| thank you)?", t):
        return "Goodbye."
    if (reply := _ask_skills(t, now)) is not None:
        return reply
    parts = splits(transcript)
    if (reply := next((r for p in last_parts(parts) if (r := _ask_skills(clean(p), now)) is not None), None)):
        return reply
    if (reply := next((r for before, p in parts if (r := _refers_back(clean(p), before))), None)):
        return reply
    middle = middle_parts(transcript, parts)
    kept = [p for p, before, after in middle if numbers_in(f"{before} {after}") <= numbers_in(p)]
    if (reply := next((r for p in kept if (r := _ask_skills(clean(p), now)) is not None), None)):
        return reply
    said_before = ((p, before) for p, before, after in middle if not numbers_in(after))
    if (reply := next((r for p, before in said_before if (r := _refers_back(clean(p), before))), None)):
        return reply  # "…the row is three metres long how many centimetres is that I need it for the spacing"
    if (reply := next((r for p in named_parts(parts, middle) if (r := _ask_names(clean(p))) is not None), None)):
        return reply
    # A conversion that says its own amount needs none said around it ("…up three flights of stairs … anyway how
    # many pounds is a hundred and fifty kilos").
    whole = [*(p for _, p in parts), *(p for p, _, _ in middle)]
    return next((r for p in whole if numbers_in(p) and (r := _one_unit(clean(p))) is not None), None)


def _refers_back(part: str, before: str) -> str | None:
    """A last part that refers back to what was said before it: the one amount ("…I ran 5 kilometres this
    morning, how many miles is that?") or the one country ("…back from Portugal, what currency do they use
    there?")."""
    return convert_said_before(part, before) or country_facts.answer_there(part, before)


def _ask_skills(t: str, now: datetime) -> str | None:
    return next((reply for _, skill in SKILLS if (reply := skill(t, now)) is not None), None)


def _one_unit(t: str) -> str | None:
    """A conversion of one unit to another ("how many grams are in a pound"), not of an amount referred to ("how
    many miles is that")."""
    if re.search(r"\b(?:that|it|this|these|those|them)\b", t) or (reply := convert(t)) == CONVERSION_UNCLEAR:
        return None
    return reply


NAMES: tuple[Callable[[str], str | None], ...] = (
    country_facts.answer, element_facts.answer, planet_facts.answer, _one_unit
)
"""The skills that answer of a thing named, not of a number said: a part that says no number is asked of them even
when a number said around it is dropped ("So I'm on the 715 again … anyway, what's the capital of Norway?", "I've
been up since 5 … anyway, how many grams are in a pound?")."""


def _ask_names(t: str) -> str | None:
    return next((reply for skill in NAMES if (reply := skill(t)) is not None), None)


_THAT = r"(?:that|it|the result|the answer|that number)"
_THEN = (
    r"(?:(?:now|no|and|then|so)[, ]+)?"
    r"(?:(?:what )?if (?:you|i|we) |(?:can|could|would|will) you (?:please )?|(?:what|how) about )?"
)
"""What may come before a follow-up on the previous result: "now double that", "and if you double that", "no,
divide that by 5" (a correction; also Whisper's spelling of "now" at times), "and can you divide that by 8", "and
what about double that"."""
_FOLLOW_UPS: tuple[tuple[str, Callable[[float, float], float], str], ...] = (
    (rf"{_THEN}double {_THAT}", lambda a, b: a * 2, "doubled"),
    (rf"{_THEN}triple {_THAT}", lambda a, b: a * 3, "tripled"),
    (rf"{_THEN}halve {_THAT}|{_THEN}half (?:of )?{_THAT}", lambda a, b: a / 2, "halved"),
    (rf"{_THEN}(?:add|plus) (?P<n>.+?) (?:to|on) {_THAT}", lambda a, b: a + b, "plus"),
    (rf"{_THEN}(?:subtract|take away|minus|take) (?P<n>.+?) from {_THAT}", lambda a, b: a - b, "minus"),
    # The verb alone means the previous result too: "now take away 30" (the eighth held-out set), "add 5".
    (rf"{_THEN}add (?P<n>.+)", lambda a, b: a + b, "plus"),
    (rf"{_THEN}(?:subtract|take away|take off) (?P<n>.+)", lambda a, b: a - b, "minus"),
    (rf"{_THEN}multiply(?: {_THAT})? by (?P<n>.+)", lambda a, b: a * b, "times"),
    (rf"{_THEN}divide(?: {_THAT})? by (?P<n>.+)", lambda a, b: a / b, "divided by"),
    (
        rf"{_THEN}(?:what is |what'?s )?{_THAT} (?P<op>plus|minus|times|divided by) (?P<n>.+)",
        OPERATIONS["+"],
        "",
    ),
)


def _last_number(text: str) -> float | None:
    """The result of the assistant's previous answer, ``text``: the number after "There are" that opens it ("There
    are 16.0934 kilometres in 10 miles."), else the last number written in digits."""
    found = re.findall(r"(?<![\d:])-?\d[\d,]*(?:\.\d+)?(?![\d:])", text)  # not a clock time
    if opening := re.match(r"there (?:are|is) (-?\d[\d,]*(?:\.\d+)?)\b", text.strip(), re.IGNORECASE):
        return parse_number(opening.group(1).rstrip(","))
    return parse_number(found[-1].rstrip(",")) if found else None


def on_told_amounts(transcript: str, earlier_user_turns: Sequence[str]) -> str | None:
    """A word problem or a ratio that builds on amounts the user told in ``earlier_user_turns`` (oldest first): "I've
    got 42 dollars." … "If I spend 17, how much is left?" (:func:`voice.skills.word_problems.follow_up`), "200
    grams of flour for 4 people" … "how much for 8?" (:func:`voice.skills.ratios.follow_up`), or a conversion of a
    thing told ("The trail is 18 km long." … "How many miles is the trail?", :func:`voice.skills.units.convert_told`),
    or the area of two sides told ("The kitchen is 4 metres by 3." … "What's its area?",
    :func:`voice.skills.areas.follow_up`); else None."""
    t = clean(transcript)
    return (
        word_problems.follow_up(t, earlier_user_turns)
        or ratios.follow_up(t, earlier_user_turns)
        or convert_told(t, earlier_user_turns)
        or areas.follow_up(t, earlier_user_turns)
    )


def _on_money_said(t: str, previous_said: str) -> str | None:
    """A sum asked of "that" or "it" when the user's previous turn said one amount, of money, and no other number
    ("The electric bill came in at 180 pounds." … "Split that three ways for me.", "What's 15 percent of it?"): the
    amount in its place, as the money skill reads it; else None."""
    said = word_problems.quantities(clean(previous_said)) if previous_said else None
    if not said or len(said) != 1 or not said[0].currency:
        return None
    written, n = re.subn(r"\b(?:that|it)\b", said[0].said(), t, count=1)
    return money_sums.answer(written) if n else None


def follow_up(transcript: str, previous_reply: str, previous_said: str = "") -> str | None:
    """Arithmetic on the previous answer's result ("now double that", "add 8 to that", "divide it by 3"),
    when that answer ended in a number, or its amount in another unit ("And how much is that in feet?",
    :func:`voice.skills.units.convert_previous`), or a planet question about the planet it named ("Is it bigger than
    Earth?", :func:`voice.skills.planet_facts.follow_up`), or the bill just split, divided another way ("And
    what if it's split 5 ways?", :func:`voice.skills.money_sums.follow_up`); or the one amount the user said in
    their previous turn, ``previous_said``, in another unit ("I ran six kilometres this morning." … "How many miles
    is that?") or, a sum of money, in a sum asked of it (:func:`_on_money_said`); else None."""
    t = clean(transcript)
    if (about_planet := planet_facts.follow_up(t, previous_reply)) is not None:
        return about_planet
    if (split := money_sums.follow_up(t, previous_reply)) is not None:
        return split
    if (converted := convert_previous(t, previous_reply) or convert_said_before(t, previous_said)) is not None:
        return converted
    if (on_said := _on_money_said(t, previous_said)) is not None:
        return on_said
    prev = _last_number(previous_reply)
    if prev is None:
        return None
    for pattern, fn, word in _FOLLOW_UPS:
        m = re.fullmatch(pattern, t)
        if not m:
            continue
        groups = m.groupdict()
        if groups.get("op"):
            word = groups["op"]
            fn = OPERATIONS[word]
        n = parse_number(groups["n"]) if groups.get("n") else 0.0
        if n is None:
            return None
        if word == "divided by" and n == 0:
            return "Dividing by zero has no answer."
        result = fn(prev, n)
        if "n" in groups:
            return f"{say_number(prev)} {word} {say_number(n)} is {say_number(result)}."
        return f"{say_number(prev)} {word} is {say_number(result)}."
    return None
