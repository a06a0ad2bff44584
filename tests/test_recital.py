"""A reply that recites the system prompt instead of answering (voice.conversation.recital) becomes "I'm not sure",
through the server's turn and in the quality bench alike."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_answer_confidence import spoken_by_sure_llm
from voice.bench.quality.measure import ask
from voice.clock import FakeClock
from voice.conversation.recital import recites
from voice.runtime.fakes import FakeLlm

PROMPT = make_config().llm.system_prompt


@pytest.mark.parametrize(
    ("sentence", "user"),
    [
        # Replies SmolLM2-135M gave on the question sets (benchmarks/results), judged wrong or right by a name only.
        ("I'm sorry for the confusion, but as a voice assistant, I can only respond in one or two short sentences.",
         "How many seconds into hours?"),
        ("Priya is a voice assistant running on the user's computer.", "What is my name?"),
        ("I'm sorry for any confusion, but as a voice assistant running on your computer, I can only respond with "
         "text.", "What are they called?"),
        ("Answer in one or two short, plain sentences.", "What is the tallest mountain?"),
    ],
)  # fmt: skip
def test_a_sentence_that_says_the_prompt_s_words_recites(sentence: str, user: str) -> None:
    assert recites(sentence, PROMPT, user)


@pytest.mark.parametrize(
    ("sentence", "user"),
    [
        ("The capital of France is Paris.", "What is the capital of France?"),
        ("I am a voice assistant.", "What are you?"),  # three of the prompt's words in a row: not a recital
        # A decline may borrow the prompt's words: it is honest.
        ("As a voice assistant running on your computer, I don't have access to the news.", "What's the news?"),
        ("I can't see the weather, news, prices or sensors.", "Is it raining?"),
        # The user said them first: an answer may say them back.
        ("Yes, I am a voice assistant running on your computer.", "Are you a voice assistant running on my computer?"),
        ("", "Hello?"),
    ],
)  # fmt: skip
def test_an_answer_or_a_decline_does_not_recite(sentence: str, user: str) -> None:
    assert not recites(sentence, PROMPT, user)


def test_another_prompt_has_other_words() -> None:
    sentence = "As a voice assistant, I can only respond in one or two short sentences."
    assert not recites(sentence, "You are a pirate. Speak like one.", "How many seconds in an hour?")


RECITAL = "As a voice assistant, I can only respond in one or two short sentences. Ask me anything."


@pytest.mark.parametrize("not_sure", [True, False])
async def test_the_turn_says_not_sure_instead_of_a_confident_recital(
    not_sure: bool, clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """Every token at log-probability 0 (the model is sure of it): the gate replaces the recital anyway. With
    ``[llm] not_sure`` off nothing is held or replaced."""
    spoken = await spoken_by_sure_llm(fake_runtime, clock, RECITAL, not_sure=not_sure)
    assert (spoken == [make_config().llm.not_sure_reply]) == not_sure
    assert not_sure or " ".join(spoken) == RECITAL


def test_the_quality_bench_replaces_a_recital_as_the_server_does() -> None:
    config = make_config()
    asked = ask(FakeLlm(replies=(RECITAL,), word_logprobs={}), config, [], "How many seconds into hours?")
    assert asked.reply == config.llm.not_sure_reply
    plain = dataclasses.replace(config, llm=dataclasses.replace(config.llm, not_sure=False))
    assert ask(FakeLlm(replies=(RECITAL,), word_logprobs={}), plain, [], "How many seconds?").reply == RECITAL
