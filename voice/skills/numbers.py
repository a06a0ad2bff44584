"""Numbers as Whisper writes them: digits ("42", "4,200", "2.5") or words ("seven", "two hundred and five");
and numbers as the assistant says them back (no trailing ".0")."""

from __future__ import annotations

import math
import re

_UNIT_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
)
_TEN_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_UNITS = {w: i for i, w in enumerate(_UNIT_WORDS.split(" "))}
_TENS = {w: 10 * i for i, w in enumerate(_TEN_WORDS.split(" "), start=2)}
_SCALES = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 1_000_000}
_FILLER = {"and", "a", "after", "by", "the"}
_DIGITS = {w: str(i) for i, w in enumerate(_UNIT_WORDS.split(" ")[:10])} | {"oh": "0", "o": "0"}
"""The digits said one by one after "point"."""
NUMBER_WORDS = "|".join(sorted((*_UNITS, *_TENS, *_SCALES), key=len, reverse=True))
"""The words of a number said in words, as a regular expression's alternatives, longest first ("seventeen|...|
seven"): a regular expression takes the first alternative that matches, so "eighty" must come before "eight"."""
DIGITS_PATTERN = r"\d+(?:,\d{3})*(?:\.\d+)?"
"""A number in digits, as a regular expression: "42", "4,200", "2.5"; a comma that no three digits follow ends it
("$45, how much…")."""
_AND_A_PART = {"a half": 0.5, "a quarter": 0.25, "three quarters": 0.75}
"""The part of a mixed number said after "and": "seven and a half", "2 and three quarters"."""
NUMBER_PATTERN = (
    rf"(?:(?:{DIGITS_PATTERN}|(?:a[\s-]+(?=(?:dozen|hundred|thousand|million)\b))?(?:{NUMBER_WORDS})\b"
    rf"(?:[\s-]+(?:and[\s-]+)?(?:{NUMBER_WORDS})\b)*(?:\s+point(?:\s+(?:{'|'.join(_DIGITS)})\b)+)?)"
    rf"(?:\s+and\s+(?:{'|'.join(_AND_A_PART)})\b)?)"
)
"""A number as Whisper writes it, as a regular expression: digits ("4,200", "2.5") or words ("two hundred and
five", "a hundred and twenty", "one point two"), maybe with a half or quarters ("seven and a half"), which
:func:`parse_number` reads."""


def parse_number(text: str) -> float | None:
    """``"42"``, ``"4,200"``, ``"2.5"``, ``"seven"``, ``"two hundred and five"``, ``"a thousand"``, ``"a dozen"``,
    ``"minus 10"``, ``"twenty six point two"`` (the digits after "point" said one by one), ``"seven and a half"``; else
    None. A scale word with nothing before it (``"hundred"``, ``"thousand and five"``) is None: nobody says a
    number so, and Whisper writes it when the first word was lost ("six hundred minus …" heard as "hundred minus
    …")."""
    # Only a thousands separator goes: another comma is a list ("1,000, 100 and 75"), which parses as no number.
    t = re.sub(r",(?=\d{3}\b)", "", text.strip().rstrip(",").lower())
    if mixed := re.fullmatch(rf"(.+?)\s+and\s+({'|'.join(_AND_A_PART)})", t):
        return _mixed(_whole(mixed.group(1)), _AND_A_PART[mixed.group(2)])
    return _whole(t)


def _whole(t: str) -> float | None:
    """:func:`parse_number` of ``t`` (lower case, no thousands separator) without a part after "and"."""
    if (m := re.fullmatch(r"(?:minus|negative)\s+(.+)", t)) and (n := _whole(m.group(1))) is not None:
        return -n
    if re.fullmatch(r"-?\d+(\.\d+)?", t):
        return float(t)
    if m := re.fullmatch(r"(.*?)\s*\bpoint\s+(.+)", t):  # "twenty six point two", "three point one four", "point 5"
        whole = parse_number(m.group(1)) if m.group(1) else 0.0
        digits = [_DIGITS.get(w, w) for w in m.group(2).split()]
        if whole is None or not all(re.fullmatch(r"\d", d) for d in digits):
            return None
        return whole + float("0." + "".join(digits)) * (-1 if whole < 0 else 1)
    words = [w for w in re.split(r"[\s-]+", t) if w]
    if not words or all(w in _FILLER for w in words):
        return None
    total, current, seen, closed, said_a = 0, 0, False, False, False
    for w in words:
        if w in _FILLER:
            said_a = said_a or w == "a"
            continue
        if w in _SCALES:
            if not seen and not said_a:
                return None  # "hundred" alone is no number: its first word was not heard ("six hundred")
            current = max(current, 1) * _SCALES[w]
            if _SCALES[w] >= 1000:
                total, current = total + current, 0
            seen, closed = True, False
            continue
        value = _UNITS.get(w, _TENS.get(w, int(w) if re.fullmatch(r"\d+", w) else None))
        # A part adds only into the places still empty: "twenty five", "two hundred and 5", "20 5"; never
        # "three eight seven" or "3 8 7" (digits said one by one, or two numbers), which would sum to 18.
        if value is None or closed or current % 10 ** len(str(value)) != 0:
            return None
        current += value
        seen, closed = True, value < 20
    return float(total + current) if seen else None


def _mixed(whole: float | None, part: float) -> float | None:
    """A whole number and a part said after it: "seven and a half", "12 and three quarters", "minus 2 and a half"."""
    return None if whole is None else whole + part * (-1 if whole < 0 else 1)


ORDINALS = {
    "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "eleventh": 11, "twelfth": 12,
}  # fmt: skip
"""Ordinal words as a power is said with them: "seven to the fourth", "two to the tenth (power)"."""


def say_number(x: float) -> str:
    if math.isclose(x, round(x), abs_tol=1e-9):
        return str(round(x))
    return f"{x:.4f}".rstrip("0").rstrip(".")


_FRACTION_WORDS = {
    "half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
    "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "eighth": 8, "eighths": 8, "tenth": 10, "tenths": 10,
}  # fmt: skip


_ORDINAL_DIGITS = {
    "3rd": "third",
    "4th": "quarter",
    "5th": "fifth",
    "6th": "sixth",
    "8th": "eighth",
    "10th": "tenth",
}


def fraction_words(text: str) -> str:
    """``text`` with fractions Whisper wrote in digits said in words: "2 3rds" → "2 thirds", "a 4th" → "a
    quarter" (for the reply, which is spoken)."""

    def word(m: re.Match[str]) -> str:
        return _ORDINAL_DIGITS[m.group(1).lower()] + m.group(2)

    return re.sub(r"\b(3rd|4th|5th|6th|8th|10th)(s?)\b", word, text, flags=re.IGNORECASE)


def parse_fraction(text: str) -> float | None:
    """A fraction as said or written: ``"half"``, ``"a third"``, ``"two thirds"``, ``"three quarters"``,
    ``"3/4"``, ``"2 3rds"`` (as Whisper writes it); else None. Whole numbers are not fractions here
    (:func:`parse_amount` takes both)."""
    t = " ".join(fraction_words(text).strip().lower().replace("-", " ").split())
    if m := re.fullmatch(r"(\d+)\s*/\s*(\d+)", t):
        den = int(m.group(2))
        return int(m.group(1)) / den if den else None
    m = re.fullmatch(r"(?:([a-z]+|\d+) )?([a-z]+)", t)
    if not m or m.group(2) not in _FRACTION_WORDS:
        return None
    said = m.group(1)
    count = 1.0 if said in (None, "a", "an", "one") else parse_number(said)
    if count is None or (count != 1 and not m.group(2).endswith("s")):
        return None
    return count / _FRACTION_WORDS[m.group(2)]


def parse_amount(text: str) -> float | None:
    """A number, a fraction, or both: ``"3"``, ``"half a"``, ``"a quarter of an"`` (before a unit),
    ``"one and a half"``, ``"2 and three quarters"``, ``"1.5"``, a fraction of a dozen or more (``"half a dozen"``);
    else None."""
    t = " ".join(text.strip().lower().split())
    if (m := re.fullmatch(r"(.+?) (?:of )?an? (dozen|hundred|thousand|million)", t)) and (
        part := parse_fraction(m.group(1))
    ) is not None:
        return part * _SCALES[m.group(2)]  # "half a dozen", "a quarter of a million"
    t = re.sub(r"\s+(?:of\s+)?(?:a|an)$", "", t)  # "half a [kilogram]", "a quarter of an [hour]"
    if (whole := parse_number(t)) is not None:
        return whole
    if (part := parse_fraction(t)) is not None:
        return part
    m = re.fullmatch(r"(.+?) and (.+)", t)
    if (
        m
        and (whole := parse_number(m.group(1))) is not None
        and (part := parse_fraction(m.group(2))) is not None
    ):
        return whole + part if part < 1 else None
    return None
