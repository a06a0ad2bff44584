"""The shared models and how turns get to use them.

One :class:`Engines` per server holds one instance of each model. Each model serves one inference at a
time (an asyncio lock per model, so the wait is measurable as a queue stage), and every compute step also
goes through the :class:`~voice.compute.ComputeGate` so two models never fight over the cores.
Blocking work runs wholly in the engine's worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from voice.budget import TurnTimer
from voice.compute import ComputeGate, Priority, run_blocking
from voice.stages import ChatMessage, Llm, LlmEvent, Stt, TextDelta, Tts, Vad


class BusyError(RuntimeError):
    """Too many turns are already waiting for the shared models."""


@dataclass(frozen=True)
class _Done:
    """End of the LLM stream (carries the exception, if the generation failed)."""

    error: BaseException | None = None


class Engines:
    """The loaded models, their locks, the compute gate and the worker threads."""

    def __init__(
        self,
        *,
        vad: Vad,
        stt: Stt,
        llm: Llm,
        tts: Tts,
        max_queue: int = 4,
        gate: ComputeGate | None = None,
        workers: int = 8,
    ) -> None:
        self.vad = vad
        self.stt = stt
        self.llm = llm
        self.tts = tts
        self.gate = gate or ComputeGate()
        self.max_queue = max_queue
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="model")
        self._stt_lock = asyncio.Lock()
        self._llm_lock = asyncio.Lock()
        self._tts_lock = asyncio.Lock()
        self._waiting = 0

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)

    @contextlib.asynccontextmanager
    async def admission(self) -> AsyncIterator[None]:
        """Counts a turn as waiting/running; raises :class:`BusyError` past ``max_queue`` turns."""
        if self._waiting >= self.max_queue:
            raise BusyError(
                f"{self._waiting} turns are already waiting for the models (max_queue={self.max_queue}); "
                "try again shortly"
            )
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1

    @property
    def queue_depth(self) -> int:
        return self._waiting

    async def transcribe(self, audio: np.ndarray, timer: TurnTimer) -> str:
        """Transcribe an utterance. Cancelling waits for the running transcription to finish."""

        def job(cancel: threading.Event) -> str:
            with self.gate.slot(Priority.STT):
                timer.mark("stt_start")
                return self.stt.transcribe(audio)

        async with self._stt_lock:
            text = await run_blocking(self.executor, job)
        timer.mark("stt_done")
        return text

    async def generate(
        self, messages: Sequence[ChatMessage], timer: TurnTimer, *, max_tokens: int
    ) -> AsyncGenerator[tuple[LlmEvent, int], None]:
        """Stream LLM events, each with the monotonic time (ns) it was produced.

        Closing or cancelling the iterator stops generation after the current token and returns only once
        the worker thread has let go of the model."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[LlmEvent, int] | _Done] = asyncio.Queue()

        def job(cancel: threading.Event) -> None:
            steps: Iterator[LlmEvent] = iter(
                self.llm.generate(messages, max_tokens=max_tokens, cancel=cancel)
            )
            error: BaseException | None = None
            try:
                while not cancel.is_set():
                    with self.gate.slot(Priority.LLM):
                        timer.mark("llm_start")
                        ev = next(steps, None)
                    if ev is None:
                        break
                    t_ns = timer.token() if isinstance(ev, TextDelta) else timer.clock.now_ns()
                    loop.call_soon_threadsafe(queue.put_nowait, (ev, t_ns))
            except Exception as e:  # reported to the consumer, which re-raises it
                error = e
            finally:
                close = getattr(steps, "close", None)
                if close is not None:
                    close()
                loop.call_soon_threadsafe(queue.put_nowait, _Done(error))

        async with self._llm_lock:
            cancel = threading.Event()
            worker = asyncio.ensure_future(run_blocking(self.executor, job, cancel))
            try:
                while True:
                    item = await queue.get()
                    if isinstance(item, _Done):
                        if item.error is not None:
                            raise item.error
                        break
                    yield item
            finally:
                cancel.set()
                # Wait for the thread even if we are being cancelled: the model must be free on exit.
                await asyncio.shield(asyncio.wait([worker]))

    async def synthesize(self, text: str, timer: TurnTimer) -> list[np.ndarray]:
        """Synthesize one clause (int16 at ``tts.sample_rate``); cancelling stops after the current step."""

        def job(cancel: threading.Event) -> list[np.ndarray]:
            pieces: list[np.ndarray] = []
            steps = iter(self.tts.synthesize(text))
            while not cancel.is_set():
                with self.gate.slot(Priority.TTS):
                    timer.mark("tts_start")
                    piece = next(steps, None)
                if piece is None:
                    break
                if len(piece):
                    timer.mark("tts_first_audio")
                    pieces.append(piece)
            return pieces

        async with self._tts_lock:
            return await run_blocking(self.executor, job)
