import json

import pytest

from voice.clock import FakeClock
from voice.config.config import BudgetConfig
from voice.turn.budget import JsonlSink, TurnTimer, build_report
from voice.wire.report import MARKS, STAGES, LlmMetrics, percentile


def timer_with(clock: FakeClock, gaps_ms: list[float]) -> TurnTimer:
    t = TurnTimer(clock, "s1", 1)
    for name, gap in zip(MARKS, [0.0, *gaps_ms], strict=False):
        clock.advance_ms(gap)
        t.mark(name)
    return t


def test_stages_add_up_to_total() -> None:
    clock = FakeClock()
    gaps = [320, 5, 110, 2, 45, 60, 3, 80, 1]
    t = timer_with(clock, gaps)
    stages = t.stages_ms()
    assert list(stages) == list(STAGES)
    assert list(stages.values()) == [float(g) for g in gaps]
    assert t.total_ms() == pytest.approx(sum(stages.values()))
    assert t.total_ms() == 626.0


def test_over_budget_stages_are_named() -> None:
    clock = FakeClock()
    t = timer_with(clock, [320, 0, 100, 0, 61, 40, 0, 70, 10])
    report = build_report(t, BudgetConfig())
    assert report.over_budget == ("endpoint_silence", "llm_ttft")
    assert report.total_ms == 601.0
    line = report.summary_line()
    assert "endpoint_silence 320!" in line and "stt 100 " in line and "OVER" in line


def test_missing_marks_give_partial_stages_and_no_total() -> None:
    clock = FakeClock()
    t = TurnTimer(clock, "s", 2)
    t.mark("speech_end")
    clock.advance_ms(300)
    t.mark("endpoint")
    clock.advance_ms(90)
    t.mark("stt_done")  # stt_start missing
    assert t.stages_ms() == {"endpoint_silence": 300.0}
    assert t.total_ms() is None


def test_first_mark_wins_and_unknown_mark_rejected() -> None:
    clock = FakeClock()
    t = TurnTimer(clock, "s", 1)
    first = t.mark("tts_start")
    clock.advance_ms(50)
    assert t.mark("tts_start") == first
    with pytest.raises(ValueError, match="unknown mark"):
        t.mark("nope")


def test_e2e_equals_ttft_plus_n_itl() -> None:
    clock = FakeClock()
    t = TurnTimer(clock, "s", 1)
    t.mark("llm_start")
    clock.advance_ms(73)
    t.token()
    for gap in [9, 11, 10, 14, 8, 12]:
        clock.advance_ms(gap)
        t.token()
    m = t.llm_metrics()
    assert m is not None
    assert m.n_tokens == 7
    assert m.ttft_ms == 73.0
    assert m.itl_mean_ms == pytest.approx(64 / 6, abs=1e-3)
    assert m.e2e_ms == 137.0
    assert m.e2e_ms == pytest.approx(m.ttft_ms + (m.n_tokens - 1) * m.itl_mean_ms, abs=1e-2)
    assert m.tps == pytest.approx(1000 / m.itl_mean_ms, rel=1e-3)
    assert m.itl_p95_ms == pytest.approx(percentile([9, 11, 10, 14, 8, 12], 95))


def test_llm_metrics_without_tokens() -> None:
    assert LlmMetrics.from_marks(0, []) is None


def test_jsonl_sink_hides_text_unless_recording(tmp_path) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock()
    report = build_report(timer_with(clock, [1] * 9), BudgetConfig(), transcript="secret words")
    sink = JsonlSink(tmp_path / "sub" / "turns.jsonl")
    sink.write(report)
    sink.write(report)
    lines = (tmp_path / "sub" / "turns.jsonl").read_text().splitlines()
    assert len(lines) == 2
    row = json.loads(lines[0])
    assert "transcript" not in row
    assert row["total_ms"] == 9.0 and row["stt_ms"] == 1.0 and row["session_id"] == "s1"
    JsonlSink(tmp_path / "rec.jsonl", include_text=True).write(report)
    assert json.loads((tmp_path / "rec.jsonl").read_text())["transcript"] == "secret words"


def test_percentile() -> None:
    assert percentile([5.0], 95) == 5.0
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile(list(range(101)), 95) == 95
    with pytest.raises(ValueError):
        percentile([], 50)
