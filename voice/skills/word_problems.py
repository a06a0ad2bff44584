"""Word problems over the amounts the user said: what is left, what it all comes to, and a price or a length times
how many, in one turn or told in earlier ones.

SmolLM2-135M guesses these ("a latte's three pounds twenty … four of them how much is that" got "4 pounds twenty":
the thirtieth held-out set). They are read by a small grammar of quantities, not by templates:

- **A quantity** is a number and what follows it: a currency ("42 dollars", "£5", "three pounds twenty" is 3.20), a
  noun ("six miles", "forty two drops", "four of them"), or nothing. With "a", "an", "per" or "each" and a noun after
  it, or "each" alone, it is a **rate** ("110 euros a night", "95 an hour", "eleven and a half hours each", "8
  places at each"); so is one after "at" or after a count and "of" ("two hours at 95 an hour", "three shifts of
  twelve and a half hours").
- **A count times a rate** is a product: the count whose noun is the rate's ("eight nights" and "110 euros a
  night"), or the count just before a rate with no noun of its own ("four night shifts at eleven and a half hours
  each"), or a price and "N of them".
- **The question's words** say what to do (closed classes, :data:`_LEFT`, :data:`_TOTAL`): "left", "remaining",
  "to go", "how many more" take the smaller of exactly two amounts from the larger; "altogether", "in total", "in all",
  "combined" add the amounts (at least two, or a product); "how much" or "how many" of a product's kind is the
  product. One amount said in dozens is counted: "how many eggs is four dozen" (48).
- **Told earlier.** A question with one amount and no second (a follow-up: "if I spend 17 how much will I have
  left", "if I sell thirty how many will I have") starts from the one amount of its kind the user's earlier
  statements told (with two, which one is meant is not in the words, and none is read): a verb of giving or using
  up (:data:`_TAKING`) or "left" takes the new amount from it, one of getting (:data:`_GETTING`) or "more" adds
  it ("more" or "another" of what the statement told used up adds to it: "I've done 12" … "if I do another 8"),
  and "how many more" before a larger one is what it lacks ("19 kilos" … "how many more kilos can I add before
  I hit 23"); a told rate of its unit multiplies it ("my car does 40 miles per gallon" … "how far can I get on ten
  gallons"). "How much is that altogether" (or "what do those two fares add up to") with no amount adds the
  amounts the user's statements told, about themselves or not ("the second one was 27 dollars"), each saying what
  it counts, all of one kind; "how much have I got left" with none takes the one amount used up ("I've spent 140")
  from the one amount told.

Amounts must agree (two currencies, two nouns, or three numbers for a "left" go on), and a timer or a time of day
is the timers' and the clock's. The reply says the sum it did ("…leaves 8 miles."), so a misreading is heard. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from voice.skills.money_sums import CENTS, CURRENCIES, normalize_money, say_amount, with_cents
from voice.skills.numbers import NUMBER_PATTERN, parse_number, say_number
from voice.skills.units import UNCLEAR, convert
from voice.skills.word_classes import DETERMINERS, FUNCTION_WORDS, singular, words_in, words_of

_LEFT = re.compile(r"\b(?:left|remaining|remain|to go|still to)\b|\bhow (?:many|much)(?: [a-z]+)? more\b")
_HOW_MANY_MORE = re.compile(r"\bhow (?:many|much)(?: [a-z]+)? more\b")
"""Asks for a difference: "how many more kilos can I add before I hit 23" is 23 less what there is, not 23 more."""
_TOTAL = re.compile(
    r"\b(?:altogether|all together|in total|total|in all|combined|all in|overall|add up|adds up|whole|entire)\b"
)
_TAKING = words_of(
    "spend spent sell sold give gave use used eat ate lose lost pay paid drink drank take took send sent post posted "
    "deliver delivered do did done finish finished plant planted burn burned burnt remove removed throw threw donate "
    "donated lend lent break broke bake baked cook cooked"
)
"""Verbs that use an amount up or give it away: with a told amount, the new one is taken from it."""
_GETTING = words_of(
    "buy bought get got earn earned receive received add added find found win won save saved collect collected "
    "pick picked borrow borrowed"
)
"""Verbs that bring an amount in: with a told amount, the new one is added to it."""
_HOW = re.compile(
    r"\bhow (?:much|many|far|long)\b|\bwhat(?:'s| is| does| do)? (?:that|it|the total|this)\b"
    r"|\bwhat (?:did|do|will|would) (?:i|we|you) (?:spend|pay|owe)\b"  # "…what did I spend there": how much
)
_OWN = re.compile(r"\bhow (?:many|much) [a-z]+ (?:did|does|do|has|have|had|can|will|would)\b")  # a question of its own
_WHAT_THOSE = re.compile(r"\bwhat(?:'s| is| are| does| do)? (?:those|these|they)\b")
"""A question of the amounts told before, with none of its own: "what do those two fares add up to"."""
_BACK = re.compile(
    r"\b(?P<which>those|these)(?: two| three| four| 2| 3| 4)\b(?! (?:hundred|thousand|million|dozen|point|and)\b)"
)
"""A number of things a question refers back to ("what do those two fares add up to"): not an amount."""
_SMALL_COINS = {"cent": "dollars", "cents": "dollars", "pence": "pounds", "p": "pounds", "penny": "pounds"}
_ASKS = re.compile(r"\b(?:how|what|what's|whats)\b")
_CLOCK_OR_TIMER = re.compile(r"\b(?:timers?|alarms?|remind|o'? ?clock|am|pm|a\.m|p\.m|past|quarter to|half past)\b")
"""Timers and times of day: the timers and the clock skill read those, not sums of amounts."""
_NOT_NOUNS = frozenset({"more", "less", "out", "left", "remaining", "over", "already", "now"})
"""Words said after a number that do not say what it counts: "there's 90 left" counts what the other amount does."""
_QUANTITY = re.compile(
    rf"\b(?P<n>{NUMBER_PATTERN}(?: dozen\b)?)(?: (?P<cur>dollar|buck|euro|pound|quid)s?\b{CENTS}?)?"
    rf"(?: (?!(?:a|an|per|each|apiece)\b)(?P<noun>of them|(?:square |cubic )?[a-z]+(?:-(?!{NUMBER_PATTERN})[a-z]+)?))?"
    rf"(?: (?P<per>(?:a|an|per) [a-z]+|(?:(?:at|in|on|for) )?each|apiece))?\b"
)


_PRONOUN_ONE = re.compile(
    rf"\b(?:{'|'.join(sorted(DETERMINERS - {'one'}))}|other|same|first|second|third|last|next|big|small) $"
)
"""Words after which "one" stands for a thing, not a number: "this one", "the second one"."""


@dataclass(frozen=True)
class Quantity:
    """An amount the user said: its value, its currency or noun as said ("" for none; "them" in "four of them"),
    and for a rate what it is per ("night", "hour"; "each" for a rate of the count before it)."""

    value: float
    noun: str
    per: str = ""
    currency: bool = False
    more: bool = False  # said as "N more" with no noun ("I've got 14 more"): more of what the amount before counts

    @property
    def unit(self) -> str:
        """The noun in one form, to compare amounts: "nights" and "night" are one unit."""
        return self.noun if self.currency else singular(self.noun)

    def said(self) -> str:
        if self.currency:
            return say_amount(self.value, self.noun)
        if not self.noun or self.noun == "them":
            return say_number(self.value)
        return f"{say_number(self.value)} {self.noun}"

    def as_(self, noun: str, currency: bool) -> Quantity:
        """This amount in ``noun`` when it has none of its own ("a hundred and ten" beside "forty two drops")."""
        return Quantity(self.value, noun, self.per, currency) if self.noun in ("", "them") else self


def quantities(text: str) -> list[Quantity] | None:
    """The quantities said in ``text`` (cleaned), in order; None when a number does not parse."""
    spans = quantity_spans(text)
    return None if spans is None else [q for q, _ in spans]


def quantity_spans(text: str) -> list[tuple[Quantity, int]] | None:
    """:func:`quantities`, each with where it starts in ``normalize_money(text)``."""
    found: list[Quantity] = []
    starts: list[int] = []
    end = 0
    text = normalize_money(text)
    for m in _QUANTITY.finditer(text):
        if m.group("n") == "one" and _PRONOUN_ONE.search(text[: m.start()]):
            continue  # "the second one was 27 dollars"
        if text[: m.start()].endswith("point "):
            return None  # "point 2" with no number before it: a number misheard
        n = parse_number(m.group("n"))
        n = None if n is None else with_cents(n, m.group("cents"))
        if n is None:
            return None
        cur = CURRENCIES[m.group("cur")] if m.group("cur") else ""
        noun, per = m.group("noun") or "", m.group("per") or ""
        more = noun == "more" and not cur
        if noun in FUNCTION_WORDS or noun in _NOT_NOUNS:
            noun = ""
        per = "each" if per.endswith(("each", "apiece")) else singular(per.split()[1]) if per else ""
        gap = text[end : m.start()]
        counted = bool(found) and bool(found[-1].noun) and not found[-1].currency
        if not per and (gap.endswith(" at ") or (gap == " of " and counted)):
            per = "each"  # "two hours at 95 an hour" (above), "at 3 pounds 20", "three shifts of 12 hours"
        end = m.end()
        if not cur and noun in _SMALL_COINS:  # "75 cents each": counted in dollars, so the total is said in them
            n, cur, noun = n / 100, _SMALL_COINS[noun], ""
        found.append(Quantity(n, cur or ("them" if noun == "of them" else noun), per, currency=bool(cur), more=more))
        starts.append(m.start())
    return list(zip(found, starts, strict=True))


@dataclass(frozen=True)
class _Term:
    value: float
    said: str
    unit: Quantity  # the term's noun and currency, with value 1


def _terms(qs: list[Quantity]) -> list[_Term] | None:
    """The quantities as the terms of a sum: each rate times its count, the rest as they are; None when a rate has
    no count."""
    used: set[int] = set()
    terms: list[_Term] = []
    for r, rate in enumerate(qs):
        if not rate.per:
            continue
        if rate.per == "each":  # "four night shifts at eleven and a half hours each": the count just before
            count = next((i for i in range(r - 1, -1, -1) if i not in used and not qs[i].per), None)
        else:  # "110 euros a night" and "eight nights", before or after
            count = next((i for i, q in enumerate(qs) if i not in used and not q.per and q.unit == rate.per), None)
        if count is None:
            return None
        used.update({r, count})
        c = qs[count]
        said = f"{say_number(c.value)} times {rate.said()}" if rate.per == "each" else f"{c.said()} at {_per(rate)}"
        terms.append(_Term(c.value * rate.value, said, _one(rate)))
    rest = [q for i, q in enumerate(qs) if i not in used]
    them = [q for q in rest if q.noun == "them"]
    if them:  # "a latte's three pounds twenty and someone buys four of them"
        prices = [q for q in rest if q.currency]
        if len(them) != 1 or len(prices) != 1 or len(rest) != 2:
            return None
        n, price = them[0].value, prices[0]
        return [*terms, _Term(n * price.value, f"{say_number(n)} times {price.said()}", _one(price))]
    return [*terms, *(_Term(q.value, q.said(), _one(q)) for q in rest)]


def _per(rate: Quantity) -> str:
    """A rate as said: "110 euros a night", "95 an hour"."""
    vowel = rate.per[:1] in tuple("aeiou") or rate.per.startswith(("hour", "honest"))  # said with a vowel
    return f"{rate.said()} {'an' if vowel else 'a'} {rate.per}"


def _one(q: Quantity) -> Quantity:
    return Quantity(1.0, q.noun, currency=q.currency)


def _kind(units: Sequence[Quantity]) -> Quantity | None:
    """The one noun or currency the amounts share (one with none takes it), as a quantity of 1; None when two
    differ."""
    named = {u.unit: u for u in units if u.noun and u.noun != "them"}
    if len(named) > 1:
        return None
    return next(iter(named.values()), Quantity(1.0, ""))


def answer(t: str) -> str | None:
    """The reply to a word problem whose amounts are all in ``t`` (a cleaned transcript), else None."""
    return _in_unit_asked(_answer(t), t)


def _answer(t: str) -> str | None:
    if not _HOW.search(t) or told_by_clock(t):
        return None
    qs = quantities(t)
    if not qs:
        return None
    asked = asked_part(t)
    if _LEFT.search(asked) and len(qs) == 2 and not any(q.per for q in qs):
        if (kind := _kind(qs)) is None:
            return None
        big, small = sorted((q.as_(kind.noun, kind.currency) for q in qs), key=lambda q: q.value, reverse=True)
        return _leaves(big, small)
    terms = _terms(qs)
    if _asks_groups(t, asked):
        return None  # "48 cookies, 6 in each bag, how many bags": a division (voice.skills.ratios), not a product
    if len(qs) == 1 and not qs[0].per and re.search(r"\bdozens?\b", t):
        return _dozens(qs[0], asked)  # "how many eggs is four dozen"
    if terms is None or (len(terms) < 2 and len(terms) == len(qs)):
        return None  # one plain amount: nothing to do with it here
    if len(terms) > 1 and not _TOTAL.search(asked):
        return None  # several amounts, but no word says to add them
    kind = _kind([term.unit for term in terms])
    return None if kind is None else _comes_to(terms, kind)


_RESULT = re.compile(r" (?:leaves|comes to|makes|is) (?P<amount>-?[\d.]+ [a-z]+)\.$")
_UNIT_ASKED = re.compile(r"\bhow (?:many|much)(?: more)? (?P<unit>[a-z]+)")


def _asks_groups(t: str, asked: str) -> bool:
    """The question asks how many of the thing a rate is per ("6 in each bag … how many bags")."""
    unit = _UNIT_ASKED.search(asked)
    groups = {singular(m[1]) for m in re.finditer(r"\b(?:each|every|per) ([a-z]+)", t)}
    return unit is not None and singular(unit["unit"]) in groups


def _dozens(amount: Quantity, asked: str) -> str | None:
    """One amount said in dozens, counted: "how many eggs is four dozen" → "4 dozen is 48 eggs."."""
    unit = _UNIT_ASKED.search(asked)
    noun = unit["unit"] if unit and unit["unit"] not in FUNCTION_WORDS else amount.noun
    if not noun or noun in ("dozen", "dozens") or amount.value % 12 or (
            _OWN.search(asked) and amount.unit != singular(noun)):  # "…two dozen … how many wives did he have"
        return None  # "how many dozen is 24 eggs" asks the other way
    dozens = "A" if amount.value == 12 else say_number(amount.value / 12)
    return f"{dozens} dozen is {say_number(amount.value)} {noun}."


def _in_unit_asked(reply: str | None, t: str) -> str | None:
    """``reply`` with its result in the unit the question asks for, when it asks for another that the unit
    conversions know: "…i've done two and a half so how many more seconds" → "4 minutes minus 2.5 minutes leaves
    1.5 minutes. There are 90 seconds in 1.5 minutes." """
    found, asked = _RESULT.search(reply or ""), _UNIT_ASKED.search(asked_part(t))
    if reply is None or found is None or asked is None:
        return reply
    if singular(asked["unit"]) == singular(found["amount"].split()[-1]):
        return reply  # asked in the unit it is said in ("litres" is not "millilitres")
    converted = convert(f"how many {asked['unit']} in {found['amount']}")
    return f"{reply} {converted}" if converted and converted != UNCLEAR else reply


def asked_part(t: str) -> str:
    """The question of ``t``: from its last "how" or "what" on. The words that say what to do count only there:
    "the walls add up to 120 square metres, how many cans do we need" asks for no sum."""
    starts = [m.start() for m in _ASKS.finditer(t)]
    return t[starts[-1] :] if starts else t


def _leaves(big: Quantity, small: Quantity) -> str:
    left = Quantity(big.value - small.value, big.noun, currency=big.currency)
    return f"{big.said()} minus {small.said()} leaves {left.said()}."


def _comes_to(terms: Sequence[_Term], kind: Quantity) -> str:
    total = Quantity(sum(term.value for term in terms), kind.noun, currency=kind.currency)
    said = " plus ".join(term.said for term in terms)
    return f"{said[:1].upper()}{said[1:]} comes to {total.said()}."


def told_by_clock(t: str) -> bool:
    """``t`` names a timer or a time of day: the timers and the clock skill read those."""
    return bool(_CLOCK_OR_TIMER.search(t))


_LEAD_IN = r"(?:(?:ok(?:ay)?|so|and|well|right|um|uh)[, ]+)*"
_STATEMENT_START = re.compile(rf"{_LEAD_IN}(?:i|i'm|i've|i'd|my|we|we're|we've|our)\b")
"""How a statement about the user opens: an amount told in one is the user's own."""


def follow_up(t: str, earlier: Sequence[str]) -> str | None:
    """The reply to a word problem that builds on amounts the user told in ``earlier`` turns (their words, oldest
    first), else None."""
    return _in_unit_asked(_follow_up(t, earlier), t)


def _follow_up(t: str, earlier: Sequence[str]) -> str | None:
    t = _BACK.sub(lambda m: m["which"], t)
    if told_by_clock(t) or (qs := quantities(t)) is None or len(qs) > 1:
        return None
    if not qs and (_HOW.search(t) or _WHAT_THOSE.search(t)):
        return _total_told(t, earlier) or _left_told(t, earlier)
    if not _HOW.search(t):
        return None
    told_turns = _told_turns(earlier, _STATEMENT_START)
    if not (told := [turn_qs for _turn, turn_qs in told_turns]):
        return None
    new = qs[0]
    if new.per:
        return None
    rates = [q for turn in told for q in turn if q.per and q.per == new.unit]
    if len(rates) == 1:  # "my car does 40 miles per gallon" … "how far can I get on ten gallons"
        rate = rates[0]
        total = Quantity(new.value * rate.value, rate.noun, currency=rate.currency)
        return f"{new.said()} at {_per(rate)} is {total.said()}."
    # The start is the one amount of the new one's kind the user told: with two ("I owe Tom 15 pounds", "I owe Sarah
    # 20 pounds"), which one "how much will I still owe" starts from is not in the words. It must say what it
    # counts: a bare "I'm 42" is an age, not 42 of what a later "if I spend 17" spends.
    held = [(q, turn) for turn, turn_qs in told_turns for q in turn_qs if not q.per and q.noun not in ("", "them")]
    held = [(q, turn) for q, turn in held if _kind([q, new]) is not None]
    if len(held) != 1 or (kind := _kind([held[0][0], new])) is None:
        return None
    start, more = held[0][0].as_(kind.noun, kind.currency), new.as_(kind.noun, kind.currency)
    words = set(words_in(t))
    # "I've done 12 push-ups" … "if I do another eight": more of what was told done, not taken from it
    again = bool(words & {"more", "another"}) and bool(set(words_in(held[0][1])) & _TAKING)
    if _HOW_MANY_MORE.search(asked_part(t)):  # "19 kilos" … "how many more can I add before I hit 23": the difference
        return _leaves(more, start) if more.value > start.value else None
    if _LEFT.search(asked_part(t)) or (words & _TAKING and not again):
        return _leaves(start, more) if start.value >= more.value else None
    if words & _GETTING or words & {"more", "another"}:
        total = Quantity(start.value + more.value, start.noun, currency=start.currency)
        return f"{start.said()} plus {more.said()} makes {total.said()}."
    return None


def _total_told(t: str, earlier: Sequence[str]) -> str | None:
    """"How much is that altogether?" (a total word, no amount): the amounts the user's statements told, each saying
    what it counts ("14 more": what the one before counts), of one kind, about the user or not ("My first fare was 18
    dollars.", "The second one was 27 dollars."; "My bike weighs 8.2 kilos.", "The bottles add another 1.5 kilos.")."""
    amounts: list[Quantity] = []
    for q in (q for _turn, qs in _told_turns(earlier, _TOLD_START) for q in qs):  # "3 drops" … "14 more": 14 drops
        amounts.append(q.as_(amounts[-1].noun, amounts[-1].currency) if q.more and amounts else q)
    if not _TOTAL.search(asked_part(t)) or len(amounts) < 2 or any(q.per or q.noun in ("", "them") for q in amounts):
        return None
    kind = _kind(amounts)
    return None if kind is None else _comes_to([_Term(q.value, q.said(), _one(q)) for q in amounts], kind)


def _left_told(t: str, earlier: Sequence[str]) -> str | None:
    """"How much have I got left?" (no amount) after two statements about the user: one amount told, the other
    given or used up (a verb of :data:`_TAKING`), which may leave its kind unsaid ("My budget is 300 euros." … "I've
    spent 140 so far.")."""
    if not _LEFT.search(asked_part(t)) or _HOW_MANY_MORE.search(asked_part(t)):
        return None
    turns = [(qs, bool(set(words_in(turn)) & _TAKING)) for turn, qs in _told_turns(earlier, _STATEMENT_START)]
    held = [q for qs, taken in turns if not taken for q in qs]
    used = [q for qs, taken in turns if taken for q in qs]
    if len(held) != 1 or len(used) != 1 or held[0].noun in ("", "them") or held[0].per or used[0].per:
        return None
    if (kind := _kind([held[0], used[0]])) is None or used[0].value > held[0].value:
        return None
    return _leaves(held[0], used[0].as_(kind.noun, kind.currency))


_TOLD_START = re.compile(
    rf"{_LEAD_IN}(?:(?:i|i'm|i've|i'd|my|we|we're|we've|our|the|this|that|these|those|it|it's|they|his|her|their)\b"
    r"|(?!(?:what|how|who|which|where|when|why)\b)[a-z]+ (?:was|were|came to|cost)\b)"
)
"""How a statement of an amount opens, about the user or not ("the second one was 27 dollars", "lunch was 14")."""


def _told_turns(earlier: Sequence[str], start: re.Pattern[str]) -> list[tuple[str, list[Quantity]]]:
    """Each of the user's earlier statements (about themselves: ``start``) that held quantities, with them (oldest
    first); questions, requests and timers are passed over. None at all when a statement's number does not read
    ("parking was six fifty"): any sum of them might miss it."""
    told: list[tuple[str, list[Quantity]]] = []
    for text in (re.sub(r"[.!]+$", "", normalize_money(turn.lower().strip())) for turn in earlier):
        if "?" not in text and start.match(text) and not told_by_clock(text):
            if (qs := quantities(text)) is None:
                return []
            told += [(text, qs)] if qs else []
    return told
