"""A moment some time from now, or some time ago: "what time will it be in 45 minutes", "what day is it in ten days",
"what's the date two weeks from today", "what time was it three hours ago".

Before this skill, "what time is it in three hours" got the time now (the clock skill matched "what time is it"),
and the other forms went to the LLM, which cannot know. The span is read as the timers read a duration
(:func:`voice.skills.timers.parse_duration_s`: "an hour and a half", "45 minutes"), or in days or weeks ("ten days",
"a fortnight"), months or years (whole ones, on the calendar). The reply says the span it added, so a
misheard one is heard. Pure.
"""

from __future__ import annotations

import re
from calendar import monthrange
from datetime import datetime, timedelta

from voice.skills.numbers import parse_amount, say_number
from voice.skills.timers import parse_duration_s, say_duration

_ASKED = re.compile(
    r"(?:what|what'?s|whats|which|what is) (?:the )?(?P<field>time|date|day of the week|day)"
    r"(?: (?:will|would|is|was) it be| will it| is it| was it| it will be| it'?ll be| is| was| will be)?"
    r"(?: (?P<in>in|after) (?P<span>.+?)(?: time|'s time| from now)?"
    r"| (?P<span_>.+?) (?P<dir>from now|from today|ago|later|before now|back))"
)
_SPAN_WORDS = re.compile(
    r"(?:\d+(?:\.\d+)?|a|an|and|half|quarter|of|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
    r"ninety|hundred|seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|fortnights?|months?|years?)"
)
"""The words a span is said in: numbers and units only ("in an hour and a half"; not "in the morning")."""
_CALENDAR = re.compile(r"(?P<n>.+?) (?P<unit>days?|weeks?|fortnights?|months?|years?)")
_MONTHS_PER = {"month": 1, "months": 1, "year": 12, "years": 12}
_DAYS_PER = {"day": 1, "days": 1, "week": 7, "weeks": 7, "fortnight": 14, "fortnights": 14}


def _moved(now: datetime, text: str, sign: int) -> tuple[datetime, str] | None:
    """``now`` moved by the span ``text`` says (``sign``: 1 later, -1 earlier), and the span as the reply says it;
    None unless ``text`` is a span in numbers and units only. Months and years move the calendar (the 31st a month
    on is the month's last day), and only by whole ones."""
    words = text.replace("-", " ").split()
    if not words or not all(_SPAN_WORDS.fullmatch(w) for w in words):
        return None
    if m := _CALENDAR.fullmatch(" ".join(words)):
        n = 1.0 if m["n"] in ("a", "an", "one") else parse_amount(m["n"])
        unit = m["unit"].removesuffix("s")
        if n is None or n <= 0 or n > 120 * (1 if unit == "year" else 12) or (unit in ("month", "year") and n % 1):
            return None
        said = f"a {unit}" if n == 1 else f"{say_number(n)} {unit}s"
        if unit in _MONTHS_PER:
            months = sign * int(n) * _MONTHS_PER[unit]
            year, month = divmod(now.month - 1 + months, 12)
            year, month = now.year + year, month + 1
            return now.replace(year=year, month=month, day=min(now.day, monthrange(year, month)[1])), said
        return now + sign * timedelta(days=n * _DAYS_PER[unit]), said
    seconds = parse_duration_s(text)
    if seconds is None or not 0 < seconds <= 366 * 86400:
        return None
    return now + sign * timedelta(seconds=seconds), say_duration(seconds)


def answer(t: str, now: datetime) -> str | None:
    """The moment ``t`` (a cleaned transcript) asks about, some span from ``now`` (the local time), else None."""
    m = _ASKED.fullmatch(t)
    ago = m is not None and m["dir"] in ("ago", "before now", "back")
    if m is None or (moved := _moved(now, m["span"] or m["span_"], -1 if ago else 1)) is None:
        return None
    then, span = moved
    when, was = (f"{span} ago", "it was") if ago else (f"In {span}", "it will be")
    field = m["field"]
    if field == "time":
        day = "" if then.date() == now.date() else f" on {then.strftime('%A')}"
        reply = f"{when} {was} {then.strftime('%H:%M')}{day}."
    elif field == "date":
        reply = f"{when} {was} {then.strftime('%A')}, {then.day} {then.strftime('%B %Y')}."
    else:
        reply = f"{when} {was} {then.strftime('%A')}."
    return reply[:1].upper() + reply[1:]
