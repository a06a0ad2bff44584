"""The protocol's typed messages without sockets: server events encode and decode to the same values, the
decoder names what is wrong with a bad event and accepts a newer server's, and ``docs/protocol.md`` lists
exactly the fields of the types."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from voice.wire import events
from voice.wire.protocol import (
    _PLAYED_FIELDS,
    _START_FIELDS,
    BAD_JSON,
    BAD_MESSAGE,
    UNKNOWN_TYPE,
    EndTurn,
    Played,
    ProtocolError,
    Reset,
    Start,
    Stop,
    decode_client_text,
    encode_client,
)
from voice.wire.report import LlmMetrics, TurnReport

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"

REPORT = TurnReport(
    session_id="3f9c2a1b",
    turn_id=2,
    stages_ms={"endpoint_silence": 376.5, "stt": 0.0, "send": 2.0},
    total_ms=378.5,
    target_ms=500,
    over_budget=("endpoint_silence",),
    cancelled=False,
    prompt_tokens_reused=25,
    prompt_tokens_evaluated=13,
    generated_tokens=7,
    llm=LlmMetrics(n_tokens=7, ttft_ms=45.0, itl_mean_ms=16.5, itl_p95_ms=18.0, tps=60.6, e2e_ms=144.0),
    transcript="What is 12 times 7?",
    reply_text="84.",
    turn_score=0.93,
    stage_offsets_ms={"endpoint_silence": 0.0, "stt": 376.5},
    reply_audio_sent_spread_ms=None,
)

EVERY_EVENT: list[events.ServerEvent] = [
    events.Ready("3f9c2a1b", 1, 48000, 22050),
    events.SpeechStarted(300.0),
    events.SpeechEnded(1, False, 320.0),
    events.Transcript(1, "What is the capital of France?"),
    events.AudioStart(1, 22050, 40),
    events.ReplyText(1, "The capital of France is Paris."),
    events.AudioEnd(1, 1950.0),
    events.Interrupt(1),
    events.Interrupt(2, playback_only=True),
    events.Error("busy", "too many turns", False, retry_after_ms=250),
    events.Error("timeout", "idle for 60 s", True),
    REPORT,
]


@pytest.mark.parametrize("ev", EVERY_EVENT, ids=lambda e: events.event_type(e))
def test_every_event_decodes_to_what_was_encoded(ev: events.ServerEvent) -> None:
    text = events.encode_server(ev)
    assert json.loads(text)["type"] == events.event_type(ev)
    assert events.decode_server(text) == ev


def test_the_wire_format_is_the_documented_one() -> None:
    assert json.loads(events.encode_server(events.AudioStart(3, 22050, 40))) == {
        "type": "audio_start", "turn_id": 3, "sample_rate": 22050, "chunk_ms": 40, "channels": 1, "format": "s16le"
    }  # fmt: skip
    # retry_after_ms is sent only with busy; a report carries its stages flat too ("<stage>_ms").
    assert "retry_after_ms" not in json.loads(events.encode_server(events.Error("internal", "x", False)))
    wire = json.loads(events.encode_server(REPORT))
    assert wire["endpoint_silence_ms"] == 376.5 and wire["over_budget"] == ["endpoint_silence"]
    assert wire["llm"]["ttft_ms"] == 45.0 and wire["turn_score"] == 0.93


def test_error_of_a_protocol_error_is_fatal_when_it_closes_the_connection() -> None:
    assert events.Error.of(ProtocolError("unauthorized", "no token", close_code=1008)).fatal
    busy = events.Error.of(ProtocolError("busy", "full", retry_after_ms=400))
    assert not busy.fatal and busy.retry_after_ms == 400


@pytest.mark.parametrize(
    ("text", "code", "says"),
    [
        ("not json", BAD_JSON, "JSON"),
        ("[1, 2]", BAD_MESSAGE, "not a server event"),
        ('{"turn_id": 1}', BAD_MESSAGE, "not a server event"),
        ('{"type": "speech_ended", "forced": false, "trailing_silence_ms": 320}', BAD_MESSAGE,
         "speech_ended needs a field 'turn_id'"),
        ('{"type": "transcript", "turn_id": 1, "text": 5}', BAD_MESSAGE, "transcript.text must be str, got 5"),
        ('{"type": "audio_end", "turn_id": true, "audio_ms": 1}', BAD_MESSAGE, "audio_end.turn_id must be int"),
        ('{"type": "ready", "session_id": "a", "protocol": 1, "input_sample_rate": 16000, "output_sample_rate": "x"}',
         BAD_MESSAGE, "ready.output_sample_rate must be int, got 'x'"),
        ('{"type": "turn_report", "session_id": "a", "turn_id": 1, "stages_ms": {"stt": "slow"}, "total_ms": null,'
         ' "target_ms": 500, "over_budget": [], "cancelled": false}', BAD_MESSAGE,
         "turn_report.stages_ms.stt must be float, got 'slow'"),
        ('{"type": "turn_report", "session_id": "a", "turn_id": 1, "stages_ms": {}, "total_ms": null,'
         ' "target_ms": 500, "over_budget": [], "cancelled": false, "llm": {"n_tokens": 3}}', BAD_MESSAGE,
         "turn_report.llm needs a field 'ttft_ms'"),
        ('{"type": "session.created"}', UNKNOWN_TYPE, "unknown server event type 'session.created'"),
    ],
)  # fmt: skip
def test_a_bad_event_is_refused_with_what_was_wrong(text: str, code: str, says: str) -> None:
    err = events.decode_server(text)
    assert isinstance(err, ProtocolError) and err.code == code and says in err.message, err


def test_a_newer_servers_events_decode_fields_unknown_here_are_ignored() -> None:
    newer = {"type": "speech_ended", "turn_id": 4, "forced": True, "trailing_silence_ms": 0, "confidence": 0.9}
    assert events.decode_server(json.dumps(newer)) == events.SpeechEnded(4, True, 0.0)
    # An old server's report, without the fields added after version 1, takes their defaults.
    old = {k: v for k, v in json.loads(events.encode_server(REPORT)).items() if k not in ("turn_score", "llm")}
    decoded = events.decode_server(json.dumps(old))
    assert isinstance(decoded, TurnReport) and decoded.turn_score is None and decoded.llm is None
    assert decoded.stages_ms == REPORT.stages_ms and decoded.over_budget == REPORT.over_budget


@pytest.mark.parametrize(
    "msg",
    [
        Start(48000),
        Start(16000, output_sample_rate=24000, token="t0k"),
        EndTurn(),
        Reset(),
        Stop(),
        Played(3, 412.5),
        Played(4, None, 980.0),
    ],
)
def test_every_client_message_decodes_to_what_was_encoded(msg: Any) -> None:
    assert decode_client_text(encode_client(msg)) == msg


# ------------------------------------------------------------------------------------- docs/protocol.md
def _table(heading: str) -> dict[str, set[str]]:
    """The fields each message type of a ``| type | fields | meaning |`` table lists (names in backticks,
    leaving out what is in parentheses: values and notes)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not re.fullmatch(r"`[a-z_]+`", cells[0]):
            continue
        fields = cells[1]
        while re.search(r"\([^()]*\)", fields):
            fields = re.sub(r"\([^()]*\)", "", fields)
        rows[cells[0].strip("`")] = set(re.findall(r"`([a-z_]+)`", fields))
    return rows


def test_the_server_event_table_lists_exactly_the_fields_of_each_type() -> None:
    documented = _table("## Server → client")
    assert set(documented) == set(events.EVENT_TYPES), "event types in docs/protocol.md vs voice/wire/events.py"
    for kind, cls in events.EVENT_TYPES.items():
        if cls is TurnReport:
            continue  # its own section, below
        assert documented[kind] == {f.name for f in dataclasses.fields(cls)}, kind


def test_the_turn_report_section_names_every_field() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### `turn_report`", 1)[1].split("\n## ", 1)[0]
    missing = [f.name for f in dataclasses.fields(TurnReport) if f"`{f.name}`" not in section and
               f'"{f.name}"' not in section]  # fmt: skip
    assert missing == []


def test_the_client_message_table_lists_exactly_the_fields_each_accepts() -> None:
    documented = _table("## Client → server")
    assert documented["start"] == _START_FIELDS - {"type"}
    assert documented["played"] == _PLAYED_FIELDS - {"type"}
    assert documented["end_turn"] == documented["reset"] == documented["stop"] == set()
