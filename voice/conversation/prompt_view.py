"""The conversation as the model sees it: self-corrections applied (:mod:`voice.conversation.self_repair`), follow-ups
written out (:mod:`voice.conversation.follow_ups`), the user's words tidied (:mod:`voice.conversation.user_text`)
and, when on, the grounding note on the newest user message (:mod:`voice.conversation.grounding`).
Both LLM backends render through it, in the worker thread that runs the model."""

from __future__ import annotations

from collections.abc import Sequence

from voice.config.sections import LlmConfig
from voice.conversation.follow_ups import resolve_messages
from voice.conversation.grounding import Clock, Grounding, local_now
from voice.conversation.self_repair import repair_messages
from voice.conversation.user_text import tidy_messages
from voice.runtime.model_api import ChatMessage


class PromptView:
    """``[llm] self_repair``, ``resolve_follow_ups``, ``tidy_user_text`` and ``grounding`` applied to a conversation's
    messages."""

    def __init__(self, config: LlmConfig, *, clock: Clock = local_now) -> None:
        self.tidy = config.tidy_user_text
        self.resolve = config.resolve_follow_ups
        self.self_repair = config.self_repair
        self.grounding = Grounding(config.location, clock=clock) if config.grounding else None

    def apply(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """The messages for this turn's prompt; the grounding remembers the newest user message's note."""
        out = self._rendered(messages)
        return self.grounding.apply(out) if self.grounding is not None else out

    def preview(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """What :meth:`apply` would give, remembering nothing (for counting tokens before the turn)."""
        out = self._rendered(messages)
        return self.grounding.preview(out) if self.grounding is not None else out

    def _rendered(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        out = repair_messages(messages) if self.self_repair else list(messages)
        out = resolve_messages(out) if self.resolve else out
        return tidy_messages(out) if self.tidy else out
