"""Every skill of :data:`voice.skills.answer.SKILLS`, driven by one table: questions it must answer (with what the
reply must hold) and near-misses it must leave to the LLM. A new skill adds its rows here (see
:mod:`voice.skills`). The skill-by-skill test files go into each skill's corners."""

from __future__ import annotations

from datetime import datetime

import pytest

from voice.skills.answer import SKILLS, answer, clean

NOW = datetime(2026, 12, 5, 14, 30)  # a Saturday

#: skill → (question, a word the reply must hold) for questions it answers
ANSWERS: dict[str, tuple[tuple[str, str], ...]] = {
    "time zones": (("What time is it in America?", "more than one time zone"),),  # the same on any machine's zone
    "clock offsets": (("What time will it be in 45 minutes?", "15:15"), ("What day is it in 3 days?", "Tuesday")),
    "clock sums": (("The bus was due at six fifty and it's now seven twenty five, how late is it?", "35 minutes"),),
    "clock": (("What time is it?", "14:30"), ("What day is it today?", "Saturday")),
    "arithmetic": (("What is 17 times 3?", "51"), ("What's 120 divided by 8?", "15")),
    "money": (("What is 20% of 150?", "30"),),
    "areas": (("My room is 4 metres by 3 metres, what's the area?", "12 square metres"),),
    "units": (("How many centimeters in 2 inches?", "5.08"), ("Convert 100 degrees Fahrenheit to Celsius.", "37.8")),
    "countries": (("What is the capital of France?", "Paris"),),
    "elements": (("What is the chemical symbol for gold?", "Au"),),
    "planets": (("What is the largest planet?", "Jupiter"),),
    "word problems": (("I've read 120 of the 300 pages, how many are left?", "180"),),
    "mixtures": (("One part dye to three parts developer, if I use 40 ml of dye how much developer?", "120 ml"),),
    "ratios": (("I've got 72 bulbs and want them in rows of eight, how many rows is that?", "9 rows"),),
    "unit rates": (("Three bags cost 6 pounds, how much is each bag?", "2 pounds a bag"),),
    "expressions": (
        ("What, 17 times 3?", "51"),
        ("So uh 12 plus 9 is what?", "21"),
        ("What is 17 times?", "again"),
    ),
}

#: skill → questions near its own that it must not take (the LLM or another skill answers them)
LEAVES: dict[str, tuple[str, ...]] = {
    "time zones": ("What time is it in an hour?", "What time is it in the morning there?"),
    "clock offsets": ("What time is it in Tokyo?", "What day is it in the morning?"),
    "clock sums": ("The meeting is at ten, how many people are coming?",),
    "clock": ("What time does the bakery open?",),
    "arithmetic": ("Who wrote the times?",),
    "money": ("How much does a house cost?",),
    "areas": ("My room is 4 metres by 3 metres, is that big?",),
    "units": ("How many people live in Paris?",),
    "countries": ("What is the capital of love?",),
    "elements": ("What is the symbol of peace?",),
    "planets": ("Who is the largest singer?",),
    "word problems": ("I have 3 cats and 2 dogs, how many legs is that in total?",),
    "mixtures": ("One part dye to three parts developer, how much dye?",),
    "ratios": ("I have 3 cats and 2 dogs, how many pets?",),
    "unit rates": ("How much is a litre of milk?",),
    "expressions": ("I called him 3 times.", "What happened on 9/11?"),
}

_SKILL = dict(SKILLS)


def test_every_skill_has_rows_of_both_kinds() -> None:
    assert set(_SKILL) == set(ANSWERS) == set(LEAVES)


@pytest.mark.parametrize(("skill", "question", "expected"), [(s, q, e) for s, rows in ANSWERS.items() for q, e in rows])
def test_the_skill_answers_its_questions(skill: str, question: str, expected: str) -> None:
    own = _SKILL[skill](clean(question), NOW)
    assert own is not None and expected in own, f"{skill}: {question!r} → {own!r}"
    assert answer(question, NOW) == own, "an earlier skill in SKILLS takes this question"


@pytest.mark.parametrize(("skill", "question"), [(s, q) for s, qs in LEAVES.items() for q in qs])
def test_the_skill_leaves_near_misses(skill: str, question: str) -> None:
    assert _SKILL[skill](clean(question), NOW) is None
