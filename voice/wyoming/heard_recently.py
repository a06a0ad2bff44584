"""How sure our STT was of the transcripts it made lately, for the conversation agent on another connection.

Home Assistant runs a voice turn over separate Wyoming connections: it sends the audio to our ``transcribe``,
then hands the text alone to our conversation agent (``recognize`` → ``handled``), with no confidence. A
``voice serve`` turn asks again when the STT was unsure of the words (:mod:`voice.turn.ask_again`); to do the
same here, the server remembers each transcript it sent with the STT's :class:`~voice.runtime.model_api.Heard`
for a short while (``keep_s``), and the agent takes it back when the same words arrive. Words that were typed, or
transcribed by another STT, find nothing and are judged as typed text (no confidence: never "unsure").

Matching is on the words alone (case and spacing folded), so two satellites that heard the same words at the
same moment share the later one's confidence; an entry is taken once. Bounded (``max_entries``, the oldest goes
first). Pure: the clock is injected.
"""

from __future__ import annotations

from collections import OrderedDict

from voice.clock import Clock
from voice.runtime.model_api import Heard

#: How long a transcript's confidence is kept for the agent: Home Assistant asks the agent right after the STT.
KEEP_S = 60.0
#: Transcripts remembered at most (a few per satellite in flight is all Home Assistant needs).
MAX_ENTRIES = 64


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


class HeardRecently:
    """Transcripts sent in the last ``keep_s`` seconds, with how sure the STT was of them."""

    def __init__(self, clock: Clock, *, keep_s: float = KEEP_S, max_entries: int = MAX_ENTRIES) -> None:
        if keep_s <= 0 or max_entries < 1:
            raise ValueError(f"keep_s ({keep_s}) must be positive and max_entries ({max_entries}) at least 1")
        self._clock = clock
        self._keep_ns = round(keep_s * 1e9)
        self._max = max_entries
        self._entries: OrderedDict[str, tuple[int, Heard]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def remember(self, heard: Heard) -> None:
        """The STT made ``heard`` and its text was sent: keep it for the agent (an empty text is not kept)."""
        key = _key(heard.text)
        if not key:
            return
        self._entries.pop(key, None)
        self._entries[key] = (self._clock.now_ns(), heard)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def take(self, text: str) -> Heard | None:
        """What the STT made of ``text``, if it sent these words within ``keep_s``; each entry is taken once."""
        found = self._entries.pop(_key(text), None)
        if found is None:
            return None
        at_ns, heard = found
        return heard if self._clock.now_ns() - at_ns <= self._keep_ns else None
