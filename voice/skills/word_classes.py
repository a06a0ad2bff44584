"""Closed classes of words, by which the mechanisms that decide whether to answer at all read a transcript.

A closed class is a small set of grammar words that a language does not add to (articles, pronouns, auxiliaries,
hesitation sounds), unlike nouns and verbs: a rule over classes carries to phrasings it has never seen, where a
table of sentences does not. :mod:`voice.conversation.input_gate` asks whether a transcript holds any word with
meaning at all; :mod:`voice.skills.expressions` which words around a sum only ask for its result;
:mod:`voice.conversation.reply_check` which words of a reply say something. Pure.
"""

from __future__ import annotations

import re


def words_of(text: str) -> frozenset[str]:
    """The words of ``text``, split on spaces, as a set (how the classes below are written)."""
    return frozenset(text.split())


def singular(word: str) -> str:
    """ "lights" → "light", "calls" → "call", "eggs" → "egg"; "news", "glass", "bus" stay."""
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us", "is", "ws")) else word


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words_in(text: str) -> list[str]:
    """The words of a sentence, in order, lower case, with their apostrophes ("I’m" → "i'm"); punctuation dropped."""
    return _WORD.findall(text.lower().replace("’", "'"))


GLUE = words_of(
    "a an the and or but nor so of to in on at for with by from into onto off up as than then well like"
)
"""Articles, conjunctions and prepositions: they join words that mean something, and ask nothing alone."""

PRONOUNS = words_of(
    "i me my mine myself you your yours yourself we us our ours he him his she her hers it its they them their "
    "this that these those i'm i'd i'll i've you're you'd you'll you've we're it's that's there here"
)

AUXILIARIES = words_of(
    "is are was were be been being am do does did have has had will would shall should can could may might must "
    "isn't aren't wasn't weren't don't doesn't didn't won't wouldn't can't couldn't what's how's"
)

DETERMINERS = words_of("a an the another each every this that these those some any one")
"""Words that stand before a noun and need it: a request that ends on one has lost its last word."""

QUESTION_WORDS = words_of("what which who whom whose where when why how whats")

REPAIR_MARKER = (
    r"(?:no+|nope|wait|hang on|hold on|sorry|oops|actually|correction|scratch that|or rather|rather|i mean|i meant|"
    r"make (?:it|that)|let's say)"
)
"""The words by which a speaker takes back what they just said ("twenty, no, thirty"; "sorry, I mean"), as a
regular expression's alternatives: :mod:`voice.conversation.self_repair` puts the repair in its place, and
:mod:`voice.skills.expressions` reads a sum from after the last of them."""
REPAIR_WORDS = re.compile(rf"\b{REPAIR_MARKER}\b", re.IGNORECASE)
""":data:`REPAIR_MARKER` as whole words, anywhere in a text."""

ASKING = words_of(
    "please now again exactly just really quick quickly right okay ok hey tell know say give gives make makes "
    "come comes get gets equal equals calculate compute work out answer result sum total value"
)
"""Words that only ask for a result ("tell me", "what does it come to", "equals"), saying nothing of what it is."""

FUNCTION_WORDS = GLUE | PRONOUNS | AUXILIARIES | QUESTION_WORDS | ASKING
"""Every word of the classes above: the words of a request that are not its topic."""

_FILLER = re.compile(
    r"u+h*m*|u+m+|e+r+m*|e+h+|h+m+|m+(?:h+m+)*|a+h+|o+h+|h+u+h+|uh-huh|mhm|hm+|u+g+h+|s+h+|p+s+t+|p+f+t+|b+r+|g+r+|t+s+k+"
)
"""Hesitation sounds and noises Whisper writes as words: "um", "uhh", "erm", "hmm", "mm", "ah", "oh", "huh", "shh",
"brr"."""

_LETTER_RUN = re.compile(r"(.)\1\1")


def is_filler(word: str) -> bool:
    """A hesitation sound ("um", "uhh", "hmm", "ah"), which asks nothing."""
    return _FILLER.fullmatch(word.lower()) is not None


def is_non_word(word: str) -> bool:
    """Letters no English word is made of: a letter three times in a row ("aaah", "zzz"), or a single letter
    other than "a" and "I". Letters without a vowel are often a unit or a name ("km", "mph", "BBC"): words.
    Words of other alphabets are not judged here."""
    w = word.lower().strip("'")
    if not w.isascii() or not w.isalpha():
        return False
    if len(w) == 1:
        return w not in ("a", "i")
    return _LETTER_RUN.search(w) is not None


def is_content(word: str) -> bool:
    """A word that can carry a request: a word of letters that is neither glue, a filler nor a non-word.
    Pronouns, question words and answers ("you", "what", "yes") count: "What?" and "Yes." are requests."""
    w = word.lower()
    return any(c.isalpha() for c in w) and w not in GLUE and not is_filler(w) and not is_non_word(w)
