"""A reply that offers sympathy for a loss the user never spoke of.

SmolLM2-135M opens replies to questions it cannot place with "I'm sorry for your loss.": after "Read me my latest
email.", "What is my dog's name?", a question misheard as "called my mother.", a string of digits. Issue 31 names
it among the replies a listener hears as nonsense. :func:`misplaced` finds it by one rule: a sentence that offers
condolences ("sorry for your loss", "my condolences", "sorry to hear of your loss") when the user's words speak of
no loss or death. The ``not_sure`` gate (:class:`voice.conversation.answer_confidence.UnsureGate`) checks the
reply's first sentence with it and says ``[llm] not_sure_reply`` instead, as it does for a recital of the
instructions (:mod:`voice.conversation.recital`); like that check, it needs a backend that gives log-probabilities
(the gate holds the first sentence only then). Pure.

On the stored LLM replies of every question set judged so far (1,695 distinct, spoken and typed, 2026-12-07) the
rule fires on 62: 22 judged wrong, 33 declines that open with the condolence ("I'm sorry for your loss, but as a
voice assistant, I don't have the ability to…"), and 7 judged right, 5 of them declines of a request the assistant
cannot carry out, which "I'm not sure." declines too.
"""

from __future__ import annotations

import re

_CONDOLENCE = re.compile(
    r"\b(?:sorry (?:for|about) your loss|(?:my|our) (?:deepest |sincere |heartfelt )?condolences"
    r"|sorry to hear (?:about|of) (?:the|your) (?:loss|passing))\b",
    re.IGNORECASE,
)
_LOSS = re.compile(
    r"\b(?:loss|lost|lose|losing|die|died|dies|dying|dead|death|passed away|passing|funeral|grief|grieving"
    r"|bereave\w*|condolences)\b",
    re.IGNORECASE,
)
"""Words with which a user may speak of a loss: any of them and a condolence may be the answer."""


def misplaced(sentence: str, user: str) -> bool:
    """``sentence`` offers condolences and ``user`` spoke of no loss."""
    return _CONDOLENCE.search(sentence) is not None and _LOSS.search(user) is None
