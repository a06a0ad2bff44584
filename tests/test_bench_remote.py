"""``voice bench remote``'s report on data (the sitting itself runs real models: see docs/measuring.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from tests.conftest import make_config
from voice.bench.e2e.result import summarize
from voice.bench.quality.question_set import JudgedSummary
from voice.bench.quality.result import TextRow, TextSummary
from voice.bench.remote.measure import HEADER, markdown, remote_config, rows
from voice.bench.remote.result import E2eBackend, E2eComparison, RemoteResult, TextBackend, TextComparison
from voice.bench.stats import describe


def text_rows(replies: list[str], ttft_ms: float) -> tuple[TextRow, ...]:
    return tuple(
        TextRow(id=f"q{i}", category="knowledge", question="?", reply=r, tokens=1, by="llm", ttft_ms=ttft_ms,
                reply_ms=ttft_ms, right=True, refusal_expected=False, refused=False, repeats=False, hit_cap=False,
                words=1, spoken_s_est=0.4, failed=())
        for i, r in enumerate(replies)
    )  # fmt: skip


def result(local: list[str], served: list[str]) -> RemoteResult:
    def summary(ttft: float) -> TextSummary:
        return TextSummary(JudgedSummary(len(local), 50.0, None, 0.0, 0.0, {}), 0.4, ttft, ttft * 3)

    def e2e(p50: float, p95: float, llm_ttft: float) -> E2eBackend:
        s = dataclasses.replace(summarize([]), n_measured=4, p50_ms=p50, p95_ms=p95, llm_ttft=describe([llm_ttft]))
        return E2eBackend(s, ())

    return RemoteResult(
        machine={"cores": 2},
        settings={},
        server="loopback",
        model="m",
        temperature=0.0,
        text=TextComparison(
            same_replies=sum(a == b for a, b in zip(local, served, strict=True)),
            items=len(local),
            backends={
                "in-process": TextBackend(summary(60.0), text_rows(local, 60.0)),
                "server": TextBackend(summary(75.0), text_rows(served, 75.0)),
            },
        ),
        e2e=E2eComparison({"in-process": e2e(600.0, 700.0, 80.0), "server": e2e(640.0, 760.0, 95.0)}),
    )


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
    no_e2e = rows(dataclasses.replace(result(["a"], ["a"]), e2e=None))
    assert no_e2e[0][2:] == [50.0, 60.0, 180.0, None, None, None, None]


def test_the_markdown_lists_the_replies_that_differ(monkeypatch: Any) -> None:
    monkeypatch.setattr("voice.bench.remote.measure.machine_markdown", lambda m: "machine")
    md = markdown(result(["same", "x"], ["same", "y"]), None, Path("r.md"))
    assert "Replies that differ" in md and "| q1 | x | y |" in md and "q0" not in md.split("differ")[1]
    assert "Replies that differ" not in markdown(result(["s"], ["s"]), None, Path("r.md"))
