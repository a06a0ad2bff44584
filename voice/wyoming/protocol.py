"""One Wyoming connection's request → response logic, pure: events in, actions out; no sockets, no models.

:meth:`WyomingConnection.receive` takes each decoded event (or framing error) and returns what to do,
in order: :class:`Send` an event, or run a model — :class:`Transcribe`, :class:`Speak`, :class:`Answer`.
The server (:mod:`voice.wyoming.server`) performs the actions one after the other and sends what the
models produce; the event helpers at the bottom build those answers.

The sequences (Home Assistant's ``components/wyoming``):

* ``describe`` → ``info``;  ``ping`` → ``pong``.
* ASR: ``transcribe`` (optional), ``audio-start``, ``audio-chunk``…, ``audio-stop`` → ``transcript``.
  The audio is converted from whatever ``audio-start`` announced to float32 mono 16 kHz.
* TTS: ``synthesize`` → ``audio-start``, ``audio-chunk``…, ``audio-stop`` (one group; the text is
  spoken sentence by sentence, so the first audio comes after the first clause is synthesized).
* Streaming TTS: ``synthesize-start``, ``synthesize-chunk``… (a ``synthesize`` inside the stream is
  Home Assistant's copy for older servers, ignored), ``synthesize-stop`` → one ``audio-start``/
  ``-chunk``/``-stop`` group per sentence as soon as the sentence is complete, then ``synthesize-stopped``.
* Conversation: ``transcript`` with ``context.conversation_id`` → ``handled`` (the whole reply).

Anything malformed gets an ``error`` event naming what was wrong, and the connection goes on; only a
fatal framing error (an event that cannot be delimited) closes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from wyoming.asr import Transcript
from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import Handled
from wyoming.ping import Pong
from wyoming.tts import SynthesizeStopped

from voice.config.config import Config
from voice.turn.sentences import SentenceSplitter, SplitterConfig, clean_for_speech
from voice.wyoming.framing import FramingError
from voice.wyoming.pcm import PcmFormat, parse_format, to_stt_audio

# Error codes of the ``error`` events this server sends.
BAD_FRAME = "bad_frame"
BAD_EVENT = "bad_event"
UNKNOWN_TYPE = "unknown_type"
NOT_STARTED = "not_started"
TOO_LONG = "too_long"
FORBIDDEN = "forbidden"
LOADING = "loading"
BUSY = "busy"
CONTEXT = "context"
INTERNAL = "internal"
TIMEOUT = "timeout"

HANDLED_TYPES = (
    "describe, ping, transcribe, audio-start, audio-chunk, audio-stop, synthesize, synthesize-start, "
    "synthesize-chunk, synthesize-stop, transcript"
)


@dataclass(frozen=True)
class Send:
    event: Event


@dataclass(frozen=True, eq=False)
class Transcribe:
    audio: np.ndarray
    """float32 mono 16 kHz."""
    language: str | None


@dataclass(frozen=True)
class Speak:
    """Synthesize ``text`` and send its audio, preceded by ``audio-start`` if ``start`` and followed by
    ``audio-stop`` if ``stop``. ``first``: the first sentence of a reply (its leading silence is trimmed).
    An empty ``text`` sends no audio (only the start and stop asked for)."""

    text: str
    start: bool
    stop: bool
    first: bool


@dataclass(frozen=True)
class Answer:
    """The LLM's reply to ``text`` in conversation ``conversation_id`` (None: a one-off, not remembered)."""

    text: str
    conversation_id: str | None


@dataclass(frozen=True)
class Close:
    reason: str


Action = Send | Transcribe | Speak | Answer | Close


def error_event(code: str, text: str) -> Event:
    return Error(text=text, code=code).event()


def transcript_event(text: str, language: str | None) -> Event:
    return Transcript(text=text, language=language).event()


def handled_event(text: str, conversation_id: str | None) -> Event:
    context = {"conversation_id": conversation_id} if conversation_id is not None else None
    return Handled(text=text, context=context).event()


class _Bad(Exception):
    """A malformed event: becomes an ``error`` event with this code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _text(data: dict[str, Any], key: str, what: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise _Bad(BAD_EVENT, f'{what}: "{key}" must be a string, got {value!r}')
    return value


@dataclass
class _Audio:
    fmt: PcmFormat
    pcm: bytearray
    too_long: bool = False


class WyomingConnection:
    """The state of one connection: an audio stream being received, a text stream being synthesized."""

    def __init__(self, config: Config, info: Event) -> None:
        self.config = config
        self.info = info
        self._language: str | None = None
        self._audio: _Audio | None = None
        self._splitter: SentenceSplitter | None = None  # set while a synthesize stream is open
        self._stream_chars = 0
        self._stream_first = True
        self._stream_too_long = False

    def _new_splitter(self) -> SentenceSplitter:
        tts = self.config.tts
        return SentenceSplitter(
            SplitterConfig(
                min_first_clause_words=tts.min_first_clause_words,
                max_first_chunk_words=tts.max_first_chunk_words,
            )
        )

    def receive(self, item: Event | FramingError) -> list[Action]:
        """What to do about one decoded event (or framing error), in order."""
        if isinstance(item, FramingError):
            actions: list[Action] = [Send(error_event(BAD_FRAME, item.message))]
            if item.fatal:
                actions.append(Close(item.message))
            return actions
        try:
            return self._dispatch(item)
        except _Bad as bad:
            return [Send(error_event(bad.code, str(bad)))]

    def _dispatch(self, ev: Event) -> list[Action]:
        data: dict[str, Any] = ev.data if isinstance(ev.data, dict) else {}
        kind = ev.type
        if kind == "describe":
            return [Send(self.info)]
        if kind == "ping":
            return [Send(Pong(text=_text(data, "text", "ping", required=False)).event())]
        if kind == "transcribe":
            self._language = _text(data, "language", "transcribe", required=False)
            return []
        if kind == "audio-start":
            return self._audio_start(data)
        if kind == "audio-chunk":
            return self._audio_chunk(data, ev.payload or b"")
        if kind == "audio-stop":
            return self._audio_stop()
        if kind == "synthesize":
            return self._synthesize(data)
        if kind == "synthesize-start":
            self._splitter = self._new_splitter()
            self._stream_chars, self._stream_first, self._stream_too_long = 0, True, False
            return []
        if kind == "synthesize-chunk":
            return self._synthesize_chunk(data)
        if kind == "synthesize-stop":
            return self._synthesize_stop()
        if kind == "transcript":
            return self._transcript(data)
        raise _Bad(UNKNOWN_TYPE, f"unknown event type {kind[:40]!r}; this server handles {HANDLED_TYPES}")

    # ------------------------------------------------------------------ ASR
    def _audio_start(self, data: dict[str, Any]) -> list[Action]:
        fmt = parse_format(data, "audio-start")
        if isinstance(fmt, str):
            self._audio = None
            raise _Bad(BAD_EVENT, fmt)
        self._audio = _Audio(fmt, bytearray())
        return []

    def _audio_chunk(self, data: dict[str, Any], payload: bytes) -> list[Action]:
        audio = self._audio
        if audio is None:
            raise _Bad(
                NOT_STARTED, "audio-chunk before audio-start: send audio-start with the audio format first"
            )
        fmt = parse_format(data, "audio-chunk")
        if isinstance(fmt, str):
            raise _Bad(BAD_EVENT, fmt)
        if fmt != audio.fmt:
            raise _Bad(
                BAD_EVENT,
                f"audio-chunk in {fmt.rate_hz} Hz/{fmt.width_bytes} bytes/{fmt.channels} channels but "
                f"audio-start said {audio.fmt.rate_hz}/{audio.fmt.width_bytes}/{audio.fmt.channels}; chunk dropped",
            )
        if len(payload) % fmt.frame_bytes:
            raise _Bad(
                BAD_EVENT,
                f"audio-chunk of {len(payload)} bytes is not a whole number of {fmt.frame_bytes}-byte "
                "frames; chunk dropped",
            )
        if audio.too_long:
            return []
        limit_s = self.config.wyoming.max_audio_s
        if len(audio.pcm) + len(payload) > limit_s * fmt.bytes_per_s():
            audio.too_long = True
            raise _Bad(
                TOO_LONG,
                f"more than {limit_s:g} s of audio ([wyoming] max_audio_s); the rest is ignored",
            )
        audio.pcm += payload
        return []

    def _audio_stop(self) -> list[Action]:
        audio, self._audio = self._audio, None
        if audio is None:
            raise _Bad(NOT_STARTED, "audio-stop before audio-start")
        language, self._language = self._language, None
        return [
            Transcribe(
                to_stt_audio(bytes(audio.pcm), audio.fmt), language or self.config.stt.language or None
            )
        ]

    # ------------------------------------------------------------------ TTS
    def _check_length(self, chars: int, what: str) -> None:
        limit = self.config.wyoming.max_text_chars
        if chars > limit:
            raise _Bad(
                TOO_LONG,
                f"{what} is {chars} characters, over the limit of {limit} ([wyoming] max_text_chars)",
            )

    def _synthesize(self, data: dict[str, Any]) -> list[Action]:
        if self._splitter is not None:
            return []  # Home Assistant's copy of a streamed text, for servers that cannot stream
        text = _text(data, "text", "synthesize") or ""
        self._check_length(len(text), "synthesize: the text")
        splitter = self._new_splitter()
        sentences = [s for raw in [*splitter.push(text), *splitter.flush()] if (s := clean_for_speech(raw))]
        if not sentences:  # nothing speakable: an empty, well-formed answer (audio-start, audio-stop)
            return [Speak("", start=True, stop=True, first=True)]
        last = len(sentences) - 1
        return [Speak(s, start=i == 0, stop=i == last, first=i == 0) for i, s in enumerate(sentences)]

    def _speak_stream(self, raws: list[str]) -> list[Action]:
        out: list[Action] = []
        for raw in raws:
            text = clean_for_speech(raw)
            if text:
                out.append(Speak(text, start=True, stop=True, first=self._stream_first))
                self._stream_first = False
        return out

    def _synthesize_chunk(self, data: dict[str, Any]) -> list[Action]:
        if self._splitter is None:
            raise _Bad(NOT_STARTED, "synthesize-chunk before synthesize-start")
        text = _text(data, "text", "synthesize-chunk") or ""
        if self._stream_too_long:
            return []
        self._stream_chars += len(text)
        try:
            self._check_length(self._stream_chars, "synthesize stream: the text so far")
        except _Bad:
            self._stream_too_long = True
            raise
        return self._speak_stream(self._splitter.push(text))

    def _synthesize_stop(self) -> list[Action]:
        splitter, self._splitter = self._splitter, None
        if splitter is None:
            raise _Bad(NOT_STARTED, "synthesize-stop before synthesize-start")
        actions = self._speak_stream(splitter.flush())
        return [*actions, Send(SynthesizeStopped().event())]

    # ------------------------------------------------------------------ handle
    def _transcript(self, data: dict[str, Any]) -> list[Action]:
        text = (_text(data, "text", "transcript") or "").strip()
        if not text:
            raise _Bad(BAD_EVENT, "transcript: the text is empty; there is nothing to answer")
        self._check_length(len(text), "transcript: the text")
        context = data.get("context")
        if context is not None and not isinstance(context, dict):
            raise _Bad(BAD_EVENT, f'transcript: "context" must be an object, got {context!r}')
        conversation_id = (context or {}).get("conversation_id")
        if conversation_id is not None and (
            not isinstance(conversation_id, str) or len(conversation_id) > 200
        ):
            raise _Bad(
                BAD_EVENT,
                f'transcript: "conversation_id" must be a string of up to 200 characters, got {conversation_id!r}',
            )
        return [Answer(text, conversation_id or None)]
