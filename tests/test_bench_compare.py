"""``voice bench e2e --compare-direct``: the added latency is paired per clip and repeat (pure, on data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from voice.bench.e2e_compare import added_latency, compare_lines
from voice.bench.e2e_turn import TurnResult


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
    assert cmp["n_pairs"] == 3
    assert [(p["clip"], p["repeat"]) for p in cmp["pairs"]] == [("a.wav", 1), ("a.wav", 2), ("b.wav", 1)]
    assert cmp["added_ms"]["p50"] == pytest.approx(20.0)  # diffs 10, 40, 20
    assert cmp["added_ms"]["max"] == pytest.approx(40.0) and cmp["added_ms"]["min"] == pytest.approx(10.0)
    assert cmp["proxied"]["p50"] == pytest.approx(640.0) and cmp["direct"]["p50"] == pytest.approx(600.0)
    outside = cmp["added_outside_server_ms"]  # pairs a#1 (25 - 21) and b#1 (31 - 20)
    assert outside["n"] == 2 and outside["min"] == pytest.approx(4.0) and outside["max"] == pytest.approx(11.0)
    lines = compare_lines(cmp, proxied_bursts=2, direct_bursts=0)
    assert "adds p50 20 ms" in lines[0] and "2 proxied turn(s), 0 direct" in lines[1]
    assert "outside the server's stages it adds p50 8 ms" in lines[0]


def test_nothing_to_compare_says_so() -> None:
    cmp = added_latency([turn("a.wav", 1, None)], [turn("a.wav", 1, 600.0)])
    assert cmp["n_pairs"] == 0 and cmp["added_ms"]["p50"] is None
    assert compare_lines(cmp, 0, 0) == ["through the proxy vs direct: no pair of measured turns to compare"]


def test_the_command_refuses_compare_direct_without_url_and_an_unusable_ca_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from voice.cli import main

    assert main(["bench", "e2e", "--compare-direct", "ws://127.0.0.1:9/", "--speech", str(tmp_path)]) == 2
    assert "--compare-direct compares with --url" in capsys.readouterr().err
    missing = f"{tmp_path}/missing.pem"
    assert main(["bench", "e2e", "--url", "wss://localhost:9/", "--ca-file", missing, "--speech", str(tmp_path)]) == 2
    assert f"cannot use --ca-file {missing}" in capsys.readouterr().err
