"""The planets of the solar system, a local skill: which is largest, smallest, hottest, closest to or farthest
from the sun, how many there are, their order from the sun, their size, year, distance from the sun and (for the
four inner ones) moons, and whether one is bigger than another.

SmolLM2-135M got these wrong, and confidently, in five of the eight question sets (``voice bench quality``,
2026-12-05): "The largest planet in the solar system is Jupiter, but it's actually Saturn." (main set), "The
planet closest to the sun is Venus." (second held-out set), "The solar system consists of 92 planets" (first),
"Venus, which has a year of approximately 243 Earth days" for the shortest year (fourth). The facts are few,
fixed and exact, so they are a table here, not the model's memory.

The numbers are NASA's Planetary Fact Sheet (nssdc.gsfc.nasa.gov/planetary/factsheet, public domain): equatorial
diameter, mean distance from the sun, orbital period (Neptune's sidereal one, 60,189 days, from its own fact sheet),
mean temperature. Moons are given for Mercury, Venus, Earth and Mars only: the giants' counts keep rising as moons
are found, so those questions go on to the LLM.

Matched on the transcript as :func:`voice.skills.answer.answer` cleans it (lower case, no end mark). A question
must name a planet, or ask about "the planet(s)" in a form below; anything else goes on to the LLM, and so do forms that
reach beyond the solar system ("the largest planet in the universe", "the biggest dwarf planet", "the largest
moon"). :func:`follow_up` answers the same questions about "it" when the previous reply named a planet ("Which is
the largest planet?" … "Is it bigger than Earth?"). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Planet:
    """One planet, with NASA's figures."""

    name: str
    order: int
    """From the sun, 1 to 8."""
    diameter_km: int
    """Equatorial."""
    mass_1e24_kg: float
    sun_distance_million_km: float
    """Mean."""
    year_days: float
    """Orbital period in Earth days."""
    mean_temperature_c: int
    moons: str | None
    """As said ("no moons", "two moons, Phobos and Deimos"); None where the count keeps changing."""


PLANETS = (
    Planet("Mercury", 1, 4_879, 0.330, 57.9, 88.0, 167, "no moons"),
    Planet("Venus", 2, 12_104, 4.87, 108.2, 224.7, 464, "no moons"),
    Planet("Earth", 3, 12_756, 5.97, 149.6, 365.2, 15, "one moon, the Moon"),
    Planet("Mars", 4, 6_792, 0.642, 228.0, 687.0, -65, "two moons, Phobos and Deimos"),
    Planet("Jupiter", 5, 142_984, 1898.0, 778.5, 4_331, -110, None),
    Planet("Saturn", 6, 120_536, 568.0, 1432.0, 10_747, -140, None),
    Planet("Uranus", 7, 51_118, 86.8, 2867.0, 30_589, -195, None),
    Planet("Neptune", 8, 49_528, 102.0, 4515.0, 60_189, -200, None),
)
_BY_NAME = {p.name.lower(): p for p in PLANETS}
_EARTH = _BY_NAME["earth"]
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
_ORDINAL_DIGITS = ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th")


def _planet(words: str) -> Planet | None:
    """The planet ``words`` name ("mars", "the earth", "planet earth"), else None."""
    w = re.sub(r"^(?:the |planet )+", "", words.strip())
    return _BY_NAME.get(w)


def _km(million_km: float) -> str:
    if million_km >= 1000:
        return (
            f"{million_km / 1000:.1f} billion kilometres ({million_km * 0.621371 / 1000:.1f} billion miles)"
        )
    return f"{round(million_km)} million kilometres ({round(million_km * 0.621371)} million miles)"


def _times(ratio: float) -> str:
    """ "about 11 times", "about 2.6 times" (a ratio above 1)."""
    return f"about {round(ratio)} times" if ratio >= 9.95 else f"about {ratio:.1f} times"


def _size(p: Planet) -> str:
    if p is _EARTH:
        return f"Earth is {p.diameter_km:,} kilometres across."
    ratio = p.diameter_km / _EARTH.diameter_km
    if ratio >= 1:
        return f"{p.name} is {p.diameter_km:,} kilometres across, {_times(ratio)} as wide as Earth."
    return f"{p.name} is {p.diameter_km:,} kilometres across; Earth is {_times(1 / ratio)} as wide."


def _difference(wider: Planet, narrower: Planet) -> str:
    """ "Jupiter is about 11 times as wide as Earth." (``wider`` has the larger diameter)"""
    ratio = wider.diameter_km / narrower.diameter_km
    if ratio < 1.1:
        said = f"{wider.name} is only slightly wider than {narrower.name}."
    else:
        said = f"{wider.name} is {_times(ratio)} as wide as {narrower.name}."
    if wider.mass_1e24_kg < narrower.mass_1e24_kg:  # Uranus and Neptune
        said += f" {narrower.name} is heavier, though."
    return said


def _year(p: Planet) -> str:
    if p is _EARTH:
        return "A year on Earth is 365.25 days."
    if p.year_days < 1000:
        return f"A year on {p.name} is {round(p.year_days)} Earth days."
    return (
        f"A year on {p.name} is about {p.year_days / 365.25:.1f} Earth years ({round(p.year_days):,} days)."
    )


_MERCURY, _VENUS, _JUPITER, _NEPTUNE = (_BY_NAME[n] for n in ("mercury", "venus", "jupiter", "neptune"))
_SUPERLATIVES: tuple[tuple[str, str, str], ...] = (  # the adjective, what follows "planet", the reply
    (r"largest|biggest", "", f"Jupiter is the largest planet in the solar system, "
     f"{_times(_JUPITER.diameter_km / _EARTH.diameter_km)} as wide as Earth."),
    (r"smallest|littlest|tiniest", "", f"Mercury is the smallest planet in the solar system, "
     f"{_MERCURY.diameter_km:,} kilometres across."),
    (r"hottest", "", f"Venus is the hottest planet, about {_VENUS.mean_temperature_c} degrees Celsius on average: "
     "its thick atmosphere traps the heat, so it is hotter than Mercury, which is closer to the sun."),
    (r"(?:closest|nearest)", r" (?:to )?the sun", "Mercury is the closest planet to the sun, on average "
     f"{_km(_MERCURY.sun_distance_million_km)} away."),
    (r"(?:farthest|furthest|most distant)", r" (?:away )?from the sun", "Neptune is the farthest planet from "
     f"the sun, on average {_km(_NEPTUNE.sun_distance_million_km)} away."),
    (r"(?:with |that has )?the shortest year", "", f"Mercury has the shortest year: {round(_MERCURY.year_days)} "
     "Earth days."),
    (r"(?:with |that has )?the longest year", "", "Neptune has the longest year: about "
     f"{_NEPTUNE.year_days / 365.25:.1f} Earth years."),
)  # fmt: skip
"""The planet each names is checked against the table by the tests; the figures are the table's."""
_ASK = r"(?:(?:and|so|now|okay|ok|do you know|tell me|name) )*"
_WHICH = r"(?:which|what)(?: one)?"
_IN = r"(?: (?:in|of) (?:our|the) solar system)?"
_RED_SPOT = re.compile(rf"{_ASK}{_WHICH} planet (?:has|is home to) (?:the |a )?(?:great )?red spot")
_RINGS = re.compile(
    rf"{_ASK}{_WHICH} planet (?:is (?:famous|known|best known) for|has) (?:its |the |big |famous |beautiful )*rings"
)
_HOW_MANY = re.compile(
    rf"{_ASK}how many planets (?:are there|are|is there|do we have)(?: in (?:our|the) solar system)?"
    r"|how many planets (?:are )?(?:in|does|make up) (?:our|the) solar system(?: have)?"
    r"|how many planets (?:orbit|go around|circle) the sun"
)


_RANKED: tuple[tuple[str, str, str, Callable[[Planet], float]], ...] = (
    (r"largest|biggest", "", "largest planet", lambda p: -p.diameter_km),
    (r"smallest|littlest|tiniest", "", "smallest planet", lambda p: p.diameter_km),
    (r"closest|nearest", r" (?:to )?the sun", "closest planet to the sun", lambda p: p.order),
    (r"farthest|furthest", r" from the sun", "farthest planet from the sun", lambda p: -p.order),
)
"""Superlatives that rank: "the second largest planet" (the first is in :data:`_SUPERLATIVES`)."""
_RANKS = "|".join(_ORDINALS[1:])


def _forms(adjective: str, after: str, planet_implied: bool) -> tuple[str, ...]:
    """The ways of asking which planet is the ``adjective`` one ("largest"; ``after``: " to the sun")."""
    forms = (
        rf"{_ASK}{_WHICH}(?: is|'s| s)? the (?:{adjective}) planet{after}{_IN}",
        rf"{_ASK}{_WHICH}(?: is|'s| s)? the planet (?:that is |that's )?(?:{adjective}){after}{_IN}",
        rf"{_ASK}{_WHICH} planet (?:is|has) (?:the )?(?:{adjective})(?: one| planet)?{after}{_IN}",
        rf"{_ASK}{_WHICH} is (?:the )?(?:{adjective}){after} of (?:all )?the planets",
    )
    return (
        (*forms, rf"{_ASK}{_WHICH}(?: is|'s| s)? the (?:{adjective})(?: one)?{after}")
        if planet_implied
        else forms
    )


def _superlative(t: str, planet_implied: bool = False) -> str | None:
    """The reply to "which is the largest planet", "which planet is the hottest", "what's the second smallest
    planet"; with ``planet_implied`` (the conversation is about a planet), "which one is the second largest" too."""
    for adjective, after, reply in _SUPERLATIVES:
        if any(re.fullmatch(f, t) for f in _forms(adjective, after, planet_implied)):
            return reply
    for adjective, after, phrase, key in _RANKED:
        for f in _forms(rf"(?P<n>{_RANKS}) (?:{adjective})", after, planet_implied):
            if (m := re.fullmatch(f, t)) is not None:
                n = _ORDINALS.index(m.group("n"))
                return f"{sorted(PLANETS, key=key)[n].name} is the {m.group('n')} {phrase}."
    return None


def _ordinal(words: str) -> int | None:
    w = words.strip()
    for names in (_ORDINALS, _ORDINAL_DIGITS):
        if w in names:
            return names.index(w) + 1
    return None


_NTH = (
    re.compile(rf"{_ASK}{_WHICH}(?: is|'s| s)? the (?P<n>\w+) planet(?: from the sun)?{_IN}"),
    re.compile(rf"{_ASK}{_WHICH} planet is (?:the )?(?P<n>\w+)(?: planet)? from the sun"),
)
_WHICH_NUMBER = (
    re.compile(
        rf"{_ASK}(?:what|which) (?:number )?planet (?:from the sun )?is (?P<p>[a-z ]+?)(?: from the sun)?"
    ),
    re.compile(rf"{_ASK}what number is (?P<p>[a-z ]+?) from the sun"),
    re.compile(rf"{_ASK}where is (?P<p>[a-z ]+?) in the order of (?:the )?planets"),
)
_ABOUT: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"{_ASK}how (?:big|large|wide) is (?P<p>[a-z ]+?)"), "size"),
    (re.compile(rf"{_ASK}what(?: is|'s| s) the (?:size|diameter) of (?P<p>[a-z ]+?)"), "size"),
    (re.compile(rf"{_ASK}how far (?:away )?is (?P<p>[a-z ]+?) from the sun"), "distance"),
    (re.compile(rf"{_ASK}how far (?:away )?is the sun from (?P<p>[a-z ]+?)"), "distance"),
    (re.compile(rf"{_ASK}how long is (?:a|one) year on (?P<p>[a-z ]+?)"), "year"),
    (re.compile(rf"{_ASK}how long is (?P<p>[a-z ]+?)(?:'s| s) year"), "year"),
    (re.compile(rf"{_ASK}how many (?:earth )?days (?:are there |are )?in (?:a|one) year on (?P<p>[a-z ]+?)"), "year"),
    (re.compile(rf"{_ASK}how long does (?:it take )?(?P<p>[a-z ]+?) (?:take )?to (?:orbit|go around|circle) the sun"),
     "year"),
    (re.compile(rf"{_ASK}how many moons (?:does|do) (?P<p>[a-z ]+?) have"), "moons"),
    (re.compile(rf"{_ASK}how many moons (?:has|have|orbit|are there around) (?P<p>[a-z ]+?)(?: got)?"), "moons"),
)  # fmt: skip
_COMPARE = (
    re.compile(rf"{_ASK}is (?P<a>[a-z ]+?) (?P<cmp>bigger|larger|smaller) than (?P<b>[a-z ]+)"),
    re.compile(rf"{_ASK}which is (?P<cmp>bigger|larger|smaller),? (?P<a>[a-z ]+?) or (?P<b>[a-z ]+)"),
)


def _about(p: Planet, what: str) -> str | None:
    if what == "size":
        return _size(p)
    if what == "distance":
        return f"{p.name} is on average {_km(p.sun_distance_million_km)} from the sun."
    if what == "year":
        return _year(p)
    return f"{p.name} has {p.moons}." if p.moons is not None else None


def _compared(t: str) -> str | None:
    for n, pattern in enumerate(_COMPARE):
        if (m := pattern.fullmatch(t)) is None:
            continue
        a, b = _planet(m.group("a")), _planet(m.group("b"))
        if a is None or b is None:
            return None
        if a is b:
            return f"They are the same planet: {a.name}."
        bigger = m.group("cmp") != "smaller"
        wider, narrower = (a, b) if a.diameter_km > b.diameter_km else (b, a)
        if n == 0:  # "is Mars bigger than Earth"
            yes = (wider is a) == bigger
            return f"{'Yes' if yes else 'No'}: {_difference(wider, narrower)}"
        chosen = wider if bigger else narrower  # "which is bigger, Mars or Venus"
        return f"{chosen.name} is {m.group('cmp')}: {_difference(wider, narrower)}"
    return None


def answer(t: str) -> str | None:
    """The reply to a question about the planets in cleaned transcript ``t``, else None."""
    if (reply := _superlative(t)) is not None:
        return reply
    if _HOW_MANY.fullmatch(t):
        return (
            "There are eight planets in the solar system: Mercury, Venus, Earth, Mars, Jupiter, Saturn, Uranus and "
            "Neptune. Pluto has been called a dwarf planet since 2006."
        )
    if _RED_SPOT.fullmatch(t):
        return "Jupiter has the Great Red Spot, a storm wider than Earth."
    if _RINGS.fullmatch(t):
        return "Saturn is famous for its rings, of ice and rock; Jupiter, Uranus and Neptune have faint rings too."
    for pattern in _NTH:
        if (m := pattern.fullmatch(t)) and (n := _ordinal(m.group("n"))) is not None:
            return f"The {_ORDINALS[n - 1]} planet from the sun is {PLANETS[n - 1].name}."
    for pattern in _WHICH_NUMBER:
        if (m := pattern.fullmatch(t)) and (p := _planet(m.group("p"))) is not None:
            return f"{p.name} is the {_ORDINALS[p.order - 1]} planet from the sun."
    for pattern, what in _ABOUT:
        if (m := pattern.fullmatch(t)) and (p := _planet(m.group("p"))) is not None:
            return _about(p, what)
    return _compared(t)


_NAMED = re.compile(
    r"(?<!\bon )(?<!\bof )(?<!\bfrom )(?<!\baround )(?<!\borbits )(?<!\bthan )"
    r"\b(" + "|".join(p.name for p in PLANETS) + r")\b(?!['’]s)"
)


def named_in(reply: str) -> Planet | None:
    """The planet ``reply`` is about: the first it names, when it names one as a subject (not "on Earth", "the
    Moon orbits Earth", "Earth's moon") and the reply is about a planet (says "planet" or begins with the name);
    else None."""
    m = _NAMED.search(reply)
    if m is None or not (re.search(r"\bplanets?\b", reply, re.IGNORECASE) or m.start() == 0):
        return None
    return _BY_NAME[m.group(1).lower()]


def follow_up(t: str, previous_reply: str) -> str | None:
    """The reply to a planet question about "it" in cleaned transcript ``t`` ("is it bigger than earth", "how many
    moons does it have"), meaning the planet ``previous_reply`` named first, or one that leaves "planet" unsaid
    after a reply about one ("which one is the second largest"); else None."""
    if (p := named_in(previous_reply)) is None:
        return None
    if not re.search(r"\bit\b", t):
        return _superlative(t, planet_implied=True)  # "Which one is the second largest?"
    return answer(re.sub(r"\bit\b", p.name.lower(), t, count=1))
