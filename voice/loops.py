"""Stopping a reply that loops or goes on too long, on a sentence boundary.

The LLM streams pieces; :meth:`ReplyGuard.stop_before` is asked before each piece is let through. It stops
the reply before a piece that would start a sentence past ``max_sentences``, and before a piece that
would start a sentence once the text so far repeats itself (some run of three words occurring three times),
so the spoken reply ends at a sentence end; a loop with no sentence end is cut at its fourth repetition.
"""

from __future__ import annotations

import re
from collections import Counter

_SENTENCE_END = re.compile(r"[.!?…](?=[\s\"')\]]*$)")
_WORD = re.compile(r"[\w']+")


def repeats(text: str, n: int = 3, times: int = 3) -> bool:
    """Some run of ``n`` words occurs ``times`` times or more."""
    words = _WORD.findall(text.lower())
    grams = Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return any(c >= times for c in grams.values())


class ReplyGuard:
    """Per reply: counts finished sentences and watches for loops. ``max_sentences`` 0 means no cap."""

    def __init__(self, *, max_sentences: int) -> None:
        self.max_sentences = max_sentences
        self.text = ""
        self.sentences = 0

    def stop_before(self, piece: str) -> bool:
        """Whether to end the reply instead of emitting ``piece`` (which is recorded if not)."""
        if repeats(self.text, times=4):  # a loop without sentence ends: stop mid-sentence rather than never
            return True
        at_boundary = self.text == self.text.rstrip() and _SENTENCE_END.search(self.text) is not None
        if self.text and at_boundary and piece[:1].isspace():
            self.sentences += 1
            if (self.max_sentences and self.sentences >= self.max_sentences) or repeats(self.text):
                return True
        self.text += piece
        return False
