"""Per-connection state: the audio stream, VAD and endpointing, the conversation, the current turn.

The session is driven by the server's reader task (:meth:`Session.on_text`, :meth:`Session.on_audio`) and
writes through an :class:`~voice.serve.outbox.Outbox` drained by the writer task. It owns at most one running turn task;
speech that starts while a turn runs cancels it (barge-in) when ``[vad] barge_in`` is on; while the client still
plays a finished reply, it stops playback and cuts the reply to what was heard (:mod:`voice.serve.playback`). A reply
started at a pause is held, then committed or discarded, by the session's :class:`~voice.turn.speculator.Speculator`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import numpy as np

from voice.clock import Clock
from voice.config.config import Config
from voice.conversation.history import History
from voice.runtime.runtime import ModelRuntime
from voice.serve.outbox import Outbox
from voice.serve.playback import ClauseRecorder, LastCut, Playback
from voice.skills.ringer import Ringer
from voice.skills.timers import ring_text
from voice.turn.budget import TurnTimer
from voice.turn.delivery import ReplySink
from voice.turn.endpoint import EndpointEvent, SpeechEnded, SpeechPaused, SpeechResumed, SpeechStarted
from voice.turn.listener import Listener, heard_ns, silence_after_speech_ms
from voice.turn.pipeline import Utterance, cancelled_report, run_turn
from voice.turn.speculation import HeldSink
from voice.turn.speculator import Speculator
from voice.wire import events as server_events
from voice.wire.protocol import (
    ALREADY_STARTED,
    PROTOCOL_VERSION,
    EndTurn,
    Played,
    ProtocolError,
    Reset,
    Start,
    Stop,
    check_audio_frame,
    decode_client_text,
)
from voice.wire.report import TurnReport

log = logging.getLogger("voice.serve.session")

#: The cancel message of a barge-in (other cancels: disconnect, shutdown, reset).
BARGE_IN = "barge-in"


def _let_go_of_cancellation(task: asyncio.Task[TurnReport]) -> None:
    """Done callback of a turn's task. A cancelled task keeps its ``CancelledError`` until someone retrieves
    it, and the error's traceback keeps the turn's frames alive, and with them the utterance's audio (up to
    30 s: 1.9 MiB per session while the cancelled turn is its last). Retrieving it lets them go."""
    if task.cancelled():
        with contextlib.suppress(asyncio.CancelledError):
            task.result()


class Session:
    """One client connection's conversation."""

    def __init__(
        self,
        session_id: str,
        runtime: ModelRuntime,
        config: Config,
        clock: Clock,
        *,
        on_report: Callable[[TurnReport], None] = lambda r: None,
        on_error: Callable[[ProtocolError], None] = lambda e: None,
        outbox: Outbox | None = None,
    ) -> None:
        self.id = session_id
        self.runtime = runtime
        self.config = config
        self.clock = clock
        self.on_report = on_report
        self.on_error = on_error
        self.outbox = outbox if outbox is not None else Outbox(config.server.send_queue_frames)
        self.history = History()
        self.started: Start | None = None
        self.stopping = False
        self.listener = Listener(runtime, config, clock)
        self._turn: asyncio.Task[TurnReport] | None = None
        self._turn_id = 0
        self._playback: Playback | None = None  # the last reply with audio (the client may be playing it)
        self._barge_in: tuple[int, int] | None = None  # (turn id, when the user talked over it, ns)
        self.cuts = LastCut()  # the reply last cut at a barge-in, and the client's report of what it played
        self.turns: list[asyncio.Task[TurnReport]] = []
        self._reported: set[int] = set()
        self.speculator = Speculator(session_id)
        self.speak_replies = True
        """False: replies are sent as text only (``reply_text``), without synthesizing audio."""
        self.ringer = Ringer(
            lambda: self.history.timers, lambda: self.clock.now_ns(), self.ring_due, f"{session_id}-timers"
        )
        """Rings the conversation's timers (armed after every turn, stopped by :meth:`cancel_turns`)."""

    def configure(self, config: Config) -> None:
        """Use ``config`` from now on (a client's own settings: system prompt, silence window, barge-in).
        The endpointer starts afresh with it: speech heard so far in an unfinished utterance is dropped."""
        self.config = config
        self.listener.configure(config)

    # ------------------------------------------------------------------ input
    async def on_text(self, text: str) -> ProtocolError | None:
        """Handle a text frame; returns an error to report (``close_code`` set: close the connection)."""
        msg = decode_client_text(text)
        if isinstance(msg, ProtocolError):
            return msg
        if isinstance(msg, Start):
            if self.started is not None:
                return ProtocolError(ALREADY_STARTED, "the stream is already started; send audio")
            self.started = msg
            self.listener.start(msg.sample_rate)
            await self.outbox.send_event(
                server_events.Ready(self.id, PROTOCOL_VERSION, msg.sample_rate, self.output_rate)
            )
        elif isinstance(msg, EndTurn):
            for ev in self.listener.force_end():
                await self._on_endpoint_event(ev)
        elif isinstance(msg, Reset):
            # A new conversation: stop the reply in flight (reported as cancelled), then forget.
            await self.cancel_turns()
            self.history.clear()
            self.history.timers.clear()
        elif isinstance(msg, Stop):
            self.stopping = True
        elif isinstance(msg, Played) and msg.played_ms is not None:
            self.cuts.report(msg.turn_id, msg.played_ms)
        return None

    @property
    def in_speech(self) -> bool:
        """The VAD is inside an utterance (heard its start, not yet its end)."""
        return self.listener.in_speech

    @property
    def output_rate(self) -> int:
        if self.started is not None and self.started.output_sample_rate:
            return self.started.output_sample_rate
        return self.runtime.tts.sample_rate

    async def on_audio(self, data: bytes) -> ProtocolError | None:
        """Handle a binary frame of PCM s16le audio at the declared rate."""
        err = check_audio_frame(data, started=self.started is not None)
        if err is not None:
            return err
        frames = self.listener.accept(data)
        if isinstance(frames, ProtocolError) or not frames:  # an error, or not yet a whole VAD frame
            return frames if isinstance(frames, ProtocolError) else None
        await self._act_on(self.listener.hear(frames))
        if self.listener.score_pending:
            # The speculative reply (if any) has started: now ask the end-of-turn model, before any later
            # frame of this session is endpointed (this reader awaits it; other sessions' VAD goes on).
            await self._act_on(self.listener.score())
        return None

    async def _act_on(self, endpointing: Awaitable[list[EndpointEvent]]) -> None:  # each event, in order
        for ev in await endpointing:
            await self._on_endpoint_event(ev)

    # ------------------------------------------------------------------ turns
    async def _on_endpoint_event(self, ev: EndpointEvent) -> None:
        now_ns = self.clock.now_ns()
        if isinstance(ev, SpeechPaused):
            self._speculate(ev, now_ns)
            return
        if isinstance(ev, SpeechResumed):
            self.speculator.discard()
            return
        if isinstance(ev, SpeechStarted):
            await self.outbox.send_event(server_events.SpeechStarted(round(ev.audio_offset_ms, 1)))
            if not self.config.vad.barge_in:
                return
            if self._turn is not None and not self._turn.done():
                log.info("[%s] barge-in: cancelling turn %d", self.id, self._turn_id)
                self._barge_in = (self._turn_id, now_ns)
                self._turn.cancel(BARGE_IN)
            elif self._playback is not None and self._playback.playing(now_ns):
                # The reply is complete and sent, but the client is still playing it: stop playback, and keep
                # in the history only what the user heard of it.
                played, self._playback = self._playback, None
                self.cuts.cut(played, self.history, now_ns)
                await self.outbox.send_event(server_events.Interrupt(played.turn_id, playback_only=True))
            return
        self._turn_id += 1
        spec = self.speculator.take_live()
        if spec is not None:
            self.history = spec.history
            self._turn = spec.task
            await spec.commit(ev, now_ns, self.outbox, f"{self.id}-flush")
            return
        speech_end_ns = heard_ns(ev, now_ns) - round(silence_after_speech_ms(ev) * 1e6)
        await self._start_turn(Utterance(ev.audio, ev.trailing_silence_ms, ev.forced), speech_end_ns, now_ns, ev)

    async def end_utterance(self, audio: np.ndarray | None, *, ended_ns: int | None = None, text: str = "") -> None:
        """Start a turn now, without the VAD: for a client that does its own endpointing.

        ``audio`` (float32 mono 16 kHz) is the whole utterance (transcribed, then answered); ``None`` answers
        the conversation as it stands, ``text`` being what the user last said (already in :attr:`history`).
        ``ended_ns`` is when the user's speech ended (the client's commit), default now: the report counts
        from it. Runs after the turn in flight, like any turn."""
        now_ns = self.clock.now_ns()
        self.speculator.discard()
        self._turn_id += 1
        if audio is None:
            utterance = Utterance(np.zeros(0, np.float32), 0.0, True, text=text)
        else:
            utterance = Utterance(audio, 0.0, True)
        await self._start_turn(utterance, min(ended_ns or now_ns, now_ns), now_ns, None)

    async def _start_turn(
        self,
        utterance: Utterance,
        speech_end_ns: int,
        now_ns: int,
        ev: SpeechEnded | None,
        *,
        initiator: str = "user",
    ) -> None:
        timer = TurnTimer(self.clock, self.id, self._turn_id)
        timer.mark("speech_end", at_ns=speech_end_ns)
        timer.mark("endpoint", at_ns=now_ns)
        if initiator == "user":
            await self.outbox.send_event(
                server_events.SpeechEnded(self._turn_id, utterance.forced, round(utterance.trailing_silence_ms, 1))
            )
        previous = self._turn
        discarded = self.speculator.take_discards() if initiator == "user" else 0
        scores = {"turn_score": ev.turn_score, "turn_words_p": ev.words_p} if ev is not None else {}

        def fields() -> dict[str, object]:
            return {"speculations_discarded": discarded, **scores, "initiator": initiator}

        task = asyncio.create_task(self._run(previous, utterance, timer, fields), name=f"{self.id}-turn")
        # A task cancelled before it ran (barge-in right after the endpoint, or while it waited for the
        # previous turn) never enters run_turn: report it here, so no turn goes unreported.
        task.add_done_callback(lambda t: self._report_if_lost(t, timer, utterance))
        task.add_done_callback(_let_go_of_cancellation)
        self._turn = task
        self.turns = [t for t in self.turns if not t.done()]
        self.turns.append(task)
        await asyncio.sleep(0)  # let the turn start, so that a barge-in cancels a running turn

    # ------------------------------------------------------------ speculation
    def _speculate(self, ev: SpeechPaused, now_ns: int) -> None:
        """Start the reply now, held (nothing reaches the client or the history) until committed."""
        if self.config.turn.speculate_after_ms <= 0 or self.speculator.current is not None:
            return
        if self._turn is not None and not self._turn.done():
            return  # the previous reply still runs (barge-in is off): answer after it, as usual
        timer = TurnTimer(self.clock, self.id, self._turn_id + 1)
        timer.mark("speech_end", at_ns=heard_ns(ev, now_ns) - round(ev.trailing_silence_ms * 1e6))
        utterance = Utterance(ev.audio, ev.trailing_silence_ms, False)

        def heard(text: str) -> None:  # the speculative STT is done: its words are evidence for the end of the turn
            if self.speculator.current is spec:  # the listener ignores them with [turn] text_evidence off
                self.speculator.track(asyncio.create_task(self._act_on(self.listener.hear_words(text, ev.pause_seq))))
        spec = self.speculator.new(HeldSink(self.outbox, on_transcript=heard), self.history.copy(), timer, now_ns)

        def on_report(report: TurnReport) -> None:
            if spec.sink.committed:
                self._on_turn_report(report)
            else:  # discarded: leaves no trace but the counters
                self._reported.add(report.turn_id)

        spec.task = asyncio.create_task(
            self._run(
                None, utterance, timer, spec.report_fields, sink=spec.sink, history=spec.history, on_report=on_report
            ),
            name=f"{self.id}-speculation",
        )
        spec.task.add_done_callback(lambda t: self._report_if_lost(t, timer, utterance, spec.sink))
        spec.task.add_done_callback(_let_go_of_cancellation)
        self.speculator.add(spec)
        self.turns = [t for t in self.turns if not t.done()]
        self.turns.append(spec.task)

    def _on_turn_report(self, report: TurnReport) -> None:
        self._reported.add(report.turn_id)
        self.on_report(report)

    def _report_if_lost(
        self, task: asyncio.Task[TurnReport], timer: TurnTimer, utterance: Utterance, held: HeldSink | None = None
    ) -> None:
        if (held is not None and not held.committed) or timer.turn_id in self._reported:
            self._reported.discard(timer.turn_id)  # a discarded speculation, or a turn that reported: no report
            return
        report = cancelled_report(self.config, timer, utterance)
        self.on_report(report)
        self.outbox.post_event(report)

    async def _run(
        self,
        previous: asyncio.Task[TurnReport] | None,
        utterance: Utterance,
        timer: TurnTimer,
        report_fields: Callable[[], dict[str, object]],
        *,
        sink: ReplySink | None = None,
        history: History | None = None,
        on_report: Callable[[TurnReport], None] | None = None,
    ) -> TurnReport:
        """Run one turn after ``previous``; a speculative turn passes its held ``sink`` and ``history``."""
        reply = True
        if previous is not None:
            try:
                await asyncio.wait([previous])
            except asyncio.CancelledError as e:
                if e.args != (BARGE_IN,):
                    raise
                reply = False  # the user talks again: hear this utterance (history), don't answer it
            # Forget the previous task: a cancelled task keeps its traceback and so this frame, and a chain
            # of turns would keep every earlier utterance's audio alive.
            previous = None
        history = history if history is not None else self.history
        before = list(history.messages)  # after the previous turn: what this turn adds is new
        recorder = ClauseRecorder(sink if sink is not None else self.outbox, self.output_rate)
        try:
            held = sink if isinstance(sink, HeldSink) else None

            def on_error(err: ProtocolError) -> None:
                if held is None or held.committed:
                    self.on_error(err)

            report = await run_turn(
                self.runtime,
                self.config,
                history,
                utterance,
                timer,
                recorder,
                output_rate_hz=self.output_rate,
                on_report=on_report or self._on_turn_report,
                on_error=on_error,
                reply=reply,
                report_fields=report_fields,
                audio=self.speak_replies,
                speculative=(lambda: not held.committed) if held is not None else lambda: False,
            )
        except asyncio.CancelledError:
            # Talked over: the turn kept the clauses it had sent (turn.cut_short), more than were heard by then.
            played = Playback.of(timer.turn_id, timer.marks_ns.get("first_audio_sent"), recorder, before, history)
            if played is not None and self._barge_in is not None and self._barge_in[0] == timer.turn_id:
                self.cuts.cut(played, history, self._barge_in[1])
            raise
        finally:
            self.outbox.forget_turn(timer.turn_id)
            if not self.stopping:
                self.ringer.arm()
        sent_ns = timer.marks_ns.get("first_audio_sent")
        self._playback = Playback.of(timer.turn_id, sent_ns, recorder, before, history) or self._playback
        return report

    # ------------------------------------------------------------------ timers
    async def ring_due(self) -> int:
        """Speak every timer due now, each as a server-initiated turn (report ``initiator = "timer"``, its
        ``total_ms`` counted from the moment it was due). Returns how many rang: none while the user is in
        an utterance or a speculative reply is held (it rings once their turn has started)."""
        if self.in_speech or self.speculator.current is not None or self.stopping:
            return 0
        now_ns = self.clock.now_ns()
        due = self.history.timers.pop_due(now_ns)
        for t in due:
            self._turn_id += 1
            utterance = Utterance(np.zeros(0, np.float32), 0.0, False, text="", announce=ring_text(t))
            await self._start_turn(utterance, t.due_ns, now_ns, None, initiator="timer")
        return len(due)

    def in_flight(self) -> list[asyncio.Task[TurnReport]]:
        return [t for t in self.turns if not t.done()]

    async def cancel_turns(self) -> None:
        """Cancel the turns in flight (each is reported as cancelled) and the timers' ringer, and wait until
        they stopped. The timers stay in the conversation (a turn after this arms the ringer again)."""
        await self.ringer.stop()
        self.speculator.cancel_words()
        pending = self.in_flight()
        for t in pending:
            t.cancel()
        for t in pending:
            with contextlib.suppress(BaseException):
                await t
        await self.ringer.stop()  # a cancelled turn arms it again on its way out

    async def wait_turns(self, timeout_s: float | None = None) -> bool:
        """Wait for the turns in flight to finish; False if some still run after ``timeout_s``."""
        pending = self.in_flight()
        if not pending:
            return True
        _, still = await asyncio.wait(pending, timeout=timeout_s)
        return not still
