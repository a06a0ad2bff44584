"""Prices and percentages are answered exactly however the sum is put; questions with other numbers, or with
nothing to do with the percentage, are left to the other skills and the LLM (voice.skills.money_sums)."""

from __future__ import annotations

from datetime import datetime

import pytest

from voice.skills.answer import answer as skills_answer
from voice.skills.answer import clean, follow_up
from voice.skills.money_sums import answer
from voice.skills.numbers import parse_number, say_number


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        # discounts
        ("What's 30 percent off 80 dollars?", "80 dollars with 30 percent off is 56 dollars: you save 24 dollars."),
        ("A $40 lamp at 15% off costs what?", "40 dollars with 15 percent off is 34 dollars: you save 6 dollars."),
        ("How much is a 90-euro coat at 20% off?", "90 euros with 20 percent off is 72 euros: you save 18 euros."),
        ("What is twenty percent off fifty pounds?", "50 pounds with 20 percent off is 40 pounds: you save 10 pounds."),
        (
            "A 35 dollar shirt is on sale for 10 percent less. How much is it?",
            "35 dollars with 10 percent off is 31 dollars and 50 cents: you save 3 dollars and 50 cents.",
        ),
        # tips and tax
        ("What's an 18% tip on $50?", "An 18 percent tip on 50 dollars is 9 dollars, 59 dollars in all."),
        (
            "How much should I tip on a 62 dollar bill at 15 percent?",
            "A 15 percent tip on 62 dollars is 9 dollars and 30 cents, 71 dollars and 30 cents in all.",
        ),
        (
            "What is 120 euros plus 21% VAT?",
            "120 euros plus 21 percent tax is 145 euros and 20 cents; the tax is 25 euros and 20 cents.",
        ),
        # two prices of one currency, the pence said after it as people say prices
        ("what's sixty three pounds forty plus twenty eight pounds seventy",
         "63 pounds and 40 pence plus 28 pounds and 70 pence is 92 pounds and 10 pence."),
        ("add twelve dollars fifty and eight dollars twenty",
         "12 dollars and 50 cents plus 8 dollars and 20 cents is 20 dollars and 70 cents."),
        ("twelve euros fifty minus eight euros twenty",
         "12 euros and 50 cents minus 8 euros and 20 cents is 4 euros and 30 cents."),
        # rises and falls
        ("Increase 300 by 5 percent.", "300 plus 5 percent is 315."),
        ("What is 250 minus 12 percent?", "250 minus 12 percent is 220."),
        ("My rent of 1,000 dollars goes up 4 percent. What is it now?", "1000 dollars plus 4 percent is 1040 dollars."),
        # what percent
        ("What percent of 80 is 20?", "20 is 25 percent of 80."),
        ("What percentage is 9 of 12?", "9 is 75 percent of 12."),
        ("7 is what percent of 28?", "7 is 25 percent of 28."),
        ("What's 45 out of 60 as a percentage?", "45 is 75 percent of 60."),
        ("a student got thirty six out of forty what percentage is that", "36 is 90 percent of 40."),
        # a limit is no change: "no more than 10 percent of" is 10 percent of
        ("treats should be no more than ten percent of what she eats and she has 320 grams a day, how many grams",
         "10 percent of 320 is 32."),
        # splitting a bill
        ("Split 150 dollars between 4 people.", "150 dollars split 4 ways is 37 dollars and 50 cents each."),
        ("Split a 96 euro bill 3 ways.", "96 euros split 3 ways is 32 euros each."),
        ("Divide 60 bucks among five friends.", "60 dollars split 5 ways is 12 dollars each."),
        # The speaker with the friends: one more way.
        ("Me and three friends got pizza for 84 dollars, split it.", "84 dollars split 4 ways is 21 dollars each."),
        ("Three friends and I split a 60 dollar bill.", "60 dollars split 4 ways is 15 dollars each."),
        ("I went out with two friends, split 90 dollars.", "90 dollars split 3 ways is 30 dollars each."),
        ("Okay so the bill is $45, split between 3 people.", "45 dollars split 3 ways is 15 dollars each."),
        ("Split 2 pounds between 4 people.", "2 pounds split 4 ways is 50 pence each."),
        ("Split 5 dollars 4 ways.", "5 dollars split 4 ways is 1 dollar and 25 cents each."),
        ("Split £3.03 3 ways.", "3 pounds and 3 pence split 3 ways is 1 pound and 1 penny each."),
        # a percentage of an amount of money
        ("What is 15 percent of 40 dollars?", "15 percent of 40 dollars is 6 dollars."),
    ],
)  # fmt: skip
def test_a_sum_with_a_price_or_a_percentage_is_answered_exactly(question: str, reply: str) -> None:
    assert answer(clean(question)) == reply
    assert skills_answer(question, datetime(2026, 12, 4, 12)) == reply  # and through the skills


@pytest.mark.parametrize(
    "question",
    [
        "Turn the volume up to 50 percent.",  # no amount
        "Set the brightness to 40% in 5 minutes.",  # nothing to do with the two
        "What's 10 plus 20 percent of 50?",  # more numbers than one sum
        "How many pounds is 5 kilograms?",  # a conversion
        "Is the battery at 80 percent?",
        "Split the pizza.",
        "There is a 30 percent chance of rain.",
        "What is 25 percent of 25 percent?",  # two percentages
        "what is 5 dollars and 10 euros altogether",  # two currencies
        "what is 20 dollars and 30 dollars",  # "and" adds only after "add" or before "altogether"
    ],
)
def test_other_questions_with_numbers_are_left_alone(question: str) -> None:
    assert answer(clean(question)) is None


@pytest.mark.parametrize(
    ("first", "again", "reply"),
    [
        (
            "What's the dinner bill split 3 ways if it's 90 dollars?",  # the seventh held-out set
            "...and what if it's split 5 ways?",
            "90 dollars split 5 ways is 18 dollars each.",
        ),
        (
            "Split £3.03 3 ways.",
            "And between 2 people?",
            "3 pounds and 3 pence split 2 ways is 1 pound and 52 pence each.",
        ),
        (
            "Split 150 dollars between 4 people.",
            "What about 6 of us?",
            "150 dollars split 6 ways is 25 dollars each.",
        ),
        ("Split 120 4 ways.", "How about five ways instead?", "120 split 5 ways is 24 each."),
        ("Split 90 dollars 3 ways.", "And what if it split five ways?", "90 dollars split 5 ways is 18 dollars each."),
    ],
)
def test_a_split_bill_is_split_again_another_way(first: str, again: str, reply: str) -> None:
    said = skills_answer(first, datetime(2026, 12, 5, 9, 0))
    assert said is not None
    assert follow_up(again, said) == reply


@pytest.mark.parametrize(
    ("previous", "again"),
    [
        ("6 times 7 is 42.", "What if it's split 5 ways?"),  # no bill was split
        ("90 dollars split 3 ways is 30 dollars each.", "What about 20 percent?"),
        ("90 dollars split 3 ways is 30 dollars each.", "And 0 ways?"),
    ],
)
def test_only_a_split_bill_is_split_again(previous: str, again: str) -> None:
    assert follow_up(again, previous) is None


_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_TEENS = ["thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]


@pytest.mark.parametrize("word", _TENS + _TEENS)
def test_a_number_word_is_read_whole_not_as_the_shorter_word_it_starts_with(word: str) -> None:
    # "eighty" once matched as "eight": "an eighty dollar jacket" was priced at 8 dollars.
    n = parse_number(word)
    assert n is not None
    reply = answer(f"how much is a {word} dollar jacket with fifty percent off")
    assert reply is not None and reply.startswith(f"{say_number(n)} dollars with 50 percent off")
    split = answer(f"split a {word} dollar bill two ways")
    assert split is not None and split.startswith(f"{say_number(n)} dollars split 2 ways"), split
