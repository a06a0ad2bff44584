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
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_FILLER = {"and", "a", "after", "by", "the"}


def parse_number(text: str) -> float | None:
    """``"42"``, ``"4,200"``, ``"2.5"``, ``"seven"``, ``"two hundred and five"``, ``"a thousand"``; else None."""
    t = text.strip().lower().replace(",", "")
    if re.fullmatch(r"-?\d+(\.\d+)?", t):
        return float(t)
    words = [w for w in re.split(r"[\s-]+", t) if w]
    if not words or all(w in _FILLER for w in words):
        return None
    total, current, seen = 0, 0, False
    for w in words:
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w in _SCALES:
            current = max(current, 1) * _SCALES[w]
            if _SCALES[w] >= 1000:
                total, current = total + current, 0
        elif re.fullmatch(r"\d+", w):
            current += int(w)
        elif w in _FILLER:
            continue
        else:
            return None
        seen = True
    return float(total + current) if seen else None


def say_number(x: float) -> str:
    if math.isclose(x, round(x), abs_tol=1e-9):
        return str(round(x))
    return f"{x:.4f}".rstrip("0").rstrip(".")
