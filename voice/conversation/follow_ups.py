"""Follow-ups written out in full for the model and the skills (``[llm] resolve_follow_ups``).

A follow-up leans on the turn before it. Two kinds are written out, from what was said before only:

- an elliptical one, from the user's previous question (:mod:`voice.conversation.ellipsis`): "How about Germany?" after
  "What is the capital of France?" is "What is the capital of Germany?";
- one that names a person by a pronoun, from whom the reply to a "who" question named
  (:mod:`voice.conversation.pronouns`): "When was he born?" after "Who wrote Romeo and Juliet?" … "William
  Shakespeare …" is "When was William Shakespeare born?". The person stays the one meant while each next question
  uses a pronoun again ("Where did he die?"); a question without one ends it;
- one that says "its", from what the previous question asked about: "And what's its atomic number?" after "What's
  the symbol for silver?" is "And what's the atomic number of silver?".

Only the model's and the skills' view changes: the history, the transcripts and the turn log keep the words as
heard. Pure: a message is written out from the messages before it alone, so a conversation renders the same on
every turn and the cached KV prefix still covers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from voice.conversation import ellipsis, pronouns
from voice.runtime.model_api import ChatMessage


def resolve_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with every user message that is a follow-up written out in full (the others unchanged)."""
    out: list[ChatMessage] = []
    previous: str | None = None  # the user's previous message, as written out
    reply = ""  # the assistant's reply to it
    meant: str | None = None  # the person the previous message's pronoun meant
    for m in messages:
        if m.role != "user":
            reply = m.content if m.role == "assistant" else reply
            out.append(m)
            continue
        full: str | None = None
        person: str | None = None  # whom a pronoun in this message would mean
        if previous is not None:
            full = ellipsis.resolve(m.content, previous)
            if full is None:  # only then is a person looked for in the reply
                person = pronouns.person_named(previous, reply) or meant
        meant = None
        if person is not None:
            full = pronouns.resolve(m.content, person)
            meant = person if full is not None else None
        if full is None and previous is not None and (thing := pronouns.thing_asked(previous)) is not None:
            full = pronouns.resolve_its(m.content, thing)  # "And what's its atomic number?"
        out.append(m if full is None else replace(m, content=full))
        previous, reply = full or m.content, ""
    return out
