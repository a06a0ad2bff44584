"""Protocol additions for the browser page (issue 11), without sockets: the client's ``played`` message and
the stage budgets and offsets in ``turn_report``."""

from __future__ import annotations

import itertools

import pytest

from voice.clock import FakeClock
from voice.config.config import BudgetConfig
from voice.turn.budget import TurnTimer, build_report
from voice.wire import protocol as p
from voice.wire.report import MARKS, STAGES


def _timer(gaps_ms: list[float]) -> TurnTimer:
    clock = FakeClock()
    t = TurnTimer(clock, "s1", 1)
    for name, gap in zip(MARKS, [0.0, *gaps_ms], strict=False):
        clock.advance_ms(gap)
        t.mark(name)
    return t


def test_each_stage_starts_where_the_previous_ended_and_carries_its_budget() -> None:
    gaps = [320.0, 5.0, 110.0, 2.0, 45.0, 60.0, 3.0, 80.0, 1.0]
    report = build_report(_timer(gaps), BudgetConfig())
    assert list(report.stage_offsets_ms) == list(STAGES)
    assert list(report.stage_offsets_ms.values()) == list(itertools.accumulate([0.0, *gaps[:-1]]))
    last = STAGES[-1]
    assert report.stage_offsets_ms[last] + report.stages_ms[last] == report.total_ms
    assert report.stage_budgets_ms == {k: float(v) for k, v in BudgetConfig().allocations_ms().items()}
    sent = report.to_dict()  # what the turn_report event carries
    assert sent["stage_offsets_ms"] == report.stage_offsets_ms and sent["stage_budgets_ms"] == report.stage_budgets_ms


def test_stages_after_a_missing_mark_have_no_offset() -> None:
    clock = FakeClock()
    t = TurnTimer(clock, "s1", 1)
    for name in ("speech_end", "endpoint", "stt_start", "stt_done"):
        clock.advance_ms(10)
        t.mark(name)
    clock.advance_ms(10)
    t.mark("first_token")  # llm_start never marked: llm_queue and llm_ttft are unknown
    clock.advance_ms(10)
    t.mark("first_clause")
    report = build_report(t, BudgetConfig(), cancelled=True)
    assert "first_clause" in report.stages_ms
    assert report.stage_offsets_ms == {"endpoint_silence": 0.0, "stt_queue": 10.0, "stt": 20.0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"type": "played", "turn_id": 3}', p.Played(3, None)),
        ('{"type": "played", "turn_id": 3, "mouth_to_ear_ms": 812.5}', p.Played(3, 812.5)),
        ('{"type": "played", "turn_id": 1, "mouth_to_ear_ms": 0}', p.Played(1, 0.0)),
        ('{"type": "played", "turn_id": 2, "played_ms": 1520}', p.Played(2, None, 1520.0)),
        ('{"type": "played", "turn_id": 2, "played_ms": 0, "mouth_to_ear_ms": 3.5}', p.Played(2, 3.5, 0.0)),
    ],
)
def test_played_decodes(text: str, expected: p.Played) -> None:
    assert p.decode_client_text(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"type": "played"}', "'turn_id'"),
        ('{"type": "played", "turn_id": true}', "'turn_id' must be an integer"),
        ('{"type": "played", "turn_id": "1"}', "'turn_id' must be an integer"),
        ('{"type": "played", "turn_id": 0}', "'turn_id' must be a turn id"),
        ('{"type": "played", "turn_id": 1, "mouth_to_ear_ms": -1}', "'mouth_to_ear_ms'"),
        ('{"type": "played", "turn_id": 1, "mouth_to_ear_ms": "fast"}', "'mouth_to_ear_ms'"),
        ('{"type": "played", "turn_id": 1, "mouth_to_ear_ms": false}', "'mouth_to_ear_ms'"),
        ('{"type": "played", "turn_id": 1, "played_ms": -0.5}', "'played_ms' must be milliseconds"),
        ('{"type": "played", "turn_id": 1, "played_ms": [1]}', "'played_ms' must be milliseconds"),
        ('{"type": "played", "turn_id": 1, "played_at": 5}', "unknown field(s) in played: played_at"),
    ],
)
def test_a_bad_played_message_names_the_field(text: str, words: str) -> None:
    err = p.decode_client_text(text)
    assert isinstance(err, p.ProtocolError) and err.code == p.BAD_MESSAGE
    assert words in err.message


def test_unknown_types_list_played_among_the_known_ones() -> None:
    err = p.decode_client_text('{"type": "dance"}')
    assert isinstance(err, p.ProtocolError) and err.code == p.UNKNOWN_TYPE and "played" in err.message
