"""The Wyoming server's pure parts, without sockets or models: framing, the per-connection logic, audio
conversion, the allowlist and the conversation memory."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wyoming.asr import Transcribe as TranscribeEvent
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event, write_event
from wyoming.handle import Handled
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tests.conftest import make_config
from voice.config.config import ConfigError
from voice.reliability.tagged import read_tag, tagged_speech
from voice.turn.chunker import Chunker
from voice.wyoming.access import check_bind, client_allowed, networks
from voice.wyoming.conversations import Conversations
from voice.wyoming.framing import FrameDecoder, FramingError
from voice.wyoming.info import info_event
from voice.wyoming.pcm import PcmFormat, audio_chunk, to_stt_audio
from voice.wyoming.protocol import (
    BAD_EVENT,
    BAD_FRAME,
    NOT_STARTED,
    TOO_LONG,
    UNKNOWN_TYPE,
    Action,
    Answer,
    Close,
    Send,
    Speak,
    Transcribe,
    WyomingConnection,
    handled_event,
)

CONFIG = make_config()


def wire(*events: Event) -> bytes:
    """The bytes the wyoming package itself writes for these events."""
    buf = io.BytesIO()
    for e in events:
        write_event(e, buf)
    return buf.getvalue()


def conn(**wyoming: object) -> WyomingConnection:
    config = make_config(wyoming=wyoming) if wyoming else CONFIG
    return WyomingConnection(config, info_event(config))


def run(c: WyomingConnection, *events: Event) -> list[Action]:
    out: list[Action] = []
    for e in events:
        out.extend(c.receive(e))
    return out


def errors(actions: list[Action]) -> list[tuple[str, str]]:
    return [
        (a.event.data["code"], a.event.data["text"])
        for a in actions
        if isinstance(a, Send) and a.event.type == "error"
    ]


# ---------------------------------------------------------------------------------------------- framing
SAMPLE = [
    Describe().event(),
    AudioStart(rate=16000, width=2, channels=1).event(),
    AudioChunk(rate=16000, width=2, channels=1, audio=bytes(range(256)) * 8).event(),
    Synthesize(text="Grüße, wie geht's? \n Two lines.").event(),
    AudioStop().event(),
]


def same(a: Event, b: Event) -> bool:
    return a.type == b.type and a.data == b.data and (a.payload or b"") == (b.payload or b"")


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(wire(*SAMPLE))), max_size=12))
def test_decoder_reads_what_the_wyoming_package_writes_however_the_bytes_are_cut(cuts: list[int]) -> None:
    data = wire(*SAMPLE)
    bounds = [0, *sorted(cuts), len(data)]
    decoder = FrameDecoder(1 << 20)
    got: list[Event | FramingError] = []
    for a, b in itertools.pairwise(bounds):
        got.extend(decoder.receive(data[a:b]))
    assert len(got) == len(SAMPLE)
    assert all(isinstance(g, Event) and same(g, e) for g, e in zip(got, SAMPLE, strict=True))


def test_a_header_line_that_is_not_an_event_is_an_error_and_the_next_line_is_read_afresh() -> None:
    decoder = FrameDecoder(1 << 20)
    got = decoder.receive(b'hello\n[1, 2]\n{"type": 5}\n\n' + wire(Describe().event()))
    assert [type(g) for g in got] == [FramingError, FramingError, FramingError, Event]
    assert all(isinstance(g, FramingError) and not g.fatal for g in got[:3])
    assert "not JSON" in got[0].message and "'hello'" in got[0].message  # type: ignore[union-attr]
    assert isinstance(got[3], Event) and got[3].type == "describe"


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'{"type": "audio-chunk", "payload_length": 2000000}\n', "larger than the limit"),
        (b'{"type": "audio-chunk", "payload_length": -1}\n', "non-negative integer"),
        (b'{"type": "x", "data_length": "5"}\n', "non-negative integer"),
        (b'{"type": "x", "data_length": 3}\n[1]', "not a JSON object"),
        (b'{"type": "x", "data_length": 3}\nabc', "not JSON"),
        (b"x" * 70000, "no end of line"),
    ],
)
def test_an_event_that_cannot_be_delimited_is_fatal(data: bytes, words: str) -> None:
    decoder = FrameDecoder(65536)
    got = decoder.receive(data)
    assert len(got) == 1 and isinstance(got[0], FramingError) and got[0].fatal and words in got[0].message
    assert decoder.receive(wire(Describe().event())) == []  # nothing more is read from a broken stream


def test_a_fatal_framing_error_is_sent_as_an_error_then_the_connection_closes() -> None:
    actions = conn().receive(FramingError("too big", fatal=True))
    assert errors(actions) == [(BAD_FRAME, "too big")] and isinstance(actions[-1], Close)
    assert not any(isinstance(a, Close) for a in conn().receive(FramingError("bad line", fatal=False)))


# ---------------------------------------------------------------------------------------------- describe
def test_describe_answers_info_with_asr_tts_and_handle_all_installed() -> None:
    [action] = conn().receive(Describe().event())
    assert isinstance(action, Send)
    info = Info.from_event(action.event)
    assert [p.installed for p in (*info.asr, *info.tts, *info.handle)] == [True, True, True]
    assert info.asr[0].models[0].name == CONFIG.stt.model and info.asr[0].models[0].installed
    assert info.tts[0].voices[0].name == CONFIG.tts.model and info.tts[0].supports_synthesize_streaming
    assert info.handle[0].models[0].name == CONFIG.llm.model and not info.handle[0].supports_handled_streaming
    assert info.asr[0].models[0].languages == ["en"]


# ---------------------------------------------------------------------------------------------- ASR
def chunks(pcm: bytes, fmt: tuple[int, int, int], size: int = 2048) -> list[Event]:
    rate, width, channels = fmt
    return [
        AudioChunk(rate=rate, width=width, channels=channels, audio=pcm[i : i + size]).event()
        for i in range(0, len(pcm), size)
    ]


def test_home_assistants_stt_sequence_gives_the_audio_unchanged_at_16_khz() -> None:
    speech = tagged_speech("w1", 0.5)
    fmt = (16000, 2, 1)
    actions = run(
        conn(),
        TranscribeEvent(language="en").event(),
        AudioStart(*fmt).event(),
        *chunks(speech.tobytes(), fmt),
        AudioStop().event(),
    )
    [t] = actions
    assert isinstance(t, Transcribe) and t.language == "en"
    assert t.audio.dtype == np.float32 and len(t.audio) == len(speech)
    assert read_tag(t.audio) == "w1"  # exact conversion: the tag in the sample values survives


@pytest.mark.parametrize(
    ("rate", "width", "channels"), [(48000, 2, 2), (22050, 4, 1), (8000, 1, 1), (44100, 4, 2)]
)
def test_any_announced_format_becomes_float_mono_16_khz(rate: int, width: int, channels: int) -> None:
    seconds = 0.4
    t = np.arange(int(seconds * rate)) / rate
    wave = 0.5 * np.sin(2 * np.pi * 440 * t)
    if width == 1:
        samples = np.round(wave * 127 + 128).astype(np.uint8)
    elif width == 2:
        samples = np.round(wave * 32767).astype("<i2")
    else:
        samples = np.round(wave * (2**31 - 1)).astype("<i4")
    pcm = np.repeat(samples[:, None], channels, axis=1).tobytes()  # every channel the same
    out = to_stt_audio(pcm, PcmFormat(rate, width, channels))
    assert out.dtype == np.float32
    assert len(out) == pytest.approx(seconds * 16000, abs=2)
    assert float(np.max(np.abs(out[200:-200]))) == pytest.approx(0.5, abs=0.02)
    spectrum = np.abs(np.fft.rfft(out))
    assert np.argmax(spectrum) * 16000 / len(out) == pytest.approx(440, abs=5)


@pytest.mark.parametrize(
    ("events", "code", "words"),
    [
        ([AudioChunk(16000, 2, 1, b"\0\0").event()], NOT_STARTED, "before audio-start"),
        ([AudioStop().event()], NOT_STARTED, "before audio-start"),
        ([AudioStart(16000, 3, 1).event()], BAD_EVENT, "width 3"),
        ([AudioStart(1000, 2, 1).event()], BAD_EVENT, "rate 1000"),
        ([AudioStart(96000, 2, 1).event()], BAD_EVENT, "rate 96000 Hz is outside 8000..48000"),
        ([AudioStart(16000, 2, 6).event()], BAD_EVENT, "channels 6 is outside 1..2"),
        (
            [Event("audio-start", {"rate": "16000", "width": 2, "channels": 1})],
            BAD_EVENT,
            '"rate" must be an integer',
        ),
        (
            [AudioStart(16000, 2, 1).event(), AudioChunk(16000, 2, 1, b"\0\0\0").event()],
            BAD_EVENT,
            "whole number",
        ),
        (
            [AudioStart(16000, 2, 1).event(), AudioChunk(48000, 2, 1, b"\0\0").event()],
            BAD_EVENT,
            "audio-start said",
        ),
        ([Event("transcribe", {"language": 5})], BAD_EVENT, '"language" must be a string'),
    ],
)
def test_malformed_asr_events_get_an_error_naming_what_was_wrong(
    events: list[Event], code: str, words: str
) -> None:
    [(got_code, text)] = errors(run(conn(), *events))
    assert got_code == code and words in text


def test_audio_beyond_max_audio_s_is_refused_once_and_the_rest_transcribed() -> None:
    c = conn(max_audio_s=1.0)
    fmt = (16000, 2, 1)
    second = np.zeros(16000, np.int16).tobytes()
    actions = run(c, AudioStart(*fmt).event(), *chunks(second, fmt, 8000), *chunks(second, fmt, 8000))
    assert [code for code, _ in errors(actions)] == [TOO_LONG]
    [t] = run(c, AudioStop().event())
    assert isinstance(t, Transcribe) and len(t.audio) == 16000


# ---------------------------------------------------------------------------------------------- TTS
def test_synthesize_is_one_audio_group_spoken_sentence_by_sentence() -> None:
    actions = run(conn(), Synthesize(text="Hello there, my friend. How are you *today*?").event())
    assert actions == [
        Speak("Hello there, my friend.", start=True, stop=False, first=True),
        Speak("How are you today?", start=False, stop=True, first=False),
    ]


def test_synthesize_without_speakable_text_is_an_empty_audio_group() -> None:
    assert run(conn(), Synthesize(text="  ").event()) == [Speak("", start=True, stop=True, first=True)]


def test_streamed_text_is_spoken_as_each_sentence_completes_then_synthesize_stopped() -> None:
    c = conn()
    assert run(c, SynthesizeStart().event(), SynthesizeChunk("Hello ").event()) == []
    # The first sentence is spoken as soon as it is complete: before the rest of the reply has arrived.
    assert run(c, SynthesizeChunk("there. How").event()) == [Speak("Hello there.", True, True, True)]
    rest = run(
        c,
        SynthesizeChunk(" are you?").event(),
        Synthesize(text="Hello there. How are you?").event(),  # Home Assistant's copy for old servers
        SynthesizeStop().event(),
    )
    assert rest[:-1] == [Speak("How are you?", True, True, False)]
    assert isinstance(rest[-1], Send) and rest[-1].event.type == "synthesize-stopped"
    # After the stream, a synthesize is a request of its own again.
    assert run(c, Synthesize(text="Bye.").event()) == [Speak("Bye.", True, True, True)]


@pytest.mark.parametrize(
    ("events", "code", "words"),
    [
        ([SynthesizeChunk("x").event()], NOT_STARTED, "before synthesize-start"),
        ([SynthesizeStop().event()], NOT_STARTED, "before synthesize-start"),
        ([Event("synthesize", {"text": ["a"]})], BAD_EVENT, '"text" must be a string'),
        ([Event("synthesize", {})], BAD_EVENT, '"text" must be a string'),
        ([Synthesize(text="a" * 101).event()], TOO_LONG, "101 characters"),
    ],
)
def test_malformed_tts_events_get_an_error(events: list[Event], code: str, words: str) -> None:
    [(got_code, text)] = errors(run(conn(max_text_chars=100), *events))
    assert got_code == code and words in text


def test_a_stream_over_the_text_limit_is_refused_once_and_still_ends_with_synthesize_stopped() -> None:
    c = conn(max_text_chars=100)
    actions = run(
        c,
        SynthesizeStart().event(),
        *[SynthesizeChunk("Word after word. " * 2).event() for _ in range(6)],
        SynthesizeStop().event(),
    )
    assert [code for code, _ in errors(actions)] == [TOO_LONG]
    assert sum(len(a.text) for a in actions if isinstance(a, Speak)) <= 100
    assert isinstance(actions[-1], Send) and actions[-1].event.type == "synthesize-stopped"


# ---------------------------------------------------------------------------------------------- handle
def test_a_transcript_with_a_conversation_id_asks_for_an_answer_in_that_conversation() -> None:
    ev = Event(
        "transcript", {"text": " What time is it? ", "language": "en", "context": {"conversation_id": "c1"}}
    )
    assert run(conn(), ev) == [Answer("What time is it?", "c1")]
    assert run(conn(), Event("transcript", {"text": "hi"})) == [Answer("hi", None)]
    handled = Handled.from_event(handled_event("It is noon.", "c1"))
    assert handled.text == "It is noon." and handled.context == {"conversation_id": "c1"}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"text": ""}, "empty"),
        ({"text": 3}, '"text" must be a string'),
        ({"text": "hi", "context": "c1"}, '"context" must be an object'),
        ({"text": "hi", "context": {"conversation_id": 7}}, '"conversation_id" must be a string'),
    ],
)
def test_malformed_transcripts_get_an_error(data: dict[str, object], words: str) -> None:
    [(code, text)] = errors(run(conn(), Event("transcript", data)))
    assert code == BAD_EVENT and words in text


def test_an_unknown_event_type_gets_an_error_listing_what_is_handled() -> None:
    [(code, text)] = errors(run(conn(), Event("run-satellite")))
    assert code == UNKNOWN_TYPE and "'run-satellite'" in text and "synthesize-start" in text


def test_ping_gets_pong_with_its_text() -> None:
    [a] = run(conn(), Event("ping", {"text": "abc"}))
    assert isinstance(a, Send) and a.event.type == "pong" and a.event.data["text"] == "abc"


# ---------------------------------------------------------------------------------------------- audio out
def test_tts_audio_becomes_chunks_of_chunk_ms() -> None:
    """As the server sends a spoken reply: the TTS's pieces through the Chunker, each chunk an ``audio-chunk``."""
    pcm = np.arange(2205, dtype=np.int16)
    chunker = Chunker(22050 * 40 // 1000)
    chunks = chunker.feed(pcm[:1000]) + chunker.feed(pcm[1000:]) + chunker.flush()
    events = [audio_chunk(data, 22050) for data in chunks]
    assert [len(e.payload or b"") for e in events] == [1764] * 2 + [2205 * 2 - 2 * 1764]
    assert all(e.data["rate"] == 22050 and e.data["width"] == 2 and e.data["channels"] == 1 for e in events)
    assert b"".join(e.payload or b"" for e in events) == pcm.tobytes()


# ---------------------------------------------------------------------------------------------- access
def test_the_allowlist_matches_addresses_and_networks() -> None:
    allowed = networks(["127.0.0.2", "192.168.1.0/24", "fd00::/8"])
    assert client_allowed("127.0.0.2", allowed) and client_allowed("192.168.1.77", allowed)
    assert client_allowed("::ffff:192.168.1.5", allowed)  # an IPv4 client on an IPv6 socket
    assert client_allowed("fd00::1", allowed)
    assert not client_allowed("127.0.0.3", allowed) and not client_allowed("192.168.2.1", allowed)
    assert not client_allowed("not-an-ip", allowed)
    assert client_allowed("127.0.0.1", networks([]))  # no list (loopback only): every local client


def test_listening_beyond_loopback_needs_an_allowlist() -> None:
    check_bind(make_config().wyoming)
    check_bind(make_config(wyoming={"host": "0.0.0.0", "allowed_clients": ["192.168.1.20"]}).wyoming)
    with pytest.raises(ConfigError, match="allowed_clients") as e:
        check_bind(make_config(wyoming={"host": "0.0.0.0"}).wyoming)
    assert "no authentication" in str(e.value) and "all interfaces" in str(e.value)


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"allowed_clients": ["homeassistant.local"]}, "not an IP address or network"),
        ({"max_conversations": 0}, "max_conversations must be positive"),
        ({"port": 70000}, "not a TCP port"),
        ({"max_event_bytes": 100}, "at least 65536"),
        ({"allowed": []}, "unknown key 'allowed'"),
    ],
)
def test_bad_wyoming_settings_are_refused_naming_the_key(values: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        make_config(wyoming=values)


# ---------------------------------------------------------------------------------------------- memory
def test_conversations_are_bounded_and_the_least_recently_used_is_forgotten() -> None:
    convs = Conversations(2)
    a = convs.get("a")
    a.history.add("user", "hello a")
    convs.get("b")
    assert convs.get("a") is a  # used again: now the most recent
    convs.get("c")  # over the limit: "b" is forgotten
    assert "a" in convs and "c" in convs and "b" not in convs and len(convs) == 2 and convs.forgotten == 1
    assert convs.get("b").history.messages == []
    assert convs.get(None) is not convs.get(None) and None not in convs  # one-off requests are not kept
