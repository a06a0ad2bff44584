"""What the client has played of a reply, as the server estimates it, and what the user heard of it.

A reply is made much faster than it plays: on the 2-core machine a 10 s reply of four sentences is all sent
~1 s after its first audio. A user who talks over it later finds no turn to cancel; the server then tells the
client to stop playing (``interrupt`` with ``playback_only``) and keeps in the history only the clauses that
had started playing, followed by " …" — as a turn cancelled while it ran keeps the clauses it had sent. So
the next reply knows what the user did not hear ("… and the third one?" is not answered as if it were said).

Where the cut falls is first estimated: playing is assumed to start when the first audio chunk was handed to
the socket and to run at real time, and the user to have heard a clause once it had started when the server
heard them speak (the VAD's lag, ~0.1–0.3 s, counts as heard: it keeps a clause rather than drop one that was
heard). A client that stops the reply on ``interrupt`` may then say how much of its audio it had played
(``played`` with ``played_ms``; the browser page and ``voice talk`` do): :class:`LastCut` redoes the cut from
that, whichever of the two comes first. The estimate misses the network, the client's scheduling and its output
latency; the report does not (what played while the interrupt was on its way counts as heard, like the VAD's
lag). The OpenAI Realtime front gets the exact point from the client (``conversation.item.truncate``) and cuts
the history with the same :func:`~voice.conversation.history.heard` and
:meth:`~voice.conversation.history.History.cut_reply`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from voice.conversation.history import History, heard
from voice.runtime.model_api import ChatMessage
from voice.turn.delivery import ReplySink
from voice.wire import events


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
    reply_text: str
    """The reply as the turn left it in the history (what a cut after its last clause had started keeps)."""

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
        text = "" if reply is None else reply.content
        return cls(turn_id, sent_ns, tuple(recorder.clauses), recorder.audio_ms, reply, text)

    def playing(self, now_ns: int) -> bool:
        return now_ns < self.started_ns + round(self.audio_ms * 1e6)

    def cut(self, history: History, at_ns: int) -> Playback | None:
        """:meth:`cut_at` where the server estimates the client was at ``at_ns`` (monotonic clock)."""
        return self.cut_at(history, (at_ns - self.started_ns) / 1e6)

    def cut_at(self, history: History, played_ms: float) -> Playback | None:
        """Keep in ``history`` only the clauses that had started playing ``played_ms`` into the reply, followed by
        " …" (the reply as the turn left it, when every clause had started; no reply, when none had). Returns this
        playback with ``reply`` the message now in the history, for a later cut that knows better; None when the
        reply is not, or no longer, in the history."""
        if self.reply is None:
            return None
        said = heard(self.clauses, played_ms)
        whole = " ".join(text for text, _ in self.clauses)
        content = self.reply_text if said == whole else (f"{said} …" if said else "")
        if content == self.reply.content:
            return self if history.holds(self.reply) else None
        kept = history.rewrite_reply(self.reply, content)
        return None if kept is None else replace(self, reply=kept)


class LastCut:
    """The reply last cut at a barge-in, so that the client's report of how much of it had played (``played`` with
    ``played_ms``) can redo the cut exactly. Either may come first: a report that comes before its turn's cut
    (a running turn still winding down) is kept and used for that cut instead of the estimate. Only the latest
    cut and report are kept: a client reports on the reply it just stopped."""

    def __init__(self) -> None:
        self._cut: tuple[Playback, History] | None = None
        self._report: tuple[int, float] | None = None

    def cut(self, playback: Playback, history: History, at_ns: int) -> None:
        """Cut ``playback``'s reply in ``history``: at the client's report for its turn if one came, else at
        where the server estimates the client was at ``at_ns``."""
        if self._report is not None and self._report[0] == playback.turn_id:
            kept = playback.cut_at(history, self._report[1])
        else:
            kept = playback.cut(history, at_ns)
        self._cut = None if kept is None else (kept, history)

    @property
    def reported(self) -> tuple[int, float] | None:
        """The client's last report: (turn id, ms of its reply audio played)."""
        return self._report

    def report(self, turn_id: int, played_ms: float) -> None:
        """The client stopped turn ``turn_id``'s reply after ``played_ms`` of its audio."""
        self._report = (turn_id, played_ms)
        if self._cut is not None and self._cut[0].turn_id == turn_id:
            playback, history = self._cut
            kept = playback.cut_at(history, played_ms)
            self._cut = None if kept is None else (kept, history)
