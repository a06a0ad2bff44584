from datetime import datetime
from pathlib import Path

import pytest

from voice.bench.quality.question_set import Item, QuestionSetError, clock_ok, judge, load_items
from voice.conversation.loops import repeats

NOW = datetime(2026, 12, 3, 16, 35)  # a Thursday
SET = Path(__file__).parent.parent / "benchmarks" / "quality_questions.toml"


def test_committed_set_loads_with_every_category() -> None:
    items = load_items(Path(__file__).parent.parent / "benchmarks" / "quality_questions.toml")
    assert len(items) >= 80
    assert {i.category for i in items} == {"knowledge", "clock", "arithmetic", "followup", "cannot", "ramble", "timer"}


@pytest.mark.parametrize(
    ("kind", "reply", "ok"),
    [
        ("time", "It's 16:35.", True),
        ("time", "It is 4:36 pm", True),
        ("time", "It's currently 22:15", False),
        ("time", "It is 16:355", False),
        ("date", "Today is December 3rd, 2026.", True),
        ("date", "The date is 2023.", False),
        ("date", "December 13", False),
        ("weekday", "It's Thursday.", True),
        ("weekday", "Monday or Thursday", False),
        ("year", "It is 2026.", True),
        ("month", "It's November.", False),
    ],
)
def test_clock_checks(kind: str, reply: str, ok: bool) -> None:
    assert clock_ok(kind, reply, NOW) is ok


def test_refusal_and_keywords() -> None:
    lamp = Item(id="x", category="cannot", question="Turn on the lamp.", refusal=True)
    assert judge(lamp, "Sorry, I can't control devices.", NOW).right
    assert judge(lamp, "I'm sorry, I'm not equipped to assist with that.", NOW).right
    bad = judge(lamp, "The lamp is on.", NOW)
    assert not bad.right and bad.failed == ("does not say it cannot",)
    cap = Item(id="c", category="knowledge", question="?", any_of=("Madrid",), none_of=("pain",))
    assert judge(cap, "Madrid.", NOW).right
    assert not judge(cap, "Madrid is a pain.", NOW).right


def test_repeats_detects_loops_only() -> None:
    assert repeats("I'm glad you're here. " * 4)
    assert not repeats("Madrid is the capital of Spain, and Madrid is big.")
    item = Item(id="r", category="ramble", question="?", regex=r"\w")
    assert judge(item, "I'm glad you're here. " * 4, NOW).repeats


def test_bad_file_names_the_item(tmp_path: Path) -> None:
    f = tmp_path / "q.toml"
    f.write_text('[[item]]\nid = "a"\ncategory = "knowledge"\nquestion = "?"\nregex = "("\n')
    with pytest.raises(QuestionSetError, match=r"item 1 \(a\).*bad regex"):
        load_items(f)
    f.write_text('[[item]]\nid = "a"\ncategory = "knowledge"\nquestion = "?"\n')
    with pytest.raises(QuestionSetError, match="states no check"):
        load_items(f)


def test_a_zero_padded_time_before_ten_is_right() -> None:
    early = datetime(2026, 12, 4, 1, 30)
    assert clock_ok("time", "It's 01:30.", early) and clock_ok("time", "It is 1:30 am", early)
    assert not clock_ok("time", "It's 11:30.", early)


@pytest.mark.parametrize(
    ("item_id", "reply", "right"),
    [
        ("a-div", "81 divided by 9 is 9.", True),
        ("a-div", "Nine.", True),
        ("a-div", "81 divided by 9 is 7.", False),  # the question's 9 is not an answer
        ("a-percent", "10 percent of 250 is 25.", True),
        ("a-percent", "That's 25.", True),
        ("a-percent", "10% of 250 is 0.1 * 25 = 3.", False),  # 25 as a step, 3 as the result
    ],
)
def test_arithmetic_checks_need_the_result_stated(item_id: str, reply: str, right: bool) -> None:
    """Where the answer's number also appears in the question or in a wrong working, only a stated result counts."""
    items = {item.id: item for item in load_items(SET)}
    assert judge(items[item_id], reply, NOW).right is right


@pytest.mark.parametrize(
    ("reply", "right"),
    [
        ("The largest planet in the solar system is Jupiter.", True),
        ("Jupiter, which is bigger than Saturn.", True),
        ("The largest planet in the solar system is Jupiter, but it's actually Saturn.", False),  # taken back
        ("The largest planet is Saturn.", False),
    ],
)
def test_an_answer_taken_back_is_not_right(reply: str, right: bool) -> None:
    (item,) = [i for i in load_items(SET) if i.id == "k-largest-planet"]
    assert judge(item, reply, NOW).right is right


@pytest.mark.parametrize(
    ("check", "reply", "right"),
    [
        # an amount the skills say in words meets a check written with a decimal point
        ({"regex": r"7[.,]20?\b"}, "A 15 percent tip on 48 dollars is 7 dollars and 20 cents.", True),
        ({"any_of": ("12.60",)}, "The tip is 12 dollars and 60 cents.", True),
        ({"any_of": ("€4.05",)}, "That is 4 euros and 5 cents each.", True),
        # and a wrong amount in words is still wrong, and still refused by a "none"
        ({"regex": r"7[.,]20?\b"}, "The tip is 6 dollars and 30 cents.", False),
        ({"any_of": ("7.20",), "none_of": ("6.30",)}, "7.20, or 6 dollars and 30 cents with the old rate.", False),
    ],
)
def test_money_said_in_words_is_judged_as_the_amount_it_is(check: dict[str, object], reply: str, right: bool) -> None:
    item = Item("money", "arithmetic", "q", **check)  # type: ignore[arg-type]
    assert judge(item, reply, datetime(2026, 12, 6, 12)).right is right
