"""A question naming a person by a pronoun is written out with whom the reply before named (voice.conversation.pronouns,
voice.conversation.follow_ups); other pronouns and other questions are left as they are."""

from __future__ import annotations

import pytest

from tests.conftest import make_config
from voice.conversation.follow_ups import resolve_messages
from voice.conversation.prompt_view import PromptView
from voice.conversation.pronouns import person_named, resolve, resolve_its, thing_asked
from voice.runtime.model_api import ChatMessage


@pytest.mark.parametrize(
    ("question", "reply", "person"),
    [
        ("Who wrote Romeo and Juliet?", "William Shakespeare wrote Romeo and Juliet.", "William Shakespeare"),
        ("Who wrote Romeo and Juliet?", "It was written by William Shakespeare's company.", "William Shakespeare"),
        ("Who wrote Pride and Prejudice?", "The novel by Jane Austen is often attributed to her.", "Jane Austen"),
        ("Who was the first president of the United States?", "The first president of the United States was "
         "John F. Kennedy.", "John F. Kennedy"),  # the reply's, right or wrong
        ("who was the first person on the moon", "Neil Armstrong, in 1969.", "Neil Armstrong"),
        ("Um, who painted it?", "Picasso.", "Picasso"),
        ("What is the capital of France?", "Paris.", None),  # not a "who" question
        ("Who are you?", "I'm a voice assistant.", None),
        ("Who won?", "Sorry, I don't know.", None),
        ("Who is the president of France?", "France has a president.", None),  # only the question's name
    ],
)  # fmt: skip
def test_whom_a_reply_to_a_who_question_names(question: str, reply: str, person: str | None) -> None:
    assert person_named(question, reply) == person


@pytest.mark.parametrize(
    ("question", "written_out"),
    [
        ("When was she born?", "When was Jane Austen born?"),
        ("What was her first novel?", "What was Jane Austen's first novel?"),
        ("Did you meet her yesterday?", "Did you meet Jane Austen yesterday?"),
        ("Tell me more about her.", "Tell me more about Jane Austen."),
        ("Where is his house?", "Where is Jane Austen's house?"),
        ("When did he write it and where did he live?", "When did Jane Austen write it and where did he live?"),
        ("Um, when was he born?", "Um, when was Jane Austen born?"),
        ("I like her.", None),  # not a question
        ("What time is it?", None),  # no personal pronoun
        ("Is it raining there?", None),
        ("What do they eat?", None),
    ],
)
def test_the_first_personal_pronoun_of_a_question_becomes_the_name(question: str, written_out: str | None) -> None:
    assert resolve(question, "Jane Austen") == written_out


def users(messages: list[ChatMessage]) -> list[str]:
    return [m.content for m in resolve_messages(messages) if m.role == "user"]


def conversation(*turns: str) -> list[ChatMessage]:
    """User and assistant messages in turn."""
    return [ChatMessage("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(turns)]


def test_the_person_is_meant_while_each_question_uses_a_pronoun() -> None:
    messages = conversation(
        "Who wrote Hamlet?", "William Shakespeare wrote Hamlet.",
        "When was he born?", "In 1564.",
        "Where did he die?", "In Stratford.",
        "What is the capital of France?", "Paris.",
        "Is he famous?",  # a question without one came between: nobody is meant any more
    )  # fmt: skip
    assert users(messages) == [
        "Who wrote Hamlet?",
        "When was William Shakespeare born?",
        "Where did William Shakespeare die?",
        "What is the capital of France?",
        "Is he famous?",
    ]


def test_a_new_who_question_names_someone_else() -> None:
    messages = conversation(
        "Who wrote Hamlet?", "William Shakespeare.",
        "When was he born?", "In 1564.",
        "Who wrote Emma?", "Jane Austen wrote Emma.",
        "When was she born?",
    )  # fmt: skip
    assert users(messages)[-1] == "When was Jane Austen born?"


def test_each_turn_renders_the_earlier_turns_as_before_so_the_cached_prefix_still_covers_them() -> None:
    said = ["Who wrote Hamlet?", "When was he born?", "And Macbeth?", "Where did he die?"]
    replies = ["William Shakespeare wrote Hamlet.", "In 1564.", "Also Shakespeare.", "In Stratford."]
    view = PromptView(make_config().llm)
    history: list[ChatMessage] = []
    before: list[ChatMessage] = []
    for text, reply in zip(said, replies, strict=True):
        history.append(ChatMessage("user", text))
        now = view.apply(history)
        assert now[: len(before)] == before
        before = now
        history.append(ChatMessage("assistant", reply))
    assert [m.content for m in before if m.role == "user"][1] == "When was William Shakespeare born?"


@pytest.mark.parametrize(
    ("previous", "question", "written_out"),
    [
        ("What's the symbol for silver?", "And what's its atomic number?", "And what's the atomic number of silver?"),
        ("How many moons does Mars have?", "How big is its largest moon?", "How big is the largest moon of Mars?"),
        ("what is the capital of australia", "what's its population", "what's the population of australia"),
        ("What time is it?", "What's its name?", None),  # nothing was asked about
        ("Who wrote it?", "What is its title?", None),  # a pronoun is no thing
        ("What's the symbol for silver?", "Is it shiny?", None),  # "it" is left as said
        ("What's the capital of France?", "Why is the Eiffel Tower famous for its height?", None),  # its own thing
        ("What's the capital of France?", "Why is Paris known for its food?", None),
    ],
)  # fmt: skip
def test_its_is_what_the_previous_question_asked_about(previous: str, question: str, written_out: str | None) -> None:
    thing = thing_asked(previous)
    assert (resolve_its(question, thing) if thing else None) == written_out
    messages = [ChatMessage("user", previous), ChatMessage("assistant", "Ag."), ChatMessage("user", question)]
    assert resolve_messages(messages)[-1].content == (written_out or question)


def test_a_follow_up_with_its_is_answered_by_the_skill_that_knows_the_thing() -> None:
    """The nineteenth set: "And what's its atomic number?" after the symbol for silver was answered by the LLM, 49;
    written out, and with its leading "and", it is the element skill's."""
    from datetime import datetime

    from voice.skills.answer import answer

    messages = [ChatMessage("user", "What's the symbol for silver?"), ChatMessage("assistant", "Ag."),
                ChatMessage("user", "And what's its atomic number?")]  # fmt: skip
    assert answer(resolve_messages(messages)[-1].content, datetime(2026, 12, 6)) == "The atomic number of silver is 47."
