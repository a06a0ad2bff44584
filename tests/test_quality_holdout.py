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


HOLDOUT2 = BENCHMARKS_DIR / "quality_holdout2.toml"


def _asked(question: str) -> str:
    """A question's words, with "what's" and "what is" the same question."""
    return _words(question.lower().replace("what's", "what is"))


def test_the_second_holdout_set_asks_nothing_the_earlier_sets_ask() -> None:
    """Written blind by a helper; the items that repeated an earlier question were removed before its first run."""
    earlier, second = load_items(DEFAULT_SET) + load_items(HOLDOUT), load_items(HOLDOUT2)
    assert len(second) >= 45
    assert {i.category for i in second} == {i.category for i in earlier}
    assert not {i.id for i in second} & {i.id for i in earlier}
    asked = {_asked(q) for i in earlier for q in (i.question, *i.previous)}
    assert [i.id for i in second if _asked(i.question) in asked] == []


HOLDOUT3 = BENCHMARKS_DIR / "quality_holdout3.toml"


def test_the_third_holdout_set_asks_nothing_the_earlier_sets_ask() -> None:
    """Written blind by a helper who read no file here; the items that repeated an earlier question were removed
    before its first run."""
    earlier = load_items(DEFAULT_SET) + load_items(HOLDOUT) + load_items(HOLDOUT2)
    third = load_items(HOLDOUT3)
    assert len(third) >= 45
    assert {i.category for i in third} == {i.category for i in earlier}
    assert not {i.id for i in third} & {i.id for i in earlier}
    asked = {_asked(q) for i in earlier for q in (i.question, *i.previous)}
    assert [i.id for i in third if _asked(i.question) in asked] == []


HOLDOUT4 = BENCHMARKS_DIR / "quality_holdout4.toml"


def test_the_fourth_holdout_set_asks_nothing_the_earlier_sets_ask() -> None:
    """Written blind after the third set's fixes; the items that repeated an earlier question were removed before
    its first run."""
    earlier = load_items(DEFAULT_SET) + load_items(HOLDOUT) + load_items(HOLDOUT2) + load_items(HOLDOUT3)
    fourth = load_items(HOLDOUT4)
    assert len(fourth) >= 40
    assert {i.category for i in fourth} == {i.category for i in earlier}
    assert not {i.id for i in fourth} & {i.id for i in earlier}
    asked = {_asked(q) for i in earlier for q in (i.question, *i.previous)}
    assert [i.id for i in fourth if _asked(i.question) in asked] == []
