"""What the client has played of a reply, as the server estimates it, and what the user heard of it.

A reply is made much faster than it plays: on the 2-core machine a 10 s reply of four sentences is all sent
~1 s after its first audio. A user who talks over it later finds no turn to cancel; the server then tells the
client to stop playing (``interrupt`` with ``playback_only``) and keeps in the history only the clauses that
had started playing, followed by " …" — as a turn cancelled while it ran keeps the clauses it had sent. So
the next reply knows what the user did not hear ("… and the third one?" is not answered as if it were said).

The native protocol has no playback feedback from the client: playing is assumed to start when the first
audio chunk was handed to the socket and to run at real time, and the user to have heard a clause once it had
started when the server heard them speak (the VAD's lag, ~0.1–0.3 s, counts as heard: it keeps a clause
rather than drop one that was heard). The OpenAI Realtime front gets the exact point from the client
(``conversation.item.truncate``) and cuts the history with the same :func:`~voice.history.heard` and
:meth:`~voice.history.History.cut_reply`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from voice import events
from voice.history import History, heard
from voice.model_api import ChatMessage
from voice.turn import ReplySink


def new_reply(before: Sequence[ChatMessage], after: Sequence[ChatMessage]) -> ChatMessage | None:
    """The reply a turn added to the history (``before`` and ``after`` the turn), or None: it added none (it
    asked the user to say it again), or merged its reply into an earlier one (a timer's announcement right after
    a reply), which a cut must not shorten."""
    if not after or after[-1].role != "assistant" or any(m is after[-1] for m in before):
        return None
    last = before[-1] if before else None
    if last is not None and last.role == "assistant" and not any(m is last for m in after):
        return None  # the last message before the turn was an assistant's, and is gone: merged into this one
    return after[-1]


class ClauseRecorder:
    """A reply sink that passes everything on to ``sink`` and notes each clause (``reply_text``) with where it
    starts in the reply audio (s16le mono at ``rate_hz``), in ms."""

    def __init__(self, sink: ReplySink, rate_hz: int) -> None:
        self.sink, self.rate_hz = sink, rate_hz
        self.clauses: list[tuple[str, float]] = []
        self.audio_ms = 0.0

    async def send_event(self, ev: events.ServerEvent) -> None:
        if isinstance(ev, events.ReplyText):
            self.clauses.append((ev.text, self.audio_ms))
        await self.sink.send_event(ev)

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        self.audio_ms += len(pcm) / 2 * 1000 / self.rate_hz
        await self.sink.send_audio(turn_id, pcm, on_sent)

    def drop_turn(self, turn_id: int) -> None:
        self.sink.drop_turn(turn_id)


@dataclass(frozen=True)
class Playback:
    """A finished reply the client may still be playing."""

    turn_id: int
    started_ns: int
    """When its first audio chunk was handed to the socket (monotonic clock)."""
    clauses: tuple[tuple[str, float], ...]
    """Each clause and where it starts in the reply audio, ms."""
    audio_ms: float
    reply: ChatMessage | None
    """The reply's message in the history, which a barge-in cuts (None: the reply is not in the history)."""

    @classmethod
    def of(
        cls,
        turn_id: int,
        sent_ns: int | None,
        recorder: ClauseRecorder,
        before: Sequence[ChatMessage],
        history: History,
    ) -> Playback | None:
        """The playback of a turn's reply (None: no audio was sent), from its first audio chunk's time, its
        recorded clauses, and the history ``before`` the turn and now."""
        if sent_ns is None:
            return None
        reply = new_reply(before, history.messages)
        return cls(turn_id, sent_ns, tuple(recorder.clauses), recorder.audio_ms, reply)

    def playing(self, now_ns: int) -> bool:
        return now_ns < self.started_ns + round(self.audio_ms * 1e6)

    def heard(self, at_ns: int) -> str:
        """What the user had heard by ``at_ns``: the clauses that had started playing."""
        return heard(self.clauses, (at_ns - self.started_ns) / 1e6)

    def cut(self, history: History, at_ns: int) -> bool:
        """Keep in ``history`` only what of the reply was heard by ``at_ns`` (followed by " …"). False when
        nothing changed: all of it had started playing, or the reply is not in the history."""
        said = self.heard(at_ns)
        if self.reply is None or said == " ".join(text for text, _ in self.clauses):
            return False
        return history.cut_reply(self.reply, said)
