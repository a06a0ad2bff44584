"""What the model cannot know by itself: the current date, time, time zone and the user's location.

The facts are prepended to the newest user message, never to the system prompt, so the cached prompt
prefix (system prompt and earlier turns) stays the same. A user message keeps the note it was first sent
with (remembered by its position and text), so on the next turn the earlier turns render exactly as they
were evaluated and the KV cache still covers them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from voice.runtime.model_api import ChatMessage

Clock = Callable[[], datetime]


def local_now() -> datetime:
    return datetime.now().astimezone()


def note(now: datetime, location: str) -> str:
    """The facts as one bracketed line, e.g. ``[Now: Thursday 3 December 2026, 16:35 (UTC+01:00, CET). …]``."""
    zone = now.strftime("%Z") or "local time"
    offset = now.strftime("%z")
    tz = f"UTC{offset[:3]}:{offset[3:]}, {zone}" if offset else zone
    where = location.strip() or "unknown"
    return (
        f"[Now: {now.strftime('%A')} {now.day} {now.strftime('%B %Y')}, {now.strftime('%H:%M')} ({tz}). "
        f"Location: {where}.]"
    )


class Grounding:
    """Adds :func:`note` to the newest user message; earlier user messages keep the note they got."""

    def __init__(self, location: str = "", *, clock: Clock = local_now, remember: int = 512) -> None:
        self.location = location
        self._clock = clock
        self._remember = remember
        self._sent: OrderedDict[tuple[int, str], str] = OrderedDict()

    def apply(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """The messages as the model will see them; remembers the newest user message's note."""
        return self._render(messages, remember=True)

    def preview(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """What :meth:`apply` would give, remembering nothing (for counting tokens before the turn)."""
        return self._render(messages, remember=False)

    def _render(self, messages: Sequence[ChatMessage], *, remember: bool) -> list[ChatMessage]:
        out = list(messages)
        last_user = max((i for i, m in enumerate(out) if m.role == "user"), default=None)
        for i, m in enumerate(out):
            if m.role != "user":
                continue
            key = (i, m.content)
            text = self._sent.get(key)
            if i == last_user:  # always the time of this turn, even for a question asked before
                text = note(self._clock(), self.location)
                if remember:
                    self._sent[key] = text
                    self._sent.move_to_end(key)
                    while len(self._sent) > self._remember:
                        self._sent.popitem(last=False)
            if text is not None:
                out[i] = replace(m, content=f"{text}\n{m.content}")
        return out
