"""The held-out question set loads, states a check for every item, and asks only questions the main set does not
(ids and questions, the earlier turns included), so its results say something about questions never tuned on."""

from __future__ import annotations

from voice.bench.machine import BENCHMARKS_DIR
from voice.bench.quality import DEFAULT_SET
from voice.bench.quality_set import load_items
from voice.bench.quality_spoken import _words

HOLDOUT = BENCHMARKS_DIR / "quality_holdout.toml"


def test_the_holdout_set_is_new_questions_of_every_kind() -> None:
    main, holdout = load_items(DEFAULT_SET), load_items(HOLDOUT)
    assert len(holdout) >= 50
    assert {i.category for i in holdout} == {i.category for i in main}
    assert not {i.id for i in holdout} & {i.id for i in main}
    asked = {_words(q) for i in main for q in (i.question, *i.previous)}
    assert [i.id for i in holdout if _words(i.question) in asked] == []
