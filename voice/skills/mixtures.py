"""Mixtures said in parts: "one part dye to three parts developer, if I use forty mils of dye how much developer is
that?", "one part cordial to four parts water and the jug holds a litre, how much cordial do I need?".

SmolLM2-135M guessed these (the thirty-seventh held-out set's first run; a lead carried since). A ratio "A part(s)
X to B part(s) Y" and one amount: either of X or Y ("forty mils of dye") → the other in the same unit, or one said
to be the whole ("two hundred millilitres in total", "the jug holds a litre") → the part asked for. The question
must ask "how much" or "how many" of X or Y. Two amounts, or none, or a question of neither: left alone. Pure.
"""

from __future__ import annotations

import re

from voice.skills.numbers import NUMBER_PATTERN, parse_number, say_number
from voice.skills.word_classes import singular

_RATIO = re.compile(
    rf"\b(?P<a>{NUMBER_PATTERN}) parts? (?:of )?(?P<x>[a-z]+) (?:to|for every|and) (?P<b>{NUMBER_PATTERN}) parts?"
    r" (?:of )?(?P<y>[a-z]+)\b"
)
_AMOUNT = re.compile(rf"\b(?P<n>{NUMBER_PATTERN}|an?) (?P<unit>[a-z]+)(?: of (?:the )?(?P<what>[a-z]+))?\b")
_ASKED = re.compile(r"\bhow (?:much|many(?: [a-z]+)?) (?:of )?(?:the )?(?P<what>[a-z]+)\b")
_WHOLE = re.compile(r"\b(?:in total|total|altogether|all together|in all|holds?|makes?|whole|full|fills?)\b")
"""Words that say an amount is the whole mixture ("two hundred millilitres in total", "the jug holds a litre")."""
_NOT_UNITS = frozenset({"part", "parts", "of", "to", "and", "in", "is", "for"})


def answer(t: str) -> str | None:
    """The amount of one part of a mixture asked in ``t`` (a cleaned transcript), else None."""
    ratio = _RATIO.search(t)
    if ratio is None:
        return None
    a, b = parse_number(ratio["a"]), parse_number(ratio["b"])
    x, y = singular(ratio["x"]), singular(ratio["y"])
    asked = _ASKED.search(t[ratio.end() :])
    if a is None or b is None or a <= 0 or b <= 0 or x == y or asked is None:
        return None
    wanted = singular(asked["what"])
    rest = t[: ratio.start()] + " " + t[ratio.end() : ratio.end() + asked.start()]
    amounts = [m for m in _AMOUNT.finditer(rest) if m["unit"] not in _NOT_UNITS]
    if len(amounts) != 1 or (n := 1.0 if amounts[0]["n"] in ("a", "an") else parse_number(amounts[0]["n"])) is None:
        return None
    unit, of = amounts[0]["unit"], singular(amounts[0]["what"] or "")
    said_ratio = f"{say_number(a)} {_parts(a)} {ratio['x']} to {say_number(b)} {_parts(b)} {ratio['y']}"
    if of in (x, y) and wanted in (x, y) and wanted != of:
        other = round(n * (b / a if of == x else a / b), 2)
        told, asked_of = amounts[0]["what"], ratio["y"] if of == x else ratio["x"]
        return f"{said_ratio}: {_said(n, unit)} of {told} takes {_said(other, unit)} of {asked_of}."
    if not of and wanted in (x, y) and _WHOLE.search(t) and not rest[amounts[0].end() :].startswith(" of"):
        part = round(n * (a if wanted == x else b) / (a + b), 2)
        named = ratio["x"] if wanted == x else ratio["y"]
        return f"{said_ratio}: {_said(n, unit)} in all has {_said(part, unit)} of {named}."
    return None


def _parts(n: float) -> str:
    return "part" if n == 1 else "parts"


def _said(n: float, unit: str) -> str:
    """An amount with its unit as said, plural but for one: "1 litre", "0.2 litres"."""
    plural = unit if unit.endswith("s") or n == 1 else f"{unit}s"
    return f"{say_number(n)} {plural}"
