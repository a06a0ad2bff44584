"""Questions about the present moment (the time, the date, the weekday, the month, the year), answered exactly.

Matched by what is asked, not by a list of whole sentences: a field word (``time``, ``date``, ``day``,
``month``, ``year``) tied to the present ("is it", "today", "now", "current", "are we in", or the field asked
alone: "the date", "time please"). So "Tell me the date.", "Which month are we in?" and "Is it Monday today?"
are answered like "What's the date today?", while a question about another moment ("What year did the war
end?", "What time does the bakery open?", "What day is Christmas?") or about a timer ("How much time is
left?") is not matched, and goes on to the LLM or the timers. "Tomorrow" and "yesterday" shift the day.

:func:`answer` takes the transcript already lower-cased, without end punctuation or leading fillers (as
:func:`voice.skills.answer` cleans it). Pure.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WHEN = r"(?:today|tomorrow|yesterday)"
_ASK = r"(?:what|which|what'?s|whats|tell me|do you know|can you tell me|could you tell me)"
_NOW = r"(?:now|right now|at the moment|currently|please|today)"

_TIME = re.compile(
    rf"^{_ASK}?\s*(?:is )?(?:the )?(?:current |exact )?time(?: is it)?(?: {_NOW})*$"
    r"|\bwhat time is it\b|\bwhat time it is\b"
    r"|\b(?:what'?s|what is|whats) the (?:current |exact )?time\b(?! (?:difference|zone|limit|of|for|in|at|to)\b)"
    r"|\bcurrent time\b|\bthe time (?:right )?now\b|\btime right now\b"
)
_DATE = re.compile(
    rf"^{_ASK}?\s*(?:is )?(?:the |today'?s |todays )?(?:current )?date(?: {_NOW}| {_WHEN})*$"
    rf"|\b(?:what'?s|what is|whats|tell me|give me) (?:the|today'?s|todays) (?:current )?date(?: {_NOW}| {_WHEN})*$"
    rf"|\bwhat date is (?:it|{_WHEN})\b|\bwhat(?:'?s| is| was) the date {_WHEN}\b|\b(?:current|today'?s) date\b"
)
_WEEKDAY = re.compile(
    rf"\b(?:what|which) day (?:of the week )?(?:is it|is this|are we|(?:is|was) {_WHEN}|is it {_WHEN})\b"
    rf"|^(?:what|which) day(?: of the week)?(?: is it)?(?: {_NOW})*$"
)
_IS_IT = re.compile(rf"^(?:is|was) (?:it|{_WHEN}) (?:a )?({'|'.join(_WEEKDAYS)})(?: {_NOW}| {_WHEN})?$")
_MONTH_YEAR = re.compile(
    r"\b(?:what|which) (?:month|year) (?:is it|is this|are we in)\b"
    rf"|^{_ASK}?\s*(?:is )?(?:the )?(?:current |this )?(?:month|year)(?: is it)?(?: {_NOW})*$"
)


def _day(t: str, now: datetime) -> tuple[datetime, str]:
    """The day asked about ("tomorrow", "yesterday", else today) and how to say it."""
    when = re.search(r"\b(tomorrow|yesterday)\b", t)
    offset = {"tomorrow": 1, "yesterday": -1}[when.group(1)] if when else 0
    return now + timedelta(days=offset), {0: "Today is", 1: "Tomorrow is", -1: "Yesterday was"}[offset]


def answer(t: str, now: datetime) -> str | None:
    """The exact reply to a cleaned transcript ``t`` that asks about the present moment, else None."""
    t = re.sub(r"\s*,\s*", " ", t)
    if "timer" in t or re.search(r"\btime (?:is )?left\b", t):
        return None
    if _TIME.search(t):
        return f"It's {now.strftime('%H:%M')}."
    if m := _IS_IT.match(t):
        day, says = _day(t, now)
        yes = day.strftime("%A").lower() == m.group(1)
        return f"{'Yes' if yes else 'No'}, {says[0].lower()}{says[1:]} {day.strftime('%A')}."
    if _DATE.search(t):
        day, says = _day(t, now)
        return f"{says} {day.strftime('%A')}, {day.day} {day.strftime('%B %Y')}."
    if _WEEKDAY.search(t):
        day, says = _day(t, now)
        return f"{says} {day.strftime('%A')}."
    if m := _MONTH_YEAR.search(t):
        return f"It's {now.year}." if "year" in m.group(0) else f"It's {now.strftime('%B')}."
    return None
