"""Unsure transcripts are asked again, unless a local skill recognises them whole (``[stt] skills_take_unsure``).

The transcripts are what tiny.en heard, unsure (mean log-probability under −0.6), in the spoken quality runs of
2026-12-04 (benchmarks/results/2026-12-04-quality-*spoken*.md), plus other phrasings."""

from __future__ import annotations

import pytest

from tests.conftest import make_config
from voice.runtime.model_api import ChatMessage
from voice.turn.ask_again import needed, reply, too_long, understood

UNSURE, SURE = -0.8, -0.3


@pytest.mark.parametrize(
    "text",
    [
        "What is seven times thirty?",  # heard right, unsure
        "Launch fire fox",
        "Play some music.",
        "open Spotify",
        "text my brother, no, I'm on my way",
        "What day is it?",
        "Set a post a timer for 8 minutes.",
        "7 times after 30 seconds",  # Whisper's "set a timer for 30 seconds"
        "How many feet are in a mile?",
        "Thank you, that's all.",
        "Well, 1,000 minus three hundred eighty seven",  # interjections ask nothing
        "Um, what year is it?",
        "is the front door at home locked",  # live state: "I can't see that", however it was heard
    ],
)
def test_an_unsure_command_a_skill_recognises_whole_is_answered(text: str) -> None:
    assert understood(text)
    assert not needed(make_config(), text, UNSURE)
    # Either switch turns it off: asked again, as before.
    assert needed(make_config(stt={"skills_take_unsure": False}), text, UNSURE)
    assert needed(make_config(llm={"skills": False}), text, UNSURE)


@pytest.mark.parametrize(
    "text",
    [
        "who painted the mo' alisa.",  # the LLM's to answer
        "how many centimeter marinan inch",
        "How many eggs are we that does?",
        "Can seal the timer",
        "add 8 to add",  # needs the previous answer
        "and on Spain",
        "was 15% on May 2.",  # once taken for a question about the month
        "Thanks to my mom, that's how we laid.",
        "We're playing with you next week in Brazil.",
        "What is my name?",  # a fact the user told: needs the conversation
    ],
)
def test_an_unsure_transcript_no_skill_recognises_is_asked_again(text: str) -> None:
    assert not understood(text)
    assert needed(make_config(), text, UNSURE)


def test_sure_or_empty_transcripts_and_ask_again_off_never_ask() -> None:
    assert not needed(make_config(), "and on Spain", SURE)
    assert not needed(make_config(), "and on Spain", None)  # no confidence given (a Wyoming STT server)
    assert not needed(make_config(), "", UNSURE)
    assert not needed(make_config(stt={"ask_again": False}), "and on Spain", UNSURE)


@pytest.mark.parametrize(
    ("llm_bar", "logprob", "asked"),
    [
        (-0.45, -0.5, True),  # between the bars: only the LLM would answer it, so it is asked again
        (-0.45, -0.4, False),  # above both
        (-0.45, -0.7, True),  # under both
        (-0.6, -0.5, False),  # the bars equal: no stricter one
        (-0.8, -0.5, False),  # an LLM bar under the general one adds nothing
        (-0.8, -0.7, True),
    ],
)
def test_words_only_the_llm_would_answer_meet_the_stricter_bar(llm_bar: float, logprob: float, asked: bool) -> None:
    config = make_config(stt={"ask_again_below_logprob": -0.6, "ask_again_llm_below_logprob": llm_bar})
    assert needed(config, "who painted the mo' alisa.", logprob) is asked
    # A transcript a skill answers exactly is taken between the bars too (its reply shows what it understood).
    assert not needed(config, "What is seven times thirty?", logprob)
    # With the skills off the LLM answers everything: between the bars, all is asked again.
    no_skills = make_config(
        llm={"skills": False}, stt={"ask_again_below_logprob": -0.6, "ask_again_llm_below_logprob": llm_bar}
    )
    assert needed(no_skills, "What is seven times thirty?", logprob) is asked
    off = make_config(stt={"ask_again": False, "ask_again_llm_below_logprob": llm_bar})
    assert not needed(off, "who painted the mo' alisa.", logprob)


@pytest.mark.parametrize(
    ("word_bar", "word", "asked"),
    [
        (0.2, 0.1, True),  # one word under the bar, however sure the mean: asked again
        (0.2, 0.2, False),  # at the bar
        (0.2, None, False),  # not measured (a Wyoming server)
        (0.0, 0.01, False),  # off
    ],
)
def test_the_least_likely_word_bars_only_words_the_llm_would_answer(
    word_bar: float, word: float | None, asked: bool
) -> None:
    config = make_config(stt={"ask_again_llm_below_word_prob": word_bar})
    assert needed(config, "who painted the mo' alisa.", SURE, min_word_prob=word) is asked
    # A skill's exact reply shows what it understood: a doubtful word does not stop it.
    assert not needed(config, "What is seven times thirty?", SURE, min_word_prob=word)
    assert not needed(make_config(stt={"ask_again": False, "ask_again_llm_below_word_prob": word_bar}),
                      "who painted the mo' alisa.", SURE, min_word_prob=word)  # fmt: skip


ITALY = [
    ChatMessage("user", "What is the capital of Italy?"),
    ChatMessage("assistant", "The capital of Italy is Rome."),
]
CELSIUS = [
    ChatMessage("user", "Convert 20 degrees Celsius to Fahrenheit."),
    ChatMessage("assistant", "20 degrees Celsius is 68 degrees Fahrenheit."),
]
SUM = [ChatMessage("user", "What is 20 plus 5?"), ChatMessage("assistant", "20 plus 5 is 25.")]
TOLD = [
    ChatMessage("user", "I've got three hundred and twenty pounds left in the bills account."),
    ChatMessage("assistant", "OK."),
]


@pytest.mark.parametrize(
    ("earlier", "text"),
    [
        (CELSIUS, "and 30"),  # heard word for word, unsure (the eighth held-out set)
        (ITALY, "How about Germany?"),
        (SUM, "Now double that."),
        (TOLD, "If I pay 95, how much is left?"),
    ],
)
def test_an_unsure_follow_up_a_skill_answers_from_the_conversation_is_answered(
    earlier: list[ChatMessage], text: str
) -> None:
    assert not understood(text)  # alone, it is not a command
    assert understood(text, "", earlier)
    assert not needed(make_config(), text, UNSURE, earlier)
    assert needed(make_config(stt={"skills_take_unsure": False}), text, UNSURE, earlier)


def test_writing_out_follow_ups_off_leaves_only_those_on_the_previous_answer() -> None:
    config = make_config(llm={"resolve_follow_ups": False})
    assert needed(config, "and 30", UNSURE, CELSIUS)
    assert not needed(config, "Now double that.", UNSURE, SUM)


@pytest.mark.parametrize(
    ("earlier", "text"),
    [
        (SUM, "Double hit."),  # tiny.en's "double that", unsure: nothing a skill takes
        (ITALY, "and on Spain"),  # "And of Spain?" misheard: nothing to write it out from
        (
            [ChatMessage("user", "My name is Sam."), ChatMessage("assistant", "Nice to meet you, Sam.")],
            "What is my name?",
        ),
        (
            [ChatMessage("user", "Who wrote Hamlet?"), ChatMessage("assistant", "William Shakespeare wrote Hamlet.")],
            "When was he born?",
        ),
    ],
)
def test_an_unsure_follow_up_no_skill_answers_is_asked_again(earlier: list[ChatMessage], text: str) -> None:
    assert needed(make_config(), text, UNSURE, earlier)


#: More than twelve words no skill takes (hesitations not counted): not handed to the LLM, however sure the STT.
LONG = [
    "My friend and I were arguing about this the other night and neither of us could remember who painted it.",
    "So I was reading this book, um, and it mentioned the guy who came up with the laws of gravity, who was he?",
]
#: Long, but a skill takes it whole; short; or long only with its hesitations.
NOT_TOO_LONG = [
    "So I'm at dinner with friends, the bill came to 120 dollars and we want to leave a 20 percent tip.",
    "We were packing for the trip last night and nobody could remember what the capital of Portugal is",
    "Who painted the Mona Lisa?",
    "Um, uh, so, um, who, uh, painted the, um, Mona Lisa, uh, in, um, Italy, uh?",
]


@pytest.mark.parametrize("text", LONG)
def test_a_long_turn_no_skill_takes_is_asked_for_in_fewer_words(text: str) -> None:
    config = make_config()
    assert too_long(config, text) and needed(config, text, SURE) and needed(config, text, None)
    assert reply(config, text) == config.stt.ask_shorter_reply != config.stt.ask_again_reply
    # Off: handed to the LLM as before, and a short unsure turn still gets the usual reply.
    for off in ({"ask_again_llm_above_words": 0}, {"ask_again": False}):
        assert not needed(make_config(stt=off), text, SURE)
    assert not needed(make_config(stt={"ask_again_llm_above_words": 40}), text, SURE)


def test_a_long_follow_up_on_an_amount_the_user_told_is_answered_not_asked_shorter() -> None:
    """14 words, so too long for the LLM; but the word problems read it on the told amount (the thirty-first set)."""
    text = "If I pay the gas bill of ninety five out of that how much is left"
    config = make_config()
    assert too_long(config, text) and needed(config, text, SURE)  # alone, nothing to take 95 from
    assert not needed(config, text, SURE, TOLD)


@pytest.mark.parametrize("text", NOT_TOO_LONG)
def test_a_short_turn_or_one_a_skill_takes_is_not_asked_for_in_fewer_words(text: str) -> None:
    config = make_config()
    assert not needed(config, text, SURE)
    if not too_long(config, text):
        assert reply(config, text) == config.stt.ask_again_reply
