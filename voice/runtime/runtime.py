"""The shared models and how turns get to use them.

One :class:`ModelRuntime` per server holds one instance of each model. Each model serves one inference at a
time (an asyncio lock per model, so the wait is measurable as a queue stage), and every compute step also
goes through the :class:`~voice.runtime.compute.ComputeGate` so two models never fight over the cores.
Blocking work runs wholly in the runtime's worker threads.

Scheduling across sessions: the STT and LLM locks serve waiting turns round-robin by session
(:class:`~voice.runtime.fairlock.FairLock`), so a session with several turns queued does not make the others wait
for all of them. The compute gate runs a reply's TTS before any STT or LLM step, so a reply that is already
speaking keeps its pace. Under overload, :meth:`ModelRuntime.admit` refuses a new turn at once (``busy``) with a
hint of when a place should free up (``retry_after_ms``), instead of letting every session slow down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from voice.clock import Clock, MonotonicClock
from voice.runtime.activity import ModelActivity
from voice.runtime.compute import ComputeGate, Priority, StepCancelled, run_blocking
from voice.runtime.fairlock import FairLock
from voice.runtime.kvcache import KvStats
from voice.runtime.model_api import ChatMessage, Llm, LlmEvent, Stt, Tts, Vad
from voice.runtime.outputs import (
    LlmStarted,
    RuntimeLlmEvent,
    StreamEnd,
    SynthesisPiece,
    Transcription,
)

log = logging.getLogger(__name__)

T = TypeVar("T")


class BusyError(RuntimeError):
    """Too many turns are already waiting for the shared models."""

    def __init__(self, message: str, retry_after_ms: int) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms
        """When a place in the queue should be free again (an estimate), in milliseconds."""


DEFAULT_RETRY_AFTER_MS = 1000
"""The retry hint before any turn has released its place (nothing measured yet)."""
MIN_RETRY_AFTER_MS = 100
HOLD_EWMA_WEIGHT = 0.2
"""Weight of the newest turn in the moving average of how long a turn holds its place."""


def _prestart(executor: ThreadPoolExecutor, workers: int) -> None:
    """Make the pool start all its threads (each job waits until every one is running)."""
    barrier = threading.Barrier(workers)
    for f in [executor.submit(barrier.wait, 10) for _ in range(workers)]:
        f.result()


class Admission:
    """A turn's place in the model queue; :meth:`release` (idempotent) gives it back.

    ``speculative`` says, whenever asked, whether the turn is still only speculative (started at a pause, its
    output held until the end of the turn is confirmed): such a place does not count toward ``max_queue``."""

    def __init__(self, runtime: ModelRuntime, speculative: Callable[[], bool]) -> None:
        self._runtime: ModelRuntime | None = runtime
        self._start_ns = runtime.clock.now_ns()
        self.speculative = speculative

    def release(self) -> None:
        if self._runtime is not None:
            self._runtime._released(self, (self._runtime.clock.now_ns() - self._start_ns) / 1e6)
            self._runtime = None

    def __enter__(self) -> Admission:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _never() -> bool:
    return False


MODELS = ("stt", "llm", "tts")


def _interrupters(model: object) -> tuple[Callable[[], object], ...]:
    """A model may offer ``interrupt()``: called (from another thread) when its current step should stop
    at once — for a step that is long and otherwise atomic (a Piper sentence, a llama.cpp prompt
    evaluation). Without it, a cancelled step runs to its end."""
    fn = getattr(model, "interrupt", None)
    return (fn,) if callable(fn) else ()


async def _next_item(queue: asyncio.Queue[T | StreamEnd]) -> T | None:
    """The next item a worker thread put on ``queue``; None at its :class:`StreamEnd`, whose error, if the work
    failed, is raised here."""
    item = await queue.get()
    if isinstance(item, StreamEnd):
        if item.error is not None:
            raise item.error
        return None
    return item


class ModelRuntime:
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
        workers: int = 4,
        turn_score: Callable[[np.ndarray], float] | None = None,
        words_end: Callable[[str], float | None] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.vad = vad
        self.turn_score = turn_score
        """The end-of-turn model (probability the turn is complete), run on the VAD thread; None: silence only."""
        self.words_end = words_end
        """``[turn] words_model``: the probability that a transcript's words end the turn (None when it holds no
        words), run on the VAD thread; None: not loaded."""
        self.stt = stt
        self.llm = llm
        self.tts = tts
        self.gate = gate or ComputeGate()
        self.max_queue = max_queue
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="model")
        """Blocking work that is not a model's inference (the end-of-turn model when scored through the gate)."""
        self.model_threads = {m: ThreadPoolExecutor(max_workers=1, thread_name_prefix=m) for m in MODELS}
        """Each model's calls run on a thread of its own (one inference at a time in any case, under its lock).
        The native libraries keep per-thread state: llama.cpp's OpenMP starts a team of threads for each thread
        that calls it (measured: one more OS thread per new calling thread), and malloc keeps an arena per thread.
        On one shared pool those grew with every worker a model happened to run on (the soak saw +2 threads after
        warm-up); on its own thread a model's native threads all exist once it has run once (:meth:`warm_threads`)."""
        # VAD and endpointing of every session run on one thread: a few ms per second of audio, and one
        # thread (one malloc arena) keeps the memory of long sessions flat.
        self.vad_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vad")
        # Start every worker thread now: the thread count of a running server stays constant.
        _prestart(self.executor, workers)
        _prestart(self.vad_executor, 1)
        for thread in self.model_threads.values():
            _prestart(thread, 1)
        self.clock: Clock = clock or MonotonicClock()
        """Times how long turns hold their place in the queue (the ``busy`` retry hint)."""
        self._stt_lock = FairLock()
        self._llm_lock = FairLock()
        self._tts_lock = asyncio.Lock()
        self._admitted: set[Admission] = set()
        self._hold_ms: float | None = None
        self._activity: ModelActivity | None = None

    def close(self) -> None:
        for pool in (self.executor, self.vad_executor, *self.model_threads.values()):
            pool.shutdown(wait=True, cancel_futures=True)

    def admit(self, *, speculative: Callable[[], bool] = _never) -> Admission:
        """Take a place in the model queue for one turn's STT and LLM work.

        Raises :class:`BusyError` when ``max_queue`` committed turns already hold one (running or waiting), so a
        crowd gets a quick "busy" instead of an unbounded wait. A speculative turn (``speculative()`` true: its
        user may still be speaking) is never refused and does not count while it stays speculative; once
        committed it counts like any other. So ``max_queue`` bounds the people actually waiting for an answer,
        and speculation (at most one in flight per session) never makes someone else's finished question
        ``busy``. Use as ``with runtime.admit() as a:``; ``a.release()`` gives the place back early
        (once the LLM is done, while the reply is spoken).
        """
        if not speculative():
            waiting = self.queue_depth
            if waiting >= self.max_queue:
                retry_ms = self.retry_after_ms()
                raise BusyError(
                    f"{waiting} turns are already using or waiting for the models "
                    f"(max_queue={self.max_queue}); try again in about {retry_ms} ms",
                    retry_ms,
                )
        admission = Admission(self, speculative)
        self._admitted.add(admission)
        return admission

    def retry_after_ms(self) -> int:
        """When a place in the full queue should free up: by Little's law, with ``max_queue`` turns each
        holding a place for ``hold`` ms on average, one leaves every ``hold / max_queue`` ms."""
        if self._hold_ms is None:
            return DEFAULT_RETRY_AFTER_MS
        return max(MIN_RETRY_AFTER_MS, round(self._hold_ms / self.max_queue))

    def _released(self, admission: Admission, hold_ms: float) -> None:
        self._admitted.discard(admission)
        prev = self._hold_ms
        self._hold_ms = hold_ms if prev is None else prev + HOLD_EWMA_WEIGHT * (hold_ms - prev)

    def kv_stats(self) -> KvStats | None:
        """The LLM's saved per-conversation KV states, if it keeps any (``/metrics``)."""
        fn = getattr(self.llm, "kv_stats", None)
        stats = fn() if callable(fn) else None
        return stats if isinstance(stats, KvStats) else None

    @property
    def queue_depth(self) -> int:
        """Committed turns holding a place in the model queue (running or waiting); speculative ones not counted."""
        return sum(not a.speculative() for a in self._admitted)

    def warm_threads(self, system: ChatMessage) -> None:
        """Run each model once on its own thread (blocking; call before serving): the native libraries start their
        per-thread state there (an OpenMP team, scratch buffers) now, not during someone's first turn. The LLM
        evaluates ``system`` (the prompt every turn starts with) and one short question."""
        question = (system, ChatMessage("user", "Hi."))
        jobs = {
            "stt": lambda: self.stt.hear(np.zeros(16_000, np.float32)),
            "llm": lambda: list(self.llm.generate(question, max_tokens=1, cancel=threading.Event())),
            "tts": lambda: list(self.tts.synthesize("Hello.")),
        }
        for model, job in jobs.items():
            try:
                self.model_threads[model].submit(job).result()
            except Exception as e:  # a remote model that is not up yet: it starts on its first turn instead
                log.warning("could not warm the %s on its thread: %s: %s", model, type(e).__name__, e)

    def watch(self) -> ModelActivity:
        """The runtime's :class:`~voice.runtime.activity.ModelActivity`, attached on the first call: from then
        on it sees which models the worker threads use (for tools that measure how fast a cancelled turn lets go of
        them, or wait for the models to be idle). Call it before the runtime runs anything."""
        if self._activity is None:
            self._activity = ModelActivity(MODELS)
        return self._activity

    @contextlib.contextmanager
    def _using(self, model: str) -> Iterator[None]:
        """A worker thread uses ``model`` (the attached :class:`~voice.runtime.activity.ModelActivity` is told,
        from this thread)."""
        activity = self._activity
        if activity is not None:
            activity.acquired(model)
        try:
            yield
        finally:
            if activity is not None:
                activity.released(model)

    async def transcribe(self, audio: np.ndarray, session: str, clock: Clock) -> Transcription:
        """Transcribe an utterance (waiting its turn as ``session``; times on ``clock``). Cancelling waits for
        the running transcription to finish."""

        def job(cancel: threading.Event) -> Transcription:
            with self._using("stt"), self.gate.slot(Priority.STT):
                started_ns = clock.now_ns()
                return Transcription(self.stt.hear(audio), started_ns)

        async with self._stt_lock.hold(session):
            return await run_blocking(self.model_threads["stt"], job, self.gate.cancel_event())

    async def with_llm(self, work: Callable[[Llm], T], *, session: str = "") -> T:
        """``work(llm)`` in a worker thread under the LLM's lock (waiting its turn as ``session``), for the quick
        blocking calls beside generation, such as counting a prompt's tokens
        (:func:`~voice.conversation.history.fit_prompt`): they never run on the event loop nor beside another
        turn's generation. Cancelling waits for ``work`` to finish before the lock is let go."""
        async with self._llm_lock.hold(session):
            return await run_blocking(self.model_threads["llm"], lambda _cancel: work(self.llm))

    async def generate(
        self, messages: Sequence[ChatMessage], session: str, clock: Clock, *, max_tokens: int
    ) -> AsyncGenerator[tuple[RuntimeLlmEvent, int], None]:
        """Stream LLM events, each with the time (ns on ``clock``) it was produced in the worker thread: first
        :class:`LlmStarted`, then the model's events. Waits its turn for the LLM as ``session``.

        Closing or cancelling the iterator stops generation after the current token and returns only once
        the worker thread has let go of the model."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[RuntimeLlmEvent, int] | StreamEnd] = asyncio.Queue()

        def job(cancel: threading.Event) -> None:
            with self._using("llm"):
                work(cancel)

        def work(cancel: threading.Event) -> None:
            steps: Iterator[LlmEvent] = iter(
                self.llm.generate(messages, max_tokens=max_tokens, cancel=cancel)
            )
            error: BaseException | None = None
            # A model on a server (uses_local_compute = False) only reads a socket: no compute slot.
            local = getattr(self.llm, "uses_local_compute", True)
            started = False
            try:
                while not cancel.is_set():
                    with self.gate.slot(Priority.LLM, cancel) if local else contextlib.nullcontext():
                        if not started:
                            started = True
                            loop.call_soon_threadsafe(queue.put_nowait, (LlmStarted(), clock.now_ns()))
                        ev = next(steps, None)
                    if ev is None:
                        break
                    loop.call_soon_threadsafe(queue.put_nowait, (ev, clock.now_ns()))
            except StepCancelled:
                pass
            except Exception as e:  # reported to the consumer, which re-raises it
                error = e
            finally:
                close = getattr(steps, "close", None)
                if close is not None:
                    close()
                loop.call_soon_threadsafe(queue.put_nowait, StreamEnd(error))

        async with self._llm_lock.hold(session):
            cancel = self.gate.cancel_event(*_interrupters(self.llm))
            worker = asyncio.ensure_future(run_blocking(self.model_threads["llm"], job, cancel))
            try:
                while (event := await _next_item(queue)) is not None:
                    yield event
            finally:
                cancel.set()
                # Wait for the thread even if we are being cancelled: the model must be free on exit.
                await asyncio.shield(asyncio.wait([worker]))

    async def synthesize_stream(self, text: str, clock: Clock) -> AsyncGenerator[SynthesisPiece, None]:
        """Each piece of one clause's audio as soon as the TTS has made it: a Piper sentence, or with ``[tts]
        stream_first_ms`` a piece of one. Each step holds a compute slot (:data:`Priority.TTS`).

        The TTS is let go when the clause is synthesized, however slowly the pieces are read. Closing or
        cancelling the iterator stops after the current step (a Piper call is interrupted) and returns only once
        the worker thread has let go of the TTS."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[SynthesisPiece | StreamEnd] = asyncio.Queue()

        def job(cancel: threading.Event) -> None:
            error: BaseException | None = None
            started_ns: int | None = None
            try:
                with self._using("tts"):
                    steps = iter(self.tts.synthesize(text))
                    try:
                        while not cancel.is_set():
                            with self.gate.slot(Priority.TTS, cancel):
                                started_ns = clock.now_ns() if started_ns is None else started_ns
                                piece = next(steps, None)
                            if piece is None:
                                break
                            if len(piece):
                                ready = SynthesisPiece(piece, started_ns, clock.now_ns())
                                loop.call_soon_threadsafe(queue.put_nowait, ready)
                    except StepCancelled:
                        pass
                    finally:
                        close = getattr(steps, "close", None)
                        if close is not None:
                            close()
            except Exception as e:  # reported to the consumer, which re-raises it
                error = e
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, StreamEnd(error))

        async def produce() -> None:
            # The TTS is held while it synthesizes, not while the consumer sends: a client that reads slowly
            # must not keep the others' replies waiting for the model.
            async with self._tts_lock:
                await run_blocking(self.model_threads["tts"], job, cancel)

        cancel = self.gate.cancel_event(*_interrupters(self.tts))
        producer = asyncio.ensure_future(produce())
        try:
            while (piece := await _next_item(queue)) is not None:
                yield piece
        finally:
            cancel.set()
            producer.cancel()  # still waiting for the TTS: give up the wait; running: stops after this step
            # Wait for the thread even if we are being cancelled: the model must be free on exit.
            await asyncio.shield(asyncio.wait([producer]))

