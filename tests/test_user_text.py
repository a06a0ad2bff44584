"""The user's words as the model sees them: tidied spelling, and the grounding note, through PromptView."""

from datetime import UTC, datetime

import pytest

from tests.conftest import make_config
from voice.conversation.prompt_view import PromptView
from voice.conversation.user_text import strip_interjections, tidy, tidy_messages
from voice.runtime.model_api import ChatMessage


@pytest.mark.parametrize(
    ("heard", "typed"),
    [
        ("who was the first president of the United States.", "Who was the first president of the United States?"),
        ("at what temperature does water freeze?", "At what temperature does water freeze?"),
        ("is the Sun is Star or a planet", "Is the Sun is Star or a planet?"),
        ("called my mother.", "Called my mother."),
        ("Now type all that", "Now type all that."),
        ("What's the date today.", "What's the date today?"),
        ("  how many eggs are in a dozen  ", "How many eggs are in a dozen?"),
        ("My color is green. what is my color.", "My color is green. What is my color?"),
        ("iPhone prices, please.", "iPhone prices, please."),
        ("Wait... what", "Wait... What?"),
        ("Play some music!", "Play some music!"),
        ("what is 10% of 250", "What is 10% of 250?"),
        ("first line.\nsecond line", "First line.\nSecond line."),
        ("tell me about these:", "Tell me about these:"),
        ("", ""),
        ("42", "42"),
    ],
)  # fmt: skip
def test_the_stt_spelling_becomes_the_typed_one(heard: str, typed: str) -> None:
    assert tidy(heard) == typed


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("Well, 1,000 minus 387", "1,000 minus 387"),
        ("Wait, what did I say I was allergic to?", "what did I say I was allergic to?"),
        ("OK, so, um, what time is it?", "what time is it?"),
        ("Uhm... hey what's 5 plus 5?", "what's 5 plus 5?"),
        ("Oh! Sorry, where did I park?", "where did I park?"),
        ("Quick one, which element has atomic number one?", "which element has atomic number one?"),
        ("Quick question: is it Monday?", "Quick question: is it Monday?"),  # only a comma or end mark after it
        ("They, what language do they speak in Brazil?", "what language do they speak in Brazil?"),  # Whisper's "Hey,"
        ("They, in turn, asked me.", "They, in turn, asked me."),  # only before a question
        # a word that can start a request counts only with a comma or end mark after it
        ("Right now, what time is it?", "Right now, what time is it?"),
        ("So what's up?", "So what's up?"),
        ("Well done!", "Well done!"),
        ("Look at the time.", "Look at the time."),
        ("Umbrella prices, please.", "Umbrella prices, please."),
        ("Hmm, okay.", "okay."),  # the last word is never dropped: something is left to answer
    ],
)  # fmt: skip
def test_interjections_that_start_a_request_are_dropped(said: str, asked: str) -> None:
    assert strip_interjections(said) == asked


def test_typed_text_is_left_as_it_is() -> None:
    for typed in ("What is the capital of France?", "Set a timer for 5 minutes.", "Thanks, that's all!"):
        assert tidy(typed) == typed


def test_only_user_messages_are_tidied() -> None:
    messages = [
        ChatMessage("system", "be brief"),
        ChatMessage("user", "who are you"),
        ChatMessage("assistant", "me"),
    ]
    assert tidy_messages(messages) == [messages[0], ChatMessage("user", "Who are you?"), messages[2]]


def test_the_view_tidies_then_grounds_and_can_be_switched_off() -> None:
    messages = [ChatMessage("system", "be brief"), ChatMessage("user", "what time is it.")]
    grounded = make_config(llm={"grounding": True, "location": "Lisbon"}).llm
    on = PromptView(grounded, clock=lambda: datetime(2026, 12, 4, 13, 5, tzinfo=UTC))
    shown = on.apply(messages)[-1].content
    assert shown.startswith("[Now: Friday 4 December 2026, 13:05") and shown.endswith("\nWhat time is it?")
    assert on.preview(messages) == on.apply(messages)
    off = PromptView(make_config(llm={"tidy_user_text": False}).llm)
    assert off.apply(messages) == messages
