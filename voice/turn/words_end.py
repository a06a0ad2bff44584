"""How a language model reads the end of a turn from its words (``[turn] words_model``). Pure.

Smart Turn hears how the speech sounds; a language model reads what was said. LiveKit's turn detector does the
latter with a small LM fine-tuned on conversations: the user's words, rendered in the chat template, and the
probability that the template's end-of-turn token comes next. Here the assistant's own small LM does it zero-shot
(:class:`voice.backends.turn_words.WordsEndModel`): the probability that the words end a sentence or the turn,
:func:`ends_p`, the sum over the tokens :func:`is_ending` names (the template's end-of-turn token, and ".", "?",
"!", a newline).

The words are read as the speculative STT wrote them, lower-cased and without punctuation (:func:`normalize`): at
a mid-sentence pause Whisper still ends the cut with a full stop or a question mark ("What is the cap?"), so its
punctuation says little about the end of the turn, and the model is left to judge the words alone.

:func:`voice.turn.end_window.window_ms` uses the probability both ways (thresholds in ``[turn]``): under
``words_unfinished_below`` the words keep the long window, whatever the audio model said; at or over
``words_finished_at`` a turn the audio model heard as unfinished gets the complete window.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from voice.turn.text_evidence import Verdict

_KEPT = re.compile(r"[^\w\s']")
#: Pieces (a token's text, surrounding spaces removed) that end a sentence: with the end-of-turn token, the
#: continuations that say the words so far are whole.
ENDING_PIECES = frozenset({".", "?", "!", "?!", "..."})


def normalize(text: str) -> str:
    """``text`` lower-cased, hyphens as spaces, every character but letters, digits, spaces and apostrophes
    dropped, spaces collapsed: "What's the time, Sam-bot?" → "what's the time sam bot"."""
    return " ".join(_KEPT.sub("", text.lower().replace("-", " ")).split())


def is_ending(piece: str) -> bool:
    """Whether a token whose text is ``piece`` ends a sentence: a sentence end (spaces around it allowed) or a
    newline alone (not a newline and an indent: that is code)."""
    return piece == "\n" or piece.strip(" ") in ENDING_PIECES


def user_prefix(rendered: str, words: str) -> str:
    """The chat prompt ``rendered`` (a user turn holding ``words``) cut right after those words: what the model
    reads before it predicts whether the turn ends there. Raises ValueError when ``words`` is not in it."""
    at = rendered.rfind(words)
    if at < 0:
        raise ValueError(f"the rendered prompt does not hold the user's words {words!r}")
    return rendered[: at + len(words)]


def ends_p(logprobs: Iterable[float]) -> float:
    """The probability of ending: the sum of the ending tokens' probabilities (their log-probabilities given)."""
    return min(1.0, sum(math.exp(lp) for lp in logprobs))


def words_p(read: Callable[[str], float | None] | None, text: str, said: Verdict) -> float | None:
    """The words model ``read``'s probability that ``text`` ends the turn; None without a model, and without
    asking it when the grammar already says the words cannot end (``said`` is "unfinished": they keep the long
    window whatever it says)."""
    return read(text) if read is not None and said != "unfinished" else None
