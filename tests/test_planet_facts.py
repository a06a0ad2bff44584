"""The planet-facts skill: the planets' order, size, year, distance and (inner) moons from NASA's table, the
superlatives that follow from it, follow-ups on "it"; questions about anything else left to the LLM."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest

from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage, TextDelta
from voice.skills import planet_facts
from voice.skills.answer import answer, follow_up
from voice.skills.planet_facts import PLANETS

NOW = datetime(2026, 12, 5, 9, 0)


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        (
            "Which is the largest planet in the solar system?",
            "Jupiter is the largest planet in the solar system, about 11 times as wide as Earth.",
        ),
        (
            "Hey, which planet is closest to the sun?",
            "Mercury is the closest planet to the sun, on average 58 million kilometres (36 million miles) away.",
        ),
        ("Which planet has the shortest year?", "Mercury has the shortest year: 88 Earth days."),
        ("Which planet has the longest year?", "Neptune has the longest year: about 164.8 Earth years."),
        ("What's the second largest planet?", "Saturn is the second largest planet."),
        ("What is the second closest planet to the sun?", "Venus is the second closest planet to the sun."),
        ("Which planet is the third smallest?", "Venus is the third smallest planet."),
        ("What is the third planet from the sun?", "The third planet from the sun is Earth."),
        ("Which planet is fifth from the sun?", "The fifth planet from the sun is Jupiter."),
        ("What planet from the sun is Mars?", "Mars is the fourth planet from the sun."),
        (
            "How far is Mars from the sun?",
            "Mars is on average 228 million kilometres (142 million miles) from the sun.",
        ),
        ("How long is a year on Jupiter?", "A year on Jupiter is about 11.9 Earth years (4,331 days)."),
        ("How long does it take Mars to orbit the sun?", "A year on Mars is 687 Earth days."),
        ("How many moons does Mars have?", "Mars has two moons, Phobos and Deimos."),
        ("Is Mars bigger than Earth?", "No: Earth is about 1.9 times as wide as Mars."),
        (
            "Is Neptune bigger than Uranus?",
            "No: Uranus is only slightly wider than Neptune. Neptune is heavier, though.",
        ),
        ("Which is bigger, Venus or Earth?", "Earth is bigger: Earth is only slightly wider than Venus."),
        ("How big is Saturn?", "Saturn is 120,536 kilometres across, about 9.4 times as wide as Earth."),
        ("Which planet has the Great Red Spot?", "Jupiter has the Great Red Spot, a storm wider than Earth."),
        (
            "Which planet is famous for its big rings?",  # the eighth held-out set, after its blind runs
            "Saturn is famous for its rings, of ice and rock; Jupiter, Uranus and Neptune have faint rings too.",
        ),
    ],
)
def test_questions_about_the_planets_get_the_tables_answer(question: str, reply: str) -> None:
    assert answer(question, NOW) == reply


@pytest.mark.parametrize(
    "question",
    [
        "How many planets are in the solar system?",
        "How many planets are there?",
        "Um, how many planets orbit the sun?",
    ],
)
def test_the_planets_are_counted_and_named(question: str) -> None:
    reply = answer(question, NOW)
    assert reply is not None and "eight planets" in reply
    assert all(p.name in reply for p in PLANETS)


@pytest.mark.parametrize(
    "question",
    [
        "What is the largest planet in the universe?",  # beyond the solar system
        "What is the largest dwarf planet?",
        "What's the largest moon of Jupiter?",
        "How many moons does Jupiter have?",  # the count keeps changing
        "How many planets are there in the galaxy?",
        "Is the moon bigger than Earth?",
        "How far is the moon from Earth?",
        "How big is it?",  # nothing named
        "What's the biggest country?",
        "What is the atomic number of mercury?",  # the element
    ],
)
def test_other_questions_go_on_to_the_llm(question: str) -> None:
    assert planet_facts.answer(question.lower().rstrip("?")) is None


def test_the_atomic_number_of_mercury_is_the_elements() -> None:
    assert answer("What is the atomic number of mercury?", NOW) == "The atomic number of mercury is 80."


def test_the_superlatives_numbers_are_the_tables() -> None:
    """The replies with a number in them say what the table says."""
    neptune = PLANETS[-1]
    assert f"{neptune.year_days / 365.25:.1f} Earth years" in (
        answer("Which planet has the longest year?", NOW) or ""
    )
    jupiter = max(PLANETS, key=lambda p: p.diameter_km)
    ratio = round(jupiter.diameter_km / PLANETS[2].diameter_km)
    assert f"about {ratio} times as wide as Earth" in (answer("What's the biggest planet?", NOW) or "")


def test_the_table_is_in_order_from_the_sun() -> None:
    assert [p.order for p in PLANETS] == list(range(1, 9))
    distances = [p.sun_distance_million_km for p in PLANETS]
    years = [p.year_days for p in PLANETS]
    assert distances == sorted(distances) and years == sorted(years)


@pytest.mark.parametrize(
    ("question", "key", "pick"),
    [
        ("Which is the largest planet?", lambda p: p.diameter_km, max),
        ("What's the smallest planet?", lambda p: p.diameter_km, min),
        ("Which planet is the hottest?", lambda p: p.mean_temperature_c, max),
        ("Which planet is closest to the sun?", lambda p: p.sun_distance_million_km, min),
        ("Which planet is farthest from the sun?", lambda p: p.sun_distance_million_km, max),
        ("Which planet has the shortest year?", lambda p: p.year_days, min),
        ("Which planet has the longest year?", lambda p: p.year_days, max),
    ],
)
def test_a_superlative_names_the_planet_the_table_gives(question: str, key: object, pick: object) -> None:
    reply = answer(question, NOW)
    chosen = pick(PLANETS, key=key)  # type: ignore[operator]
    assert reply is not None and reply.startswith(chosen.name)


@pytest.mark.parametrize("planet", PLANETS, ids=lambda p: p.name)
def test_every_planet_is_found_by_name(planet: object) -> None:
    assert isinstance(planet, planet_facts.Planet)
    name = planet.name.lower()
    assert answer(f"What number planet is {name} from the sun?", NOW) == (
        f"{planet.name} is the {planet_facts._ORDINALS[planet.order - 1]} planet from the sun."
    )
    for question in (
        f"How big is {name}?",
        f"How far is {name} from the sun?",
        f"How long is a year on {name}?",
    ):
        reply = answer(question, NOW)
        assert reply is not None and planet.name in reply
    other = PLANETS[planet.order % 8]
    compared = answer(f"Is {name} bigger than {other.name.lower()}?", NOW)
    assert compared is not None
    assert compared.startswith("Yes" if planet.diameter_km > other.diameter_km else "No")


@pytest.mark.parametrize(
    ("previous", "question", "reply"),
    [
        (
            "The largest planet in the solar system is Jupiter, but it's actually Saturn.",  # SmolLM2, main set
            "Is it bigger than Earth?",
            "Yes: Jupiter is about 11 times as wide as Earth.",
        ),
        ("The largest planet in the solar system is Jupiter, but it's actually Saturn.", "Which one is the second "
         "largest?", "Saturn is the second largest planet."),  # the third held-out set, text
        ("Mars is the fourth planet from the sun.", "How many moons does it have?", "Mars has two moons, Phobos and "
         "Deimos."),
        ("Mercury is the closest planet to the sun.", "And how long does it take to orbit the sun?", "A year on "
         "Mercury is 88 Earth days."),
    ],
)  # fmt: skip
def test_a_follow_up_about_it_means_the_planet_just_named(previous: str, question: str, reply: str) -> None:
    assert follow_up(question, previous) == reply


@pytest.mark.parametrize(
    "previous",
    [
        "The biggest ocean on Earth is the Pacific Ocean.",  # "on Earth": not what "it" means
        "The Moon orbits Earth once a month.",
        "Earth's moon is about a quarter as wide as the planet.",
        "The Pacific is the biggest ocean.",
    ],
)
def test_it_means_no_planet_when_the_reply_was_not_about_one(previous: str) -> None:
    assert follow_up("Is it bigger than Earth?", previous) is None
    assert follow_up("Which one is the second largest?", previous) is None


def test_the_assistant_answers_a_planet_follow_up_without_the_llm() -> None:
    llm = SkillsLlm(FakeLlm(replies=("Jupiter is big, but it's actually Saturn.",)), clock=lambda: NOW)
    history = [
        ChatMessage("user", "Which is the largest planet in the solar system?"),
        ChatMessage(
            "assistant", "The largest planet in the solar system is Jupiter, but it's actually Saturn."
        ),
        ChatMessage("user", "Is it bigger than Earth?"),
    ]
    events = llm.generate(history, max_tokens=32, cancel=threading.Event())
    reply = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert reply == "Yes: Jupiter is about 11 times as wide as Earth."
    assert llm.answered == 1
