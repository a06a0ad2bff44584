"""voice bench techniques: the steps add one technique each and end at the default configuration."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from voice.bench.clips import BenchError
from voice.bench.e2e.turn import TurnResult
from voice.bench.techniques.measure import Step, _row, select, steps
from voice.bench.techniques.result import StepRow
from voice.config.config import Config


def test_steps_start_serial_and_end_at_the_defaults() -> None:
    plan = steps(Config())
    names = [s.name for s, _ in plan]
    assert names == [
        "serial", "speculate", "short_stt", "first_chunk", "trim_lead", "smart_turn", "early_pause", "energy_pause",
        "stream_tts", "gated_turn_model",
    ]
    serial = plan[0][1]
    assert serial.turn.speculate_after_ms == 0 and serial.stt.min_window_s == 0.0
    assert serial.turn.end_of_turn_model == ""
    assert serial.tts.trim_lead_ms < 0 and serial.tts.max_first_chunk_words == 12 and serial.tts.stream_first_ms == 0
    # The last step run by default is what a user gets, and says so; the trial comes after it, on top of it.
    default_run = select(plan, None)
    assert [s.name for s, _ in default_run] == names[:-1]
    assert default_run[-1][1] == Config()
    assert default_run[-1][0].description.endswith("(= the configuration given)")
    assert [s.name for s, c in plan if c == Config()] == ["stream_tts"]
    trial = plan[-1]
    assert trial[0].trial and trial[1] == dataclasses.replace(
        Config(), turn=dataclasses.replace(Config().turn, score_in_gate=True)
    )
    chosen = select(plan, "smart_turn,gated_turn_model")
    assert [s.name for s, _ in chosen] == ["smart_turn", "gated_turn_model"] and chosen[1][1] == trial[1]
    with pytest.raises(BenchError, match=r"unknown step.*warp"):
        select(plan, "warp")
    # Every step changes something.
    configs = [c for _, c in plan]
    assert all(a != b for a, b in itertools.pairwise(configs))


def turn(clip: str, m2e: float | None, reply: str, transcript: str = "turn on the lamp") -> TurnResult:
    return TurnResult(
        clip=clip,
        repeat=1,
        phase="measured",
        first_after_load=False,
        outcome="ok" if m2e is not None else "no_audio",
        mouth_to_ear_ms=m2e,
        stages_ms={"stt": 100.0},
        reference="Turn on the lamp.",
        transcript=transcript,
        reply_text=reply,
    )


def test_row_counts_speed_beside_quality() -> None:
    step = Step("x", "x", lambda c: c)

    def row(turns: list[TurnResult], baseline: dict[str, str] | None) -> StepRow:
        return _row(step, turns, baseline, load_average_before=(0.5, 0.25, 0.125), seconds=1.5)

    base = row([turn("a", 400.0, "Done."), turn("b", 600.0, "Okay.")], None)
    assert base.p50_ms == 500.0 and base.within_target == 1 and base.failed == 0
    assert base.wer_normalized == 0.0 and base.replies_same_as_serial is None
    later = row([turn("a", 300.0, "Done."), turn("b", None, "Sure.", "turn of the lamp")], base.replies)
    assert later.failed == 1 and later.p50_ms == 300.0 and later.replies_same_as_serial == 1
    assert later.wer_normalized == 0.125  # 1 substitution in 8 reference words
