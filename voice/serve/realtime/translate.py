"""Our session's events, translated into Realtime server events. A pure state machine: no I/O, no clock.

The session speaks the native protocol (``docs/protocol.md``): JSON events and PCM chunks. The
:class:`Translator` turns each into the Realtime events a client expects, in the standard order, with an
``event_id`` on each, one ``item_id`` per user utterance from ``speech_started`` to the transcription, one
``response_id`` and assistant ``item_id`` across a response, and integer times:

=====================  =========================================================================================
native                 Realtime
=====================  =========================================================================================
``ready``              ``session.created``
``speech_started``     ``input_audio_buffer.speech_started``
``speech_ended``       ``input_audio_buffer.speech_stopped``, ``input_audio_buffer.committed``,
                       ``conversation.item.added`` (server VAD; a manual commit announced these at the commit)
``transcript``         ``conversation.item.input_audio_transcription.completed``, ``conversation.item.done``;
                       then, if something was heard, ``response.created``, ``response.output_item.added``,
                       ``conversation.item.added``
``audio_start``        ``response.content_part.added``
``reply_text``         ``response.output_audio_transcript.delta`` (``response.output_text.delta`` text-only)
PCM chunk              ``response.output_audio.delta`` (base64, a text frame)
``interrupt``          (the response will end ``cancelled``: ``turn_detected``, or ``client_cancelled``)
``turn_report``        ``response.output_audio.done``, ``…transcript.done``, ``response.content_part.done``,
                       ``response.output_item.done``, ``conversation.item.done``, ``response.done`` (status,
                       usage with cached tokens, the latency in ``metadata``); ``voice.turn_report`` on opt-in
``error``              ``error`` (``invalid_request_error`` for client faults, else ``server_error``)
=====================  =========================================================================================
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from voice.conversation.history import heard
from voice.serve.realtime.events import RealtimeError
from voice.serve.realtime.report import compact_json, metadata, usage
from voice.wire import events
from voice.wire.report import TurnReport

#: Native error codes that are the server's fault (the rest are the client's).
SERVER_ERRORS = frozenset({"internal", "busy", "context", "timeout", "shutting_down"})
#: Cancel reasons (``status_details.reason`` of a cancelled response).
TURN_DETECTED = "turn_detected"
CLIENT_CANCELLED = "client_cancelled"
BYTES_PER_MS = 48  # PCM16 mono at 24 kHz


@dataclass
class _Response:
    id: str
    item_id: str
    text_only: bool
    turn_id: int | None = None
    part_started: bool = False
    clauses: list[tuple[str, int]] = field(default_factory=list)
    """Each clause spoken and the reply audio (bytes) sent before it."""
    audio_bytes: int = 0
    cancel_reason: str | None = None
    mute: bool = False
    """Barge-in heard: audio still on its way from the cancelled turn is not sent."""

    @property
    def transcript(self) -> str:
        return " ".join(c for c, _ in self.clauses)


@dataclass
class _Spoken:
    """A finished assistant item, kept for ``conversation.item.truncate``."""

    item_id: str
    clauses: list[tuple[str, int]]
    audio_bytes: int


class Translator:
    """Translates one session's native events into Realtime events (JSON text frames)."""

    def __init__(self, session_id: str, *, barge_in: bool = True, turn_reports: bool = False) -> None:
        self.session_id = session_id
        self.barge_in = barge_in
        """Speech during a response cancels it (the session does the same): its late audio is not sent."""
        self.turn_reports = turn_reports
        """Opt-in: also send our full report as a ``voice.turn_report`` event (not a Realtime type)."""
        self.text_only = False
        """Replies are text only (``output_modalities: ["text"]``)."""
        self.audio_in_ms = 0.0
        """Input audio received so far (ms): where the input stream is now (``audio_end_ms``)."""
        self.session: dict[str, Any] = {}
        """The effective session object, sent in ``session.created`` / ``session.updated``."""
        self._n = {"event": 0, "item": 0, "resp": 0}
        self._last_item: str | None = None
        self._speech_item: str | None = None
        self._speech_start_ms = 0
        self._pending_items: list[tuple[str, float]] = []
        """Committed by the client (manual mode) and not yet answered: (item id, audio seconds)."""
        self._requested: _Response | None = None
        """A response the client asked for, waiting for the session's turn that answers it."""
        self._user_items: dict[int, tuple[str, float]] = {}
        self._responses: dict[int, _Response] = {}
        self._spoken: list[_Spoken] = []

    # ------------------------------------------------------------------ ids and envelopes
    def _id(self, kind: str) -> str:
        self._n[kind] += 1
        return f"{kind}_{self.session_id}{self._n[kind]:05d}"

    def _ev(self, kind: str, **fields: Any) -> str:
        return compact_json({"type": kind, "event_id": self._id("event"), **fields})

    @property
    def response_active(self) -> bool:
        """A response was created and is not done yet."""
        return self._requested is not None or bool(self._responses)

    # ------------------------------------------------------------------ driven by the client's events
    def session_updated(self) -> list[str]:
        return [self._ev("session.updated", session=self.session)]

    def error(self, err: RealtimeError) -> list[str]:
        body = {"type": err.type, "code": err.code, "message": err.message, "param": err.param,
                "event_id": err.event_id}
        return [self._ev("error", error=body)]

    def committed(self, audio_s: float) -> list[str]:
        """The client committed its input buffer (manual mode): a user item, answered at ``response.create``."""
        item = self._id("item")
        self._pending_items.append((item, audio_s))
        return [self._commit_events(item)]

    def cleared(self) -> list[str]:
        return [self._ev("input_audio_buffer.cleared")]

    def request_response(self, text_only: bool) -> list[str]:
        """``response.create``: the response starts now; the session's next turn answers it."""
        self._requested = _Response(self._id("resp"), self._id("item"), text_only)
        return self._response_started(self._requested)

    def cancel_requested(self) -> None:
        """``response.cancel``: the session's turn is being cancelled on the client's behalf."""
        for r in (*self._responses.values(), self._requested):
            if r is not None:
                r.cancel_reason = CLIENT_CANCELLED
                r.mute = True

    def item_created(self, role: str, text: str, item_id: str | None) -> tuple[list[str], str]:
        """A text message added by the client: ``conversation.item.added`` and ``.done``; returns its id."""
        item_id = item_id or self._id("item")
        kind = "input_text" if role in ("user", "system") else "output_text"
        item = {"id": item_id, "object": "realtime.item", "type": "message", "role": role, "status": "completed",
                "content": [{"type": kind, "text": text}]}
        previous, self._last_item = self._last_item, item_id
        return [
            self._ev("conversation.item.added", previous_item_id=previous, item=item),
            self._ev("conversation.item.done", previous_item_id=previous, item=item),
        ], item_id

    def truncated(self, item_id: str, content_index: int, audio_end_ms: int) -> tuple[list[str], str] | None:
        """``conversation.item.truncate`` of a finished assistant item: the events and the text heard up to
        ``audio_end_ms`` (its clauses that had started playing), or None for an unknown item."""
        spoken = next((s for s in self._spoken if s.item_id == item_id), None)
        if spoken is None:
            return None
        end_bytes = audio_end_ms * BYTES_PER_MS
        said = heard(spoken.clauses, end_bytes)
        events = [self._ev("conversation.item.truncated", item_id=item_id, content_index=content_index,
                           audio_end_ms=min(audio_end_ms, spoken.audio_bytes // BYTES_PER_MS))]
        return events, said

    def is_latest_assistant_item(self, item_id: str) -> bool:
        return bool(self._spoken) and self._spoken[-1].item_id == item_id

    # ------------------------------------------------------------------ driven by the session
    def audio(self, turn_id: int, pcm: bytes) -> str | None:
        """A chunk of reply audio as ``response.output_audio.delta``; None when it must not be sent."""
        r = self._responses.get(turn_id)
        if r is None or r.mute or r.text_only:
            return None
        if not r.part_started:  # the native audio_start always comes first; this is a safety net
            return None
        r.audio_bytes += len(pcm)
        return self._ev("response.output_audio.delta", response_id=r.id, item_id=r.item_id, output_index=0,
                        content_index=0, delta=base64.b64encode(pcm).decode("ascii"))

    def native(self, ev: events.ServerEvent) -> list[str]:
        """Translate one native event."""
        match ev:
            case events.Ready():
                return [self._ev("session.created", session=self.session)]
            case events.SpeechStarted():
                return self._on_speech_started(ev)
            case events.SpeechEnded():
                return self._on_speech_ended(ev)
            case events.Transcript():
                return self._on_transcript(ev)
            case events.AudioStart():
                r = self._responses.get(ev.turn_id)
                return [] if r is None or r.mute else self._start_part(r)
            case events.ReplyText():
                return self._on_reply_text(ev)
            case events.Interrupt():
                return self._on_interrupt(ev)
            case events.Error():
                return self._on_error(ev)
            case TurnReport():
                return self._on_turn_report(ev)
        return []  # audio_end: response.done follows with the turn's report

    def _on_speech_started(self, ev: events.SpeechStarted) -> list[str]:
        self._speech_item = self._id("item")
        self._speech_start_ms = round(ev.audio_offset_ms)
        if self.barge_in:
            for r in self._responses.values():
                if r.cancel_reason is None:
                    r.cancel_reason, r.mute = TURN_DETECTED, True
        return [self._ev("input_audio_buffer.speech_started", audio_start_ms=self._speech_start_ms,
                         item_id=self._speech_item)]

    def _commit_events(self, item: str) -> str:
        previous, self._last_item = self._last_item, item
        return self._ev("input_audio_buffer.committed", previous_item_id=previous, item_id=item)

    def _user_item(self, item: str, transcript: str | None) -> dict[str, Any]:
        return {"id": item, "object": "realtime.item", "type": "message", "role": "user",
                "status": "completed", "content": [{"type": "input_audio", "transcript": transcript}]}

    def _on_speech_ended(self, ev: events.SpeechEnded) -> list[str]:
        tid = ev.turn_id
        out: list[str] = []
        if self._requested is not None:  # the turn answering response.create (manual commit, or text)
            r, self._requested = self._requested, None
            r.turn_id = tid
            self._responses[tid] = r
            if self._pending_items:
                item, seconds = self._pending_items[-1]
                self._pending_items.clear()
                self._user_items[tid] = (item, seconds)
            return out
        item = self._speech_item or self._id("item")
        self._speech_item = None
        end_ms = max(self._speech_start_ms, round(self.audio_in_ms))
        self._user_items[tid] = (item, max(0.0, (end_ms - self._speech_start_ms) / 1000))
        out.append(self._ev("input_audio_buffer.speech_stopped", audio_end_ms=end_ms, item_id=item))
        previous = self._last_item
        out.append(self._commit_events(item))
        out.append(self._ev("conversation.item.added", previous_item_id=previous, item=self._user_item(item, None)))
        return out

    def _on_transcript(self, ev: events.Transcript) -> list[str]:
        tid, text = ev.turn_id, ev.text
        out: list[str] = []
        user = self._user_items.pop(tid, None)
        if user is not None:
            item, seconds = user
            out.append(self._ev(
                "conversation.item.input_audio_transcription.completed", item_id=item, content_index=0,
                transcript=text, usage={"type": "duration", "seconds": round(seconds, 3)},
            ))
            out.append(self._ev("conversation.item.done", previous_item_id=None, item=self._user_item(item, text)))
        if text and tid not in self._responses:
            r = _Response(self._id("resp"), self._id("item"), text_only=self.text_only, turn_id=tid)
            self._responses[tid] = r
            out += self._response_started(r)
        return out

    def _response_started(self, r: _Response) -> list[str]:
        response = self._response_object(r, "in_progress", None, [], None, None)
        item = self._assistant_item(r, "in_progress", with_content=False)
        previous, self._last_item = self._last_item, r.item_id
        return [
            self._ev("response.created", response=response),
            self._ev("response.output_item.added", response_id=r.id, output_index=0, item=item),
            self._ev("conversation.item.added", previous_item_id=previous, item=item),
        ]

    def _part(self, r: _Response) -> dict[str, Any]:
        if r.text_only:
            return {"type": "text", "text": r.transcript}
        return {"type": "audio", "transcript": r.transcript}

    def _start_part(self, r: _Response) -> list[str]:
        if r.part_started:
            return []
        r.part_started = True
        return [self._ev("response.content_part.added", response_id=r.id, item_id=r.item_id, output_index=0,
                         content_index=0, part=self._part(r))]

    def _on_reply_text(self, ev: events.ReplyText) -> list[str]:
        r = self._responses.get(ev.turn_id)
        if r is None or r.mute:
            return []
        out = self._start_part(r)
        clause = ev.text
        delta = clause if not r.clauses else " " + clause
        r.clauses.append((clause, r.audio_bytes))
        kind = "response.output_text.delta" if r.text_only else "response.output_audio_transcript.delta"
        out.append(self._ev(kind, response_id=r.id, item_id=r.item_id, output_index=0, content_index=0, delta=delta))
        return out

    def _on_interrupt(self, ev: events.Interrupt) -> list[str]:
        if ev.playback_only:
            return []  # the reply was complete; the client stops its own playback on speech_started
        r = self._responses.get(ev.turn_id)
        if r is not None:
            r.cancel_reason = r.cancel_reason or TURN_DETECTED
            r.mute = True
        return []

    def _on_error(self, ev: events.Error) -> list[str]:
        kind = "server_error" if ev.code in SERVER_ERRORS else "invalid_request_error"
        return self.error(RealtimeError(ev.code, ev.message, None, None, kind))

    def _on_turn_report(self, report: TurnReport) -> list[str]:
        tid = report.turn_id
        self._user_items.pop(tid, None)
        r = self._responses.pop(tid, None)
        out: list[str] = []
        if r is None and report.outcome in ("busy", "error"):  # failed before a reply could start
            if self._requested is not None:
                r, self._requested = self._requested, None
            else:
                r = _Response(self._id("resp"), self._id("item"), self.text_only, tid)
                out += self._response_started(r)
        if r is not None:
            out += self._finish(r, report)
        if self.turn_reports:
            out.append(
                compact_json({"type": "voice.turn_report", "event_id": self._id("event"), "report": report.to_dict()})
            )
        return out

    def _finish(self, r: _Response, report: TurnReport) -> list[str]:
        outcome = report.outcome
        if outcome == "cancelled" or r.cancel_reason is not None:
            status = "cancelled"
            details: dict[str, Any] | None = {"type": "cancelled", "reason": r.cancel_reason or TURN_DETECTED}
        elif outcome in ("ok", "no_speech"):
            status, details = "completed", None
        else:
            status = "failed"
            details = {"type": "failed", "error": {"type": "server_error", "code": str(outcome)}}
        common = {"response_id": r.id, "item_id": r.item_id, "output_index": 0, "content_index": 0}
        out: list[str] = []
        if r.part_started:
            if r.text_only:
                out.append(self._ev("response.output_text.done", **common, text=r.transcript))
            else:
                out.append(self._ev("response.output_audio.done", **common))
                out.append(self._ev("response.output_audio_transcript.done", **common, transcript=r.transcript))
            out.append(self._ev("response.content_part.done", **common, part=self._part(r)))
        item = self._assistant_item(r, "completed" if status == "completed" else "incomplete", with_content=True)
        out.append(self._ev("response.output_item.done", response_id=r.id, output_index=0, item=item))
        out.append(self._ev("conversation.item.done", previous_item_id=None, item=item))
        out.append(self._ev("response.done", response=self._response_object(
            r, status, details, [item], usage(report), metadata(report))))
        if r.clauses:
            self._spoken.append(_Spoken(r.item_id, list(r.clauses), r.audio_bytes))
            del self._spoken[:-8]
        return out

    def _assistant_item(self, r: _Response, status: str, *, with_content: bool) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if with_content and r.part_started:
            content = [{"type": "output_text", "text": r.transcript} if r.text_only
                       else {"type": "output_audio", "transcript": r.transcript}]
        return {"id": r.item_id, "object": "realtime.item", "type": "message", "role": "assistant",
                "status": status, "content": content}

    def _response_object(
        self, r: _Response, status: str, details: dict[str, Any] | None, output: list[dict[str, Any]],
        usage_: dict[str, Any] | None, metadata_: dict[str, str] | None,
    ) -> dict[str, Any]:
        return {
            "id": r.id, "object": "realtime.response", "status": status, "status_details": details,
            "output": output, "conversation_id": f"conv_{self.session_id}",
            "output_modalities": ["text"] if r.text_only else ["audio"],
            "usage": usage_, "metadata": metadata_,
        }
