"""One turn: STT → LLM → sentence splitter → TTS, concurrently, timed at every hand-over.

The LLM streams tokens into the splitter on the event loop; each speakable clause goes through a queue to the
TTS task, which synthesizes it and hands the audio, in ``chunk_ms`` pieces, to the session's
:class:`ReplySink` while the LLM keeps generating. The queue is unbounded on purpose (at most one clause per
token, so ``max_reply_tokens`` bounds it): the LLM never waits for the TTS or the client. Words the STT is
unsure of get "say it again" instead, without the LLM and off the history (:mod:`voice.turn.ask_again`).

A turn holds a place in the model queue (:meth:`~voice.runtime.runtime.ModelRuntime.admit`) for its STT and LLM work
only: the LLM never waits for the client, so a client that reads slowly delays nobody's turn but its own. The
turn ends once its last audio chunk has been handed to the socket, so a barge-in while reply audio is still
queued cancels it.

Cancelling :func:`run_turn` (barge-in, disconnect, shutdown) stops the LLM after its current token and the TTS
within its current sentence (the backend's ``interrupt``), waits until the worker threads have let go of the
models, tells the client to drop queued playback (``interrupt``), reports the turn as cancelled, and re-raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import soxr

from voice.audio import trim_lead_silence
from voice.config.config import Config
from voice.conversation.answer_confidence import Confidence
from voice.conversation.history import ContextTooSmallError, History, fit_prompt_on
from voice.conversation.reply_check import CheckedReply
from voice.conversation.self_repair import as_meant
from voice.runtime.model_api import ChatMessage, Heard, PromptInfo, TextDelta
from voice.runtime.outputs import LlmStarted, RuntimeLlmEvent, Transcription
from voice.runtime.runtime import Admission, BusyError, ModelRuntime
from voice.skills.timers import handle as handle_timer
from voice.turn import ask_again
from voice.turn.budget import TurnTimer, build_report
from voice.turn.checked_stream import check_stream, reply_text, splitter_for
from voice.turn.chunker import Chunker
from voice.turn.delivery import Delivery, ReplySink
from voice.turn.sentences import clean_for_speech
from voice.wire import events
from voice.wire.protocol import BUSY, CONTEXT, INTERNAL, ProtocolError
from voice.wire.report import TurnReport

log = logging.getLogger("voice.turn.pipeline")


@dataclass(frozen=True)
class Utterance:
    """A finished user utterance, as handed from the session to a turn."""

    audio: np.ndarray
    """float32 mono 16 kHz."""
    trailing_silence_ms: float
    forced: bool
    text: str | None = None
    """What the user said when it is already known and in the history (a typed message, or nothing new:
    answer the conversation as it stands): the turn skips STT (its stages count 0 ms) and answers."""
    announce: str | None = None
    """A reply the server speaks by itself (a timer ringing): no STT and no LLM, the text is spoken as is."""


@dataclass
class _Progress:
    transcript: str = ""
    spoken: list[str] = field(default_factory=list)
    prompt: PromptInfo | None = None
    audio_ms: float = 0.0
    trimmed_messages: int = 0
    announced: bool = False  # audio_start was sent: the client may have reply audio queued
    heard: Heard | None = None  # the STT's words and confidence
    answer: Confidence | None = None  # how sure the LLM was of its first sentence
    asked_again: bool = False  # the STT was unsure: the reply asks the user to say it again, off the record
    reply_asked_again: bool = False  # the reply asks again, on the record: an echo caught, a sum not all heard


class _EndOfClauses:
    """Marks the end of the clause queue."""


async def run_turn(
    runtime: ModelRuntime,
    config: Config,
    history: History,
    utterance: Utterance,
    timer: TurnTimer,
    sink: ReplySink,
    *,
    output_rate_hz: int | None = None,
    on_report: Callable[[TurnReport], None] = lambda r: None,
    on_error: Callable[[ProtocolError], None] = lambda e: None,
    reply: bool = True,
    report_fields: Callable[[], dict[str, Any]] = dict,
    audio: bool = True,
    speculative: Callable[[], bool] = lambda: False,
) -> TurnReport:
    """Run one turn to its end (its last audio chunk handed to the socket) and return its report.

    The report — of a cancelled turn too — goes to ``on_report`` and to the client as ``turn_report``;
    an error sent to the client (``busy``, ``context``, ``internal``) also goes to ``on_error``. A turn
    cancelled during transcription still waits for it (the model cannot be interrupted) and keeps what
    the user said in the history. ``reply=False`` (the user barged in before the turn began) only
    transcribes into the history and reports the turn as cancelled. ``report_fields`` adds fields to the
    report, read when the report is built (the session's speculation counters). ``audio=False`` (a client
    that wants text only) sends each clause as ``reply_text`` without synthesizing it; the TTS marks are then
    placed when the first clause is sent, so ``total_ms`` runs to the first clause instead of the first audio.
    While ``speculative()`` is true (a held reply), its model queue place is not counted (:meth:`ModelRuntime.admit`).
    """
    turn = _Turn(runtime, config, history, utterance, timer, sink, output_rate_hz, on_error, audio, speculative)
    cancelled, outcome = False, "ok"
    try:
        outcome = await turn.answer(reply)
    except asyncio.CancelledError:
        cancelled = True
        await turn.cut_short()
    except BusyError as e:
        outcome = "busy"
        await turn.fail(ProtocolError(BUSY, str(e), retry_after_ms=e.retry_after_ms))
    except ContextTooSmallError as e:
        outcome = "error"
        history.clear()
        await turn.fail(ProtocolError(CONTEXT, str(e)))
    except Exception as e:  # a model failed: report it, keep the session serving
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]  # type: ignore[assignment]
        log.exception("[%s turn %d] failed", timer.session_id, timer.turn_id)
        outcome = "error"
        await turn.fail(ProtocolError(INTERNAL, f"turn failed: {type(e).__name__}: {e}"))
    finally:
        report = _report(
            config,
            timer,
            turn.progress,
            utterance,
            cancelled,
            outcome,
            reply_audio_sent_spread_ms=turn.delivery.spread_ms(),
            **report_fields(),
        )
        on_report(report)
        with contextlib.suppress(Exception):
            await sink.send_event(report)
    if cancelled:
        raise asyncio.CancelledError
    return report


class _Turn:
    """The steps of one turn (:func:`run_turn` runs them and reports): :meth:`hear` (STT), :meth:`think` (the
    LLM, or a local reply, split into clauses) and, concurrently with it, :meth:`speak` (TTS of each clause,
    sent in chunks); :meth:`cut_short` after a cancel, :meth:`fail` for an error the client is told about."""

    def __init__(
        self,
        runtime: ModelRuntime,
        config: Config,
        history: History,
        utterance: Utterance,
        timer: TurnTimer,
        sink: ReplySink,
        output_rate_hz: int | None,
        on_error: Callable[[ProtocolError], None],
        audio: bool,
        speculative: Callable[[], bool],
    ) -> None:
        self.runtime, self.config, self.history, self.utterance = runtime, config, history, utterance
        self.timer, self.sink, self.on_error, self.audio = timer, sink, on_error, audio
        self.speculative = speculative
        self.tid = timer.turn_id
        self.progress = _Progress()
        self.delivery = Delivery(timer)
        self.tts_rate = runtime.tts.sample_rate
        self.out_rate = output_rate_hz or self.tts_rate

    async def answer(self, reply: bool) -> str:
        """Hear the user, then answer (``reply``) until the last chunk was sent; returns the outcome (``ok``,
        ``no_speech``). Raises CancelledError, BusyError, ContextTooSmallError or a model's error."""
        utterance, timer = self.utterance, self.timer
        with self.runtime.admit(speculative=self.speculative) as admission:
            if utterance.text is not None:
                text = self.progress.transcript = utterance.text
                for mark in ("stt_start", "stt_done"):
                    timer.mark(mark)
            else:
                text = await self.hear()
            if not reply:
                raise asyncio.CancelledError
            local = utterance.announce
            if self.progress.asked_again:
                local = ask_again.reply(self.config, text)
            if local is None and text and self.config.llm.skills:
                # Timers change the conversation's state, so they are handled here, on its history (a
                # speculative turn's copy), not in the stateless skills of the LLM wrapper.
                local = handle_timer(as_meant(text, self.config.llm), self.history.timers, timer.clock.now_ns())
            if not text and utterance.text is None and local is None:
                return "no_speech"
            await self.think(admission, local)
        await self.delivery.wait()
        return "ok"

    async def hear(self) -> str:
        """Transcribe. Cancelled meanwhile, it still waits for the text (the model cannot be interrupted) and
        keeps it in the history: the user did say it."""
        timer = self.timer
        stt = asyncio.ensure_future(self.runtime.transcribe(self.utterance.audio, timer.session_id, timer.clock))
        try:
            heard = await asyncio.shield(stt)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self._record_transcript(await stt)
            raise
        return await self._record_transcript(heard)

    async def _record_transcript(self, heard: Transcription) -> str:
        """Record the STT's stage and what the user said (history, client); returns the text. Words the STT is
        unsure of (``[stt] ask_again``) go to the client but not into the history: the reply asks again."""
        self.timer.mark("stt_start", at_ns=heard.started_ns)
        self.timer.mark("stt_done")
        text = self.progress.transcript = heard.text.strip()
        self.progress.heard = sure = heard.heard
        self.progress.asked_again = ask_again.needed(
            self.config, text, sure.avg_logprob, self.history.messages, sure.min_word_prob
        )
        if text and not self.progress.asked_again:
            self.history.add("user", text)
        await self.sink.send_event(events.Transcript(self.tid, text))
        return text

    async def think(self, admission: Admission, local: str | None) -> None:
        """Generate the reply (or stream ``local``, a reply known without the LLM), cut it into clauses, check them
        (:mod:`~voice.conversation.reply_check`) and hand them to :meth:`speak`; the LLM's place is freed once done."""
        config, timer = self.config, self.timer
        messages: list[ChatMessage] = []
        if local is None:
            system = ChatMessage("system", config.llm.system_prompt)
            messages, dropped = await fit_prompt_on(
                self.runtime, system, self.history, reply_tokens=config.llm.max_reply_tokens, session=timer.session_id
            )
            self.progress.trimmed_messages = dropped
        splitter = splitter_for(config)
        # Unbounded on purpose: at most one clause per token, and the LLM must never wait for the client.
        clauses: asyncio.Queue[str | _EndOfClauses] = asyncio.Queue()
        typed = self.utterance.text is not None
        checked = CheckedReply.of(messages, config, lambda raw, ns: _put_clause(clauses, raw, timer, ns), typed=typed)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.speak(clauses))
            # If anything below raises, the task group cancels the TTS task.
            stream = (
                _local_reply(local, timer)
                if local is not None
                else self.runtime.generate(
                    messages, timer.session_id, timer.clock, max_tokens=config.llm.max_reply_tokens
                )
            )
            try:
                cap = None if local is not None else config.llm.max_reply_tokens
                await check_stream(stream, checked, splitter, timer, token_cap=cap)
            finally:
                self.progress.prompt = checked.prompt  # also for the report of a turn cancelled meanwhile
            self.progress.answer, self.progress.reply_asked_again = checked.confidence(), checked.asked_again
            await clauses.put(_EndOfClauses())
            admission.release()  # the LLM is done: the next turn may use it while this one is spoken
        if not self.progress.asked_again:
            self.history.add("assistant", reply_text(checked, splitter))

    async def speak(self, clauses: asyncio.Queue[str | _EndOfClauses]) -> None:
        """Synthesize each clause as it comes and send it: ``audio_start`` before the first, then for each its
        ``reply_text`` and its chunks; ``audio_end`` after the last. Without audio, only the ``reply_text``."""
        sink, tid, progress, timer = self.sink, self.tid, self.progress, self.timer
        while not isinstance(clause := await clauses.get(), _EndOfClauses):
            if not self.audio:
                await sink.send_event(events.ReplyText(tid, clause))
                for mark in ("tts_start", "tts_first_audio", "first_audio_sent"):
                    timer.mark(mark)
                progress.spoken.append(clause)
                continue
            said = False
            chunker = Chunker(self.out_rate * self.config.tts.chunk_ms // 1000)
            async for pcm in self._synthesize(clause):
                if not progress.announced:
                    await sink.send_event(events.AudioStart(tid, self.out_rate, self.config.tts.chunk_ms))
                    progress.announced = True
                if not said:
                    await sink.send_event(events.ReplyText(tid, clause))
                    progress.spoken.append(clause)
                    said = True
                progress.audio_ms += len(pcm) * 1000 / self.out_rate
                for chunk in chunker.feed(pcm):
                    await sink.send_audio(tid, chunk, self.delivery.on_sent_callback())
            for chunk in chunker.flush():
                await sink.send_audio(tid, chunk, self.delivery.on_sent_callback())
        if progress.announced:
            await sink.send_event(events.AudioEnd(tid, round(progress.audio_ms, 1)))

    async def _synthesize(self, clause: str) -> AsyncGenerator[np.ndarray, None]:
        """The clause's audio at the client's rate, piece by piece as the TTS makes it (nothing: nothing to say).
        The reply's first piece starts ``[tts] trim_lead_ms`` before its first sound."""
        resampler = (
            soxr.ResampleStream(self.tts_rate, self.out_rate, 1, dtype="int16")
            if self.out_rate != self.tts_rate
            else None
        )
        lead = not self.progress.announced and self.config.tts.trim_lead_ms >= 0  # the reply's first clause
        async for piece in self.runtime.synthesize_stream(clause, self.timer.clock):
            pcm = piece.audio
            self.timer.mark("tts_start", at_ns=piece.started_ns)  # the first mark of each name stays
            self.timer.mark("tts_first_audio", at_ns=piece.ready_ns)
            if lead:
                # Piper starts every utterance with ~50 ms of silence: on the first piece it is pure latency.
                pcm = trim_lead_silence(pcm, self.tts_rate, self.config.tts.trim_lead_ms)
                lead = False
            if resampler is not None:
                pcm = np.asarray(resampler.resample_chunk(pcm), np.int16)
            if len(pcm):
                yield pcm
        if resampler is not None:
            tail = np.asarray(resampler.resample_chunk(np.zeros(0, np.int16), last=True), np.int16)
            if len(tail):
                yield tail

    async def cut_short(self) -> None:
        """After a cancel: drop the audio not yet sent, keep what was said in the history (so the next turn
        knows the reply was cut short), and tell the client to drop the playback it has queued."""
        self.sink.drop_turn(self.tid)
        if self.progress.spoken and not self.progress.asked_again:
            self.history.add("assistant", " ".join(self.progress.spoken) + " …")
        if self.progress.announced:
            with contextlib.suppress(Exception):
                await self.sink.send_event(events.Interrupt(self.tid))

    async def fail(self, err: ProtocolError) -> None:
        """An error the client is told about (``busy``, ``context``, ``internal``)."""
        self.on_error(err)
        await self.sink.send_event(events.Error.of(err))


async def _local_reply(text: str, timer: TurnTimer) -> AsyncGenerator[tuple[RuntimeLlmEvent, int], None]:
    """A reply known without the LLM (a timer command or announcement), streamed as the LLM's would be: the
    ``llm_*`` stages then measure only the matching (no prompt is evaluated)."""
    yield LlmStarted(), timer.clock.now_ns()
    yield PromptInfo(prompt_tokens=0, reused_tokens=0, evaluated_tokens=0), timer.clock.now_ns()
    yield TextDelta(text), timer.clock.now_ns()


async def _put_clause(clauses: asyncio.Queue[str | _EndOfClauses], raw: str, timer: TurnTimer, ready_ns: int) -> None:
    """Queue a clause for TTS; ``ready_ns`` is when the token that completed it was generated."""
    text = clean_for_speech(raw)
    if text:
        timer.mark("first_clause", at_ns=ready_ns)
        await clauses.put(text)


def _report(
    config: Config, timer: TurnTimer, progress: _Progress, utterance: Utterance, cancelled: bool, outcome: str,
    **extra: Any,
) -> TurnReport:
    prompt, answer, heard = progress.prompt, progress.answer, progress.heard
    return build_report(
        timer,
        config.budget,
        cancelled=cancelled,
        outcome="cancelled" if cancelled else outcome,
        prompt_tokens_reused=prompt.reused_tokens if prompt else 0,
        prompt_tokens_evaluated=prompt.evaluated_tokens if prompt else 0,
        kv_restore_ms=prompt.kv_restore_ms if prompt else 0.0,
        kv_evicted=bool(prompt and prompt.kv_reevaluated_tokens > 0),
        kv_reevaluated_tokens=prompt.kv_reevaluated_tokens if prompt else 0,
        kv_cache_mb=round(prompt.kv_cache_bytes / 2**20, 2) if prompt else 0.0,
        transcript=progress.transcript,
        reply_text=" ".join(progress.spoken),
        reply_audio_ms=round(progress.audio_ms, 1),
        history_trimmed=progress.trimmed_messages,
        utterance_ms=round(len(utterance.audio) / 16.0, 1),
        forced_endpoint=utterance.forced,
        stt_avg_logprob=_rounded(heard.avg_logprob if heard else None),
        stt_min_word_prob=_rounded(heard.min_word_prob if heard else None),
        stt_no_speech_prob=_rounded(heard.no_speech_prob if heard else None),
        asked_again=progress.asked_again or progress.reply_asked_again,
        answer_logprob_mean=answer.mean_logprob if answer else None,
        answer_logprob_min=answer.min_logprob if answer else None,
        **extra,
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def cancelled_report(config: Config, timer: TurnTimer, utterance: Utterance) -> TurnReport:
    """The report of a turn cancelled before it started (it waited for the previous turn)."""
    return _report(config, timer, _Progress(), utterance, True, "cancelled")
