"""A user's words written for the model the way people type them, not the way the STT spelled them.

Whisper's short window often writes a question as "who was the first president of the united states." (lower
case first, a full stop) or with no end mark at all (of the 101 spoken questions of the quality set: 17 start in
lower case, 6 questions end with ".", 14 have no end mark). Small chat models are trained on typed questions and
answer these spellings worse: in text mode with each question's first letter lower-cased and its "?" a full stop
(``voice bench quality --as-transcribed``, 2026-12-04) smollm2-135m was right on 89.8 % of the set against 92.9 %
as typed, qwen2.5-coder-0.5b on 66.3 % against 80.6 %. :func:`tidy` writes each sentence with a capital first
letter and ends a question with "?" (92.9 and 79.6 % on the same spellings).

Only the model's view changes (``[llm] tidy_user_text``): the history, the transcripts sent to clients and the
turn log keep the words as heard. :func:`tidy` is pure, so a turn renders the same on every later turn and the
cached KV prefix still covers it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from voice.runtime.model_api import ChatMessage

# fmt: off
QUESTION_WORDS = frozenset({
    "what", "what's", "who", "who's", "whom", "whose", "where", "where's", "when", "why", "how", "how's",
    "which", "is", "isn't", "are", "aren't", "am", "was", "wasn't", "were", "weren't", "do", "does", "doesn't",
    "did", "didn't", "can", "can't", "could", "couldn't", "will", "won't", "would", "wouldn't", "should",
    "shouldn't", "shall",
})
# fmt: on
"""A sentence that starts with one of these asks something ("Do" and "Will" as commands are rare to an
assistant; "have" and "may" start statements as often as questions, so they are not here)."""

_SENTENCE_END = re.compile(r"((?<=[.?!])\s+)")
"""The space after a sentence's end mark; captured, so that the text keeps its own spacing and line breaks."""
_FIRST_WORD = re.compile(r"[A-Za-z']+")


_INTERJECTIONS = re.compile(
    r"^(?:(?:u+h*m+|u+h+|e+r+m*|h+m+|oh|ah|hey|ok(?:ay)?)\b[,.!]*\s+"
    r"|(?:well|wait|sorry|actually|alright|all right|right|so|look|listen|quick one|quick question)[,.!]+\s+"
    # Whisper's "They," for "Hey," (the seventh held-out set), only before a question: "They, in turn, …" stays.
    r"|they,\s+(?=(?:what|what's|who|which|where|when|how|why|can|could|is|are|do|does)\b))+",
    re.IGNORECASE,
)


def strip_interjections(text: str) -> str:
    """``text`` without the interjections it starts with, which ask nothing: "Well, 1,000 minus 387" → "1,000
    minus 387", "Wait, what did I say I was allergic to?" → "what did I say I was allergic to?". A word that
    can start a request too ("so", "well", "right", "wait", ...) counts only with a comma or end mark after it
    ("Right now" stays)."""
    return _INTERJECTIONS.sub("", text.strip())


def tidy(text: str) -> str:
    """``text`` with each sentence's first word capitalized (when it is all lower case: "iPhone" stays) and
    a question ending in "?" instead of "." or nothing; a last sentence ending in a letter or digit gets "."
    (the spacing between sentences, line breaks included, is kept)."""
    stripped = text.strip()
    if not stripped:
        return text
    parts = _SENTENCE_END.split(stripped)  # sentence, space, sentence, …
    return "".join(p if i % 2 else _sentence(p) for i, p in enumerate(parts))


def _sentence(s: str) -> str:
    word = _FIRST_WORD.match(s)
    if word is None:
        return s
    first = word.group()
    if first.islower():
        s = first[0].upper() + s[1:]
    question = first.lower() in QUESTION_WORDS
    if s.endswith("...") or s.endswith("?") or s.endswith("!"):
        return s
    if s.endswith("."):
        return s[:-1] + "?" if question else s
    if not s[-1].isalnum():  # "…, please:" or a quote: left as written
        return s
    return s + ("?" if question else ".")


def tidy_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with every user message :func:`tidy`; the others unchanged."""
    return [replace(m, content=tidy(m.content)) if m.role == "user" else m for m in messages]
