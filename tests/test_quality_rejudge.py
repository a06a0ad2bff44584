"""``voice bench quality --rejudge``: stored replies judged again by the question set's current checks, on the
fake results of test_bench_quality_json (the real judge, no model)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from tests.conftest import RuntimeFactory
from tests.test_bench_quality_json import SET, spoken_result, text_result
from voice.bench.clips import BenchError
from voice.bench.quality import measure as quality
from voice.bench.quality.question_set import Item, load_items
from voice.bench.quality.rejudge import rejudge, run
from voice.bench.quality.result import QualityResult
from voice.cli import build_parser


def stricter(items: list[Item], item_id: str, **checks: object) -> list[Item]:
    return [dataclasses.replace(i, **checks) if i.id == item_id else i for i in items]  # type: ignore[arg-type]


def test_the_same_checks_give_the_same_verdicts(monkeypatch: pytest.MonkeyPatch, fake_runtime: RuntimeFactory) -> None:
    for result in (text_result(monkeypatch), spoken_result(fake_runtime)):
        judged, changes = rejudge(result, load_items(SET), note="N")
        assert changes == []
        assert judged == dataclasses.replace(result, rejudged="N. Verdicts changed: none.")


def test_a_stricter_check_turns_its_item_wrong_and_the_summary_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    result = text_result(monkeypatch)
    before = {r.id: r for r in result.models[0].rows}
    assert before["k-red-planet"].right and result.models[0].summary.judged.right_pct == 100.0
    items = stricter(load_items(SET), "k-red-planet", none_of=("the red planet.",))
    judged, changes = rejudge(result, items, note="N")
    assert [(c.llm, c.id, c.right_before, c.right_now, c.failed) for c in changes] == [
        ("fake", "k-red-planet", True, False, ("contains 'the red planet.'",))
    ]
    rows = {r.id: r for r in judged.models[0].rows}
    assert not rows["k-red-planet"].right and rows["k-red-planet"].failed == ("contains 'the red planet.'",)
    assert rows["k-red-planet"].reply == before["k-red-planet"].reply  # the reply is kept as it was
    assert judged.models[0].summary.judged.right_pct == 75.0
    assert judged.machine == result.machine  # the run's machine record, not this one's
    change = "fake `k-red-planet` right → wrong (contains 'the red planet.')"
    assert judged.rejudged == f"N. Verdicts changed: {change}."
    assert "**N. Verdicts changed: fake `k-red-planet`" in quality.markdown(judged)
    assert QualityResult.from_json(judged.to_json()) == judged


def test_clock_items_and_asked_again_rows_keep_their_verdict(
    monkeypatch: pytest.MonkeyPatch, fake_runtime: RuntimeFactory
) -> None:
    items = load_items(SET)
    clock_item = next(i for i in items if i.clock == "time")
    text = text_result(monkeypatch)
    row = dataclasses.replace(text.models[0].rows[0], id=clock_item.id, question=clock_item.question, reply="Blue.")
    text = dataclasses.replace(text, models=(dataclasses.replace(text.models[0], rows=(row,)),))
    judged, changes = rejudge(text, items, note="N")
    assert changes == [] and judged.models[0].rows == (row,)  # judged right when it ran, at that minute
    # A spoken row that asked again is never right, even where the checks would pass its reply.
    spoken = spoken_result(fake_runtime)
    rows = list(spoken.models[0].rows)
    rows[2] = dataclasses.replace(rows[2], reply="Madrid.", asked_again=True, right=False)
    spoken = dataclasses.replace(spoken, models=(dataclasses.replace(spoken.models[0], rows=tuple(rows)),))
    judged_s, changes = rejudge(spoken, items, note="N")
    assert changes == [] and judged_s.models[0].rows[2] == rows[2]


def test_a_recording_row_is_judged_by_its_item(fake_runtime: RuntimeFactory) -> None:
    spoken = spoken_result(fake_runtime)
    rows = list(spoken.models[0].rows)
    assert rows[0].id == "t-cancel" and rows[0].right
    rows[0] = dataclasses.replace(rows[0], id="t-cancel@a.wav")  # as spoken mode names a recording's row
    spoken = dataclasses.replace(spoken, models=(dataclasses.replace(spoken.models[0], rows=tuple(rows)),))
    _, changes = rejudge(spoken, stricter(load_items(SET), "t-cancel", all_of=("never said",)), note="N")
    assert [(c.id, c.right_now) for c in changes] == [("t-cancel@a.wav", False)]


def test_an_item_asked_otherwise_or_gone_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    result = text_result(monkeypatch)
    items = load_items(SET)
    with pytest.raises(BenchError, match=r"'k-red-planet' asked 'Which planet is called the red planet\?' in the"):
        rejudge(result, stricter(items, "k-red-planet", question="Which planet is called the blue planet?"), note="N")
    with pytest.raises(BenchError, match="'k-red-planet' of the result is not in the question set"):
        rejudge(result, [i for i in items if i.id != "k-red-planet"], note="N")
    # --as-transcribed rows asked the question as the STT writes it.
    spelt = dataclasses.replace(result, as_transcribed=True)
    with pytest.raises(BenchError, match=r"'t-cancel' asked 'Cancel the timer\.' in the result but asks 'cancel the"):
        rejudge(spelt, items, note="N")


def args_for(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["bench", "quality", *argv])


def test_the_command_writes_beside_the_source_and_runs_no_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = tmp_path / "run.json"
    source.write_text(json.dumps(text_result(monkeypatch).to_json()))
    strict = tmp_path / "set.toml"
    strict.write_text(SET.read_text().replace('any = ["Mars"]', 'any = ["Mars"]\nnone = ["planet."]', 1))
    assert run(args_for("--rejudge", str(source), "--questions", str(strict), "--out", str(tmp_path / "again"))) == 0
    again = QualityResult.from_json(json.loads((tmp_path / "again.json").read_text()))
    assert again.models[0].summary.judged.right_pct == 75.0
    assert again.rejudged is not None and f"from `{source}`" in again.rejudged and str(strict) in again.rejudged
    assert "Judged again on" in (tmp_path / "again.md").read_text()
    with pytest.raises(BenchError, match="--rejudge runs no model: --llm"):
        run(args_for("--rejudge", str(source), "--llm", "smollm2-135m"))
    with pytest.raises(BenchError, match="not over it"):
        run(args_for("--rejudge", str(source), "--json", str(source)))
    (tmp_path / "other.json").write_text('{"mode": "text"}')
    with pytest.raises(BenchError, match="can't be read as a voice bench quality result"):
        run(args_for("--rejudge", str(tmp_path / "other.json")))
