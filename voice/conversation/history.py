"""Conversation history and trimming it to the context window.

The system prompt is always first and never changes, so its KV cache prefix is reused on every turn.
When the prompt plus the room kept for the reply would not fit ``n_ctx``, the oldest exchanges are
dropped — down to a low-water mark (half the window by default) rather than just enough, so that the
following turns again extend a cached prefix instead of re-evaluating a shifted history every turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from voice.runtime.model_api import ChatMessage, Role
from voice.skills.timers import TimerBook

if TYPE_CHECKING:
    from voice.runtime.runtime import ModelRuntime


class ContextTooSmallError(ValueError):
    """Even the system prompt and the newest user message alone do not fit the context window."""


@dataclass
class History:
    """The messages of one conversation after the system prompt, and its timers. Owned by one session."""

    messages: list[ChatMessage] = field(default_factory=list)
    timers: TimerBook = field(default_factory=TimerBook)

    def copy(self) -> History:
        """An independent copy (a speculative reply's: adopted if it is committed, else dropped)."""
        return History(list(self.messages), self.timers.copy())

    def add(self, role: Role, content: str) -> None:
        """Append a message; consecutive messages of the same role are merged (cancelled turns)."""
        content = content.strip()
        if not content:
            return
        if self.messages and self.messages[-1].role == role:
            merged = self.messages[-1].content + " " + content
            self.messages[-1] = ChatMessage(role, merged)
        else:
            self.messages.append(ChatMessage(role, content))

    def cut_reply(self, reply: ChatMessage, heard: str) -> bool:
        """The user stopped ``reply`` (an assistant message, found by identity) after hearing ``heard`` of it:
        keep that, marked as cut short (" …"), or drop the reply if nothing of it was heard. False when
        ``reply`` is no longer in the history (nothing changed)."""
        i = self._find(reply)
        if i is not None:
            self._put(i, heard + " …" if heard else "")
        return i is not None

    def rewrite_reply(self, reply: ChatMessage, content: str) -> ChatMessage | None:
        """Put ``content`` in place of ``reply`` (an assistant message, found by identity), or drop it if
        ``content`` is empty. The message now in its place, or None: dropped, or no longer in the history."""
        i = self._find(reply)
        return None if i is None else self._put(i, content)

    def holds(self, message: ChatMessage) -> bool:
        """``message`` itself (not an equal one) is in the history."""
        return self._find(message) is not None

    def _find(self, message: ChatMessage) -> int | None:
        return next((i for i in range(len(self.messages) - 1, -1, -1) if self.messages[i] is message), None)

    def _put(self, i: int, content: str) -> ChatMessage | None:
        if not content:
            del self.messages[i]
            return None
        self.messages[i] = ChatMessage(self.messages[i].role, content)
        return self.messages[i]

    def clear(self) -> None:
        """Forget the messages (the timers keep running)."""
        self.messages.clear()


def heard(clauses: Sequence[tuple[str, float]], played: float) -> str:
    """What was heard of a reply stopped at ``played``: its clauses (text, where it starts in the reply audio, in
    the unit of ``played``) that had started playing, joined."""
    return " ".join(text for text, start in clauses if start < played)


def fit_prompt(
    system: ChatMessage,
    history: History,
    count_tokens: Callable[[Sequence[ChatMessage]], int],
    *,
    n_ctx: int,
    reply_tokens: int,
    low_water: float = 0.5,
) -> tuple[list[ChatMessage], int]:
    """The prompt messages for the next reply, trimming ``history`` in place if needed.

    ``history`` must end with the user's new message. Returns the messages and how many were dropped.
    Raises :class:`ContextTooSmallError` if the system prompt and newest message alone don't fit.
    """
    limit = n_ctx - reply_tokens
    prompt = [system, *history.messages]
    if count_tokens(prompt) <= limit:
        return prompt, 0
    target = int(limit * low_water)
    dropped = 0
    # Drop whole exchanges from the front, keeping the final user message.
    while len(history.messages) > 1:
        history.messages.pop(0)
        dropped += 1
        if history.messages[0].role == "assistant" and len(history.messages) > 1:
            history.messages.pop(0)
            dropped += 1
        if count_tokens([system, *history.messages]) <= target:
            break
    prompt = [system, *history.messages]
    if count_tokens(prompt) > limit:
        raise ContextTooSmallError(
            f"the system prompt and the last message need {count_tokens(prompt)} tokens but only {limit} "
            f"fit (n_ctx {n_ctx} minus {reply_tokens} for the reply); raise [llm] n_ctx or shorten the prompt"
        )
    return prompt, dropped


async def fit_prompt_on(
    runtime: ModelRuntime, system: ChatMessage, history: History, *, reply_tokens: int, session: str = ""
) -> tuple[list[ChatMessage], int]:
    """:func:`fit_prompt` with the runtime's LLM tokenizer, in a worker thread under the LLM's lock (waiting its
    turn as ``session``): counting tokens never runs on the event loop nor beside another turn's generation.
    Cancelling waits for the count to finish (milliseconds) before the lock is let go."""
    return await runtime.with_llm(
        lambda llm: fit_prompt(system, history, llm.count_tokens, n_ctx=llm.n_ctx, reply_tokens=reply_tokens),
        session=session,
    )
