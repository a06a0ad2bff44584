"""The held-out question set loads, states a check for every item, and asks only questions the main set does not
(ids and questions, the earlier turns included), so its results say something about questions never tuned on."""

from __future__ import annotations

import pytest

from voice.bench.machine import BENCHMARKS_DIR
from voice.bench.quality.measure import DEFAULT_SET
from voice.bench.quality.question_set import load_items
from voice.bench.quality.spoken import _words

HOLDOUT = BENCHMARKS_DIR / "quality_holdout.toml"


def test_the_holdout_set_is_new_questions_of_every_kind() -> None:
    main, holdout = load_items(DEFAULT_SET), load_items(HOLDOUT)
    assert len(holdout) >= 50
    assert {i.category for i in holdout} == {i.category for i in main}
    assert not {i.id for i in holdout} & {i.id for i in main}
    asked = {_words(q) for i in main for q in (i.question, *i.previous)}
    assert [i.id for i in holdout if _words(i.question) in asked] == []


#: The blind held-out sets, in the order they were written, with the fewest items each keeps after the removal of
#: the questions an earlier set asks. Each was written by a helper who had not seen the code or results (from the
#: third on: who read no file here), and committed before its first run.
BLIND_SETS = (
    (BENCHMARKS_DIR / "quality_holdout2.toml", 45),
    (BENCHMARKS_DIR / "quality_holdout3.toml", 45),
    (BENCHMARKS_DIR / "quality_holdout4.toml", 40),
    (BENCHMARKS_DIR / "quality_holdout5.toml", 45),
    (BENCHMARKS_DIR / "quality_holdout6.toml", 40),
    (BENCHMARKS_DIR / "quality_holdout7.toml", 45),
    (BENCHMARKS_DIR / "quality_holdout8.toml", 47),
)


def _asked(question: str) -> str:
    """A question's words, with "what's" and "what is" the same question."""
    return _words(question.lower().replace("what's", "what is"))


@pytest.mark.parametrize("n", range(len(BLIND_SETS)))
def test_each_blind_set_asks_nothing_an_earlier_set_asks(n: int) -> None:
    """The items that repeated an earlier set's question were removed before the set's first run."""
    path, fewest = BLIND_SETS[n]
    earlier = load_items(DEFAULT_SET) + load_items(HOLDOUT)
    for before, _ in BLIND_SETS[:n]:
        earlier += load_items(before)
    blind = load_items(path)
    assert len(blind) >= fewest
    assert {i.category for i in blind} == {i.category for i in earlier}
    assert not {i.id for i in blind} & {i.id for i in earlier}
    asked = {_asked(q) for i in earlier for q in (i.question, *i.previous)}
    assert [i.id for i in blind if _asked(i.question) in asked] == []
