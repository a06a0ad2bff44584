"""End-of-turn detection from per-frame speech probabilities. Pure logic: no model, no clock.

The :class:`Endpointer` is fed 16 kHz float32 audio together with the VAD's speech probability for each
frame. It keeps a pre-roll ring of recent audio, starts an utterance when a frame's probability reaches
``threshold``, and ends it once enough audio in a row fell under ``neg_threshold``. Utterances under
``min_speech_ms`` voiced are dropped; one reaching ``max_utterance_s`` is ended by force. Durations are counted
in audio samples, so the result does not depend on how fast audio arrives.

The turn is an overlap, not a sum: after ``[turn] speculate_after_ms`` of silence inside speech the
endpointer reports :class:`SpeechPaused` (with the utterance so far), so the session can start preparing the
reply while it waits; a voiced frame after that reports :class:`SpeechResumed` (the preparation is stale).
How much silence ends the turn is decided here:

* without an end-of-turn model: ``[vad] silence_ms``;
* with one (``turn_score``, the probability that the turn is complete, from the utterance so far): the window
  :func:`voice.turn.end_window.window_ms` sets from that score — ``[turn] complete_silence_ms`` or
  ``incomplete_silence_ms``, a shorter ``sure_silence_ms`` for a sure score — and, with ``[turn]
  text_evidence``, from the words of the speculative transcript (:meth:`Endpointer.hear_text`), which can veto
  an end (with ``[turn] words_model``, also grant one). With ``[turn] rescore_at_ms``, a turn scored incomplete
  is scored again as the silence grows.

The model is not run inside :meth:`Endpointer.feed`: a pause marks a score as pending (the window is the long
one meanwhile), so the caller starts its speculative reply, then calls :meth:`Endpointer.score_pause`.

**Pausing on energy** (``[turn] pause_energy_drop_db``): Silero's probability stays up ~50–150 ms after the
last word, so a frame that many dB under the utterance's loudest also counts towards the pause (not the end:
that stays the VAD's). Noise never falls that far, so there the VAD decides. After an energy pause the VAD's
lagging probability is not resumed speech: a loud frame is, or ``RESUME_AFTER_VAD_MS`` of VAD speech. The
model is asked at ``[turn] score_after_ms`` of the VAD's silence: its score depends on the audio it hears.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from voice.config.config import TurnConfig, VadConfig
from voice.turn.end_window import window_ms
from voice.turn.text_evidence import Verdict

STT_SAMPLE_RATE_HZ = 16_000
#: After a pause found on energy, this much audio the VAD calls speech (while quiet) counts as resumed speech.
RESUME_AFTER_VAD_MS = 256.0


def level_db(frame: np.ndarray) -> float:
    """Mean power of ``frame`` in dBFS (float samples in [-1, 1])."""
    return float(10.0 * np.log10(float(np.mean(np.square(frame, dtype=np.float64))) + 1e-12))


@dataclass(frozen=True)
class SpeechStarted:
    """Speech began; ``audio_offset_ms`` is the position in the session's audio stream."""

    audio_offset_ms: float


@dataclass(frozen=True)
class SpeechEnded:
    """An utterance is complete and ready for STT."""

    audio: np.ndarray
    """The utterance (with pre-roll), float32 mono 16 kHz."""
    trailing_silence_ms: float
    """Silence counted after the last voiced frame: the endpoint is this late after the speech ended."""
    forced: bool
    """True when ended by the utterance cap or an ``end_turn`` message rather than by silence."""
    voiced_ms: float
    turn_score: float | None = None
    """The end-of-turn model's probability that the turn was complete (None: no model, or no pause): its last
    score of the pause that ended the turn, the one that set the window."""
    probabilities: np.ndarray | None = None
    """The VAD's speech probability of each frame of ``audio`` (None when the frames were not all one size):
    with them the session finds where the speech really ended (:mod:`voice.turn.speech_end`)."""
    frame_samples: int = 0
    """The size of those frames."""
    silence_after_speech_ms: float | None = None
    """How long before this event the speech really ended, when already worked out (the session does it in
    the VAD's worker thread, off the event loop: :func:`voice.turn.listener.silence_after_speech_ms`)."""
    heard_ns: int | None = None
    """When the last sample of ``audio`` reached the server (monotonic ns): the arrival of the client frame
    that carried it, less the audio after it in that frame (see :meth:`voice.turn.listener.Listener.accept`). The
    speech end is this less :attr:`silence_after_speech_ms`. None: not stamped; the event's own time is used."""
    turn_scores: tuple[float, ...] = ()
    """Every score of that pause, in order (more than one with ``[turn] rescore_at_ms``)."""
    words_p: float | None = None
    """The words model's probability that the pause's transcript ends the turn (``[turn] words_model``; None: no
    such model, no words read by the end, or words the grammar already called unfinished)."""


@dataclass(frozen=True)
class SpeechPaused:
    """``[turn] speculate_after_ms`` of silence inside speech: the turn may be over. Sent once per pause."""

    audio: np.ndarray
    """The utterance so far (with pre-roll), float32 mono 16 kHz."""
    trailing_silence_ms: float
    """Silence after the last voiced frame, included at the end of ``audio``."""
    voiced_ms: float
    end_after_ms: float
    """Silence (from the last voiced frame) after which this turn will end unless speech resumes (with an
    end-of-turn model: the incomplete window, until the score sets it; the score is in the
    :class:`SpeechEnded` that ends the turn)."""
    heard_ns: int | None = None
    """When the last sample of ``audio`` reached the server, as :attr:`SpeechEnded.heard_ns`."""
    pause_seq: int = 0
    """Which pause of the endpointer this is (:meth:`Endpointer.hear_text` takes words for this pause only)."""


@dataclass(frozen=True)
class SpeechResumed:
    """A voiced frame after a :class:`SpeechPaused`: the utterance goes on; the pause's audio is stale."""


EndpointEvent = SpeechStarted | SpeechEnded | SpeechPaused | SpeechResumed

#: ``turn_score(audio) -> probability that the turn is complete``; blocking, called from the VAD thread.
TurnScorer = Callable[[np.ndarray], float]


class Endpointer:
    """Turns frames + speech probabilities into :class:`SpeechStarted` / :class:`SpeechEnded` events."""

    def __init__(
        self,
        config: VadConfig,
        sample_rate_hz: int = STT_SAMPLE_RATE_HZ,
        *,
        turn: TurnConfig | None = None,
        turn_score: TurnScorer | None = None,
    ) -> None:
        self.config = config
        self.turn = turn or TurnConfig(speculate_after_ms=0)
        self.turn_score = turn_score
        self.rate = sample_rate_hz
        # The pause is where speculation starts and the end-of-turn model is asked (once per pause).
        pause_ms = self.turn.speculate_after_ms
        if turn_score is not None:
            pause_ms = min(pause_ms or self.turn.complete_silence_ms, self.turn.complete_silence_ms)
        self._pause_samples = self._samples(pause_ms) if pause_ms > 0 else 0
        # The end-of-turn model is asked once the VAD's silence reaches this (and the pause was reported),
        # however early the speculative reply started: its score depends on the audio it hears.
        self._score_samples = self._samples(min(self.turn.score_after_ms, self.turn.complete_silence_ms))
        self._energy_drop_db = self.turn.pause_energy_drop_db
        self._peak_db = -math.inf  # the loudest voiced frame of the utterance
        self._quiet_samples = 0  # quiet frames in a row (energy), since the last loud one
        self._lagging_samples = 0  # after an energy pause: quiet frames the VAD still calls speech
        self._quiet_voice = False  # speech resumed on quiet frames: the quiet run is speech until a loud frame
        self._rescore_samples = [self._samples(ms) for ms in self.turn.rescore_at_ms]
        self._forget_pause()
        self._pause_seq = 0
        self._pre_roll: deque[np.ndarray] = deque()
        self._pre_roll_probs: deque[float] = deque()
        self._pre_roll_samples = 0
        self._utterance: list[np.ndarray] = []
        self._utterance_probs: list[float] = []
        self._utterance_samples = 0
        self._in_speech = False
        self._silence_samples = 0
        self._voiced_samples = 0
        self._position_samples = 0
        self._paused = False
        self._pending: np.ndarray | None = None  # the pause's audio, waiting for score_pause()
        self._end_samples = self._samples(config.silence_ms)

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    @property
    def score_pending(self) -> bool:
        """A pause waits for :meth:`score_pause` (only with an end-of-turn model)."""
        return self._pending is not None

    def _samples(self, ms: float) -> int:
        return int(ms * self.rate / 1000)

    def _ms(self, samples: int) -> float:
        return samples * 1000.0 / self.rate

    def reset(self) -> None:
        """Forget any partial utterance and the pre-roll."""
        self._pre_roll.clear()
        self._pre_roll_probs.clear()
        self._pre_roll_samples = 0
        self._utterance = []
        self._utterance_probs = []
        self._utterance_samples = 0
        self._in_speech = False
        self._silence_samples = 0
        self._voiced_samples = 0
        self._paused = False
        self._pending = None
        self._end_samples = self._samples(self.config.silence_ms)
        self._peak_db = -math.inf
        self._quiet_samples = 0
        self._lagging_samples = 0
        self._quiet_voice = False
        self._forget_pause()

    def _forget_pause(self) -> None:
        """What was learnt of the current pause (scores, words) no longer holds."""
        self._scored = False  # this pause's audio has been handed to the end-of-turn model
        self._rescores = 0  # re-score points of this pause already handed to the model
        self.scores: list[float] = []
        """The end-of-turn model's scores of the current pause, in order (for the benches and the report)."""
        self._text: Verdict | None = None  # what the words of this pause say (hear_text), None: not heard yet
        self._words_p: float | None = None  # the words model's probability that they end the turn (hear_text)

    def _resume(self) -> SpeechResumed:
        self._paused = False
        self._forget_pause()
        self._pending = None
        self._lagging_samples = 0
        self._quiet_voice = self._quiet_samples > 0  # resumed while quiet: a quiet voice, not a lagging VAD
        self._end_samples = self._samples(self.config.silence_ms)
        return SpeechResumed()

    def feed(self, frame: np.ndarray, probability: float) -> list[EndpointEvent]:
        """Feed one VAD frame and its speech probability; returns the events it caused."""
        events: list[EndpointEvent] = []
        n = len(frame)
        self._position_samples += n
        if not self._in_speech:
            self._pre_roll.append(frame)
            self._pre_roll_probs.append(probability)
            self._pre_roll_samples += n
            limit = self._samples(self.config.pre_roll_ms) + n
            while self._pre_roll_samples > limit and len(self._pre_roll) > 1:
                self._pre_roll_samples -= len(self._pre_roll.popleft())
                self._pre_roll_probs.popleft()
            if probability >= self.config.threshold:
                self._in_speech = True
                self._utterance = list(self._pre_roll)
                self._utterance_probs = list(self._pre_roll_probs)
                self._utterance_samples = self._pre_roll_samples
                self._pre_roll.clear()
                self._pre_roll_probs.clear()
                self._pre_roll_samples = 0
                self._voiced_samples = n
                self._silence_samples = 0
                events.append(SpeechStarted(self._ms(self._position_samples - n)))
            return events
        self._utterance.append(frame)
        self._utterance_probs.append(probability)
        self._utterance_samples += n
        quiet = self._quiet(frame, probability)
        self._quiet_samples = self._quiet_samples + n if quiet else 0
        self._quiet_voice = self._quiet_voice and quiet
        if probability < self.config.neg_threshold:
            self._silence_samples += n
        else:
            if self._paused:
                # After an energy pause the VAD lags: a quiet frame it calls speech is its lag, not speech,
                # unless that goes on for RESUME_AFTER_VAD_MS.
                self._lagging_samples = self._lagging_samples + n if quiet else 0
                if not quiet or self._lagging_samples >= self._samples(RESUME_AFTER_VAD_MS):
                    events.append(self._resume())
            self._silence_samples = 0
            self._voiced_samples += n
        if (
            self._pause_samples
            and not self._paused
            and max(self._silence_samples, self._quiet_samples) >= self._pause_samples
            and self._voiced_samples >= self._samples(self.config.min_speech_ms)
        ):
            events.append(self._pause())
        self._mark_score_due()
        if self._end_silence_samples() >= self._end_samples:
            events.extend(self._end(forced=False))
        elif self._utterance_samples >= self._samples(self.config.max_utterance_s * 1000):
            events.extend(self._end(forced=True))
        return events

    def _quiet(self, frame: np.ndarray, probability: float) -> bool:
        """Whether ``frame`` is ``pause_energy_drop_db`` under the utterance's loudest voiced frame (which it
        updates); always False when pausing on energy is off."""
        if self._energy_drop_db <= 0:
            return False
        level = level_db(frame)
        if probability >= self.config.threshold:
            self._peak_db = max(self._peak_db, level)
        return level < self._peak_db - self._energy_drop_db

    def _pause(self) -> SpeechPaused:
        self._paused = True
        self._pause_seq += 1
        self._lagging_samples = 0
        audio = np.concatenate(self._utterance).astype(np.float32, copy=False)
        if self.turn_score is not None:  # the turn may not end before the model has scored it
            self._end_samples = self._samples(self.turn.incomplete_silence_ms)
        return SpeechPaused(
            audio,
            self._ms(max(self._silence_samples, self._quiet_samples)),
            self._ms(self._voiced_samples),
            self._ms(self._end_samples),
            pause_seq=self._pause_seq,
        )

    @property
    def _turn_score(self) -> float | None:
        """The model's latest score of this pause: the one that sets the window (None: not scored yet)."""
        return self.scores[-1] if self.scores else None

    def _mark_score_due(self) -> None:
        """Hand the audio so far to the end-of-turn model (:meth:`score_pause`) when its silence calls for it."""
        if self._paused and not self._scored and self._silence_samples >= self._score_samples:
            self._scored = True  # the VAD's own pause: ask the end-of-turn model (on the audio so far)
            if self.turn_score is not None:
                self._pending = np.concatenate(self._utterance).astype(np.float32, copy=False)
        elif self._rescore_due():
            self._rescores += 1  # more silence since an "incomplete": ask again, on the audio so far
            self._pending = np.concatenate(self._utterance).astype(np.float32, copy=False)

    def _rescore_due(self) -> bool:
        """A turn scored incomplete has reached its next ``rescore_at_ms`` point of silence (none pending)."""
        return (
            self._scored
            and self._pending is None
            and self._turn_score is not None
            and (
                self._window_ms() == self.turn.incomplete_silence_ms
                or (self.turn.graded_window and self._turn_score < self.turn.complete_threshold)
            )
            and self._text != "unfinished"
            and self._rescores < len(self._rescore_samples)
            and self._silence_samples >= self._rescore_samples[self._rescores]
        )

    def _window_ms(self) -> int:
        if self._turn_score is None:  # not scored yet: the turn may not end before it is
            return self.turn.incomplete_silence_ms
        return window_ms(self.turn, self._turn_score, self._text, self._words_p)

    def hear_text(self, verdict: Verdict, pause_seq: int, words_p: float | None = None) -> list[EndpointEvent]:
        """What the words of pause ``pause_seq`` say (:func:`voice.turn.text_evidence.verdict` of the speculative
        transcript, and with ``[turn] words_model`` the probability ``words_p`` that they end the turn); ignored
        for another pause, after speech resumed, or with ``[turn] text_evidence`` off. Sets the window; returns
        the end of the turn if the silence already reached it."""
        if not (self.turn.text_evidence and self._paused and self._in_speech and pause_seq == self._pause_seq):
            return []
        self._text = verdict
        self._words_p = words_p if self.turn.reads_words else None
        if self._turn_score is None:
            return []
        self._end_samples = self._samples(self._window_ms())
        if self._pending is None and self._end_silence_samples() >= self._end_samples:
            return self._end(forced=False)
        return []

    def score_pause(self) -> list[EndpointEvent]:
        """Run the end-of-turn model on the pending pause (blocking: tens of ms) and set the silence window
        from its score; returns the end of the turn if the silence already reached that window."""
        audio, self._pending = self._pending, None
        if audio is None or self.turn_score is None or not self._in_speech:
            return []
        self.scores.append(float(self.turn_score(audio)))
        self._end_samples = self._samples(self._window_ms())
        if self._end_silence_samples() >= self._end_samples:
            return self._end(forced=False)
        return []

    def _end_silence_samples(self) -> int:
        """The silence that counts towards the end of the turn: the VAD's, or with ``[turn] end_on_energy``,
        during a pause, the quiet run since the energy dropped, once the VAD hears silence too (not after speech
        resumed in a quiet voice: then the VAD decides until a loud frame)."""
        if self.turn.end_on_energy and self._paused and self._silence_samples > 0 and not self._quiet_voice:
            return max(self._silence_samples, self._quiet_samples)
        return self._silence_samples

    def force_end(self) -> list[EndpointEvent]:
        """End the utterance now (``end_turn``); nothing happens outside speech."""
        return self._end(forced=True) if self._in_speech else []

    def _end(self, *, forced: bool) -> list[EndpointEvent]:
        voiced_ms = self._ms(self._voiced_samples)
        trailing_ms = 0.0 if forced else self._ms(self._end_silence_samples())
        score, scores, words_p = self._turn_score, tuple(self.scores), self._words_p
        audio = np.concatenate(self._utterance) if self._utterance else np.zeros(0, np.float32)
        sizes = {len(f) for f in self._utterance}
        probs = np.asarray(self._utterance_probs, np.float32) if len(sizes) == 1 else None
        frame_samples = sizes.pop() if len(sizes) == 1 else 0
        self.reset()
        if voiced_ms < self.config.min_speech_ms and not forced:
            return []
        audio = audio.astype(np.float32, copy=False)
        return [
            SpeechEnded(audio, trailing_ms, forced, voiced_ms, score, probs, frame_samples, turn_scores=scores,
                        words_p=words_p)
        ]  # fmt: skip

