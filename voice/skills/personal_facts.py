"""Facts the user told the assistant earlier in the conversation, said back exactly: a local skill.

A small LLM loses them even one turn later. On the held-out question set (SmolLM2-135M, text mode) "My dog is
called Rex." then "What is my dog's name?" got "I'm so sorry for your loss…", and "I was born in 1990." then
"How old will I be in 2030?" got a reply about wills. So a few plain forms are matched on the transcript:

* statements: "my name is …", "call me …", "my <someone>'s name is …", "my <someone> is called/named …",
  "I have a <pet> called …", "my favourite <thing> is …", "I live in …", "my <someone> lives in …",
  "I was born in <year>", "remember (the number) …";
* questions: "what's my name" (or "what did I say my name was"), "what is my <someone>'s name", "what is my
  <someone> called", "what's my favourite <thing>", "where do I live", "where does my <someone> live", "how old
  am I", "how old will I be in <year>", "what (number) did I ask you to remember".

The facts are read again from the conversation's own user turns at each question; nothing is kept beside the
history, so they are forgotten with it. The latest statement of a fact wins. A statement gets a short
acknowledgement, "OK, I'll remember that …" (SmolLM2-135M's own replies to such statements were "I'm sorry for
your loss." and "Priya is a voice assistant…"; the LLM imitates the previous reply's form, and "Got it: …" made
it answer "Which country do I live in?" with "Got it: you live in Portugal."). A question about a fact never
stated gets "I don't know …" rather than a guess. Anything else (including questions that need knowledge on top
of a fact, such as "Which country do I live in?") goes on to the LLM. A value is at most four words, so a
longer sentence ("my name is Priya and I need help with…") is left to the LLM to reply to, and so is a value that
starts a new clause ("my favourite colour is green, what's yours?", "remember to buy milk"); the facts are read
from each clause that starts with "and my" / "and I" too ("My son is called Theo, and my daughter is called
Maya": both; "my name is Priya and I need help": the name). A name must start with a
capital letter after "call me" and "my name is", as Whisper writes names ("call me Bea", not "call me later");
after "my <someone> is called" (or "named", or "'s name is") it may be lower case ("my cat is called pickles").
Pure: the caller passes the user turns and the current date.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

_NOT_A_CLAUSE = (
    r"(?!(?:and|but|so|because|what'?s?|who|how|why|when|where|if|can|could|would|will|please|to|not|me|you|him|"
    r"her|them|us|it|that|this)\b)"
)
_A_NAME = (
    r"(?=(?-i:[A-Z]))"  # as Whisper writes a name: "call me Bea", not "call me later" or "call me a taxi"
)
_VALUE = (
    rf"(?P<v>{_NOT_A_CLAUSE}[\w'.-]+(?: {_NOT_A_CLAUSE}[\w'.-]+){{0,3}})"  # "green", not "green what's yours"
)
_SPELLING = {"color": "colour", "flavor": "flavour"}
_WHO = r"(?P<who>[a-z]+(?: [a-z]+)?)"
_POSSESSIVE = r"(?:'s| s|s)"  # Whisper writes "dog's", "dogs" or "dog s"
_FAVOURITE = r"fav(?:ou?)?rite"
_REMEMBER = "remembered"
_BORN = "birth year"


@dataclass(frozen=True)
class Fact:
    """One thing the user said about themselves: what it is about (``"name"``, ``"dog's name"``, ``"favourite
    colour"``, ``"home"``, ``"sister's home"``, ``"birth year"``, ``"remembered"``) and its value as heard."""

    subject: str
    value: str


def _clean(text: str) -> str:
    t = re.sub(r"[?!.,;:\"]+(?=\s|$)", " ", text.strip())
    t = re.sub(
        r"^(?:(?:ok(?:ay)?|hey|hi|hello|hiya|bye|good (?:morning|afternoon|evening)|so|and|well|oh|please|actually"
        r"|no|sorry)\s+)+",  # "bye": tiny.en's "hi" at times ("Bye, my name is Daniel.")
        "",
        t,
        flags=re.IGNORECASE,
    )
    return " ".join(t.split())


def _statement(text: str) -> Fact | None:
    t = _clean(text)
    forms: tuple[tuple[str, str], ...] = (
        (rf"(?:my name is|my name's|i'?m called|i am called|call me) {_A_NAME}{_VALUE}", "name"),
        # "called", "named", "name is": a name whatever its case ("my cat is called pickles", as Whisper wrote it)
        (rf"my {_WHO}{_POSSESSIVE} name is {_VALUE}", "{who}'s name"),
        (rf"my {_WHO} is (?:called|named) {_VALUE}", "{who}'s name"),
        (rf"i (?:have|own|got) an? {_WHO} (?:called|named) {_VALUE}", "{who}'s name"),
        (rf"my {_FAVOURITE} (?P<what>[a-z]+(?: [a-z]+)?) is {_VALUE}", "favourite {what}"),
        (rf"i live in {_VALUE}", "home"),
        (rf"my {_WHO} lives in {_VALUE}", "{who}'s home"),
        (r"i was born in (?P<v>\d{4})", _BORN),
        (rf"(?:please )?remember (?:(?:the )?(?:number|word|name|code) )?{_VALUE}", _REMEMBER),
    )
    for pattern, subject in forms:
        if m := re.fullmatch(pattern, t, re.IGNORECASE):
            parts = {
                k: _SPELLING.get(v.lower(), v.lower()) for k, v in m.groupdict().items() if k != "v" and v
            }
            return Fact(subject.format(**parts), m.group("v"))
    return None


_AND_MY = re.compile(r"\s*[,;]?\s+and\s+(?=(?:my|i)\b)", re.IGNORECASE)
"""Where a statement of two facts joins them: "My son is called Theo, and my daughter is called Maya"."""


def facts(user_turns: Sequence[str]) -> dict[str, str]:
    """Every fact stated in ``user_turns`` (oldest first), the latest statement of each winning."""
    known: dict[str, str] = {}
    for turn in user_turns:
        whole = _statement(turn)
        for fact in [whole] if whole is not None else [_statement(clause) for clause in _AND_MY.split(turn)]:
            if fact is not None:
                known[fact.subject] = fact.value
    return known


def _acknowledge(fact: Fact) -> str:
    if fact.subject == "name":
        return f"Nice to meet you, {fact.value}."
    if fact.subject == _REMEMBER:
        return f"OK, I'll remember {fact.value}."
    if fact.subject == _BORN:
        return f"OK, I'll remember that you were born in {fact.value}."
    if fact.subject.endswith("'s name"):
        return f"OK, I'll remember that your {fact.subject.removesuffix(' name')} name is {fact.value}."
    if fact.subject == "home":
        return f"OK, I'll remember that you live in {fact.value}."
    if fact.subject.endswith("'s home"):
        who = fact.subject.removesuffix("'s home")
        return f"OK, I'll remember that your {who} lives in {fact.value}."
    return f"OK, I'll remember that your {fact.subject} is {fact.value}."


def _age(known: dict[str, str], year: int, now: datetime) -> str:
    if _BORN not in known:
        return "I don't know how old you are: you haven't told me when you were born."
    age = year - int(known[_BORN])
    if year == now.year:
        return f"You were born in {known[_BORN]}, so you turn {age} this year."
    if age < 0:
        return f"You were born in {known[_BORN]}, after {year}."
    return f"You {'turn' if year > now.year else 'turned'} {age} in {year}."


def _question(t: str, known: Callable[[], dict[str, str]], now: datetime) -> str | None:
    """The reply to a question about a fact; ``known`` reads the facts, only once a question has matched (it
    parses every earlier user turn)."""

    def told(subject: str, found: str, unknown: str) -> str:
        facts_now = known()
        return found.format(facts_now[subject]) if subject in facts_now else unknown

    if re.fullmatch(r"(?:what'?s|what is|do you (?:know|remember)) my name|who am i"
                    r"|what did i (?:say|see|tell you) my name (?:was|is)", t):  # fmt: skip  # "see": tiny.en's "say"
        return told("name", "Your name is {}.", "I don't know your name: you haven't told me.")
    for pattern in (
        rf"(?:what'?s|what is|do you (?:know|remember)) my {_WHO}{_POSSESSIVE} name",
        rf"(?:what'?s|what is|do you (?:know|remember)) the name of my {_WHO}",
        rf"what(?:'s| is) my {_WHO} called",
    ):
        if m := re.fullmatch(pattern, t):
            who = m.group("who")
            return told(f"{who}'s name", f"Your {who}'s name is {{}}.", f"I don't know your {who}'s name.")
    if m := re.fullmatch(rf"(?:what'?s|what is) my {_FAVOURITE} (?P<what>[a-z]+(?: [a-z]+)?)", t):
        what = _SPELLING.get(m.group("what"), m.group("what"))
        return told(
            f"favourite {what}", f"Your favourite {what} is {{}}.", f"I don't know your favourite {what}."
        )
    if re.fullmatch(r"where do i live", t):
        return told("home", "You live in {}.", "I don't know where you live: you haven't told me.")
    if m := re.fullmatch(rf"where does my {_WHO} live", t):
        who = m.group("who")
        return told(f"{who}'s home", f"Your {who} lives in {{}}.", f"I don't know where your {who} lives.")
    if re.fullmatch(r"how old am i(?: now| today)?", t):
        return _age(known(), now.year, now)
    if m := re.fullmatch(
        r"(?:how|our|now) old (?:will i be|was i|am i going to be) (?:in (?P<y>\d{4})|(?P<next>next year))", t
    ):
        return _age(known(), int(m.group("y")) if m.group("y") else now.year + 1, now)
    if re.fullmatch(r"what (?:number |word |name |code )?did i (?:ask|tell) you to remember", t):
        return told(_REMEMBER, "You asked me to remember {}.", "You haven't asked me to remember anything.")
    return None


_ASKS_BACK = re.compile(
    r"(?:(?:can|could|would|will) you )?(?:please )?"
    r"(?:tell me|remind me(?: of)?|do you (?:remember|recall|know)|repeat|say|read (?:back|out))"
    r" (?P<q>(?:my|our|what|when|where|which|who)\b.*?)(?: back| again| for me| to me)*"
)


def asked_back(t: str) -> str | None:
    """The question inside a request to say back what the user said, lower case: "Can you tell me my membership
    number?" → "what's my membership number", "Can you repeat my student number?", "Say my PIN back to me." →
    "what's my student number", "what's my pin", "Do you remember where I parked?" → "where i parked"; None when
    ``t`` is no such request."""
    m = _ASKS_BACK.fullmatch(_clean(t).lower().rstrip("?.! "))
    if m is None:
        return None
    q = m.group("q")
    return f"what's {q}" if q.startswith(("my ", "our ")) else q


def answer(transcript: str, earlier_user_turns: Sequence[str], now: datetime) -> str | None:
    """The reply to a statement or question about a fact the user tells, from ``earlier_user_turns`` (oldest
    first, without ``transcript``), or None (the LLM answers)."""
    if (fact := _statement(transcript)) is not None:
        return _acknowledge(fact)
    t = asked_back(transcript) or _clean(transcript).lower()
    t = re.sub(r"\s+again$", "", t)  # "what's my name again?"
    return _question(t, lambda: facts(earlier_user_turns), now)
