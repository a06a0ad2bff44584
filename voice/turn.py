"""One turn: STT → LLM → sentence splitter → TTS, concurrently, timed at every hand-over.

The LLM streams tokens into the splitter on the event loop; each speakable clause goes through a bounded
queue to the TTS task, which synthesizes it and hands the audio, in ``chunk_ms`` pieces, to the session's
:class:`ReplySink` while the LLM keeps generating.

A turn holds a place in the model queue (:meth:`~voice.engine.Engines.admit`) for its STT and LLM work
only: the LLM never waits for the client (the clause queue is bounded by ``max_reply_tokens``), so a
client that reads slowly delays nobody's turn but its own. The turn ends once its last audio chunk has
been handed to the socket, so a barge-in while reply audio is still queued cancels it.

Cancelling :func:`run_turn` (barge-in, disconnect, shutdown) stops the LLM after its current token and the
TTS after its current sentence, waits until the worker threads have let go of the models, tells the
client to drop queued playback (``interrupt``), reports the turn as cancelled, and re-raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import soxr

from voice import events
from voice.audio import trim_lead_silence
from voice.budget import TurnReport, TurnTimer, build_report
from voice.config import Config
from voice.engine import Admission, BusyError, Engines
from voice.history import ContextTooSmallError, History
from voice.protocol import BUSY, CONTEXT, INTERNAL, AudioFormat, ProtocolError
from voice.sentences import SentenceSplitter, SplitterConfig, clean_for_speech
from voice.stages import ChatMessage, LlmEvent, PromptInfo, TextDelta
from voice.timers import handle as handle_timer

log = logging.getLogger("voice.turn")


class ReplySink(Protocol):
    """Where a turn's events and audio go (the session's writer; a list in tests)."""

    async def send_event(self, ev: events.ServerEvent) -> None:
        """Queue a server event."""
        ...

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        """Queue one chunk of reply audio; ``on_sent`` runs once it was handed to the socket."""
        ...

    def drop_turn(self, turn_id: int) -> None:
        """Discard audio of this turn not yet sent (barge-in)."""
        ...


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


class _EndOfClauses:
    """Marks the end of the clause queue."""


def _chunks(pcm: np.ndarray, samples_per_chunk: int) -> list[bytes]:
    return [pcm[i : i + samples_per_chunk].tobytes() for i in range(0, len(pcm), samples_per_chunk)]


class _Delivery:
    """Counts reply chunks queued and handed to the socket; :meth:`wait` until all were sent."""

    def __init__(self, timer: TurnTimer) -> None:
        self.timer = timer
        self.queued = 0
        self.sent = 0
        self.first_sent_ns: int | None = None
        self.last_sent_ns: int | None = None
        self._all_sent = asyncio.Event()
        self._all_sent.set()

    def on_sent_callback(self) -> Callable[[], None]:
        self.queued += 1
        self._all_sent.clear()
        first = self.queued == 1

        def sent() -> None:
            if first:
                self.first_sent_ns = self.timer.mark("first_audio_sent")
            self.last_sent_ns = self.timer.clock.now_ns()
            self.sent += 1
            if self.sent >= self.queued:
                self._all_sent.set()

        return sent

    async def wait(self) -> None:
        """Wait until every queued chunk was sent. Cancelling only stops the wait."""
        await self._all_sent.wait()

    def spread_ms(self) -> float | None:
        """First chunk sent → last chunk sent, in ms (None before two chunks were sent)."""
        if self.sent < 2 or self.first_sent_ns is None or self.last_sent_ns is None:
            return None
        return round((self.last_sent_ns - self.first_sent_ns) / 1e6, 1)


async def run_turn(
    engines: Engines,
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
    """
    progress = _Progress()
    delivery = _Delivery(timer)
    tts_rate = engines.tts.sample_rate
    out_rate = output_rate_hz or tts_rate
    fmt = AudioFormat(sample_rate=out_rate)
    tid = timer.turn_id

    async def speak(clauses: asyncio.Queue[str | _EndOfClauses]) -> None:
        announced = False
        samples_per_chunk = max(1, out_rate * config.tts.chunk_ms // 1000)
        while not isinstance(clause := await clauses.get(), _EndOfClauses):
            if not audio:
                await sink.send_event(events.ReplyText(tid, clause))
                for mark in ("tts_start", "tts_first_audio", "first_audio_sent"):
                    timer.mark(mark)
                progress.spoken.append(clause)
                continue
            pieces = await engines.synthesize(clause, timer)
            if not pieces:
                continue
            pcm = np.concatenate(pieces)
            if not announced and config.tts.trim_lead_ms >= 0:
                # Piper starts every utterance with ~50 ms of silence: on the first clause it is pure latency.
                pcm = trim_lead_silence(pcm, tts_rate, config.tts.trim_lead_ms)
            if out_rate != tts_rate:
                pcm = soxr.resample(pcm, tts_rate, out_rate).astype(np.int16)
            if not announced:
                await sink.send_event(
                    events.AudioStart(tid, fmt.sample_rate, config.tts.chunk_ms, fmt.channels, fmt.format)
                )
                announced = progress.announced = True
            await sink.send_event(events.ReplyText(tid, clause))
            progress.spoken.append(clause)
            progress.audio_ms += len(pcm) * 1000 / out_rate
            for chunk in _chunks(pcm, samples_per_chunk):
                await sink.send_audio(tid, chunk, delivery.on_sent_callback())
        if announced:
            await sink.send_event(events.AudioEnd(tid, round(progress.audio_ms, 1)))

    async def think(admission: Admission, local: str | None) -> None:
        messages: list[ChatMessage] = []
        if local is None:
            system = ChatMessage("system", config.llm.system_prompt)
            messages, dropped = await engines.fit_prompt(
                system, history, reply_tokens=config.llm.max_reply_tokens, session=timer.session_id
            )
            progress.trimmed_messages = dropped
        splitter = SentenceSplitter(
            SplitterConfig(
                min_first_clause_words=config.tts.min_first_clause_words,
                max_first_chunk_words=config.tts.max_first_chunk_words,
            )
        )
        # Unbounded on purpose: at most one clause per token, and the LLM must never wait for the client.
        clauses: asyncio.Queue[str | _EndOfClauses] = asyncio.Queue()
        reply: list[str] = []
        async with asyncio.TaskGroup() as tg:
            tg.create_task(speak(clauses))
            # If anything below raises, the task group cancels the TTS task.
            stream = (
                _local_reply(local, timer)
                if local is not None
                else engines.generate(messages, timer, max_tokens=config.llm.max_reply_tokens)
            )
            async with contextlib.aclosing(stream):
                async for ev, t_ns in stream:
                    if isinstance(ev, PromptInfo):
                        progress.prompt = ev
                        continue
                    reply.append(ev.text)
                    for raw in splitter.push(ev.text):
                        await _put_clause(clauses, raw, timer, t_ns)
            for raw in splitter.flush():
                await _put_clause(clauses, raw, timer, timer.clock.now_ns())
            await clauses.put(_EndOfClauses())
            admission.release()  # the LLM is done: the next turn may use it while this one is spoken
        history.add("assistant", "".join(reply))

    async def heard(text: str) -> None:
        progress.transcript = text
        if text:
            history.add("user", text)
        await sink.send_event(events.Transcript(tid, text))

    async def hear() -> str:
        stt = asyncio.ensure_future(engines.transcribe(utterance.audio, timer))
        try:
            text = (await asyncio.shield(stt)).strip()
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await heard((await stt).strip())  # the user did say it: keep it for the next turn
            raise
        await heard(text)
        return text

    async def fail(err: ProtocolError) -> None:
        on_error(err)
        await sink.send_event(events.Error.of(err))

    cancelled = False
    outcome = "ok"
    try:
        with engines.admit() as admission:
            if utterance.text is not None:
                text = progress.transcript = utterance.text
                for mark in ("stt_start", "stt_done"):
                    timer.mark(mark)
            else:
                text = await hear()
            if not reply:
                raise asyncio.CancelledError
            local = utterance.announce
            if local is None and text and config.llm.skills:
                # Timers change the conversation's state, so they are handled here, on its history (a
                # speculative turn's copy), not in the stateless skills of the LLM wrapper.
                local = handle_timer(text, history.timers, timer.clock.now_ns())
            if not text and utterance.text is None and local is None:
                outcome = "no_speech"
            else:
                await think(admission, local)
        await delivery.wait()
    except asyncio.CancelledError:
        cancelled = True
        sink.drop_turn(tid)
        # Keep what was actually said, so the next turn knows the reply was cut short.
        if progress.spoken:
            history.add("assistant", " ".join(progress.spoken) + " …")
        if progress.announced:  # tell the client to drop the playback it has queued
            with contextlib.suppress(Exception):
                await sink.send_event(events.Interrupt(tid))
    except BusyError as e:
        outcome = "busy"
        await fail(ProtocolError(BUSY, str(e), retry_after_ms=e.retry_after_ms))
    except ContextTooSmallError as e:
        outcome = "error"
        history.clear()
        await fail(ProtocolError(CONTEXT, str(e)))
    except Exception as e:  # a model failed: report it, keep the session serving
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]  # type: ignore[assignment]
        log.exception("[%s turn %d] failed", timer.session_id, tid)
        outcome = "error"
        await fail(ProtocolError(INTERNAL, f"turn failed: {type(e).__name__}: {e}"))
    finally:
        report = _report(
            config,
            timer,
            progress,
            utterance,
            cancelled,
            outcome,
            reply_audio_sent_spread_ms=delivery.spread_ms(),
            **report_fields(),
        )
        on_report(report)
        with contextlib.suppress(Exception):
            await sink.send_event(report)
    if cancelled:
        raise asyncio.CancelledError
    return report


async def _local_reply(text: str, timer: TurnTimer) -> AsyncGenerator[tuple[LlmEvent, int], None]:
    """A reply known without the LLM (a timer command or announcement), streamed as the LLM's would be: the
    ``llm_*`` stages then measure only the matching (no prompt is evaluated)."""
    timer.mark("llm_start")
    yield PromptInfo(prompt_tokens=0, reused_tokens=0, evaluated_tokens=0), timer.clock.now_ns()
    yield TextDelta(text), timer.token()


async def _put_clause(
    clauses: asyncio.Queue[str | _EndOfClauses], raw: str, timer: TurnTimer, ready_ns: int
) -> None:
    """Queue a clause for TTS; ``ready_ns`` is when the token that completed it was generated."""
    text = clean_for_speech(raw)
    if text:
        timer.mark("first_clause", at_ns=ready_ns)
        await clauses.put(text)


def _report(
    config: Config,
    timer: TurnTimer,
    progress: _Progress,
    utterance: Utterance,
    cancelled: bool,
    outcome: str,
    **extra: Any,
) -> TurnReport:
    prompt = progress.prompt
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
        **extra,
    )


def cancelled_report(config: Config, timer: TurnTimer, utterance: Utterance) -> TurnReport:
    """The report of a turn cancelled before it started (it waited for the previous turn)."""
    return _report(config, timer, _Progress(), utterance, True, "cancelled")
