import asyncio
import threading
import time

import pytest

from voice.runtime.compute import ComputeGate, Priority, run_blocking


def test_gate_serializes_and_prefers_priority() -> None:
    gate = ComputeGate()
    order: list[str] = []
    active = []
    release = threading.Event()

    def holder() -> None:
        with gate.slot(Priority.LLM):
            order.append("first")
            release.wait(2)

    def worker(name: str, prio: Priority) -> None:
        with gate.slot(prio):
            active.append(name)
            assert len(active) == 1  # never two at once
            order.append(name)
            time.sleep(0.005)
            active.remove(name)

    h = threading.Thread(target=holder)
    h.start()
    time.sleep(0.05)
    threads = [
        threading.Thread(target=worker, args=(n, p))
        for n, p in [("llm", Priority.LLM), ("stt", Priority.STT), ("tts", Priority.TTS)]
    ]
    for t in threads:
        t.start()
        time.sleep(0.02)
    release.set()
    for t in [h, *threads]:
        t.join(2)
    assert order == ["first", "tts", "stt", "llm"]


def test_disabled_gate_lets_steps_overlap() -> None:
    gate = ComputeGate(enabled=False)
    inside = threading.Barrier(2, timeout=2)

    def step() -> None:
        with gate.slot(Priority.LLM):
            inside.wait()  # would time out if the gate serialized

    ts = [threading.Thread(target=step) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(3)
    assert not inside.broken


async def test_run_blocking_cancel_waits_for_the_thread() -> None:
    finished = threading.Event()
    steps = []

    def job(cancel: threading.Event) -> int:
        while not cancel.is_set():
            steps.append(1)
            time.sleep(0.01)
        time.sleep(0.05)  # the step in progress finishes
        finished.set()
        return len(steps)

    task = asyncio.create_task(run_blocking(None, job))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished.is_set()  # cancellation only propagated after the thread returned


def test_numpy_blas_runs_on_one_thread_once_the_backends_are_imported() -> None:
    # OpenBLAS's spinning worker thread halved llama.cpp's speed after every log-mel (voice/backends/__init__.py).
    from threadpoolctl import threadpool_info

    import voice.backends  # noqa: F401

    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert blas and all(lib["num_threads"] == 1 for lib in blas)
