"""Word problems over the amounts the user said (:mod:`voice.skills.word_problems`): tables of turns it must read,
with the number the reply must give, and near-misses it must leave to the other skills and the LLM."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from tests.skills_chat import converse, reply_to
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage
from voice.skills import word_problems
from voice.skills.answer import clean

#: (turn, the amount the reply must end with)
IN_ONE_TURN = (
    ("I've done 42 drops out of 110, how many have I got left?", "68 drops"),
    ("we've walked six miles and the whole loop is fourteen miles how many miles are left", "8 miles"),
    ("I've read a hundred and twenty of the three hundred pages, how many are left?", "180 pages"),
    ("a coffee is three pounds twenty and I'm buying four of them, how much is that?", "12 pounds and 80 pence"),
    ("the parts were 320 dollars and the labour two hours at 95 an hour, what's the total?", "510 dollars"),
    ("four shifts at eleven and a half hours each, how many hours altogether", "46 hours"),
    ("how many hours is three shifts of twelve and a half hours", "37.5 hours"),
    ("The room is 110 euros a night and we're staying 8 nights. How much is that?", "880 euros"),
    ("£4 for the bus and £12.50 for lunch, how much is that in total?", "16 pounds and 50 pence"),
    ("so I've got 250 grams and the recipe wants 400 grams, how many grams to go", "150 grams"),
    ("I've got 250 grams and the recipe wants 400 grams, how much more do I need?", "150 grams"),
    ("I sold 68 cookies at 75 cents each, how much money did I make?", "51 dollars"),
    ("I bought three bags of compost at four pounds seventy five each what did I spend", "14 pounds and 25 pence"),
    ("steep it for four minutes, I've done two and a half, how many more seconds", "90 seconds in 1.5 minutes"),
    ("drink 500 millilitres an hour for four hours, how many litres is that in total", "2 litres in 2000 millilitres"),
    ("the set is 14 songs at about 4 minutes each, how long is that in total", "56 minutes"),
    ("we've done about 210 miles and there's 90 left, how long is the whole trip", "300 miles"),
    ("28 tables with 8 places at each, how many place settings is that altogether", "224 places"),
    ("how many eggs is four dozen", "48 eggs"),
    ("I bought two dozen eggs, how many eggs do I have?", "24 eggs"),
    ("how many eggs are in a dozen", "12 eggs"),
    ("I bought those two shirts at 20 dollars each, how much is that in total", "40 dollars"),
    ("we've an order for 12 dozen cupcakes, how many cupcakes is that", "144 cupcakes"),
)

#: turns it must not read: no word says what to do, units that differ, three amounts for a "left", times and timers
LEAVES = (
    "How many legs does a spider have?",
    "What is 17 times 3?",
    "I have 3 cats and 2 dogs, how many legs is that in total?",  # cats and dogs: no one unit
    "How many days are left until Christmas?",
    "I had 50 dollars, spent 20 and then 10, how much is left?",  # three amounts
    "How much is 5 dollars and 10 euros altogether?",  # two currencies
    "The pasta needs 12 minutes and I put it on at 6 o'clock, how long is left?",  # the clock's
    "How long is left on my 10 minute timer?",
    "it was thirty degrees at two o clock what is that in fahrenheit",  # a time of day, as Whisper may write it
    "How long does it take to drive 100 miles at 50 miles an hour?",  # a rate with no count of its unit
    "I've got 40 dollars, how much is that?",  # one plain amount: nothing to do
    "How many is a dozen?",  # nothing to count
    "I have 24 eggs, how many dozen is that?",  # asked in dozens: the other way
    # an amount in dozens said before a question of its own (the forty-second set, spoken: "2 dozen is 24 wives.")
    "I'm writing this essay on the two dozen I keep blanking on that how many wives did Henry VIII have",
    "I baked 48 cookies and put 6 in each bag, how many bags do I need?",  # the groups: a division, not 48 x 6
    "3 apples and 4 apples, how many?",  # no word to add them
    "It came to 48 pounds 60 between three no-four of us. How much each?",  # a repair, as Whisper writes it
    # the word that adds is not in the question: "add up" tells, and the question asks for a division
    "each can covers 40 square metres and the walls add up to 120 square metres, how many cans do we need?",
)


@pytest.mark.parametrize(("turn", "amount"), IN_ONE_TURN)
def test_amounts_said_in_one_turn_are_read(turn: str, amount: str) -> None:
    reply = word_problems.answer(clean(turn))
    assert reply is not None and reply.endswith(f" {amount}."), reply


@pytest.mark.parametrize("turn", LEAVES)
def test_near_misses_are_left_to_the_others(turn: str) -> None:
    assert word_problems.answer(clean(turn)) is None


#: (the user's earlier turns, the question, the amount the reply must end with, or None: not read)
TOLD = (
    (["I've got forty two dollars."], "If I spend seventeen on lunch, how much will I have left?", "25 dollars"),
    (["I have 120 sheep.", "What's the capital of France?"], "If I sell thirty, how many will I have?", "90 sheep"),
    (["I've got twelve deliveries left."], "So if I do three more, how many will I have left?", "9 deliveries"),
    (["We have 18 chairs."], "If we buy 6 more, how many will we have?", "24 chairs"),
    (["I owe Tom 15 pounds.", "And I owe Sarah 20 pounds."], "How much do I owe in total?", "35 pounds"),
    (["I spent 45 dollars on fuel and 8 dollars 50 on food."], "How much is that in all?", "53 dollars and 50 cents"),
    (["My car does forty miles per gallon."], "So how far can I get on ten gallons?", "400 miles"),
    (["My suitcase weighs 19 kilos."], "How many more kilos can I add before I hit 23?", "4 kilos"),
    (["I've saved 300 dollars."], "How much more do I need to get to 1,000?", "700 dollars"),
    # a total of told amounts, about the user or not, each saying what it counts; what is left after one used up
    (["My first fare today was 18 dollars.", "The second one was 27 dollars."], "What do those two fares add up to?",
     "45 dollars"),
    (["My bike weighs eight point two kilos.", "And the bottles add another one point five kilos."],
     "So what's the total weight?", "9.7 kilos"),
    (["My budget for the week is 300 euros.", "I've spent 140 so far."], "How much have I got left?", "160 euros"),
    # "N more" with no noun counts what the amount before it counts
    (["I've done three drops this morning.", "And I've got fourteen more this afternoon."],
     "So how many drops is that altogether today?", "17 drops"),
    (["I spent 20 dollars.", "And I spent 15 more."], "How much is that in total?", "35 dollars"),
    # a statement may open with what the amount is of ("lunch was", the forty-third set)
    (["lunch was fourteen pounds twenty", "the taxi was twenty two pounds", "and parking was six pounds fifty"],
     "what do those add up to", "42 pounds and 70 pence"),
    (["what was 20 pounds plus 30 pounds", "the taxi was 22 pounds"], "what do those add up to", None),  # a question
    # a told amount that does not read: the total would miss it
    (["lunch was fourteen pounds twenty", "the taxi was twenty two pounds", "and parking was six fifty"],
     "what do those add up to", None),
    # more of what the statement told done, not taken from it; from what the user holds, taken
    (["I've done twelve push-ups."], "If I do another eight, how many is that?", "20 push-ups"),
    (["I've delivered 30 parcels."], "If I deliver 12 more, how many will that be?", "42 parcels"),
    (["I've got 12 boxes."], "If I send another 5, how many will I have left?", "7 boxes"),
    (["I've got 12 boxes."], "If I send 5, how many will I have?", "7 boxes"),
    (["I've got 12 t-shirts."], "If I sell 5, how many will I have?", "7 t-shirts"),
    # not read
    (["I'm 42.", "I spent 17 dollars."], "How much is that altogether?", None),  # 42 of nothing said
    (["I'm 42.", "And 3 more."], "How much is that altogether?", None),  # more of nothing said
    (["My budget is 300 euros.", "I've spent 340."], "How much have I got left?", None),  # more than there is
    (["Convert 5 miles to kilometres.", "I ran 3 miles."], "How far is that in total?", None),  # a request
    (["My first fare was 18 dollars.", "The second one was 27 dollars."], "What do those two fares add up two?",
     None),  # a number in a question of the amounts told ("to" misheard): not an amount to build on
    (["My bike weighs point 2 kilos.", "The bottles add 1.5 kilos."], "What's the total weight?", None),  # misheard
    (["Set a timer for 20 minutes."], "If I spend 5, how much is left?", None),  # a request, not a told amount
    (["What's 40 plus 2?"], "If I spend 17, how much will I have left?", None),  # a question
    (["I've got 42 dollars."], "If I spend 17 euros, how much will I have left?", None),  # another currency
    (["I've got 10 dollars."], "If I spend 17, how much will I have left?", None),  # more than there is
    (["I've got 42 dollars."], "How much is the capital of France?", None),  # no amount, no total word
    (["I have 3 cats.", "I have 2 dogs."], "How many do I have in total?", None),  # two nouns
    (["I've got 42 dollars."], "If I think about 17, how much will I have?", None),  # no verb of taking or getting
    (["My suitcase weighs 19 kilos."], "How many more kilos can I add before I hit 15?", None),  # already over
    (["I'm 42."], "If I spend 17 dollars, how much will I have left?", None),  # an age: 42 of nothing said
)


@pytest.mark.parametrize(("earlier", "question", "amount"), TOLD)
def test_amounts_told_earlier_are_built_on(earlier: list[str], question: str, amount: str | None) -> None:
    reply = word_problems.follow_up(clean(question), earlier)
    if amount is None:
        assert reply is None
    else:
        assert reply is not None and reply.endswith(f" {amount}."), reply


def test_the_reply_says_the_sum_it_did() -> None:
    reply = word_problems.follow_up(clean("If I spend 17, how much will I have left?"), ["I've got 42 dollars."])
    assert reply == "42 dollars minus 17 dollars leaves 25 dollars."
    reply = word_problems.answer(clean("The room is 110 euros a night and we're staying 8 nights, how much is that?"))
    assert reply is not None and re.match(r"8 nights at 110 euros a night comes to", reply)


def test_the_wrapper_builds_on_a_told_amount_before_the_notes_say_it_back() -> None:
    """Through the LLM wrapper: the told amounts are summed before the notes, which would say "You told me you owe Tom
    15 pounds"; with two amounts told, which one a change starts from is not in the words, so the LLM answers."""
    llm = SkillsLlm(FakeLlm(replies=("From the model.",)), clock=lambda: datetime(2026, 12, 7, 12))
    said = [
        "I owe Tom 15 pounds.",
        "What's the capital of Peru?",
        "And I owe Sarah 20 pounds.",
        "How much do I owe in total?",
    ]
    messages, replies = converse(llm, said)
    assert replies[-1] == "15 pounds plus 20 pounds comes to 35 pounds."
    messages[-2:] = [ChatMessage("user", "If I pay Tom 10, no wait, 12, how much will I still owe him?")]
    assert reply_to(llm, messages) == "From the model."  # two amounts told
