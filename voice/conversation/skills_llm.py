"""An LLM that answers what :mod:`voice.skills.answer`, :mod:`voice.skills.personal_facts` and
:mod:`voice.skills.notes` recognise itself (and, with :mod:`voice.skills.capabilities`, the requests it cannot carry
out, honestly, and with :mod:`voice.skills.live_state` the questions about how things are right now, which it cannot
see), and passes everything else on.

Same interface as the LLM it wraps, so the runtime, the turn and the session do not change. A matched
turn yields a :class:`PromptInfo` of zero tokens (no prompt was evaluated) and the answer as one delta;
its latency shows in the same report stages (``llm_ttft`` is then the matching time).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from voice.config.sections import LlmConfig
from voice.conversation.follow_ups import resolve_messages
from voice.conversation.grounding import Clock, local_now
from voice.conversation.self_repair import repair_messages, repair_turns
from voice.conversation.user_text import strip_interjections
from voice.runtime.kvcache import KvStats
from voice.runtime.model_api import ChatMessage, Llm, LlmEvent, PromptInfo, TextDelta
from voice.skills import answer as skills
from voice.skills import capabilities, live_state, notes, personal_facts, untold


class SkillsLlm:
    def __init__(
        self,
        inner: Llm,
        *,
        clock: Clock = local_now,
        location: str = "",
        resolve_follow_ups: bool = True,
        self_repair: bool = True,
    ) -> None:
        self.inner = inner
        self._clock = clock
        self._location = location
        self._resolve = resolve_follow_ups
        """Match the newest user message as :mod:`voice.conversation.ellipsis` writes it out ("And in half a mile?")."""
        self._repair = self_repair
        """Match the user's messages with their self-corrections applied (:mod:`voice.conversation.self_repair`)."""
        self.answered = 0
        """Turns a skill answered (for benches and logs)."""

    @classmethod
    def of(cls, inner: Llm, config: LlmConfig) -> SkillsLlm:
        """``inner`` with the skills, as ``config`` (``[llm]``) sets them."""
        return cls(
            inner,
            location=config.location,
            resolve_follow_ups=config.resolve_follow_ups,
            self_repair=config.self_repair,
        )

    @property
    def uses_local_compute(self) -> bool:
        return bool(getattr(self.inner, "uses_local_compute", True))

    @property
    def n_ctx(self) -> int:
        return self.inner.n_ctx

    def count_tokens(self, messages: Sequence[ChatMessage]) -> int:
        return self.inner.count_tokens(messages)

    def kv_stats(self) -> KvStats | None:
        fn = getattr(self.inner, "kv_stats", None)
        return fn() if callable(fn) else None

    def interrupt(self) -> None:
        fn = getattr(self.inner, "interrupt", None)
        if callable(fn):
            fn()

    def generate(
        self, messages: Sequence[ChatMessage], *, max_tokens: int, cancel: threading.Event
    ) -> Iterator[LlmEvent]:
        meant = repair_messages(messages) if self._repair else messages
        last = meant[-1] if meant else None
        reply = None
        if last is not None and last.role == "user":
            previous = next((m.content for m in reversed(meant[:-1]) if m.role == "assistant"), "")
            now = self._clock()
            asked = strip_interjections(resolve_messages(meant)[-1].content if self._resolve else last.content)
            earlier = [m.content for m in meant[:-1] if m.role == "user"]
            earlier = repair_turns(earlier) if self._repair else earlier  # "…is 1983." "No wait, it's 1985."
            reply = (
                skills.answer(asked, now, self._location)
                or skills.on_told_amounts(asked, earlier)  # "200 grams for 4 people" … "for 8 people?"
                or personal_facts.answer(asked, earlier, now)
                or notes.answer(asked, earlier)
                or untold.not_told(skills.clean(asked), earlier)  # "what's the alarm code?", never told
                # on the previous answer, or the amount the user said in their previous turn, as said
                or skills.follow_up(strip_interjections(last.content), previous, earlier[-1] if earlier else "")
                or capabilities.cannot(asked)
                or live_state.cannot_see(asked)  # last: after the clock ("what time is it right now?")
            )
        if reply is None:
            return self.inner.generate(messages, max_tokens=max_tokens, cancel=cancel)
        self.answered += 1
        return iter([PromptInfo(prompt_tokens=0, reused_tokens=0, evaluated_tokens=0), TextDelta(reply)])
