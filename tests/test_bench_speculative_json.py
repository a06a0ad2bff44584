"""voice bench speculative's typed result writes the JSON the dict-based code wrote (keys, order, values): the
whole command on scripted replies (the expected JSON below is what that code wrote for them) and the committed
result, whose Markdown the typed result reproduces too."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import FAKE_MACHINE_JSON, check_committed, ended, fake_machine, same_json
from tests.conftest import make_config
from voice.bench import scaffold
from voice.bench.machine_record import GuardSummary
from voice.bench.speculative import measure as speculative
from voice.bench.speculative.measure import Prompt
from voice.bench.speculative.report import markdown
from voice.bench.speculative.result import Decoded, SpeculativeResult
from voice.cli import main

SYSTEM_PROMPT = make_config().llm.system_prompt
PROMPTS = """[[prompt]]
name = "hi"
kind = "short"
text = "Say hi."
max_tokens = 8
[[prompt]]
name = "copy"
kind = "repeat"
text = "Repeat the list."
system = "Repeat exactly."
"""


class ScriptedDecoder:
    """Replies that depend on the model, the draft tokens, the prompt and the how-many-th call it is: faster
    with more draft tokens, one variant's text different from the baseline's, one TTFT missing."""

    def __init__(self) -> None:
        self.calls: dict[tuple[str, int | None, str], int] = {}

    def __call__(self, llm: tuple[str, int | None], system: str, prompt: Prompt) -> Decoded:
        name, k = llm
        n = self.calls[(name, k, prompt.name)] = self.calls.get((name, k, prompt.name), 0) + 1
        step = 20.0 if k is None else 20.0 / (1 + k / 10)
        n_tokens = len(prompt.name) + 3 + (1 if k == 10 and prompt.kind == "repeat" and n == 3 else 0)
        token_ms = tuple(round(30.0 + n + i * step, 2) for i in range(n_tokens))
        steps = max(1, n_tokens - (k or 0) // 4)
        return Decoded(
            text=f"{name} {prompt.name} {system[:6]}" + ("!" if k == 10 and prompt.kind == "repeat" else ""),
            n_tokens=n_tokens,
            token_ms=token_ms,
            ttft_ms=None if (n == 2 and k is None and prompt.kind == "short") else token_ms[0],
            itl_mean_ms=round(step + n / 10, 2),
            itl_p95_ms=round(step + n / 5, 2),
            tps=round(1000 / (step + n / 10), 2),
            e2e_ms=token_ms[-1],
            decode_steps=None if k is None else steps,
            proposed_tokens=None if k is None else k * steps,
            tokens_per_step=None if k is None else round(n_tokens / steps, 2),
        )


GUARD_JSON: dict[str, Any] = {
    "enabled": False,
    "max_other_percent": 10.0,
    "samples": 18,
    "redone_samples": 0,
    "other_cpu_percent_p50": 0.5,
    "other_cpu_percent_max": 2.5,
}
GUARD = GuardSummary.from_json(GUARD_JSON)


def test_the_command_writes_the_json_the_dicts_did(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text(PROMPTS)
    monkeypatch.setattr(speculative, "load_config", lambda p: make_config())
    monkeypatch.setattr(speculative, "load_llm", lambda c, name, draft_model=None: (name, draft_model))
    monkeypatch.setattr("voice.backends.llm_llama.prompt_lookup_draft", lambda ngram, k: k)
    monkeypatch.setattr(speculative, "decode", ScriptedDecoder())
    fake_machine(monkeypatch)
    # The guard's record varies (this machine's CPU shares): the run's is replaced by a made-up one.
    monkeypatch.setattr(scaffold, "finish", lambda m: ended(dataclasses.replace(m, guard=GUARD)))
    out = tmp_path / "r.json"
    args = ["bench", "speculative", "--llm", "a", "--draft-tokens", "4,10", "--ngram", "3", "--repeats", "3",
            "--prompts", str(tmp_path / "p.toml"), "--json", str(out)]  # fmt: skip
    assert main(args) == 0
    expected = {
        **SPECULATIVE_JSON,
        "meta": {**SPECULATIVE_JSON["meta"], "prompts_file": str(tmp_path / "p.toml")},
    }
    written = json.loads(out.read_text(encoding="utf-8"))
    assert same_json(written, expected)
    result = SpeculativeResult.from_json(written)
    assert result.to_json() == written and SpeculativeResult.from_json(result.to_json()) == result
    assert [r.speedup is None for r in result.rows] == [True, False, False] * 2


def test_the_committed_result_reads_back_to_the_same_json_and_markdown() -> None:
    def md_text(result: SpeculativeResult, md: Path) -> str:
        return markdown(result, md.with_suffix(".png"), md) + "\n"

    check_committed("2026-12-02-speculative.json", SpeculativeResult.from_json, md_text)


SPECULATIVE_JSON: dict[str, Any] = {
    "tool": "voice bench speculative",
    "schema": 1,
    "meta": {
        "machine": {**FAKE_MACHINE_JSON, "guard": GUARD_JSON, "end": "x"},
        "n_ctx": 2048,
        "n_batch": 256,
        "n_threads": 2,
        "temperature": 0.0,
        "draft_tokens": [4, 10],
        "ngram": 3,
        "repeats": 3,
        "prompts_file": "p.toml",
        "system_prompt": SYSTEM_PROMPT,
    },
    "summary": [
        {
            "llm": "a",
            "kind": "short",
            "variant": "baseline",
            "prompts": 1,
            "tokens_p50": 5.0,
            "ttft_ms_p50": 33.5,
            "itl_ms_p50": 20.3,
            "tps_p50": 49.3,
            "e2e_ms_p50": 113.0,
            "tps_speedup": None,
            "e2e_speedup": None,
            "ttft_ratio": None,
            "tokens_per_step": None,
            "same_outputs": "1/1",
        },
        {
            "llm": "a",
            "kind": "short",
            "variant": "prompt-lookup 4",
            "prompts": 1,
            "tokens_p50": 5.0,
            "ttft_ms_p50": 33.0,
            "itl_ms_p50": 14.6,
            "tps_p50": 68.6,
            "e2e_ms_p50": 90.1,
            "tps_speedup": 1.39,
            "e2e_speedup": 1.25,
            "ttft_ratio": 0.99,
            "tokens_per_step": 1.25,
            "same_outputs": "1/1",
        },
        {
            "llm": "a",
            "kind": "short",
            "variant": "prompt-lookup 10",
            "prompts": 1,
            "tokens_p50": 5.0,
            "ttft_ms_p50": 33.0,
            "itl_ms_p50": 10.3,
            "tps_p50": 97.1,
            "e2e_ms_p50": 73.0,
            "tps_speedup": 1.97,
            "e2e_speedup": 1.55,
            "ttft_ratio": 0.99,
            "tokens_per_step": 1.67,
            "same_outputs": "1/1",
        },
        {
            "llm": "a",
            "kind": "repeat",
            "variant": "baseline",
            "prompts": 1,
            "tokens_p50": 7.0,
            "ttft_ms_p50": 33.0,
            "itl_ms_p50": 20.3,
            "tps_p50": 49.3,
            "e2e_ms_p50": 153.0,
            "tps_speedup": None,
            "e2e_speedup": None,
            "ttft_ratio": None,
            "tokens_per_step": None,
            "same_outputs": "1/1",
        },
        {
            "llm": "a",
            "kind": "repeat",
            "variant": "prompt-lookup 4",
            "prompts": 1,
            "tokens_p50": 7.0,
            "ttft_ms_p50": 33.0,
            "itl_ms_p50": 14.6,
            "tps_p50": 68.6,
            "e2e_ms_p50": 118.7,
            "tps_speedup": 1.39,
            "e2e_speedup": 1.29,
            "ttft_ratio": 1.0,
            "tokens_per_step": 1.17,
            "same_outputs": "1/1",
        },
        {
            "llm": "a",
            "kind": "repeat",
            "variant": "prompt-lookup 10",
            "prompts": 1,
            "tokens_p50": 7.0,
            "ttft_ms_p50": 33.0,
            "itl_ms_p50": 10.3,
            "tps_p50": 97.1,
            "e2e_ms_p50": 94.0,
            "tps_speedup": 1.97,
            "e2e_speedup": 1.65,
            "ttft_ratio": 1.0,
            "tokens_per_step": 1.4,
            "same_outputs": "0/1",
        },
    ],
    "rows": [
        {
            "llm": "a",
            "prompt": "hi",
            "kind": "short",
            "variant": "baseline",
            "n_tokens": 5,
            "same_output_as_baseline": True,
            "first_difference_at_char": None,
            "deterministic_across_repeats": True,
            "text": "a hi You ar",
            "ttft_ms": {"n": 2, "p50": 33.5, "p95": 34.0, "max": 34.0, "min": 33.0, "mean": 33.5},
            "itl_mean_ms": {"n": 3, "p50": 20.3, "p95": 20.4, "max": 20.4, "min": 20.2, "mean": 20.3},
            "tps": {"n": 3, "p50": 49.3, "p95": 49.5, "max": 49.5, "min": 49.0, "mean": 49.3},
            "e2e_ms": {"n": 3, "p50": 113.0, "p95": 113.9, "max": 114.0, "min": 112.0, "mean": 113.0},
        },
        {
            "llm": "a",
            "prompt": "hi",
            "kind": "short",
            "variant": "prompt-lookup 4",
            "n_tokens": 5,
            "same_output_as_baseline": True,
            "first_difference_at_char": None,
            "deterministic_across_repeats": True,
            "text": "a hi You ar",
            "ttft_ms": {"n": 3, "p50": 33.0, "p95": 33.9, "max": 34.0, "min": 32.0, "mean": 33.0},
            "itl_mean_ms": {"n": 3, "p50": 14.6, "p95": 14.7, "max": 14.7, "min": 14.5, "mean": 14.6},
            "tps": {"n": 3, "p50": 68.6, "p95": 69.0, "max": 69.0, "min": 68.1, "mean": 68.6},
            "e2e_ms": {"n": 3, "p50": 90.1, "p95": 91.0, "max": 91.1, "min": 89.1, "mean": 90.1},
            "tokens_per_step": 1.25,
            "compared_tokens": 5,
            "e2e_common_ms": {"baseline": 113.0, "speculative": 90.14},
            "tps_speedup": 1.39,
            "e2e_speedup": 1.25,
            "ttft_ratio": 0.99,
        },
        {
            "llm": "a",
            "prompt": "hi",
            "kind": "short",
            "variant": "prompt-lookup 10",
            "n_tokens": 5,
            "same_output_as_baseline": True,
            "first_difference_at_char": None,
            "deterministic_across_repeats": True,
            "text": "a hi You ar",
            "ttft_ms": {"n": 3, "p50": 33.0, "p95": 33.9, "max": 34.0, "min": 32.0, "mean": 33.0},
            "itl_mean_ms": {"n": 3, "p50": 10.3, "p95": 10.4, "max": 10.4, "min": 10.2, "mean": 10.3},
            "tps": {"n": 3, "p50": 97.1, "p95": 97.9, "max": 98.0, "min": 96.2, "mean": 97.1},
            "e2e_ms": {"n": 3, "p50": 73.0, "p95": 73.9, "max": 74.0, "min": 72.0, "mean": 73.0},
            "tokens_per_step": 1.67,
            "compared_tokens": 5,
            "e2e_common_ms": {"baseline": 113.0, "speculative": 73.0},
            "tps_speedup": 1.97,
            "e2e_speedup": 1.55,
            "ttft_ratio": 0.99,
        },
        {
            "llm": "a",
            "prompt": "copy",
            "kind": "repeat",
            "variant": "baseline",
            "n_tokens": 7,
            "same_output_as_baseline": True,
            "first_difference_at_char": None,
            "deterministic_across_repeats": True,
            "text": "a copy Repeat",
            "ttft_ms": {"n": 3, "p50": 33.0, "p95": 33.9, "max": 34.0, "min": 32.0, "mean": 33.0},
            "itl_mean_ms": {"n": 3, "p50": 20.3, "p95": 20.4, "max": 20.4, "min": 20.2, "mean": 20.3},
            "tps": {"n": 3, "p50": 49.3, "p95": 49.5, "max": 49.5, "min": 49.0, "mean": 49.3},
            "e2e_ms": {"n": 3, "p50": 153.0, "p95": 153.9, "max": 154.0, "min": 152.0, "mean": 153.0},
        },
        {
            "llm": "a",
            "prompt": "copy",
            "kind": "repeat",
            "variant": "prompt-lookup 4",
            "n_tokens": 7,
            "same_output_as_baseline": True,
            "first_difference_at_char": None,
            "deterministic_across_repeats": True,
            "text": "a copy Repeat",
            "ttft_ms": {"n": 3, "p50": 33.0, "p95": 33.9, "max": 34.0, "min": 32.0, "mean": 33.0},
            "itl_mean_ms": {"n": 3, "p50": 14.6, "p95": 14.7, "max": 14.7, "min": 14.5, "mean": 14.6},
            "tps": {"n": 3, "p50": 68.6, "p95": 69.0, "max": 69.0, "min": 68.1, "mean": 68.6},
            "e2e_ms": {"n": 3, "p50": 118.7, "p95": 119.6, "max": 119.7, "min": 117.7, "mean": 118.7},
            "tokens_per_step": 1.17,
            "compared_tokens": 7,
            "e2e_common_ms": {"baseline": 153.0, "speculative": 118.71},
            "tps_speedup": 1.39,
            "e2e_speedup": 1.29,
            "ttft_ratio": 1.0,
        },
        {
            "llm": "a",
            "prompt": "copy",
            "kind": "repeat",
            "variant": "prompt-lookup 10",
            "n_tokens": 7,
            "same_output_as_baseline": False,
            "first_difference_at_char": 13,
            "deterministic_across_repeats": True,
            "text": "a copy Repeat!",
            "ttft_ms": {"n": 3, "p50": 33.0, "p95": 33.9, "max": 34.0, "min": 32.0, "mean": 33.0},
            "itl_mean_ms": {"n": 3, "p50": 10.3, "p95": 10.4, "max": 10.4, "min": 10.2, "mean": 10.3},
            "tps": {"n": 3, "p50": 97.1, "p95": 97.9, "max": 98.0, "min": 96.2, "mean": 97.1},
            "e2e_ms": {"n": 3, "p50": 94.0, "p95": 102.1, "max": 103.0, "min": 92.0, "mean": 96.3},
            "tokens_per_step": 1.4,
            "compared_tokens": 7,
            "e2e_common_ms": {"baseline": 153.0, "speculative": 93.0},
            "tps_speedup": 1.97,
            "e2e_speedup": 1.65,
            "ttft_ratio": 1.0,
        },
    ],
}
