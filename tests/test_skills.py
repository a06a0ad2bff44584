import threading
from datetime import datetime

import pytest

from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage, PromptInfo, TextDelta
from voice.skills.answer import answer, follow_up, parse_number
from voice.skills.numbers import parse_amount, parse_fraction

NOW = datetime(2026, 12, 3, 16, 5)


@pytest.mark.parametrize(
    ("text", "value"),
    [("42", 42), ("4,200", 4200), ("2.5", 2.5), ("seven", 7), ("twenty-five", 25),
     ("two hundred and five", 205), ("a thousand", 1000), ("three thousand four hundred", 3400),
     ("banana", None), ("and", None), ("20 5", 25), ("two hundred fifty five", 255),
     # Parts that don't fill empty places are two numbers or digits said one by one, not a sum (it was 18).
     ("3 8 7", None), ("three eight seven", None), ("twenty thirty", None), ("ten five", None),
     ("minus 10", -10), ("negative two hundred", -200), ("minus", None), ("minus banana", None),
     # Decimals said with "point", the digits after it one by one.
     ("twenty six point two", 26.2), ("three point one four", 3.14), ("point five", 0.5), ("nine point oh five", 9.05),
     ("minus two point five", -2.5), ("one point twenty", None), ("twenty six point", None), ("point", None),
     # A scale word with nothing before it: its first word was lost ("six hundred" heard as "hundred").
     ("hundred", None), ("thousand and five", None), ("the hundred", None), ("a hundred and twenty", 120),
     ("one hundred", 100), ("two thousand and hundred", 2100),
     # A comma that no three digits follow is a list, not a thousands separator; one at the end is punctuation.
     ("1,000, 100 and 75", None), ("45,", 45), ("1,000,000", 1000000)],
)  # fmt: skip
def test_parse_number(text: str, value: float | None) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize(
    ("text", "fraction", "amount"),
    [("half", 0.5, 0.5), ("a quarter", 0.25, 0.25), ("three quarters", 0.75, 0.75), ("2/5", 0.4, 0.4),
     ("seven", None, 7), ("half a", None, 0.5), ("a third of an", None, 1 / 3), ("one and a half", None, 1.5),
     ("2 and three quarters", None, 2.75), ("two quarter", None, None), ("1/0", None, None),
     ("five and six fifths", None, None), ("banana", None, None), ("2 3rds", 2 / 3, 2 / 3), ("a 4th", 0.25, 0.25)],
)  # fmt: skip
def test_parse_fraction_and_amount(text: str, fraction: float | None, amount: float | None) -> None:
    assert parse_fraction(text) == fraction
    assert parse_amount(text) == amount


@pytest.mark.parametrize(
    ("transcript", "reply"),
    [
        ("What time is it?", "It's 16:05."),
        ("What's the date today?", "Today is Thursday, 3 December 2026."),
        ("Which day is it today?", "Today is Thursday."),
        ("What is seven times thirty?", "7 times 30 is 210."),
        ("7 times after 30", "7 times 30 is 210."),  # a misrecognition: filler words are skipped
        ("What is 100 minus 37?", "100 minus 37 is 63."),
        ("what is sixty plus 1", "60 plus 1 is 61."),  # the x in "sixty" is not an operator
        ("What is 10 divided by 4?", "10 divided by 4 is 2.5."),
        ("What is 10 percent of 250?", "10 percent of 250 is 25."),
        ("What is 10% of 250?", "10 percent of 250 is 25."),  # as Whisper writes it
        # "a hundred and twenty" as Whisper writes it is one number; two said to be added, or a range, are two
        ("split 100 and 26 dollars between 4 people.", "126 dollars split 4 ways is 31 dollars and 50 cents each."),
        ("What do you get if you add 200 and 50?", "200 plus 50 is 250."),
        ("a bill of 100 and 32 pounds split between 4 of us", "132 pounds split 4 ways is 33 pounds each."),
        ("What is the square root 144?", "The square root of 144 is 12."),  # Whisper dropped the "of"
        ("What is the square root of 144?", "The square root of 144 is 12."),
        ("how much is half a dozen times a dozen", "Half a dozen times 12 is 72."),  # the LLM had said 12 (40th set)
        ("What is the square root of all evil?", None),
        ("What's two thirds of 30?", "Two thirds of 30 is 20."),
        ("what is a quarter of eighty", "A quarter of 80 is 20."),
        ("What is 3/4 of 100?", "3/4 of 100 is 75."),
        ("What is 2 3rds of 90", "2 thirds of 90 is 60."),  # as Whisper wrote "two thirds", said back in words
        ("What is a third of the way?", None),
        ("What is 9 squared?", "9 squared is 81."),
        ("what's 2 to the power of 8", "2 to the power of 8 is 256."),
        ("What is 10 to the power of 100?", None),  # too long to say: the LLM answers
        ("What is minus 8 to the power of 0.5?", None),
        ("What is the tallest mountain in France?", None),
        ("Turn on the lamp.", None),
        ("What is a plus b?", None),
        ("How much is 1000 minus 3 8 7", None),  # not "1000 minus 18 is 982.": an exact answer must be right
        ("Please divide 100 by 8.", "100 divided by 8 is 12.5."),
        ("multiply nine by eleven", "9 times 11 is 99."),
        ("Add 19 and 23.", "19 plus 23 is 42."),
        ("take 15 away from 40", "40 minus 15 is 25."),
        ("What 8 times 9?", "8 times 9 is 72."),  # Whisper dropped the "is" (or the "'s")
        ("What's three quarters plus a half?", "Three quarters plus a half is 1.25."),
        ("What is the square root on 49?", "The square root of 49 is 7."),  # Whisper's "on" for "of"
        ("Add 8 to that.", None),  # arithmetic on the previous answer: follow_up
        ("What do you get if you divide 156 by 12?", "156 divided by 12 is 13."),
        ("What do we get when we multiply 6 by 7?", "6 times 7 is 42."),
        ("What do you get if you mix red and blue?", None),
        ("Hey, convert 70 kilograms to pounds for me.", "70 kilograms is 154.3236 pounds."),
        ("What's 6 times 7, please?", "6 times 7 is 42."),
        ("What is minus 5 plus 3?", "-5 plus 3 is -2."),
        ("Convert this for me.", None),
        ("Can you convert 100 degrees Fahrenheit to Celsius?", "100 degrees Fahrenheit is 37.8 degrees Celsius."),
        ("Could you multiply 6 by 7?", "6 times 7 is 42."),
        ("Can you hear me?", None),
    ],
)
def test_answers(transcript: str, reply: str | None) -> None:
    assert answer(transcript, NOW) == reply


def test_wrapper_answers_matches_and_delegates_the_rest() -> None:
    llm = SkillsLlm(FakeLlm(replies=("From the model.",)), clock=lambda: NOW)
    sys = ChatMessage("system", "S")
    events = list(llm.generate([sys, ChatMessage("user", "what is 6 times 7")], max_tokens=9,
                               cancel=threading.Event()))  # fmt: skip
    assert events == [PromptInfo(0, 0, 0), TextDelta("6 times 7 is 42.")]
    events = list(llm.generate([sys, ChatMessage("user", "Tell me a story.")], max_tokens=9,
                               cancel=threading.Event()))  # fmt: skip
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "From the model." in text and llm.answered == 1


@pytest.mark.parametrize(
    ("transcript", "location", "reply"),
    [
        ("Where am I right now?", "", "I don't know where you are: I have no location service, "
         "and no location is set."),
        ("What city am I in?", "Porto", "You're in Porto."),
        ("Where am I going wrong with this recipe?", "Porto", None),  # not a location question
        ("Thank you very much.", "", "You're welcome."),
        ("That's all, thanks.", "", "Goodbye."),
        # A question after the thanks is the question, not a goodbye: its last part is answered.
        ("Thanks, and what is the capital of Peru?", "", "The capital of Peru is Lima."),
    ],
)
def test_location_and_courtesy(transcript: str, location: str, reply: str | None) -> None:
    assert answer(transcript, NOW, location) == reply


@pytest.mark.parametrize(
    ("transcript", "reply"),
    [
        # The question comes after what led to it: its last sentence or clause is answered whole.
        ("I always forget this. How many days are there in a leap year?", "There are 366 days in a leap year."),
        ("So I'm cooking, and the recipe says 200 grams, so how many ounces is 200 grams?",
         "There are 7.0548 ounces in 200 grams."),
        ("My friend lives in Spain, what's the capital of France?", "The capital of France is Paris."),
        ("We're driving to the coast. Convert 10 miles to kilometres.", "10 miles is 16.0934 kilometres."),
        # No part that a skill takes whole: the words before matter, or no question is left.
        ("How many ounces is 200 grams, no wait, 300?", None),
        ("It was 60 dollars. How much is the tip?", None),
        # A part that drops a number said before it is not taken: the question may be about that number.
        ("So the bill came to sixty dollars, and I want to leave fifteen, no, twenty percent tip, how much is it?",
         None),
        ("Okay, the bill came to $60 and I want to leave like 15, no, 20% tip. How much is the tip?", None),
        ("I have one question, what's the capital of Peru?", "The capital of Peru is Lima."),
        # A question said at the end of a ramble, with no comma before it: a part begins at its question word.
        ("I was reading the news last night and started wondering what's the capital of Kenya",
         "The capital of Kenya is Nairobi."),
        ("we were baking and could not agree how many grams are in a pound", "There are 453.5924 grams in a pound."),
        ("sorry to bother you but how many days are there in a leap year", "There are 366 days in a leap year."),
        # …unless the part refers back to the one amount said before it, in a unit of the kind it asks for.
        ("I ran 5 kilometers this morning and now I wonder how many miles is that", "5 kilometres is 3.1069 miles."),
        ("So the doctor told me I weigh 80 kilos, how much is that in pounds?", "80 kilograms is 176.3698 pounds."),
        ("The track is 400 meters and I ran 10 laps. How many kilometers is that?", None),  # 400 m, or 4 km?
        # A question said in the middle, up to the speaker's own next clause or sentence.
        ("okay this is random but what's the chemical symbol for lead I always forget it",
         "The chemical symbol for lead is Pb, spelled P B."),
        ("So what's the capital of Morocco? It's not Casablanca, right?", "The capital of Morocco is Rabat."),
        ("we have a quiz tonight, what's the capital of Australia because I always get it wrong",
         "The capital of Australia is Canberra."),
        # …or of someone they speak of, with the conjunction that led into it left off.
        ("anyway what's the capital of Portugal my grandson asked me and I couldn't remember",
         "The capital of Portugal is Lisbon."),
        ("what's the atomic number of calcium and then I can go and eat", "The atomic number of calcium is 20."),
        ("what's the capital of France my friend says it's Lyon", "The capital of France is Paris."),
        # A hesitation inside a question says nothing; a request for a sum opens a part as a question word does.
        ("what's the atomic number of um nitrogen", "The atomic number of nitrogen is 7."),
        ("okay so i need to convert um eight kilometers into miles", "8 kilometres is 4.971 miles."),
        ("the code is four oh five", None),  # "oh" is a number here, not a hesitation
        # …or a remark on the question.
        ("What's the atomic number of carbon it's for my homework.", "The atomic number of carbon is 6."),
        ("what's the chemical symbol for tin it is for a quiz", "The chemical symbol for tin is Sn, spelled S N."),
        # "that's" may be the question's own ("the planet that's closest to the sun"): a part does not end there.
        ("Oh gosh, what's the planet that's closest to the sun? I always mix it up with Venus",
         "Mercury is the closest planet to the sun, on average 58 million kilometres (36 million miles) away."),
        # A question in the middle may refer back to the one amount said before it, as a last part may.
        ("the row is three metres long how many centimetres is that I need it for the spacing",
         "3 metres is 300 centimetres."),
        ("the row is 3 metres long and 2 wide how many centimetres is that I need it", None),  # which one?
        # Words after a question that ask nothing more.
        ("I'm packing for Madrid, what currency do they use in Spain again?", "The currency of Spain is the Euro."),
        ("the poles are 240 centimetres long how many feet is that roughly", "240 centimetres is 7.874 feet."),
        ("how many centimetres is eight inches just roughly", "There are 20.32 centimetres in 8 inches."),
        # A middle part ends where "it" opens the speaker's remark.
        ("the thermometer says thirty degrees celsius what's that in fahrenheit it feels way hotter than that",
         "30 degrees Celsius is 86 degrees Fahrenheit."),
        # A part that says no number, asked of the skills that answer of a thing named, may drop a number said
        # around it; one that needs the number is not answered.
        ("So I'm on the 715 again, which is rude, anyway what's the capital of Norway?",
         "The capital of Norway is Oslo."),
        ("I've got 3 kids and what's the symbol for gold they asked",
         "The chemical symbol for gold is Au, spelled A U."),
        ("The 4th planet from the sun, which planet is it?", None),
        ("I've been up since 5 and the milk was late, anyway how many grams are in a pound?",
         "There are 453.5924 grams in a pound."),
        ("I've been up since 5, how many miles is that?", None),  # refers to an amount: not a unit's conversion
        # …not one taken back after it, one ending on a word that needs more, nor one that drops a number.
        ("What's the capital of Austria? No, sorry, it's Switzerland.", None),
        ("What time do I take my pill?", None),
        ("How many ounces in a pound? I need 3 of them.", None),
        # A conversion that says its own amount needs no number said around it (the forty-first set).
        ("I'm hauling a piano up three flights of stairs anyway how many pounds is a hundred and fifty kilos",
         "There are 330.6934 pounds in 150 kilograms."),
        ("I reffed three games how many kilometres is six miles I want to log it",
         "There are 9.6561 kilometres in 6 miles."),
        ("I reffed three games and ran 6 miles how many kilometres is that", None),  # "that": which amount?
        ("My sister is 7, and I'm 3 years older, so how old am I?", None),
        ("I have three apples, so what's that times two?", None),
        ("Tell me a story, please.", None),
        # British spelling of the gram.
        ("How many pounds is 5 kilogrammes?", "There are 11.0231 pounds in 5 kilograms."),
        ("What's 500 grammes in ounces?", "500 grams is 17.637 ounces."),
    ],
)  # fmt: skip
def test_a_question_said_after_its_context(transcript: str, reply: str | None) -> None:
    assert answer(transcript, NOW) == reply


def test_the_wrapper_knows_the_configured_location() -> None:
    llm = SkillsLlm(FakeLlm(replies=("From the model.",)), clock=lambda: NOW, location="Porto")
    events = list(llm.generate([ChatMessage("user", "Where am I?")], max_tokens=8, cancel=threading.Event()))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["You're in Porto."]


@pytest.mark.parametrize(
    ("transcript", "previous", "reply"),
    [
        ("Now double that.", "20 plus 5 is 25.", "25 doubled is 50."),
        ("And if you double that?", "12 times 12 is 144.", "144 doubled is 288."),
        ("And what about double that?", "12 times 12 is 144.", "144 doubled is 288."),
        ("Double that.", "There are 16.0934 kilometres in 10 miles.", "16.0934 doubled is 32.1868."),  # the result
        ("What if I add 6 to it?", "12 times 12 is 144.", "144 plus 6 is 150."),
        ("So, halve that.", "10 plus 10 is 20.", "20 halved is 10."),
        ("Divide it by four.", "10 plus 10 is 20.", "20 divided by 4 is 5."),
        ("No, divide that by 5.", "25 times 4 is 100.", "100 divided by 5 is 20."),
        ("No divide that by 5", "25 times 4 is 100.", "100 divided by 5 is 20."),  # Whisper's "now" (flite)
        ("No, that's wrong.", "25 times 4 is 100.", None),
        ("Take 5 from that.", "There are 60 seconds in a minute.", "60 minus 5 is 55."),
        ("What is that times 3?", "It is 12.", "12 times 3 is 36."),
        ("Divide that by zero.", "It is 12.", "Dividing by zero has no answer."),
        ("Double that.", "Paris is the capital of France.", None),  # no number to work on
        ("Double that.", "It's 12:30.", None),  # a clock time is not a result
        ("Double the recipe.", "It is 12.", None),
        ("Okay, and can you divide that by 8?", "25 times 4 is 100.", "100 divided by 8 is 12.5."),
        ("Could you please double it?", "It is 12.", "12 doubled is 24."),
        ("Can you tell me that again?", "It is 12.", None),
        ("Now take away 30.", "100 plus 50 is 150.", "150 minus 30 is 120."),  # the eighth held-out set
        ("Add 5.", "100 plus 50 is 150.", "150 plus 5 is 155."),
        ("Then divide by 3.", "100 plus 50 is 150.", "150 divided by 3 is 50."),
        ("Add milk to my list.", "100 plus 50 is 150.", None),
        ("Take 5.", "100 plus 50 is 150.", None),  # a rest, not a sum
    ],
)
def test_follow_up_arithmetic_on_the_previous_answer(transcript: str, previous: str, reply: str | None) -> None:
    assert follow_up(transcript, previous) == reply


@pytest.mark.parametrize(
    ("said", "transcript", "reply"),
    [
        # A sum of money asked of "that" or "it": the one amount of money the user said in their previous turn.
        ("The electric bill came in at 180 pounds.", "Split that three ways for me.",
         "180 pounds split 3 ways is 60 pounds each."),
        ("The meal was 64 dollars.", "What's a 15 percent tip on that?",
         "A 15 percent tip on 64 dollars is 9 dollars and 60 cents, 73 dollars and 60 cents in all."),
        ("I have 2 kids and the meal was 64 dollars.", "Split that three ways.", None),  # another number
        ("I ran 64 miles.", "Split that three ways.", None),  # not money
        ("The meal was 64 dollars.", "Is it expensive?", None),  # no sum asked
    ],
)  # fmt: skip
def test_a_sum_asked_of_the_money_the_user_just_said(said: str, transcript: str, reply: str | None) -> None:
    assert follow_up(transcript, "OK.", said) == reply


def test_the_wrapper_follows_up_on_its_own_previous_answer() -> None:
    llm = SkillsLlm(FakeLlm(replies=("From the model.",)), clock=lambda: NOW)
    messages = [ChatMessage("user", "What is 6 times 7?"), ChatMessage("assistant", "6 times 7 is 42."),
                ChatMessage("user", "Add 8 to that.")]  # fmt: skip
    events = list(llm.generate(messages, max_tokens=8, cancel=threading.Event()))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["42 plus 8 is 50."]


def test_the_wrapper_converts_the_previous_answers_amount_even_after_writing_the_follow_up_out() -> None:
    """"And in feet?" is also an elliptical follow-up ("How tall is the Shard in feet?", which no skill answers):
    the conversion of the answer given is the exact reply."""
    llm = SkillsLlm(FakeLlm(replies=("From the model.",)), clock=lambda: NOW)
    messages = [ChatMessage("user", "How tall is the Shard in metres?"), ChatMessage("assistant", "It is 310 m tall."),
                ChatMessage("user", "And in feet?")]  # fmt: skip
    events = list(llm.generate(messages, max_tokens=8, cancel=threading.Event()))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["310 metres is 1017.0604 feet."]


@pytest.mark.parametrize(
    ("said", "reply_to_it", "question", "reply"),
    [
        ("I ran six kilometres today.", "Well done!", "How many miles is that?", "6 kilometres is 3.7282 miles."),
        # The amount in the answer comes first; no amount of the kind asked for: the LLM's.
        ("I ran six kilometres.", "That is 6 km.", "And in metres?", "6 kilometres is 6000 metres."),
        ("I ran for an hour.", "Well done!", "How many miles is that?", "From the model."),
        ("I ran 5 kilometres and then 3 more.", "Well done!", "How many miles is that?", "From the model."),
    ],
)  # fmt: skip
def test_the_wrapper_converts_the_amount_the_user_said_in_their_previous_turn(
    said: str, reply_to_it: str, question: str, reply: str
) -> None:
    llm = SkillsLlm(FakeLlm(replies=("From the model.",)), clock=lambda: NOW)
    messages = [ChatMessage("user", said), ChatMessage("assistant", reply_to_it), ChatMessage("user", question)]
    events = list(llm.generate(messages, max_tokens=8, cancel=threading.Event()))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == reply
