"""A session's speculative reply from start to verdict: at most one at a time, started at a pause, then either
committed when the turn really ends there or discarded when the user speaks on; and the counts the turn
reports carry.

:class:`~voice.turn.speculation.HeldSink` holds the reply's output; a :class:`Speculation` is the rest of it as
the session sees it (the turn task, its copy of the history, its timer, when it was committed), and the
session's :class:`Speculator` knows which one is in flight. Starting the reply's task stays with the session,
which runs it like any turn.

Cancellation: :meth:`Speculator.discard` drops the held output first, then cancels the turn task with
:data:`DISCARD`, so nothing of it reaches the client or the history. A committed reply's task is the session's
current turn from then on, cancelled like any other (barge-in, reset, disconnect). The flush task a commit
starts (kept in :attr:`Speculation.flush`) ends once the held frames are handed on (a closed outbox takes
them at once); nothing cancels it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from voice.conversation.history import History
from voice.turn.budget import TurnTimer
from voice.turn.delivery import ReplySink
from voice.turn.endpoint import SpeechEnded
from voice.turn.listener import heard_ns, silence_after_speech_ms
from voice.turn.speculation import HeldSink
from voice.wire import events as server_events
from voice.wire.report import TurnReport

log = logging.getLogger("voice.turn.speculator")

#: The cancel message of a speculative turn thrown away because the user went on speaking.
DISCARD = "speculation-discarded"


@dataclass(eq=False)
class Speculation:
    """A reply started at a pause and held until the end of the turn is confirmed (voice/turn/speculation.py)."""

    sink: HeldSink
    history: History
    """A copy of the conversation: the session adopts it on commit."""
    timer: TurnTimer
    started_ns: int
    discarded_before: int
    """Speculations discarded earlier in the same utterance."""
    committed_ns: int | None = None
    turn_score: float | None = None
    turn_words_p: float | None = None
    task: asyncio.Task[TurnReport] = field(init=False)
    flush: asyncio.Task[None] | None = None

    def report_fields(self) -> dict[str, object]:
        """What the turn's report says of the speculation (read when the report is made)."""
        lead_ms = 0.0 if self.committed_ns is None else (self.committed_ns - self.started_ns) / 1e6
        return {
            "speculative": True,
            "speculation_lead_ms": round(lead_ms, 1),
            "work_to_first_audio_ms": self.timer.work_to_first_audio_ms(self.started_ns),
            "speculations_discarded": self.discarded_before,
            "turn_score": self.turn_score,
            "turn_words_p": self.turn_words_p,
        }

    async def commit(self, ev: SpeechEnded, now_ns: int, target: ReplySink, flush_name: str) -> None:
        """The turn really ended where the speculation started: let its reply out (one transition) to ``target``
        (the session's sink), after the turn's ``speech_ended`` event."""
        self.committed_ns = now_ns
        self.turn_score, self.turn_words_p = ev.turn_score, ev.words_p
        # As for any turn, the speech ended by the silence after its last sound before its audio was heard.
        self.timer.correct("speech_end", heard_ns(ev, now_ns) - round(silence_after_speech_ms(ev) * 1e6))
        self.timer.mark("endpoint", at_ns=now_ns)
        self.sink.commit()
        await target.send_event(
            server_events.SpeechEnded(self.timer.turn_id, ev.forced, round(ev.trailing_silence_ms, 1))
        )
        self.flush = asyncio.create_task(self.sink.flush(), name=flush_name)
        await asyncio.sleep(0)


class Speculator:
    """A session's speculative replies: the one in flight, and how many were started and discarded."""

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self.current: Speculation | None = None
        self.started = 0
        self.discarded = 0
        self._discarded_in_utterance = 0
        self._words: set[asyncio.Task[None]] = set()

    def track(self, words: asyncio.Task[None]) -> None:
        """Keep ``words`` (a speculative transcript on its way to the end-of-turn decision, ``[turn]
        text_evidence``) until it is done: :meth:`cancel_words` stops it with the session's turns."""
        self._words.add(words)
        words.add_done_callback(self._words.discard)

    def cancel_words(self) -> None:
        for words in list(self._words):
            words.cancel()

    @property
    def held_frames(self) -> int:
        """Frames (events and audio chunks) the speculative reply in flight holds back from the client."""
        spec = self.current
        return 0 if spec is None else spec.sink.held_frames

    def new(self, sink: HeldSink, history: History, timer: TurnTimer, now_ns: int) -> Speculation:
        """A speculation started now (its task still to be set, then :meth:`add` it)."""
        return Speculation(sink, history, timer, now_ns, self._discarded_in_utterance)

    def add(self, spec: Speculation) -> None:
        """``spec``'s task is running: it is the speculation in flight."""
        self.current = spec
        self.started += 1

    def discard(self) -> None:
        """Throw away the speculation in flight, if any: the user went on speaking."""
        spec, self.current = self.current, None
        if spec is None:
            return
        spec.sink.discard()
        spec.task.cancel(DISCARD)
        self._discarded_in_utterance += 1
        self.discarded += 1
        log.debug("[%s] speculative reply discarded: the user went on speaking", self._session_id)

    def take_live(self) -> Speculation | None:
        """At the end of the turn: the speculation to commit, if its task still runs (the utterance's count of
        discards starts afresh). One that ended before (no speech, an error) is discarded: answer afresh."""
        spec = self.current
        if spec is None:
            return None
        if spec.task.done():
            self.discard()
            return None
        self.current = None
        self._discarded_in_utterance = 0
        return spec

    def take_discards(self) -> int:
        """Speculations discarded during the utterance a turn now answers; the count starts afresh."""
        count, self._discarded_in_utterance = self._discarded_in_utterance, 0
        return count
