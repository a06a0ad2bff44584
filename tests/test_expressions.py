"""Arithmetic read as an expression wherever it stands (voice.skills.expressions): found by token classes (numbers,
operators, the words around), computed with precedence; a sum not all heard is asked again, never guessed."""

from __future__ import annotations

from datetime import datetime

import pytest

from voice.skills import expressions
from voice.skills.answer import answer

NOW = datetime(2026, 12, 5, 14, 30)

#: (transcript, the reply's result) — sums in any surrounding words, as the whole pipeline answers them
COMPUTED = [
    ("What, 17 times 3?", "17 times 3 is 51."),
    ("so uh 12 plus 9 is what", "12 plus 9 is 21."),
    ("how much is 20% of 150", "is 30."),
    ("what's 7 x 8", "is 56."),
    ("100 divided by four", "is 25."),
    ("Um, what is 5 times 3 minus 2?", "5 times 3 minus 2 is 13."),
    ("What is 5 plus 3 times 2?", "is 11."),  # times before plus
    ("Twelve divided by four plus one, please.", "12 divided by 4 plus 1 is 4."),
    ("Quick one: two hundred and five minus 5 equals what?", "205 minus 5 is 200."),
    ("What does 6 times 7 come to?", "6 times 7 is 42."),
    ("Tell me 1,000 minus 387 again.", "1000 minus 387 is 613."),
    ("OK so what is minus 5 plus 3", "Minus 5 plus 3 is -2."),
    ("What's 2.5 times 4, exactly?", "2.5 times 4 is 10."),
    ("uh what is 3 squared plus 1", "3 squared plus 1 is 10."),
    ("and 2 to the power of 10 is", "2 to the power of 10 is 1024."),
    ("What's the square root of 144 plus 1?", "The square root of 144 plus 1 is 13."),
    ("Hey, a third of 60 plus 2?", "A third of 60 plus 2 is 22."),
    ("What is 10 divided by 0?", "Dividing by zero has no answer."),
    ("5 + 3 * 2", "is 11."),
    ("What's half of three quarters?", "Half of three quarters is 0.375."),  # a fraction is a number
    ("what is 10 plus a half", "10 plus a half is 10.5."),
    ("Two thirds times 9?", "Two thirds times 9 is 6."),
    # A power said as an ordinal, and a decimal said with "point" (was "2 divided by 2 is 1.": a fragment).
    ("What's 2 to the 10th power?", "2 to the power of 10 is 1024."),
    ("what is seven to the fourth", "7 to the power of 4 is 2401."),
    ("what's twenty six point two divided by two", "26.2 divided by 2 is 13.1."),
    ("three point one four times two", "3.14 times 2 is 6.28."),
    # Numbers in another sentence, before a question word, or before a repair are not beside the sum.
    ("I have 2 kids. What's 12 times 9?", "12 times 9 is 108."),
    ("walking 10,000 steps a day and completely unrelated what's the square root of 81", "square root of 81 is 9."),
    ("what's 20, no, 30 times 4", "30 times 4 is 120."),
    ("What's 12 times 9? I need it for 2 things.", "12 times 9 is 108."),
]

#: transcripts with numbers that are no sum, or whose sum belongs to something else: not this skill's
NOT_SUMS = [
    "How many legs does a spider have?",
    "What happened in 1969?",
    "Set a timer for 5 minutes.",
    "What is 5 miles in kilometers?",  # a conversion (units)
    "What is 20 percent of 80 dollars?",  # money
    "What happened on 9/11?",  # a date, not 9 divided by 11
    "Is the shop open 24/7?",
    "What was the score, 3-1?",  # a score, not a subtraction
    "I called him 3 times.",
    "What is 3 times the speed of light?",  # an operand that is no number: the LLM's
    "What is 3 times 4 apples?",  # a noun after the last number
    "What is 5 plus 5 in binary?",  # a conversion of the result
    "Is 7 times 8 56?",  # another number after it
    "Who sang 99 problems?",
    "What is the 2 times table?",
    "Is this movie 18 plus?",
    "well plus 30",  # no number before the operator: perhaps a follow-up, the LLM's
    "And 5 times that?",
    "What is 2 plus 2 and 3 plus 3?",  # two sums: not one answer
]

#: sums asked for whose numbers were not all heard
UNCLEAR = [
    "What is 17 times?",
    "so 12 plus is what",
    "What's 100 divided by, uh",
    "What is 20 percent of?",
    "what's the square root of",
    "Seven times what?",
    # one operand a word that is no number: a number misheard ("two", "four"), not a sum to guess
    "What is due to the power of ten?",
    "What's 12.5 times forward?",
    "Calculate eight divided by tree.",
    "so what's 15 percent of dinner",
    # a scale word alone: the first word of "six hundred" lost
    "hundred minus two hundred and seventy five",
    # another number beside the sum, in its sentence: part of the sum heard as other words, or a result stated
    "What is I 100 and I 99 minus 456?",  # "nine hundred and ninety nine minus four hundred and fifty six"
    "Well, say the 3 minus 4 is 7.",  # "what's eighty three minus forty seven"
    "The square root of 1, 440169.",
    "what's seven times eight oh and then plus ten",
    "4,000 and 20 minus 1,000, 100 and 75",  # "one thousand nine hundred and seventy five", the "nine" lost
    # a number's last word heard as a word that sounds like one: "twenty twenty four"
    "What's 2020 for minus 1987",
    "what is 40 to times 3",
]


@pytest.mark.parametrize(("text", "expected"), COMPUTED)
def test_a_sum_is_computed_whatever_words_surround_it(text: str, expected: str) -> None:
    reply = answer(text, NOW)
    assert reply is not None and expected in reply, f"{text!r} → {reply!r}"


@pytest.mark.parametrize("text", NOT_SUMS)
def test_numbers_that_are_no_sum_are_left_alone(text: str) -> None:
    assert expressions.answer(text.lower()) is None, text


@pytest.mark.parametrize("text", UNCLEAR)
def test_a_sum_not_all_heard_is_asked_again_not_guessed(text: str) -> None:
    assert answer(text, NOW) == expressions.UNCLEAR


@pytest.mark.parametrize(
    "text",
    [
        "I called him 3 times.",
        "How many times 2?",
        "My 2 cats plus the dog.",
        "The score was 3 to",
        "Is it 5 over?",
        "What is 3 times the speed of light?",  # more than one word: the LLM's
        "What is 20 percent of it?",  # a word that refers back: a follow-up's
        "Love plus hate?",  # no number on either side
        "I ran 5 times faster than him.",  # not asked for
    ],
)
def test_an_operator_after_a_number_in_other_words_is_not_a_sum_asked_for(text: str) -> None:
    assert not expressions.unclear(text.lower())


def test_an_expression_is_parsed_with_precedence_and_said_back_in_words() -> None:
    part = expressions.find("so what's 2 plus 3 times 4 minus 6 divided by 3 then")
    assert part is not None and part.value == 12 and part.ops == 4
    assert part.said == "2 plus 3 times 4 minus 6 divided by 3"
    assert expressions.find("what is 2 plus 2") is not None
    assert expressions.find("2 and 2") is None  # no operator: no expression
