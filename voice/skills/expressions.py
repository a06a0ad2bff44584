"""Arithmetic read as an expression wherever it stands in the transcript, not as a sentence template.

People wrap a sum in any words: "What, 17 times 3?", "so uh 12 plus 9 is what", "5 times 3 minus 2, quick".
The transcript is read as tokens of three classes (numbers, in digits or words: "17", "1,000", "two hundred and
five"; operators: plus, minus, times, x, multiplied by, divided by, over, percent of, squared, cubed, to the power
of, square root of, a fraction "of"; and the other words), and the expression is the longest run of numbers joined
by operators, computed with the usual precedence (times and divided by before plus and minus). The words around it
may be anything that asks for its result (:data:`voice.skills.word_classes.FUNCTION_WORDS`: "what", "is",
"equals", "tell me", "again", "please", punctuation), but never a word that makes a number part of something else:
a noun after the last number ("3 times 4 apples", "5 plus 5 in binary"), another number ("7 times 8 56"), or a
date or range written with "/" or "-" ("9/11", "24/7", "1990-1995"). Numbers in questions with no operator
("How many legs does a spider have?", "What happened in 1969?", "Set a timer for 5 minutes.") are left alone, and
conversions and money are the skills before this one (:mod:`voice.skills.units`, :mod:`voice.skills.money_sums`).

A sum asked for but not all heard ("What is 17 times?", "so 12 plus is what": a number, an operator and then
nothing but asking words; "hundred minus 275": a scale word whose first word was lost) is not handed to the LLM to
guess, and a sum with another number beside it in its sentence ("What is I 100 and I 99 minus 456?") is not
computed without it: :data:`UNCLEAR` asks for it again. Pure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from voice.skills.numbers import (
    NUMBER_WORDS,
    ORDINALS,
    fraction_words,
    parse_fraction,
    parse_number,
    say_number,
)
from voice.skills.word_classes import DETERMINERS, FUNCTION_WORDS, QUESTION_WORDS, REPAIR_MARKER, is_filler

UNCLEAR = "I didn't catch the numbers. Could you say the sum again?"
"""The reply to a sum asked for whose numbers were not all heard."""

_GLUED = "<glued>"
"""Stands for a "/" or "-" written between digits ("9/11", "24/7", "1990-1995"): a date or a range, not a sum."""
_TOKEN = re.compile(r"<glued>|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|[a-z]+(?:'[a-z]+)?|[^\s\w]")
_NUMBER_WORD = re.compile(rf"(?:{NUMBER_WORDS})")
_MULTIPLY = (("multiplied", "by"), ("times",), ("x",), ("*",))
_DIVIDE = (("divided", "by"), ("over",), ("/",))
_ADD = (("plus",), ("+",))
_SUBTRACT = (("minus",), ("take", "away"), ("-",))
_SAID = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}
_NOT_AFTER = frozenset({"in", "into", "as", "to", "of", "than", "on", "at", "for", "by", "from"})
"""Asking words that after a sum make it something else: "5 plus 5 in binary", "3 times 4 to the…"."""
_TAIL = frozenset({"is", "equals", "equal", "what", "what's", "please", "again", "then", "now", "to"})
"""What may follow an operator with no number after it, in a sum asked for but not all heard."""
_AMBIGUOUS = frozenset({"times", "x", "over", "-", "/", "*"})
"""Operators that are other words too ("3 times", "game over"): a sum only where a number is asked for."""
_ASKS_A_NUMBER = frozenset({"what", "what's", "whats", "calculate", "compute"})
_OPERATOR_WORDS = frozenset(
    {_GLUED, "minus", "negative", "plus", "times", "x", "over", "by", "root", "power", "point", *"+-*/"}
)
_FRACTION_WORDS = frozenset({"half", "halves", "third", "thirds", "quarter", "quarters", "fourth", "fourths"})
_LIMIT = 1e15
"""Results this large are too long to say."""


@dataclass(frozen=True)
class Part:
    """A parsed piece of an expression: its value, how the reply says it, where it ends, how many operations."""

    value: float
    said: str
    end: int
    ops: int


def tokens(text: str) -> list[str]:
    """``text`` as the expression reader sees it: lower case, "%" as "percent", "twenty-five" as two words,
    a "/" or "-" between digits as one token that joins nothing."""
    t = text.lower().replace("per cent", "percent").replace("×", " x ").replace("÷", " / ")
    t = re.sub(r"(?<=\d)\s*%", " percent", t)
    t = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", t)
    t = re.sub(r"(?<=\d)[/-](?=\d)", f" {_GLUED} ", t)
    t = re.sub(r"(?<=\d)\s*([x*+])\s*(?=\d)", r" \1 ", t)  # 6x7, 6+7
    return _TOKEN.findall(t)


def _is_number_token(tok: str) -> bool:
    return tok[:1].isdigit() or _NUMBER_WORD.fullmatch(tok) is not None


def _number(toks: list[str], i: int) -> tuple[float, int] | None:
    """The longest number starting at ``i`` ("two hundred and five", "a thousand", "1,000", "twenty six point
    two"): value and end."""
    if i >= len(toks):
        return None
    scale = toks[i + 1 : i + 2] in (["hundred"], ["thousand"], ["million"])
    if not (_is_number_token(toks[i]) or (toks[i] == "a" and scale)):
        return None
    best: tuple[float, int] | None = None
    j = i
    while j < len(toks) and (_is_number_token(toks[j]) or toks[j] in ("and", "a", "point")):
        j += 1
        if toks[j - 1] not in ("and", "a", "point") and (n := parse_number(" ".join(toks[i:j]))) is not None:
            best = (n, j)
    return best


def _match(toks: list[str], i: int, words: tuple[tuple[str, ...], ...]) -> int | None:
    """Where the first of ``words`` that stands at ``i`` ends."""
    for w in words:
        if tuple(toks[i : i + len(w)]) == w:
            return i + len(w)
    return None


def _power(a: float, p: float) -> float | None:
    try:
        result = a**p
    except (OverflowError, ZeroDivisionError):
        return None
    return result if isinstance(result, float) and math.isfinite(result) and abs(result) < _LIMIT else None


def _factor(toks: list[str], i: int) -> Part | None:
    """A number with what binds to it: minus 5, 3 squared, 2 to the power of 10, 20 percent of 150, the square
    root of 16, a third of 60."""
    k = i + 1 if toks[i : i + 1] == ["the"] else i
    if (j := _match(toks, k, (("square", "root", "of"), ("square", "root")))) is not None:
        f = _factor(toks, j) if j < len(toks) else None
        if f is None or f.value < 0:
            return None
        return Part(math.sqrt(f.value), f"the square root of {f.said}", f.end, f.ops + 1)
    for width in (2, 1):  # "a third of", "two thirds of", "half of"
        part = " ".join(toks[i : i + width])
        if len(toks) > i + width and toks[i + width] == "of" and (frac := parse_fraction(part)) is not None:
            f = _factor(toks, i + width + 1) if i + width + 1 < len(toks) else None
            if f is None:
                return None
            return Part(frac * f.value, f"{fraction_words(part)} of {f.said}", f.end, f.ops + 1)
    for width in (2, 1):  # a fraction alone: "three quarters", "a half", "2 thirds"
        if (frac := _fraction(toks, i, width)) is not None:
            part = " ".join(toks[i : i + width])
            return Part(frac, fraction_words(part), i + width, 0)
    sign = 1.0
    if toks[i] in ("minus", "negative", "-"):  # binds before a power: "minus 8 squared" is (-8)²
        sign, i = -1.0, i + 1
    found = _number(toks, i)
    if found is None:
        return None
    n, j = sign * found[0], found[1]
    said = say_number(n).replace("-", "minus ")
    if toks[j : j + 2] == ["percent", "of"] and (f := _factor(toks, j + 2) if j + 2 < len(toks) else None):
        return Part(n * f.value / 100, f"{said} percent of {f.said}", f.end, f.ops + 1)
    return _raised(toks, j, n, said)


def _raised(toks: list[str], j: int, n: float, said: str) -> Part | None:
    """The number ``n`` (said ``said``) that ends at ``j``, with the power after it if one is said: "squared",
    "cubed", "(raised) to the power of 10", "to the 10th (power)", "to the fourth"."""
    if j < len(toks) and toks[j] in ("squared", "cubed"):
        power = 2.0 if toks[j] == "squared" else 3.0
        result = _power(n, power)
        return Part(result, f"{said} {toks[j]}", j + 1, 1) if result is not None else None
    k = j + 1 if toks[j : j + 1] == ["raised"] else j
    p = _ordinal(toks, k + 2) if toks[k : k + 2] == ["to", "the"] else None  # "to the 10th (power)"
    if p is None and toks[k : k + 4] == ["to", "the", "power", "of"]:
        p = _number(toks, k + 4)
    if p is not None:
        result = _power(n, p[0])
        return (
            Part(result, f"{said} to the power of {say_number(p[0])}", p[1], 1)
            if result is not None
            else None
        )
    return Part(n, said, j, 0)


def _ordinal(toks: list[str], i: int) -> tuple[float, int] | None:
    """A power said as an ordinal at ``i`` ("10th", "fourth", "tenth power"): its value and where it ends."""
    if toks[i : i + 1] and toks[i].isdigit() and toks[i + 1 : i + 2] in (["st"], ["nd"], ["rd"], ["th"]):
        value, end = float(toks[i]), i + 2
    elif toks[i : i + 1] and toks[i] in ORDINALS:
        value, end = float(ORDINALS[toks[i]]), i + 1
    else:
        return None
    return value, end + 1 if toks[end : end + 1] == ["power"] else end


def _fraction(toks: list[str], i: int, width: int) -> float | None:
    """The fraction ``toks[i : i + width]`` names, if it ends in a fraction word ("three quarters", "a half",
    "half"; not "three" or "a hundred")."""
    if i + width > len(toks) or toks[i + width - 1] not in _FRACTION_WORDS:
        return None
    return parse_fraction(" ".join(toks[i : i + width]))


def _chain(toks: list[str], i: int, inner: bool) -> Part | None:
    """Terms joined by plus and minus (``inner``: factors joined by times and divided by), left to right."""
    left = _factor(toks, i) if inner else _chain(toks, i, True)
    if left is None:
        return None
    ops = (("*", _MULTIPLY), ("/", _DIVIDE)) if inner else (("+", _ADD), ("-", _SUBTRACT))
    while True:
        for sign, words in ops:
            j = _match(toks, left.end, words)
            if j is None or j >= len(toks):
                continue
            right = _factor(toks, j) if inner else _chain(toks, j, True)
            if right is None:
                continue
            a, b = left.value, right.value
            if sign == "/":
                value = a / b if b else math.nan  # NaN: divides by zero somewhere
            else:
                value = a * b if sign == "*" else a + b if sign == "+" else a - b
            left = Part(value, f"{left.said} {_SAID[sign]} {right.said}", right.end, left.ops + right.ops + 1)
            break
        else:
            return left


def _fits(toks: list[str], start: int, end: int) -> bool:
    """The words around ``toks[start:end]`` leave it a sum: no number, date or operator before it, and after it
    only punctuation or words that ask for its result."""
    if start > 0 and (toks[start - 1][:1].isdigit() or toks[start - 1] in _OPERATOR_WORDS):
        return False  # a number or an operator before it: part of a sum that did not parse whole
    if end == len(toks):
        return True
    after = toks[end]
    if after == _GLUED or _is_number_token(after):
        return False
    if not after[:1].isalpha():
        return True
    return after in FUNCTION_WORDS - _NOT_AFTER or is_filler(after)


def find(text: str) -> Part | None:
    """The one expression ``text`` holds (at least one operation), or None (none, or more than one)."""
    found = _find(tokens(text))
    return found[1] if found else None


def _find(toks: list[str]) -> tuple[int, Part] | None:
    """Where the one expression of ``toks`` starts, and the expression; None: none, or more than one."""
    found: list[tuple[int, Part]] = []
    i = 0
    while i < len(toks):
        part = _chain(toks, i, False)
        if part is not None and part.ops and _fits(toks, i, part.end):
            found.append((i, part))
            i = part.end
        else:
            i += 1
    return found[0] if len(found) == 1 else None


_ENDS = frozenset({".", "?", "!"})
_OPENS = re.compile(rf"{REPAIR_MARKER}|(?:{'|'.join(QUESTION_WORDS)})(?:'[a-z]+)?")
"""A word after which the question of a sum may start: a repair ("20, no, 30 times 4") or a question word ("…10,000
steps a day, and unrelated, what's the square root of 81")."""


def _stray_number(toks: list[str], start: int, end: int) -> bool:
    """A number said beside the sum ``toks[start:end]`` but not in it: in its sentence after it ("say the 3 minus 4
    is 7"), or before it since the last question word or repair ("What is I 100 and I 99 minus 456?" for "nine
    hundred and ninety nine minus four hundred and fifty six"). Some of the sum was heard as other words, so its
    result would answer a sum nobody asked. "one" alone is left out ("which one is 3 times 4")."""
    first = 0
    for k in range(start):
        if toks[k] in _ENDS or _OPENS.fullmatch(toks[k]) or (k and _OPENS.fullmatch(f"{toks[k - 1]} {toks[k]}")):
            first = k + 1
    last = next((k for k in range(end, len(toks)) if toks[k] in _ENDS), len(toks))
    outside = [*toks[first:start], *toks[end:last]]
    return any(_is_number_token(tok) and tok != "one" for tok in outside)


def _only_asking(words: list[str]) -> bool:
    return all(w in FUNCTION_WORDS or is_filler(w) or not w[:1].isalnum() for w in words)


def _content_word(toks: list[str], i: int) -> bool:
    """``toks[i]`` is a word that means something (not a number, an operator, a function word or a filler)."""
    tok = toks[i] if 0 <= i < len(toks) else ""
    return (
        tok[:1].isalpha()
        and not _is_number_token(tok)
        and tok not in FUNCTION_WORDS | _OPERATOR_WORDS
        and not is_filler(tok)
    )


_SOUNDS_LIKE_A_NUMBER = frozenset({"for", "to", "too", "ate", "won"})
"""Words Whisper writes for "four", "two", "eight", "one" said after another number ("twenty twenty four")."""


def _left_operand(toks: list[str], op: int) -> tuple[int, bool] | None:
    """Where the operand before the operator at ``op`` starts, and whether it is a number: the longest number
    ending there, else one word that means something ("due" for a "two" misheard); None: neither."""
    for s in range(op):
        if (found := _number(toks, s)) is not None and found[1] == op:
            return s, True
    if toks[op - 1] in ("hundred", "thousand", "million"):
        return op - 1, False  # a scale word alone: its first word was lost ("hundred minus 275")
    if toks[op - 1] in _SOUNDS_LIKE_A_NUMBER and op >= 2 and _is_number_token(toks[op - 2]):
        return op - 2, False  # "2020 for minus 1987": "2024" with its last word heard as "for"
    return (op - 1, False) if _content_word(toks, op - 1) else None


def _right_operand(toks: list[str], q: int) -> tuple[int, bool | None]:
    """Where the operand after an operator ending at ``q`` ends, and whether it is a number (None: there is none)."""
    if q < len(toks) and (part := _factor(toks, q)) is not None:
        return part.end, True
    return (q + 1, False) if _content_word(toks, q) else (q, None)


def unclear(text: str) -> bool:
    """A sum asked for whose numbers were not all heard: around an operator, one operand is a number and the other
    is missing ("What is 17 times?", "so 12 plus is what", "what's the square root of"), a single word that is
    no number ("What is due to the power of ten?", "What's 12.5 times forward?": "two" and "four" misheard) or a
    scale word alone ("hundred minus 275": "six hundred" with its first word lost), with
    nothing around them but asking words. An operator that is another word too ("times", "over") counts only
    where a number is asked for ("what", "calculate")."""
    toks = tokens(text)
    ops = (*_MULTIPLY, *_DIVIDE, *_ADD, *_SUBTRACT, ("percent", "of"), ("to", "the", "power", "of"))
    for op in range(1, len(toks)):
        if (q := _match(toks, op, ops)) is None or (left := _left_operand(toks, op)) is None:
            continue
        (start, left_number), (end, right_number) = left, _right_operand(toks, q)
        if left_number == bool(right_number) or (not left_number and right_number is None):
            continue  # both numbers (not a sum this reads: find() had its chance), or no number at all
        before, rest = toks[:start], toks[end:]
        if before[-1:] and before[-1] in DETERMINERS:
            continue  # "the 2 times table": a number after an article names something
        if toks[op] in _AMBIGUOUS and not _ASKS_A_NUMBER & {*before, *rest}:
            return False  # "is it 5 over?", "3 times?": a question about something else
        return _only_asking(before) and all(w in _TAIL or is_filler(w) or not w[:1].isalnum() for w in rest)
    words = [w for w in toks if w[:1].isalnum() and not is_filler(w)]
    for root in (["square", "root", "of"], ["square", "root"]):
        if words[-len(root) :] == root:
            return _only_asking(words[: -len(root)])
    return False


def answer(text: str) -> str | None:
    """The result of the expression ``text`` holds ("17 times 3 is 51."), :data:`UNCLEAR` for a sum not all
    heard (an operand missing, or a number beside the sum that is not in it), or None (no sum: the other skills or
    the LLM answer)."""
    toks = tokens(text)
    found = _find(toks)
    if found is not None:
        start, part = found
        if _stray_number(toks, start, part.end):
            return UNCLEAR
        if math.isnan(part.value):
            return "Dividing by zero has no answer."
        if abs(part.value) >= _LIMIT:
            return None
        reply = f"{part.said} is {say_number(part.value)}."
        return reply[:1].upper() + reply[1:]
    return UNCLEAR if unclear(text) else None
