"""Timers: parsing what Whisper writes, the book, and ringing as a server-initiated turn (fake clock)."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config, silence, tone
from tests.test_session_speculation import Client, feed, reply_held, start, until
from voice.clock import FakeClock
from voice.runtime.fakes import Delay, FakeLlm, FakeStt
from voice.serve.session import Session
from voice.skills import timers
from voice.skills.timers import AskDuration, CancelTimer, ListTimers, SetTimer, TimerBook
from voice.wire.report import TurnReport

S = timers.NS_PER_S

# (transcript, the command it must give) — including what tiny.en/base.en write for mumbled commands.
COMMANDS: list[tuple[str, object]] = [
    ("Set a timer for 10 minutes.", SetTimer(600.0)),
    ("set a timer for ten minutes", SetTimer(600.0)),
    ("7 times after 30 seconds.", SetTimer(30.0)),
    ("Set a time her for five minutes.", SetTimer(300.0)),
    ("Set a five-minute timer.", SetTimer(300.0)),
    ("Start a timer for an hour and a half.", SetTimer(5400.0)),
    ("set a timer for the hour and a half.", SetTimer(5400.0)),  # tiny.en's "the" for "an" (espeak-ng en-us)
    ("Timer for half a minute.", SetTimer(30.0)),
    ("Set a timer for one and a half minutes.", SetTimer(90.0)),
    ("Set a timer for 1 hour 30 minutes.", SetTimer(5400.0)),
    ("Set a timer for twenty five seconds.", SetTimer(25.0)),
    ("Set a timer for 2.5 minutes.", SetTimer(150.0)),
    ("Set a timer for a quarter of an hour.", SetTimer(900.0)),  # was 1 hour (the nineteenth set)
    ("Timer for three quarters of an hour.", SetTimer(2700.0)),
    ("set a timer for half an hour", SetTimer(1800.0)),
    ("Is my timer still going", ListTimers()),  # was the LLM's "No, I'm not." (the sixteenth set)
    ("How long is left?", ListTimers()),  # was the LLM's "Timer set for 10 minutes." (the eighteenth set)
    ("how long's left", ListTimers()),
    ("Set a pasta timer for 8 minutes.", SetTimer(480.0, "pasta")),
    # A request that starts by setting one sets it, whatever asking words follow (was a list: the twenty-ninth set).
    ("Set a timer for 15 minutes so I remember to check the road.", SetTimer(900.0)),
    ("start a ten minute timer and tell me how long is left", SetTimer(600.0)),
    ("Set a timer called eggs for 3 minutes.", SetTimer(180.0, "eggs")),
    ("Set a timer for ten minutes for the pizza.", SetTimer(600.0, "pizza")),
    ("Set a 3 minute timer for the end.", SetTimer(180.0, "end")),  # tiny.en's "eggs" (eighth set): a set, not "end"
    ("Start a timer for 10 minutes to stop the oven.", SetTimer(600.0)),
    # A purpose after the timer asks nothing of the timers (was "No timers are running.": the fortieth set).
    ("Give me a 10-minute timer to check the sourdough.", SetTimer(600.0)),
    ("I need a twenty minute timer so I can check the oven", SetTimer(1200.0)),
    ("Can you check my timers to see what is left?", ListTimers()),
    ("Remind me in 2 minutes.", SetTimer(120.0)),
    ("Could you time four minutes for my tea?", SetTimer(240.0, "tea")),  # "time" as the verb
    ("Time 45 seconds.", SetTimer(45.0)),
    ("Put a timer on for half an hour.", SetTimer(1800.0)),  # "timer on" with a duration sets one
    ("Set a timer for 4 minutes for the tea, 3 minutes.", SetTimer(180.0)),  # the last of two, not their sum
    ("Set a timer for 2 minutes 30 seconds.", SetTimer(150.0)),  # the parts of one
    ("Set a timer for 1 hour in 30 minutes.", SetTimer(5400.0)),  # tiny.en's "in" for "and"
    ("Is a timer on?", ListTimers()),
    ("How much time is left on my timer?", ListTimers()),
    ("What timers are running?", ListTimers()),
    ("Cancel the timer.", CancelTimer()),
    ("Stop the pasta timer.", CancelTimer(label="pasta")),
    ("Cancel the 10 minute timer.", CancelTimer(duration_s=600.0)),
    ("Cancel all timers.", CancelTimer(every=True)),
    # tiny.en on espeak-ng's British voices ("console", "council") and American ones ("can solve"):
    ("Council the timer.", CancelTimer()),
    ("Console my timer.", CancelTimer()),
    ("Consolol timers.", CancelTimer(every=True)),
    ("Console the 10-minute timer", CancelTimer(duration_s=600.0)),
    ("Can solve my timer.", CancelTimer()),
    ("Consul oil timers", CancelTimer(every=True)),  # tiny.en on en-gb, another VM (2026-12-05)
    ("cancelled all timers", CancelTimer(every=True)),
    # a request to set one whose duration was not heard
    ("Set a timer.", AskDuration()),
    ("Set a timer for the minutes.", AskDuration()),  # "the" is one only before a unit of one
    ("For the second time, set a timer for 5 minutes.", SetTimer(300.0)),  # an ordinal, not a second
    ("Could you set a timer for another and a half?", AskDuration()),  # tiny.en: "an hour and a half"
    ("Start a timer for the pasta.", AskDuration("pasta")),
]
# Not timer commands: they go on to the other skills or the LLM.
NOT_COMMANDS = [
    "What is 7 times 30?",
    "How long should I boil an egg, 10 minutes?",
    "What time is it?",
    "I waited 10 minutes for the bus.",
    "I ran 5 times in 30 minutes.",
    "The council meets at ten.",
    "Turn on the console.",
    "What time is it in 5 minutes?",
    "Time is 5 minutes away.",
    "Can you time how long it takes?",
    "Set the table for dinner.",
    "Do you have a timer?",
    "How do I set a timer?",
    "How do I set a timer on my phone?",  # was taken for "what timers are on?"
    "How can I cancel a timer on my watch?",
    "Did you set a timer?",
    "",
]


@pytest.mark.parametrize(("text", "command"), COMMANDS)
def test_timer_commands_are_recognised(text: str, command: object) -> None:
    assert timers.parse(text) == command


@pytest.mark.parametrize("text", NOT_COMMANDS)
def test_other_sentences_are_not_timer_commands(text: str) -> None:
    assert timers.parse(text) is None


@pytest.mark.parametrize(
    ("seconds", "spoken"),
    [(600, "10 minutes"), (61, "1 minute and 1 second"), (5400, "1 hour and 30 minutes"),
     (3725, "1 hour, 2 minutes and 5 seconds"), (0.4, "0 seconds")],
)  # fmt: skip
def test_durations_are_said_in_words(seconds: float, spoken: str) -> None:
    assert timers.say_duration(seconds) == spoken


def test_set_list_cancel_and_ring_in_order() -> None:
    book = TimerBook()
    assert timers.handle("set a timer for 10 minutes", book, 0) == "Timer set for 10 minutes."
    assert timers.handle("set a pasta timer for 90 seconds", book, 0) == "Pasta timer set for 1 minute and 30 seconds."
    assert timers.handle("how much time is left on my timers", book, 30 * S) == (
        "You have 2 timers: pasta timer for 1 minute and 30 seconds, 1 minute left; "
        "10 minute timer, 9 minutes and 30 seconds left."
    )
    assert timers.handle("cancel the timer", book, 30 * S) is not None
    assert len(book.timers) == 2  # ambiguous: nothing cancelled, the reply asks which
    assert book.pop_due(89 * S) == []
    (rang,) = book.pop_due(90 * S)
    assert timers.ring_text(rang) == "Your pasta timer is done."
    assert timers.handle("cancel the timer", book, 91 * S) == "10 minute timer cancelled."
    assert book.timers == () and book.next_due_ns() is None
    assert timers.handle("cancel the timer", book, 92 * S) == "No timers are running."
    assert timers.handle("set a timer for 25 hours", book, 0) == "I can set timers from one second to 24 hours."
    assert book.timers == ()


def test_a_timer_without_a_duration_asks_for_one_and_the_next_answer_sets_it() -> None:
    book = TimerBook()
    assert timers.handle("Start a timer for the pasta.", book, 0) == "How long should the pasta timer be?"
    assert timers.handle("For ten minutes, please.", book, 0) == "Pasta timer set for 10 minutes."
    assert timers.handle("Twenty minutes.", book, 0) is None  # nobody asked: not a command
    assert timers.handle("Set a timer.", book, 0) == "How long should the timer be?"
    assert timers.handle("What's the capital of France?", book, 0) is None  # something else: the question lapses
    assert timers.handle("Five minutes.", book, 0) is None
    assert timers.handle("Set a timer.", book, 0) == "How long should the timer be?"
    assert book.copy().asked == ""  # a speculative reply's copy knows it was asked
    assert timers.handle("Set a timer for 5 minutes.", book, 0) == "Timer set for 5 minutes."
    assert [t.duration_s for t in book.timers] == [300.0, 600.0]


def test_right_after_a_timer_is_set_cancel_that_and_make_it_are_about_it() -> None:
    """The LLM had answered these "Timer set for 15 minutes." with no timer set or cancelled (the sixteenth and
    eighteenth sets): said right after a timer was set, they are about that timer; said later, not timer commands."""
    book = TimerBook()
    assert timers.handle("set a timer for 10 minutes", book, 0) == "Timer set for 10 minutes."
    assert timers.handle("Actually, make it fifteen.", book, 0) == "Timer set for 15 minutes."  # its unit: minutes
    assert [t.duration_s for t in book.timers] == [900.0]
    assert timers.handle("no make it half an hour", book, 0) == "Timer set for 30 minutes."
    assert timers.handle("Actually never mind, cancel that.", book, 0) == "30 minute timer cancelled."
    assert book.timers == ()
    assert timers.handle("set an egg timer for 2 hours", book, 0) == "Egg timer set for 2 hours."
    assert book.copy().just_set == book.timers[0].id  # a speculative reply's copy knows it was just set
    assert timers.handle("What's the capital of France?", book, 0) is None  # something else: it lapses
    assert timers.handle("make it three", book, 0) is None and timers.handle("never mind", book, 0) is None
    assert [t.duration_s for t in book.timers] == [7200.0]
    assert timers.handle("ok cancel it", book, 0) == "Egg timer cancelled."  # the one running: all it can cancel
    assert timers.handle("cancel it", book, 0) is None  # none running: not a timer command
    assert timers.handle("set a timer for 90 seconds", book, 0) == "Timer set for 1 minute and 30 seconds."
    assert timers.handle("make it two", book, 0) == "Timer set for 2 minutes."  # the largest unit it was set in
    assert timers.handle("oh stop it", book, 0) == "2 minute timer cancelled."


@pytest.mark.parametrize(
    ("set_", "cancel", "cancelled"),
    [
        ("set a timer for fifteen minutes called laundry", "cancel the laundry timer", "Laundry timer cancelled."),
        ("set a timer for four minutes for the eggs", "cancel the egg timer", "Eggs timer cancelled."),
        ("set an egg timer for four minutes", "stop the eggs timer", "Egg timer cancelled."),
        # a plural in "-es" (was "There is no potato timer.": the forty-second set)
        ("Set a timer for 40 minutes for the potatoes.", "um cancel the potato timer", "Potatoes timer cancelled."),
        ("set a timer for four minutes for the eggs", "cancel the rice timer", "There is no rice timer."),
    ],
)
def test_a_timer_is_cancelled_by_its_name_however_it_was_given(set_: str, cancel: str, cancelled: str) -> None:
    """A bread timer runs beside it: only the timer named goes."""
    book = TimerBook()
    timers.handle("set a timer for thirty minutes for the bread", book, 0)
    timers.handle(set_, book, 0)
    assert timers.handle(cancel, book, 1) == cancelled
    assert any(t.label == "bread" for t in book.timers)


def test_a_copy_is_independent() -> None:
    book = TimerBook()
    timers.handle("set a timer for 1 minute", book, 0)
    copy = book.copy()
    timers.handle("set a timer for 2 minutes", copy, 0)
    assert len(book.timers) == 1 and len(copy.timers) == 2


# ---------------------------------------------------------------------------- through a Session


def timer_session(fake_runtime: RuntimeFactory, clock: FakeClock, texts: tuple[str, ...]) -> tuple[
    Session, list[TurnReport], FakeLlm
]:  # fmt: skip
    delay = Delay(clock)
    llm = FakeLlm(replies=("An LLM reply.",), delay=delay)
    runtime = fake_runtime(clock=clock, stt=FakeStt(texts=texts, latency_ms=50.0, delay=delay), llm=llm)
    config = make_config(
        vad={"silence_ms": 320, "min_speech_ms": 64}, turn={"speculate_after_ms": 0}, tts={"min_first_clause_words": 1}
    )
    reports: list[TurnReport] = []
    return Session("s", runtime, config, clock, on_report=reports.append), reports, llm


async def say(session: Session, clock: FakeClock) -> None:
    await feed(session, clock, np.concatenate([tone(0.5), silence(0.45)]))
    assert await session.wait_turns(timeout_s=10)


async def test_a_timer_set_by_voice_rings_as_a_server_initiated_turn(fake_runtime: RuntimeFactory) -> None:
    clock = FakeClock()
    session, reports, _ = timer_session(fake_runtime, clock, ("Set a timer for 10 seconds.",))
    client = Client(session)
    await start(session)
    await say(session, clock)
    replies = [e["text"] for e in client.events if e["type"] == "reply_text"]
    assert replies == ["Timer set for 10 seconds."]
    assert reports[0].prompt_tokens_evaluated == 0 and reports[0].initiator == "user"
    (t,) = session.history.timers.timers
    assert await session.ring_due() == 0  # not due yet
    assert t.duration_s == 10.0
    clock.advance_ms((t.due_ns - clock.now_ns()) / 1e6 - 1)
    assert await session.ring_due() == 0
    clock.advance_ms(251)  # due 250 ms ago: the report counts the lateness
    assert await session.ring_due() == 1
    assert await session.wait_turns(timeout_s=10)
    await session.cancel_turns()
    await client.close()
    ring = reports[-1]
    assert ring.initiator == "timer" and ring.outcome == "ok"
    assert ring.reply_text == "Your 10 second timer is done."
    assert ring.stages_ms["endpoint_silence"] == pytest.approx(250.0, abs=1.0)
    assert session.history.timers.timers == ()
    # The announcement is part of the conversation; no speech_ended was sent for it (nobody spoke).
    assert session.history.messages[-1].content.endswith("Your 10 second timer is done.")
    assert client.types().count("speech_ended") == 1


async def test_the_ringer_rings_by_itself(fake_runtime: RuntimeFactory) -> None:
    """The ringer task wakes up when the soonest timer is due (real clock: a 1 s timer)."""
    from voice.clock import MonotonicClock

    real = MonotonicClock()
    session, reports, _ = timer_session(fake_runtime, FakeClock(), ("x",))
    session.clock = real
    await start(session)
    client = Client(session)
    timers.handle("set a timer for 1 second", session.history.timers, real.now_ns())
    session.ringer.arm()
    await until(lambda: any(r.initiator == "timer" for r in reports), timeout_s=5)
    await session.cancel_turns()
    await client.close()
    (ring,) = [r for r in reports if r.initiator == "timer"]
    assert ring.reply_text == "Your 1 second timer is done."
    assert ring.stages_ms["endpoint_silence"] < 500  # rang on time, not at the next 1 s check


async def test_a_timer_does_not_ring_while_the_user_speaks(fake_runtime: RuntimeFactory) -> None:
    clock = FakeClock()
    session, reports, _ = timer_session(fake_runtime, clock, ("Set a timer for 1 second.", "More words."))
    client = Client(session)
    await start(session)
    await say(session, clock)
    # This test rings by hand: the ringer task (its own test is above) would race it on a busy machine.
    await session.ringer.stop()
    session.ringer.arm = lambda: None  # type: ignore[method-assign]
    await feed(session, clock, tone(1.2))  # the timer falls due while the user is speaking
    assert session.in_speech
    assert await session.ring_due() == 0
    await feed(session, clock, silence(0.45))
    assert await session.ring_due() == 1
    assert await session.wait_turns(timeout_s=10)
    await session.cancel_turns()
    await client.close()
    assert [r.initiator for r in reports] == ["user", "user", "timer"]


async def test_a_timer_set_in_a_discarded_speculation_is_not_set(fake_runtime: RuntimeFactory) -> None:
    """The speculative reply at the pause hears "set a timer" and sets it in its copy of the conversation;
    the user goes on speaking, the reply is thrown away, and so is the timer. The committed turn's one is
    set."""
    clock = FakeClock()
    delay = Delay(clock)
    stt = FakeStt(texts=("Set a timer for 5 minutes.", "Set a timer for 2 minutes."), latency_ms=50.0, delay=delay)
    runtime = fake_runtime(clock=clock, stt=stt, llm=FakeLlm(delay=delay))
    config = make_config(
        vad={"silence_ms": 480, "pre_roll_ms": 64, "min_speech_ms": 64},
        turn={"speculate_after_ms": 96},
        tts={"min_first_clause_words": 1},
    )
    session = Session("s", runtime, config, clock)
    client = Client(session)
    await start(session)
    await feed(session, clock, np.concatenate([silence(0.2), tone(0.6), silence(0.2)]))
    await reply_held(session)
    spec = session.speculator.current
    assert spec is not None and [t.duration_s for t in spec.history.timers.timers] == [300.0]
    await feed(session, clock, np.concatenate([tone(0.4), silence(0.6)]))
    assert await session.wait_turns(timeout_s=10)
    await session.cancel_turns()
    await client.close()
    assert session.speculator.discarded == 1
    assert [t.duration_s for t in session.history.timers.timers] == [120.0]
    assert [e["text"] for e in client.events if e["type"] == "reply_text"] == ["Timer set for 2 minutes."]


async def test_reset_forgets_the_timers_and_a_closed_session_leaves_no_ringer(
    fake_runtime: RuntimeFactory,
) -> None:
    clock = FakeClock()
    session, _, _ = timer_session(fake_runtime, clock, ("Set a timer for 1 minute.",))
    client = Client(session)
    await start(session)
    await say(session, clock)
    assert session.ringer.running
    assert await session.on_text(json.dumps({"type": "reset"})) is None
    assert session.history.timers.timers == ()
    await session.cancel_turns()
    assert not session.ringer.running
    await asyncio.sleep(0)
    await client.close()
