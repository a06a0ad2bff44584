"""Amounts said in two units, as people say heights, body weights and lengths of time: "five foot ten (inches)",
"eleven stone four", "three minutes forty seconds", read as one amount in the smaller unit for the conversions
(:mod:`voice.skills.units`). Pure.
"""

from __future__ import annotations

import re

from voice.skills.numbers import NUMBER_PATTERN, parse_number, say_number

_COMPOUND = re.compile(
    rf"\b(?P<a>{NUMBER_PATTERN}) (?P<big>foot|feet|ft|stone|hours?|minutes?)(?: and)? (?P<b>{NUMBER_PATTERN})"
    r"(?P<small> (?:inch|inches|pounds?|lbs?|minutes?|seconds?))?(?=\W*$|\W+(?:in|to|into|as|is|are|and|so|how|what"
    r"|long|i)\b)"
)
"""A length, a weight or a time said in two units, as people say heights, body weights and a song's length: "five
foot ten (inches)", "eleven stone four", "three minutes forty seconds" (a time only with its second unit said)."""
_SMALL = {
    "foot": ("inches", 12), "feet": ("inches", 12), "ft": ("inches", 12), "stone": ("pounds", 14),
    "hour": ("minutes", 60), "hours": ("minutes", 60), "minute": ("seconds", 60), "minutes": ("seconds", 60),
}  # fmt: skip


def in_the_smaller_unit(t: str) -> tuple[str, str, str] | None:
    """``t`` with its amount said in two units as one amount in the smaller ("five foot ten" → "70 inches"), that
    amount, and the two units as the reply says them ("5 feet 10 inches"); None when ``t`` says none."""
    m = _COMPOUND.search(t)
    if m is None or (a := parse_number(m["a"])) is None or (b := parse_number(m["b"])) is None:
        return None
    small, per = _SMALL[m["big"]]
    if a != int(a) or not 0 < b < per or (not m["small"] and m["big"].startswith(("hour", "minute"))):
        return None  # "5 feet 20" is no height; "3 minutes 40" may be a count of something else
    total = f"{say_number(a * per + b)} {small}"
    said = f"{say_number(a)} {'feet' if m['big'] in ('foot', 'ft') else m['big']} {say_number(b)} {small}"
    return f"{t[: m.start()]}{total}{t[m.end() :]}", total, said


def asked_in(t: str, total: str) -> bool:
    """``t`` asks for an amount in the unit of ``total`` ("220 seconds"): "how many seconds", "in seconds"."""
    unit = total.split()[-1]
    return re.search(rf"\bhow many {unit}\b|\b(?:in|into|to) {unit}\b", t) is not None
