"""The Realtime protocol code without sockets: client-event decoding, session settings, and the translator from
our session's native events to Realtime events (every frame checked against the openai SDK's models)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.conftest import make_config
from voice.config.config import ConfigError
from voice.serve.realtime.events import (
    AudioAppend,
    AudioClear,
    AudioCommit,
    Ignored,
    ItemCreate,
    ItemTruncate,
    RealtimeError,
    ResponseCancel,
    ResponseCreate,
    SessionUpdate,
    decode_client_event,
)
from voice.serve.realtime.report import metadata, report_from_metadata, usage
from voice.serve.realtime.settings import RealtimeSettings, apply_update, session_config, session_object
from voice.serve.realtime.translate import Translator
from voice.wire import events
from voice.wire.report import LlmMetrics, TurnReport

pytest.importorskip("openai")
from openai.types.realtime import RealtimeServerEvent
from pydantic import TypeAdapter

STRICT: TypeAdapter[Any] = TypeAdapter(RealtimeServerEvent)


def frames(out: list[str]) -> list[dict[str, Any]]:
    """Validate each frame against the SDK's event union and return the parsed objects."""
    for f in out:
        STRICT.validate_json(f)
    return [json.loads(f) for f in out]


# ---------------------------------------------------------------------------------------------- client events
PCM = b"\x01\x00\x02\x00"
DECODED = [
    ('{"type":"session.update","session":{"instructions":"x"},"event_id":"e1"}',
     SessionUpdate({"instructions": "x"}, "e1")),
    (json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(PCM).decode()}), AudioAppend(PCM)),
    ('{"type":"input_audio_buffer.commit"}', AudioCommit()),
    ('{"type":"input_audio_buffer.clear"}', AudioClear()),
    ('{"type":"response.create","response":{}}', ResponseCreate()),
    ('{"type":"response.cancel","response_id":"r1"}', ResponseCancel("r1")),
    ('{"type":"conversation.item.create","item":{"type":"message","role":"user",'
     '"content":[{"type":"input_text","text":"hi "},{"type":"input_text","text":"there"}]}}',
     ItemCreate("user", "hi there")),
    ('{"type":"conversation.item.truncate","item_id":"i1","content_index":0,"audio_end_ms":1500}',
     ItemTruncate("i1", 0, 1500)),
    ('{"type":"output_audio_buffer.clear"}', Ignored("output_audio_buffer.clear")),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), DECODED, ids=[d[1].__class__.__name__ for d in DECODED])
def test_client_events_decode(text: str, expected: object) -> None:
    assert decode_client_event(text) == expected


BAD = [
    (b"\x00\x01", "binary_frame_not_supported", None),
    ("{not json", "invalid_json", None),
    ("[1]", "invalid_json", None),
    ('{"event_id":"e9"}', "missing_required_parameter", "type"),
    ('{"type":"x","event_id":"e9"}', "unsupported_event", "type"),
    ('{"type":"input_audio_buffer.append"}', "missing_required_parameter", "audio"),
    ('{"type":"input_audio_buffer.append","audio":"%%%"}', "invalid_value", "audio"),
    ('{"type":"input_audio_buffer.append","audio":"AAEC"}', "invalid_value", "audio"),  # 3 bytes: odd
    ('{"type":"session.update","session":[]}', "missing_required_parameter", "session"),
    ('{"type":"conversation.item.create","item":{"type":"function_call"}}', "invalid_value", "item.type"),
    ('{"type":"conversation.item.create","item":{"type":"message","role":"user",'
     '"content":[{"type":"input_audio","audio":"AAAA"}]}}', "invalid_value", "item.content[0]"),
    ('{"type":"conversation.item.truncate","item_id":"i","audio_end_ms":-1}', "invalid_value", "audio_end_ms"),
    ('{"type":"conversation.item.truncate","item_id":"i","audio_end_ms":true}', "invalid_value", "audio_end_ms"),
]  # fmt: skip


@pytest.mark.parametrize(("frame", "code", "param"), BAD)
def test_bad_client_events_get_an_error_naming_what_was_wrong(frame: str | bytes, code: str, param: str | None) -> None:
    err = decode_client_event(frame)
    assert isinstance(err, RealtimeError) and err.code == code and err.param == param and err.message
    if isinstance(frame, str) and '"event_id":"e9"' in frame:
        assert err.event_id == "e9"


def test_odd_audio_is_refused() -> None:
    err = decode_client_event(json.dumps({"type": "input_audio_buffer.append", "audio": "AAEC"}))
    assert isinstance(err, RealtimeError) and "even" in err.message


# ---------------------------------------------------------------------------------------------- settings
BASE = RealtimeSettings(model="m", instructions="sys")


def test_session_update_applies_what_is_supported() -> None:
    s = apply_update(BASE, {"type": "realtime", "instructions": "Be brief.", "output_modalities": ["text"],
                            "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000},
                                                "turn_detection": {"type": "server_vad", "silence_duration_ms": 500,
                                                                   "interrupt_response": False, "threshold": 0.6}}},
                            "tracing": "auto"}, "e1")  # fmt: skip
    assert isinstance(s, RealtimeSettings)
    assert (s.instructions, s.text_only, s.server_vad, s.silence_ms) == ("Be brief.", True, True, 500)
    config = session_config(make_config(), s)
    assert config.llm.system_prompt == "Be brief." and config.vad.barge_in is False
    assert config.vad.silence_ms == 500 and config.turn.complete_silence_ms == 500
    assert config.vad.threshold == 0.6 and config.vad.neg_threshold <= 0.6
    manual = apply_update(s, {"audio": {"input": {"turn_detection": None}}}, None)
    assert isinstance(manual, RealtimeSettings) and not manual.server_vad and manual.instructions == "Be brief."


def test_a_short_silence_window_keeps_the_config_valid() -> None:
    s = apply_update(BASE, {"audio": {"input": {"turn_detection": {"silence_duration_ms": 64}}}}, None)
    assert isinstance(s, RealtimeSettings)
    config = session_config(make_config(), s)
    assert config.turn.speculate_after_ms <= 64 and config.turn.score_after_ms <= 64


REFUSED = [
    ({"type": "transcription"}, "session.type"),
    ({"output_modalities": ["audio", "video"]}, "session.output_modalities"),
    ({"tools": [{"type": "function", "name": "f"}]}, "session.tools"),
    ({"audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}}, "session.audio.input.format"),
    ({"audio": {"output": {"format": {"type": "audio/pcmu"}}}}, "session.audio.output.format"),
    ({"audio": {"input": {"turn_detection": {"type": "server_vad", "create_response": False}}}},
     "session.audio.input.turn_detection.create_response"),
    ({"audio": {"input": {"turn_detection": {"silence_duration_ms": 0}}}},
     "session.audio.input.turn_detection.silence_duration_ms"),
    ({"audio": {"input": {"turn_detection": {"type": "magic"}}}}, "session.audio.input.turn_detection"),
    ({"instructions": 3}, "session.instructions"),
]  # fmt: skip


@pytest.mark.parametrize(("session", "param"), REFUSED)
def test_unsupported_settings_refuse_the_update_naming_the_field(session: dict[str, Any], param: str) -> None:
    err = apply_update(BASE, session, "e7")
    assert isinstance(err, RealtimeError) and err.param == param and err.event_id == "e7"


def test_session_config_errors_are_config_errors() -> None:
    bad = RealtimeSettings(model="m", instructions="x", threshold=0.3)
    config = make_config(vad={"neg_threshold": 0.2, "threshold": 0.5})
    assert session_config(config, bad).vad.neg_threshold == 0.2
    with pytest.raises(ConfigError):
        session_config(config, RealtimeSettings(model="m", instructions="x", silence_ms=-5))


# ---------------------------------------------------------------------------------------------- translator
def translator(**kw: Any) -> Translator:
    t = Translator("abc", **kw)
    t.session = session_object("sess_abc", BASE, make_config(), turn_model=False)
    return t


def report(turn_id: int, outcome: str = "ok", **kw: Any) -> TurnReport:
    fields: dict[str, Any] = {
        "session_id": "abc", "turn_id": turn_id, "outcome": outcome, "stages_ms": {"stt": 10.0}, "total_ms": 321.5,
        "target_ms": 500, "over_budget": [], "cancelled": outcome == "cancelled", "prompt_tokens_reused": 30,
        "prompt_tokens_evaluated": 5, "generated_tokens": 7, "reply_audio_ms": 1.0, **kw,
    }  # fmt: skip
    llm = LlmMetrics(n_tokens=7, ttft_ms=40.0, itl_mean_ms=20.0, itl_p95_ms=21.0, tps=50.0, e2e_ms=160.0)
    return TurnReport(**{"llm": llm, **fields})


def vad_turn(t: Translator, turn_id: int = 1, clauses: tuple[str, ...] = ("Hello there.", "How are you?")) -> list[str]:
    out = t.native(events.Ready(session_id="abc", protocol=1, input_sample_rate=24000, output_sample_rate=24000))
    out += t.native(events.SpeechStarted(audio_offset_ms=300.4))
    t.audio_in_ms = 1234.6
    out += t.native(events.SpeechEnded(turn_id=turn_id, forced=False, trailing_silence_ms=320.0))
    out += t.native(events.Transcript(turn_id=turn_id, text="hi"))
    out += t.native(events.AudioStart(turn_id=turn_id, sample_rate=24000, chunk_ms=40))
    for clause in clauses:
        out += t.native(events.ReplyText(turn_id=turn_id, text=clause))
        for _ in range(2):
            audio = t.audio(turn_id, b"\x00\x00" * 960)
            assert audio is not None
            out.append(audio)
    out += t.native(events.AudioEnd(turn_id=turn_id, audio_ms=80.0))
    out += t.native(report(turn_id))
    return out


def test_a_server_vad_turn_in_the_standard_order_with_consistent_ids() -> None:
    evs = frames(vad_turn(translator()))
    kinds = [e["type"] for e in evs]
    assert kinds == [
        "session.created",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.input_audio_transcription.completed",
        "conversation.item.done",
        "response.created",
        "response.output_item.added",
        "conversation.item.added",
        "response.content_part.added",
        "response.output_audio_transcript.delta",
        "response.output_audio.delta",
        "response.output_audio.delta",
        "response.output_audio_transcript.delta",
        "response.output_audio.delta",
        "response.output_audio.delta",
        "response.output_audio.done",
        "response.output_audio_transcript.done",
        "response.content_part.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    assert len({e["event_id"] for e in evs}) == len(evs)
    started, stopped = evs[1], evs[2]
    assert started["audio_start_ms"] == 300 and stopped["audio_end_ms"] == 1235  # integers
    user = started["item_id"]
    assert stopped["item_id"] == evs[3]["item_id"] == evs[5]["item_id"] == user and evs[5]["transcript"] == "hi"
    assert evs[5]["usage"] == {"type": "duration", "seconds": pytest.approx(0.935)}
    response = evs[7]["response"]["id"]
    assistant = evs[8]["item"]["id"]
    assert evs[9]["previous_item_id"] == user
    for e in evs[10:21]:
        assert e.get("response_id", response) == response and e.get("item_id", assistant) == assistant
    deltas = "".join(e["delta"] for e in evs if e["type"] == "response.output_audio_transcript.delta")
    assert deltas == "Hello there. How are you?" == evs[18]["transcript"]
    done = evs[-1]["response"]
    assert done["status"] == "completed" and done["output"][0]["content"][0]["transcript"] == deltas
    assert done["usage"]["input_token_details"]["cached_tokens"] == 30 and done["usage"]["input_tokens"] == 35
    assert done["metadata"]["voice.total_ms"] == "321.5"
    # The keys are part of the protocol (docs/protocol.md): a client reads the stages back from them.
    assert json.loads(done["metadata"]["voice.stages_ms"]) == {"stt": 10.0}


def test_barge_in_mutes_the_response_and_ends_it_cancelled() -> None:
    t = translator()
    out = t.native(events.Ready(session_id="abc", protocol=1, input_sample_rate=24000, output_sample_rate=24000))
    out += t.native(events.SpeechStarted(audio_offset_ms=0.0))
    out += t.native(events.SpeechEnded(turn_id=1, forced=False, trailing_silence_ms=320.0))
    out += t.native(events.Transcript(turn_id=1, text="hi"))
    out += t.native(events.AudioStart(turn_id=1, sample_rate=24000, chunk_ms=40))
    out += t.native(events.ReplyText(turn_id=1, text="A long answer"))
    first = t.audio(1, b"\x00\x00" * 960)
    assert first is not None
    out.append(first)
    out += t.native(events.SpeechStarted(audio_offset_ms=2000.0))  # the user talks again
    assert t.audio(1, b"\x00\x00" * 960) is None  # audio still on its way is not sent
    assert t.native(events.ReplyText(turn_id=1, text="more")) == []
    out += t.native(events.Interrupt(turn_id=1))
    out += t.native(report(1, "cancelled", cancelled=True))
    evs = frames(out)
    done = evs[-1]["response"]
    assert done["status"] == "cancelled" and done["status_details"] == {"type": "cancelled", "reason": "turn_detected"}
    assert done["output"][0]["status"] == "incomplete"
    kinds = [e["type"] for e in evs]
    assert kinds.index("input_audio_buffer.speech_started", 2) > kinds.index("response.output_audio.delta")
    assert "response.output_audio.delta" not in kinds[kinds.index("input_audio_buffer.speech_started", 2) :]


def test_a_manual_commit_is_answered_at_response_create() -> None:
    t = translator()
    out = t.committed(1.5)
    user = json.loads(out[0])["item_id"]
    out += t.request_response(text_only=False)
    assert t.response_active
    out += t.native(events.SpeechEnded(turn_id=1, forced=True, trailing_silence_ms=0.0))
    out += t.native(events.Transcript(turn_id=1, text="hello"))
    out += t.native(events.AudioStart(turn_id=1, sample_rate=24000, chunk_ms=40))
    out += t.native(events.ReplyText(turn_id=1, text="Hi."))
    out += t.native(report(1))
    evs = frames(out)
    kinds = [e["type"] for e in evs]
    assert kinds.count("response.created") == 1 and "input_audio_buffer.speech_stopped" not in kinds
    heard = next(e for e in evs if e["type"] == "conversation.item.input_audio_transcription.completed")
    assert heard["item_id"] == user and heard["usage"]["seconds"] == 1.5
    assert evs[-1]["response"]["id"] == evs[1]["response"]["id"] and not t.response_active


def test_text_only_responses_and_failures() -> None:
    t = translator()
    t.text_only = True
    out = t.item_created("user", "what time is it", None)[0]
    out += t.request_response(text_only=True)
    out += t.native(events.SpeechEnded(turn_id=1, forced=True, trailing_silence_ms=0.0))
    out += t.native(events.ReplyText(turn_id=1, text="Noon."))
    out += t.native(report(1))
    # A VAD turn that finds the models busy: an error, then a failed response.
    out += t.native(events.SpeechStarted(audio_offset_ms=0.0))
    out += t.native(events.SpeechEnded(turn_id=2, forced=False, trailing_silence_ms=320.0))
    out += t.native(events.Error(code="busy", message="too many turns", fatal=False))
    out += t.native(report(2, "busy"))
    evs = frames(out)
    kinds = [e["type"] for e in evs]
    assert "response.output_text.delta" in kinds and "response.output_audio.delta" not in kinds
    text_done = evs[kinds.index("response.done")]["response"]
    assert text_done["output"][0]["content"] == [{"type": "output_text", "text": "Noon."}]
    err = evs[kinds.index("error")]["error"]
    assert err["type"] == "server_error" and err["code"] == "busy"
    failed = evs[-1]["response"]
    assert failed["status"] == "failed" and failed["status_details"]["error"]["code"] == "busy"


def test_truncate_keeps_the_clauses_that_were_heard() -> None:
    t = translator()
    vad_turn(t, clauses=("One two three.", "Four five six."))  # 2 × 40 ms of audio per clause
    item = t._spoken[-1].item_id
    assert t.is_latest_assistant_item(item)
    answer = t.truncated(item, 0, 100)
    assert answer is not None
    out, heard = answer
    assert heard == "One two three. Four five six."  # the second clause started playing at 80 ms
    assert frames(out)[0]["audio_end_ms"] == 100
    early = t.truncated(item, 0, 50)
    assert early is not None and early[1] == "One two three."
    assert t.truncated("nope", 0, 10) is None


def test_opt_in_report_and_metadata_limits() -> None:
    t = translator(turn_reports=True)
    evs = [json.loads(f) for f in vad_turn(t)]
    assert evs[-2]["type"] == "response.done" and evs[-1]["type"] == "voice.turn_report"
    assert evs[-1]["report"]["total_ms"] == 321.5
    meta = metadata(report(1, stages_ms={f"s{i}": 1.0 for i in range(200)}))
    assert len(meta) <= 16 and all(isinstance(v, str) and len(v) <= 512 for v in meta.values())
    assert usage(report(1, prompt_tokens_reused=3, prompt_tokens_evaluated=0, generated_tokens=0))["total_tokens"] == 3


def test_a_client_reads_the_report_back_from_metadata_and_usage() -> None:
    r = report(3, stages_ms={"endpoint_silence": 321.0, "stt": 10.0}, prompt_tokens_reused=30)
    back = report_from_metadata({"status": "completed", "metadata": metadata(r), "usage": usage(r)})
    assert back["turn_id"] == 3 and back["outcome"] == "ok" and back["total_ms"] == r.total_ms
    assert back["stages_ms"] == r.stages_ms and back["reply_audio_ms"] == r.reply_audio_ms
    assert back["generated_tokens"] == 7 and back["prompt_tokens_reused"] == 30
    assert back["prompt_tokens_evaluated"] == 5


def test_native_errors_become_realtime_errors() -> None:
    t = translator()
    client_fault = frames(t.native(events.Error(code="rate_limited", message="pace it", fatal=False)))[0]
    assert client_fault["error"]["type"] == "invalid_request_error" and client_fault["error"]["message"] == "pace it"
    assert frames(t.native(events.Error(code="internal", message="x", fatal=False)))[0]["error"]["type"] == (
        "server_error"
    )
    assert t.native(events.Interrupt(turn_id=9, playback_only=True)) == []
