"""Talking to a :class:`voice.conversation.skills_llm.SkillsLlm` in tests: a reply as text, and a conversation of
user turns with each reply kept in the history, as the server keeps it."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.model_api import ChatMessage, TextDelta


def reply_to(llm: SkillsLlm, messages: Sequence[ChatMessage], max_tokens: int = 32) -> str:
    """The text ``llm`` replies to ``messages``."""
    events = llm.generate(messages, max_tokens=max_tokens, cancel=threading.Event())
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def converse(llm: SkillsLlm, said: Sequence[str]) -> tuple[list[ChatMessage], list[str]]:
    """Each of ``said`` as a user turn, answered in order; the history (with the replies) and the replies."""
    messages: list[ChatMessage] = []
    replies: list[str] = []
    for text in said:
        messages.append(ChatMessage("user", text))
        replies.append(reply_to(llm, messages))
        messages.append(ChatMessage("assistant", replies[-1]))
    return messages, replies
