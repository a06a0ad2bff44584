"""Unit conversion, a local skill: "how many metres are in a mile", "what is 5 pounds in kilograms",
"convert 100 degrees Celsius to Fahrenheit". Exact factors (SI definitions; US gallon), answered without the LLM.

:func:`convert` takes a cleaned transcript (lower case, no final punctuation) and returns the reply, or None
when it names no two known units of the same kind.
"""

from __future__ import annotations

import re

from voice.numbers import parse_number, say_number

# name → (dimension, factor to the base unit). Plurals and spellings are folded by :func:`_unit`.
_UNITS: dict[str, tuple[str, float]] = {
    "millimetre": ("length", 0.001), "centimetre": ("length", 0.01), "metre": ("length", 1.0),
    "kilometre": ("length", 1000.0), "inch": ("length", 0.0254), "foot": ("length", 0.3048),
    "yard": ("length", 0.9144), "mile": ("length", 1609.344),
    "milligram": ("mass", 1e-6), "gram": ("mass", 0.001), "kilogram": ("mass", 1.0), "tonne": ("mass", 1000.0),
    "pound": ("mass", 0.45359237), "ounce": ("mass", 0.028349523125), "stone": ("mass", 6.35029318),
    "millisecond": ("time", 0.001), "second": ("time", 1.0), "minute": ("time", 60.0), "hour": ("time", 3600.0),
    "day": ("time", 86400.0), "week": ("time", 604800.0),
    "millilitre": ("volume", 0.001), "litre": ("volume", 1.0), "gallon": ("volume", 3.785411784),
}  # fmt: skip
_ALIASES = {
    "meter": "metre", "kilometer": "kilometre", "centimeter": "centimetre", "millimeter": "millimetre",
    "km": "kilometre", "cm": "centimetre", "mm": "millimetre", "m": "metre", "feet": "foot", "inches": "inch",
    "kg": "kilogram", "kilo": "kilogram", "g": "gram", "mg": "milligram", "lb": "pound", "lbs": "pound",
    "oz": "ounce", "ton": "tonne", "liter": "litre", "milliliter": "millilitre", "ml": "millilitre", "l": "litre",
    "sec": "second", "secs": "second", "min": "minute", "mins": "minute", "hr": "hour", "hrs": "hour",
}  # fmt: skip
_TEMPERATURES = {"celsius": "Celsius", "centigrade": "Celsius", "fahrenheit": "Fahrenheit"}
_NUMBER = r"(?:a|an|one|[\w.,-]+(?: [\w-]+){0,4}?)"


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


def _plural(unit: str, n: float) -> str:
    if n == 1:
        return unit
    return {"foot": "feet", "inch": "inches"}.get(unit, unit + "s")


def _amount(text: str) -> float | None:
    t = text.strip()
    if t in ("a", "an", "one"):
        return 1.0
    return parse_number(t)


def _temperature(t: str) -> str | None:
    m = re.fullmatch(
        rf"(?:what is |what'?s |convert )?(?P<n>-?{_NUMBER}) degrees? (?P<a>celsius|centigrade|fahrenheit)"
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


def convert(t: str) -> str | None:
    """The reply to a unit conversion question in cleaned transcript ``t``, else None."""
    if (reply := _temperature(t)) is not None:
        return reply
    m = re.fullmatch(
        rf"how many (?P<to>[a-z]+) (?:are |is )?(?:there )?(?:in|is|make|makes|make up) (?P<n>{_NUMBER}) "
        r"(?P<from>[a-z]+)",
        t,
    ) or re.fullmatch(
        rf"(?:what is |what'?s |convert |how much is |how far is |how long is |how heavy is )?(?P<n>{_NUMBER}) "
        rf"(?P<from>[a-z]+) (?:in|to|into|as) (?P<to>[a-z]+)",
        t,
    )
    if not m:
        return None
    how_many = m.re.pattern.startswith("how many")
    # "how many days are in the week": "the" is one, in this form only
    n = 1.0 if how_many and m.group("n") == "the" else _amount(m.group("n"))
    src, dst = _unit(m.group("from")), _unit(m.group("to"))
    if src is None or dst is None or n is None or src == dst:
        return None
    (dim_a, fa), (dim_b, fb) = _UNITS[src], _UNITS[dst]
    if dim_a != dim_b:
        a, b = _plural(src, 2).capitalize(), _plural(dst, 2)
        return f"{a} measure {dim_a} and {b} measure {dim_b}: they don't convert."
    out = n * fa / fb
    shown = say_number(round(out, 4) if abs(out) >= 0.01 else float(f"{out:.3g}"))
    if how_many:
        said = m.group("n").strip()
        article = said if said in ("a", "an") else ("an" if src[0] in "aeiou" or src == "hour" else "a")
        article = article if n == 1 else say_number(n)
        return f"There are {shown} {_plural(dst, out)} in {article} {_plural(src, n)}."
    return f"{say_number(n)} {_plural(src, n)} is {shown} {_plural(dst, out)}."
