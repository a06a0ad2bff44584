"""voice bench kv's typed result writes the JSON the dict-based code wrote (keys, order, values): the whole
command on scripted turns (the expected JSON below is what that code wrote for them) and the committed result,
whose Markdown the typed result reproduces too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import FINISHED_MACHINE_JSON, check_committed, fake_machine, same_json
from tests.conftest import make_config
from voice.bench.kv import measure as kv
from voice.bench.kv.result import KvResult, TurnTiming
from voice.cli import main
from voice.runtime.kvcache import KvStats

METHOD = (kv.__doc__ or "").strip()


class FakeKvLlm:
    """Stands for the LLM loaded at one KV bound: its cache's counters grow with the bound."""

    def __init__(self, mb: int) -> None:
        self.mb = mb

    def kv_stats(self) -> KvStats:
        mb = self.mb
        return KvStats(mb * 2**20, 3 * 2**20, 4, 7 + mb, 5, mb // 8, 40, 12.5 * mb, 3.25 * mb)


def sessions(llm: FakeKvLlm, n_sessions: int, turns: int) -> list[TurnTiming]:
    """Sessions taking turns: below 16 MB the first session evaluates its history again from its third turn;
    one turn gives no text."""
    out = []
    for k in range(turns):
        for s in range(n_sessions):
            ev = 30 + 10 * k if (llm.mb < 16 and k > 1 and s == 0) else 12
            ttft = None if (s == 1 and k == 2) else round(40.0 + 3 * k + s + llm.mb / 8, 2)
            out.append(TurnTiming(s, k + 1, ttft, 50 + 25 * k, ev, ev - 12, round(0.5 * llm.mb, 2), 0,
                                  round(0.1 * llm.mb + k, 2)))  # fmt: skip
    return out


def long_conversation(llm: FakeKvLlm, turns: int) -> list[TurnTiming]:
    """A conversation that trims its history every third turn; one turn gives no text."""
    return [
        TurnTiming(0, k + 1, None if k == 3 else 50.0 + 7 * k, 60 + 40 * k, 12 if k % 3 else 200, 0, 0.0,
                   2 if k % 3 == 0 and k else 0, 1.5 * k)
        for k in range(turns)
    ]  # fmt: skip


def test_the_command_writes_the_json_the_dicts_did(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(kv, "load_config", lambda p: make_config(llm={"kv_cache_mb": 8}))
    monkeypatch.setattr(kv, "_load", lambda config, mb: FakeKvLlm(mb))
    monkeypatch.setattr(kv, "interleaved_sessions", sessions)
    monkeypatch.setattr(kv, "long_conversation", long_conversation)
    fake_machine(monkeypatch)
    out = tmp_path / "r.json"
    args = ["bench", "kv", "--sessions", "2", "--turns", "3", "--bounds-mb", "0,64", "--long-turns", "5",
            "--json", str(out)]  # fmt: skip
    assert main(args) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert same_json(written, KV_JSON)
    result = KvResult.from_json(written)
    assert result.to_json() == written and KvResult.from_json(result.to_json()) == result
    assert [b.save_ms_mean for b in result.bounds] == [None, 11.27] and result.long.trim_turns == (4,)


def test_the_committed_result_reads_back_to_the_same_json_and_markdown() -> None:
    check_committed("2026-12-03-kv.json", KvResult.from_json, lambda r, md: kv.markdown(r, md.with_suffix(".png"), md))


KV_JSON: dict[str, Any] = {
    "tool": "voice bench kv",
    "schema": 1,
    "meta": {
        "machine": FINISHED_MACHINE_JSON,
        "llm": "smollm2-135m",
        "llm_settings": {"n_ctx": 2048, "n_batch": 256, "n_threads": 2},
        "max_reply_tokens": 96,
        "sessions": 2,
        "turns": 3,
    },
    "method": METHOD,
    "bounds": [
        {
            "kv_cache_mb": 0,
            "ttft_after_first_turn": {
                "n": 3,
                "p50": 44.0,
                "p95": 45.8,
                "max": 46.0,
                "min": 43.0,
                "mean": 44.3,
            },
            "evaluated_after_first_turn": {
                "n": 4,
                "p50": 12.0,
                "p95": 44.3,
                "max": 50.0,
                "min": 12.0,
                "mean": 21.5,
            },
            "prompt_tokens_after_first_turn": {
                "n": 4,
                "p50": 87.5,
                "p95": 100.0,
                "max": 100.0,
                "min": 75.0,
                "mean": 87.5,
            },
            "turns_evicted": 1,
            "reevaluated_tokens": 38,
            "evictions": 0,
            "kv_cache_mb_max": 2.0,
            "save_ms_mean": None,
            "restore_ms_mean": None,
            "turns": [
                {
                    "session": 0,
                    "turn": 1,
                    "ttft_ms": 40.0,
                    "prompt_tokens": 50,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 0.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 0.0,
                },
                {
                    "session": 1,
                    "turn": 1,
                    "ttft_ms": 41.0,
                    "prompt_tokens": 50,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 0.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 0.0,
                },
                {
                    "session": 0,
                    "turn": 2,
                    "ttft_ms": 43.0,
                    "prompt_tokens": 75,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 0.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 1.0,
                },
                {
                    "session": 1,
                    "turn": 2,
                    "ttft_ms": 44.0,
                    "prompt_tokens": 75,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 0.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 1.0,
                },
                {
                    "session": 0,
                    "turn": 3,
                    "ttft_ms": 46.0,
                    "prompt_tokens": 100,
                    "evaluated_tokens": 50,
                    "reevaluated_tokens": 38,
                    "restore_ms": 0.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 2.0,
                },
                {
                    "session": 1,
                    "turn": 3,
                    "ttft_ms": None,
                    "prompt_tokens": 100,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 0.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 2.0,
                },
            ],
        },
        {
            "kv_cache_mb": 64,
            "ttft_after_first_turn": {
                "n": 3,
                "p50": 52.0,
                "p95": 53.8,
                "max": 54.0,
                "min": 51.0,
                "mean": 52.3,
            },
            "evaluated_after_first_turn": {
                "n": 4,
                "p50": 12.0,
                "p95": 12.0,
                "max": 12.0,
                "min": 12.0,
                "mean": 12.0,
            },
            "prompt_tokens_after_first_turn": {
                "n": 4,
                "p50": 87.5,
                "p95": 100.0,
                "max": 100.0,
                "min": 75.0,
                "mean": 87.5,
            },
            "turns_evicted": 0,
            "reevaluated_tokens": 0,
            "evictions": 8,
            "kv_cache_mb_max": 8.4,
            "save_ms_mean": 11.27,
            "restore_ms_mean": 41.6,
            "turns": [
                {
                    "session": 0,
                    "turn": 1,
                    "ttft_ms": 48.0,
                    "prompt_tokens": 50,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 32.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 6.4,
                },
                {
                    "session": 1,
                    "turn": 1,
                    "ttft_ms": 49.0,
                    "prompt_tokens": 50,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 32.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 6.4,
                },
                {
                    "session": 0,
                    "turn": 2,
                    "ttft_ms": 51.0,
                    "prompt_tokens": 75,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 32.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 7.4,
                },
                {
                    "session": 1,
                    "turn": 2,
                    "ttft_ms": 52.0,
                    "prompt_tokens": 75,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 32.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 7.4,
                },
                {
                    "session": 0,
                    "turn": 3,
                    "ttft_ms": 54.0,
                    "prompt_tokens": 100,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 32.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 8.4,
                },
                {
                    "session": 1,
                    "turn": 3,
                    "ttft_ms": None,
                    "prompt_tokens": 100,
                    "evaluated_tokens": 12,
                    "reevaluated_tokens": 0,
                    "restore_ms": 32.0,
                    "trimmed_messages": 0,
                    "kv_cache_mb": 8.4,
                },
            ],
        },
    ],
    "long": {
        "kv_cache_mb": 8,
        "turns": [
            {
                "session": 0,
                "turn": 1,
                "ttft_ms": 50.0,
                "prompt_tokens": 60,
                "evaluated_tokens": 200,
                "reevaluated_tokens": 0,
                "restore_ms": 0.0,
                "trimmed_messages": 0,
                "kv_cache_mb": 0.0,
            },
            {
                "session": 0,
                "turn": 2,
                "ttft_ms": 57.0,
                "prompt_tokens": 100,
                "evaluated_tokens": 12,
                "reevaluated_tokens": 0,
                "restore_ms": 0.0,
                "trimmed_messages": 0,
                "kv_cache_mb": 1.5,
            },
            {
                "session": 0,
                "turn": 3,
                "ttft_ms": 64.0,
                "prompt_tokens": 140,
                "evaluated_tokens": 12,
                "reevaluated_tokens": 0,
                "restore_ms": 0.0,
                "trimmed_messages": 0,
                "kv_cache_mb": 3.0,
            },
            {
                "session": 0,
                "turn": 4,
                "ttft_ms": None,
                "prompt_tokens": 180,
                "evaluated_tokens": 200,
                "reevaluated_tokens": 0,
                "restore_ms": 0.0,
                "trimmed_messages": 2,
                "kv_cache_mb": 4.5,
            },
            {
                "session": 0,
                "turn": 5,
                "ttft_ms": 78.0,
                "prompt_tokens": 220,
                "evaluated_tokens": 12,
                "reevaluated_tokens": 0,
                "restore_ms": 0.0,
                "trimmed_messages": 0,
                "kv_cache_mb": 6.0,
            },
        ],
        "trim_turns": [4],
        "ttft": {"n": 4, "p50": 60.5, "p95": 75.9, "max": 78.0, "min": 50.0, "mean": 62.2},
    },
}
