"""Fair scheduling across sessions: round-robin model locks, TTS before other work, and a quick ``busy`` with a
retry hint under overload. Fakes and a fake clock only."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_turn import ListSink
from voice.clock import FakeClock
from voice.conversation.history import History
from voice.runtime.fairlock import FairLock
from voice.runtime.fakes import Delay, FakeLlm
from voice.runtime.model_api import ChatMessage
from voice.runtime.runtime import DEFAULT_RETRY_AFTER_MS, BusyError, ModelRuntime
from voice.turn.budget import TurnTimer
from voice.turn.pipeline import Utterance, run_turn
from voice.wire.events import Error, encode_server
from voice.wire.protocol import BUSY, ProtocolError


async def test_fair_lock_serves_keys_round_robin() -> None:
    lock = FairLock()
    order: list[str] = []
    release_first = asyncio.Event()

    async def use(key: str, tag: str, hold: asyncio.Event | None = None) -> None:
        async with lock.hold(key):
            order.append(tag)
            if hold is not None:
                await hold.wait()

    first = asyncio.create_task(use("A", "A1", release_first))
    await asyncio.sleep(0)
    # While A1 holds the lock, A queues three more, then B and C one each.
    waiters = [asyncio.create_task(use(k, t)) for k, t in (("A", "A2"), ("A", "A3"), ("A", "A4"), ("B", "B1"))]
    await asyncio.sleep(0)
    waiters.append(asyncio.create_task(use("C", "C1")))
    await asyncio.sleep(0)
    assert lock.waiting() == {"A": 3, "B": 1, "C": 1}
    release_first.set()
    await asyncio.gather(first, *waiters)
    # First come first served would give A1 A2 A3 A4 B1 C1.
    assert order == ["A1", "B1", "C1", "A2", "A3", "A4"]
    assert not lock.locked()


async def test_fair_lock_cancelled_waiter_is_skipped() -> None:
    lock = FairLock()
    await lock.acquire("A")
    got: list[str] = []

    async def use(key: str) -> None:
        async with lock.hold(key):
            got.append(key)

    b, c = asyncio.create_task(use("B")), asyncio.create_task(use("C"))
    await asyncio.sleep(0)
    b.cancel()
    await asyncio.sleep(0)
    lock.release()
    await c
    assert got == ["C"] and b.cancelled() and not lock.locked()
    with pytest.raises(RuntimeError, match="not locked"):
        lock.release()


async def test_llm_turns_are_served_round_robin_by_session(
    fake_runtime: RuntimeFactory, clock: FakeClock
) -> None:
    llm = FakeLlm(replies=("One two three.",), delay=Delay(clock))
    runtime = fake_runtime(clock=clock, llm=llm)

    async def generate(session: str, text: str) -> None:
        stream = runtime.generate([ChatMessage("user", text)], session, clock, max_tokens=8)
        async for _ in stream:
            pass

    # Session A has three turns queued (a speculative reply, the committed one, ...), then B has one.
    tasks = [asyncio.create_task(generate(s, t)) for s, t in (("A", "a1"), ("A", "a2"), ("A", "a3"), ("B", "b1"))]
    await asyncio.gather(*tasks)
    served = [p[-1].content for p in llm.prompts]
    assert served == ["a1", "b1", "a2", "a3"]


def test_busy_carries_a_retry_hint_from_how_long_turns_hold_their_place(
    fake_runtime: RuntimeFactory, clock: FakeClock
) -> None:
    runtime: ModelRuntime = fake_runtime(clock=clock, max_queue=2)
    a, b = runtime.admit(), runtime.admit()
    with pytest.raises(BusyError) as first:
        runtime.admit()
    assert first.value.retry_after_ms == DEFAULT_RETRY_AFTER_MS  # nothing measured yet
    clock.advance_ms(800)
    a.release()
    c = runtime.admit()
    with pytest.raises(BusyError) as second:
        runtime.admit()
    # Two places, each held ~800 ms: one frees about every 400 ms (Little's law).
    assert second.value.retry_after_ms == 400
    assert "400 ms" in str(second.value)
    b.release()
    c.release()
    assert runtime.queue_depth == 0


def test_a_speculative_place_does_not_count_until_it_is_committed(
    fake_runtime: RuntimeFactory, clock: FakeClock
) -> None:
    """max_queue bounds the people waiting for an answer: a reply started at a pause (its user may still be
    speaking) is never refused and does not fill the queue; once committed it counts like any turn."""
    runtime: ModelRuntime = fake_runtime(clock=clock, max_queue=1)
    held = {"a": True, "b": True}
    spec_a = runtime.admit(speculative=lambda: held["a"])
    spec_b = runtime.admit(speculative=lambda: held["b"])  # a second one is not refused either
    assert runtime.queue_depth == 0
    committed = runtime.admit()  # a finished question of another session gets the place
    assert runtime.queue_depth == 1
    committed.release()
    held["a"] = False  # spec_a's turn ended at its pause: it is a committed turn now
    assert runtime.queue_depth == 1
    with pytest.raises(BusyError):
        runtime.admit()
    spec_a.release()
    spec_b.release()  # discarded: gives its place back like any other
    assert runtime.queue_depth == 0
    runtime.admit().release()


def test_busy_error_event_has_retry_after_ms() -> None:
    ev = json.loads(encode_server(Error.of(ProtocolError(BUSY, "full", retry_after_ms=250))))
    assert ev == {"type": "error", "code": "busy", "message": "full", "fatal": False, "retry_after_ms": 250}
    assert "retry_after_ms" not in json.loads(encode_server(Error.of(ProtocolError("internal", "x"))))


async def test_busy_turn_reports_the_hint_to_the_client(fake_runtime: RuntimeFactory, clock: FakeClock) -> None:
    runtime = fake_runtime(clock=clock, max_queue=1)
    held = runtime.admit()
    sink = ListSink()
    timer = TurnTimer(clock, "s", 1)
    report = await run_turn(
        runtime, make_config(), History(), Utterance(np.zeros(1600, np.float32), 300.0, False), timer, sink
    )
    held.release()
    assert report.outcome == "busy"
    errors = [e for e in sink.events if e["type"] == "error"]
    assert errors[0]["code"] == "busy" and errors[0]["retry_after_ms"] == DEFAULT_RETRY_AFTER_MS


async def test_each_model_runs_on_one_thread_of_its_own(fake_runtime: RuntimeFactory) -> None:
    """Native libraries keep per-thread state (an OpenMP team per calling thread, a malloc arena): every call of
    one model, from any session, runs on the same thread, and no two models share one."""
    runtime = fake_runtime(scale=0.01)
    threads: dict[str, set[int]] = {"stt": set(), "llm": set(), "tts": set()}

    def on_thread(name: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            threads[name].add(threading.get_ident())
            return fn(*args, **kwargs)

        return call

    runtime.stt.hear = on_thread("stt", runtime.stt.hear)  # type: ignore[method-assign]
    runtime.llm.generate = on_thread("llm", runtime.llm.generate)  # type: ignore[method-assign]
    runtime.tts.synthesize = on_thread("tts", runtime.tts.synthesize)  # type: ignore[method-assign]
    clock = runtime.clock

    async def session(name: str) -> None:
        for k in range(3):
            utterance = Utterance(np.zeros(1600, np.float32), 300.0, False)
            report = await run_turn(
                runtime, make_config(), History(), utterance, TurnTimer(clock, name, k + 1), ListSink()
            )
            assert report.outcome == "ok"

    await asyncio.gather(*(session(f"s{i}") for i in range(4)))
    assert {name: len(ids) for name, ids in threads.items()} == {"stt": 1, "llm": 1, "tts": 1}
    assert len(set.union(*threads.values())) == 3


def test_warming_runs_each_model_once_on_its_own_thread(
    fake_runtime: RuntimeFactory, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = fake_runtime(scale=0.01)
    names: dict[str, list[str]] = {"stt": [], "llm": [], "tts": []}

    def on_thread(name: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            names[name].append(threading.current_thread().name)
            if name == "stt":
                raise ConnectionError("the STT server is not up yet")
            return fn(*args, **kwargs)

        return call

    runtime.stt.hear = on_thread("stt", runtime.stt.hear)  # type: ignore[method-assign]
    runtime.llm.generate = on_thread("llm", runtime.llm.generate)  # type: ignore[method-assign]
    runtime.tts.synthesize = on_thread("tts", runtime.tts.synthesize)  # type: ignore[method-assign]
    runtime.warm_threads(ChatMessage("system", "You are a voice assistant."))
    assert {k: [n.rsplit("_", 1)[0] for n in v] for k, v in names.items()} == {
        "stt": ["stt"],
        "llm": ["llm"],
        "tts": ["tts"],
    }
    # A model that cannot be reached yet is warmed on its first turn instead; the others still are.
    assert "could not warm the stt on its thread: ConnectionError" in caplog.text
