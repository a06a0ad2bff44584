"""Unit conversion skill. The cases are phrased unlike the quality set's items (written after them), so that
the set does not grade a skill fitted to it."""

from __future__ import annotations

import pytest

from voice.skills.answer import clean
from voice.skills.units import UNCLEAR, convert, convert_previous, convert_said_before, convert_told

CASES = [
    ("How many feet are in a mile?", "There are 5280 feet in a mile."),
    ("how many ounces in a pound", "There are 16 ounces in a pound."),
    ("What is 5 pounds in kilograms?", "5 pounds is 2.268 kilograms."),
    ("Convert 10 miles to kilometers.", "10 miles is 16.0934 kilometres."),
    ("What is 3 feet in metres?", "3 feet is 0.9144 metres."),
    ("How many millilitres are in two litres?", "There are 2000 millilitres in 2 litres."),
    ("how many seconds are there in an hour", "There are 3600 seconds in an hour."),
    ("How many days is three weeks?", "There are 21 days in 3 weeks."),
    ("What's 98.6 degrees Fahrenheit in Celsius?", "98.6 degrees Fahrenheit is 37 degrees Celsius."),
    ("Convert 0 degrees Celsius to Fahrenheit.", "0 degrees Celsius is 32 degrees Fahrenheit."),
    ("What's minus 10 Celsius in Fahrenheit?", "-10 degrees Celsius is 14 degrees Fahrenheit."),  # no "degrees"
    ("was 50 degrees Fahrenheit in Celsius", "50 degrees Fahrenheit is 10 degrees Celsius."),  # Whisper's "what's"
    ("minus 5 degrees celsius in fahrenheit", "-5 degrees Celsius is 23 degrees Fahrenheit."),  # not a stray word
    ("It's 38.5 Celsius in Fahrenheit.", "38.5 degrees Celsius is 101.3 degrees Fahrenheit."),  # "what's" misheard
    ("How many hours are in the day?", "There are 24 hours in a day."),  # "the" is one, in this form only
    ("How many minutes are in every week?", "There are 10080 minutes in a week."),  # the LLM had said 80
    ("12 feet and meters", "12 feet is 3.6576 metres."),  # Whisper's "and" for "in"
    ("How many grams are in a mile?", "Miles measure length and grams measure mass: they don't convert."),
    # An amount said in two units, as people say heights and body weights (the thirty-seventh session).
    ("What's five foot ten in centimetres?", "5 feet 10 inches is 177.8 centimetres."),
    ("how many centimetres is five foot ten", "There are 177.8 centimetres in 5 feet 10 inches."),
    ("what's six feet two inches in metres", "6 feet 2 inches is 1.8796 metres."),
    ("convert eleven stone four to kilograms", "11 stone 4 pounds is 71.6676 kilograms."),
    ("what is 5 feet 20 in metres", None),  # 20 inches is more than a foot: no height
    ("how many seconds is three minutes forty seconds", "3 minutes 40 seconds is 220 seconds."),  # the 41st set
    ("how many minutes is two hours and thirty minutes", "2 hours 30 minutes is 150 minutes."),
    ("how many inches is five foot ten", "5 feet 10 inches is 70 inches."),
    # Fractions of a unit, said as people say them (2026-12-04).
    ("How many ounces are in half a pound?", "There are 8 ounces in half a pound."),
    ("how many minutes in an hour and a half", "There are 90 minutes in an hour and a half."),
    ("What is one and a half miles in feet?", "One and a half miles is 7920 feet."),
    ("How many seconds are in a quarter of an hour?", "There are 900 seconds in a quarter of an hour."),
    ("How many metres in 3/4 of a kilometre?", "There are 750 metres in 3/4 of a kilometre."),
    ("How many grams are in a third of a kilo?", "There are 333.3333 grams in a third of a kilo."),
    # Years and months have no fixed length: common years of 365 days, the leap year named (2026-12-04).
    ("How many days are in a year?", "There are 365 days in a year, or 366 in a leap year."),
    ("how many weeks make a year", "A year has 52 weeks and 1 day, or 52 weeks and 2 days in a leap year."),
    ("how many weeks in 2 years", "2 years have 104 weeks and 2 days, counting 365 days a year."),
    ("How many years is 1000 days?", "There are 2.7397 years in 1000 days, counting 365 days a year."),
    ("How many years are in a century?", "There are 100 years in a century."),
    ("How many months are in three years?", "There are 36 months in 3 years."),
    ("How many days are in a month?", "A month has 28 to 31 days."),
    ("How many hours are in a month?", None),  # no fixed number: the LLM answers
    ("How many hours are there in a leap year?", "There are 8784 hours in a leap year."),
    ("how many weeks in a leap year", "A leap year has 52 weeks and 2 days."),
    ("How many leap years are in a century?", None),  # a count, not a conversion
    # Kitchen measures (US) and speeds, units of more than one word among them (2026-12-04).
    ("How many teaspoons are in a tablespoon?", "There are 3 teaspoons in a tablespoon."),
    ("how many tbsp in half a cup", "There are 8 tablespoons in half a cup."),
    ("How many fluid ounces are in a pint?", "There are 16 fluid ounces in a pint."),
    ("Convert 3 quarts to litres.", "3 quarts is 2.8391 litres."),
    ("What is 50 miles per hour in km/h?", "50 miles per hour is 80.4672 kilometres per hour."),
    ("What's 30 kilometers an hour in mph?", "30 kilometres per hour is 18.6411 miles per hour."),
    ("How many cups of sugar are in a pound?", None),
    # Not conversions: left to the other skills or the LLM.
    ("How many people live in Paris?", None),
    ("What is the capital of France?", None),
    ("How many metres are in a metre?", None),
    ("What is the mile in feet?", None),
    ("How many miles are in a marathon?", None),  # a distance no unit names: the LLM's
    ("How many days are there in February?", None),
    # The unit to convert from not heard ("an hour" misheard): asked again, not guessed.
    ("How many seconds are there in another?", UNCLEAR),
    ("how many grams in one", UNCLEAR),
    ("How many cups make a", UNCLEAR),
    # The unit to convert to is no unit ("grams" misheard) in a conversion's form: asked again, not guessed.
    ("How many drums is 2.5 kilograms?", UNCLEAR),
    ("How many metris is six feet?", UNCLEAR),
    ("How many apples are in 2 kilograms?", None),  # a count, not a conversion's "is": the LLM's
    ("How many is 2.5 kilograms?", None),  # nothing asked for
]


@pytest.mark.parametrize(("question", "reply"), CASES)
def test_conversions(question: str, reply: str | None) -> None:
    assert convert(clean(question)) == reply


@pytest.mark.parametrize(
    ("previous_reply", "question", "reply"),
    [
        ("The Eiffel Tower is 330 metres tall.", "And how much is that in feet?", "330 metres is 1082.6772 feet."),
        ("It is about 4,000 km away.", "What's that in miles?", "4000 kilometres is 2485.4848 miles."),
        ("A baby weighs about 3.5 kilograms.", "Convert it to pounds.", "3.5 kilograms is 7.7162 pounds."),
        ("The oven is at 180°C.", "What is it in Fahrenheit?", "180 degrees Celsius is 356 degrees Fahrenheit."),
        ("It is 98.6 degrees Fahrenheit.", "And in Celsius?", "98.6 degrees Fahrenheit is 37 degrees Celsius."),
        ("The boiling point of water in Celsius is 100 degrees.", "What's that in Fahrenheit?",
         "100 degrees Celsius is 212 degrees Fahrenheit."),  # the scale named once, apart from the amount
        ("It is 100 degrees.", "What's that in Fahrenheit?", None),  # no scale
        ("In Celsius it is 100 degrees, in Fahrenheit 212.", "And in Celsius?", None),  # both scales named
        ("The limit is 70 mph.", "In km/h?", "70 miles per hour is 112.6541 kilometres per hour."),
        ("The film is 2 hours long.", "What's that in feet?", None),  # not the kind asked for
        ("The answer is 42.", "And in metres?", None),  # no unit
        ("It is 330 metres tall.", "What's that in French?", None),  # not a unit
        ("The Eiffel Tower is 330 metres tall.", "How many feet is that?", "330 metres is 1082.6772 feet."),
    ],
)  # fmt: skip
def test_the_previous_answers_amount_in_another_unit(previous_reply: str, question: str, reply: str | None) -> None:
    assert convert_previous(clean(question), previous_reply) == reply


@pytest.mark.parametrize(
    ("before", "question", "reply"),
    [
        ("I ran 5 kilometres this morning, which felt like forever,", "how many miles is that?",
         "5 kilometres is 3.1069 miles."),
        ("the recipe says two hundred fifty grams of sugar but my scale only does ounces so", "how many ounces is that",
         "250 grams is 8.8185 ounces."),
        ("my flight is three and a half hours and I'd like to know", "how many minutes would that be?",
         "Three and a half hours is 210 minutes."),
        ("I have to drive about 300 and 20 kilometers tomorrow.", "How far is that in miles?",  # Whisper's 320
         "320 kilometres is 198.8388 miles."),
        ("the sign says a hundred and twenty kilometers per hour", "what's that in miles per hour",
         "120 kilometres per hour is 74.5645 miles per hour."),
        ("the vet said she weighs about one point two kilograms", "how many pounds is that",  # not "two kilograms"
         "1.2 kilograms is 2.6455 pounds."),
        ("I walked one mile to the shop", "how many kilometres is that", "A mile is 1.6093 kilometres."),
        # A part of a unit (the fortieth set).
        ("the pattern says a seam allowance of five eighths of an inch", "how many millimetres is that",
         "Five eighths of an inch is 15.875 millimetres."),
        ("I drank half a litre", "how many millilitres is that", "Half a litre is 500 millilitres."),
        ("we walked three quarters of a mile and 2 laps", "how many metres is that", None),  # another number
        ("I'm five foot ten", "how tall is that in centimetres", "70 inches is 177.8 centimetres."),
        ("a song that's three minutes forty seconds long", "how many seconds is that",
         "3 minutes 40 seconds is 220 seconds."),
        # Two amounts of the kind asked for, or another number: which one, or what they come to, is a guess.
        ("it takes 250 grams of sugar and 100 grams of butter", "how many ounces is that", None),
        ("it takes 250 grams of sugar and 250 grams of butter", "how many ounces is that", None),
        ("the track is 400 metres and I ran 10 laps today.", "How many kilometres is that?", None),
        ("I drove 300 miles", "how many miles is that", None),  # the same unit: nothing to convert
        ("I drove for 3 hours", "how many miles is that", None),  # not the kind asked for
        # A temperature asked for: the one temperature said, with its scale.
        ("the oven is at 200 degrees Celsius", "what's that in Fahrenheit",
         "200 degrees Celsius is 392 degrees Fahrenheit."),
        ("the thermometer says minus five celsius so", "how much is that in fahrenheit",
         "-5 degrees Celsius is 23 degrees Fahrenheit."),
        ("it was 30 degrees celsius at 2 o'clock", "what's that in fahrenheit", None),  # another number
        ("it's 30 celsius inside and 20 celsius outside", "what's that in fahrenheit", None),  # which one?
        ("the oven is at 350 fahrenheit", "what's that in fahrenheit", None),  # the same scale
        ("the oven is at 200 degrees", "what's that in fahrenheit", None),  # no scale said: nothing to convert
        ("I ran 5 kilometres", "how many miles did I run", None),  # does not refer back
    ],
)  # fmt: skip
def test_an_amount_said_earlier_in_the_turn_that_the_question_refers_back_to(
    before: str, question: str, reply: str | None
) -> None:
    assert convert_said_before(clean(question), before) == reply


@pytest.mark.parametrize(
    ("earlier", "question", "reply"),
    [
        # A conversion asked of a thing by its name: the latest statement that names it, its one amount converted,
        # however many turns ago.
        (["The trail we're doing is 18 kilometers long.", "What time is it?"], "How many miles is the trail?",
         "18 kilometres is 11.1847 miles."),
        (["My suitcase weighs 23 kilos."], "What's my suitcase in pounds?", "23 kilograms is 50.7063 pounds."),
        (["The trail is 10 km.", "The trail is 18 km, they changed it."], "How many miles is the trail again?",
         "18 kilometres is 11.1847 miles."),
        # Not: a thing no statement names, a statement with another number, a question, an amount of another kind.
        (["The bridge is 300 metres long."], "How many feet is the tower?", None),
        (["The trail is 18 km long and we walk 3 of them today."], "How many miles is the trail?", None),
        (["How long is the trail in km?"], "How many miles is the trail?", None),
        (["The trail takes 3 hours."], "How many miles is the trail?", None),
        (["I ran 5 kilometres."], "How many miles is that?", None),  # "that": the previous turn's (follow_up)
    ],
)  # fmt: skip
def test_a_conversion_of_a_thing_the_user_told_an_amount_of(
    earlier: list[str], question: str, reply: str | None
) -> None:
    assert convert_told(clean(question), earlier) == reply
