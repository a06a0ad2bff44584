"""``voice bench matrix`` beside each combination's right %: the rest of its quality run's four outcomes (honest
decline, asked again, wrong), on the committed matrix's combinations and a committed spoken quality run judged
again (real data); matrices whose quality runs did not count them keep the columns they had."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from tests.bench_results import RESULTS, same_json
from voice.bench.matrix.measure import attach_quality
from voice.bench.matrix.report import OUTCOME_COLUMNS, markdown, table
from voice.bench.matrix.result import MatrixResult, MeasuredRow, QualityVerdict
from voice.bench.quality.question_set import load_items
from voice.bench.quality.rejudge import rejudge
from voice.bench.quality.result import QualityResult

SET = Path(__file__).parent.parent / "benchmarks" / "quality_questions.toml"
MATRIX = "2026-12-04-matrix-voices.json"
#: The spoken quality run of smollm2-135m with tiny.en and the six voices, of the same day.
QUALITY = "2026-12-04-quality-spoken-voices.json"
KEY = "tiny.en+smollm2-135m"


def _read(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / name).read_text(encoding="utf-8"))
    return data


def matrix_with_outcomes() -> tuple[MatrixResult, dict[str, dict[str, Any]]]:
    """The committed matrix with its ``KEY`` combination's quality summary counting the four outcomes (the
    committed quality run judged again), the other combinations' as they were."""
    committed = MatrixResult.from_json(_read(MATRIX))
    quality = dict(committed.meta.quality)
    judged, _ = rejudge(QualityResult.from_json(_read(QUALITY)), load_items(SET), note="N")
    quality[KEY] = judged.models[0].summary.to_json()
    rows = attach_quality(committed.rows, quality, 80.0, spoken=True)
    meta = dataclasses.replace(committed.meta, quality=quality)
    return MatrixResult(meta, tuple(rows)), quality


def test_a_combination_shows_its_four_outcomes_which_add_up_to_100() -> None:
    result, quality = matrix_with_outcomes()
    header, body = table(result.rows)
    at = header.index("right %")
    assert tuple(header[at : at + 4]) == OUTCOME_COLUMNS and header[at + 4] == "meets turn-taking"
    for r, cells in zip(result.rows, body, strict=True):
        assert isinstance(r, MeasuredRow) and r.quality is not None
        shares = cells[at : at + 4]
        if f"{r.stt}+{r.llm}" == KEY:
            summary = quality[KEY]
            assert shares == [
                summary[k] for k in ("right_pct", "declined_pct", "asked_again_pct", "wrong_pct")
            ]
            assert abs(sum(shares) - 100) <= 0.2
        else:  # a quality run that did not count them: right % only
            assert shares[0] == r.quality.quality_right_pct and shares[1:] == [None] * 3


def test_the_outcomes_are_written_and_read_back() -> None:
    result, _ = matrix_with_outcomes()
    data = result.to_json()
    counted = [r for r in data["rows"] if "quality_declined_pct" in r]
    assert [f"{r['stt']}+{r['llm']}" for r in counted] == [KEY]
    keys = list(counted[0])
    at = keys.index("quality_right_pct")
    assert keys[at : at + 5] == ["quality_right_pct", "quality_declined_pct", "quality_asked_again_pct",
                                 "quality_wrong_pct", "quality_items"]  # fmt: skip
    again = MatrixResult.from_json(data)
    assert again == result and same_json(again.to_json(), data)
    md = markdown(result, None, Path("r.md"))
    assert "| right % | decline % | asked again % | wrong % | meets turn-taking |" in md
    assert "every reply of the quality run is in exactly one of four outcomes" in md


def test_a_verdict_without_the_outcomes_writes_the_keys_it_always_had() -> None:
    old = QualityVerdict(70.0, 10, True, False)
    assert old.outcomes is None
    assert list(old.to_json()) == ["quality_right_pct", "quality_items", "meets_quality", "meets_turn_taking"]
    new = QualityVerdict(70.0, 10, True, False, 10.0, 5.0, 15.0)
    assert new.outcomes == (70.0, 10.0, 5.0, 15.0)
    assert QualityVerdict.from_json(new.to_json()) == new and QualityVerdict.from_json(old.to_json()) == old
    # a quality summary without them (made before) attaches none: the committed matrix is as it was
    committed = MatrixResult.from_json(_read(MATRIX))
    assert "decline %" not in table(committed.rows)[0]
    reattached = attach_quality(committed.rows, committed.meta.quality, 80.0, spoken=True)
    assert tuple(reattached) == committed.rows
