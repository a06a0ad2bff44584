"""Fractions, fractional amounts, years, prices, follow-ups and the user's own facts, spoken by flite voices and
heard by the real tiny.en, reach the skills and get the exact answer (the LLM behind them is a fake that would
say "LLM").

Whisper writes what it hears its own way ("What is 2 3rds of 90", "how many minutes are in an hour and a half"):
these clips check that the skills take the transcripts as they come, not as typed. The voices are flite's, which
tiny.en hears right on these questions; espeak-ng's are often misheard ("What is two-thirds of identity?"), and a
misheard question is not the skills' to answer. Some flite voices are misheard too: "twenty five percent off
sixty dollars" as "25% of $60" by rms and awb (another question, answered as such), "tip on" as "to" by slt.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

import pytest

from voice.backends.stt_whisper import WhisperStt
from voice.bench.voices import parse_voices, synthesize
from voice.config.config import SttConfig
from voice.conversation.skills_llm import SkillsLlm
from voice.models import DEFAULT_MODELS_ROOT
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage, TextDelta

pytestmark = [pytest.mark.real, pytest.mark.timeout(300)]
NOW = datetime(2026, 12, 4, 18, 0)


@pytest.fixture(scope="module")
def stt() -> WhisperStt:
    return WhisperStt(DEFAULT_MODELS_ROOT / "stt" / "tiny.en", SttConfig())


def _conversation(stt: WhisperStt, said: list[tuple[str, str]], folder: Path) -> list[tuple[str, str]]:
    """Each (voice, sentence) spoken, transcribed and answered in turn in one conversation: (heard, reply)."""
    llm = SkillsLlm(FakeLlm(["LLM"]), clock=lambda: NOW)
    messages: list[ChatMessage] = []
    turns = []
    for n, (voice, sentence) in enumerate(said):
        heard = stt.transcribe(synthesize(parse_voices(voice)[0], sentence, folder, f"clip{n}"))
        messages.append(ChatMessage("user", heard))
        events = llm.generate(messages, max_tokens=32, cancel=threading.Event())
        reply = "".join(e.text for e in events if isinstance(e, TextDelta))
        messages.append(ChatMessage("assistant", reply))
        turns.append((heard, reply))
    return turns


@pytest.mark.parametrize(
    ("voice", "question", "answer"),
    [
        ("flite:slt", "What is two thirds of ninety?", "is 60."),
        ("flite:rms", "What is two thirds of ninety?", "is 60."),  # heard as "What is 2 3rds of 90"
        ("flite:awb", "What is a quarter of two hundred?", "is 50."),
        ("flite:rms", "How many minutes are in an hour and a half?", "There are 90 minutes"),
        ("flite:slt", "How many ounces are in half a pound?", "There are 8 ounces"),
        ("flite:rms", "How many days are in a year?", "There are 365 days in a year, or 366 in a leap year."),
        (
            "flite:rms",
            "What is a fifteen percent tip on eighty dollars?",
            "is 12 dollars, 92 dollars in all.",
        ),
        ("flite:slt", "What is twenty five percent off sixty dollars?", "is 45 dollars"),
        ("flite:awb", "Split ninety dollars between four people.", "is 22 dollars and 50 cents each."),
    ],
)
def test_spoken_arithmetic_and_units(
    stt: WhisperStt, tmp_path: Path, voice: str, question: str, answer: str
) -> None:
    [(heard, reply)] = _conversation(stt, [(voice, question)], tmp_path)
    assert answer in reply, (heard, reply)


def test_spoken_facts_are_said_back(stt: WhisperStt, tmp_path: Path) -> None:
    said = [
        ("flite:rms", "My cat is named Luna."),
        ("flite:awb", "I was born in nineteen eighty five."),
        ("flite:slt", "What is my cat's name?"),
        ("flite:awb", "How old will I be in twenty forty?"),
        ("flite:rms", "What is my dog's name?"),
    ]
    replies = [reply for _, reply in _conversation(stt, said, tmp_path)]
    assert replies == [
        "OK, I'll remember that your cat's name is Luna.",
        "OK, I'll remember that you were born in 1985.",
        "Your cat's name is Luna.",
        "You turn 55 in 2040.",
        "I don't know your dog's name.",
    ]


def test_a_spoken_elliptical_follow_up_is_answered_as_the_question_written_out(
    stt: WhisperStt, tmp_path: Path
) -> None:
    said = [("flite:rms", "How many feet are in a mile?"), ("flite:slt", "And in half a mile?")]
    (_, first), (heard, second) = _conversation(stt, said, tmp_path)
    assert "5280 feet" in first
    assert "2640 feet" in second, (heard, second)


def test_a_spoken_planet_question_and_its_follow_up_about_it(stt: WhisperStt, tmp_path: Path) -> None:
    said = [("flite:rms", "Which planet is closest to the sun?"), ("flite:awb", "Is it bigger than Earth?")]
    (heard_first, first), (heard, second) = _conversation(stt, said, tmp_path)
    assert first.startswith("Mercury is the closest planet to the sun"), (heard_first, first)
    assert second == "No: Earth is about 2.6 times as wide as Mercury.", (heard, second)
