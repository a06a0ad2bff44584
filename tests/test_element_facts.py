"""The element-facts skill: symbols and atomic numbers both ways, from the periodic table; questions about
anything else left to the LLM."""

from __future__ import annotations

import threading
from datetime import datetime

import periodictable
import pytest

from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage, TextDelta
from voice.skills import element_facts
from voice.skills.answer import answer

NOW = datetime(2026, 12, 5, 9, 0)


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("Um, what's the chemical symbol for gold?", "The chemical symbol for gold is Au, spelled A U."),
        ("Hey, what's the chemical symbol for sodium?", "The chemical symbol for sodium is Na, spelled N A."),
        ("What is the symbol for aluminium?", "The chemical symbol for aluminum is Al, spelled A L."),
        ("What's oxygen's symbol?", "The chemical symbol for oxygen is O."),
        ("Which element has the chemical symbol K?", "Potassium has the symbol K."),
        ("Which element has atomic number one?", "The element with atomic number 1 is hydrogen."),
        ("Which element has the atomic number twenty six?", "The element with atomic number 26 is iron."),
        ("What is element number 6?", "The element with atomic number 6 is carbon."),
        ("What is the atomic number of carbon?", "The atomic number of carbon is 6."),
        # Whisper hears "the" as "a" at times.
        ("What's a chemical symbol for iron?", "The chemical symbol for iron is Fe, spelled F E."),
        ("What's an atomic number of neon?", "The atomic number of neon is 10."),
    ],
)
def test_questions_about_an_element_get_the_tables_answer(question: str, reply: str) -> None:
    assert answer(question, NOW) == reply


@pytest.mark.parametrize(
    "question",
    [
        "What is the chemical symbol for water?",
        "What is the symbol of peace?",
        "Which element is he?",  # no "symbol": a question about someone
        "Which element has the symbol XX?",
        "Which element has atomic number 200?",
        "What element of surprise do you like?",
    ],
)
def test_other_questions_go_on_to_the_llm(question: str) -> None:
    assert answer(question, NOW) is None


def test_every_element_is_found_by_name_symbol_and_number() -> None:
    checked = 0
    for e in periodictable.elements:
        if e.number == 0:  # the neutron
            continue
        assert element_facts.answer(f"what is the atomic number of {e.name}") == (
            f"The atomic number of {e.name} is {e.number}."
        )
        assert element_facts.answer(f"which element has the symbol {e.symbol.lower()}") is not None
        assert element_facts.answer(f"which element has atomic number {e.number}") == (
            f"The element with atomic number {e.number} is {e.name}."
        )
        checked += 1
    assert checked == 118


def test_the_assistant_answers_after_an_opener() -> None:
    """ "Quick one, …" (the sixth held-out set) is dropped before the skills match, as "Um, …" is."""
    llm = SkillsLlm(FakeLlm(replies=("I am the LLM.",)), clock=lambda: NOW)
    asked = [ChatMessage("user", "Quick one, which element has atomic number one?")]
    events = llm.generate(asked, max_tokens=32, cancel=threading.Event())
    reply = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert reply == "The element with atomic number 1 is hydrogen."
