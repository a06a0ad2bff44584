"""voice bench matrix's typed result writes the JSON and the Markdown the dict-based code wrote: the whole command
with fake child processes (``voice bench e2e`` and ``voice bench quality``) in text mode (the expected JSON below
is what that code wrote; digests of its Markdown), spoken mode and without quality (digests of what it wrote), and
the committed result, whose Markdown the typed result reproduces too."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import (
    FAKE_MACHINE_JSON,
    FINISHED_MACHINE_JSON,
    check_committed,
    fake_machine,
    same_json,
)
from voice.bench.e2e.result import summarize
from voice.bench.matrix import measure as matrix
from voice.bench.matrix import report as matrix_report
from voice.bench.matrix.result import FailedRow, MatrixResult, MeasuredRow
from voice.cli import main

KEEP = "<keep>"
"""Stands for the --keep folder in the expected JSON."""
#: sha256 of the JSON (``json.dumps``) and of the Markdown the dict-based code wrote for the same fake runs (the
#: JSON's with the fake machine records of :mod:`tests.bench_results` as dicts, at d5b686f; the text mode's JSON
#: is below, in full).
DIGESTS = {
    "spoken": ("8d6e664ea9d7ed61b9c928647a85c29adc4be17108a29ea0c8aa90188aa6c60b",
               "054b174560fd76743509b1b6006bc981a9926f2e9977f1199d42d84e062b38df"),
    "none": ("c0351aeddcc5e24dd342629816b314cf85b182d40f26780629c19718a8e99106",
             "34588fe8c37a888adb4e1c9fa1690955ff7f44a946acf868582e75c52c8e5d82"),
}  # fmt: skip


#: The method of the fake ``voice bench e2e`` results (the matrix reads none of it).
E2E_METHOD = {
    "speech_end": "s", "uncertain": "u", "first_audio": "f", "reconciliation": "r", "sessions": "s", "pacing": "p",
    "wer": "w", "wer_normalized": "n", "clock": "c", "protocol": "p", "burst": "b", "repeats": 3, "warmup": 1,
}  # fmt: skip


def median(p50: float) -> dict[str, Any]:
    """A sample's statistics as a ``voice bench e2e`` summary writes them, of which the matrix reads the p50."""
    return {"n": 4, "p50": p50, "p95": p50 * 1.25, "max": p50 * 1.5, "min": p50 / 2, "mean": p50}


class FakeUsage:
    ru_maxrss = 0


class FakeProcesses:
    """Stands for the child processes: ``voice bench e2e`` writes a result made from the combination's names
    (or, for an LLM named ``broken``, only a log), ``voice bench quality`` a summary (or nothing for ``broken``
    and ``mute``)."""

    def __init__(self) -> None:
        self.pid = 0
        self.returncode: int | None = None
        self.rss: dict[int, int] = {}

    @staticmethod
    def _arg(cmd: list[str], name: str) -> str | None:
        return cmd[cmd.index(name) + 1] if name in cmd else None

    def popen(self, cmd: list[str], stdout: Any, stderr: Any) -> FakeProcesses:
        stt, llm = self._arg(cmd, "--stt") or "", self._arg(cmd, "--llm") or ""
        self.pid += 1
        self.rss[self.pid] = 1024 * (300 + 100 * len(llm) + 10 * len(stt))
        stdout.write(f"loading {llm}\nrunning\nTraceback: {llm} failed\n")
        if llm != "broken":
            k = len(stt) + len(llm)
            p50 = 40.0 * k
            summary = summarize([]).to_json() | {  # the summary of no turn, with what the matrix reads
                "n_measured": 4, "n_failed": k % 2, "p50_ms": p50, "p95_ms": p50 * 1.5, "max_ms": p50 * 2,
                "stages": {"endpoint_silence": median(320.0), "stt": median(10.0 * len(stt)),
                           "llm_ttft": median(20.0 * len(llm))},
                "server_total": median(p50 - 30), "p50_reconciliation_error_ms": 12.5, "wer": 0.05 * len(stt),
                "llm_tps": median(100.0 / len(llm)), "llm_ttft": median(20.0 * len(llm)),
                "reply_tokens": median(18.0), "reply_audio_s": median(2.5),
                "meets_target": "yes" if p50 * 1.5 <= 500 else ("p50 only" if p50 <= 500 else "no"),
                "meets_human_gap": "no", "within_target": 4 - k % 3,
            }  # fmt: skip
            turns = [{"clip": c, "reply_text": f"{llm} on {c}"} for c in ("a.wav", "b.wav", "a.wav")]
            machine: dict[str, Any] = {**FAKE_MACHINE_JSON, "load_average_at_start": [0.1 * k, 0.2, 0.3]}
            if k % 2:
                guard = {"enabled": True, "max_other_percent": 10.0, "samples": 4, "redone_samples": k % 3,
                         "other_cpu_percent_p50": 1.0, "other_cpu_percent_max": 2.0}  # fmt: skip
                machine.update(guard=guard, other_processes_cpu_percent=1.5 * k)
            meta = {"machine": machine, "speech_dir": "/speech", "method": E2E_METHOD,
                    **({"load_s": 1.5} if llm != "big" else {}), "server": "in-process",
                    "models": {"stt": stt, "llm": llm, "tts": "joe"}, "ram_peak_mb": 512.5}  # fmt: skip
            Path(self._arg(cmd, "--json") or "").write_text(
                json.dumps({"meta": meta, "summary": summary, "turns": turns})
            )
        return self

    def wait4(self, pid: int, options: int) -> tuple[int, int, FakeUsage]:
        usage = FakeUsage()
        usage.ru_maxrss = self.rss[pid]
        return pid, 0 if pid % 3 else 256, usage

    def run(self, cmd: list[str], stdout: Any, stderr: Any, check: bool) -> subprocess.CompletedProcess[str]:
        llm, stt = self._arg(cmd, "--llm") or "", self._arg(cmd, "--stt")
        if llm in ("broken", "mute"):
            stdout.write("" if llm == "mute" else "no model\n")
            return subprocess.CompletedProcess(cmd, 3)
        right = 100.0 - 10 * len(llm) - (5 * len(stt) if stt else 0)
        summary = {"items": 10, "right_pct": right, "honest_refusal_pct": None, "cap_or_repeat_pct": 0.0}
        Path(self._arg(cmd, "--json") or "").write_text(
            json.dumps({"models": [{"llm": llm, "summary": summary}]})
        )
        return subprocess.CompletedProcess(cmd, 0)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 30.25
        return self.t


def run_matrix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """``voice bench matrix`` with the fake processes; its JSON."""
    procs = FakeProcesses()
    monkeypatch.setattr(matrix.subprocess, "Popen", procs.popen)
    monkeypatch.setattr(matrix.subprocess, "run", procs.run)
    monkeypatch.setattr(matrix.os, "wait4", procs.wait4)
    monkeypatch.setattr(matrix.time, "perf_counter", Clock())
    monkeypatch.setattr(matrix, "located_model", lambda name, kind: Path(name))
    monkeypatch.setattr(matrix, "load_clips", lambda speech, names: ([Path("a.wav"), Path("b.wav")], []))
    fake_machine(monkeypatch)
    out = tmp_path / "r.json"
    main(["bench", "matrix", "--speech", "/speech", "--stt", "tiny.en,base", "--tts", "joe", "--repeats", "3",
          "--json", str(out), *extra])  # fmt: skip
    return dict(json.loads(out.read_text(encoding="utf-8")))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_text_mode_writes_the_json_and_markdown_the_dicts_did(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keep = tmp_path / "keep"
    written = run_matrix(
        monkeypatch, tmp_path, "--llm", "big,broken,mute", "--keep", str(keep), "--quality-bar", "60"
    )
    expected = json.loads(json.dumps(TEXT_JSON).replace(KEEP, str(keep)))
    assert same_json(written, expected)
    result = MatrixResult.from_json(written)
    assert result.to_json() == written and MatrixResult.from_json(result.to_json()) == result
    assert [type(r) for r in result.rows] == [MeasuredRow, FailedRow, MeasuredRow] * 2
    monkeypatch.setattr(matrix_report, "machine_markdown", lambda m: "(machine)")
    md = matrix_report.markdown(result, None, Path("r.md"))
    assert "- Best trade-off: base + big + joe (the fastest of those at least 60 % right): 70 % right" in md
    assert sha256(md) == "bdbebe37f674c1adc4afc5a6aa29c27a58ce8c43c988d620c1e72c9e10efaa8f"


@pytest.mark.parametrize(("name", "extra"), [("spoken", ("--llm", "small,broken", "--spoken-quality")),
                                             ("none", ("--llm", "small", "--no-quality"))])  # fmt: skip
def test_spoken_mode_and_no_quality_write_what_the_dicts_did(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, extra: tuple[str, ...]
) -> None:
    written = run_matrix(monkeypatch, tmp_path, *extra)
    result = MatrixResult.from_json(written)
    assert result.to_json() == written and all(r.log is None for r in result.rows)
    assert list(written["meta"]["quality"]) == (["tiny.en+small", "tiny.en+broken", "base+small", "base+broken"]
                                                if name == "spoken" else [])  # fmt: skip
    monkeypatch.setattr(matrix_report, "machine_markdown", lambda m: "(machine)")
    md = matrix_report.markdown(result, None, Path("r.md"))
    assert (sha256(json.dumps(written)), sha256(md)) == DIGESTS[name]


@pytest.mark.parametrize("name", ["2026-12-04-matrix.json", "2026-12-06-matrix-decode1.json"])
def test_the_committed_result_reads_back_to_the_same_json_and_markdown(name: str) -> None:
    def markdown(result: MatrixResult, md: Path) -> str:
        return matrix_report.markdown(result, md.with_suffix(".png"), md)

    check_committed(name, MatrixResult.from_json, markdown)

TEXT_JSON: dict[str, Any] = {
    "tool": "voice bench matrix",
    "schema": 1,
    "meta": {
        "machine": FINISHED_MACHINE_JSON,
        "speech_dir": "/speech",
        "clips": ["a.wav", "b.wav"],
        "repeats": 3,
        "warmup": 1,
        "models": {"stt": ["tiny.en", "base"], "llm": ["big", "broken", "mute"], "tts": ["joe"]},
        "quality_bar_pct": 60.0,
        "quality_mode": "text",
        "quality": {
            "big": {"items": 10, "right_pct": 70.0, "honest_refusal_pct": None, "cap_or_repeat_pct": 0.0},
            "broken": {"error": "no model"},
            "mute": {"error": "exit code 3"},
        },
    },
    "rows": [
        {
            "stt": "tiny.en",
            "llm": "big",
            "tts": "joe",
            "exit_code": 0,
            "wall_s": 30.2,
            "ram_peak_mb": 670.0,
            "log": "<keep>/tiny.en+big+joe.log",
            "json": "<keep>/tiny.en+big+joe.json",
            "n_measured": 4,
            "n_failed": 0,
            "p50_ms": 400.0,
            "p95_ms": 600.0,
            "max_ms": 800.0,
            "stages_p50_ms": {"endpoint_silence": 320.0, "stt": 70.0, "llm_ttft": 60.0},
            "server_total_p50_ms": 370.0,
            "p50_reconciliation_error_ms": 12.5,
            "wer": 0.35000000000000003,
            "llm_tps_p50": 33.333333333333336,
            "llm_ttft_p50_ms": 60.0,
            "reply_tokens_p50": 18.0,
            "reply_audio_s_p50": 2.5,
            "meets_target": "p50 only",
            "meets_human_gap": "no",
            "within_target": 3,
            "load_s": None,
            "load_average_at_start": [1.0, 0.2, 0.3],
            "other_processes_cpu_percent": None,
            "redone_turns": None,
            "examples": {"a.wav": "big on a.wav", "b.wav": "big on b.wav"},
            "quality_right_pct": 70.0,
            "quality_items": 10,
            "meets_quality": True,
            "meets_turn_taking": True,
        },
        {
            "stt": "tiny.en",
            "llm": "broken",
            "tts": "joe",
            "exit_code": 0,
            "wall_s": 30.2,
            "ram_peak_mb": 970.0,
            "log": "<keep>/tiny.en+broken+joe.log",
            "error": "loading broken | running | Traceback: broken failed",
        },
        {
            "stt": "tiny.en",
            "llm": "mute",
            "tts": "joe",
            "exit_code": 1,
            "wall_s": 30.2,
            "ram_peak_mb": 770.0,
            "log": "<keep>/tiny.en+mute+joe.log",
            "json": "<keep>/tiny.en+mute+joe.json",
            "n_measured": 4,
            "n_failed": 1,
            "p50_ms": 440.0,
            "p95_ms": 660.0,
            "max_ms": 880.0,
            "stages_p50_ms": {"endpoint_silence": 320.0, "stt": 70.0, "llm_ttft": 80.0},
            "server_total_p50_ms": 410.0,
            "p50_reconciliation_error_ms": 12.5,
            "wer": 0.35000000000000003,
            "llm_tps_p50": 25.0,
            "llm_ttft_p50_ms": 80.0,
            "reply_tokens_p50": 18.0,
            "reply_audio_s_p50": 2.5,
            "meets_target": "p50 only",
            "meets_human_gap": "no",
            "within_target": 2,
            "load_s": 1.5,
            "load_average_at_start": [1.1, 0.2, 0.3],
            "other_processes_cpu_percent": 16.5,
            "redone_turns": 2,
            "examples": {"a.wav": "mute on a.wav", "b.wav": "mute on b.wav"},
            "quality_right_pct": None,
            "quality_items": None,
            "meets_quality": False,
            "meets_turn_taking": False,
        },
        {
            "stt": "base",
            "llm": "big",
            "tts": "joe",
            "exit_code": 0,
            "wall_s": 30.2,
            "ram_peak_mb": 640.0,
            "log": "<keep>/base+big+joe.log",
            "json": "<keep>/base+big+joe.json",
            "n_measured": 4,
            "n_failed": 1,
            "p50_ms": 280.0,
            "p95_ms": 420.0,
            "max_ms": 560.0,
            "stages_p50_ms": {"endpoint_silence": 320.0, "stt": 40.0, "llm_ttft": 60.0},
            "server_total_p50_ms": 250.0,
            "p50_reconciliation_error_ms": 12.5,
            "wer": 0.2,
            "llm_tps_p50": 33.333333333333336,
            "llm_ttft_p50_ms": 60.0,
            "reply_tokens_p50": 18.0,
            "reply_audio_s_p50": 2.5,
            "meets_target": "yes",
            "meets_human_gap": "no",
            "within_target": 3,
            "load_s": None,
            "load_average_at_start": [0.7000000000000001, 0.2, 0.3],
            "other_processes_cpu_percent": 10.5,
            "redone_turns": 1,
            "examples": {"a.wav": "big on a.wav", "b.wav": "big on b.wav"},
            "quality_right_pct": 70.0,
            "quality_items": 10,
            "meets_quality": True,
            "meets_turn_taking": True,
        },
        {
            "stt": "base",
            "llm": "broken",
            "tts": "joe",
            "exit_code": 0,
            "wall_s": 30.2,
            "ram_peak_mb": 940.0,
            "log": "<keep>/base+broken+joe.log",
            "error": "loading broken | running | Traceback: broken failed",
        },
        {
            "stt": "base",
            "llm": "mute",
            "tts": "joe",
            "exit_code": 1,
            "wall_s": 30.2,
            "ram_peak_mb": 740.0,
            "log": "<keep>/base+mute+joe.log",
            "json": "<keep>/base+mute+joe.json",
            "n_measured": 4,
            "n_failed": 0,
            "p50_ms": 320.0,
            "p95_ms": 480.0,
            "max_ms": 640.0,
            "stages_p50_ms": {"endpoint_silence": 320.0, "stt": 40.0, "llm_ttft": 80.0},
            "server_total_p50_ms": 290.0,
            "p50_reconciliation_error_ms": 12.5,
            "wer": 0.2,
            "llm_tps_p50": 25.0,
            "llm_ttft_p50_ms": 80.0,
            "reply_tokens_p50": 18.0,
            "reply_audio_s_p50": 2.5,
            "meets_target": "yes",
            "meets_human_gap": "no",
            "within_target": 2,
            "load_s": 1.5,
            "load_average_at_start": [0.8, 0.2, 0.3],
            "other_processes_cpu_percent": None,
            "redone_turns": None,
            "examples": {"a.wav": "mute on a.wav", "b.wav": "mute on b.wav"},
            "quality_right_pct": None,
            "quality_items": None,
            "meets_quality": False,
            "meets_turn_taking": False,
        },
    ],
}
