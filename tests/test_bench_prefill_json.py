"""``voice bench prefill`` on a scripted model and scripted timings: the JSON it writes (keys, order, values) is
what the dict-based code wrote for the same inputs; the committed results read back and give their Markdown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from voice.bench import machine
from voice.bench.prefill import measure as prefill
from voice.bench.prefill.result import PrefillResult
from voice.cli import build_parser
from voice.runtime.model_api import ChatMessage, PromptInfo

EXPECTED: dict[str, Any] = {
    "tool": "voice bench prefill",
    "schema": 1,
    "meta": {
        "machine": {
            "guard": {
                "enabled": False,
                "max_other_percent": 10.0,
                "samples": 18,
                "redone_samples": 0,
                "other_cpu_percent_p50": 2.0,
                "other_cpu_percent_max": 2.0,
            },
        },
        "n_ctx": 600,
        "n_batch": 64,
        "n_threads": 2,
        "llm_ttft_budget_ms": 55,
        "repeats": 3,
        "text": "doc.txt",
        "question": "When does the heating come on at the weekend?",
        "previous_question": "Which bin goes out this Thursday?",
    },
    "rows": [
        {
            "llm": "a",
            "target_tokens": 50,
            "prompt_tokens": 50,
            "uncached_ms": {"n": 3, "p50": 57.3, "p95": 57.3, "max": 57.3, "min": 56.9, "mean": 57.2},
            "cached_ms": {"n": 3, "p50": 31.3, "p95": 32.3, "max": 32.4, "min": 31.0, "mean": 31.6},
            "uncached_samples_ms": [56.92, 57.29, 57.29],
            "cached_samples_ms": [30.96, 32.45, 31.34],
            "cached_evaluated_tokens": 15,
            "cached_reused_tokens": 35,
            "ratio_p50": 1.83,
            "prefill_tokens_per_s": 873,
        },
        {
            "llm": "a",
            "target_tokens": 200,
            "prompt_tokens": 200,
            "uncached_ms": {"n": 3, "p50": 167.7, "p95": 167.7, "max": 167.7, "min": 167.3, "mean": 167.6},
            "cached_ms": {"n": 3, "p50": 31.7, "p95": 32.0, "max": 32.1, "min": 31.3, "mean": 31.7},
            "uncached_samples_ms": [167.31, 167.68, 167.68],
            "cached_samples_ms": [31.7, 31.34, 32.08],
            "cached_evaluated_tokens": 15,
            "cached_reused_tokens": 185,
            "ratio_p50": 5.29,
            "prefill_tokens_per_s": 1193,
        },
        {
            "llm": "a",
            "target_tokens": 400,
            "prompt_tokens": 377,
            "uncached_ms": {"n": 3, "p50": 296.0, "p95": 296.0, "max": 296.0, "min": 295.6, "mean": 295.8},
            "cached_ms": {"n": 3, "p50": 32.1, "p95": 32.4, "max": 32.4, "min": 31.0, "mean": 31.8},
            "uncached_samples_ms": [295.59, 295.96, 295.96],
            "cached_samples_ms": [32.45, 32.08, 30.96],
            "cached_evaluated_tokens": 15,
            "cached_reused_tokens": 362,
            "ratio_p50": 9.22,
            "prefill_tokens_per_s": 1274,
        },
        {
            "llm": "b",
            "target_tokens": 50,
            "prompt_tokens": 50,
            "uncached_ms": {"n": 3, "p50": 60.6, "p95": 60.6, "max": 60.6, "min": 60.2, "mean": 60.5},
            "cached_ms": {"n": 3, "p50": 34.6, "p95": 35.6, "max": 35.7, "min": 34.3, "mean": 34.9},
            "uncached_samples_ms": [60.22, 60.59, 60.59],
            "cached_samples_ms": [34.27, 35.74, 34.63],
            "cached_evaluated_tokens": 15,
            "cached_reused_tokens": 35,
            "ratio_p50": 1.75,
            "prefill_tokens_per_s": 825,
        },
        {
            "llm": "b",
            "target_tokens": 200,
            "prompt_tokens": 200,
            "uncached_ms": {"n": 3, "p50": 171.0, "p95": 171.0, "max": 171.0, "min": 170.6, "mean": 170.9},
            "cached_ms": {"n": 3, "p50": 35.0, "p95": 35.3, "max": 35.4, "min": 34.6, "mean": 35.0},
            "uncached_samples_ms": [170.61, 170.98, 170.98],
            "cached_samples_ms": [35.0, 34.63, 35.38],
            "cached_evaluated_tokens": 15,
            "cached_reused_tokens": 185,
            "ratio_p50": 4.89,
            "prefill_tokens_per_s": 1170,
        },
        {
            "llm": "b",
            "target_tokens": 400,
            "prompt_tokens": 377,
            "uncached_ms": {"n": 3, "p50": 299.3, "p95": 299.3, "max": 299.3, "min": 298.9, "mean": 299.1},
            "cached_ms": {"n": 3, "p50": 35.4, "p95": 35.7, "max": 35.7, "min": 34.3, "mean": 35.1},
            "uncached_samples_ms": [298.89, 299.26, 299.26],
            "cached_samples_ms": [35.74, 35.38, 34.27],
            "cached_evaluated_tokens": 15,
            "cached_reused_tokens": 362,
            "ratio_p50": 8.45,
            "prefill_tokens_per_s": 1260,
        },
    ],
}


class _Llm:
    """Counts a word as a token; keeps the last prompt in its 'cache'."""

    n_ctx = 600

    def __init__(self, name: str) -> None:
        self.name = name
        self.cached: list[str] = []
        self.calls = 0

    def count_tokens(self, messages: list[ChatMessage]) -> int:
        return sum(len(m.content.split()) + 3 for m in messages)

    def reset_cache(self) -> None:
        self.cached = []


def _time_first_token(llm: _Llm, messages: list[ChatMessage]) -> tuple[float, PromptInfo]:
    """TTFT grows with the tokens evaluated; the cache keeps the system message."""
    n = llm.count_tokens(messages)
    words = messages[0].content.split()
    reused = len(words) if llm.cached == words else 0
    llm.cached = words
    llm.calls += 1
    ms = 20.0 + 0.731 * (n - reused) + 0.37 * (llm.calls % 5) + (3.3 if llm.name == "b" else 0.0)
    return ms, PromptInfo(n, reused, n - reused)


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lengths: str) -> dict[str, Any]:
    """The command's JSON with its machine record cut down to the guard's part (the rest is this machine's)."""
    monkeypatch.chdir(tmp_path)
    Path("doc.txt").write_text(" ".join(f"w{i}" for i in range(120)), encoding="utf-8")
    Path("c.toml").write_text('[llm]\nn_ctx = 600\nn_batch = 64\nn_threads = 2\nsystem_prompt = "Be brief."\n')
    monkeypatch.setattr(prefill, "load_llm", lambda config, name: _Llm(name))
    monkeypatch.setattr(prefill, "time_first_token", _time_first_token)
    monkeypatch.setattr(machine, "cpu_snapshot", lambda: {})
    monkeypatch.setattr(machine, "other_cpu", lambda a, b, c: {"other_processes_cpu_percent": 2.0})
    argv = ["bench", "prefill", "--config", "c.toml", "--llm", "a,b", "--lengths", lengths, "--repeats", "3",
            "--text", "doc.txt", "--json", "p.json"]  # fmt: skip
    assert prefill.run(build_parser().parse_args(argv)) == 0
    data: dict[str, Any] = json.loads(Path("p.json").read_text(encoding="utf-8"))
    data["meta"]["machine"] = {k: v for k, v in data["meta"]["machine"].items() if k == "guard"}
    return data


def test_prefill_json_is_what_the_dict_code_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _run(tmp_path, monkeypatch, "50,200,400,900")  # 400 repeats the text; 900 does not fit n_ctx
    assert data == EXPECTED
    assert json.dumps(data) == json.dumps(EXPECTED)  # the same order too


@pytest.mark.parametrize(
    "stem", ["2026-12-02-prefill", "prefill-2026-12-03-grounding-off", "prefill-2026-12-03-grounding-on"]
)
def test_the_committed_results_read_back_and_give_their_markdown(stem: str) -> None:
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    data = json.loads((results / f"{stem}.json").read_text(encoding="utf-8"))
    result = PrefillResult.from_json(data)
    assert json.dumps(result.to_json()) == json.dumps(data)
    md = results / f"{stem}.md"
    assert prefill.markdown(result, results / f"{stem}.png", md) + "\n" == md.read_text(encoding="utf-8")
