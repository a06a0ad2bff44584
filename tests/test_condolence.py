"""A reply that offers condolences for a loss the user never spoke of (voice.conversation.condolence) becomes "I'm
not sure", through the server's turn and in the quality bench alike."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_answer_confidence import spoken_by_sure_llm
from voice.bench.quality.measure import ask
from voice.clock import FakeClock
from voice.conversation.condolence import misplaced
from voice.conversation.history import History
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage


@pytest.mark.parametrize(
    ("sentence", "user"),
    [
        # First sentences SmolLM2-135M gave on the question sets (benchmarks/results), each judged wrong or a decline.
        ("I'm sorry for your loss.", "Read me my latest email."),
        ("I'm so sorry for your loss.", "What is my dog's name?"),
        ("Alec, I'm sorry for your loss.", "How many days are there in a leap year?"),
        ("Um, I'm sorry for your loss.", "Um, so my kid asked me this at dinner, what's the capital of Canada?"),
        ("I'm sorry for your loss, but as a voice assistant, I don't have the ability to convert kilograms.",
         "Hey, convert 70 kilograms to pounds for me."),
        # Other wordings of the same condolence.
        ("My deepest condolences.", "1 2 3 4 5"),
        ("I'm sorry to hear about your loss.", "Called my mother."),
    ],
)  # fmt: skip
def test_a_condolence_for_no_loss_is_misplaced(sentence: str, user: str) -> None:
    assert misplaced(sentence, user)


@pytest.mark.parametrize(
    ("sentence", "user"),
    [
        # The user spoke of a loss: sympathy may be the answer.
        ("I'm sorry for your loss.", "My grandmother died last week."),
        ("I'm so sorry for your loss.", "We lost our dog yesterday."),
        ("My condolences.", "I'm going to a funeral tomorrow."),
        # Not a condolence.
        ("I'm sorry, I can't check your email.", "Read me my latest email."),
        ("The capital of Canada is Ottawa.", "What's the capital of Canada?"),
        ("The team's loss was a surprise.", "Did they win?"),
    ],
)  # fmt: skip
def test_an_answer_or_a_condolence_for_a_loss_is_not_misplaced(sentence: str, user: str) -> None:
    assert not misplaced(sentence, user)


CONDOLENCE = "I'm sorry for your loss. I'll be happy to help you with that."


@pytest.mark.parametrize(("heard", "replaced"), [("What was my locker code?", True), ("My cat died.", False)])
@pytest.mark.parametrize("not_sure", [True, False])
async def test_the_turn_says_not_sure_instead_of_a_sure_misplaced_condolence(
    heard: str, replaced: bool, not_sure: bool, clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """Every token at log-probability 0 (the model is sure of it): the gate replaces the condolence anyway, unless
    the user spoke of a loss. With ``[llm] not_sure`` off nothing is held or replaced."""
    spoken = await spoken_by_sure_llm(fake_runtime, clock, CONDOLENCE, not_sure=not_sure, heard=heard)
    if replaced and not_sure:
        assert spoken == [make_config().llm.not_sure_reply]
    else:
        assert " ".join(spoken) == CONDOLENCE


def test_the_quality_bench_replaces_a_misplaced_condolence_as_the_server_does() -> None:
    config = make_config()
    asked = ask(FakeLlm(replies=(CONDOLENCE,), word_logprobs={}), config, [], "Read me my latest email.")
    assert asked.reply == config.llm.not_sure_reply
    assert ask(FakeLlm(replies=(CONDOLENCE,), word_logprobs={}), config, [], "My cat died.").reply == CONDOLENCE
    plain = dataclasses.replace(config, llm=dataclasses.replace(config.llm, not_sure=False))
    assert ask(FakeLlm(replies=(CONDOLENCE,), word_logprobs={}), plain, [], "Read me my email.").reply == CONDOLENCE


async def test_a_loss_spoken_of_in_an_earlier_turn_lets_the_condolence_through(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """The condolence may answer what the user said a turn before: the whole conversation counts."""
    history = History()
    history.add("user", "My grandfather passed away on Sunday.")
    history.add("assistant", "I'm sorry.")
    spoken = await spoken_by_sure_llm(fake_runtime, clock, CONDOLENCE, heard="Thanks for listening.", history=history)
    assert " ".join(spoken) == CONDOLENCE


def test_the_quality_bench_reads_the_whole_conversation_too() -> None:
    config = make_config()
    earlier = [ChatMessage("user", "We lost our cat today."), ChatMessage("assistant", "Oh no.")]
    assert ask(FakeLlm(replies=(CONDOLENCE,), word_logprobs={}), config, earlier, "Thanks.").reply == CONDOLENCE
    assert ask(FakeLlm(replies=(CONDOLENCE,), word_logprobs={}), config, [], "Thanks.").reply != CONDOLENCE
