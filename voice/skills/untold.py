"""Things only the user could know, asked when they never told them: "what's the alarm code?", "what's my locker
number?", "what was the wifi password?".

SmolLM2-135M makes them up ("What's the alarm code?" → "The alarm code is 1234567890.", the thirty-eighth held-out
set's first run, spoken, where Whisper had misheard the turn that told it, so it never reached the history). A code,
a PIN, a password or a combination, or a number of the user's own ("my seat number"), can only come from the
user: when no earlier user turn says any word of it (not even "code" or "number"), the reply says it does not know
it, and the notes (:mod:`voice.skills.notes`), which run first, say it back when it was told. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from voice.skills.word_classes import words_in

_SECRET = r"(?:code|pin|pin number|password|passcode|combination|door code|passphrase)"
_ASKED = re.compile(
    r"(?:(?:so|and|ok|okay|um|uh|hey|sorry) )*"
    r"(?:what'?s|what is|what was|what were|tell me|can you tell me|could you tell me|remind me of|remind me)"
    rf" (?:(?P<own>my|our) |the )(?P<thing>(?:[a-z]+ ){{0,3}}?{_SECRET}|(?(own)(?:[a-z]+ ){{1,3}}number|(?!)))"
    r"(?P<of> (?:for|of|to) (?:the|my|our) [a-z]+)?(?: again| then| please)*"
)
"""A question of a secret of the user's ("the alarm code", "my PIN") or of a number of their own ("my locker
number"; not "the atomic number")."""


def not_told(t: str, earlier_user_turns: Sequence[str]) -> str | None:
    """The honest reply to ``t`` (a cleaned transcript) when it asks for a thing only the user could know and no
    earlier user turn names it; else None."""
    m = _ASKED.fullmatch(t)
    if m is None:
        return None
    thing = f"{m['thing']}{(m['of'] or '').replace(' my ', ' your ').replace(' our ', ' your ')}"
    names = set(words_in(re.sub(r"[-]", " ", thing))) - {"for", "of", "to", "the", "your"}
    if any(names & set(words_in(re.sub(r"[-]", " ", turn))) for turn in earlier_user_turns):
        return None  # maybe told, in words the notes did not take ("my Wi-Fi password is …"): the LLM may read it
    return f"I don't know {'your' if m['own'] else 'the'} {thing}: I haven't heard it from you."
