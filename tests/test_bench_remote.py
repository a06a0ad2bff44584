"""``voice bench remote``'s report on data (the sitting itself runs real models: see benchmarks/README.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import make_config
from voice.bench.remote import HEADER, markdown, remote_config, rows


def text_rows(replies: list[str], ttft_ms: float) -> list[dict[str, Any]]:
    return [{"id": f"q{i}", "reply": r, "ttft_ms": ttft_ms} for i, r in enumerate(replies)]


def result(local: list[str], served: list[str]) -> dict[str, Any]:
    def summary(ttft: float) -> dict[str, Any]:
        return {"right_pct": 50.0, "median_ttft_ms": ttft, "median_reply_ms": ttft * 3}

    return {
        "machine": {"cores": 2},
        "server": "loopback",
        "model": "m",
        "temperature": 0.0,
        "settings": {},
        "text": {
            "same_replies": sum(a == b for a, b in zip(local, served, strict=True)),
            "items": len(local),
            "backends": {
                "in-process": {"summary": summary(60.0), "rows": text_rows(local, 60.0)},
                "server": {"summary": summary(75.0), "rows": text_rows(served, 75.0)},
            },
        },
        "e2e": {
            "in-process": {"summary": {"p50_ms": 600.0, "p95_ms": 700.0, "llm_ttft": {"p50": 80.0}, "n_measured": 4}},
            "server": {"summary": {"p50_ms": 640.0, "p95_ms": 760.0, "llm_ttft": {"p50": 95.0}, "n_measured": 4}},
        },
    }


def test_remote_config_points_the_llm_at_the_server() -> None:
    c = remote_config(make_config(), "http://10.0.0.5:8000/v1", "HuggingFaceTB/SmolLM2-135M-Instruct")
    assert (c.llm.backend, c.llm.base_url, c.llm.model) == (
        "openai", "http://10.0.0.5:8000/v1", "HuggingFaceTB/SmolLM2-135M-Instruct",
    )
    assert remote_config(make_config(), "http://x/v1", None).llm.model == make_config().llm.model


def test_rows_put_text_and_mouth_to_ear_side_by_side() -> None:
    table = rows(result(["a", "b"], ["a", "c"]))
    assert len(table) == 2 and all(len(r) == len(HEADER) for r in table)
    assert table[0][:2] == ["in-process", "1/2"]
    assert table[1][3] == 75.0 and table[1][5] == 640.0 and table[1][7] == 95.0


def test_the_markdown_lists_the_replies_that_differ(monkeypatch: Any) -> None:
    monkeypatch.setattr("voice.bench.remote.machine_markdown", lambda m: "machine")
    md = markdown(result(["same", "x"], ["same", "y"]), None, Path("r.md"))
    assert "Replies that differ" in md and "| q1 | x | y |" in md and "q0" not in md.split("differ")[1]
    assert "Replies that differ" not in markdown(result(["s"], ["s"]), None, Path("r.md"))
