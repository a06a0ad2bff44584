"""An elliptical follow-up ("How about Germany?") written out in full from the user's previous question.

After "What is the capital of France?", a person hears "How about Germany?" as "What is the capital of
Germany?". SmolLM2-135M did not: it answered "Germany is also known as the German Reich." (the second held-out
quality set, 2026-12-04), and "And in half a mile?" after "How many feet are in a mile?" reached neither the unit
skill nor a right answer. :func:`resolve` writes such a follow-up out, from the previous user question alone:

- "How about Y?" / "What about Y?" (also after "and"): Y takes the place of the previous question's last name
  (a run of capitalised words: "France", "New York", "Romeo and Juliet") when Y is a name too; when Y ends in
  a unit, of the question's last amount if Y has a number ("What about twenty miles?" after "Convert five miles
  to kilometres."), else of what follows its last preposition if that is a unit too ("How many grams are in a
  pound?" … "What about an ounce?"); when Y is a bare number, of the number of the question's only amount ("And
  what about 10?" after "Convert 5 kilometers to miles."; not after "What is 6 times 7?"). Not otherwise: "How
  about a joke?" after a question about the weather in Paris is a new request, not "the weather in a joke";
- "And P Y?" or "How about P Y?", P a preposition ("And of Spain?", "And in half a mile?"): Y takes the place
  of what follows the previous question's last P;
- "And Y?", Y a name ("And Italy?"): as "How about Y?" with a name;
- "And a Y?" / "And the Y?" ("And a spider?" after "How many legs does an insect have?"): Y takes the place of
  the previous question's noun phrase with the same noun, else of its only one (not a definite one for an
  indefinite Y: "And a joke?" after "What's the weather in Paris?" stays as it is). "How about a Y?" only takes
  the place of a phrase with the same noun ("What about a basketball team?" after "… a soccer team …").

Anything else is left as it is (None): a pronoun or no word for Y ("What about you?", "What about 20%?"), more
than a short phrase, a previous message that is not a question, or nothing in it to replace. A follow-up of a
follow-up is resolved from the previous one written out (:func:`voice.conversation.follow_ups.resolve_messages`). Pure.
"""

from __future__ import annotations

import re

from voice.conversation.pronouns import NAME
from voice.conversation.user_text import QUESTION_WORDS, strip_interjections
from voice.skills.numbers import NUMBER_WORDS
from voice.skills.units import is_unit

_PREPOSITIONS = ("of", "in", "for", "to", "at", "from", "on", "with", "into", "per")
_P = "|".join(_PREPOSITIONS)
_FOLLOW_UP = re.compile(
    rf"^(?:(?:and|so|ok|okay|then),? )?(?P<how>(?:how|what) about )?(?:(?P<p>{_P}) )?"
    r"(?P<y>(?:[^?!.]|(?<=\d)\.(?=\d))+?)\s*[?!.]*$",  # "2.5 miles": a decimal point does not end Y
    re.IGNORECASE,
)
_AND = re.compile(r"^and\b", re.IGNORECASE)
_NOT_Y = frozenset({
    "me", "you", "him", "her", "it", "them", "us", "that", "this", "those", "these", "yours", "mine", "there",
    "then", "now", "so", "too", "yourself", "myself", "everything", "anything", "something", "nothing",
})  # fmt: skip
_MAX_Y_WORDS = 6
_ARTICLES = frozenset({"a", "an", "the"})
_ASKS_FOR_AN_ANSWER = frozenset({"convert", "calculate", "compute", "tell", "name", "give", "list"})
#: Words that end a noun phrase ("an insect | have", "a soccer team | have on the field").
_ENDS_PHRASE = QUESTION_WORDS | frozenset(_PREPOSITIONS) | frozenset({
    "have", "has", "had", "be", "been", "and", "or", "than", "that", "live", "weigh", "cost", "take", "eat", "get",
    "make", "need", "go", "run", "fly", "swim", "grow", "last", "mean", "called", "about", "like",
})  # fmt: skip


def resolve(follow_up: str, previous: str) -> str | None:
    """``follow_up`` written out in full from ``previous``, the user's question before it; None when it is
    not an elliptical follow-up of that question (then the words stand as they are)."""
    follow_up = strip_interjections(follow_up)  # "Um, and what about Germany?"
    m = _FOLLOW_UP.match(follow_up)
    prev = previous.strip().rstrip("?!. ")
    if m is None or not _is_question(previous):
        return None
    how, p, y = m.group("how"), m.group("p"), m.group("y").strip()
    words = y.split()
    if not words or len(words) > _MAX_Y_WORDS or words[0].lower() in QUESTION_WORDS | _NOT_Y:
        return None
    said_and = _AND.match(follow_up.strip()) is not None
    if _BARE_NUMBER.fullmatch(y):  # "And what about 10?" after "Convert 5 kilometers to miles."
        out = _replace_number(prev, y) if how is not None or said_and else None
        return None if out is None else out + "?"
    if not re.search(r"[A-Za-z]", y):
        return None
    name = _is_name(y)
    thing = not name and words[0].lower() in _ARTICLES and len(words) > 1
    amount = is_unit(words[-1]) and _has_number(y)  # "And 250 feet?" after "Convert 100 feet to metres."
    if how is None and p is None and not ((name or thing or amount) and said_and):
        return None
    if p is not None:
        out = _after_preposition(prev, p.lower(), y)
    elif name:
        out = _replace_name(prev, y)
    elif is_unit(words[-1]):
        out = _replace_amount_or_unit(prev, y)
    elif thing:
        out = _replace_thing(prev, y, only_same_noun=how is not None)
    else:
        out = None
    return None if out is None else out + "?"


_NUMBER_WORD = rf"(?:{NUMBER_WORDS}|a|an|half|and)"
_AMOUNT = re.compile(rf"\b(?:\d[\d,.]*|{_NUMBER_WORD}(?:[\s-]+{_NUMBER_WORD})*)\s+(?:degrees?\s+)?\S+")
"""A number and the word after it (its unit, when that is one): "5 miles", "twenty five kilos", "20 degrees Celsius"."""


_BARE_NUMBER = re.compile(
    rf"(?:(?:minus|negative) |-)?(?:\d[\d,]*(?:\.\d+)?|(?:{NUMBER_WORDS})(?:[\s-]+(?:{NUMBER_WORDS}|and))*)",
    re.IGNORECASE,
)
"""A number and nothing else: "10", "2.5", "twenty five", "two hundred and ten", "minus 10"."""
_A_NUMBER = re.compile(rf"\d[\d,.]*|\b(?:{NUMBER_WORDS})\b", re.IGNORECASE)


def _replace_number(prev: str, y: str) -> str | None:
    """The number of ``prev``'s only amount replaced by ``y`` ("10" for the "5" of "Convert 5 kilometers to
    miles."); None unless ``prev`` has one amount of a unit and no other number ("What is 6 times 7?" … "What
    about 8?" could be either number)."""
    amounts = _amounts(prev)
    if len(amounts) != 1:
        return None
    amount = amounts[0].group()
    unit = re.search(r"\s+(?:degrees?\s+)?\S+$", amount)
    if unit is None or len(_A_NUMBER.findall(amount[: unit.start()])) != len(_A_NUMBER.findall(prev)):
        return None  # another number outside the amount
    return prev[: amounts[0].start()] + y + amount[unit.start() :] + prev[amounts[0].end() :]


def _has_number(text: str) -> bool:
    return _A_NUMBER.search(text) is not None


def _amounts(prev: str) -> list[re.Match[str]]:
    """``prev``'s amounts of a unit ("5 miles", "twenty five kilos"), in order."""
    return [m for m in _AMOUNT.finditer(prev) if _has_number(m.group()) and is_unit(m.group().split()[-1])]


def _replace_amount_or_unit(prev: str, y: str) -> str | None:
    """An amount for an amount ("twenty miles" for the "ten miles" of "How many kilometres are in ten miles?"),
    a unit for a unit ("an ounce" for the "a pound" of "How many grams are in a pound?"): "What about 30 degrees
    Celsius?" is not the unit asked for in "What is 20 degrees Celsius in Fahrenheit?"."""
    if _has_number(y):
        amounts = _amounts(prev)
        if not amounts:
            return None
        last = amounts[-1]
        return prev[: last.start()] + y + prev[last.end() :]
    at = _last_preposition(prev, None)
    if at is None or not is_unit(prev.split()[-1]) or _has_number(prev[at.end() :]):
        return None
    return _after_preposition(prev, None, y)


def _is_question(text: str) -> bool:
    """A question, or a request for an answer ("Convert five miles to kilometres.")."""
    t = text.strip()
    first = t.split()[0].lower().strip(",") if t else ""
    return t.endswith("?") or first in QUESTION_WORDS | _ASKS_FOR_AN_ANSWER


def _is_name(y: str) -> bool:
    words = y.split()
    if words[0].lower() == "the" and len(words) > 1:
        words = words[1:]
    return words[0][:1].isupper() and words[0] != "I"


def _replace_name(prev: str, y: str) -> str | None:
    """``prev`` with its last name (not its first word) replaced by the name ``y``."""
    names = [n for n in NAME.finditer(prev) if n.start() > 0 and n.group() != "I"]
    if not names:
        return None
    last = names[-1]
    before = prev[: last.start()]
    if re.search(r"\bthe\s+$", before, re.IGNORECASE) and y.lower().startswith("the "):
        y = y[4:]
    return before + y + prev[last.end() :]


def _replace_thing(prev: str, y: str, *, only_same_noun: bool) -> str | None:
    """``prev`` with one of its noun phrases ("an insect", "a soccer team") replaced by ``y`` ("a spider"): the
    one with ``y``'s last word, else (unless ``only_same_noun``) its only one, unless that is definite and ``y``
    is not ("the weather" … "a joke")."""
    words = prev.split()
    phrases: list[tuple[int, int]] = []  # word spans [start, end)
    for i, w in enumerate(words):
        if w.lower() in _ARTICLES:
            end = i + 1
            while (
                end < len(words)
                and end - i <= 3
                and words[end].lower().strip(",") not in _ENDS_PHRASE | _ARTICLES
            ):
                end += 1
            if end > i + 1:
                phrases.append((i, end))
    noun = y.split()[-1].lower()
    same = [(a, b) for a, b in phrases if words[b - 1].lower().strip(",") == noun]
    # "the weather" is not one of a kind that "a joke" is another of; "an insect" and "the spider" are.
    kind = [(a, b) for a, b in phrases if not (words[a].lower() == "the" and y.split()[0].lower() != "the")]
    chosen = same or ([] if only_same_noun or len(phrases) != 1 else kind)
    if len(chosen) != 1:
        return None
    a, b = chosen[0]
    return " ".join([*words[:a], y, *words[b:]])


def _after_preposition(prev: str, p: str | None, y: str) -> str | None:
    """``prev`` with what follows its last preposition ``p`` (None: any of them) replaced by ``p y``."""
    at = _last_preposition(prev, p)
    if at is None or at.end() >= len(prev):
        return None
    return f"{prev[: at.end()]} {y}"


def _last_preposition(prev: str, p: str | None) -> re.Match[str] | None:
    found = list(re.finditer(rf"\b(?:{p if p is not None else _P})\b", prev, re.IGNORECASE))
    return found[-1] if found else None
