"""voice bench e2e's typed summary writes the JSON, the Markdown and the console text the dict-based code wrote:
the whole command on scripted turns (every kind of turn the summary counts: measured, uncertain, failed, no
turn, split, asked again, in a burst; and with ``--compare-direct``), against digests of what that code wrote
for the same runs; the summary of no turn at all as a literal; and the committed results made by the current
code, read back to the same JSON and Markdown."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import (
    RESULTS,
    check_committed,
    committed_machine,
    digests,
    run_command,
    same_json,
    sha256,
)
from voice.bench.e2e import command as e2e_cmd
from voice.bench.e2e.measure import E2eOptions, verdict_lines
from voice.bench.e2e.meta import ClipInfo
from voice.bench.e2e.report import markdown
from voice.bench.e2e.result import E2eResult, E2eSummary, summarize
from voice.bench.e2e.turn import PlanItem, TurnResult
from voice.config.config import Config

#: sha256 of the JSON (``json.dumps``), the Markdown and the console text the dict-based code wrote (the JSON's
#: with the clips of :func:`clip_json`, before the meta and the clips were typed). The JSON and the Markdown changed
#: once since, on purpose: the method's ``wer_normalized`` sentence says numbers are scored digit by digit
#: (2026-12-06); with the sentence as it was, the digests were the dict code's.
DIGESTS = {
    "url": ("4b2795dff40ba48862b8e959edbb3db1382e5748cadc3d63e925b5fb63e95aee",
            "e005efa597f4517a9cd17140bc83bc31e5fd8471b037e2299672f6c68013e728",
            "bd7dbf5319d1805a45fba156b6e0eb4debb73c36ef93b76e9dca80de57b341da"),
    "compare": ("a9e2b81ec61e328699133d17155a8e5f56c578f925c257205ddf5fa4d275c6a2",
                "efe767ae168343c7bb7dd74f35405403281d1c96bfb69861db9bc75360316b49",
                "0c6205bffdf2cc37be2de7e2c2f4674990f5282c12a94f1fb431e42183d7cf09"),
}  # fmt: skip

#: What the dict-based code's ``summarize([])`` returned, keys in order.
NOTHING = {"n": 0, "p50": None, "p95": None, "max": None, "min": None, "mean": None}
EMPTY_SUMMARY = {
    "n_turns": 0, "n_measured": 0, "n_failed": 0, "failed": [], "n_uncertain": 0, "uncertain": [],
    "p50_ms": None, "p95_ms": None, "max_ms": None, "min_ms": None, "mean_ms": None, "stages": {},
    "server_total": NOTHING, "p50_reconciliation_error_ms": None, "reconciliation_error": NOTHING,
    "reconciliation_error_abs_max_ms": None, "speech_end_offset": NOTHING, "reply_lead_silence": NOTHING,
    "residual": NOTHING, "wer": None, "wer_normalized": None, "wer_mean": None, "reply_tokens": NOTHING,
    "reply_audio_s": NOTHING, "llm_ttft": NOTHING, "llm_itl": NOTHING, "llm_tps": NOTHING, "within_target": 0,
    "within_human_gap": 0, "meets_target": "n/a", "meets_human_gap": "n/a", "asked_again": 0, "split_clips": [],
    "false_endpoints": 0, "split_turns_interrupting": 0, "split_first_answer_p50_ms": None,
    "other_cpu_percent_max": 0.0, "send_lag_max_ms": 0.0, "send_lag_before_endpoint_max_ms": 0.0, "n_burst": 0,
    "n_burst_judged": 0, "burst": [],
}  # fmt: skip


CLIPS = ("a.wav", "b.wav", "c.wav")


def clip_json(name: str) -> dict[str, Any]:
    """What :meth:`voice.bench.clips.Clip.describe` says of a clip, as written (every key; ``b.wav`` annotated,
    ``c.wav`` ambiguous and without a transcript)."""
    return {
        "clip": name, "duration_s": 2.5, "speech_start_s": 0.32, "speech_end_s": 1.805, "speech_end_vad_s": 1.824,
        "speech_end_energy_s": 1.79, "speech_end_annotated": name == "b.wav",
        "speech_end_ambiguous": "two candidate ends 120 ms apart" if name == "c.wav" else None,
        "background_db": -62.5, "file_rate_hz": 16000, "file_channels": 1, "noise_floor_db": -60.25,
        "threshold_db": -45.0, "ignored_bursts": 1, "reference": None if name == "c.wav" else "Turn on.",
    }  # fmt: skip


class FakeClip:
    def __init__(self, name: str) -> None:
        self.name = name

    def describe(self) -> ClipInfo:
        return ClipInfo.from_json(clip_json(self.name))


STAGES = ("endpoint_silence", "stt", "llm_ttft", "tts_first_audio")


def scripted_turn(item: PlanItem, k: int, route: str = "") -> TurnResult:
    """The ``k``-th turn of a run: one of seven kinds by ``k % 7`` (see the module docstring); a direct turn
    (``route``) is 23 ms faster."""
    kind = k % 7
    fast = 23.0 if route else 0.0
    m2e = None if kind in (2, 5) else round(310.0 + 41.5 * k - fast, 1)
    stages = {s: 50.0 + 3 * i + k for i, s in enumerate(STAGES)} if m2e is not None else {}
    total = round(sum(stages.values()), 1) if stages else None
    return TurnResult(
        clip=item.clip.name,
        repeat=item.repeat,
        phase=item.phase,
        first_after_load=item.first_after_load,
        outcome={2: "timeout", 5: "no_turn"}.get(kind, "ok"),
        turn_id=None if m2e is None else 1,
        turns_heard=3 if kind == 3 else (0 if kind == 5 else 1),
        first_answer_ms=520.0 + k if kind == 3 else None,
        first_answer_interrupted=kind == 3,
        mouth_to_ear_ms=m2e,
        stages_ms=stages,
        server_total_ms=total,
        reconciliation_error_ms=None if m2e is None or total is None else round(m2e - total, 1),
        speech_end_offset_ms=None if m2e is None else 12.5 - k,
        reply_lead_silence_ms=None if m2e is None else 40.0,
        residual_ms=None if m2e is None or kind == 6 else 3.0 + k,
        wer=None if kind == 6 else 0.25 * (k % 3),
        wer_normalized=None if kind == 6 else 0.125 * (k % 3),
        uncertain="speech end ambiguous (noise)" if kind == 1 else None,
        reference=None if kind == 6 else "Turn on the lamp.",
        transcript="" if m2e is None else ("turn of the lamp" if k % 3 else "turn on the lamp"),
        reply_text="" if m2e is None else ("Sorry, say it again?" if kind == 4 else f"Done {k}."),
        asked_again=kind == 4,
        reply_tokens=None if m2e is None else 3 + k,
        reply_audio_s=None if m2e is None else 1.25 + 0.1 * k,
        llm=None if m2e is None else {"n_tokens": 3 + k, "ttft_ms": 44.0 + k, "itl_mean_ms": 10.5, "tps": 90.0 - k},
        send_lag_max_ms=1.5 * kind,
        send_lag_before_endpoint_ms=0.5 * kind,
        other_cpu_percent=12.5 if kind == 6 else None,
        error="TimeoutError: no reply in 60 s" if kind == 2 else None,
        route=route,
        burst=True if kind == 3 else (None if m2e is None else False),
        burst_why="8 chunks in 3 ms" if kind == 3 else "",
    )


def scripted(plan: Sequence[PlanItem], route: str = "") -> list[TurnResult]:
    return [scripted_turn(item, k, route) for k, item in enumerate(plan)]


def run_e2e(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *extra: str) -> tuple[dict[str, Any], str, str]:
    """``voice bench e2e`` on scripted turns (``--url``); its JSON, Markdown and console text."""

    async def run_plan(
        url: str, plan: Sequence[PlanItem], opts: E2eOptions, on_turn: Callable[[TurnResult], None], *a: Any
    ) -> list[TurnResult]:
        turns = scripted(plan)
        for t in turns:
            on_turn(t)
        return turns

    async def run_compared(
        url: str, direct_url: str, plan: Sequence[PlanItem], opts: E2eOptions, direct_opts: E2eOptions,
        on_turn: Callable[[TurnResult], None],
    ) -> tuple[list[TurnResult], list[TurnResult]]:  # fmt: skip
        return await run_plan(url, plan, opts, on_turn), scripted(plan, "direct")

    clips = [FakeClip(n) for n in CLIPS]
    monkeypatch.setattr(e2e_cmd, "load_config", lambda p: Config())
    monkeypatch.setattr(e2e_cmd, "load_clips", lambda folder, names: (clips, ["c.wav: a warning"]))
    monkeypatch.setattr(e2e_cmd, "run_plan", run_plan)
    monkeypatch.setattr("voice.bench.e2e.compare.run_compared", run_compared)
    committed_machine(monkeypatch, "2026-12-04-e2e-ask-again.json")
    argv = ["bench", "e2e", "--url", "ws://fake/", "--speech", "/speech", "--repeats", "3", "--warmup", "2", *extra]
    written, md = run_command(argv, tmp_path / "r")
    return written, md, sha256(md)


@pytest.mark.parametrize("case", ["url", "compare"])
def test_the_whole_command_writes_what_the_dict_code_wrote(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    extra = ["--compare-direct", "ws://direct/"] if case == "compare" else []
    written, md, _ = run_e2e(monkeypatch, tmp_path, *extra)
    console = capsys.readouterr().out
    assert (*digests(written, md), sha256(console)) == DIGESTS[case]
    assert same_json(written["clips"], [clip_json(n) for n in CLIPS])
    result = E2eResult.from_json(written)
    assert result.to_json() == written
    summary = E2eSummary.from_json(written["summary"])
    assert summary == result.summary() and summary.to_json() == written["summary"]
    assert (summary.n_failed, summary.n_uncertain, summary.n_burst, summary.asked_again) == (3, 1, 2, 1)
    if case == "compare":
        assert E2eSummary.from_json(written["direct_summary"]).to_json() == written["direct_summary"]


def test_the_summary_of_no_turn() -> None:
    s = summarize([])
    assert same_json(s.to_json(), EMPTY_SUMMARY) and E2eSummary.from_json(s.to_json()) == s
    assert verdict_lines(s) == ["no turn produced a measurable reply: no verdict"]


#: Committed results whose Markdown the current code writes (the PNG link as it was written); the JSON too for
#: the ones made since the summary counts the turns that asked again. The others are older (no normalized WER
#: or no false endpoints in the Markdown: 2026-12-02-e2e, 2026-12-03-e2e, 2026-12-03-e2e-mixed) or carry a
#: note written into their Markdown by hand (2026-12-04-e2e-engine-marks-after/-before, -mixed-lead).
COMMITTED = {
    "2026-12-03-e2e-native": (False, None), "2026-12-03-e2e-proxy": (False, None),
    "2026-12-03-e2e-realtime": (False, None), "2026-12-04-e2e-arrival-after": (False, None),
    "2026-12-04-e2e-arrival-before": (False, None), "2026-12-04-e2e-mixed-arrival": (False, None),
    "2026-12-04-e2e-mixed": (False, None), "2026-12-04-e2e-native-arrival": (False, None),
    "2026-12-04-e2e-native-engine-marks": (False, None), "2026-12-04-e2e-native-restructured": (False, None),
    "2026-12-04-e2e-native": (False, None), "2026-12-04-e2e-other-recordings": (False, None),
    "2026-12-04-e2e-speechend-loop": (False, None), "2026-12-04-e2e-speechend-thread": (False, None),
    "2026-12-04-e2e-ask-again": (True, None), "2026-12-04-e2e-mixed-ask-again": (True, "e2e-mixed-ask.png"),
    "2026-12-04-e2e-other-recordings-ask-again": (True, "e2e-extra-ask.png"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(COMMITTED))
def test_a_committed_result_reads_back_to_its_json_and_markdown(name: str) -> None:
    json_too, png = COMMITTED[name]
    path = RESULTS / f"{name}.json"
    png_path = RESULTS / (png or f"{name}.png")
    result = check_committed(
        path.name, E2eResult.from_json, lambda r, md: markdown(r, png_path, md) + "\n", json_too=json_too
    )
    committed = json.loads(path.read_text(encoding="utf-8"))["summary"]
    if json_too:
        assert same_json(E2eSummary.from_json(committed).to_json(), committed)
        assert E2eSummary.from_json(committed) == result.summary()
    else:  # the summary then lacked a count or more (asked_again): the same otherwise
        assert same_json({k: v for k, v in result.summary().to_json().items() if k in committed}, committed)
