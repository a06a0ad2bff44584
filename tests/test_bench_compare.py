"""``voice bench e2e --compare-direct``: the added latency is paired per clip and repeat (pure, on data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import RESULTS, same_json
from voice.bench.e2e.compare import AddedLatency, added_latency, compare_lines
from voice.bench.e2e.result import E2eResult
from voice.bench.e2e.turn import TurnResult

#: A sample of no value (``stats.describe([])``), keys in order.
NOTHING = {"n": 0, "p50": None, "p95": None, "max": None, "min": None, "mean": None}


def turn(
    clip: str,
    repeat: int,
    m2e: float | None,
    *,
    phase: str = "measured",
    uncertain: str | None = None,
    recon: float | None = None,
) -> TurnResult:
    return TurnResult(clip, repeat, phase, False, "ok" if m2e is not None else "timeout",
                      mouth_to_ear_ms=m2e, uncertain=uncertain, reconciliation_error_ms=recon)  # fmt: skip


def test_pairs_are_same_clip_same_repeat_and_skip_what_cannot_be_compared() -> None:
    proxied = [
        turn("a.wav", 0, 900.0, phase="warmup"),  # warm-up: never compared
        turn("a.wav", 1, 610.0, recon=25.0),
        turn("b.wav", 1, 820.0, recon=31.0),
        turn("a.wav", 2, 640.0),  # no reconciliation: left out of the outside-the-server figure only
        turn("b.wav", 2, None),  # failed through the proxy
        turn("c.wav", 1, 700.0, uncertain="speech end ambiguous"),
    ]
    direct = [
        turn("a.wav", 0, 500.0, phase="warmup"),
        turn("b.wav", 1, 800.0, recon=20.0),  # order differs from the proxied list
        turn("a.wav", 1, 600.0, recon=21.0),
        turn("a.wav", 2, 600.0),
        turn("b.wav", 2, 790.0),
        turn("c.wav", 1, 650.0),
    ]
    cmp = added_latency(proxied, direct)
    assert cmp.n_pairs == 3
    assert [(p.clip, p.repeat) for p in cmp.pairs] == [("a.wav", 1), ("a.wav", 2), ("b.wav", 1)]
    assert cmp.added_ms.p50 == pytest.approx(20.0)  # diffs 10, 40, 20
    assert cmp.added_ms.max == pytest.approx(40.0) and cmp.added_ms.min == pytest.approx(10.0)
    assert cmp.proxied.p50 == pytest.approx(640.0) and cmp.direct.p50 == pytest.approx(600.0)
    outside = cmp.added_outside_server_ms  # pairs a#1 (25 - 21) and b#1 (31 - 20)
    assert outside.n == 2 and outside.min == pytest.approx(4.0) and outside.max == pytest.approx(11.0)
    lines = compare_lines(cmp, proxied_bursts=2, direct_bursts=0)
    assert "adds p50 20 ms" in lines[0] and "2 proxied turn(s), 0 direct" in lines[1]
    assert "outside the server's stages it adds p50 8 ms" in lines[0]


def test_nothing_to_compare_says_so() -> None:
    cmp = added_latency([turn("a.wav", 1, None)], [turn("a.wav", 1, 600.0)])
    assert cmp.n_pairs == 0 and cmp.added_ms.p50 is None
    assert compare_lines(cmp, 0, 0) == ["through the proxy vs direct: no pair of measured turns to compare"]


def test_the_json_is_what_the_dict_code_wrote() -> None:
    """The added latency's JSON, worked out by hand from the turns (percentiles interpolated between ranks, one
    decimal): the keys and their order as the dict-based code wrote them; read back, the same result."""
    proxied = [turn("a.wav", 1, 610.0, recon=30.0), turn("b.wav", 1, 840.0, recon=44.0), turn("a.wav", 2, 700.0)]
    direct = [turn("b.wav", 1, 800.0, recon=20.0), turn("a.wav", 1, 600.0, recon=26.0), turn("a.wav", 2, 650.0)]
    expected: dict[str, Any] = {
        "n_pairs": 3,
        # pairs a#1, a#2, b#1: 10, 50, 40 ms; p95 at rank 1.9 of (10, 40, 50) = 40 + 0.9 × 10
        "added_ms": {"n": 3, "p50": 40.0, "p95": 49.0, "max": 50.0, "min": 10.0, "mean": 33.3},
        # a#1 30 − 26 = 4, b#1 44 − 20 = 24 (a#2 has no reconciliation); p95 at rank 0.95 = 4 + 0.95 × 20
        "added_outside_server_ms": {"n": 2, "p50": 14.0, "p95": 23.0, "max": 24.0, "min": 4.0, "mean": 14.0},
        "proxied": {"n": 3, "p50": 700.0, "p95": 826.0, "max": 840.0, "min": 610.0, "mean": 716.7},
        "direct": {"n": 3, "p50": 650.0, "p95": 785.0, "max": 800.0, "min": 600.0, "mean": 683.3},
        "pairs": [
            {"clip": "a.wav", "repeat": 1, "proxied_ms": 610.0, "direct_ms": 600.0},
            {"clip": "a.wav", "repeat": 2, "proxied_ms": 700.0, "direct_ms": 650.0},
            {"clip": "b.wav", "repeat": 1, "proxied_ms": 840.0, "direct_ms": 800.0},
        ],
    }
    cmp = added_latency(proxied, direct)
    assert same_json(cmp.to_json(), expected) and AddedLatency.from_json(expected) == cmp
    nothing = {"n_pairs": 0, "added_ms": NOTHING, "added_outside_server_ms": NOTHING, "proxied": NOTHING,
               "direct": NOTHING, "pairs": []}  # fmt: skip
    none = added_latency([turn("a.wav", 1, None)], [turn("a.wav", 1, 600.0)])
    assert same_json(none.to_json(), nothing) and AddedLatency.from_json(nothing) == none


def test_the_committed_comparison_is_made_again_from_its_turns() -> None:
    """The committed ``--compare-direct`` run: its turns read back give the added latency it holds, which reads
    back to the same JSON (its Markdown is checked with the other committed e2e results)."""
    committed = json.loads((RESULTS / "2026-12-03-e2e-proxy.json").read_text(encoding="utf-8"))
    result = E2eResult.from_json(committed)
    assert same_json(result.to_json()["added_latency"], committed["added_latency"])
    assert same_json(AddedLatency.from_json(committed["added_latency"]).to_json(), committed["added_latency"])
    assert committed["added_latency"]["n_pairs"] == 20


def test_the_command_refuses_compare_direct_without_url_and_an_unusable_ca_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from voice.cli import main

    assert main(["bench", "e2e", "--compare-direct", "ws://127.0.0.1:9/", "--speech", str(tmp_path)]) == 2
    assert "--compare-direct compares with --url" in capsys.readouterr().err
    missing = f"{tmp_path}/missing.pem"
    assert main(["bench", "e2e", "--url", "wss://localhost:9/", "--ca-file", missing, "--speech", str(tmp_path)]) == 2
    assert f"cannot use --ca-file {missing}" in capsys.readouterr().err
