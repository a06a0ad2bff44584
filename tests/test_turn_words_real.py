"""``[turn] words_model`` with the real SmolLM2-135M after the assistant's system prompt: a cut question or command
reads unfinished and the whole one finished, the answer does not depend on what was asked before (the KV prefix
it reuses), and no words is no answer."""

from __future__ import annotations

import pytest

from voice.backends.turn_words import WordsEndModel
from voice.config.config import load_config
from voice.models import DEFAULT_MODELS_ROOT

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]

# (cut at a pause, the whole turn): the cut must read less finished than the whole, by the config's thresholds.
PAIRS = [
    ("What is the capital of", "What is the capital of France?"),
    ("Set a timer for", "Set a timer for ten minutes."),
    ("How do you say", "How do you say grapefruit in French?"),
    ("Tell me", "Tell me a joke."),  # a short command: with the assistant's prompt it reads finished
]


@pytest.fixture(scope="module")
def model() -> WordsEndModel:
    return WordsEndModel(DEFAULT_MODELS_ROOT / "llm" / "smollm2-135m", "smollm2-135m", load_config().llm.system_prompt)


@pytest.mark.parametrize(("cut", "whole"), PAIRS)
def test_a_cut_question_reads_unfinished_and_the_whole_one_finished(model: WordsEndModel, cut: str, whole: str) -> None:
    p_cut, p_whole = model.end_probability(cut), model.end_probability(whole)
    assert p_cut is not None and p_whole is not None
    assert p_cut < 0.02 < 0.2 <= p_whole, (p_cut, p_whole)


def test_the_probability_does_not_depend_on_the_words_read_before(model: WordsEndModel) -> None:
    texts = [whole for _, whole in PAIRS] + [cut for cut, _ in PAIRS]
    first = [model.end_probability(t) for t in texts]
    again = [model.end_probability(t) for t in reversed(texts)][::-1]
    assert first == pytest.approx(again, abs=1e-6)
    assert model.end_probability("What is the capital of France") == pytest.approx(
        model.end_probability("what is the capital of france?"), abs=1e-6
    )  # the same words, however punctuated


@pytest.mark.parametrize("text", ["", "   ", "...", "?!"])
def test_no_words_no_probability(model: WordsEndModel, text: str) -> None:
    assert model.end_probability(text) is None


def test_the_ending_tokens_include_the_templates_end_of_turn(model: WordsEndModel) -> None:
    im_end = model._llm.tokenize(b"<|im_end|>", add_bos=False, special=True)
    assert im_end[0] in set(model.ending_ids.tolist()) and len(model.ending_ids) < 50


def test_the_system_prompt_is_read_before_the_words() -> None:
    bare = WordsEndModel(DEFAULT_MODELS_ROOT / "llm" / "smollm2-135m", "smollm2-135m")
    p_bare = bare.end_probability("Tell me a joke.")
    assert p_bare is not None and p_bare < 0.02  # the template's generic prompt: a sentence that goes on
