"""The time in another place, from the IANA time zone database (the ``tzdata`` package): "what time is it in Tokyo",
"what's the time in New York right now", "what time is it in Japan".

Before this skill, the clock skill answered "what time is it in Tokyo" with the local time: confidently wrong. A
place is found by name, not from a table of our own: a city that names a zone ("Tokyo" is ``Asia/Tokyo``, "New
York" ``America/New_York``), or a country (:func:`voice.skills.country_facts.country`: "Japan", "the UK", "Holland")
whose ISO code has one zone in the database's ``zone.tab``. A country with several ("the United States", "Australia")
gets that said, and a city of it asked for; a place the database does not name gets an honest "I don't know", never
the local time. ``now`` must be the local time: naive (the machine's zone) or aware. Pure, apart from reading the
database once (cached).
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from datetime import datetime
from importlib import resources

from voice.skills import country_facts

_REGIONS = ("Africa", "America", "Antarctica", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific")
"""The database's areas whose zones are named after a city ("Europe/Paris", "America/Argentina/Buenos_Aires")."""
_ASKED = re.compile(
    r"(?:what|what'?s|whats|what is|tell me|do you know) (?:the )?(?:time|time is it|time it is)"
    r"(?: (?:right )?now| at the moment| currently)? (?:over )?in (?P<place>[a-z' .-]+?)(?: (?:right )?now| at the"
    r" moment| currently| today)?"
)
"""A question of the time in a place: "what time is it in tokyo", "what's the time in new york right now"."""
_NOT_PLACES = re.compile(
    r"\d|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|half|few|here|there|words?|morning|afternoon|"
    r"evening|night|summer|winter|spring|autumn|fall)\b"
)
"""Words that say the question is not of a place: "in 3 hours", "in an hour", "in here", "in the morning"."""


def _key(name: str) -> str:
    return " ".join(re.sub(r"[^a-z]+", " ", name.lower()).split())


@functools.cache
def _cities() -> dict[str, str]:
    """Zones by the name of their city, as said ("new york" → "America/New_York")."""
    found: dict[str, str] = {}
    for zone in sorted(zoneinfo.available_timezones()):
        area, _, rest = zone.partition("/")
        if area in _REGIONS and rest:
            found.setdefault(_key(rest.rsplit("/", 1)[-1].replace("_", " ")), zone)
    return found


@functools.cache
def _zones_of_countries() -> dict[str, tuple[str, ...]]:
    """Each country's zones by its ISO code, in the order ``zone.tab`` lists them."""
    table = resources.files("tzdata").joinpath("zoneinfo", "zone.tab").read_text(encoding="utf-8")
    found: dict[str, list[str]] = {}
    for line in table.splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and not line.startswith("#"):
            found.setdefault(fields[0], []).append(fields[2])
    return {code: tuple(zones) for code, zones in found.items()}


def _said(place: str) -> str:
    return " ".join(w if w in ("of", "and", "the") else w[:1].upper() + w[1:] for w in place.split())


def answer(t: str, now: datetime) -> str | None:
    """The time in the place ``t`` (a cleaned transcript) asks about, else None (not such a question)."""
    m = _ASKED.fullmatch(t)
    if m is None or _NOT_PLACES.search(place := m["place"].removeprefix("the ").strip()):
        return None
    here = now.astimezone()
    if (zone := _cities().get(_key(place))) is not None:
        return _time_in(here, zone, _said(place))
    country = country_facts.country(place)
    zones = _zones_of_countries().get(country.code, ()) if country is not None and country.code else ()
    if country is not None and len(zones) == 1:
        return _time_in(here, zones[0], country.name)
    if country is not None and zones:
        return f"{country.name[:1].upper()}{country.name[1:]} has more than one time zone: ask me about a city there."
    return f"I don't know the time zone of {_said(place)}, so I can't tell you the time there."


def _time_in(here: datetime, zone: str, name: str) -> str:
    there = here.astimezone(zoneinfo.ZoneInfo(zone))
    return f"In {name} it's {there.strftime('%H:%M')} on {there.strftime('%A')}."
