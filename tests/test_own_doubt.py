"""A reply that opens by saying the model does not know or cannot (voice.conversation.own_doubt) ends with that
sentence, through the server's turn and in the quality bench alike."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_answer_confidence import RULE, spoken_by_sure_llm
from voice.bench.quality.measure import ask
from voice.clock import FakeClock
from voice.conversation.answer_confidence import UnsureGate
from voice.conversation.history import History
from voice.conversation.own_doubt import declines
from voice.runtime.fakes import FakeLlm


@pytest.mark.parametrize(
    "sentence",
    [
        # First sentences SmolLM2-135M went on from with an answer (benchmarks/results, 2026-12-06/07).
        "I'm not sure.",
        "I'm sorry, I can't help you with that.",
        "I'm sorry, I can't remember the exact location.",
        "I'm sorry, but I don't have the ability to turn off lights in your home.",
        "I'm sorry, I can't give you a ballpark.",
        "I'm sorry, I'm unable to assist with that.",
        # Other wordings of the same.
        "I don't know.",
        "Sorry, I do not know who that is.",
        "Unfortunately, I cannot see your calendar.",
        "I’m not able to check that.",
        "I don't have access to your messages.",
        "I'm not certain.",
    ],
)
def test_a_first_sentence_that_says_it_does_not_know_or_cannot_declines(sentence: str) -> None:
    assert declines(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "I'm not sure, but I think it's 42.",  # a hedged answer
        "I'm not sure what you're asking, but I can tell you that the body needs sun.",
        "I don't know the exact date, but he was born in 1564.",
        "I'm sorry for your loss.",  # no inability (voice.conversation.condolence's)
        "I can't wait to hear about it.",
        "I can't believe it's already December.",
        "You can't divide by zero.",  # not the assistant
        "The capital of France is Paris.",
        "If I don't know, I'll say so.",
        "I'm sure it is Paris.",
    ],
)
def test_a_hedged_answer_or_a_sentence_of_something_else_does_not(sentence: str) -> None:
    assert not declines(sentence)


def test_the_gate_ends_the_reply_after_a_first_sentence_that_declines() -> None:
    gate = UnsureGate(RULE)
    for piece in ["I", "'m", " not", " sure", ".", " They", "'re", " 12"]:
        gate.token(piece, 0.0)
    assert gate.release(["I'm not sure."]) == ("I'm not sure.",) and gate.ended and not gate.replaced
    kept = UnsureGate(RULE)
    for piece in ["It", " is", " Paris", ".", " I"]:
        kept.token(piece, 0.0)
    assert kept.release(["It is Paris."]) == ("It is Paris.",) and not kept.ended
    # The stream ended with more than the first sentence held: only the first sentence goes.
    held = UnsureGate(RULE)
    for piece in ["I", " don't", " know", ".", " It", " is", " 12", "."]:
        held.token(piece, 0.0)
    assert held.release(["I don't know.", "It is 12."], final=True) == ("I don't know.",) and held.ended


MADE_UP = "I'm not sure. I'll give you a few options, but the most convenient one is 12:30."


@pytest.mark.parametrize("not_sure", [True, False])
async def test_the_turn_speaks_the_doubt_and_nothing_after_it(
    not_sure: bool, clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """Every token at log-probability 0: the model was sure of its doubt, and of the time it made up after it. With
    ``[llm] not_sure`` (the gate) off, nothing is held or cut; the history holds what was spoken."""
    history = History()
    spoken = await spoken_by_sure_llm(
        fake_runtime, clock, MADE_UP, not_sure=not_sure, heard="What time am I meeting Dave?", history=history
    )
    want = "I'm not sure." if not_sure else MADE_UP
    assert " ".join(spoken) == want
    assert history.messages[-1].content == want


def test_the_quality_bench_ends_the_reply_as_the_server_does() -> None:
    config = make_config()
    assert ask(FakeLlm(replies=(MADE_UP,), word_logprobs={}), config, [], "When am I meeting Dave?").reply == (
        "I'm not sure."
    )
    answer = "I'm not sure, but I think it's 12:30."
    assert ask(FakeLlm(replies=(answer,), word_logprobs={}), config, [], "When am I meeting Dave?").reply == answer
    plain = dataclasses.replace(config, llm=dataclasses.replace(config.llm, not_sure=False))
    assert ask(FakeLlm(replies=(MADE_UP,), word_logprobs={}), plain, [], "When am I meeting Dave?").reply == MADE_UP
