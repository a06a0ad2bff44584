"""A question that names a person by a pronoun ("When was he born?") written out with the person's name.

After "Who wrote Romeo and Juliet?" and a reply naming William Shakespeare, a person hears "When was he born?" as
"When was William Shakespeare born?". SmolLM2-135M did not: it answered "The story of Romeo and Juliet was
written by William Shakespeare in the 16th century.", and asked with the name, "William Shakespeare was born in
the year 1564." (2026-12-04; "What other plays did he write?" too: with the name, it lists Macbeth).

:func:`person_named` finds whom a "who" question's reply names: the first name in it (a run of capitalised
words) that the question does not have, right or wrong (the conversation goes on about whom the reply named).
:func:`resolve` writes that name in for the first "he", "she", "him", "his", "hers" or "her" of the next
question ("her" before a noun is "Jane Austen's"). "It" and "they" are left as said: "What time is it?" and
"Is it raining?" have nothing to refer to.

"Its" does refer, to the thing the question before asked about: :func:`thing_asked` takes the object of its last
"of" or "for" ("What's the symbol for silver?": silver), else its last name ("How many moons does Mars have?"),
and :func:`resolve_its` writes "And what's its atomic number?" as "And what's the atomic number of silver?".
SmolLM2 had answered it "The chemical symbol for silver is Ag." (the nineteenth question set). Pure.
"""

from __future__ import annotations

import re

from voice.conversation.user_text import QUESTION_WORDS, strip_interjections

_PRONOUN = re.compile(r"\b(he|she|him|his|hers|her)\b", re.IGNORECASE)
_WHO = re.compile(r"(?:who|who's|whom)\b", re.IGNORECASE)
_NAME_WORD = r"[A-Z][\w'’.-]*"
NAME = re.compile(rf"{_NAME_WORD}(?:\s+(?:(?:and|of|the|de|da|von|van) )*{_NAME_WORD})*")
"""A name: a run of capitalised words ("France", "New York", "Romeo and Juliet", "John F. Kennedy")."""
#: Capitalised at the start of a sentence, not as part of a name.
_SENTENCE_WORDS = frozenset({
    "the", "a", "an", "he", "she", "it", "they", "we", "you", "i", "his", "her", "its", "their", "this", "that",
    "these", "those", "there", "in", "on", "at", "of", "by", "for", "from", "as", "after", "before", "during",
    "yes", "no", "sure", "well", "however", "although", "while", "when", "what", "who", "which", "according",
    "born", "one", "some", "many", "most", "both", "sorry", "unfortunately", "actually", "i'm", "i've", "i'd",
    "i'll",
})  # fmt: skip
#: After "her", words that make it the object ("Tell me about her in short"), not a possessive ("her books").
_NOT_A_NOUN = frozenset({
    "to", "for", "with", "about", "from", "at", "in", "on", "of", "and", "or", "too", "again", "now", "then",
    "yet", "so", "as", "ever", "still", "well", "very", "much", "yesterday", "today", "tonight", "tomorrow", "here",
    "there", "before", "after", "once", "back", "up", "down", "out", "off", "over", "if", "because", "when", "but",
    "that", "is", "was", "be", "been", "do", "did", "say", "said",
})  # fmt: skip
_ASKS = QUESTION_WORDS | {"tell", "name", "list", "give", "describe", "explain"}


def person_named(question: str, reply: str) -> str | None:
    """Whom ``reply`` names in answer to ``question`` when that asks "who …", else None."""
    if not _WHO.match(strip_interjections(question)):
        return None
    asked = question.lower()
    for m in NAME.finditer(reply):
        words = m.group().split()
        owner = next((i for i, w in enumerate(words) if re.search(r"['’]s\b", w)), None)
        if owner is not None:  # "William Shakespeare's Romeo and Juliet": the name ends at the owner
            words = [*words[:owner], re.sub(r"['’]s\b.*", "", words[owner])]
        words[-1] = words[-1].rstrip(".,;:'’")
        while words and words[0].lower() in _SENTENCE_WORDS:
            words = words[1:]  # "The novel by Jane Austen": "The" starts the sentence
        name = " ".join(words)
        if name and name != "I" and name.lower() not in asked:
            return name
    return None


def resolve(question: str, person: str) -> str | None:
    """``question`` with ``person`` for its first personal pronoun, or None: it has none, or it is not a
    question or request ("I like him." stays as said)."""
    t = question.strip()
    first = re.match(r"[\w']+", strip_interjections(t))
    if not (t.endswith("?") or (first is not None and first.group().lower() in _ASKS)):
        return None
    m = _PRONOUN.search(t)
    if m is None:
        return None
    word = m.group(1).lower()
    after = re.match(r"\s+([A-Za-z']+)", t[m.end() :])
    possessive = word in ("his", "hers") or (
        word == "her" and after is not None and after.group(1).lower() not in _NOT_A_NOUN
    )
    return t[: m.start()] + person + ("'s" if possessive else "") + t[m.end() :]


_ITS = re.compile(r"\bits\s+([a-z][\w' -]*?)\s*([?.!]*)$", re.IGNORECASE)
_OBJECT = re.compile(r"\b(?:of|for)\s+(?:the\s+)?([\w' -]+?)[?.!]*$", re.IGNORECASE)


def thing_asked(question: str) -> str | None:
    """What ``question`` asked about: the object of its last "of" or "for" (four words at most, no pronoun),
    else the last name it says after its first word; None: neither."""
    t = strip_interjections(question.strip())
    m = _OBJECT.search(t)
    if m and len(m.group(1).split()) <= 4 and not _PRONOUN.search(m.group(1)) and "it" not in m.group(1).split():
        return m.group(1)
    names = _names(t)
    return names[-1] if names else None


def _names(text: str) -> list[str]:
    """The names ``text`` says after its first word (capitalised there only as the start of a sentence)."""
    return [n.group() for n in NAME.finditer(text) if n.start() > 0 and n.group().lower() not in _SENTENCE_WORDS]


_OWN_THING = re.compile(r"\b(?:the|a|an|this|that|these|those|my|your|our|their)\s+\w", re.IGNORECASE)


def resolve_its(question: str, thing: str) -> str | None:
    """``question`` with "its X" at its end as "the X of ``thing``", or None: no "its" ends it, or the question
    names its own thing before it ("Why is the Eiffel Tower famous for its height?", "Why is Paris known for its
    food?")."""
    t = question.strip()
    m = _ITS.search(t)
    if m is None:
        return None
    before = t[: m.start()]
    if _OWN_THING.search(before) or _names(before):
        return None
    return f"{before}the {m.group(1)} of {thing}{m.group(2)}"
