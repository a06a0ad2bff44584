"""Questions about the present moment (the time, the date, the weekday, the month, the year), answered exactly.

Matched by what is asked, not by a list of whole sentences: a field word (``time``, ``date``, ``day``,
``month``, ``year``) tied to the present ("is it", "today", "now", "current", "are we in", or the field asked
alone: "the date", "time please"). So "Tell me the date.", "Which month are we in?" and "Is it Monday today?"
are answered like "What's the date today?", while a question about another moment ("What year did the war
end?", "What time does the bakery open?", "What day is Christmas?") or about a timer ("How much time is
left?") is not matched, and goes on to the LLM or the timers. "Tomorrow" and "yesterday" shift the day.
A question put in other words is still answered when its only topic is the present moment: every word is a
field word (a weekday or month name too) or a filler ("Got the time?", "Is it the weekend?", "Are we in
December?"). Whisper's short window often writes "which month we're in" as "which months were in": both are
taken.

:func:`answer` takes the transcript already lower-cased, without end punctuation or leading fillers (as
:func:`voice.skills.answer.answer` cleans it). Pure.
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
    r"|\bwhat time is it\b(?! (?:in|at|on|after|ago)\b)|\bwhat time it is\b(?! (?:in|at|on)\b)"
    r"|\b(?:what'?s|what is|whats) the (?:current |exact )?time\b(?! (?:difference|zone|limit|of|for|in|at|to)\b)"
    r"|\bcurrent time\b|\bthe time (?:right )?now\b|\btime right now\b|^how late is it(?: getting| now)?$"
)
_DATE = re.compile(
    rf"^{_ASK}?\s*(?:is )?(?:the |today'?s |todays )?(?:current )?date(?: {_NOW}| {_WHEN})*$"
    rf"|\b(?:what'?s|what is|whats|tell me|give me) (?:the|today'?s|todays) (?:current )?date(?: {_NOW}| {_WHEN})*$"
    rf"|\bwhat date is (?:it|{_WHEN})\b|\bwhat(?:'?s| is| was) the date {_WHEN}\b|\b(?:current|today'?s) date\b"
)
_WEEKDAY = re.compile(
    rf"\b(?:what|which) day (?:(?:of|on|in) the week )?(?:is it|is this|are we|(?:is|was) {_WHEN}|is it {_WHEN})\b"
    r"(?! (?:in|after|ago)\b)"
    rf"|^(?:what|which) day(?: (?:of|on|in) the week)?(?: is it)?(?: {_NOW})*$"
)
_MONTH_YEAR = re.compile(
    r"\b(?:what|which) (?:months?|year) (?:is it|is this|are we in|we're in|were in)\b"
    rf"|^{_ASK}?\s*(?:is )?(?:the )?(?:current |this )?(?:month|year)(?: is it)?(?: {_NOW})*$"
)


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")  # fmt: skip
#: Words that ask, point or are polite, and say nothing of what is asked about.
_FILLER = frozenset((
    "a", "an", "the", "is", "it", "it's", "its", "are", "we", "we're", "was", "were", "be", "what", "what's", "whats",
    "which", "when", "tell", "me", "do", "you", "know", "have", "got", "please", "can", "could", "would", "give",
    "say", "now", "right", "today", "currently", "current", "at", "moment", "this", "of", "in", "on", "so", "hey",
    "ok", "okay",
))  # fmt: skip
_NAMES = frozenset({*_WEEKDAYS, *_MONTHS, "weekend"})
DAY_NAMES: tuple[str, ...] = (*_WEEKDAYS, *_MONTHS)
"""The names of the weekdays and the months, lower case: words that say a day."""
_FIELDS = frozenset({"time", "date", "day", "weekday", "month", "year", *_NAMES})


def _words_only_about_now(t: str) -> set[str] | None:
    """The field words of ``t`` when all its other words are fillers (a question about the present and nothing
    else: "got the time?", "is it the weekend?"), else None."""
    words = set(re.findall(r"[a-z0-9'%.]*[a-z0-9%]", t))  # a number is a word: "15% on May 2" is not about now
    words = {"month" if w == "months" else w for w in words}  # Whisper: "which months are we in now"
    fields = words & _FIELDS
    if not fields or not words <= _FILLER | _FIELDS | {"tomorrow", "yesterday"}:
        return None
    if fields <= _NAMES and not words & {"is", "are", "was", "it", "we"}:
        return None  # "March." or "November tomorrow" is not a question about the month: "is it", "are we" ask
    return fields


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
    if _DATE.search(t):
        day, says = _day(t, now)
        return f"{says} {day.strftime('%A')}, {day.day} {day.strftime('%B %Y')}."
    if _WEEKDAY.search(t):
        day, says = _day(t, now)
        return f"{says} {day.strftime('%A')}."
    if m := _MONTH_YEAR.search(t):
        return f"It's {now.year}." if "year" in m.group(0) else f"It's {now.strftime('%B')}."
    return _about_now(t, now)


def _about_now(t: str, now: datetime) -> str | None:
    """The same answers for a question put otherwise, when its only topic is the present moment."""
    fields = _words_only_about_now(t)
    if fields is None:
        return None
    day, says = _day(t, now)
    weekday, month = day.strftime("%A"), now.strftime("%B")
    asked_day = fields & {*_WEEKDAYS, "weekend"}
    asked_month = fields & set(_MONTHS)
    if asked_day:
        yes = weekday.lower() in asked_day or ("weekend" in asked_day and day.weekday() >= 5)
        return f"{'Yes' if yes else 'No'}, {says[0].lower()}{says[1:]} {weekday}."
    if asked_month:
        return f"{'Yes' if month.lower() in asked_month else 'No'}, it's {month}."
    if "time" in fields:
        return f"It's {now.strftime('%H:%M')}."
    if "date" in fields or {"day", "month"} <= fields:  # "what day of the month is it?"
        return f"{says} {weekday}, {day.day} {day.strftime('%B %Y')}."
    if fields & {"day", "weekday"}:
        return f"{says} {weekday}."
    return f"It's {now.year}." if "year" in fields else f"It's {month}."
