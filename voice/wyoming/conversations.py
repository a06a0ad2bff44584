"""The memory of ``handle`` conversations: one :class:`~voice.conversation.history.History` per Home Assistant
``conversation_id``, at most ``max_conversations`` of them (the least recently used is forgotten).

Each conversation has a lock: two requests of one conversation run one after the other, so a reply is
always added to the history right after the message it answers.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field

from voice.conversation.history import History


@dataclass
class Conversation:
    history: History = field(default_factory=History)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Conversations:
    def __init__(self, max_conversations: int) -> None:
        if max_conversations < 1:
            raise ValueError("max_conversations must be at least 1")
        self.max_conversations = max_conversations
        self._items: OrderedDict[str, Conversation] = OrderedDict()
        self.forgotten = 0
        """Conversations dropped because the limit was reached."""

    def get(self, conversation_id: str | None) -> Conversation:
        """The conversation with this id (new if unknown or forgotten); ``None``: a new one, not kept."""
        if conversation_id is None:
            return Conversation()
        conv = self._items.get(conversation_id)
        if conv is None:
            conv = self._items[conversation_id] = Conversation()
            while len(self._items) > self.max_conversations:
                self._items.popitem(last=False)
                self.forgotten += 1
        else:
            self._items.move_to_end(conversation_id)
        return conv

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._items
