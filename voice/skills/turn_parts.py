"""Where a question may be said inside a long turn: its last parts (after what led to it), its middle parts (up to
the speaker's next clause), and the numbers said around each, so that a part that drops a number the question may be
about is not answered as if whole. Used by :func:`voice.skills.answer.answer` when no skill takes the transcript
whole. Pure.
"""

from __future__ import annotations

import re

from voice.skills.numbers import NUMBER_PATTERN, parse_number
from voice.skills.word_classes import AUXILIARIES, GLUE, REPAIR_WORDS, words_in


def named_parts(cuts: list[tuple[str, str]], middle: list[tuple[str, str, str]]) -> list[str]:
    """The last and middle parts that say no number, with none said after them ("How many ounces in a pound? I need
    3 of them." may ask for 3 pounds), in the order they are tried."""
    parts = [*(part for _, part in cuts), *(part for part, _, after in middle if not numbers_in(after))]
    return [p for p in parts if not numbers_in(p)]


_PART_START = re.compile(
    r"(?<=[.?!;,])\s+|\s+(?=\bso\b)|\s+(?=\b(?:what|who|whose|which|when|where|why|how)\b|\bis it\b|\bare there\b)"
    r"|\s+(?=\b(?:convert|calculate|work out)\b)",
    re.IGNORECASE,
)
"""Where a last part of a transcript may begin: after a sentence's or a clause's punctuation, at "so", or at a word
that opens a question (a wh-word, "how", "is it", "are there") or a request for a sum ("…I need to convert 8 km
into miles"): Whisper seldom writes the comma before a question said at the end of a ramble ("my kid asked me and
I couldn't remember what's the capital of Egypt")."""


def last_parts(cuts: list[tuple[str, str]]) -> list[str]:
    """The transcript's trailing parts (``cuts``: its :func:`splits`), longest first, without the whole: "I always
    forget this. How many days are in a leap year?" → ["How many days are in a leap year?"]. Spoken questions often come
    after what led to them ("So I'm cooking, and the recipe says 200 grams, so how many ounces is 200 grams?"), and
    a skill that takes such a part whole is answering the question that was asked; the words before it are ignored,
    and the reply says back what it answered. Only when no skill takes the whole transcript, and only parts that
    drop no number: one said before the part may be what the question is about ("The bill came to 60 dollars and I
    want to leave 15, no, 20 percent, how much is the tip?" is not a 20 % tip on 15)."""
    return [part for before, part in cuts if numbers_in(before) <= numbers_in(part)]


_PART_END = re.compile(
    r"(?<=[.?!;])\s+|,?\s+(?=(?:because|'?cause|since|but|though|although|i|we|she|he|they|my|our|it'?s|it)\b)",
    re.IGNORECASE,
)
"""Where a question said in the middle of a turn may end: at a sentence's end, or where a clause of the speaker's
own (or of someone they speak of, or a remark on the question) begins ("…what's the capital of Australia because I
always get it wrong", "…feet in a mile I always forget", "…what's the capital of Portugal my grandson asked me",
"what's the atomic number of carbon it's for my homework", "…what's that in fahrenheit it feels hotter"; not
"that's": "the planet that's closest to the sun")."""
_TRAILING_JOIN = re.compile(r"(?:,?\s+(?:and|so|but|or|then))+$", re.IGNORECASE)
"""A conjunction that led into the speaker's next clause: "…the atomic number of calcium and then | I can go"."""


def middle_parts(transcript: str, cuts: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """Questions said in the middle of a turn (``cuts``: its :func:`splits`), from where a part may begin (or the
    start) to the first place a part may end after it: "Okay, random, but what's the symbol for lead I always forget
    it" → "what's the symbol for lead". None whose question is taken back after it ("no", "sorry", "I mean"), that
    ends on a word that needs more (a preposition, an auxiliary: "what time do | I take my pill"); each with the
    words before and after it (only a part that keeps every number said there is asked of all the skills, as with
    the last parts)."""
    t = transcript.strip()
    found = []
    for before, part in [("", t), *cuts]:
        for end in (m.start() for m in _PART_END.finditer(part) if m.start() > 0):
            if REPAIR_WORDS.search(after := part[end:]):
                break  # "What's the capital of Austria? No, sorry, Switzerland.": the question was taken back
            question = _TRAILING_JOIN.sub("", part[:end])
            last = words_in(question)[-1:]
            needs = (GLUE | AUXILIARIES) - ({"is", "are"} if _SPEAKERS.match(after.lstrip(" ,")) else set())
            if last and last[0] in needs:
                continue  # "what time do | I take my pill", "what day is | my appointment": the question's own
            found.append((question, before, after))
            break
    return found


_SPEAKERS = re.compile(r"(?:i|we)\b", re.IGNORECASE)
"""A clause of the speaker's own, which may follow a question ending on "is" or "are" ("…how old is | I forget");
one of someone else's, or "my …", after "is" is the question's subject ("what day is | my appointment")."""


def splits(transcript: str) -> list[tuple[str, str]]:
    """The transcript cut where a last part may begin (:data:`_PART_START`): (the words before, the part),
    longest part first."""
    t = transcript.strip()
    return [(t[:i], part) for i in (m.end() for m in _PART_START.finditer(t)) if (part := t[i:].strip())]


_NUMBER_RUN = re.compile(rf"-?\b{NUMBER_PATTERN}", re.IGNORECASE)


def numbers_in(text: str) -> set[float]:
    """The numbers said in ``text``, in digits or words; "one" alone is left out ("the one with the rings")."""
    found: set[float] = set()
    for run in (m.group().rstrip(",") for m in _NUMBER_RUN.finditer(text)):
        # "twenty-five and sixty", "three eight": more than one number in a run
        for piece in [run] if parse_number(run) is not None else re.split(r"\s+and\s+", run):
            words = [piece] if parse_number(piece) is not None else re.split(r"[\s-]+", piece)
            found.update(n for w in words if w.lower() != "one" and (n := parse_number(w)) is not None)
    return found
