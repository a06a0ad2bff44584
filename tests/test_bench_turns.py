"""``voice bench turns``: the variants file, the config written for each setting, the row made of an e2e run and
a pauses row, the rule that picks a setting, and the command end to end with the two benches' processes replaced
by canned JSON (data-driven: what each run would have written)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import FAKE_MACHINE, fake_machine, run_command
from voice.bench.clips import BenchError
from voice.bench.pauses.result import StrategyRow
from voice.bench.pauses.variants import merge_turn_vad
from voice.bench.turns import measure
from voice.bench.turns.report import conclusions, markdown, meets_bar, rule_pick
from voice.bench.turns.result import TurnsResult, TurnsRow, TurnsSet
from voice.config.config import DEFAULT_CONFIG_PATH, load_config, parse_config
from voice.config.tomlfile import load_toml

VARIANTS = """
[[variant]]
name = "default"

[[variant]]
name = "sure 200"
turn = { sure_silence_ms = 200 }

[[variant]]
name = "silence 200"
turn = { end_of_turn_model = "" }
vad = { silence_ms = 200 }
"""


def write_variants(tmp_path: Path, text: str = VARIANTS) -> Path:
    path = tmp_path / "v.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_variants_are_read_and_other_keys_refused(tmp_path: Path) -> None:
    read = measure.settings(write_variants(tmp_path), None)
    assert [name for name, _ in read] == ["default", "sure 200", "silence 200"]
    assert read[0][1] == {} and read[2][1] == {"turn": {"end_of_turn_model": ""}, "vad": {"silence_ms": 200}}
    with pytest.raises(BenchError, match=r"variant 'x': only \[turn\] and \[vad\] keys may vary, not \['llm'\]"):
        measure.settings(write_variants(tmp_path, '[[variant]]\nname = "x"\nllm = { n_threads = 1 }\n'), None)
    with pytest.raises(BenchError, match="no \\[\\[variant\\]\\] tables"):
        measure.settings(write_variants(tmp_path, "# nothing\n"), None)
    with pytest.raises(BenchError, match=r"variant 'odd': .*complete_threshold"):  # refused before any run
        odd = '[[variant]]\nname = "odd"\nturn = { complete_threshold = 1.5 }\n'
        measure.settings(write_variants(tmp_path, odd), None)


def test_each_setting_is_the_config_file_with_its_keys() -> None:
    """The written config reads back as the repository's config with only the variant's keys changed."""
    base = load_toml(DEFAULT_CONFIG_PATH, "config file", BenchError)
    keys = {"turn": {"sure_silence_ms": 200, "rescore_at_ms": [300, 600]}, "vad": {"silence_ms": 240}}
    text = measure.toml_text(merge_turn_vad(base, keys))
    written, default = parse_config(tomllib.loads(text)), load_config(DEFAULT_CONFIG_PATH)
    assert written.turn.sure_silence_ms == 200 and written.turn.rescore_at_ms == (300, 600)
    assert written.vad.silence_ms == 240
    assert written.stt == default.stt and written.llm == default.llm and written.server == default.server
    with pytest.raises(BenchError, match=r"\[x\] is not a table of plain values"):
        measure.toml_text({"x": {"y": {"z": 1}}})


def e2e_json(m2e_ms: list[float], silence_p50: float = 380.0) -> dict[str, Any]:
    ordered = sorted(m2e_ms)
    return {
        "summary": {
            "p50_ms": ordered[len(ordered) // 2],
            "p95_ms": ordered[-1],
            "stages": {"endpoint_silence": {"p50": silence_p50, "p95": silence_p50 + 40}},
            "work_to_first_audio": {"p50": 250.0, "p95": 700.0},
        },
        "turns": [{"mouth_to_ear_ms": ms, "error": None} for ms in m2e_ms] + [{"mouth_to_ear_ms": None, "error": "x"}],
    }


def strategy(name: str, cut_150: int, cut_450: int) -> StrategyRow:
    return StrategyRow(name, {"150": cut_150, "450": cut_450}, {"150": 10, "450": 8}, 10, 350.0, 900.0, 0, 2, 9)


def test_a_row_counts_turns_within_250_and_500_ms_and_carries_the_pauses() -> None:
    row = measure.row_of("a", e2e_json([240.0, 250.0, 251.0, 480.0, 900.0]), strategy("a", 1, 4), None)
    assert (row.turns, row.within_250_ms, row.within_500_ms) == (5, 2, 4)
    assert (row.endpoint_silence_p50_ms, row.work_p50_ms, row.delay_p50_ms) == (380.0, 250.0, 350.0)
    assert row.cut_pct(True) == 10.0 and row.cut_pct(False) == 50.0 and (row.long_waits, row.finished_turns) == (2, 9)
    failed = measure.row_of("b", "Traceback | boom", None, None)
    assert failed.error == "Traceback | boom" and failed.m2e_p50_ms is None and failed.cut_pct(True) is None


def result_of(rows_by_set: list[list[TurnsRow]], default: str | None = "default") -> TurnsResult:
    sets = tuple(TurnsSet(f"/x/set{i}", ("a.wav",), tuple(rows)) for i, rows in enumerate(rows_by_set))
    names = tuple(r.variant for r in rows_by_set[0])
    return TurnsResult(FAKE_MACHINE, "v.toml", names, default, 2, (150, 450), 160.0, sets)


def row(name: str, p50: float, p95: float, cut_150: int, within_250: int = 0, long_cut: int = 3) -> TurnsRow:
    return TurnsRow(name, p50, p95, 10, within_250, 10, 380.0, 420.0, 250.0, 350.0, 900.0,
                    {"150": cut_150, "450": long_cut}, {"150": 10, "450": 8}, 1, 9)  # fmt: skip


def test_the_rule_picks_the_fastest_setting_that_cuts_no_short_pause_on_any_folder() -> None:
    result = result_of([
        [row("default", 420, 900, 0), row("fast", 300, 500, 1), row("middle", 380, 800, 0)],
        [row("default", 430, 950, 0), row("fast", 290, 480, 0), row("middle", 400, 820, 0)],
    ])  # fmt: skip
    assert rule_pick(result) == "middle"  # "fast" cuts a 150 ms pause on the first folder
    longer = result_of([[row("default", 420, 900, 0), row("cuts long pauses", 300, 500, 0, long_cut=4)]])
    assert rule_pick(longer) == "default"  # faster, but cuts more 450 ms pauses than the config's point
    lines = conclusions(result)
    assert "picks **middle**" in lines[1] and "It is not the config's point." in lines[1]
    assert lines[0].startswith("- The config's point (the setting with no keys of its own): **default**")
    everyone_cuts = result_of([[row("default", 420, 900, 2), row("fast", 300, 500, 1)]])
    assert rule_pick(everyone_cuts) is None and "picks none" in conclusions(everyone_cuts)[1]


def test_the_bar_needs_p50_p95_and_the_share_within_250_ms_on_every_folder() -> None:
    assert meets_bar([row("a", 300, 600, 0, within_250=3), row("a", 280, 590, 0, within_250=4)])
    assert not meets_bar([row("a", 300, 600, 0, within_250=3), row("a", 301, 590, 0, within_250=4)])
    assert not meets_bar([row("a", 300, 601, 0, within_250=3)])
    assert not meets_bar([row("a", 300, 600, 0, within_250=2)])


def test_the_command_runs_pauses_once_per_folder_and_e2e_once_per_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each process is answered with what it would have written; the e2e of "sure 200" fails."""
    fake_machine(monkeypatch)
    folders = [tmp_path / "one", tmp_path / "two"]
    for folder in folders:
        folder.mkdir()
    monkeypatch.setattr(measure, "load_clips", lambda folder, names: ([type("C", (), {"name": "a.wav"})()], []))
    m2e = {"default": [400.0, 420.0, 900.0], "silence 200": [240.0, 260.0, 500.0]}
    calls: list[tuple[str, str]] = []

    def fake_run(cmd: list[str], log: Path, out: Path) -> dict[str, Any] | str:
        folder = Path(cmd[cmd.index("--speech") + 1]).name
        if "pauses" in cmd:
            calls.append(("pauses", folder))
            rows = [strategy("default", 0, 2), strategy("sure 200", 2, 5), strategy("silence 200", 1, 8)]
            return {"machine": FAKE_MACHINE.to_json(), "speech_dir": folder, "clips": ["a.wav"],
                    "pauses_ms": [150, 450], "vad": {}, "turn": {},
                    "strategies": [r.to_json() for r in rows]}  # fmt: skip
        config = tomllib.loads(Path(cmd[cmd.index("--config") + 1]).read_text(encoding="utf-8"))
        name = {200: "sure 200"}.get(config["turn"]["sure_silence_ms"]) or (
            "silence 200" if config["vad"]["silence_ms"] == 200 else "default"
        )
        calls.append((name, folder))
        return "error: the server did not start" if name == "sure 200" else e2e_json(m2e[name])

    monkeypatch.setattr(measure, "run_logged", fake_run)
    argv = ["bench", "turns", "--variants", str(write_variants(tmp_path)), "--speech", str(folders[0]),
            "--speech", str(folders[1]), "--pauses", "150,450"]  # fmt: skip
    with pytest.raises(AssertionError):  # a failed setting makes the command fail (exit 1) after writing
        run_command(argv, tmp_path / "out")
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert calls == [(kind, folder) for folder in ("one", "two")
                     for kind in ("pauses", "default", "sure 200", "silence 200")]  # fmt: skip
    result = TurnsResult.from_json(written)
    assert result.to_json() == written and result.default == "default"
    first = {r.variant: r for r in result.sets[0].rows}
    assert first["sure 200"].error == "error: the server did not start"
    assert (first["silence 200"].within_250_ms, first["silence 200"].cut_pct(True)) == (1, 10.0)
    md = (tmp_path / "out.md").read_text(encoding="utf-8")
    assert md == markdown(result, tmp_path / "out.png", tmp_path / "out.md") + "\n"
    assert "picks **default**" in md  # "silence 200" is faster but cuts a 150 ms pause


def test_the_committed_result_reads_back_to_the_same_json_and_markdown() -> None:
    from tests.bench_results import check_committed

    result = check_committed(
        "2026-12-06-turns.json", TurnsResult.from_json, lambda r, md: markdown(r, md.with_suffix(".png"), md) + "\n"
    )
    assert result.default is not None and rule_pick(result) is not None
