"""What the words heard so far say about the end of the turn (``[turn] text_evidence``). Pure.

At a pause the speculative reply transcribes the utterance so far; its words are evidence the audio model
(Smart Turn) does not have. :func:`verdict` reads them:

* **finished**: the text ends with "?" or "!" (Whisper punctuates a question it heard whole: "where is he
  from?"), or a local skill recognises it whole as a command or question it answers
  (:func:`voice.turn.ask_again.understood`: a timer, a sum, the clock, a request it cannot carry out);
* **unfinished**: otherwise, when the last word cannot end an English sentence — an article, a conjunction, a
  preposition that needs its object, a possessive, an arithmetic operator, a filler ("um") — or the text ends on
  a comma, a dash or an ellipsis ("what is the capital of", "set a timer for", "seventeen times", "and um");
* **unknown** otherwise. Whisper ends nearly every cut with a full stop, so a full stop alone proves nothing.

The word classes are English grammar (closed classes), not phrasings of any question set. Words that often end
a finished request are left out on purpose: particles ("turn it on", "log me in"), demonstratives ("what is
that"), auxiliaries ("what can you do"), "about" and "like" ("what does it look like").
:func:`voice.turn.endpoint.Endpointer.hear_text` fuses the verdict with the end-of-turn model's score.
"""

from __future__ import annotations

import re
from typing import Literal

from voice.turn.ask_again import understood

Verdict = Literal["finished", "unfinished", "unknown"]

#: Words after which an English sentence cannot end (articles, conjunctions, prepositions that need an
#: object, possessives, arithmetic operators, fillers).
CANNOT_END = frozenset(
    " ".join(
        [
            "a an the",
            "and or but nor so because if than whether although though while unless until",
            "of to for from with without at by into onto via per between among through toward towards",
            "my your his her our their its every whose",
            "plus minus times divided multiplied",
            "um uh er erm uhm hmm mm",
        ]
    ).split()
)

_WORD = re.compile(r"[a-z']+|\d+")
_OPEN_END = re.compile(r"(,|-|–|—|…|\.\.\.)\s*$")


def verdict(text: str, location: str = "") -> Verdict:
    """Whether ``text`` (the utterance so far, as transcribed) reads as a finished turn (module docstring)."""
    said = text.strip()
    words = _WORD.findall(said.lower())
    if not words:
        return "unknown"
    if said.endswith(("?", "!")):
        return "finished"
    if _OPEN_END.search(said) or words[-1] in CANNOT_END:
        return "unfinished"
    return "finished" if understood(said, location) else "unknown"
