"""Timers, the local skill that needs state: set, list and cancel by voice; the server speaks when one rings.

Pure: :func:`parse` turns a transcript into a :class:`SetTimer`, :class:`ListTimers`, :class:`CancelTimer` or
:class:`AskDuration` (or None: not a timer command), :func:`handle` applies it to a :class:`TimerBook` and returns
the reply, and :func:`ring_text` is what the server says when a timer is due. Times are monotonic nanoseconds
from the session's clock, so tests drive them with a fake clock.

The book belongs to the conversation (:class:`voice.conversation.history.History` holds it), so a timer set by a
speculative reply that is then discarded disappears with that reply's copy of the history. The session rings
due timers as server-initiated turns (:meth:`voice.serve.session.Session.ring_due`).

Whisper mishears the command word now and then ("set a timer for 30 seconds" → "7 times after 30 seconds"):
a duration together with a word that sounds like *timer* counts as setting one, and the reply repeats the
duration so a wrong one is heard at once. A request to set one whose duration was not heard ("Could you set a
timer for another and a half?") is asked "How long should the timer be?", and a duration said next ("An hour
and a half.") sets it; SmolLM2 had answered that it cannot set timers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voice.skills.numbers import parse_amount, parse_number
from voice.skills.word_classes import singular

NS_PER_S = 1_000_000_000
MIN_TIMER_S = 1.0
MAX_TIMER_S = 24 * 3600.0
_UNITS_S = {
    "second": 1.0, "seconds": 1.0, "sec": 1.0, "secs": 1.0,
    "minute": 60.0, "minutes": 60.0, "min": 60.0, "mins": 60.0,
    "hour": 3600.0, "hours": 3600.0, "hr": 3600.0, "hrs": 3600.0,
}  # fmt: skip
#: Words Whisper writes for "timer" (tiny.en and base.en on short commands).
_TIMER_WORD = r"(?:timers?|times|time her|timor|tymer)"
#: Words Whisper writes for "cancel" before a timer word: tiny.en hears espeak-ng's British and Australian
#: voices say "console", "council" or "consolol" (cancel all), the American ones "can solve" (test_real_models).
_CANCEL_WORD = r"(?:cancel(?:l?ed)?|council|console|consul|consolol|can solve)"
_SET_A_TIMER = re.compile(rf"\b(?:set|start|make|create)\b(?: me)? (?:an?|the|my|another)\b.*\b{_TIMER_WORD}\b")
"""A request to set a timer, with or without its duration."""
_PURPOSE = re.compile(r"\s+(?:to|so (?:that )?(?:i|we)|so i can|in order to)\s+")
"""Where a purpose clause may begin: "a ten minute timer | to check the sourdough"."""
_HOW_TO = re.compile(r"how (?:do|can|would|should|could) (?:i|you|we|one)\b|how to\b")
"""A how-to question ("How do I set a timer on my phone?"): the LLM's to answer, not a timer command."""
_ASKS_ABOUT = re.compile(r"(?:how|why|did|what|when|where|who|is|are|does|do|was|were|has|have)\b")
"""A question about setting timers ("How do I set a timer on my phone?"), not a request to set one."""
_NOT_LABELS = {
    "a", "an", "the", "my", "that", "this", "all", "one", "new", "another", "second", "kitchen's", "of", "for",
    "set", "start", "cancel", "stop", "council", "console",
}  # fmt: skip


@dataclass(frozen=True)
class Timer:
    id: int
    duration_s: float
    due_ns: int
    label: str = ""


@dataclass(frozen=True)
class SetTimer:
    duration_s: float
    label: str = ""


@dataclass(frozen=True)
class ListTimers:
    pass


@dataclass(frozen=True)
class CancelTimer:
    every: bool = False
    label: str = ""
    duration_s: float | None = None


@dataclass(frozen=True)
class AskDuration:
    """A request to set a timer with no duration heard: the reply asks for one."""

    label: str = ""


TimerCommand = SetTimer | ListTimers | CancelTimer | AskDuration


@dataclass
class TimerBook:
    """The timers of one conversation, soonest first. :meth:`copy` for a speculative reply's history."""

    timers: tuple[Timer, ...] = ()
    next_id: int = 1
    asked: str | None = None
    """The label of the timer the last reply asked the duration of (None: it asked none)."""
    just_set: int | None = None
    """The id of the timer the last reply set (None: it set none): "cancel that" or "make it 15" next is about it."""

    def copy(self) -> TimerBook:
        return TimerBook(self.timers, self.next_id, self.asked, self.just_set)

    def add(self, duration_s: float, label: str, now_ns: int) -> Timer:
        t = Timer(self.next_id, duration_s, now_ns + round(duration_s * NS_PER_S), label)
        self.next_id += 1
        self.timers = tuple(sorted((*self.timers, t), key=lambda x: x.due_ns))
        return t

    def remove(self, ids: set[int]) -> None:
        self.timers = tuple(t for t in self.timers if t.id not in ids)

    def next_due_ns(self) -> int | None:
        return self.timers[0].due_ns if self.timers else None

    def pop_due(self, now_ns: int) -> list[Timer]:
        """Remove and return the timers due at ``now_ns``."""
        due = [t for t in self.timers if t.due_ns <= now_ns]
        self.remove({t.id for t in due})
        return due

    def clear(self) -> None:
        self.timers = ()


def _normalize(text: str) -> str:
    t = text.lower().replace("-", " ")
    t = re.sub(r"[^\w\s'.]", " ", t)
    t = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", t)  # keep 2.5, drop full stops
    return re.sub(r"\s+", " ", t).strip()


def _number_before(words: list[str], start: int, end: int) -> float | None:
    """The longest run of words ending at ``end`` (exclusive) and starting at or after ``start`` that is a
    number ("ten", "twenty five", "one and a half", "2.5"); ``a``/``an`` alone is one, and so is ``the``
    before "hour" or "minute" (not "second": "for the second time")."""
    for j in range(start, end):
        cand = " ".join(words[j:end])
        half = 0.0
        if cand.endswith(" and a half"):
            cand, half = cand[: -len(" and a half")], 0.5
        value = parse_amount(cand)  # "ten", "twenty five", "2.5", "half an", "a quarter of an", "three quarters of an"
        if value is not None:
            return value + half
    # "the" as Whisper's spelling of "an" before a unit of one: "set a timer for the hour and a half"
    one = ("a", "an", "the") if end < len(words) and words[end] in ("hour", "minute") else ("a", "an")
    if end - 1 >= start and words[end - 1] in one:
        if end - 2 >= start and words[end - 2] == "half":
            return 0.5
        return 1.0
    return None


def parse_duration_s(text: str) -> float | None:
    """The duration stated in ``text`` in seconds ("ten minutes", "1 hour 30 minutes", "an hour and a half",
    "half a minute", "90 seconds", "2.5 min"), or None if there is none. Two durations that are not the parts of
    one (a smaller unit right after a larger) are two: the last said counts ("for 4 minutes for the tea, 3
    minutes" is 3 minutes, not 7)."""
    words = _normalize(text).split()
    total_s, found, start = 0.0, False, 0
    last_unit_s = 0.0
    for i, w in enumerate(words):
        unit_s = _UNITS_S.get(w)
        if unit_s is None:
            continue
        n = _number_before(words, start, i)
        between = words[start:i]
        start = i + 1
        if n is None:
            continue
        if found and (unit_s >= last_unit_s or any(_not_in_a_duration(b) for b in between)):
            total_s = 0.0  # not a smaller part of the same duration: another one, said after ("4 minutes, 3 minutes")
        total_s += n * unit_s
        found, last_unit_s = True, unit_s
        if words[i + 1 : i + 4] == ["and", "a", "half"]:
            total_s += unit_s / 2
            start = i + 4
    return total_s if found else None


def _not_in_a_duration(word: str) -> bool:
    """A word that does not belong to a duration's number ("1 hour and 30 minutes", "an hour and a half")."""
    return word not in ("and", "in", "a", "an", "half", "the") and parse_number(word) is None  # "in": Whisper's "and"


def say_duration(seconds: float) -> str:
    """``"10 minutes"``, ``"1 hour and 30 minutes"``, ``"4 minutes and 5 seconds"`` (whole seconds)."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    parts = [f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in ((h, "hour"), (m, "minute"), (sec, "second")) if n]
    if not parts:
        return "0 seconds"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _describe(t: Timer) -> str:
    """``"pasta timer"`` or ``"10 minute timer"``."""
    if t.label:
        return f"{t.label} timer"
    return say_duration(t.duration_s).replace("hours", "hour").replace("minutes", "minute").replace(
        "seconds", "second"
    ) + " timer"


def _listed(t: Timer) -> str:
    """``"10 minute timer"``, or ``"pasta timer for 12 minutes"``: in a list the duration set tells timers apart
    as much as their names do."""
    return f"{t.label} timer for {say_duration(t.duration_s)}" if t.label else _describe(t)


def _label(t: str) -> str:
    m = re.search(rf"\b{_TIMER_WORD} (?:called|named|for the|for my) ([a-z]+)\b", t)
    if m and m.group(1) not in _UNITS_S and parse_number(m.group(1)) is None:
        return m.group(1)
    m = re.search(r"\b(?:minutes?|seconds?|hours?) (?:for (?:the|my)|called|named) ([a-z]+)$", t)
    if m:
        return m.group(1)
    m = re.search(rf"\b([a-z]+) {_TIMER_WORD}\b", t)
    if m and m.group(1) not in _NOT_LABELS and m.group(1) not in _UNITS_S and parse_number(m.group(1)) is None:
        return m.group(1)
    return ""


def parse(text: str) -> TimerCommand | None:
    """The timer command in a transcript, or None (then the other skills or the LLM answer)."""
    t = _normalize(text)
    if not t or _HOW_TO.match(t):
        return None
    # "times" only as Whisper's mishearing of "timer for" ("7 times after 30 seconds"), not "5 times in an hour".
    has_timer_word = re.search(r"\b(?:timers?|time her|timor|tymer)\b|\btimes (?:after|for|of)\b", t) is not None
    # "time" as the verb of a request: "Time three minutes.", "Can you time 3 minutes for my eggs?"
    has_timer_word |= re.match(r"(?:(?:can|could|would|will) you |please )?time\b(?! is\b)", t) is not None
    # A request that starts by setting one sets it, whatever its label: "Set a 3 minute timer for the end."
    sets = re.match(r"(?:(?:can|could|would|will) you |please )?(?:set|start|make|create)\b", t) is not None
    if (
        not sets
        and re.search(rf"\b({_CANCEL_WORD}|stop|delete|remove|clear|end|turn off|kill|dismiss)\b", t)
        and re.search(r"\btimers?\b", t)
    ):
        every = re.search(r"\b(all|every|timers)\b", t) is not None
        return CancelTimer(every=every, label="" if every else _label(t), duration_s=parse_duration_s(t))
    duration_s = parse_duration_s(t)
    # "…a ten minute timer to check the sourdough": the purpose after the timer asks nothing of the timers.
    head = _PURPOSE.split(t, maxsplit=1)[0]
    asks = re.search(
        r"\b(how (much|long)|time (left|remaining)|left on|remaining|list|what timers|which timers|any timers"
        r"|check|status)\b",
        head if re.search(r"\btimers?\b", head) else t,
    )
    # "Are any timers running?", "Is my timer still going?" ask; "Put a timer on for half an hour." sets one.
    running = duration_s is None and re.search(r"\btimers? (?:are |is )?(?:still )?(?:running|set|going|on)\b", t)
    # "Set a timer for 15 minutes so I remember to check the roast." sets one: its "check" asks nothing of the timers.
    sets_one = sets and duration_s is not None
    if not sets_one and ((re.search(r"\btimers?\b", t) and (asks or running)) or _HOW_LONG_LEFT.fullmatch(t)):
        return ListTimers()
    if duration_s is None:
        if has_timer_word and _SET_A_TIMER.search(t) and not _ASKS_ABOUT.match(t):
            return AskDuration(_label(t))
        return None
    if has_timer_word or re.search(r"\b(remind me in|wake me (up )?in|countdown|count down)\b", t):
        if re.match(r"(what|how|why|is|are|does|do)\b", t) and not re.search(r"\b(set|start)\b", t):
            return None  # "how long is a timer for 5 minutes": a question, not a command
        return SetTimer(duration_s, _label(t))
    return None


def handle(text: str, book: TimerBook, now_ns: int) -> str | None:
    """Apply the timer command in ``text`` to ``book`` and return the reply; None if it is not one. Right after
    the book's last reply asked how long a timer should be, a duration alone ("Ten minutes.") sets it; right after
    it set one, "cancel that" or "never mind" cancels it and "make it 15" sets it again (:func:`_about_the_last`);
    later, "cancel it" cancels the one timer running (or asks which of several)."""
    cmd = parse(text)
    asked, book.asked = book.asked, None
    just_set, book.just_set = book.just_set, None
    if cmd is None and asked is not None and (duration_s := _duration_alone(text)) is not None:
        cmd = SetTimer(duration_s, asked)
    last = next((t for t in book.timers if t.id == just_set), None)
    if cmd is None and last is not None:
        return _about_the_last(text, last, book, now_ns)
    if cmd is None and book.timers and _CANCEL_IT.fullmatch(_normalize(text)):
        cmd = CancelTimer()  # one running: it is cancelled; several: the reply asks which
    if cmd is None:
        return None
    if isinstance(cmd, AskDuration):
        book.asked = cmd.label
        return f"How long should the {cmd.label + ' ' if cmd.label else ''}timer be?"
    if isinstance(cmd, SetTimer):
        if not MIN_TIMER_S <= cmd.duration_s <= MAX_TIMER_S:
            return "I can set timers from one second to 24 hours."
        return _set(book, cmd.duration_s, cmd.label, now_ns)
    if isinstance(cmd, ListTimers):
        return _list(book, now_ns)
    return _cancel(cmd, book)


def _set(book: TimerBook, duration_s: float, label: str, now_ns: int) -> str:
    t = book.add(duration_s, label, now_ns)
    book.just_set = t.id
    name = f"{t.label.capitalize()} timer" if t.label else "Timer"
    return f"{name} set for {say_duration(t.duration_s)}."


_CANCEL_IT = re.compile(rf"(?:.* )?(?:{_CANCEL_WORD}|stop|delete|remove|scrap|forget)(?: about)? (?:it|that|this)")
"""With timers running: cancel the timer ("ok cancel it", "oh stop that"): they are all this assistant can cancel."""
_NEVER_MIND = re.compile(r"(?:.* )?never ?mind(?: .*)?")
"""Said right after a timer was set: cancel that one ("actually never mind")."""
_MAKE_IT = re.compile(r"(?:.* )?(?:make (?:it|that)|change (?:it|that) to|set it to|set it for) (?P<to>.+)")
"""Said right after a timer was set: set that one again for another duration ("actually make it fifteen")."""
_HOW_LONG_LEFT = re.compile(
    r"(?:(?:so|and|ok|okay|um|uh|hey) )*how (?:long|much (?:time|longer))(?:'s| is| s)? (?:left|remaining|to go)"
    r"(?: on (?:it|that|the timer|my timer))?"
)
"""How long is left, with no timer named: in this assistant only a timer's time is left."""


def _about_the_last(text: str, last: Timer, book: TimerBook, now_ns: int) -> str | None:
    """The reply to ``text``, said right after the reply that set ``last``, if it cancels that timer or sets it
    again ("make it fifteen": a bare number counts in the largest unit ``last`` was set in); else None."""
    t = _normalize(text)
    if m := _MAKE_IT.fullmatch(t):
        duration_s = parse_duration_s(m.group("to"))
        if duration_s is None and (n := parse_amount(m.group("to"))) is not None:
            unit_s = next((u for u in (3600.0, 60.0) if last.duration_s >= u), 1.0)
            duration_s = n * unit_s
        if duration_s is not None and MIN_TIMER_S <= duration_s <= MAX_TIMER_S:
            book.remove({last.id})
            return _set(book, duration_s, last.label, now_ns)
    if _CANCEL_IT.fullmatch(t) or _NEVER_MIND.fullmatch(t):
        book.remove({last.id})
        return f"{_describe(last).capitalize()} cancelled."
    return None


def _duration_alone(text: str) -> float | None:
    """The duration of an answer that is only one ("Ten minutes.", "For an hour and a half, please.")."""
    t = _normalize(text)
    rest = re.sub(r"\b(?:for|make it|about|just|please|um|uh|oh|ok|okay|yes|and|a|an|half|quarter)\b", " ", t)
    rest = " ".join(w for w in rest.split() if w not in _UNITS_S and parse_number(w) is None)
    return parse_duration_s(t) if not rest else None


def _list(book: TimerBook, now_ns: int) -> str:
    """The answer to "what timers do I have?"."""
    if not book.timers:
        return "No timers are running."
    left = [f"{_listed(t)}, {say_duration((t.due_ns - now_ns) / NS_PER_S)} left" for t in book.timers]
    if len(left) == 1:
        return f"Your {left[0]}."
    return f"You have {len(left)} timers: " + "; ".join(left) + "."


def _cancel(cmd: CancelTimer, book: TimerBook) -> str:
    """Cancel every timer, or the one ``cmd`` names (by label or duration); ask which when several match."""
    if not book.timers:
        return "No timers are running."
    if cmd.every:
        n = len(book.timers)
        book.clear()
        return "All timers cancelled." if n > 1 else "Timer cancelled."
    chosen = list(book.timers)
    if cmd.label:
        chosen = [t for t in chosen if _same_label(t.label, cmd.label)]  # "the egg timer": the eggs one
    elif cmd.duration_s is not None:
        chosen = [t for t in chosen if abs(t.duration_s - cmd.duration_s) < 0.5]
    if not chosen:
        return f"There is no {cmd.label or say_duration(cmd.duration_s or 0)} timer."
    if len(chosen) > 1:
        names = ", ".join(_describe(t) for t in chosen)
        return f"You have {len(chosen)} timers: {names}. Say which one, or cancel all timers."
    book.remove({chosen[0].id})
    return f"{_describe(chosen[0]).capitalize()} cancelled."


def _same_label(a: str, b: str) -> bool:
    """Two labels name one thing, one maybe plural: "eggs" and "egg", "potatoes" and "potato" (was "There is no
    potato timer.": the forty-second set)."""
    return singular(a) == singular(b) or re.sub(r"e?s$", "", a) == re.sub(r"e?s$", "", b)


#: The reply to a timer command where no timer can ring (Home Assistant's conversation agent only answers).
CANNOT_RING = "I can't set timers from here, since I can only answer. Home Assistant's own timers can."


def ring_text(t: Timer) -> str:
    """What the server says when ``t`` is due."""
    return f"Your {_describe(t)} is done."
