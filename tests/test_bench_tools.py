"""The bench's arithmetic and files on synthetic inputs with known answers: WER, percentiles, verdicts,
clip folders, prompt fitting, slowdowns and speed-ups, and every report writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile

from tests.bench_results import FAKE_MACHINE
from tests.conftest import silence, tone, tones_are_speech
from voice.bench.clips import BenchError, load_clips, read_transcripts
from voice.bench.contention import measure as contention
from voice.bench.contention import report as contention_report
from voice.bench.contention.result import ContentionResult, PolicyRun
from voice.bench.e2e.result import summarize
from voice.bench.e2e.turn import TurnResult
from voice.bench.machine import command_line, machine_info, machine_markdown
from voice.bench.machine_record import Machine
from voice.bench.markdown import md_table
from voice.bench.matrix import measure as matrix
from voice.bench.matrix import report as matrix_report
from voice.bench.matrix.result import FailedRow, MatrixMeta, MatrixResult, MeasuredRow, Row
from voice.bench.prefill import measure as prefill
from voice.bench.prefill.result import LengthTiming, PrefillMeta, PrefillResult, PrefillRow
from voice.bench.speculative import measure as speculative
from voice.bench.speculative import report as speculative_report
from voice.bench.speculative.result import PromptRow, SpeculativeMeta, SpeculativeResult, SpeedUp
from voice.bench.stats import Described, corpus_wer, describe, normalize_text, verdict, wer
from voice.cli import build_parser, main
from voice.runtime.model_api import ChatMessage

PNG = b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------------- WER
def test_wer_counts_substitutions_deletions_insertions() -> None:
    assert wer("the cat sat", "the cat sat") == 0.0
    assert wer("the cat sat", "the cat sat on") == pytest.approx(1 / 3)  # one insertion
    assert wer("the cat sat", "the dog sat") == pytest.approx(1 / 3)  # one substitution
    assert wer("the cat sat", "") == 1.0  # everything deleted
    assert wer("What's the date today?", "whats the date today") == 0.0  # case, punctuation, apostrophe
    assert wer("Set a timer for 10 minutes.", "set a timer for ten minutes") == pytest.approx(1 / 6)
    assert wer("", "anything") is None and wer("?!", "x") is None
    assert normalize_text("  Hello,   World! ") == "hello world"


def test_corpus_wer_pools_words_rather_than_averaging_clips() -> None:
    # 1 substitution in 4 words + 2 deletions in 2 words = 3 errors / 6 words (the mean per clip would be 0.625)
    assert corpus_wer([("a b c d", "a x c d"), ("e f", "")]) == 0.5
    assert corpus_wer([("", "x")]) is None


# ---------------------------------------------------------------------------------------------- statistics
def test_describe_interpolates_percentiles() -> None:
    d = describe([500, 100, 300, 200, 400])
    assert (d.n, d.p50, d.p95, d.max, d.min, d.mean) == (5, 300, 480, 500, 100, 300)
    assert describe([7.0]).p95 == 7.0
    assert describe([]).p50 is None


def test_described_is_written_as_the_dict_was() -> None:
    d = describe([1.25, 2.0])
    written = {"n": 2, "p50": 1.6, "p95": 2.0, "max": 2.0, "min": 1.2, "mean": 1.6}  # rounded to 0.1, keys in order
    assert json.dumps(d.to_json()) == json.dumps(written) and Described.from_json(written) == d
    empty = {"n": 0, "p50": None, "p95": None, "max": None, "min": None, "mean": None}
    assert json.dumps(describe([]).to_json()) == json.dumps(empty) and Described.from_json(empty) == describe([])
    with pytest.raises(TypeError):
        Described.from_json({"n": 1, "p50": 1.0})


def test_verdict_levels() -> None:
    assert verdict(150, 190, 200) == "yes"
    assert verdict(150, 450, 200) == "p50 only"
    assert verdict(250, 450, 200) == "no"
    assert verdict(None, None, 200) == "n/a"


def turn(m2e: float | None, recon: float | None = 0.0, **kw: Any) -> TurnResult:
    stages = kw.pop("stages", {"endpoint_silence": 100.0, "stt": 50.0})
    return TurnResult(
        clip=kw.pop("clip", "a.wav"),
        repeat=1,
        phase="measured",
        first_after_load=False,
        outcome="ok" if m2e is not None else "timeout",
        mouth_to_ear_ms=m2e,
        reconciliation_error_ms=recon,
        stages_ms=stages,
        server_total_ms=sum(stages.values()),
        **kw,
    )


def test_summary_of_turns() -> None:
    turns = [
        turn(100, 10, reference="a b", transcript="a b"),
        turn(200, 20, reference="a b", transcript="a x"),
        turn(300, 30, turns_heard=2, clip="b.wav"),
        turn(400, -40),
        turn(500, 50),
        turn(None, None),
    ]
    s = summarize(turns)
    assert (s.p50_ms, s.p95_ms, s.max_ms) == (300, 480, 500)
    assert s.n_turns == 6 and s.n_measured == 5 and s.n_failed == 1
    assert s.p50_reconciliation_error_ms == 20
    assert s.reconciliation_error_abs_max_ms == 50
    assert s.stages["stt"].p50 == 50 and list(s.stages) == ["endpoint_silence", "stt"]
    assert s.wer == 0.25  # one substitution in four reference words
    assert s.within_target == 5 and s.within_human_gap == 2
    assert s.meets_target == "yes" and s.meets_human_gap == "no"
    assert s.split_clips == ("b.wav",)


# ---------------------------------------------------------------------------------------------- clip folders
def test_any_folder_of_recordings(tmp_path: Path) -> None:
    rate = 44_100
    stereo = np.stack([tone(1.0, rate), tone(1.0, rate)], axis=1)
    soundfile.write(
        tmp_path / "stereo.flac", np.concatenate([stereo, np.zeros((rate // 2, 2), np.float32)]), rate
    )
    soundfile.write(tmp_path / "narrow.wav", np.concatenate([silence(0.2, 8000), tone(0.5, 8000)]), 8000)
    soundfile.write(tmp_path / "quiet.wav", silence(1.0), 16_000)  # no speech: skipped with a warning
    (tmp_path / "notes.txt").write_text("not audio")
    (tmp_path / "transcripts.tsv").write_text(
        "# comment\nstereo.flac\tHello there.\nnarrow\tBy stem.\nmissing.wav\tNowhere.\n", encoding="utf-8"
    )
    clips, warnings = load_clips(tmp_path, speech_probabilities=tones_are_speech)
    assert [c.name for c in clips] == ["narrow.wav", "stereo.flac"]
    narrow, stereo_clip = clips
    assert (
        stereo_clip.file_rate_hz == rate and stereo_clip.file_channels == 2 and stereo_clip.rate_hz == 16_000
    )
    assert stereo_clip.speech_end_s == pytest.approx(1.0, abs=0.011)
    assert narrow.speech_end_s == pytest.approx(0.7, abs=0.011)
    assert stereo_clip.reference == "Hello there." and narrow.reference == "By stem."
    assert any("quiet.wav" in w for w in warnings) and any("missing.wav" in w for w in warnings)
    only, _ = load_clips(tmp_path, ["narrow"], speech_probabilities=tones_are_speech)
    assert [c.name for c in only] == ["narrow.wav"]
    with pytest.raises(BenchError, match="no such clip"):
        load_clips(tmp_path, ["nope.wav"])


def test_speech_end_ignores_a_click_after_the_speech() -> None:
    from voice.audio import analyse_speech

    rate = 16_000
    audio = np.concatenate([silence(0.2), tone(0.5), silence(0.4), tone(0.03, amplitude=0.6), silence(0.2)])
    assert analyse_speech(audio, rate).last_voiced_sample == round(1.13 * rate)  # default: the click counts
    a = analyse_speech(audio, rate, min_segment_ms=100)
    assert a.last_voiced_sample == round(0.7 * rate) and a.ignored_bursts == 1
    # A short final word close to the rest (gap under bridge_ms) is speech, not a click.
    word = np.concatenate([silence(0.2), tone(0.5), silence(0.1), tone(0.05), silence(0.2)])
    assert analyse_speech(word, rate, min_segment_ms=100).last_voiced_sample == round(0.85 * rate)
    # Nothing but a click: it is all there is, so it stays.
    click = np.concatenate([silence(0.5), tone(0.03), silence(0.5)])
    assert analyse_speech(click, rate, min_segment_ms=100).last_voiced_sample == round(0.53 * rate)


def test_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(BenchError, match="does not exist"):
        load_clips(tmp_path / "absent")
    with pytest.raises(BenchError, match="no audio files"):
        load_clips(tmp_path)
    (tmp_path / "t.tsv").write_text("no tab here\n")
    with pytest.raises(BenchError, match=r"t\.tsv:1"):
        read_transcripts(tmp_path / "t.tsv")


def test_cli_empty_folder_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(
        ["bench", "e2e", "--speech", str(tmp_path), "--out", str(tmp_path / "x")]
    )
    assert args.repeats == 2 and args.warmup == 1
    assert main(["bench", "e2e", "--speech", str(tmp_path)]) == 2
    assert "no audio files" in capsys.readouterr().err
    for name in ("matrix", "prefill", "speculative", "contention"):
        assert callable(build_parser().parse_args(["bench", name]).func)


def test_machine_info_states_where_and_how() -> None:
    info = machine_info(["/x/.venv/bin/voice", "bench", "e2e", "--repeats", "3"])
    for key in ("date", "cpu_model", "cores_usable", "ram_total_gb", "git_commit", "load_average_at_start"):
        assert getattr(info, key) not in (None, "")
    assert info.command == "voice bench e2e --repeats 3"
    assert command_line(["python", "-m", "x"]) == "python -m x"
    assert "Load average at start" in machine_markdown(info)


def test_other_processes_cpu_share() -> None:
    from voice.bench.machine import other_cpu

    start = {"busy_s": 100.0, "steal_s": 1.0, "own_s": 10.0, "wall_s": 50.0}
    # 10 s on 2 cores = 20 CPU-seconds; the machine was busy 15 of them, 6 of which were ours.
    end = {"busy_s": 115.0, "steal_s": 1.5, "own_s": 16.0, "wall_s": 60.0}
    assert other_cpu(start, end, 2) == {"other_processes_cpu_percent": 45.0, "steal_cpu_percent": 2.5}


def test_guard_measures_a_disturbed_sample_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from voice.bench import machine

    shares = iter([60.0, 30.0, 4.0])
    monkeypatch.setattr(machine, "cpu_snapshot", lambda: {})
    monkeypatch.setattr(machine, "other_cpu", lambda a, b, c: {"other_processes_cpu_percent": next(shares)})
    monkeypatch.setattr(machine, "wait_for_others_below", lambda *a, **k: None)
    calls: list[int] = []
    guard = machine.Guard(log=lambda m: None)
    assert guard.run(lambda: calls.append(1) or len(calls)) == 3  # measured three times, the third one kept
    s = guard.summary()
    assert (s.redone_samples, s.samples, s.other_cpu_percent_max) == (2, 1, 4.0)
    shares = iter([60.0])
    assert machine.Guard(enabled=False).run(lambda: "once") == "once"  # disabled: recorded, never redone
    shares = iter([90.0, 90.0])
    assert (
        machine.Guard(max_redos=1, log=lambda m: None).run(lambda: "last") == "last"
    )  # gives up after max_redos
    assert "measured again (2 redone)" in machine.guard_markdown(s)


def test_md_table_escapes_and_aligns() -> None:
    text = md_table(["a", "b"], [["x|y", 1.25], [None, 2]], align="lr")
    assert text.splitlines() == ["| a | b |", "| --- | ---: |", "| x\\|y | 1.2 |", "| — | 2 |"]


# ---------------------------------------------------------------------------------------------- prefill
class WordLlm:
    """Counts one token per word plus four for the template, like a tokenizer would (roughly)."""

    def count_tokens(self, messages: list[ChatMessage]) -> int:
        return sum(len(m.content.split()) for m in messages) + 4


def test_prefill_prompt_fits_the_length() -> None:
    words = [f"w{i}" for i in range(1000)]
    msgs, n = prefill.fit_document(WordLlm(), "be brief", words, 100)
    assert n == 100 and WordLlm().count_tokens(msgs) == 100
    assert msgs[-1] == ChatMessage("user", prefill.QUESTION) and msgs[0].content.startswith(
        "be brief\n\nw0 w1"
    )
    with pytest.raises(BenchError):
        prefill.fit_document(WordLlm(), "be brief", words, 5)


def prefill_result(machine: Machine) -> PrefillResult:
    def row(n: int, u: float, c: float) -> PrefillRow:
        timing = LengthTiming(
            uncached_ms=describe([u, u * 1.1]),
            cached_ms=describe([c, c * 1.1]),
            uncached_samples_ms=(u, u * 1.1),
            cached_samples_ms=(c, c * 1.1),
            cached_evaluated_tokens=16,
            cached_reused_tokens=n - 16,
            ratio_p50=round(u / c, 2),
        )
        return PrefillRow(llm="m", target_tokens=n, prompt_tokens=n, timing=timing, prefill_tokens_per_s=100)

    meta = PrefillMeta(machine=machine, n_ctx=2048, n_batch=256, n_threads=2, llm_ttft_budget_ms=55, repeats=2,
                       text="doc.txt", question="q?", previous_question="p?")  # fmt: skip
    return PrefillResult(meta, (row(128, 600, 80), row(2000, 14000, 180)))


# ---------------------------------------------------------------------------------------------- speculative
def test_first_difference() -> None:
    assert speculative._first_difference("abc", "abc") is None
    assert speculative._first_difference("abc", "abd") == 2
    assert speculative._first_difference("abc", "ab") == 2


def test_default_prompts_parse() -> None:
    prompts = speculative.load_prompts(speculative.DEFAULT_PROMPTS)
    assert {p.kind for p in prompts} == {"short", "repeat"}
    assert all(p.system for p in prompts if p.kind == "repeat")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[[prompt]]\nname = "a"\nkind = "short"\ntext = "hi"\nmax_token = 5\n', "prompt 1: unknown key 'max_token'"),
        ('[[prompt]]\nname = "a"\nkind = "short"\n', "prompt 1: missing required key 'text'"),
        ('[[prompt]]\nname = "a"\nkind = "short"\ntext = "hi"\nmax_tokens = "5"\n', "'max_tokens' must be of type int"),
        ('[[prompts]]\nname = "a"\n', "unknown key 'prompts'"),
        ("", "no \\[\\[prompt\\]\\] entries"),
        ("[[prompt]\n", "is not valid TOML"),
    ],
)
def test_bad_prompts_are_named(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(BenchError, match=error):
        speculative.load_prompts(path)
    with pytest.raises(BenchError, match=r"not found.*--prompts FILE"):
        speculative.load_prompts(tmp_path / "none.toml")


def spec_result(machine: Machine) -> SpeculativeResult:
    def row(
        prompt: str, kind: str, variant: str, tps: float, e2e_speedup: float | None, same: bool
    ) -> PromptRow:
        up = None
        if variant != "baseline":
            up = SpeedUp(tps_speedup=round(tps / 60, 2), e2e_speedup=e2e_speedup, ttft_ratio=1.2, tokens_per_step=1.4,
                         compared_tokens=20, e2e_common_baseline_ms=500.0, e2e_common_speculative_ms=500.0)  # fmt: skip
        return PromptRow(
            llm="m", prompt=prompt, kind=kind, variant=variant, n_tokens=20,
            same_output_as_baseline=same, first_difference_at_char=None if same else 5, text="hi",
            ttft_ms=describe([80.0]), itl_mean_ms=describe([1000 / tps]), tps=describe([tps]),
            e2e_ms=describe([500.0]), deterministic_across_repeats=True, speedup=up,
        )  # fmt: skip

    rows = [
        row("a", "short", "baseline", 60, None, True),
        row("a", "short", "prompt-lookup 10", 30, 0.5, True),
        row("b", "repeat", "baseline", 60, None, True),
        row("b", "repeat", "prompt-lookup 10", 120, 2.0, False),
    ]
    meta = SpeculativeMeta(
        machine=machine, n_ctx=2048, n_batch=256, n_threads=2, temperature=0.0,
        draft_tokens=(10,), ngram=2, repeats=1, prompts_file="p.toml", system_prompt="s",
    )  # fmt: skip
    return SpeculativeResult(meta, tuple(speculative.summarize(rows)), tuple(rows))


def test_speculative_summary_reports_slowdowns_too() -> None:
    s = {(x.kind, x.variant): x for x in spec_result(FAKE_MACHINE).summary}
    assert s[("short", "prompt-lookup 10")].e2e_speedup == 0.5  # slower: reported, not hidden
    assert s[("repeat", "prompt-lookup 10")].tps_speedup == 2.0
    assert s[("repeat", "prompt-lookup 10")].same_outputs == "0/1"


# ---------------------------------------------------------------------------------------------- contention
def test_contention_slowdowns() -> None:
    samples = {
        "stt alone": {"stt": [1000.0, 1000.0], "stt_wait": [0.0, 0.0], "makespan": [1000.0, 1000.0]},
        "llm alone": {"llm": [2000.0, 2000.0], "llm_wait": [0.0, 0.0], "makespan": [2000.0, 2000.0]},
        "both, no gate": {"stt": [4000.0] * 2, "llm": [6000.0] * 2, "stt_wait": [0.0] * 2,
                          "llm_wait": [0.0] * 2, "makespan": [6000.0] * 2},
        "both, gate": {"stt": [1030.0] * 2, "llm": [3030.0] * 2, "stt_wait": [30.0] * 2,
                       "llm_wait": [1000.0] * 2, "makespan": [3030.0] * 2},
    }  # fmt: skip
    s = contention.summarize(samples)
    assert s.serial_makespan_p50_ms == 3000
    assert (s.no_gate.stt_slowdown, s.no_gate.llm_slowdown) == (4.0, 3.0)
    assert s.no_gate.makespan_vs_serial == 2.0
    assert s.gate.stt_slowdown == 1.03 and s.gate.llm_slowdown == 1.51
    assert s.gate.stt_compute_slowdown == 1.0 and s.gate.llm_compute_slowdown == 1.01


def contention_result(machine: Machine) -> ContentionResult:
    samples = {
        "stt alone": {"stt": [1000.0], "stt_wait": [0.0]},
        "llm alone": {"llm": [2000.0], "llm_wait": [0.0]},
        "both, no gate": {
            "stt": [4000.0],
            "llm": [6000.0],
            "stt_wait": [0.0],
            "llm_wait": [0.0],
            "makespan": [6e3],
        },
        "both, gate": {
            "stt": [1030.0],
            "llm": [3030.0],
            "stt_wait": [30.0],
            "llm_wait": [1e3],
            "makespan": [3030.0],
        },
    }
    res = PolicyRun(stt="tiny.en", llm="m", clip="jfk.wav", clip_s=11.0, transcript="And so", tokens=100,
                    repeats=1, effective_env={}, stt_cpu_threads=2, llm_n_threads=2, samples_ms={},
                    summary=contention.summarize(samples), guard=None, policy_note="as is")  # fmt: skip
    return ContentionResult(machine, {"project": res})


# ---------------------------------------------------------------------------------------------- matrix
def matrix_result(machine: Machine) -> MatrixResult:
    def row(stt: str, llm: str, p50: float, p95: float) -> MeasuredRow:
        return MeasuredRow(
            stt=stt, llm=llm, tts="joe-medium", p50_ms=p50, p95_ms=p95, max_ms=p95,
            stages_p50_ms={"endpoint_silence": 320.0, "stt": p50 / 3}, wer=0.1, llm_tps_p50=30.0,
            reply_tokens_p50=18.0, ram_peak_mb=600.0, meets_target=verdict(p50, p95, 500),
            meets_human_gap=verdict(p50, p95, 200), examples={"a.wav": "It is noon."}, wall_s=60.0,
            exit_code=0, log=None, json=None, n_measured=2, n_failed=0, server_total_p50_ms=None,
            p50_reconciliation_error_ms=None, llm_ttft_p50_ms=None, reply_audio_s_p50=None, within_target=0,
            load_s=None, load_average_at_start=(0.1, 0.1, 0.1), other_processes_cpu_percent=None, redone_turns=None,
        )  # fmt: skip

    rows: list[Row] = [row("tiny.en", "small", 450, 700), row("base", "big", 2000, 2500)]
    rows.append(FailedRow("base", "broken", "joe-medium", 1, 1.0, 100.0, None, error="exit code 1"))
    meta = MatrixMeta(machine=machine, speech_dir="/speech", clips=("a.wav",), repeats=2, warmup=1,
                      models={"stt": ("tiny.en", "base"), "llm": ("small", "big"), "tts": ("joe-medium",)},
                      quality_bar_pct=None, quality_mode="text", quality={})  # fmt: skip
    return MatrixResult(meta, tuple(rows))


def test_matrix_conclusions() -> None:
    lines = matrix_report.conclusions(matrix_result(FAKE_MACHINE).rows)
    assert lines[0].startswith("Fastest: tiny.en + small + joe-medium, mouth-to-ear p50 450 ms")
    assert "at p95: none; at p50: tiny.en + small + joe-medium" in lines[1]
    assert lines[2].endswith("human gap at p50: none.")


def test_matrix_verdict_needs_speed_and_quality() -> None:
    rows = matrix_result(FAKE_MACHINE).rows  # small: p50 450 ms (p50 only); big: 2000 ms (no)
    # The fast model answers badly: nothing meets turn-taking; the best trade-off is the most accurate fast one.
    rows = matrix.attach_quality(rows, {"small": {"right_pct": 40.0, "items": 93}, "big": {"right_pct": 90.0}}, 80.0)
    assert [r.meets_turn_taking for r in rows] == [False, False, None]
    lines = matrix_report.conclusions(rows, 80.0)
    assert lines[3].endswith("at least 80 % of the quality set right): none.")
    assert lines[4].startswith("Best trade-off: base + big + joe-medium (the fastest of those at least 80 % right)")
    # Fast and right: it meets turn-taking timing and is the pick.
    rows = matrix.attach_quality(rows, {"small": {"right_pct": 85.0}, "big": {"right_pct": 90.0}}, 80.0)
    lines = matrix_report.conclusions(rows, 80.0)
    assert lines[3].endswith("right): tiny.en + small + joe-medium.") and "Best trade-off: tiny.en + small" in lines[4]
    # Nobody reaches the bar: the most accurate within the target.
    rows = matrix.attach_quality(rows, {"small": {"right_pct": 50.0}, "big": {"right_pct": 70.0}}, 80.0)
    assert "none is 80 % right; the most accurate within 500 ms at p50" in matrix_report.conclusions(rows, 80.0)[4]
    assert "tiny.en + small" in matrix_report.conclusions(rows, 80.0)[4]
    # Spoken mode rates each STT + LLM pair: the same LLM can pass with one STT and fail with the other.
    spoken = {"tiny.en+small": {"right_pct": 82.0}, "base+big": {"right_pct": 60.0}}
    rows = matrix.attach_quality(rows, spoken, 80.0, spoken=True)
    assert [r.quality_right_pct for r in rows[:2]] == [82.0, 60.0]
    assert rows[0].meets_turn_taking and not rows[1].meets_turn_taking
    # A quality run that failed rates nothing.
    rows = matrix.attach_quality(rows, {"small": {"error": "exit code 1"}}, 80.0)
    assert rows[0].quality_right_pct is None and rows[0].meets_turn_taking is False


# ---------------------------------------------------------------------------------------------- report files
def test_every_report_writes_markdown_and_png(tmp_path: Path) -> None:
    machine = machine_info(["voice", "bench"])
    for name, module, result in (
        ("prefill", prefill, prefill_result(machine)),
        ("speculative", speculative_report, spec_result(machine)),
        ("contention", contention_report, contention_result(machine)),
        ("matrix", matrix_report, matrix_result(machine)),
    ):
        png, md = tmp_path / f"{name}.png", tmp_path / f"{name}.md"
        module.plot(result, png)
        text = module.markdown(result, png, md)
        assert png.read_bytes()[:8] == PNG, name
        assert f"]({name}.png)" in text and machine.cpu_model in text, name
        json.dumps(result if isinstance(result, dict) else result.to_json())
