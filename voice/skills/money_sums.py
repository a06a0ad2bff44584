"""Sums people do with prices and percentages, answered exactly: a discount, a tip, tax, a rise or a fall by a
percentage, what percent one number is of another, and splitting a bill.

SmolLM2-135M gets these wrong ("If 25% off is 60 dollars, that means 1/4 * 3 = 7 cents per dollar", the second
held-out quality set, 2026-12-04). They are matched by their parts, not by whole sentences: one percentage, one
amount and a word that says what to do with them ("off", "tip", "tax", "increase", ...), so "If something costs
$60 and it's 25% off, how much do I pay?" is read like "25 percent off 60 dollars". A question with more numbers,
or with no such word, is left to the other skills and the LLM.

Amounts may be digits or words, with a currency ("$60", "60 dollars", "60 bucks", "€20", "20 euros", "£5",
"5 pounds") or without; the reply says the currency back, cents as a person says them ("64 dollars and 80 cents").
:func:`answer` takes the transcript as :func:`voice.skills.answer.answer` cleans it (lower case, no end mark). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voice.skills.numbers import DIGITS_PATTERN, NUMBER_PATTERN, parse_number, say_number

_NUMBER = NUMBER_PATTERN
CURRENCIES = {"dollar": "dollars", "buck": "dollars", "euro": "euros", "pound": "pounds", "quid": "pounds"}
_SYMBOLS = {"$": "dollars", "€": "euros", "£": "pounds"}
CENTS = (
    rf"(?: (?P<cents>{_NUMBER})(?=$|,| (?:and|so|but|how|what|what's|split|splitting|between|among|for|with|is|if|"
    r"a|an|each|per|apiece|on|at|in|to|from)\b))"
)
"""The cents said after a currency, as a regular expression ("three pounds twenty", "87 dollars fifty"): only before
an end or a word that joins, so "90 dollars 5 ways" is not 90.05."""
_AMOUNT = re.compile(rf"\b(?P<n>{_NUMBER})(?: (?P<cur>dollar|buck|euro|pound|quid)s?\b{CENTS}?)?")
_PERCENT = re.compile(rf"\b(?P<n>{_NUMBER}) percent\b")


@dataclass(frozen=True)
class _Amount:
    value: float
    currency: str | None


def normalize_money(t: str) -> str:
    """``t`` with "%" and "per cent" as "percent", "$60" as "60 dollars" (and "€", "£"), "a 60-dollar jacket" as
    "a 60 dollar jacket"."""
    t = re.sub(r"(?<=\d)\s*%", " percent", t.replace("per cent", "percent"))
    t = re.sub(rf"([$€£])\s?({DIGITS_PATTERN})", lambda m: f"{m.group(2)} {_SYMBOLS[m.group(1)]}", t)
    return re.sub(r"(?<=\d)-(?=(?:dollar|euro|pound)\b)", " ", t)  # "a 60-dollar jacket"


def with_cents(whole: float, cents: str | None) -> float | None:
    """``whole`` with ``cents`` said after its currency (None: none said) added; None when they are not 1-99."""
    if cents is None:
        return whole
    n = parse_number(cents)
    return None if n is None or not 0 < n < 100 or n != int(n) else whole + n / 100


def say_amount(x: float, currency: str | None) -> str:
    """An amount as the reply says it: "45 dollars", "64 dollars and 80 cents", "1 euro", "50 pence", or a bare
    number."""
    if currency is None:
        return say_number(round(x, 2))
    whole, part = divmod(round(x * 100), 100)
    unit = currency[:-1] if whole == 1 else currency
    small = ("penny" if part == 1 else "pence") if currency == "pounds" else ("cent" if part == 1 else "cents")
    if not part:
        return f"{whole} {unit}"
    return f"{whole} {unit} and {part} {small}" if whole else f"{part} {small}"


def _a(number: str) -> str:
    """ "A" or "An" before a number as said: "an 18 percent tip", "an 8", "an 11", "a 15"."""
    return "An" if number.startswith("8") or re.fullmatch(r"1[18](\d{3})*(\.\d+)?", number) else "A"


def _parts(t: str) -> tuple[list[float], list[_Amount]] | None:
    """The percentages of ``t`` and its other amounts; None if a number does not parse."""
    percents: list[float] = []
    for m in _PERCENT.finditer(t):
        if (p := parse_number(m.group("n"))) is None:
            return None
        percents.append(p)
    amounts: list[_Amount] = []
    for m in _AMOUNT.finditer(_PERCENT.sub(" ", t)):
        if (n := parse_number(m.group("n"))) is None or (n := with_cents(n, m.group("cents"))) is None:
            return None
        cur = m.group("cur")
        amounts.append(_Amount(n, CURRENCIES[cur] if cur else None))
    return percents, amounts


def answer(t: str) -> str | None:
    """The exact reply to a cleaned transcript ``t`` that asks one of these sums, else None."""
    t = normalize_money(t)
    if (share := _what_percent(t)) is not None:
        return share
    if (split := _split(t)) is not None:
        return split
    if (sum_ := _money_sum(t)) is not None:
        return sum_
    parts = _parts(t)
    if parts is None or len(parts[0]) != 1 or len(parts[1]) != 1:
        return None
    p, a = parts[0][0], parts[1][0]
    cur, said_p, said_a = a.currency, say_number(p), say_amount(a.value, a.currency)
    if re.search(r"\bpercent off\b|\b(?:discount|discounted|sale|reduced by)\b", t):
        cut = a.value * p / 100
        paid = say_amount(a.value - cut, cur)
        return f"{said_a} with {said_p} percent off is {paid}: you save {say_amount(cut, cur)}."
    if re.search(r"\b(?:tip|tips|tipping|gratuity)\b", t):
        tip = a.value * p / 100
        in_all = say_amount(a.value + tip, cur)
        return f"{_a(said_p)} {said_p} percent tip on {said_a} is {say_amount(tip, cur)}, {in_all} in all."
    if re.search(r"\b(?:tax|vat)\b", t):
        tax = a.value * p / 100
        return (
            f"{said_a} plus {said_p} percent tax is {say_amount(a.value + tax, cur)}; "
            f"the tax is {say_amount(tax, cur)}."
        )
    limit = re.sub(r"\b(?:no|not|never) (?:more|less) than\b", "", t)  # "no more than 10% of…": a limit, no change
    if re.search(r"\b(?:increase|increased|raise|raised|grows?|plus|add|more than|up)\b", limit):
        return f"{said_a} plus {said_p} percent is {say_amount(a.value * (1 + p / 100), cur)}."
    if re.search(r"\b(?:decrease|decreased|reduce|lower|lowered|minus|less than|down|drops?)\b", limit):
        return f"{said_a} minus {said_p} percent is {say_amount(a.value * (1 - p / 100), cur)}."
    if re.search(r"\bpercent of\b", t):
        return f"{said_p} percent of {said_a} is {say_amount(a.value * p / 100, cur)}."
    return None


_SUM_ASKED = re.compile(
    r"(?P<ask>what'?s |what is |how much is |how much are |add |adding |calculate |work out )?(?P<a>.+?)"
    r" (?P<op>plus|and|minus|take away|less) (?P<b>.+?)(?P<total> altogether| in total| together| all together)?"
)


def _money_sum(t: str) -> str | None:
    """Two amounts of money of one currency added or one taken from the other, said with the cents after the
    currency as people say prices ("what's sixty three pounds forty plus twenty eight pounds seventy"), which the
    arithmetic skill does not read; "and" adds only after "add" or before "altogether"."""
    m = _SUM_ASKED.fullmatch(t)
    if m is None or (m["op"] == "and" and not (m["ask"] in ("add ", "adding ") or m["total"])):
        return None
    a, b = (_AMOUNT.fullmatch(m[side]) for side in ("a", "b"))
    if a is None or b is None or not a["cur"] or CURRENCIES[a["cur"]] != CURRENCIES.get(b["cur"] or "", ""):
        return None
    x, y = (_with_cents(side) for side in (a, b))
    if x is None or y is None:
        return None
    cur = CURRENCIES[a["cur"]]
    if m["op"] in ("plus", "and"):
        return f"{say_amount(x, cur)} plus {say_amount(y, cur)} is {say_amount(x + y, cur)}."
    return f"{say_amount(x, cur)} minus {say_amount(y, cur)} is {say_amount(x - y, cur)}."


def _with_cents(m: re.Match[str]) -> float | None:
    n = parse_number(m["n"])
    return None if n is None else with_cents(n, m["cents"])


def _what_percent(t: str) -> str | None:
    """ "What percent of 60 is 15?", "15 is what percentage of 60?", "15 out of 60 as a percentage", "what percent
    is 18 out of 24", "18 out of 24 is what percent"."""
    n = _NUMBER
    m = (
        re.fullmatch(rf"(?:what|which) (?:percent|percentage) of (?P<b>{n}) is (?P<a>{n})", t)
        or re.fullmatch(rf"(?:what|which) (?:percent|percentage) is (?P<a>{n}) (?:out )?of (?P<b>{n})", t)
        or re.fullmatch(
            rf"(?:what is |what's )?(?P<a>{n}) (?:out of (?P<c>{n}) )?(?:is )?what (?:percent|percentage)"
            rf"(?: of (?P<b>{n}))?",
            t,
        )
        or re.fullmatch(
            rf"(?:what is |what's )?(?P<a>{n}) out of (?P<b>{n}) (?:as|in) (?:a )?(?:percent|percentage)", t
        )
        # "a student got 36 out of 40 what percentage is that": the score said first, then asked of
        or re.fullmatch(rf".*?\b(?P<a>{n}) out of (?P<b>{n}),? (?:so )?what (?:percent|percentage) is (?:that|it)", t)
    )
    if m is None:
        return None
    named = m.groupdict()
    whole, said_twice = named.get("b") or named.get("c"), named.get("b") and named.get("c")
    if whole is None or said_twice:
        return None  # "18 out of 24 is what percent" names the whole once
    a, b = parse_number(m.group("a")), parse_number(whole)
    if a is None or b is None or b == 0:
        return None
    return f"{say_number(a)} is {say_number(round(a / b * 100, 2))} percent of {say_number(b)}."


def _split(t: str) -> str | None:
    """ "Split 90 dollars between 4 people", "split a 120 dollar bill 3 ways", "divide 75 euros among 5 of us"."""
    if not re.search(r"\b(?:split|splitting|share|sharing|divide|divided)\b", t) and not re.search(
        r"\bhow much\b.*\b(?:each|everyone|everybody|per person|per head|a head|apiece)\b", t
    ):
        return None  # "split 90 dollars 4 ways", "the bill's 208 dollars for five of us, how much is that each"
    m = re.search(
        rf"\b(?:between|among|amongst|by|into|for)? ?(?P<n>{_NUMBER}) (?:people|persons|ways|of us|friends)\b",
        t,
    )
    if m is None:
        return None
    parts = _parts(t[: m.start()] + " " + t[m.end() :])
    if parts is None or parts[0] or len(parts[1]) != 1:
        return None
    before, after = t[: m.start("n")], t[m.end() :]
    if m.group().endswith("friends") and (
        re.search(r"\b(?:me|myself|i|us) and $|\bwith $", before) or re.match(r" and (?:me|i|myself)\b", after)
    ):
        # "me and three friends", "three friends and I", "I went out with three friends": the speaker pays too
        return _split_ways(parts[1][0], say_number((parse_number(m.group("n")) or 0) + 1))
    return _split_ways(parts[1][0], m.group("n"))


def _split_ways(a: _Amount, ways: str) -> str | None:
    """ "90 dollars split 4 ways is 22 dollars and 50 cents each."; None when ``ways`` is not a number of one or
    more."""
    if (people := parse_number(ways)) is None or people < 1:
        return None
    each = say_amount(a.value / people, a.currency)
    return f"{say_amount(a.value, a.currency)} split {say_number(people)} ways is {each} each."


_SPLIT_REPLY = re.compile(
    r"(?P<whole>\d[\d,]*(?:\.\d+)?)(?: (?P<cur>dollar|euro|pound)s?)?(?: and (?P<cents>\d+) (?:cents?|pence|penny))?"
    r" split \S+ ways is "
)
_SPLIT_AGAIN = re.compile(
    r"\W*(?:(?:and|so|ok|okay|no|now)[, ]+)?(?:(?:what|how) (?:if|about) )?"
    r"(?:(?:it'?s|it is|it was|it|we|they|there are|there were) )?(?:(?:split|shared|divided|split it|share it) )?"
    rf"(?:(?:between|among|amongst|by|into|for) )?(?P<n>{_NUMBER}) (?:people|persons|ways|of us|friends)"
    r"(?: instead)?"
)


def follow_up(t: str, previous_reply: str) -> str | None:
    """The same bill split another way, after a split: "...and what if it's split 5 ways?", "And between 4
    people?" (cleaned transcript ``t``, the previous answer ``previous_reply``); else None."""
    said, again = _SPLIT_REPLY.match(previous_reply), _SPLIT_AGAIN.fullmatch(t)
    if said is None or again is None or (whole := parse_number(said.group("whole"))) is None:
        return None
    total = whole + int(said.group("cents") or 0) / 100
    return _split_ways(_Amount(total, CURRENCIES.get(said.group("cur") or "")), again.group("n"))
