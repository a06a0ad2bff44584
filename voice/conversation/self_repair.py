"""A turn that corrects itself ("…the square root of 144, no wait, I mean 169") read as the speaker meant it.

People repair their own speech as they talk: they say something (the reparandum), then a marker ("no", "wait",
"sorry", "I mean", "make it", "actually", "scratch that", "or rather"), then the repair, which replaces the
reparandum. A listener hears "set a timer for three minutes, no, make it four" as "set a timer for four minutes".
The skills and the LLM read words, not intentions: before this, the first was answered for 144, and the second
got "No timers are running" (the fifteenth held-out set, 2026-12-06).

:func:`repair` finds the marker and puts the repair where the reparandum began, by one rule from the study of
self-repair (Levelt 1983, "Monitoring and self-repair in speech"): a speaker restarts the repair where the
reparandum started, usually with the same word or the same kind of word. So the reparandum starts at

- a bare number ("four", "169", "$90", or "it's fourteen"): the last number said before the marker, which it
  replaces (the words after it, its unit, stay: "three minutes" → "four minutes");
- a repair that starts like some earlier stretch ("15 times 5" after "what's 15 times 4"; "20 percent" after
  "15 percent"): the word of the same kind that starts the longest run of the same words (a number stands for
  any number; another number, or a grammar word, only with a run or as the last word said), the last one on a
  tie; the repair replaces everything from there, or only the stretch it repeats word for word (a number for a
  number), when words were said after that stretch ("15 percent of 80, no, 20 percent" → "20 percent of 80");
- otherwise, a repair that is a whole request of its own ("what's 5 plus 6?", "convert …"): the whole turn;
- otherwise, a short phrase without a pronoun or an auxiliary, the way a follow-up is read
  (:mod:`voice.conversation.ellipsis`, as "And Y?"): a name for the last name ("No, I mean Australia."), a noun
  phrase for the only one or the one with the same noun, a preposition's object for that preposition's last;
  else it takes the place of the last preposition's short object ("the atomic number of neon, sorry, argon").

The repair runs to its first comma or end mark, or to a question starting again ("300 km I mean 350 how many
miles is that"), or to a clause of the speaker's own ("…no, make that 45 so I know when to head back"); the words
after it go on the corrected sentence. A marker counts after a comma or end mark, or
as two marker words in a row ("no wait", "sorry I mean"), or as one that means nothing else ("I meant", "scratch
that", "or rather", and "I mean" before a number or a name), or as one between two numbers ("4 minutes actually 3
minutes"): "can you make it louder", "is there no milk", "I'm sorry" and "the capital of Peru I mean the country"
are no repair. A marker with nothing the rule can place stays as said. Each marker is read in turn, so "A, no, B,
sorry, C" means C.

Only what the skills and the model read changes (``[llm] self_repair``): the history, the transcripts and the
turn log keep the words as heard. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from voice.config.sections import LlmConfig
from voice.conversation import ellipsis
from voice.conversation.user_text import QUESTION_WORDS
from voice.runtime.model_api import ChatMessage
from voice.skills.numbers import NUMBER_WORDS
from voice.skills.word_classes import AUXILIARIES, FUNCTION_WORDS, PRONOUNS, REPAIR_MARKER, REPAIR_WORDS

_ITEM = REPAIR_MARKER
_RUN = rf"(?P<run>\b{_ITEM}\b(?:[,.!:]*\s*\b{_ITEM}\b)*)[,.!:…-]*\s+(?=\S)"
"""A run of markers ("no, wait, sorry") and what ends it, before the repair."""
_MARKER = re.compile(rf"(?P<pre>[,.;:!?…]+\s*|\s+[-–—]+\s*|\s+){_RUN}", re.IGNORECASE)
_ALONE = frozenset({"i meant", "scratch that", "or rather"})
"""Markers that mean a repair without a comma before them or a second marker (and "I mean": :func:`_alone`)."""

_NUMBER = re.compile(
    rf"\b\d(?: \d\b)+|\$?\d[\d,]*(?:\.\d+)?%?|\b(?:{NUMBER_WORDS})(?:(?:[\s-]+|\s+and\s+)(?:{NUMBER_WORDS}))*\b",
    re.IGNORECASE,
)
"""One number as said: "169", "$80", "2.5", "20%", "twenty five", "two hundred and ten", a code said digit by
digit ("1 9 8 5")."""
_TOKEN = re.compile(rf"{_NUMBER.pattern}|[A-Za-z][A-Za-z'’-]*", re.IGNORECASE)
"""A word, or a whole number (one token: "twenty five percent" is two, as "25 percent" is)."""
_ENDS_REQUEST = re.compile(r"[\s,.;:!?…]+$")
_SEGMENT_END = re.compile(r"[,;]\s+|[.?!…]+(?:\s+|$)")
_PLEASE = re.compile(r"[\s,]+please$", re.IGNORECASE)

_REQUEST_VERBS = frozenset({
    "set", "start", "cancel", "stop", "convert", "calculate", "compute", "tell", "give", "remind", "play", "turn",
    "call", "add", "remember", "whats", "please",
})  # fmt: skip
"""First words of a request that stands on its own, besides :data:`~voice.conversation.user_text.QUESTION_WORDS`
("what's", "can", "could", … are there)."""

_ASKS_WHAT_I_MEAN = frozenset({"what", "do", "did", "does", "that", "if", "know", "see"})
_ASKS = re.compile(r"\s(?=(?:what|what's|how|how's|who|who's|which|where|where's|when|why)\b)", re.IGNORECASE)
"""Where a question starts again inside the words after the marker."""
_OWN_CLAUSE = re.compile(r"\s(?=(?:so|and|because|'?cause|since|as) (?:i|we)\b)", re.IGNORECASE)
"""Where a clause of the speaker's own starts after the repair: "…no, make that 45 so I know when to head back",
"…one pound twenty a stem, no sorry, one pound ten and I need 350 stems" (the repair keeps "a stem")."""
_PURPOSE = re.compile(rf"(?:{_NUMBER.pattern})(?=\s(?:for|to|so) (?:the|my|our|a|an|it|i|we)\b)", re.IGNORECASE)
"""After a bare number, where the speaker's purpose begins: "…two hours, no, make that three | for the varnish"."""
_PREPOSITIONS = ("of", "in", "for", "to", "at", "from", "on", "with", "about", "by", "into")
_PREPOSITION = re.compile(rf"\b(?:{'|'.join(_PREPOSITIONS)})\s+", re.IGNORECASE)

_HESITATION = re.compile(r"(?:[\s,]+(?:uh+|um+|er+|erm|uhm|hmm+))+$", re.IGNORECASE)
"""A hesitation before the marker belongs to it, not to the reparandum."""
_CUT_OFF = frozenset({"a", "an", "the", *_PREPOSITIONS})
"""Words a phrase does not end on: it was cut off ("way to")."""
_IT_IS = re.compile(r"^(?:it'?s|it is|it was|that'?s|that is)\s+", re.IGNORECASE)
_POSSESSIVES = frozenset({"my", "your", "his", "her", "our", "their"})
_MAX_REPAIRS = 4
_MAX_PHRASE_WORDS = 4
"""A repair read as a follow-up is a short phrase ("an ant", "Australia"), not a sentence."""


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    text: str

    @property
    def number(self) -> bool:
        return _NUMBER.fullmatch(self.text) is not None


def repair(text: str) -> str:
    """``text`` with each self-correction it makes applied; the same text when it makes none (or none that the
    rule can place)."""
    for _ in range(_MAX_REPAIRS):
        repaired = _first_repair(text)
        if repaired is None:
            return text
        text = repaired
    return text


_OPENS_WITH_REPAIR = re.compile(rf"^\s*{_RUN}", re.IGNORECASE)


def repair_turns(turns: Sequence[str]) -> list[str]:
    """The user's turns (oldest first) with a turn that opens by taking back the turn before ("no wait sorry, it's
    1985" after "The side gate code is 1983."; "actually no, make it Friday") read with it as one turn that
    corrects itself (:func:`repair`): the two become the corrected one. The opening must be two markers in a row
    ("no wait", "no sorry", "actually no") or one that means nothing else ("I meant", "scratch that"): a lone "No."
    answers the assistant. A turn whose repair the rule cannot place stays as said, as does the one before it.
    What the skills read of a conversation's told facts (the model's prompt keeps each turn as it was)."""
    out: list[str] = []
    for turn in turns:
        m = _OPENS_WITH_REPAIR.match(turn)
        if out and m is not None and (len(REPAIR_WORDS.findall(m["run"])) > 1 or m["run"].lower() in _ALONE):
            joined = f"{out[-1].rstrip(' .!?')}, {turn.strip()}"
            if (fixed := repair(joined)) != joined:
                out[-1] = fixed
                continue
        out.append(turn)
    return out


def as_meant(text: str, config: LlmConfig) -> str:
    """``text`` as the skills and the model read it: :func:`repair`-ed with ``[llm] self_repair``, else as is."""
    return repair(text) if config.self_repair else text


def repair_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with every user message :func:`repair`-ed; the others unchanged."""
    out: list[ChatMessage] = []
    for m in messages:
        said = repair(m.content) if m.role == "user" else m.content
        out.append(m if said == m.content else replace(m, content=said))
    return out


def _first_repair(text: str) -> str | None:
    """``text`` with its first self-correction that can be placed applied, or None if it has none."""
    for m in _MARKER.finditer(text):
        run = m.group("run")
        items = REPAIR_WORDS.findall(run)
        alone = _alone(run, text[: m.start()], text[m.end() :])
        if not (re.search(r"[^\s]", m.group("pre")) or len(items) > 1 or alone):
            continue
        before = _HESITATION.sub("", text[: m.start()].rstrip())  # "…five kilos uh actually make it six kilos"
        fix = text[m.end() :].strip()
        if not _tokens(before) or not _tokens(fix):
            continue
        out = _apply(before, fix, asked="?" in m.group("pre"))
        if out is not None:
            return out
    return None


def _apply(before: str, fix: str, *, asked: bool) -> str | None:
    """``before`` corrected by ``fix`` (the words after the marker; ``asked``: a "?" ended ``before``), or None if
    the rule cannot place it. The repair is ``fix`` up to its first comma or end mark; the words after it go on
    the corrected sentence ("four of us, no wait, five, my cousin came too, …")."""
    body = _ENDS_REQUEST.sub("", before)
    said = _tokens(body)
    ends = [m.start() for m in (_SEGMENT_END.search(fix), _ASKS.search(fix, 1), _OWN_CLAUSE.search(fix, 1)) if m]
    if (number := _PURPOSE.match(fix)) is not None:
        ends.append(number.end())  # "make that three | for the varnish to dry"
    cut = min(ends, default=None)  # "I mean 350 | how many miles is that?"
    segment = _PLEASE.sub("", (fix if cut is None else fix[:cut]).strip())
    if _NUMBER.fullmatch(bare := _IT_IS.sub("", segment)):
        segment = bare  # "number twelve, no wait, it's fourteen": the "it's" stands for what it repairs
    tail = "" if cut is None else fix[cut:].rstrip()
    if not _tokens(tail):
        tail = "?" if asked or tail.endswith("?") else ""
    fixed = _tokens(segment)
    if not said or not fixed:
        return None
    if _NUMBER.fullmatch(segment):  # a bare number: it replaces the last number said, whose unit stays
        numbers = list(_NUMBER.finditer(body))
        if not numbers:
            return None
        alike = [n for n in numbers if _form(n.group()) == _form(segment)]  # "12%" for the last percentage
        last = (alike or numbers)[-1]
        return body[: last.start()] + segment + body[last.end() :] + tail
    at = _restart(said, fixed)
    if at is not None:
        after = _after_same_shape(said, fixed, at)  # "15 percent of 80, no, 20 percent": "of 80" stays
        return body[: said[at].start] + segment + (body[after:] if after is not None else "") + tail
    first = fixed[0].text.lower()
    if first in QUESTION_WORDS or first in _REQUEST_VERBS:
        return segment + tail
    if tail not in ("", "?") or len(fixed) > _MAX_PHRASE_WORDS or any(_says_more(t.text) for t in fixed):
        return None  # not a short phrase: "the currency of the UK? I mean, it's not yours" says more
    if len(fixed) > 1 and fixed[-1].text.lower() in _CUT_OFF:
        return None  # a phrase cut off: "…25 minutes. No way to" ("no wait" misheard, its "make it 25" placed)
    return ellipsis.resolve(f"and {segment}?", body + "?") or _new_object(body, segment, tail)


def _form(number: str) -> str:
    """How a number is written, as far as it tells what it counts: a percentage, an amount of dollars, or a number."""
    return "%" if number.endswith("%") else "$" if number.startswith("$") else ""


def _says_more(word: str) -> bool:
    """A pronoun or an auxiliary: words that make a clause, not a noun phrase that could take another's place."""
    w = word.lower()
    return w in PRONOUNS or w in AUXILIARIES


def _new_object(body: str, segment: str, tail: str) -> str | None:
    """``segment`` in place of the short phrase after ``body``'s last preposition ("the atomic number of the unknown,
    sorry, I meant argon"), or None."""
    found = list(_PREPOSITION.finditer(body))
    if not found or not 0 < len(_tokens(body[found[-1].end() :])) <= _MAX_PHRASE_WORDS:
        return None
    return body[: found[-1].end()] + segment + tail


def _alone(run: str, before: str, after: str) -> bool:
    """``run`` marks a repair without a comma before it or a second marker: "I meant", "scratch that", "or
    rather"; "I mean" before a number or a name ("300 km I mean 350"), unless it is part of the question ("what
    do I mean", "you know what I mean"; before other words it often says more, not otherwise: "the capital of Peru
    I mean the country"); and any other marker but "wait" between two numbers ("4 minutes actually 3 minutes")."""
    said = run.lower()
    following = _tokens(after)
    number_next = bool(following) and following[0].number
    if said == "i mean":
        last = re.search(r"([A-Za-z']+)\W*$", before)
        value = number_next or (bool(following) and following[0].text[:1].isupper())
        return value and last is not None and last.group(1).lower() not in _ASKS_WHAT_I_MEAN
    if said in _ALONE:
        return True
    # One number for another: "a timer for 4 minutes actually 3 minutes", "40 no 35" ("wait 10 minutes" is a wait).
    return number_next and said not in ("wait", "hang on", "hold on") and any(t.number for t in _tokens(before))


def _after_same_shape(said: list[_Token], fixed: list[_Token], at: int) -> int | None:
    """Where the stretch of ``said`` from ``at`` that the repair ``fixed`` replaces word for word (the same words,
    a number for a number: "15 percent" by "20 percent") ends, when words were said after it; else None (the repair
    replaces everything from ``at``: "20 percent of 150, no, 30 percent of it")."""
    stretch = said[at : at + len(fixed)]
    if len(stretch) < len(fixed) or at + len(fixed) == len(said):
        return None
    same = [a.text.lower() == b.text.lower() for a, b in zip(stretch, fixed, strict=True)]
    alike = all(s or (a.number and b.number) for s, a, b in zip(same, stretch, fixed, strict=True))
    return stretch[-1].end if alike and not all(same) else None  # the same words again correct nothing there


def _restart(said: list[_Token], fixed: list[_Token]) -> int | None:
    """Where in ``said`` the repair restarts: the token of the same kind as the repair's first (the same word, or
    a number for a number) that begins the longest run of the same words as the repair, the last on a tie. Another
    number, or the same grammar word ("the", "of", "what"), counts only when the same word follows both ("20
    percent" … "15 percent") or it was the last word said ("what's 15, no sorry, 16 percent of 250"): "twelve
    apples and I buy another, no, nineteen more" does not replace the twelve. A possessive ("my", "her") is no
    such grammar word: "what's my son's, no sorry, my daughter's name" restarts at "my"."""
    head = fixed[0]
    best: tuple[int, int] | None = None  # (run length, index)
    for i, tok in enumerate(said):
        same = tok.text.lower() == head.text.lower()
        owners = {tok.text.lower(), head.text.lower()} <= _POSSESSIVES  # "her birthday, sorry, his birthday"
        if not (same or (head.number and tok.number) or owners):
            continue
        run = 0
        for a, b in zip(said[i + 1 :], fixed[1:], strict=False):
            if a.text.lower() != b.text.lower():
                break
            run += 1
        # "the", "of", "what" alone say little; a possessive restarts what it owns ("my son's, no, my daughter's")
        weak = not same or (tok.text.lower() in FUNCTION_WORDS and tok.text.lower() not in _POSSESSIVES)
        if weak and run == 0 and i != len(said) - 1:
            continue
        if best is None or run >= best[0]:
            best = (run, i)
    return None if best is None else best[1]


def _tokens(text: str) -> list[_Token]:
    return [_Token(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]
