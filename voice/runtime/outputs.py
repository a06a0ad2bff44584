"""What :class:`~voice.runtime.runtime.ModelRuntime` hands back: a transcription, a clause's audio piece by
piece, the LLM's stream events, each with the times a turn's budget needs (ns on the caller's clock)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voice.runtime.model_api import Heard, LlmEvent


@dataclass(frozen=True)
class Transcription:
    """What the STT heard, and when it started: the moment the model and a compute slot were acquired, read in
    the worker thread on the caller's clock (the end of the turn's ``stt_queue`` stage)."""

    heard: Heard
    """The words and how sure the STT was of them (:class:`~voice.runtime.model_api.Heard`)."""
    started_ns: int

    @property
    def text(self) -> str:
        return self.heard.text


@dataclass(frozen=True)
class SynthesisPiece:
    """A piece of a clause's audio (int16 at ``tts.sample_rate``), with when the TTS and a compute slot were
    first acquired for the clause and when this piece came out (ns on the caller's clock)."""

    audio: np.ndarray
    started_ns: int
    ready_ns: int


@dataclass(frozen=True)
class LlmStarted:
    """In the LLM stream: the model and a compute slot were acquired; prompt evaluation starts."""


RuntimeLlmEvent = LlmStarted | LlmEvent
"""What :meth:`ModelRuntime.generate` streams."""


@dataclass(frozen=True)
class StreamEnd:
    """The end of an LLM or TTS stream from a worker thread (carries the exception, if the generation failed)."""

    error: BaseException | None = None
