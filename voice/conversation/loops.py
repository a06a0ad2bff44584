"""Stopping a reply that loops or goes on too long, on a sentence boundary.

The LLM streams pieces; :meth:`ReplyGuard.stop_before` is asked before each piece is let through. It stops
the reply before a piece that would start a sentence past ``max_sentences``, and before a piece that
would start a sentence once the text so far repeats itself (some run of three words occurring three times),
so the spoken reply ends at a sentence end; a loop with no sentence end is cut at its fourth repetition.

A list counts its items as sentences, and its numbers do not: "1." at the start of a line ends nothing (the cap
once ended a recipe on a dangling "2.", which was spoken as "two"), and a line without an end mark ("2. Canada")
ends a sentence at its line break, unless it introduces what follows ("Here are some of them:").
"""

from __future__ import annotations

import re
from collections import Counter

_SENTENCE_END = re.compile(r"[.!?…](?=[\s\"')\]]*$)")
_LIST_NUMBER = re.compile(r"(?:^|\n)[ \t]*(?:\d+|[a-zA-Z])[.)]$")
"""A list item's number or letter alone on its line so far ("1.", "b)"): not a sentence end."""
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
        at_boundary = (
            self.text == self.text.rstrip()
            and _SENTENCE_END.search(self.text) is not None
            and _LIST_NUMBER.search(self.text) is None
        )
        line = self.text.rsplit("\n", 1)[-1].strip()
        ends_an_item = not at_boundary and piece.startswith("\n") and line != "" and not line.endswith(":")
        if self.text and ((at_boundary and piece[:1].isspace()) or ends_an_item):
            self.sentences += 1
            if (self.max_sentences and self.sentences >= self.max_sentences) or repeats(self.text):
                return True
        self.text += piece
        return False
