"""Fakes that carry a tag from the client's audio to the reply, so a turn can be traced end to end.

The client embeds a short ASCII tag in the first samples of its "speech" (a 300 Hz tone loud enough
for :class:`~voice.runtime.fakes.FakeVad`); :class:`TaggedStt` reads it back as the transcript and
:func:`echo_llm` puts it in the reply. A reply reaching the wrong session, twice, or not at all is
then visible to the client. Tags starting with ``long`` get a long reply (for barge-in and
disconnect tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from voice.runtime.compute import ComputeGate
from voice.runtime.fakes import Delay, FakeLlm, FakeStt, FakeTts, FakeVad
from voice.runtime.model_api import Llm
from voice.runtime.runtime import ModelRuntime

TAG_START = 12345  # int16 sample values that never occur in the 0.3-amplitude tone (max 9830)
TAG_END = 12344
TAG_BASE = 10000
MAX_TAG_CHARS = 64
PROMPTS_KEPT = 64
RATE_HZ = 16_000


def tagged_speech(tag: str, seconds: float = 0.5, rate_hz: int = RATE_HZ) -> np.ndarray:
    """int16 "speech": a 300 Hz tone whose first samples spell ``tag`` (ASCII letters and digits)."""
    if not tag.isascii() or not tag.isalnum() or len(tag) > MAX_TAG_CHARS:
        raise ValueError(f"tags are 1..{MAX_TAG_CHARS} ASCII letters and digits, got {tag!r}")
    n = int(seconds * rate_hz)
    t = np.arange(n) / rate_hz
    audio = (0.3 * 32767 * np.sin(2 * np.pi * 300 * t)).astype(np.int16)
    header = [TAG_START, *(TAG_BASE + ord(c) for c in tag), TAG_END]
    audio[: len(header)] = header
    return audio


#: The tag is looked for in the first seconds of an utterance (after the pre-roll): cheap on long audio.
TAG_SEARCH_S = 2.0


def read_tag(audio: np.ndarray) -> str | None:
    """The tag in float32 audio (the server's ``int16 / 32768``), or None."""
    head = np.asarray(audio[: int(TAG_SEARCH_S * RATE_HZ)], dtype=np.float64)
    values = np.rint(head * 32768).astype(np.int64)
    starts = np.flatnonzero(values == TAG_START)
    if not len(starts):
        return None
    chars: list[str] = []
    for v in values[starts[0] + 1 : starts[0] + 2 + MAX_TAG_CHARS]:
        if v == TAG_END:
            return "".join(chars)
        if not TAG_BASE < v < TAG_BASE + 128:
            return None
        chars.append(chr(int(v) - TAG_BASE))
    return None


def reply_for(tag: str) -> str:
    """The reply :func:`echo_llm` gives to a user message ending in ``tag``."""
    if tag.startswith("long"):  # 88 words: fits the default max_reply_tokens (96)
        body = " ".join(f"Part {i} of the long answer for {tag} is here." for i in range(1, 9))
        return f"Okay, here is the long answer for {tag}. {body}"
    return f"Okay, this is the reply to {tag}."


@dataclass
class TaggedStt(FakeStt):
    """Transcribes the tag in the audio (falls back to ``texts`` when there is none)."""

    def transcribe(self, audio: np.ndarray) -> str:
        tag = read_tag(audio)
        if tag is None:
            return super().transcribe(audio)
        self.calls += 1
        self.delay.wait_ms(self.latency_ms)
        return tag


def echo_reply(user: str) -> str:
    """:func:`reply_for` the last word of the user's message (the tag)."""
    words = user.split()
    return reply_for(words[-1] if words else "nothing")


def echo_llm(**kwargs: Any) -> FakeLlm:
    """A :class:`~voice.runtime.fakes.FakeLlm` keyed by input: it replies :func:`echo_reply` to the last user message,
    with the same simulated KV prefix cache and timing; it keeps the last ``PROMPTS_KEPT`` prompts."""
    return FakeLlm(reply_to=echo_reply, prompts_kept=PROMPTS_KEPT, **kwargs)


def tagged_runtime(
    scale: float = 1.0,
    *,
    max_queue: int = 4,
    context: int = 2048,
    stt_ms: float = 100.0,
    itl_ms: float = 10.0,
    tts_ms: float = 30.0,
    audio_ms_per_char: float = 60.0,
    tts_rate_hz: int = RATE_HZ,
    tts_rtf: float = 0.05,
    llm: Llm | None = None,
) -> ModelRuntime:
    """ModelRuntime of tagged fakes that really sleep (``scale`` × the nominal times): for sockets and soaks.

    ``tts_rtf``: synthesis of a clause takes this × its audio's duration (× ``scale``); ``1 / scale`` makes
    the reply leave the server at the pace it plays, clause by clause (the proxy buffering test).
    ``llm`` replaces the :func:`echo_llm` (an LLM on a server, with fake STT and TTS around it)."""
    delay = Delay(None, scale)
    return ModelRuntime(
        vad=FakeVad(),
        stt=TaggedStt(texts=("hello there",), latency_ms=stt_ms, delay=delay),
        llm=llm or echo_llm(itl_ms=itl_ms, context=context, delay=delay),
        tts=FakeTts(
            sample_rate=tts_rate_hz,
            latency_ms=tts_ms,
            audio_ms_per_char=audio_ms_per_char,
            rtf=tts_rtf,
            delay=delay,
        ),
        max_queue=max_queue,
        gate=ComputeGate(),
    )
