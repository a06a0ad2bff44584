"""The work from the pause: how long a reply's work took from its start (the pause, for a speculative reply; else
the endpoint) to its first audio being ready — in the turn report, the e2e bench's turns and summary, and the
model matrix beside the decision window it has to fit in. Expected values are written out from the marks set,
not computed by the code under test."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests.bench_results import FAKE_MACHINE_JSON
from voice.bench.clips import Clip
from voice.bench.e2e.result import E2eSummary, summarize
from voice.bench.e2e.turn import PlanItem, TurnResult, turn_result
from voice.bench.machine_record import Machine
from voice.bench.matrix.report import WORK_COLUMNS, conclusions, markdown, table
from voice.bench.matrix.result import (
    ComboRun,
    MatrixMeta,
    MatrixResult,
    MeasuredRow,
    decision_window_ms,
    row_from_json,
)
from voice.bench.stats import Described
from voice.client import ClientTurn, Conversation
from voice.clock import FakeClock
from voice.config.config import BudgetConfig
from voice.conversation.history import History
from voice.turn.budget import TurnTimer, build_report
from voice.turn.delivery import ReplySink
from voice.turn.speculation import HeldSink
from voice.turn.speculator import Speculation

#: The reply's marks (ms after the user's speech end) shared by the turns below; each case adds its own.
REPLY = {"stt_start": 40, "stt_done": 90, "llm_start": 95, "first_token": 150, "first_clause": 170, "tts_start": 175}

# (case, speculative start ms or None, marks ms, expected work ms, expected lead ms, expected tts_first_audio stage)
CASES = [
    ("ready before the endpoint", 32, {**REPLY, "tts_first_audio": 230, "endpoint": 320, "first_audio_sent": 321},
     198.0, 288.0, 0.0),
    ("ready after the endpoint", 32, {**REPLY, "endpoint": 320, "tts_first_audio": 410, "first_audio_sent": 412},
     378.0, 288.0, 90.0),
    ("not speculative", None, {"endpoint": 320, **{k: v + 300 for k, v in REPLY.items()}, "tts_first_audio": 560,
                               "first_audio_sent": 561}, 240.0, 0.0, 85.0),
    ("speculative, no audio", 32, {"stt_start": 40, "stt_done": 90, "endpoint": 320}, None, 288.0, None),
    ("not speculative, no audio", None, {"endpoint": 320, "stt_start": 330, "stt_done": 400}, None, 0.0, None),
]  # fmt: skip


def _turn(clock: FakeClock, started_ms: int | None, marks_ms: dict[str, int]) -> tuple[TurnTimer, int | None]:
    """A turn timed on ``clock`` from the user's speech end, the clock moved on to each event in time order; the
    speculative start's time (ns) if there is one."""
    timer, t0, started_ns = TurnTimer(clock, "s", 1), clock.now_ns(), None
    timer.mark("speech_end")
    events = sorted([*marks_ms.items(), *([("<start>", started_ms)] if started_ms is not None else [])],
                    key=lambda e: e[1])  # fmt: skip
    for name, at_ms in events:
        clock.advance_ms(at_ms - (clock.now_ns() - t0) / 1e6)
        if name == "<start>":
            started_ns = clock.now_ns()
        else:
            timer.mark(name)
    return timer, started_ns


@pytest.mark.parametrize(("started_ms", "marks_ms", "work_ms", "lead_ms", "tts_stage_ms"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])  # fmt: skip
def test_the_report_says_the_work_from_the_reply_start_to_its_first_audio(
    started_ms: int | None,
    marks_ms: dict[str, int],
    work_ms: float | None,
    lead_ms: float,
    tts_stage_ms: float | None,
) -> None:
    timer, started_ns = _turn(FakeClock(), started_ms, marks_ms)
    fields: dict[str, Any] = {}
    if started_ns is not None:  # what the session's speculation reports (committed at the endpoint)
        spec = Speculation(HeldSink(cast(ReplySink, None)), History(), timer, started_ns, 0)
        spec.committed_ns = timer.marks_ns["endpoint"]
        fields = spec.report_fields()
    report = build_report(timer, BudgetConfig(), **fields)
    assert report.work_to_first_audio_ms == work_ms
    assert report.speculation_lead_ms == lead_ms and report.speculative == (started_ms is not None)
    assert report.stages_ms.get("tts_first_audio") == tts_stage_ms  # the stage is clipped; the work is not
    assert report.to_dict()["work_to_first_audio_ms"] == work_ms


# ------------------------------------------------------------------------------------------ the e2e bench
def _client_turn(report: dict[str, Any]) -> Conversation:
    return Conversation(turns={1: ClientTurn(1, report=report)}, session_id="s", utterance_turns=[[1]])


@pytest.mark.parametrize(("report", "work_ms"), [({"work_to_first_audio_ms": 378}, 378.0), ({}, None)],
                         ids=["reported", "a server that does not report it"])  # fmt: skip
def test_an_e2e_turn_carries_the_work_and_writes_it_only_when_known(report: dict[str, Any], work_ms: float) -> None:
    clip = SimpleNamespace(name="a.wav", reference=None, speech_end_s=1.0, speech_end=SimpleNamespace(ambiguous=None))
    res = turn_result(PlanItem(cast(Clip, clip), "measured", 1), _client_turn({"outcome": "ok", **report}))
    assert res.work_to_first_audio_ms == work_ms
    written = json.loads(json.dumps(res.to_dict()))
    assert ("work_to_first_audio_ms" in written) == (work_ms is not None)
    assert TurnResult.from_dict(written) == res


def _measured(m2e_ms: float, work_ms: float | None, uncertain: str | None = None) -> TurnResult:
    return TurnResult("a.wav", 1, "measured", False, "ok", mouth_to_ear_ms=m2e_ms, work_to_first_audio_ms=work_ms,
                      uncertain=uncertain)  # fmt: skip


def test_the_e2e_summary_describes_the_work_and_reads_back() -> None:
    turns = [_measured(400, w) for w in (198.0, 378.0, 280.0, None, 240.0, 150.0)]
    turns.append(_measured(300, 5000.0, uncertain="speech end ambiguous"))  # left out, as from every statistic
    s = summarize(turns)
    # 150, 198, 240, 280, 378: p95 at rank 3.8 = 280 + 0.8 × 98
    assert s.work_to_first_audio == Described(n=5, p50=240.0, p95=358.4, max=378.0, min=150.0, mean=249.2)
    assert E2eSummary.from_json(json.loads(json.dumps(s.to_json()))) == s


def test_a_summary_without_the_work_writes_no_key_and_old_json_reads_back() -> None:
    s = summarize([_measured(400, None), _measured(420, None)])
    assert s.work_to_first_audio is None and "work_to_first_audio" not in s.to_json()
    assert E2eSummary.from_json(s.to_json()) == s


def test_the_e2e_tables_show_the_work_only_when_the_turns_have_it() -> None:
    from voice.bench.e2e.report import _stat_rows

    def work_row(s: E2eSummary) -> list[list[Any]]:
        return [r for r in _stat_rows(s) if r[0] == "work from the pause to first audio"]

    assert work_row(summarize([_measured(400, 120.0), _measured(420, 300.0)])) == [
        ["work from the pause to first audio", 210.0, 291.0, 300.0]
    ]
    assert work_row(summarize([_measured(400, None)])) == []


# ------------------------------------------------------------------------------------------ the matrix
MODEL_ON = {"speculate_after_ms": 32, "end_of_turn_model": "smart-turn-v3.2", "complete_silence_ms": 320}


@pytest.mark.parametrize(("config", "window_ms"), [
    ({"turn": MODEL_ON, "vad": {"silence_ms": 480}}, 288.0),
    ({"turn": {**MODEL_ON, "complete_silence_ms": 160}, "vad": {"silence_ms": 480}}, 128.0),
    ({"turn": {**MODEL_ON, "end_of_turn_model": ""}, "vad": {"silence_ms": 400}}, 368.0),
    ({"turn": {**MODEL_ON, "speculate_after_ms": 0}, "vad": {"silence_ms": 480}}, None),
    (None, None),
], ids=["complete window", "shorter window", "no end-of-turn model", "no speculation", "external server"])  # fmt: skip
def test_the_decision_window_comes_from_the_config_the_server_ran_with(
    config: dict[str, Any] | None, window_ms: float | None
) -> None:
    assert decision_window_ms(config) == window_ms


def _e2e_json(works_ms: list[float | None], config: dict[str, Any] | None) -> dict[str, Any]:
    """A ``voice bench e2e`` result as the matrix reads it."""
    summary = summarize([_measured(400 + k, w) for k, w in enumerate(works_ms)]).to_json()
    method = {k: "x" for k in ("speech_end", "first_audio", "reconciliation", "sessions", "pacing", "wer", "clock")}
    meta = {"machine": FAKE_MACHINE_JSON, "speech_dir": "/s", "method": {**method, "repeats": 1, "warmup": 0},
            "load_s": 1.0, "server": "in-process", "models": {}, "config": config, "ram_peak_mb": 1.0}  # fmt: skip
    return {"meta": meta, "summary": summary, "turns": [{"clip": "a.wav", "reply_text": "hi"}]}


def _row(llm: str, works_ms: list[float | None], config: dict[str, Any] | None) -> MeasuredRow:
    run = ComboRun("tiny.en", llm, "joe", 0, 10.0, 500.0, None)
    return MeasuredRow.from_e2e(run, "e.json", _e2e_json(works_ms, config))


CONFIG = {"turn": MODEL_ON, "vad": {"silence_ms": 480}}
FAST, SLOW = [100.0, 100.0, 100.0, 100.0, 220.0], [250.0, 250.0, 250.0, 250.0, 400.0]
"""Work p50 100 ms / p95 196 ms (rank 3.8: 100 + 0.8 × 120), and 250 / 370 (250 + 0.8 × 150)."""


def test_a_matrix_row_reports_the_work_and_reads_back() -> None:
    row = _row("fast", FAST, CONFIG)
    assert (row.work_to_first_audio_p50_ms, row.work_to_first_audio_p95_ms, row.decision_window_ms) == (
        100.0, 196.0, 288.0)  # fmt: skip
    assert row_from_json(json.loads(json.dumps(row.to_json()))) == row
    old = {k: v for k, v in row.to_json().items() if k not in ("work_to_first_audio_p50_ms",
           "work_to_first_audio_p95_ms", "decision_window_ms")}  # fmt: skip
    read = row_from_json(old)
    assert read.work_to_first_audio_p50_ms is None and read.to_json() == old
    assert "decision_window_ms" not in _row("old", [None], CONFIG).to_json()  # no work measured: no window either


@pytest.mark.parametrize(("config", "cells", "p95", "p50"), [
    (CONFIG, [["100 / 196", "35 % / 68 %"], ["250 / 370", "87 % / 128 %"]], "fast", "fast, slow"),
    ({"turn": {**MODEL_ON, "complete_silence_ms": 160}}, [["100 / 196", "78 % / 153 %"],
                                                          ["250 / 370", "195 % / 289 %"]], "none", "fast"),
], ids=["320 ms window", "160 ms window"])  # fmt: skip
def test_the_matrix_shows_how_much_of_the_decision_window_each_combination_needs(
    config: dict[str, Any], cells: list[list[str]], p95: str, p50: str
) -> None:
    rows = (_row("fast", FAST, config), _row("slow", SLOW, config))
    header, body = table(rows)
    at = header.index(WORK_COLUMNS[0])
    assert [b[at : at + 2] for b in body] == cells
    names = {"fast": "tiny.en + fast + joe", "slow": "tiny.en + slow + joe", "none": "none"}
    expected = f"at p95: {', '.join(names[n] for n in p95.split(', '))}; at p50: " + ", ".join(
        names[n] for n in p50.split(", "))  # fmt: skip
    assert any(expected in line for line in conclusions(rows))
    window = rows[0].decision_window_ms
    machine = Machine.from_json(FAKE_MACHINE_JSON)
    meta = MatrixMeta(machine, "/s", ("a.wav",), 1, 0, {"tts": ("joe",)}, None, "text", {})
    md = markdown(MatrixResult(meta, rows), None, None)
    assert f"of the configuration the combination ran with ({window:g} ms)" in md


def test_rows_without_the_work_keep_the_columns_they_had() -> None:
    rows = (_row("old", [None, None], CONFIG),)
    header, _ = table(rows)
    assert not set(WORK_COLUMNS) & set(header)
    assert not any("decision window" in line for line in conclusions(rows))
