"""A turn that corrects itself is read as meant, by the skills, the timers and the model alike, and only a real
self-correction is (voice.conversation.self_repair)."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.conftest import make_config
from tests.skills_chat import converse, reply_to
from voice.conversation.prompt_view import PromptView
from voice.conversation.self_repair import as_meant, repair, repair_messages, repair_turns
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.runtime.model_api import ChatMessage
from voice.skills.timers import TimerBook, handle
from voice.turn import ask_again


@pytest.mark.parametrize(
    ("said", "meant"),
    [
        # a bare number replaces the last number said; its unit stays
        ("What's the square root of 144? No, wait, I mean 169.", "What's the square root of 169?"),
        ("what's the square root of 144 no wait I mean 169", "what's the square root of 169"),
        ("Set a timer for three minutes, no, make it four.", "Set a timer for four minutes"),
        ("set a timer for three minutes no make it four", "set a timer for four minutes"),
        ("Split 90 dollars between three, sorry, four people.", "Split 90 dollars between four people"),
        # …and so does "it's" and a number ("it" is what is repaired)
        ("my bay at the depot is number twelve no wait it's fourteen", "my bay at the depot is number fourteen"),
        ("The code is 1234, no sorry, it's 4321.", "The code is 4321"),
        # a repair restarts where the words repeat (a number standing for any number)
        ("What's a 20 percent, sorry, 15 percent tip on $80?", "What's a 15 percent tip on $80?"),
        ("What's 15 times 4? No, 15 times 5.", "What's 15 times 5?"),
        ("Convert 5 miles to kilometers. No, 5 kilometers to miles.", "Convert 5 kilometers to miles"),
        ("How many minutes are in 2 hours, no, in 3 hours?", "How many minutes are in 3 hours?"),
        ("What's the boiling point of water, no, of milk?", "What's the boiling point of milk?"),
        ("What is 250 divided by five, I meant divided by ten", "What is 250 divided by ten"),
        ("Set a timer for 3 minutes for the eggs. Actually, make it 4 minutes.",
         "Set a timer for 4 minutes for the eggs"),
        # …and when it replaces a stretch word for word, what was said after that stretch stays
        ("what's 15 percent of 80, no, 20 percent", "what's 20 percent of 80"),
        ("what's ten percent of three hundred and twenty no sorry twelve percent",
         "what's twelve percent of three hundred and twenty"),
        ("Convert 5 miles to km, no, 6 miles.", "Convert 6 miles to km"),
        ("What is 20 percent of 150, no, 30 percent of it?", "What is 30 percent of it?"),  # not word for word
        # the same words again correct nothing there (Whisper wrote the turn twice)
        ("What's the capital of Uganda Wait No I mean Kenya? What's the capital of Uganda Wait No I mean Kenya",
         "What's the capital of Kenya?"),
        ("The coat was a hundred and twenty dollars and it's thirty percent off, no wait, twenty five percent off.",
         "The coat was a hundred and twenty dollars and it's twenty five percent off"),
        # the words after the repair go on the corrected sentence
        ("There were four of us, no wait, five, and the bill came to 125 dollars. How much does each person pay?",
         "There were five of us, and the bill came to 125 dollars. How much does each person pay?"),
        # a whole request of its own replaces the turn
        ("What's 5 plus 5? Sorry, what's 5 plus 6?", "what's 5 plus 6?"),
        ("Remind me, no wait, set a timer for ten minutes.", "set a timer for ten minutes"),
        # a short phrase, read as a follow-up would be
        ("What's the capital of Austria? No, I mean Australia.", "What's the capital of Australia?"),
        ("How many legs does a spider have? No wait, an ant.", "How many legs does an ant have?"),
        # a preposition's object, when nothing else places the phrase
        ("Who wrote the music of the nutcracker no wait I mean swan lake?", "Who wrote the music of swan lake?"),
        # "I mean" alone before a number, and the question going on after the repair
        ("I'm driving 200 km tomorrow I mean 250 how many miles is that?",
         "I'm driving 250 km tomorrow how many miles is that?"),
        ("What's 8% of 250? Actually, make it 12%.", "What's 12% of 250?"),  # the last percentage, not the last number
        # one marker word between two numbers, without a comma
        ("Set a timer for 5 minutes for the rice actually 4 minutes", "Set a timer for 4 minutes for the rice"),
        # the repair ends where a clause of the speaker's own begins
        ("set a timer for forty minutes no make that forty five so i know when to head back",
         "set a timer for forty five minutes so i know when to head back"),
        # …and where a purpose begins after a bare number (the forty-first set: the timer had been set for 2 hours)
        ("set a timer for two hours no make that three for the varnish to dry",
         "set a timer for three hours for the varnish to dry"),
        ("charging me one pound twenty a stem no sorry one pound ten and i need 350 stems so what's that come to",
         "charging me one pound ten a stem and i need 350 stems so what's that come to"),
        # "hang on" takes back what was asked, as "wait" does (the forty-second set: "It's 23:59." to "what year is it")
        ("what's the time no hang on what year is it", "what year is it"),
        ("is it thursday no hang on what day is it actually", "what day is it actually"),
        # a marker misheard ("no wait" as "no way"): the "make it" after it is placed, and the cut-off phrase it
        # leaves ("way to") replaces nothing (it had made the timer "for way to")
        ("Set a timer for 20 minutes. No way to make it 25.", "Set a timer for 25 minutes. No way to"),
        # a hesitation before the marker goes with it
        ("how many pounds is five kilos uh actually make it six kilos", "how many pounds is six kilos"),
        # each marker in turn
        ("What's 6 times 7, no, 8, sorry, 9?", "What's 6 times 9?"),
        # a possessive restarts what it owns
        ("what's my son's no sorry my daughter's name", "what's my daughter's name"),
        ("What's my son? No sorry my daughter's name.", "What's my daughter's name?"),
        ("When is her birthday, sorry, his birthday?", "When is his birthday?"),
    ],
)
def test_a_self_correction_is_read_as_meant(said: str, meant: str) -> None:
    assert repair(said) == meant


@pytest.mark.parametrize(
    "said",
    [
        "Can you make it louder?",  # "make it" without a comma or a second marker
        "Is there no milk left?",
        "I'm sorry, what time is it?",
        "Sorry, what time is it?",  # nothing before the marker
        "Actually, what's the time?",
        "What's the capital of Peru? No?",  # nothing after it
        "I was wondering, no pressure, what's the capital of Peru?",  # nothing the rule can place
        "Who wrote Hamlet? Actually, never mind.",
        "What's the capital of Peru I mean the country?",  # "I mean" that says more
        "You know what I mean, what's the capital of Peru?",
        "What's the currency of the UK? I mean, it's not yours.",  # a clause says more, it replaces nothing
        # "another" was corrected, not the twelve
        "If I have twelve apples and I buy another, no, nineteen more, how many do I have?",
        "What's 7 times 8?",
        "Remind me in 5 minutes to wait 10 minutes",  # "wait" before a number is a wait
    ],
)
def test_words_that_correct_nothing_stay_as_said(said: str) -> None:
    assert repair(said) == said


def test_only_user_messages_are_repaired_and_the_history_keeps_the_words_as_heard() -> None:
    messages = [
        ChatMessage("user", "What's 15 times 4? No, 15 times 5."),
        ChatMessage("assistant", "No, no, 60, I mean 75."),
        ChatMessage("user", "Thanks."),
    ]
    meant = repair_messages(messages)
    assert [m.content for m in meant] == ["What's 15 times 5?", "No, no, 60, I mean 75.", "Thanks."]
    assert messages[0].content == "What's 15 times 4? No, 15 times 5."
    assert meant[2] is messages[2]


@pytest.mark.parametrize(
    ("turns", "meant"),
    [
        # A turn that opens by taking back the one before is read with it as one corrected turn.
        (["The side gate code is 1983.", "No wait, sorry, it's 1985."], ["The side gate code is 1985"]),
        (["The side gate code is 1983.", "No wait sorry it's 1 9 8 5"], ["The side gate code is 1 9 8 5"]),
        (["my seat is twenty two a", "no sorry twenty two c"], ["my seat is twenty two c"]),
        (["What's 5 times 4?", "No, sorry, I meant 6.", "Thanks."], ["What's 5 times 6", "Thanks."]),
        # A lone "No" answers the assistant; a repair the rule cannot place stays as said.
        (["I parked on level 3.", "No."], ["I parked on level 3.", "No."]),
        (["I parked on level 3.", "No, I walked."], ["I parked on level 3.", "No, I walked."]),
        (["The plumber comes on Thursday.", "Actually no, he moved it."],
         ["The plumber comes on Thursday.", "Actually no, he moved it."]),
        (["No wait, it's 12."], ["No wait, it's 12."]),  # nothing before it to correct
    ],
)  # fmt: skip
def test_a_turn_that_takes_back_the_one_before_corrects_it(turns: list[str], meant: list[str]) -> None:
    assert repair_turns(turns) == meant


@pytest.mark.parametrize("on", [True, False])
def test_the_skills_read_a_fact_as_corrected_in_the_next_turn(on: bool) -> None:
    llm = SkillsLlm(FakeLlm(replies=("I am the LLM.",)), clock=lambda: datetime(2026, 12, 6, 12), self_repair=on)
    said = ["The side gate code is 1983.", "No wait, sorry, it's 1985.", "What's the gate code?"]
    _messages, replies = converse(llm, said)
    assert ("1985" in replies[-1]) == on
    assert ("1983" in replies[-1]) == (not on)


def _reply(llm: SkillsLlm, said: str) -> str:
    return reply_to(llm, [ChatMessage("user", said)])


@pytest.mark.parametrize("on", [True, False])
def test_the_skills_answer_the_corrected_sum_and_the_switch_turns_it_off(on: bool) -> None:
    llm = SkillsLlm(FakeLlm(replies=("I am the LLM.",)), clock=lambda: datetime(2026, 12, 6, 12), self_repair=on)
    reply = _reply(llm, "What's the square root of 144? No, wait, I mean 169.")
    assert ("13" in reply) == on
    assert ("12" not in reply) == on


@pytest.mark.parametrize("on", [True, False])
def test_the_timer_is_set_as_meant(on: bool) -> None:
    config = make_config(llm={"self_repair": on}).llm
    reply = handle(as_meant("Set a timer for three minutes, no, make it four.", config), TimerBook(), 0)
    assert (reply == "Timer set for 4 minutes.") == on


def test_the_model_sees_the_corrected_question_unless_switched_off() -> None:
    messages = [ChatMessage("user", "what's the capital of Austria, no, I mean Australia")]
    assert PromptView(make_config().llm).apply(messages)[-1].content == "What's the capital of Australia?"
    off = PromptView(make_config(llm={"self_repair": False}).llm).apply(messages)[-1].content
    assert off == "What's the capital of Austria, no, I mean Australia?"  # tidied only


def test_a_long_turn_is_judged_by_the_words_meant_and_its_length_as_said() -> None:
    """Corrected, the turn is a timer the skills take: neither asked again nor asked for in fewer words. A long turn
    only the LLM would answer is asked for in fewer words even when its repair is short."""
    said = "um so could you set a timer for my pasta for twelve minutes, no wait, sorry, make it fifteen"
    config = make_config(stt={"ask_again_llm_above_words": 12})
    assert not ask_again.needed(config, said, avg_logprob=-0.1)
    assert ask_again.needed(make_config(stt={"ask_again_llm_above_words": 12}, llm={"self_repair": False}),
                            "um so could you tell me about the pasta for twelve minutes, no wait, sorry, make it "
                            "fifteen", avg_logprob=-0.1)  # fmt: skip
    rambling = "I am driving 300 km tomorrow I mean 350 how long will that take me"  # 14 words; 11 as meant
    assert ask_again.needed(config, rambling, avg_logprob=-0.1)
    assert ask_again.reply(config, rambling) == config.stt.ask_shorter_reply
