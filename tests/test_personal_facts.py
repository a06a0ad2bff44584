"""Facts the user told earlier, said back exactly. The phrasings are not the quality sets' (written after the
held-out set showed the LLM losing them), so that neither set grades a skill fitted to it."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest

from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage, TextDelta
from voice.skills.personal_facts import Fact, answer, facts

NOW = datetime(2026, 12, 4, 18, 0)


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("Call me Bea.", Fact("name", "Bea")),
        ("my name's Olu", Fact("name", "Olu")),
        ("My cat is named Luna.", Fact("cat's name", "Luna")),
        ("my sons name is Tomás", Fact("son's name", "Tomás")),  # Whisper drops the apostrophe
        ("I have a parrot called Captain Jack.", Fact("parrot's name", "Captain Jack")),
        ("My favorite color is teal.", Fact("favourite colour", "teal")),
        ("I live in Porto.", Fact("home", "Porto")),
        ("My grandmother lives in New York.", Fact("grandmother's home", "New York")),
        ("I was born in 1985.", Fact("birth year", "1985")),
        ("Please remember the code 4471.", Fact("remembered", "4471")),
        ("remember number 9", Fact("remembered", "9")),  # Whisper dropped "the"
        # A clause after "and I" / "and my" is read on its own: the fact before it stands.
        ("My name is Ann and I need help with an essay.", Fact("name", "Ann")),
        # Not facts: a clause follows, a reminder, a place of birth, a question.
        ("My favourite film is Alien, what's yours?", None),
        ("Remember to buy milk.", None),
        ("Remember me?", None),
        ("Call me later.", None),  # a name is written with a capital letter
        ("Call me a taxi.", None),
        ("My name is not important.", None),
        # After "is called", "is named" or "'s name is", a name as Whisper wrote it, whatever its case.
        ("My cat is called pickles", Fact("cat's name", "pickles")),
        ("my dog's name is biscuit", Fact("dog's name", "biscuit")),
        ("I was born in Leeds.", None),
        ("What is my cat's name?", None),
    ],
)
def test_statements(said: str, fact: Fact | None) -> None:
    found = facts([said])
    assert found == ({fact.subject: fact.value} if fact else {})


@pytest.mark.parametrize(
    ("earlier", "question", "reply"),
    [
        (["My cat is named Luna."], "What's my cat called?", "Your cat's name is Luna."),
        (["My cat is named Luna."], "what is the name of my cat", "Your cat's name is Luna."),
        (["Call me Bea."], "Do you remember my name?", "Your name is Bea."),
        (["Hi, my name is Priya.", "What's 9 times 7?"], "Sorry, what did I say my name was?", "Your name is Priya."),
        (["Hi, my name is Priya."], "What did I see my name was?", "Your name is Priya."),  # tiny.en's "see"
        (["Bye, my name is Daniel."], "Do you remember my name?", "Your name is Daniel."),  # tiny.en's "bye"
        (["hi, my name is Priya", "what's 2 plus 2?"], "What's my name again?", "Your name is Priya."),
        (["Hi, my name is Priya."], "What did I say my dog was called?", None),
        (
            ["My name is Ann.", "Actually, call me Bea."],
            "What's my name?",
            "Your name is Bea.",
        ),  # the latest wins
        (["I live in Porto."], "Where do I live?", "You live in Porto."),
        (["My aunt lives in New York."], "Where does my aunt live?", "Your aunt lives in New York."),
        (["My favorite color is teal."], "What's my favourite colour?", "Your favourite colour is teal."),
        # A request to say it back asks the question inside it.
        (["My favorite color is teal."], "Do you remember my favorite color?", "Your favourite colour is teal."),
        (["My cat is named Luna."], "Can you tell me my cat's name?", "Your cat's name is Luna."),
        (["My cat is named Luna."], "Can you tell me a joke?", None),
        (["I was born in 1985."], "How old will I be in 2040?", "You turn 55 in 2040."),
        (["I was born in 1985."], "how old was I in 2000", "You turned 15 in 2000."),
        (["I was born in 1985."], "Our old will I be in 2040", "You turn 55 in 2040."),  # Whisper's "how"
        (["I was born in 1985."], "How old am I?", "You were born in 1985, so you turn 41 this year."),
        (["I was born in 1985."], "How old will I be next year?", "You turn 42 in 2027."),
        (
            ["Please remember the code 4471."],
            "What code did I ask you to remember?",
            "You asked me to remember 4471.",
        ),
        # Asked but never told: an honest "I don't know", not a guess.
        ([], "What's my horse's name?", "I don't know your horse's name."),
        (["My cat is named Luna."], "What is my dog called?", "I don't know your dog's name."),
        ([], "How old am I?", "I don't know how old you are: you haven't told me when you were born."),
        # Knowledge on top of the fact, or not about a fact: the LLM answers.
        (["My grandmother lives in New York."], "Which state does my grandmother live in?", None),
        (["I live in Porto."], "What is the capital of Portugal?", None),
        (["Hello, my name is Tomas."], "Do you remember my name?", "Your name is Tomas."),  # a greeting first
        (["Good morning, I live in Ghent."], "Where do I live?", "You live in Ghent."),
    ],
)
def test_questions(earlier: list[str], question: str, reply: str | None) -> None:
    assert answer(question, earlier, NOW) == reply


def test_a_statement_is_acknowledged() -> None:
    assert answer("My cat is named Luna.", [], NOW) == "OK, I'll remember that your cat's name is Luna."
    assert answer("I was born in 1985.", [], NOW) == "OK, I'll remember that you were born in 1985."
    assert answer("Call me Bea.", [], NOW) == "Nice to meet you, Bea."


def test_the_wrapper_reads_facts_from_the_conversation_only() -> None:
    inner = FakeLlm(["The LLM answered."])
    llm = SkillsLlm(inner, clock=lambda: NOW)

    def reply(messages: list[ChatMessage]) -> str:
        events = llm.generate(messages, max_tokens=32, cancel=threading.Event())
        return "".join(e.text for e in events if isinstance(e, TextDelta))

    told = [ChatMessage("user", "I have a parrot called Kiwi."), ChatMessage("assistant", "Got it.")]
    assert reply([*told, ChatMessage("user", "What's my parrot's name?")]) == "Your parrot's name is Kiwi."
    # An assistant turn that says the words is not the user telling them.
    said_by_assistant = [ChatMessage("user", "Hi."), ChatMessage("assistant", "My parrot is called Kiwi.")]
    assert reply([*said_by_assistant, ChatMessage("user", "What's my parrot's name?")]) == (
        "I don't know your parrot's name."
    )
    assert reply([ChatMessage("user", "Tell me about parrots.")]) == "The LLM answered."


def test_a_statement_of_two_facts_gives_both() -> None:
    said = "My son is called Theo, and my daughter is called Maya."
    assert facts([said]) == {"son's name": "Theo", "daughter's name": "Maya"}
    assert answer("What's my daughter's name?", [said], NOW) == "Your daughter's name is Maya."
    assert facts(["I live in Porto and my sister lives in Lyon."]) == {"home": "Porto", "sister's home": "Lyon"}
