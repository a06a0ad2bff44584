"""Tests for voice.turn.sentences: exact chunkings, fed whole, char by char and in random pieces."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voice.turn.sentences import SentenceSplitter, SplitterConfig, clean_for_speech


def run(pieces: list[str], config: SplitterConfig | None = None) -> list[str]:
    splitter = SentenceSplitter(config) if config else SentenceSplitter()
    out: list[str] = []
    for piece in pieces:
        out += splitter.push(piece)
    return out + splitter.flush()


def cut(text: str, points: list[int]) -> list[str]:
    bounds = [0, *sorted(points), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


CASES: list[tuple[str, list[str]]] = [
    # first chunk: early clause only after >= 3 words
    ("Hello, my name is Sam. I live in Paris.", ["Hello, my name is Sam.", "I live in Paris."]),
    (
        "Well, the capital of France, as you know, is Paris. It is big.",
        ["Well, the capital of France,", "as you know, is Paris.", "It is big."],
    ),
    ("Sure, I can help with that; it is easy. Ask.", ["Sure, I can help with that;", "it is easy.", "Ask."]),
    (
        "Here is the plan: we leave at noon. Be ready.",
        ["Here is the plan:", "we leave at noon.", "Be ready."],
    ),
    ("The answer is simple — it is Paris. Yes.", ["The answer is simple —", "it is Paris.", "Yes."]),
    ("From 1990–2000, sales grew a lot. Then fell.", ["From 1990–2000, sales grew a lot.", "Then fell."]),
    ("Hi. I am here, as you can see, to help.", ["Hi.", "I am here, as you can see, to help."]),
    # numbers and decimals
    (
        "The population is 1,000,000 people, give or take. Wow.",
        ["The population is 1,000,000 people,", "give or take.", "Wow."],
    ),
    ("Pi is 3.14 or so. It costs $2.50, not more.", ["Pi is 3.14 or so.", "It costs $2.50, not more."]),
    ("It costs $2.50, which is cheap. Yes.", ["It costs $2.50,", "which is cheap.", "Yes."]),
    ("I scored 3. Then I left.", ["I scored 3.", "Then I left."]),
    ("Version 3.5.1 is out. Update now.", ["Version 3.5.1 is out.", "Update now."]),
    # abbreviations and initials
    (
        "Dr. Smith and Mr. Jones met Mrs. Brown. They talked.",
        ["Dr. Smith and Mr. Jones met Mrs. Brown.", "They talked."],
    ),
    (
        "Eat fruit, e.g. apples or pears. Also i.e. fresh ones.",
        ["Eat fruit, e.g. apples or pears.", "Also i.e. fresh ones."],
    ),
    ("Get fruit. Buy apples, pears, etc. Then cook.", ["Get fruit.", "Buy apples, pears, etc. Then cook."]),
    ("J. R. R. Tolkien wrote it. Read it.", ["J. R. R. Tolkien wrote it.", "Read it."]),
    ("He moved to the U.S. in May. Nice.", ["He moved to the U.S. in May.", "Nice."]),
    (
        "Acme Inc. vs. Foo Ltd. went to court. Approx. ten days.",
        ["Acme Inc. vs. Foo Ltd. went to court.", "Approx. ten days."],
    ),
    ("Take No. 5 now. No. That is wrong.", ["Take No. 5 now.", "No.", "That is wrong."]),
    # times
    ("We meet at 10:30 on Monday. Bring snacks.", ["We meet at 10:30 on Monday.", "Bring snacks."]),
    ("Call me at 3:45 p.m. on Friday. Thanks.", ["Call me at 3:45 p.m. on Friday.", "Thanks."]),
    ("Open at 9 a.m. daily. Closed Sundays.", ["Open at 9 a.m. daily.", "Closed Sundays."]),
    # URLs and emails
    ("See example.com. Then sign up.", ["See example.com.", "Then sign up."]),
    (
        "Go to https://a.b/c?d=e.f now! Mail x@y.org. Bye.",
        ["Go to https://a.b/c?d=e.f now!", "Mail x@y.org.", "Bye."],
    ),
    # ! ? ellipsis quotes brackets
    ("Really?! Yes. Wow!", ["Really?!", "Yes.", "Wow!"]),
    ("Wait... what happened? Hmm... Okay.", ["Wait... what happened?", "Hmm...", "Okay."]),
    ("Well… that was odd. Fine.", ["Well… that was odd.", "Fine."]),
    ('He said "Hi." Then he left (quickly.) Done.', ['He said "Hi."', "Then he left (quickly.)", "Done."]),
    ("It is **important.** Listen.", ["It is **important.**", "Listen."]),
    # newlines, markdown, numbered lists
    (
        "Steps:\n1. Mix the flour.\n2. Bake it\n3. Eat",
        ["Steps:", "1. Mix the flour.", "2. Bake it", "3. Eat"],
    ),
    ("# Recipe\n\n- Flour\n- Sugar\n\nEnjoy!", ["# Recipe", "- Flour", "- Sugar", "Enjoy!"]),
    ("First line\nSecond line. Third.", ["First line", "Second line.", "Third."]),
    ("A list. 1. Not at line start. Ok.", ["A list.", "1.", "Not at line start.", "Ok."]),
    # flush returns the unterminated tail
    ("One sentence. And a tail without end", ["One sentence.", "And a tail without end"]),
    ("Pending number 3.", ["Pending number 3."]),
    ("   ", []),
    ("", []),
]

IDS = [text[:30] or "empty" for text, _ in CASES]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=IDS)
def test_whole(text: str, expected: list[str]) -> None:
    assert run([text]) == expected


@pytest.mark.parametrize(("text", "expected"), CASES, ids=IDS)
def test_char_by_char(text: str, expected: list[str]) -> None:
    assert run(list(text)) == expected


@pytest.mark.parametrize(("text", "expected"), CASES, ids=IDS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_random_pieces(text: str, expected: list[str], data: st.DataObject) -> None:
    points = data.draw(st.lists(st.integers(0, len(text)), max_size=max(1, len(text) // 2)))
    chunks = run(cut(text, points))
    assert chunks == expected
    assert squash("".join(chunks)) == squash(text)


TOKENS = [
    " ", "  ", "\n", "\n\n", "Hello", "world", "the", "a", "I", "J", "e.g", "U.S", "Dr", "No", "etc",
    ".", ",", ";", ":", "!", "?", "...", "…", "—", "–", '"', ")", "*", "**", "1", "3", "14", "000",
    "example.com", "x@y.org", "p.m", "-", "#",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    text=st.one_of(
        st.lists(st.sampled_from(TOKENS), max_size=60).map("".join),
        st.text(alphabet="ab A1., ;:!?…—\n\"')*", max_size=80),
    ),
    data=st.data(),
)
def test_chunking_independent_of_pieces(text: str, data: st.DataObject) -> None:
    whole = run([text])
    points = data.draw(st.lists(st.integers(0, len(text)), max_size=len(text)))
    assert run(cut(text, points)) == whole
    assert run(list(text)) == whole
    assert squash("".join(whole)) == squash(text)
    assert all(chunk and chunk == chunk.strip() for chunk in whole)


def test_boundary_waits_for_next_character() -> None:
    s = SentenceSplitter()
    assert s.push("It costs 3.") == []
    assert s.push("5 dollars, more or less.") == ["It costs 3.5 dollars,"]
    assert s.push(" Next") == ["more or less."]
    assert s.push("!") == []
    assert s.push("?") == []
    assert s.push("\n") == ["Next!?"]
    assert s.flush() == []


def test_first_clause_only_once_and_reset() -> None:
    s = SentenceSplitter()
    text = "Well, this is the first part, and then more, and more. Then, after that, the end."
    expected = ["Well, this is the first part,", "and then more, and more.", "Then, after that, the end."]
    assert s.push(text) + s.flush() == expected
    s.push("Some dangling, text")
    s.reset()
    assert s.push("Again the first chunk, early. ") == ["Again the first chunk,", "early."]


def test_config_knobs() -> None:
    assert run(["Hello, my name is Sam."], SplitterConfig(min_first_clause_words=1)) == [
        "Hello,",
        "my name is Sam.",
    ]
    long_word = "Supercalifragilistic" * 2
    config = SplitterConfig(max_first_clause_chars=30)
    assert run([f"{long_word}, yes. Ok."], config) == [f"{long_word},", "yes.", "Ok."]
    assert run(["Hi. There. You."], SplitterConfig(min_sentence_chars=4)) == ["Hi. There.", "You."]


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ("**Bold** and *italic* text", "Bold and italic text"),
        ("## Heading", "Heading"),
        ("- bullet item", "bullet item"),
        ("* star bullet", "star bullet"),
        ("Use `pip install` now", "Use pip install now"),
        ("__strong__ and _em_ but snake_case stays", "strong and em but snake_case stays"),
        ("2 * 3 = 6", "2 * 3 = 6"),
        ("Great job! 🎉👍🏽", "Great job!"),
        ("Sunny ☀️ today", "Sunny today"),
        ("See [the docs](https://x.y/z) here", "See the docs here"),
        ("  lots   of\n\nspace\t ", "lots of space"),
        ("Paris — the capital, 1,000 years", "Paris — the capital, 1,000 years"),
        ("1. First step", "1. First step"),
    ],
)
def test_clean_for_speech(raw: str, spoken: str) -> None:
    assert clean_for_speech(raw) == spoken


def _feed_chars(sp: SentenceSplitter, text: str) -> list[str]:
    out: list[str] = []
    for ch in text:
        out.extend(sp.push(ch))
    return out + sp.flush()


def test_long_first_sentence_is_cut_at_a_word_break() -> None:
    text = "The quick brown fox jumps over the lazy dog near the old river bank today and then sleeps. Fine."
    chunks = _feed_chars(SentenceSplitter(SplitterConfig(max_first_chunk_words=12)), text)
    assert chunks[0] == "The quick brown fox jumps over the lazy dog near the old"
    assert chunks[1:] == ["river bank today and then sleeps.", "Fine."]
    # the same text in one piece gives the same chunks
    sp = SentenceSplitter(SplitterConfig(max_first_chunk_words=12))
    assert sp.push(text) + sp.flush() == chunks


def test_word_cap_never_cuts_after_numbers_or_abbreviations() -> None:
    cfg = SplitterConfig(max_first_chunk_words=4)
    # the 4th word is "3" and the 5th "p.m.": the first allowed break is after "with"
    chunks = _feed_chars(SentenceSplitter(cfg), "We meet at 3 p.m. with Dr. Smith and friends")
    assert chunks == ["We meet at 3 p.m. with", "Dr. Smith and friends"]
    chunks = _feed_chars(SentenceSplitter(SplitterConfig(max_first_chunk_words=2)), "Ask Dr. Smith now please")
    assert chunks == ["Ask Dr. Smith", "now please"]


def test_word_cap_applies_to_the_first_chunk_only_and_can_be_disabled() -> None:
    text = "Short one. " + "word " * 30 + "end."
    chunks = _feed_chars(SentenceSplitter(SplitterConfig(max_first_chunk_words=5)), text)
    assert chunks == ["Short one.", ("word " * 30 + "end.").strip()]
    long_first = "word " * 20 + "end."
    assert _feed_chars(SentenceSplitter(SplitterConfig(max_first_chunk_words=0)), long_first) == [long_first]


def test_a_stream_cut_short_drops_its_unfinished_sentence() -> None:
    """At the LLM's token cap the last sentence is unfinished: it is not spoken half-said."""
    s = SentenceSplitter(SplitterConfig(max_first_chunk_words=0))
    assert s.push("The empire was vast. It lasted for centuries. The empire consisted of s") == [
        "The empire was vast.",
        "It lasted for centuries.",
    ]
    assert s.flush(cut_short=True) == [] and s.dropped == "The empire consisted of s"
    s.push("It ended in 476.")
    assert s.flush(cut_short=True) == ["It ended in 476."] and s.dropped == ""  # a finished sentence stays
    s.push("A stream that simply ends")
    assert s.flush() == ["A stream that simply ends"]  # not cut: the model ended it there
