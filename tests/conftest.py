"""Shared fixtures: fake runtime (data-driven fakes) and a fake clock."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from voice.clock import FakeClock
from voice.config.config import Config, parse_config
from voice.runtime.compute import ComputeGate
from voice.runtime.fakes import Delay, FakeLlm, FakeStt, FakeTts, FakeVad
from voice.runtime.runtime import ModelRuntime

SPEECH_DIR = Path(
    os.environ.get("VOICE_SPEECH_DIR", Path(__file__).resolve().parents[2] / "shared" / "speech")
)


def make_config(**sections: dict[str, object]) -> Config:
    data: dict[str, object] = {"server": {"turn_log": ""}}
    for name, values in sections.items():
        merged = dict(data.get(name, {}))  # type: ignore[call-overload]
        merged.update(values)
        data[name] = merged
    return parse_config(data)  # type: ignore[arg-type]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


RuntimeFactory = Callable[..., ModelRuntime]


@pytest.fixture
def fake_runtime() -> RuntimeFactory:
    """Build ModelRuntime from fakes; pass ``clock=`` for deterministic time or ``scale=`` for real sleeps."""
    made: list[ModelRuntime] = []

    def build(
        *,
        clock: FakeClock | None = None,
        scale: float = 1.0,
        stt: FakeStt | None = None,
        llm: FakeLlm | None = None,
        tts: FakeTts | None = None,
        max_queue: int = 4,
        turn_score: Callable[[np.ndarray], float] | None = None,
        words_end: Callable[[str], float | None] | None = None,
    ) -> ModelRuntime:
        delay = Delay(clock, scale)
        runtime = ModelRuntime(
            vad=FakeVad(),
            stt=stt or FakeStt(texts=("what is the capital of france",), delay=delay),
            llm=llm or FakeLlm(replies=("Sure, the capital of France is Paris. It is lovely.",), delay=delay),
            tts=tts or FakeTts(delay=delay),
            max_queue=max_queue,
            gate=ComputeGate(),
            turn_score=turn_score,
            words_end=words_end,
            clock=clock,
        )
        made.append(runtime)
        return runtime

    yield build  # type: ignore[misc]
    for e in made:
        e.close()


def tone(seconds: float, rate: int = 16000, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * 300 * t)).astype(np.float32)


def silence(seconds: float, rate: int = 16000) -> np.ndarray:
    return np.zeros(int(seconds * rate), np.float32)


def tones_are_speech(audio: np.ndarray) -> np.ndarray:
    """A stand-in speech detector for clips of synthetic tones (Silero hears no speech in a pure tone):
    probability 1 for every 512-sample frame with an RMS above 0.01, else 0."""
    n = -(-len(audio) // 512)
    padded = np.zeros(n * 512, np.float32)
    padded[: len(audio)] = audio
    rms = np.sqrt(np.mean(padded.reshape(n, 512) ** 2, axis=1))
    return (rms > 0.01).astype(np.float32)
