"""``voice bench contention`` on scripted models and timings: the JSON it writes (keys, order, values) is what the
dict-based code wrote for the same inputs, and a policy run read back from a child's JSON keeps it."""

from __future__ import annotations

import json
import subprocess
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voice.bench import machine
from voice.bench.contention import measure as contention
from voice.bench.contention import report as contention_report
from voice.bench.contention.result import ContentionResult
from voice.cli import build_parser

EXPECTED: dict[str, Any] = {
    "tool": "voice bench contention",
    "schema": 1,
    "meta": {
        "machine": {
            "guard": {
                "enabled": False,
                "max_other_percent": 10.0,
                "samples": 12,
                "redone_samples": 0,
                "other_cpu_percent_p50": 1.5,
                "other_cpu_percent_max": 1.5,
            },
        },
    },
    "results": {
        "current environment": {
            "stt": "tiny.en",
            "llm": "m",
            "clip": "jfk.wav",
            "clip_s": 11.01,
            "transcript": "And so, my fellow Americans",
            "tokens": 4,
            "repeats": 3,
            "effective_env": {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": "300000", "OMP_NUM_THREADS": None},
            "threads": {"stt_cpu_threads": 3, "llm_n_threads": 2},
            "samples_ms": {
                "stt alone": {
                    "stt": [1083.0, 1114.1, 1145.2],
                    "stt_wait": [0.0, 0.0, 0.0],
                    "makespan": [1085.0, 1116.9, 1148.7],
                },
                "llm alone": {
                    "llm": [2051.9, 2124.5, 2155.6],
                    "llm_wait": [0.0, 0.0, 0.0],
                    "makespan": [2053.2, 2127.5, 2159.4],
                },
                "both, no gate": {
                    "stt": [2562.3, 2593.4, 2666.0],
                    "llm": [5062.4, 5093.5, 5166.1],
                    "stt_wait": [20.0, 30.0, 53.3],
                    "llm_wait": [20.0, 30.0, 53.3],
                    "makespan": [5063.9, 5095.7, 5170.1],
                },
                "both, gate": {
                    "stt": [2572.7, 2603.8, 2634.9],
                    "llm": [5072.7, 5103.8, 5135.0],
                    "stt_wait": [23.3, 33.3, 43.3],
                    "llm_wait": [23.3, 33.3, 43.3],
                    "makespan": [5074.5, 5106.3, 5138.2],
                },
            },
            "summary": {
                "stt alone": {
                    "stt": {
                        "n": 3,
                        "p50": 1114.1,
                        "p95": 1142.1,
                        "max": 1145.2,
                        "min": 1083.0,
                        "mean": 1114.1,
                    },
                },
                "llm alone": {
                    "llm": {
                        "n": 3,
                        "p50": 2124.5,
                        "p95": 2152.5,
                        "max": 2155.6,
                        "min": 2051.9,
                        "mean": 2110.7,
                    },
                },
                "serial_makespan_p50_ms": 3238.6,
                "both, no gate": {
                    "stt": {
                        "n": 3,
                        "p50": 2593.4,
                        "p95": 2658.8,
                        "max": 2666.0,
                        "min": 2562.3,
                        "mean": 2607.3,
                    },
                    "llm": {
                        "n": 3,
                        "p50": 5093.5,
                        "p95": 5158.8,
                        "max": 5166.1,
                        "min": 5062.4,
                        "mean": 5107.3,
                    },
                    "stt_wait": {"n": 3, "p50": 30.0, "p95": 50.9, "max": 53.3, "min": 20.0, "mean": 34.4},
                    "llm_wait": {"n": 3, "p50": 30.0, "p95": 50.9, "max": 53.3, "min": 20.0, "mean": 34.4},
                    "stt_compute": {
                        "n": 3,
                        "p50": 2563.5,
                        "p95": 2607.8,
                        "max": 2612.7,
                        "min": 2542.3,
                        "mean": 2572.8,
                    },
                    "llm_compute": {
                        "n": 3,
                        "p50": 5063.5,
                        "p95": 5107.9,
                        "max": 5112.8,
                        "min": 5042.4,
                        "mean": 5072.9,
                    },
                    "stt_compute_slowdown": 2.3,
                    "llm_compute_slowdown": 2.38,
                    "makespan": {
                        "n": 3,
                        "p50": 5095.7,
                        "p95": 5162.6,
                        "max": 5170.1,
                        "min": 5063.9,
                        "mean": 5109.9,
                    },
                    "stt_slowdown": 2.33,
                    "llm_slowdown": 2.4,
                    "makespan_vs_serial": 1.57,
                },
                "both, gate": {
                    "stt": {
                        "n": 3,
                        "p50": 2603.8,
                        "p95": 2631.8,
                        "max": 2634.9,
                        "min": 2572.7,
                        "mean": 2603.8,
                    },
                    "llm": {
                        "n": 3,
                        "p50": 5103.8,
                        "p95": 5131.8,
                        "max": 5135.0,
                        "min": 5072.7,
                        "mean": 5103.8,
                    },
                    "stt_wait": {"n": 3, "p50": 33.3, "p95": 42.3, "max": 43.3, "min": 23.3, "mean": 33.3},
                    "llm_wait": {"n": 3, "p50": 33.3, "p95": 42.3, "max": 43.3, "min": 23.3, "mean": 33.3},
                    "stt_compute": {
                        "n": 3,
                        "p50": 2570.5,
                        "p95": 2589.5,
                        "max": 2591.6,
                        "min": 2549.4,
                        "mean": 2570.5,
                    },
                    "llm_compute": {
                        "n": 3,
                        "p50": 5070.5,
                        "p95": 5089.6,
                        "max": 5091.7,
                        "min": 5049.4,
                        "mean": 5070.5,
                    },
                    "stt_compute_slowdown": 2.31,
                    "llm_compute_slowdown": 2.39,
                    "makespan": {
                        "n": 3,
                        "p50": 5106.3,
                        "p95": 5135.0,
                        "max": 5138.2,
                        "min": 5074.5,
                        "mean": 5106.3,
                    },
                    "stt_slowdown": 2.34,
                    "llm_slowdown": 2.4,
                    "makespan_vs_serial": 1.58,
                },
            },
            "guard": {
                "enabled": False,
                "max_other_percent": 10.0,
                "samples": 12,
                "redone_samples": 0,
                "other_cpu_percent_p50": 1.5,
                "other_cpu_percent_max": 1.5,
            },
            "policy_note": "this process's environment (GOMP_SPINCOUNT=300000)",
        },
    },
}

_RUN = EXPECTED["results"]["current environment"]
EXPECTED_POLICIES: dict[str, Any] = {
    "tool": "voice bench contention",
    "schema": 1,
    "meta": {"machine": {}},
    "results": {  # the child's run, each with its policy's note
        "PASSIVE": {**_RUN, "policy_note": "OMP_WAIT_POLICY=PASSIVE, GOMP_SPINCOUNT=0 (idle threads sleep at once)"},
        "project": {
            **_RUN,
            "policy_note": "OMP_WAIT_POLICY unset, GOMP_SPINCOUNT=300000 (set by voice.backends: "
            "libgomp's own default, spin ~0.3 M iterations, well under a millisecond "
            "to a few ms, then sleep)",
        },
    },
}


class _Stt:
    def transcribe(self, audio: np.ndarray) -> str:
        return "And so, my fellow Americans"


class _Llm:
    def tokens(self, messages: object) -> tuple[list[int], int]:
        return [1, 2, 3], 3

    def reset_cache(self) -> None:
        pass

    def greedy_steps(self, prompt: list[int]) -> Iterator[int]:
        yield from range(100)


def _scripted_timings() -> Callable[
    [dict[str, Callable[[], float]]], tuple[dict[str, float], dict[str, float], float]
]:
    calls = [0]

    def timed(jobs: dict[str, Callable[[], float]]) -> tuple[dict[str, float], dict[str, float], float]:
        k = calls[0] = calls[0] + 1
        for job in jobs.values():
            job()  # the jobs run (and take the gate), their times are scripted
        both = len(jobs) > 1
        walls = {n: (1000.04 if n == "stt" else 2000.06) * (2.5 if both else 1.0) + 10.37 * k for n in jobs}
        waits = {n: (3.33 * k if both else 0.0) for n in jobs}
        return walls, waits, max(walls.values()) + 0.25 * k

    return timed


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> dict[str, Any]:
    """The command's JSON, its machine record cut down to the guard's part (the rest is this machine's)."""
    monkeypatch.chdir(tmp_path)
    Path("jfk.wav").write_bytes(b"")
    Path("c.toml").write_text('[stt]\ncpu_threads = 3\n[llm]\nn_threads = 2\nsystem_prompt = "Be brief."\n')
    monkeypatch.setattr(
        contention, "load_audio", lambda path, rate: np.zeros(11 * 16_000 + 123, dtype=np.float32)
    )
    monkeypatch.setattr(contention, "load_stt", lambda config, name: _Stt())
    monkeypatch.setattr(contention, "load_llm", lambda config, name: _Llm())
    monkeypatch.setattr(contention, "_timed_together", _scripted_timings())
    monkeypatch.setattr(machine, "cpu_snapshot", lambda: {})
    monkeypatch.setattr(machine, "other_cpu", lambda a, b, c: {"other_processes_cpu_percent": 1.5})
    for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GOMP_SPINCOUNT", "300000")
    argv = ["bench", "contention", "--config", "c.toml", "--stt", "tiny.en", "--llm", "m", "--clip", "jfk.wav",
            "--tokens", "4", "--repeats", "3", "--json", "c.json"]  # fmt: skip
    assert contention.run(build_parser().parse_args([*argv, *extra])) == 0
    data: dict[str, Any] = json.loads(Path("c.json").read_text(encoding="utf-8"))
    data["meta"]["machine"] = {k: v for k, v in data["meta"]["machine"].items() if k == "guard"}
    return data


def test_contention_json_is_what_the_dict_code_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _run(tmp_path, monkeypatch)
    assert data == EXPECTED
    assert json.dumps(data) == json.dumps(EXPECTED)  # the same order too


def test_contention_policies_json_is_what_the_dict_code_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --wait-policies each policy's result is a child's JSON read back, its note replaced."""
    child = {**EXPECTED, "meta": {"machine": {"date": "2026-12-02"}}}
    commands: list[list[str]] = []

    real_run = subprocess.run

    def child_run(cmd: list[str], **kw: Any) -> Any:
        if "voice.cli" not in cmd:
            return real_run(cmd, **kw)  # the machine record's own commands
        commands.append(cmd)
        Path(cmd[cmd.index("--json") + 1]).write_text(json.dumps(child), encoding="utf-8")
        return types.SimpleNamespace(returncode=0)

    monkeypatch.setattr(subprocess, "run", child_run)
    data = _run(tmp_path, monkeypatch, "--wait-policies", "PASSIVE,project")
    assert len(commands) == 2
    assert data == EXPECTED_POLICIES
    assert json.dumps(data) == json.dumps(EXPECTED_POLICIES)


def test_the_committed_result_reads_back_and_gives_its_markdown() -> None:
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    data = json.loads((results / "2026-12-02-contention.json").read_text(encoding="utf-8"))
    result = ContentionResult.from_json(data)
    assert json.dumps(result.to_json()) == json.dumps(data)
    md = results / "2026-12-02-contention.md"
    # voice/engine.py, which the method names, became voice/runtime/runtime.py after the run (issue 10)
    committed = md.read_text(encoding="utf-8").replace("`voice/engine.py`", "`voice/runtime/runtime.py`")
    assert contention_report.markdown(result, results / "2026-12-02-contention.png", md) + "\n" == committed
