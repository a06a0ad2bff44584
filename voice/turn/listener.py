"""A session's ear: the client's audio, paced and resampled to 16 kHz, cut into VAD frames, and turned into
endpoint events (speech started, paused, resumed, ended) by the VAD and the :class:`~voice.turn.endpoint.Endpointer`.

Threads: the VAD, the endpointer and the speech-end analysis run in the runtime's VAD worker thread
(:meth:`Listener.hear`, :meth:`Listener.score`); the session's reader awaits each call, so the endpointer is
never used by two threads at once. Nothing here sends anything: the session acts on the events.
"""

from __future__ import annotations

import asyncio
import dataclasses

import numpy as np
import soxr

from voice.audio import AudioFileError, analyse_speech, pcm16_to_float
from voice.clock import Clock
from voice.config.config import Config
from voice.runtime.compute import Priority
from voice.runtime.model_api import VadStream
from voice.runtime.runtime import ModelRuntime
from voice.turn.endpoint import STT_SAMPLE_RATE_HZ, Endpointer, EndpointEvent, SpeechEnded, SpeechPaused
from voice.turn.speech_end import find_speech_end
from voice.turn.text_evidence import verdict
from voice.turn.words_end import words_p
from voice.wire.protocol import RATE_LIMITED, ProtocolError

#: Audio a client may send ahead of real time (seconds) before the ingress rate limit applies.
INGRESS_BURST_S = 2.0
#: soxr quality of the streaming resampler for clients not at 16 kHz (the browser's 48 kHz, Realtime's 24 kHz).
#: The default "HQ" filter holds back 21 ms of input, so the VAD hears the end of speech 21 ms late; "LQ" holds
#: back 6 ms, with the same normalized WER on ../shared/speech sent at 48 kHz (0.037 both, tiny.en).
RESAMPLE_QUALITY = "LQ"
#: The speech end is looked for in this much of the utterance's end (seconds): it holds the last words and the
#: silence after them, whose quiet frames give the background.
SPEECH_END_TAIL_S = 3.0


class Listener:
    """Audio in, endpoint events out, for one session (see the module docstring)."""

    def __init__(self, runtime: ModelRuntime, config: Config, clock: Clock) -> None:
        self.runtime = runtime
        self.config = config
        self.clock = clock
        self.endpointer = Endpointer(config.vad, turn=config.turn, turn_score=runtime.turn_score)
        self.vad_resets = 0
        """How often the VAD started afresh (after every utterance)."""
        self._vad: VadStream | None = None
        self._resampler: soxr.ResampleStream | None = None
        self._pending = np.zeros(0, np.float32)
        self._rate_hz = 0
        self._audio_in_s = 0.0
        self._start_ns = clock.now_ns()
        self._heard_ns = self._start_ns  # when the newest client frame was accepted
        self._resampled_in = 0  # client samples into the resampler, and 16 kHz samples out of it, since a clear
        self._resampled_out = 0

    def start(self, sample_rate_hz: int) -> None:
        """The client's stream begins, at this rate."""
        self._rate_hz = sample_rate_hz
        self._start_ns = self.clock.now_ns()
        if sample_rate_hz != STT_SAMPLE_RATE_HZ:
            self._resampler = soxr.ResampleStream(
                sample_rate_hz, STT_SAMPLE_RATE_HZ, 1, dtype="float32", quality=RESAMPLE_QUALITY
            )
        self._vad = self.runtime.vad.stream()

    def configure(self, config: Config) -> None:
        """Use ``config`` from now on; an unfinished utterance is dropped."""
        self.config = config
        self.endpointer = Endpointer(config.vad, turn=config.turn, turn_score=self.runtime.turn_score)
        self._pending = self._pending[:0]
        self._reset_vad()

    @property
    def audio_in_s(self) -> float:
        """Seconds of the client's audio accepted so far."""
        return self._audio_in_s

    @property
    def in_speech(self) -> bool:
        """Inside an utterance (heard its start, not yet its end)."""
        return self.endpointer.in_speech

    def accept(self, data: bytes) -> list[np.ndarray] | ProtocolError:
        """A frame of PCM s16le from a started stream (checked): the whole VAD frames it completes, or
        ``rate_limited`` (the frame is dropped) when audio arrives faster than ``[server] max_ingress_realtime``.

        Its arrival time stamps the events of those frames (``heard_ns``): a sample was heard when the frame
        that carried it arrived, less the audio after it (the rest of the frame, the samples still short of a
        VAD frame, the resampler's delay). Audio time, anchored to arrival, so neither the VAD's work nor a
        later frame that completes a VAD frame makes the user's speech end look later than it was."""
        assert self._vad is not None, "start() first"
        seconds = len(data) / 2 / self._rate_hz
        elapsed_s = (self.clock.now_ns() - self._start_ns) / 1e9
        limit = self.config.server.max_ingress_realtime
        if self._audio_in_s + seconds > limit * elapsed_s + INGRESS_BURST_S:
            return ProtocolError(
                RATE_LIMITED,
                f"audio is arriving faster than {limit:g}x real time; pace it (frame dropped)",
            )
        self._audio_in_s += seconds
        self._heard_ns = self.clock.now_ns()
        samples = pcm16_to_float(data)
        if self._resampler is not None:
            self._resampled_in += len(samples)
            samples = self._resampler.resample_chunk(samples)
            self._resampled_out += len(samples)
        self._pending = np.concatenate([self._pending, samples])
        n = self._vad.frame_samples
        count = len(self._pending) // n
        frames = [self._pending[i * n : (i + 1) * n] for i in range(count)]
        self._pending = self._pending[count * n :].copy()
        return frames

    async def hear(self, frames: list[np.ndarray]) -> list[EndpointEvent]:
        """The endpoint events of these frames (VAD and endpointer in the VAD worker thread); the frames are
        the last :meth:`accept` returned."""
        if not frames:
            return []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.runtime.vad_executor, self._detect, frames, self._tail_heard_ns())

    @property
    def score_pending(self) -> bool:
        """A pause waits for the end-of-turn model (:meth:`score`)."""
        return self.endpointer.score_pending

    async def score(self) -> list[EndpointEvent]:
        """The end-of-turn model on the pending pause. With ``[turn] score_in_gate`` it runs in a model thread
        through the compute gate, first in line; else in the VAD thread, beside the other models."""
        loop = asyncio.get_running_loop()
        if self.config.turn.score_in_gate:
            return await loop.run_in_executor(self.runtime.executor, self._score_pause_gated)
        return await loop.run_in_executor(self.runtime.vad_executor, self._score_pause)

    async def hear_words(self, text: str, pause_seq: int) -> list[EndpointEvent]:
        """The words heard at pause ``pause_seq`` (the speculative transcript), read by
        :func:`voice.turn.text_evidence.verdict` and handed to the endpointer in the VAD thread; the end of the
        turn if they settle it (``[turn] text_evidence``)."""
        if not self.config.turn.text_evidence:
            return []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.runtime.vad_executor, self._hear_words, text, pause_seq)

    def _hear_words(self, text: str, pause_seq: int) -> list[EndpointEvent]:
        """:meth:`hear_words` in the VAD thread (reading the words asks the skills, and with ``[turn]
        words_model`` a language model: off the event loop)."""
        said = verdict(text, self.config.llm.location)
        read = self.runtime.words_end if self.config.turn.reads_words else None
        events = _stamped(self.endpointer.hear_text(said, pause_seq, words_p(read, text, said)), self._tail_heard_ns())
        if events:  # the turn ended: as in _detect, nothing of this utterance may leak into the next
            self._reset_vad()
        return _with_speech_end(events)

    def force_end(self) -> list[EndpointEvent]:
        """End the utterance now (``end_turn``). Its last samples (a partial VAD frame, the resampler's delay)
        are dropped: they must not reach the VAD after it and start a new utterance (a barge-in on this very
        turn)."""
        events = _stamped(self.endpointer.force_end(), self._tail_heard_ns())
        if events:
            self._reset_vad()
            self._pending = self._pending[:0]
            if self._resampler is not None:
                self._resampler.clear()
                self._resampled_in = self._resampled_out = 0
        return events

    def _tail_heard_ns(self) -> int:
        """When the newest sample framed for the VAD was heard: the newest frame's arrival, less what came
        after it (samples short of a VAD frame, and the resampler's delay, in 16 kHz samples)."""
        held = 0
        if self._resampler is not None:
            held = max(0, round(self._resampled_in * STT_SAMPLE_RATE_HZ / self._rate_hz) - self._resampled_out)
        return self._heard_ns - _samples_ns(len(self._pending) + held)

    def _detect(self, frames: list[np.ndarray], tail_heard_ns: int) -> list[EndpointEvent]:
        """VAD and endpointing of whole frames, in the VAD worker thread; the last frame's last sample was heard
        at ``tail_heard_ns``. The VAD state is reset after every utterance, so nothing of one utterance leaks
        into the next."""
        assert self._vad is not None
        events: list[EndpointEvent] = []
        after = sum(len(f) for f in frames)  # samples after the frame being fed (and the frame itself, first)
        for frame in frames:
            after -= len(frame)
            was_in_speech = self.endpointer.in_speech
            fed = self.endpointer.feed(frame, self._vad.probability(frame))
            events.extend(_stamped(fed, tail_heard_ns - _samples_ns(after)))
            if was_in_speech and not self.endpointer.in_speech:  # ended, forced or too short
                self._reset_vad()
        return _with_speech_end(events)

    def _score_pause(self) -> list[EndpointEvent]:
        """The end-of-turn model on the pending pause (see :meth:`Endpointer.score_pause`): its audio ends with
        the last frame fed."""
        events = _stamped(self.endpointer.score_pause(), self._tail_heard_ns())
        if events:  # the turn ended: as in _detect, nothing of this utterance may leak into the next
            self._reset_vad()
        return _with_speech_end(events)

    def _score_pause_gated(self) -> list[EndpointEvent]:
        """:meth:`_score_pause` holding the compute gate (:attr:`Priority.TURN`: before any waiting step)."""
        with self.runtime.gate.slot(Priority.TURN):
            return self._score_pause()

    def _reset_vad(self) -> None:
        if self._vad is not None:
            self._vad.reset()
            self.vad_resets += 1


def silence_after_speech_ms(ev: SpeechEnded) -> float:
    """How long before the endpoint the user stopped speaking. Silero's probability stays up for ~50-150 ms
    after the last word, so the VAD's silence count alone leaves its lag out of the user's wait; with this, the
    ``endpoint_silence`` stage includes it, as mouth-to-ear does.

    With the VAD's per-frame probabilities it is where :func:`voice.turn.speech_end.find_speech_end` (the same
    method as the benchmarks' reference speech end: the last voiced speech, then where its sound falls to
    the background) puts the end; when that is ambiguous (noise at speech level, no voiced speech), or
    without probabilities, the silence after the last voiced 10 ms by energy, or the VAD's count if longer.
    Only the last :data:`SPEECH_END_TAIL_S` of the utterance is analysed (a few ms of CPU, in the VAD's worker
    thread: see :meth:`Listener.hear`)."""
    if ev.silence_after_speech_ms is not None:
        return ev.silence_after_speech_ms
    try:
        energy = analyse_speech(ev.audio, STT_SAMPLE_RATE_HZ, min_segment_ms=60.0)
    except AudioFileError:
        return ev.trailing_silence_ms
    if ev.probabilities is not None and ev.frame_samples > 0 and not ev.forced:
        frames = min(len(ev.probabilities), round(SPEECH_END_TAIL_S * STT_SAMPLE_RATE_HZ / ev.frame_samples))
        tail = ev.audio[(len(ev.probabilities) - frames) * ev.frame_samples :]
        end = find_speech_end(tail, STT_SAMPLE_RATE_HZ, ev.probabilities[-frames:], energy, ev.frame_samples)
        if end.ambiguous is None:
            return max(0.0, len(tail) / STT_SAMPLE_RATE_HZ - end.end_s) * 1000.0
    after_ms = (len(ev.audio) - energy.last_voiced_sample) * 1000.0 / STT_SAMPLE_RATE_HZ
    return max(ev.trailing_silence_ms, after_ms)


def heard_ns(ev: SpeechEnded | SpeechPaused, now_ns: int) -> int:
    """When the last sample of the event's audio was heard (:attr:`SpeechEnded.heard_ns`), never after now."""
    return now_ns if ev.heard_ns is None else min(ev.heard_ns, now_ns)


def _samples_ns(samples: int) -> int:
    return round(samples * 1e9 / STT_SAMPLE_RATE_HZ)


def _stamped(events: list[EndpointEvent], heard_ns: int) -> list[EndpointEvent]:
    """The events, each with audio (an end or a pause) stamped with when its last sample was heard."""
    return [
        dataclasses.replace(ev, heard_ns=heard_ns) if isinstance(ev, SpeechEnded | SpeechPaused) else ev
        for ev in events
    ]


def _with_speech_end(events: list[EndpointEvent]) -> list[EndpointEvent]:
    """The events, each :class:`SpeechEnded` with its :func:`silence_after_speech_ms` worked out. Called in the
    VAD's worker thread: the few ms of numpy it takes would otherwise run on the event loop and hold back the
    reply that the endpoint lets out."""
    return [
        dataclasses.replace(ev, silence_after_speech_ms=silence_after_speech_ms(ev))
        if isinstance(ev, SpeechEnded)
        else ev
        for ev in events
    ]
