"""A reply that opens by saying the model does not know, or cannot, ends there.

SmolLM2-135M often begins a reply with its own doubt and then answers anyway: "I'm not sure. I don't have any
specific age information, but I can tell you that they're 12 years old." (the cat was eleven), "I'm not sure. I'll
give you a few options, but the most convenient one is 12:30.", "I'm sorry, I can't help you with that. Lincoln was
the first president of the United States." The first sentence is the model's own verdict on what it knows; what
follows it is made up more often than not (over the latest stored replies of every question set on 2026-12-07, 8
such continuations were wrong for 3 right). A user hears a reply that takes itself back, and cannot tell which half
to believe. So the reply keeps the first sentence and ends.

The first sentence declines when, after an apology ("I'm sorry, but", "Sorry,", "Unfortunately,"), it opens with a
first-person "I'm not sure", "I don't know", "I can't" / "I cannot", "I'm unable to" / "I'm not able to", or "I
don't have the ability / access / information …", and nothing in it turns to an answer ("I'm not sure, but I think
it's 42." is a hedged answer and goes on). "I can't wait …" and "I can't believe …" say nothing of an inability.
Pure; :class:`voice.conversation.answer_confidence.UnsureGate` applies it to the reply's first sentence.
"""

from __future__ import annotations

import re

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})
_APOLOGY = re.compile(
    r"^(?:(?:i'?m |i am )?(?:so |very |really |terribly )?sorry|unfortunately|sadly|apologies|hmm+|well|oh)"
    r"\b[,.!]*\s*(?:but\s+)?"
)
_CANT = r"(?:can'?t|cannot|can not)"
_DOUBT = re.compile(
    r"^(?:i'?m|i am) (?:not (?:sure|certain|able to)|unable to)\b"
    rf"|^i (?:don'?t|do not) know\b|^i {_CANT}\b(?! (?:wait|believe|imagine|stress|emphasi[sz]e|help but|agree)\b)"
    r"|^i (?:don'?t|do not) have (?:\w+ ){0,3}?(?:ability|abilities|access|information|info|data|way|means)\b"
)
_TURNS = re.compile(r"\b(?:but|however|though|although|yet|instead|i think|i believe|i guess|maybe|probably)\b")


def declines(sentence: str) -> bool:
    """``sentence`` (a reply's first) says the model does not know or cannot, and nothing in it answers after all."""
    text = " ".join(sentence.translate(_APOSTROPHES).lower().split())
    rest = _APOLOGY.sub("", text, count=1)
    m = _DOUBT.match(rest)
    return m is not None and _TURNS.search(rest, m.end()) is None
