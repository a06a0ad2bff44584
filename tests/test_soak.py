"""``voice soak``'s figures and its ``--json``: busy replies retried as a well-behaved client would, every figure
as one JSON object, and the exit status as the verdict (issue 33)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from tests.netkit import running, server_config
from tests.units import FAKE_MS
from voice.cli import main
from voice.reliability.figures import Process, SoakFigures, StopTrial, figures_json
from voice.reliability.probe import Probe
from voice.reliability.soak import Ask, _answered_this_ask, run_soak
from voice.reliability.tagged import tagged_runtime, tagged_speech


def _process(rss_mib: float, threads: int) -> Process:
    return Process(rss_mib, fds=40, threads=threads, tasks=3, thread_names=Counter({"model": 4, "py:vad": 1}))


def real_shaped_figures() -> SoakFigures:
    """Figures as a real soak leaves them: counters filled in, process figures, disconnect trials."""
    figures = SoakFigures(mode="real", sessions=4, turns_planned=40, turns_ok=40, misheard=2)
    figures.outcomes = Counter({"ok": 40, "busy": 3})
    figures.client_errors = Counter({"busy": 3})
    figures.retries_per_turn = Counter({0: 38, 1: 1, 2: 1})
    figures.baseline, figures.after = _process(900.0, 30), _process(925.5, 30)
    figures.rss_timeline = [901.0, 910.5]
    figures.stop_trials = [
        StopTrial("close", "transcript", 12.5, True, True, 8.25, "llm", 20.0, True),
        StopTrial("reset", "audio_start", 80.0, True, False, 0.0, "", 15.0, True),
    ]
    figures.machine = "2 cores (Test CPU)"
    figures.kv_mib_baseline, figures.kv_mib_after = 4.0, 12.5
    return figures


def test_the_json_of_a_real_shaped_soak_has_every_figure_and_verdict() -> None:
    figures = real_shaped_figures()
    d = json.loads(figures_json(figures))
    assert d["outcomes"] == {"ok": 40, "busy": 3}
    assert d["client_errors"] == {"busy": 3}
    assert d["retries_per_turn"] == {"0": 38, "1": 1, "2": 1}
    assert d["baseline"]["thread_names"] == {"model": 4, "py:vad": 1}
    assert [t["mode"] for t in d["stop_trials"]] == ["close", "reset"] and d["stop_trials"][0]["stop_ms"] == 8.25
    assert d["rss_growth_mib"] == 25.5 and d["machine"] == "2 cores (Test CPU)"
    assert d["rss_growth_beyond_kv_mib"] == 25.5 - (12.5 - 4.0)
    assert [v["pass"] for v in d["verdicts"]] == [ok for _, ok in figures.verdicts()]
    assert d["passed"] is figures.passed() is True


def test_the_figures_count_the_busy_retries() -> None:
    figures = real_shaped_figures()
    assert figures.busy_retries == 3  # one turn retried once, one twice
    assert "busy replies retried after retry_after_ms: 3 (answered turns by tries needed: 1: 38, 2: 1, 3: 1)" in (
        figures.render()
    )


def _stdout_json(capsys: pytest.CaptureFixture[str]) -> list[Any]:
    """Every line of stdout, each parsed as JSON (fails on any line that is not)."""
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_soak_json_prints_one_object_and_exits_with_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["soak", "--fake", "--turns", "6", "--sessions", "2", "--stop-trials", "2", "--json"])
    (figures,) = _stdout_json(capsys)
    assert figures["turns_ok"] == 6 and len(figures["stop_trials"]) == 2
    assert rc == (0 if figures["passed"] else 1)
    assert figures["passed"] is all(v["pass"] for v in figures["verdicts"])


def test_demo_json_prints_one_report_per_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setattr("voice.loader.load_runtime", lambda config, **kw: tagged_runtime(0.02 * FAKE_MS))
    rc = main(["demo", "--json", "--turn-log", "", "--out", str(tmp_path / "reply.wav"), "--question", "Hello?"])
    reports = _stdout_json(capsys)
    assert rc == 0 and len(reports) == 1
    assert {"turn_id", "outcome", "stages_ms", "mouth_to_ear_ms"} <= set(reports[0])


async def test_a_busy_reply_is_waited_out_and_asked_again() -> None:
    """Three sessions at once and room for one turn (no speculation: every turn holds its place from the end of
    its utterance): some get ``busy``, wait its ``retry_after_ms`` and ask again; every turn is answered, none
    counts as lost or mis-routed."""
    figures = await run_soak(
        tagged_runtime(0.5 * FAKE_MS, max_queue=1),
        server_config({"max_queue": 1, "max_sessions": 4}, turn={"speculate_after_ms": 0}),
        mode="fake (max_queue 1)",
        turns=6,
        sessions=3,
        warmup_turns=1,
        stop_trials=0,
    )
    assert figures.outcomes["busy"] > 0, figures.render()
    assert figures.busy_retries == figures.outcomes["busy"] == figures.client_errors["busy"]
    assert (figures.turns_ok, figures.dropped, figures.misrouted, figures.duplicated) == (6, 0, 0, 0)
    assert sum(figures.retries_per_turn.values()) == 6
    assert figures.passed(), figures.render()


@pytest.mark.parametrize(
    ("transcript", "reply", "answered", "misheard"),
    [
        ("What is the capital of France?", "Paris.", True, False),
        ("What is the capital of friends?", "I don't know.", True, True),  # misheard, still this session's turn
        ("What is the capital of Germany?", "Berlin.", False, True),  # another session's question: mis-routed
        ("What is the capital of France?", "", False, False),  # heard, but no reply
    ],
)
def test_a_real_turn_is_answered_unless_it_heard_another_session(
    transcript: str, reply: str, answered: bool, misheard: bool
) -> None:
    ask = Ask(np.zeros(16, np.int16), "France", exact=False, foreign=("Germany", "Italy"))
    assert _answered_this_ask(ask, transcript, reply) == (answered, misheard)


async def test_a_turn_scored_unfinished_still_ends_for_a_client_that_keeps_sending_silence() -> None:
    """The end-of-turn model scores every turn unfinished, so the turn needs ``[turn] incomplete_silence_ms``
    (960 ms) of silence: more than the 0.5 s the probe says after its speech. Like a microphone, it goes on
    sending silence until the server hears the end (the real soak hung there for ten minutes)."""
    runtime = tagged_runtime(0.02 * FAKE_MS)
    runtime.turn_score = lambda audio: 0.0
    async with running(runtime) as srv:
        probe = await Probe.connect(srv.url)
        report = await probe.turn(tagged_speech("s1t1"), timeout_s=10, silence_s=0.5)
        await probe.close()
    assert report["outcome"] == "ok" and report["transcript"] == "s1t1"
    assert report["turn_score"] == 0.0


def test_the_rss_verdict_leaves_out_what_the_saved_kv_states_grew_by() -> None:
    """The KV states are a cache with a configured bound; growth beyond them is what would be a leak."""
    figures = real_shaped_figures()
    figures.after = _process(960.0, 30)  # +60 MiB, of which the KV states 8.5
    assert figures.rss_growth_beyond_kv_mib == 51.5
    assert not figures.passed()
    figures.kv_mib_after = 14.0  # +10 MiB of KV states: 50 MiB beyond them
    assert figures.passed(), figures.render()


async def test_the_soak_and_its_disconnect_trials_end_turns_scored_unfinished() -> None:
    """Every turn scored unfinished, the soak's turns and its disconnect trials (which ask for a long reply, then
    drop the connection) still reach the end of each turn: their clients keep sending silence."""
    runtime = tagged_runtime(0.02 * FAKE_MS)
    runtime.turn_score = lambda audio: 0.0
    figures = await run_soak(
        runtime, server_config({"max_sessions": 4}), mode="fake (unfinished)", turns=4, sessions=2, stop_trials=2,
        warmup_turns=1, turn_timeout_s=20.0,
    )  # fmt: skip
    assert figures.turns_ok == 4 and [t.next_ok for t in figures.stop_trials] == [True, True], figures.render()
