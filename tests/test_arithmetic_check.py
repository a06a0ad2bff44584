"""A reply whose first sentence states a sum that does not add up (voice.conversation.arithmetic_check) becomes "I'm
not sure", through the server's turn and in the quality bench alike."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_answer_confidence import spoken_by_sure_llm
from voice.bench.quality.measure import ask
from voice.clock import FakeClock
from voice.conversation.arithmetic_check import miscounts
from voice.runtime.fakes import FakeLlm


@pytest.mark.parametrize(
    "sentence",
    [
        # First sentences SmolLM2-135M gave on the question sets (benchmarks/results), each judged wrong.
        "144 divided by 8 equals 20.",
        "18% of 42 is 0.18 * 42 = 7.3, which means an 18% tip would be $7.30.",
        "Two pounds is 2 x 453.5924 = 917.08 grams.",
        "12 * 13 = 198",
        "If you take away 75% of your total, that leaves you with 250 - 75 = 145.",
        "30 percent of 150 is 27.",
        "Three and a half hours is 3.5 * 60 = 18 minutes.",
        # A later sum of the same sentence.
        "5 x 3 is 15 and 15 x 2 is 31.",
    ],
)
def test_a_sum_that_does_not_add_up_miscounts(sentence: str) -> None:
    assert miscounts(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "144 divided by 9 equals 16.",
        "18% of 42 is 0.18 * 42 = 7.56.",  # "0.18" starts more working: it is not the result of 18 % of 42
        "Two pounds is 2 x 453.5924 = 907.18 grams.",
        "100 divided by 12 is 8.33.",  # a rounding
        "100 divided by 12 is approximately 8.3.",
        "1,000 minus 1 is 999.",
        "It cost $20 + $5 = $25.",
        "10% of 250 is 25.",
        "The war lasted from 1939-1945 and it is long.",  # a range, not a sum
        "The score was 3-1.",
        "Twelve times twelve is a hundred and forty four.",  # words are not checked
        "The capital of Peru is Lima.",
    ],
)
def test_a_sum_that_adds_up_or_no_sum_does_not(sentence: str) -> None:
    assert not miscounts(sentence)


WRONG_SUM = "144 divided by 8 equals 20. That's the answer."


@pytest.mark.parametrize("not_sure", [True, False])
async def test_the_turn_says_not_sure_instead_of_a_sure_wrong_sum(
    not_sure: bool, clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """Every token at log-probability 0 (the model is sure of it): the gate replaces the wrong sum anyway. With
    ``[llm] not_sure`` off nothing is held or replaced."""
    heard = "What's an 18 percent dip on a 42 dollar bill?"
    spoken = await spoken_by_sure_llm(fake_runtime, clock, WRONG_SUM, not_sure=not_sure, heard=heard)
    assert (spoken == [make_config().llm.not_sure_reply]) == not_sure
    assert not_sure or " ".join(spoken) == WRONG_SUM


def test_the_quality_bench_replaces_a_wrong_sum_as_the_server_does() -> None:
    config = make_config()
    question = "What's an 18 percent dip on a 42 dollar bill?"
    assert ask(FakeLlm(replies=(WRONG_SUM,), word_logprobs={}), config, [], question).reply == config.llm.not_sure_reply
    right = "144 divided by 8 equals 18."
    assert ask(FakeLlm(replies=(right,), word_logprobs={}), config, [], question).reply == right
    plain = dataclasses.replace(config, llm=dataclasses.replace(config.llm, not_sure=False))
    assert ask(FakeLlm(replies=(WRONG_SUM,), word_logprobs={}), plain, [], question).reply == WRONG_SUM
