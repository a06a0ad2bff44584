"""The Wyoming server: an asyncio TCP listener around :class:`~voice.wyoming.protocol.WyomingConnection`.

Per connection a reader (bytes → :class:`~voice.wyoming.framing.FrameDecoder` → the pure connection →
actions) and a worker that performs the actions one after the other: it sends events, and runs the models
through the shared :class:`~voice.runtime.runtime.ModelRuntime` (their locks, the admission queue and the compute gate,
blocking work in the runtime's worker threads) — so Wyoming requests and websocket sessions share the
models fairly. The action queue is bounded: a client that sends faster than the models work is slowed
down by TCP backpressure.

``describe`` is answered at once, also while the models load (Home Assistant waits 1 s for ``info``);
model requests get an ``error`` (``loading``) until they are ready.

Cancellation: a client that closes its connection (or sends nothing for ``[wyoming] idle_timeout_s`` while
none of its requests is pending, or does not read what it is sent for as long) has its work in progress
cancelled; the runtime waits for the worker threads to let go of the models. :meth:`WyomingServer.shutdown`
does that for every connection.
No audio is written anywhere: it lives in memory for the length of one request.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from wyoming.event import Event, async_write_event

from voice.audio import trim_lead_silence
from voice.clock import Clock, MonotonicClock
from voice.config.config import Config
from voice.conversation.history import ContextTooSmallError, fit_prompt_on
from voice.runtime.model_api import ChatMessage
from voice.runtime.runtime import BusyError, ModelRuntime
from voice.skills import timers
from voice.turn import ask_again
from voice.turn.budget import TurnTimer
from voice.turn.checked_stream import whole_reply
from voice.turn.chunker import Chunker
from voice.wyoming.access import check_bind, client_allowed, networks
from voice.wyoming.conversations import Conversations
from voice.wyoming.framing import FrameDecoder
from voice.wyoming.heard_recently import HeardRecently
from voice.wyoming.info import info_event
from voice.wyoming.pcm import audio_chunk, audio_start, audio_stop
from voice.wyoming.protocol import (
    BUSY,
    CONTEXT,
    FORBIDDEN,
    INTERNAL,
    LOADING,
    TIMEOUT,
    Action,
    Answer,
    Close,
    Send,
    Speak,
    Transcribe,
    WyomingConnection,
    error_event,
    handled_event,
    transcript_event,
)

log = logging.getLogger("voice.wyoming")

_Sender = Callable[[Event], Awaitable[None]]

#: Actions queued per connection before the reader stops reading (backpressure).
ACTIONS_QUEUED = 64
READ_BYTES = 65536


async def _close_gently(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Close after our last event has reached the client: end our side, then discard what the client still
    sends (up to a second): closing with unread bytes would reset the connection and could lose that event."""
    with contextlib.suppress(Exception):
        writer.write_eof()
        async with asyncio.timeout(1.0):
            while await reader.read(READ_BYTES):
                pass


class _Failed(Exception):
    """A request that failed in a way the client is told about (an ``error`` event with this code)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class WyomingServer:
    """Owns the listener, the connections and the conversations; ``runtime`` may arrive later."""

    def __init__(self, config: Config, runtime: ModelRuntime | None, clock: Clock | None = None) -> None:
        self.config = config
        self.runtime = runtime
        self.clock = clock or MonotonicClock()
        self.conversations = Conversations(config.wyoming.max_conversations)
        self.heard_recently = HeardRecently(self.clock)
        """The confidence of the transcripts sent lately, for the agent that gets their words next."""
        self._info = info_event(config)
        self._allowed = networks(config.wyoming.allowed_clients)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ids = itertools.count(1)
        self._busy: dict[str, bool] = {}  # connection id → a model request of it is running
        self.port = config.wyoming.port
        self.refused = 0
        """Connections refused because the client's address is not in the allowlist."""

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        w = self.config.wyoming
        check_bind(w)
        self._server = await asyncio.start_server(self._connected, w.host or None, w.port, limit=READ_BYTES)
        self.port = int(self._server.sockets[0].getsockname()[1])

    @property
    def connections(self) -> int:
        """Connections open now (refused ones included until they are closed)."""
        return len(self._tasks)

    @property
    def uri(self) -> str:
        host = self.config.wyoming.host
        return f"tcp://{f'[{host}]' if ':' in host else host}:{self.port}"

    async def shutdown(self) -> None:
        """Stop listening, cancel every connection's work (the models are free on return), close the runtime."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks))
        if self._server is not None:
            await self._server.wait_closed()
        if self.runtime is not None:
            await asyncio.to_thread(self.runtime.close)

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("wyoming connection failed")
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    # ------------------------------------------------------------------ one connection
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer: Any = writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        cid = f"w{next(self._ids)}"
        if not client_allowed(address, self._allowed):
            self.refused += 1
            log.warning("[%s] refused a Wyoming client at %s: not in [wyoming] allowed_clients", cid, address)
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await async_write_event(
                        error_event(
                            FORBIDDEN,
                            f"{address} is not allowed to use this server ([wyoming] allowed_clients)",
                        ),
                        writer,
                    )
            await _close_gently(reader, writer)
            return
        w = self.config.wyoming
        if len(self._tasks) > w.max_connections:
            log.warning(
                "[%s] refused a Wyoming client at %s: %d connections already", cid, address, w.max_connections
            )
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    text = f"{w.max_connections} connections are open ([wyoming] max_connections); try again shortly"
                    await async_write_event(error_event(BUSY, text), writer)
            await _close_gently(reader, writer)
            return
        log.debug("[%s] Wyoming client %s connected", cid, address)
        conn = WyomingConnection(self.config, self._info)
        decoder = FrameDecoder(w.max_event_bytes)
        actions: asyncio.Queue[Action | None] = asyncio.Queue(ACTIONS_QUEUED)
        worker = asyncio.create_task(self._work(cid, actions, writer), name=f"{cid}-worker")
        try:
            while not worker.done():
                try:
                    async with asyncio.timeout(w.idle_timeout_s):
                        data = await reader.read(READ_BYTES)
                except TimeoutError:
                    if actions.qsize() or self._busy.get(cid):
                        continue  # the client waits for an answer still in the works: not idle
                    log.info("[%s] idle for %.0f s; closing", cid, w.idle_timeout_s)
                    await self._put(
                        actions,
                        Send(error_event(TIMEOUT, f"no event for {w.idle_timeout_s:g} s; closing")),
                        worker,
                    )
                    break
                if not data:
                    worker.cancel()  # the client left: its work in progress is of no use to anyone
                    break
                closing = False
                for item in decoder.receive(data):
                    for action in conn.receive(item):
                        if isinstance(action, Close):
                            log.warning("[%s] closing: %s", cid, action.reason)
                            closing = True
                        elif isinstance(action, Send) and action.event.type == "error":
                            log.warning(
                                "[%s] %s: %s",
                                cid,
                                action.event.data.get("code"),
                                action.event.data.get("text"),
                            )
                        await self._put(actions, action, worker)
                if closing:
                    await self._put(actions, None, worker)
                    await asyncio.wait([worker])
                    await _close_gently(reader, writer)
                    return
            await self._put(actions, None, worker)
            await asyncio.wait([worker])
        finally:
            worker.cancel()
            with contextlib.suppress(BaseException):
                await worker

    @staticmethod
    async def _put(
        actions: asyncio.Queue[Action | None], action: Action | None, worker: asyncio.Task[None]
    ) -> None:
        """Queue an action, unless the worker has ended (it can no longer write)."""
        if worker.done():
            return
        put = asyncio.ensure_future(actions.put(action))
        await asyncio.wait([put, worker], return_when=asyncio.FIRST_COMPLETED)
        put.cancel()

    async def _work(
        self, cid: str, actions: asyncio.Queue[Action | None], writer: asyncio.StreamWriter
    ) -> None:
        """Perform the actions in order until ``None``; a failed request sends an ``error`` and the next goes on.
        Ends when the client stops reading for ``idle_timeout_s`` or the connection breaks."""
        requests = itertools.count(1)

        async def send(event: Event) -> None:
            async with asyncio.timeout(self.config.wyoming.idle_timeout_s):
                await async_write_event(event, writer)

        try:
            while (action := await actions.get()) is not None:
                if isinstance(action, Send):
                    await send(action.event)
                    continue
                if isinstance(action, Close):
                    continue
                self._busy[cid] = True
                try:
                    await self._run(cid, next(requests), action, send)
                except _Failed as e:
                    log.warning("[%s] %s: %s", cid, e.code, e)
                    await send(error_event(e.code, str(e)))
                finally:
                    self._busy[cid] = False
        except (ConnectionError, TimeoutError) as e:
            log.info("[%s] connection lost: %s", cid, type(e).__name__ if not str(e) else e)
            writer.close()  # the reader sees the end of the stream and stops too
        finally:
            self._busy.pop(cid, None)

    async def _run(self, cid: str, n: int, action: Action, send: _Sender) -> None:
        runtime = self.runtime
        if runtime is None:
            raise _Failed(LOADING, "the models are still loading; try again in a few seconds")
        timer = TurnTimer(self.clock, cid, n)
        try:
            if isinstance(action, Transcribe):
                text = await self._transcribe(runtime, action.audio, timer)
                log.info(
                    "[%s] transcribed %.1f s of audio: %d characters",
                    cid,
                    len(action.audio) / 16000,
                    len(text),
                )
                await send(transcript_event(text, action.language))
            elif isinstance(action, Speak):
                await self._speak(runtime, action, timer, send)
            elif isinstance(action, Answer):
                reply = await self._answer(runtime, action, timer)
                await send(handled_event(reply, action.conversation_id))
        except BusyError as e:
            raise _Failed(BUSY, str(e)) from None
        except ContextTooSmallError as e:
            raise _Failed(CONTEXT, str(e)) from None
        except (_Failed, ConnectionError, TimeoutError, asyncio.CancelledError):
            raise
        except Exception as e:  # a model failed: tell the client, keep serving
            log.exception("[%s] request failed", cid)
            raise _Failed(INTERNAL, f"{type(e).__name__}: {e}") from None

    async def _transcribe(self, runtime: ModelRuntime, audio: np.ndarray, timer: TurnTimer) -> str:
        if not len(audio):
            return ""
        with runtime.admit():
            transcription = await runtime.transcribe(audio, timer.session_id, timer.clock)
        timer.mark("stt_start", at_ns=transcription.started_ns)
        timer.mark("stt_done")
        self.heard_recently.remember(transcription.heard)
        return transcription.text.strip()

    async def _speak(self, runtime: ModelRuntime, action: Speak, timer: TurnTimer, send: _Sender) -> None:
        rate_hz = runtime.tts.sample_rate
        if action.start:
            await send(audio_start(rate_hz))
        if action.text:
            first = action.first
            chunker = Chunker(rate_hz * self.config.tts.chunk_ms // 1000)  # one chunk length across the pieces
            async for piece in runtime.synthesize_stream(action.text, timer.clock):
                timer.mark("tts_start", at_ns=piece.started_ns)  # the first mark of each name stays
                timer.mark("tts_first_audio", at_ns=piece.ready_ns)
                pcm = piece.audio
                if first and self.config.tts.trim_lead_ms >= 0:
                    pcm = trim_lead_silence(pcm, rate_hz, self.config.tts.trim_lead_ms)
                first = False
                for data in chunker.feed(pcm):
                    await send(audio_chunk(data, rate_hz))
            for data in chunker.flush():
                await send(audio_chunk(data, rate_hz))
        if action.stop:
            await send(audio_stop())

    async def _answer(self, runtime: ModelRuntime, action: Answer, timer: TurnTimer) -> str:
        """One LLM turn of the conversation, through the shared prompt cache and the checks the websocket turn
        uses (a timer command gets :data:`~voice.skills.timers.CANNOT_RING`: nothing here could ring it): text
        with nothing to answer, or words our STT sent lately and was unsure of
        (:mod:`voice.wyoming.heard_recently`), gets ``[stt] ask_again_reply`` and stays out of the history
        (:mod:`voice.turn.ask_again`), and the reply goes through :mod:`~voice.conversation.reply_check` (an echo,
        a claim the system prompt denies, ``[llm] not_sure``). The reply joins the history as checked."""
        conv = self.conversations.get(action.conversation_id)
        config = self.config
        heard = self.heard_recently.take(action.text)
        async with conv.lock:
            sure, word = (heard.avg_logprob, heard.min_word_prob) if heard else (None, None)
            if timers.parse(action.text) is not None:  # no timer could ring: an agent only answers
                return timers.CANNOT_RING
            if ask_again.needed(config, action.text, sure, conv.history.messages, word):
                log.info(
                    "[%s] asked again, %d characters (%s)",
                    timer.session_id,
                    len(action.text),
                    "no STT confidence" if heard is None else f"our STT's mean log-prob {sure}, least word {word}",
                )
                return ask_again.reply(config, action.text)
            with runtime.admit():
                conv.history.add("user", action.text)
                system = ChatMessage("system", config.llm.system_prompt)
                try:
                    messages, _dropped = await fit_prompt_on(
                        runtime, system, conv.history, reply_tokens=config.llm.max_reply_tokens
                    )
                except ContextTooSmallError:
                    conv.history.clear()
                    raise
                stream = runtime.generate(
                    messages, timer.session_id, timer.clock, max_tokens=config.llm.max_reply_tokens
                )
                # Text not from our STT may still be Home Assistant's STT's: a statement said back is asked again.
                reply, checked = await whole_reply(
                    stream, messages, config, timer, typed=heard is None, surely_typed=False
                )
            conv.history.add("assistant", reply)
        prompt = checked.prompt
        metrics = timer.llm_metrics()
        log.info(
            "[%s] handled (conversation %s): %d tokens, ttft %s ms, prompt reused %d evaluated %d",
            timer.session_id,
            action.conversation_id or "-",
            metrics.n_tokens if metrics else 0,
            f"{metrics.ttft_ms:.0f}" if metrics else "-",
            prompt.reused_tokens if prompt else 0,
            prompt.evaluated_tokens if prompt else 0,
        )
        return reply
