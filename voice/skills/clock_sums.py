"""Sums of times of day: how long between two told times ("the train was meant to come at six fifty and it's now
seven twenty five, how many minutes late is it?"), a time plus a span ("the train leaves at nine forty and takes
two hours and fifty minutes, what time do we get in?"), and how long from now until a time ("how long until five
o'clock?").

SmolLM2-135M guessed these, and the word problems leave times of day alone (the thirty-sixth and thirty-ninth
held-out sets' first runs). A time of day is read only where the words say it is one, so that an amount is never
read as a time: after "at", "it's now", "until", "till", "by" or "from" ("at six fifty", "it's now 7:25"), or with
"o'clock", "am"/"pm", "half past", "quarter to". The span is read as the timers read a duration
(:func:`voice.skills.timers.parse_duration_s`). A time said without am or pm is the one that makes the sum come out
under twelve hours (people say "nine forty" and "seven twenty five" of the same morning); the reply says the times it
read, so a misheard one is heard. Pure.
"""

from __future__ import annotations

import re
from datetime import datetime

from voice.skills.numbers import parse_number
from voice.skills.timers import parse_duration_s, say_duration

_HOUR = r"(?:[01]?\d|2[0-3]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_MINUTES = (
    r"(?:[0-5]\d|oh (?:one|two|three|four|five|six|seven|eight|nine)|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|(?:twenty|thirty|forty|fifty)(?:[ -](?:one|two|three|four|five|six|seven|"
    r"eight|nine))?)"
)
_HALF = r"(?:am|pm|a\.m\.?|p\.m\.?|in the morning|in the afternoon|in the evening|at night|tonight)"
_TIME = (
    rf"(?:(?P<part>half|(?:a )?quarter|{_MINUTES}(?: minutes)?) (?P<rel>past|after|to) (?P<h2>{_HOUR})"
    rf"|(?P<h>{_HOUR})(?::(?P<mm>[0-5]\d)| (?P<mw>{_MINUTES}))?(?P<oclock> o'? ?clock)?)(?: (?P<half>{_HALF}))?"
    r"|(?P<noon>noon|midday|midnight)"
)
_RUN_TOGETHER = re.compile(rf"\b(1[0-2]|[1-9])([0-5]\d)(?= {_HALF}\b)")
"""Whisper's "730 in the morning", "815 pm": the hour and minutes of one time, run together."""
_ANCHOR = r"(?:at|it'?s now|it is now|now it'?s|now|until|till|til|by|from|it'?s|it is)"
_SAID_TIME = re.compile(rf"\b(?P<anchor>{_ANCHOR} )?(?:{_TIME})(?![\w:])")
_BETWEEN = re.compile(
    r"\bhow (?:many minutes|many hours|long|late)\b|\bhow much (?:time|longer)\b|\bwhat'?s the difference\b"
)
_ARRIVES = re.compile(
    r"\bwhat time (?:do|does|will|would|should|did|shall|can) (?:we|i|you|it|they|he|she|the [a-z]+) (?:get|arrive|"
    r"land|finish|be done|be ready|be back|end|come out|get there|get in|get back|reach)\b"
    r"|\bwhat time (?:will|would) (?:it|that) be\b|\bwhen (?:do|does|will|would) (?:we|i|it|they) (?:get|arrive|land|"
    r"finish|be done|be back)\b"
)


def _minutes_of(m: re.Match[str]) -> tuple[int, bool] | None:
    """The time ``m`` says as minutes after midnight, and whether it said am or pm (or noon); None when not a time."""
    if m["noon"]:
        return (12 * 60 if m["noon"] in ("noon", "midday") else 0), True
    h_text = m["h"] or m["h2"]
    hour = parse_number(h_text)
    if hour is None:
        return None
    h = int(hour)
    if m["rel"]:
        part: float | None = {"half": 30, "quarter": 15, "a quarter": 15}.get(m["part"])
        part = part if part is not None else parse_number(m["part"].removesuffix(" minutes").replace("-", " "))
        if part is None:
            return None
        minute = (h * 60 + (int(part) if m["rel"] != "to" else -int(part))) % (24 * 60)
    else:
        mw = m["mm"] or (m["mw"] or "").replace("oh ", "").replace("-", " ")
        words = parse_number(mw) if mw else 0
        if words is None:
            return None
        minute = h * 60 + int(words)
    said_half = bool(m["half"])
    if said_half and m["half"] and re.match(r"p|in the (?:afternoon|evening)|at night|tonight", m["half"]):
        minute = minute % (12 * 60) + 12 * 60
    elif said_half:
        minute %= 12 * 60
    return minute, said_half or h > 12 or (m["mm"] is not None and h_text.startswith("0"))


def _times(t: str) -> list[tuple[int, bool, int]]:
    """The times of day ``t`` says, where its words say they are times (an anchor before, or a clock word in): each
    as minutes after midnight, whether am or pm was said, and where it ends in ``t``."""
    found = []
    for m in _SAID_TIME.finditer(t):
        clock_word = m["oclock"] or m["half"] or m["rel"] or m["noon"] or m["mm"]
        if not (m["anchor"] or clock_word) or (m["anchor"] in ("it's ", "its ", "it is ") and not clock_word):
            continue  # "it's two" is no time; "it's two o'clock" is
        if m["h"] and not (m["mw"] or clock_word) and m["anchor"] in ("now ",):
            continue  # "now three" is no time
        if (read := _minutes_of(m)) is not None:
            found.append((*read, m.end()))
    return found


def _say(minute: int) -> str:
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


def _after(start: tuple[int, bool, int], end: tuple[int, bool, int]) -> int:
    """Minutes from ``start`` to ``end``: a time said without am/pm is the one under twelve hours on."""
    gap = (end[0] - start[0]) % (24 * 60)
    return gap % (12 * 60) if not (start[1] and end[1]) else gap


def answer(t: str, now: datetime) -> str | None:
    """The reply to a sum of times of day in ``t`` (a cleaned transcript), else None."""
    if "timer" in t:
        return None  # the timers' ("how long is left on the timer I set at 6")
    t = _RUN_TOGETHER.sub(r"\1:\2", t)  # read once, so the times' places below are places in this text
    times = _times(t)
    if len(times) == 2 and _BETWEEN.search(t) and not _ARRIVES.search(t):
        gap = _after(times[0], times[1])
        start = times[1][0] - gap if times[1][1] and not times[0][1] else times[0][0]  # "11:50 … until midnight"
        return f"From {_say(start)} to {_say(start + gap)} is {say_duration(gap * 60)}." if gap else None
    if len(times) == 1 and _ARRIVES.search(t):
        span_s = parse_duration_s(t[times[0][2] :])  # the span said after the time
        if span_s is None or span_s % 60 or not 0 < span_s < 24 * 3600:
            return None
        start = times[0][0]
        return f"{say_duration(span_s)} after {_say(start)} is {_say(start + int(span_s // 60))}."
    if len(times) == 1 and re.search(r"\b(?:until|till|til)\b", t) and _BETWEEN.search(t):
        here = (now.hour * 60 + now.minute, True, 0)
        gap = _after(here, times[0])
        return f"It's {_say(here[0])} now: {_say(here[0] + gap)} is {say_duration(gap * 60)} away." if gap else None
    return None
