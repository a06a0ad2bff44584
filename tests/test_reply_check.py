"""The model's reply is checked before its first clause is spoken (voice.conversation.reply_check): an echo of the
user's words is replaced by the ask-again reply, a claim of an ability the system prompt denies by what the
assistant can do; the model is stopped, and the history holds what was said."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_turn import ListSink, start_timer
from voice.clock import FakeClock
from voice.config.config import LlmConfig
from voice.conversation.echo import echoes, tells
from voice.conversation.history import History
from voice.conversation.reply_check import CheckedReply, ReplyCheck, Verdict, claims, denied
from voice.runtime.fakes import Delay, FakeLlm, FakeStt
from voice.runtime.model_api import ChatMessage, PromptInfo
from voice.skills.answer import ASKING_AGAIN
from voice.skills.capabilities import WHAT_I_CAN_DO
from voice.turn.pipeline import Utterance, run_turn

ABILITIES = denied(LlmConfig().system_prompt)
ASK_AGAIN = "Sorry, I didn't catch that. Could you say it again?"


def test_the_denied_abilities_are_read_from_the_system_prompt() -> None:
    assert {"control", "play", "make", "send", "see"} <= ABILITIES.verbs
    assert {"lights", "doors", "apps", "music", "calls", "messages", "weather", "prices"} <= ABILITIES.things
    other = denied("You are terse. You cannot fly planes or bake bread.")
    assert other.verbs == {"fly", "bake"} and {"planes", "bread"} <= other.things
    assert ABILITIES.things_of["make"] == {"calls", "call"}
    # No list: only the fixed verbs and devices count.
    assert denied("You are a helpful assistant.") == denied("")


CLAIMS = [
    "I can answer questions, play music, make calls, send messages, and see the weather in real-time.",
    "I'll turn on the lights for you.",
    "I've set the thermostat to 20 degrees.",
    "Sure, turning on the lights now.",
    "Done! The lights are now on.",
    "OK, the heating is off.",
    "The kitchen lights are now off.",
    "Let me check the weather for you.",
    "I can't do that, but I can play music for you.",
    "I am calling your mother now.",
    "Okay, I've locked the front door.",
    "I have turned off the heating.",
    "I'd be happy to turn the living room lights on.",
    "I can read your messages to you.",
    # The LLM sets no timer; only the timer skill does (it had said these with none set: the 16th-18th sets).
    "Timer set for 15 minutes.",
    "At timer set for 2 hours.",
    "Timer cancelled.",
    "Your 10 minute timer is set.",
]

NOT_CLAIMS = [
    "I can't play music.",
    "I'm sorry, I cannot control devices.",
    "I don't have the ability to turn on the lights.",
    "Unfortunately, I'm not able to see the weather.",
    "I can help you with that.",
    "I think the capital is Paris.",
    "I can see why you'd ask.",
    "I can make a list of ideas.",
    "I can play a game with you.",
    "I'm open to suggestions.",
    "You can turn on the lights with the switch.",  # the user can
    "Thermostats control the heating in a house.",
    "Traffic lights are on all night.",
    "I can answer questions about music history.",
    "I can recommend books on music theory.",  # "books" is no verb after "I"
    "I can make a playlist suggestion.",  # "make" is denied only for calls
    WHAT_I_CAN_DO,  # the honest reply is no claim
    "I can set timers for you.",  # true: the timer skill does
    "A timer is a device that counts down.",
    "The alarm clock was invented in 1787.",
]


@pytest.mark.parametrize("sentence", CLAIMS)
def test_a_claim_of_a_denied_ability_is_caught(sentence: str) -> None:
    assert claims(sentence, ABILITIES)


@pytest.mark.parametrize("sentence", NOT_CLAIMS)
def test_a_denial_an_offer_of_help_or_a_fact_is_no_claim(sentence: str) -> None:
    assert not claims(sentence, ABILITIES)


@pytest.mark.parametrize(
    ("reply", "user", "echo"),
    [
        ("He wrote the Harry Potter books.", "He wrote the Harry Potter books.", True),
        ("Tell me a joke.", "tell me a joke", True),
        ("The capital of France is Paris.", "What is the capital of France?", False),  # adds the answer
        ("Your name is Sam.", "My name is Sam.", False),  # said back to the user, not echoed
        ("17 times 3 is 51.", "What is 17 times 3?", False),
        ("Yes, it is.", "Is it?", False),  # too short to tell
        ("The Sun is a star.", "Is the Sun a star or a planet?", False),  # picks an answer from the question
        ("What is the capital of Spain?", "What is the capital of Spain?", True),
        ("I like pizza too!", "I like pizza.", False),
        # a frame that only introduces the user's words does not make them an answer
        ('The answer is: "Why do some hydrangeas come out blue instead of pink?"',
         "Why do some hydrangeas come out blue instead of pink?", True),
        ("The answer is 42.", "What is the answer to everything?", False),
        # their question put back to them, however much of the turn it leaves out (the fortieth set)
        ("What do tadpoles turn into?", "Come what do tadpoles turn into when they grow up?", True),
        ("The fastest land animal?", "what's the, uh, the fastest land animal? my nephew says it's a lion", True),
        ("Is the Sun a star?", "Is the Sun a star or a planet?", True),
        ("Do you mean the Sun?", "Is the Sun a star or a planet?", False),  # asks something new
    ],
)
def test_an_echo_says_back_the_users_words_and_adds_nothing(reply: str, user: str, echo: bool) -> None:
    assert echoes(reply, user) is echo


def _run(check: ReplyCheck, clauses: list[str]) -> list[Verdict]:
    return [check.push(c) for c in clauses] + [check.finish()]


def test_a_first_clause_that_may_still_be_an_echo_is_held_until_the_next_word_decides() -> None:
    check = ReplyCheck("What is the capital of France?", ABILITIES, ask_again=ASK_AGAIN)
    held, paris, end = _run(check, ["The capital of France is", "Paris."])
    assert held == Verdict()
    assert paris == Verdict(release=("The capital of France is", "Paris."))
    assert end == Verdict()


def test_an_echo_is_replaced_and_a_plain_first_clause_goes_at_once() -> None:
    echo = ReplyCheck("He wrote the Harry Potter books.", ABILITIES, ask_again=ASK_AGAIN)
    assert _run(echo, ["He wrote the Harry", "Potter books."])[1] == Verdict(replace=ASK_AGAIN)
    # A frame before the user's words is held too: what follows it decides.
    framed = ReplyCheck("Why do some hydrangeas come out blue?", ABILITIES, ask_again=ASK_AGAIN)
    assert _run(framed, ["The answer is:", '"Why do some hydrangeas come out blue?"'])[:2] == [
        Verdict(),
        Verdict(replace=ASK_AGAIN),
    ]
    plain = ReplyCheck("Who wrote Hamlet?", ABILITIES, ask_again=ASK_AGAIN)
    assert plain.push("William Shakespeare wrote") == Verdict(release=("William Shakespeare wrote",))


@pytest.mark.parametrize(
    ("user", "told"),
    [
        # Statements: the subject first, nothing asked (the quality sets' follow-ups, 2026-12-07).
        ("the plumber is coming on thursday", True),
        ("i'm meeting tom at the blue lantern cafe later", True),
        ("um the bus i need is the number forty nine", True),
        ("he's turning seven this year", True),
        ("My car does thirty two miles to the gallon.", True),
        # Questions and requests.
        ("what's a hundred and twenty divided by eight", False),
        ("the capital of france is what", False),
        ("three notebooks at four fifty each how much is that", False),
        ("is it raining", False),
        ("cancel the five minute one", False),
        ("Gimme some tips for sleeping better.", False),
        ("my son is seven, right?", False),
        ("i want to know the capital of peru", False),
        ("tell me a joke", False),
        ("", False),
    ],
)
def test_a_statement_tells_and_a_question_or_a_request_does_not(user: str, told: bool) -> None:
    assert tells(user) is told


def test_a_typed_statement_said_back_is_a_read_back_not_an_echo() -> None:
    user = "the plumber is coming on thursday"
    read_back = ReplyCheck(user, ABILITIES, ask_again=ASK_AGAIN, read_back=True)
    assert _run(read_back, ["The plumber is coming", "on Thursday."]) == [
        Verdict(release=("The plumber is coming",)),
        Verdict(release=("on Thursday.",)),
        Verdict(),
    ]
    heard = ReplyCheck(user, ABILITIES, ask_again=ASK_AGAIN)  # heard, not typed: perhaps a misheard question
    assert _run(heard, ["The plumber is coming", "on Thursday."])[1] == Verdict(replace=ASK_AGAIN)


def test_a_claim_in_the_first_sentence_replaces_the_reply_and_a_later_one_ends_it() -> None:
    first = ReplyCheck("What can you do?", ABILITIES, ask_again=ASK_AGAIN)
    assert first.push("I can answer questions,") == Verdict()  # "I can" may go on to a claim: held
    assert first.push("play music, make calls.") == Verdict(replace=WHAT_I_CAN_DO)
    later = ReplyCheck("What is the capital of France?", ABILITIES, ask_again=ASK_AGAIN)
    assert later.push("Paris is the capital.") == Verdict(release=("Paris is the capital.",))
    assert later.push("I can also play music for you.") == Verdict(stop=True)


async def test_a_reply_no_model_wrote_goes_through_unchecked() -> None:
    queued: list[str] = []

    async def put(clause: str, ready_ns: int) -> None:
        queued.append(clause)

    echo = "He wrote the Harry Potter books."
    messages = [ChatMessage("system", "s"), ChatMessage("user", echo)]
    skill = CheckedReply.of(messages, make_config(), put)
    skill.prompt = PromptInfo(prompt_tokens=0, reused_tokens=0, evaluated_tokens=0)  # a skill answered
    assert await skill.push(echo, 0) and queued == [echo] and not skill.changed
    model = CheckedReply.of(messages, make_config(), put)
    assert not await model.push(echo, 0) and model.changed
    assert model.said == queued[1:] == [make_config().stt.ask_again_reply] and model.asked_again
    assert not skill.asked_again
    for unclear in ASKING_AGAIN:  # a skill's reply that asks again ("I didn't catch the numbers") counts as asking
        asks = CheckedReply.of(messages, make_config(), put)
        asks.prompt = skill.prompt
        assert await asks.push(unclear, 0) and asks.asked_again
    assert CheckedReply.of([], make_config(), put).check is None  # a local reply (a timer): no prompt


UTT = Utterance(np.zeros(16000, np.float32), 320.0, False)
TAIL = " Anything else I can help you with today? Just ask me anything at all."


@pytest.mark.parametrize(
    ("heard", "reply", "said"),
    [
        ("What can you do?", "I can answer questions, play music, make calls, and see the weather." + TAIL,
         WHAT_I_CAN_DO),
        ("Turn the lights on please", "Sure! I'll turn on the lights for you." + TAIL, WHAT_I_CAN_DO),
        ("He wrote the Harry Potter books.", "He wrote the Harry Potter books." + TAIL, ASK_AGAIN),
        ("What is the capital of France?", "Paris is the capital. I can also play music for you." + TAIL,
         "Paris is the capital."),
    ],
)  # fmt: skip
async def test_the_turn_speaks_the_checked_reply_stops_the_model_and_keeps_what_was_said(
    clock: FakeClock, fake_runtime: RuntimeFactory, heard: str, reply: str, said: str
) -> None:
    llm = FakeLlm(replies=(reply,), delay=Delay(clock))
    runtime = fake_runtime(clock=clock, stt=FakeStt(texts=(heard,), delay=Delay(clock)), llm=llm)
    history, timer = History(), start_timer(clock, 1)
    report = await run_turn(runtime, make_config(), history, UTT, timer, ListSink())
    assert report.outcome == "ok" and report.reply_text == said
    # An echo replaced by asking again is reported as asking again; the other changes are not.
    assert report.asked_again == (said == ASK_AGAIN)
    assert [(m.role, m.content) for m in history.messages] == [("user", heard), ("assistant", said)]
    # The model was stopped: the tail was never generated.
    assert len(timer.token_ns) < len(reply.split()) - 10
    assert runtime.tts.texts == [said]  # type: ignore[attr-defined]  # nothing of the model's reply was spoken


async def test_a_typed_statement_is_read_back_and_a_typed_question_echoed_is_asked_again(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    for typed, reply, said in [
        ("the plumber is coming on thursday", "The plumber is coming on Thursday.", "The plumber is coming on Thursday."),  # noqa: E501
        ("who composed the four seasons", "Composed the four seasons.", ASK_AGAIN),
    ]:
        runtime = fake_runtime(clock=clock, llm=FakeLlm(replies=(reply,), delay=Delay(clock)))
        history = History()
        history.add("user", typed)  # the session adds a typed message before its turn
        utterance = Utterance(np.zeros(0, np.float32), 0.0, False, text=typed)
        report = await run_turn(runtime, make_config(), history, utterance, start_timer(clock, 1), ListSink())
        assert report.reply_text == said and history.messages[-1].content == said


async def test_a_plain_reply_is_spoken_and_kept_as_written(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    reply = "The capital of France is Paris. It is lovely."
    runtime = fake_runtime(clock=clock, llm=FakeLlm(replies=(reply,), delay=Delay(clock)))
    history = History()
    report = await run_turn(runtime, make_config(), history, UTT, start_timer(clock, 1), ListSink())
    assert report.reply_text == reply and history.messages[-1].content == reply


def test_a_first_sentence_that_only_agrees_waits_for_the_next_and_is_spoken_at_the_end() -> None:
    check = ReplyCheck("Can you help?", ABILITIES, ask_again=ASK_AGAIN)
    assert check.push("Sure!") == Verdict()
    assert check.push("What do you need?") == Verdict(release=("Sure!", "What do you need?"))
    alone = ReplyCheck("Can you help?", ABILITIES, ask_again=ASK_AGAIN)
    assert _run(alone, ["Of course."]) == [Verdict(), Verdict(release=("Of course.",))]


def test_a_held_clause_goes_as_soon_as_the_next_words_decide_not_at_the_end_of_the_sentence() -> None:
    check = ReplyCheck("What is the longest river in Africa?", ABILITIES, ask_again=ASK_AGAIN)
    assert check.push("The longest river in Africa is") == Verdict()
    assert check.peek("The longest river in Africa is") == Verdict()  # nothing new yet
    assert check.peek("The longest river in Africa is Ni") == Verdict()  # the last word may be a part word
    assert check.peek("The longest river in Africa is Nile ") == Verdict(
        release=("The longest river in Africa is",)
    )
    assert check.push("the Nile River, which runs through Egypt.") == Verdict(
        release=("the Nile River, which runs through Egypt.",)
    )
    claim = ReplyCheck("What can you do?", ABILITIES, ask_again=ASK_AGAIN)
    assert claim.push("I can answer questions,") == Verdict()
    assert claim.peek("I can answer questions, play music and ") == Verdict()  # a claim: the clause decides
    assert claim.push("play music and more.") == Verdict(replace=WHAT_I_CAN_DO)
