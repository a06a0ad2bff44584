"""voice bench quality: timers answered as the server answers them, and spoken mode through a Session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config, silence, tone
from voice.bench.quality.measure import as_stt_writes, run_item
from voice.bench.quality.question_set import Item, load_items
from voice.bench.quality.report import heard
from voice.bench.quality.result import SpokenRow, VoiceSummary
from voice.bench.quality.spoken import SpokenItem, by_voice, run_spoken_item, summarize_spoken
from voice.runtime.fakes import FakeLlm, FakeStt
from voice.skills.capabilities import WHAT_I_CAN_DO

SET = Path(__file__).parent.parent / "benchmarks" / "quality_questions.toml"


def test_text_mode_answers_timer_items_from_the_timers_not_the_llm() -> None:
    items = [i for i in load_items(SET) if i.category == "timer"]
    assert len(items) >= 5
    llm = FakeLlm(replies=("I have set it for you.",))
    on = make_config(llm={"skills": True})
    rows = [run_item(llm, on, item) for item in items]
    assert all(r.right for r in rows), [(r.id, r.reply) for r in rows]
    assert {r.by for r in rows} == {"skill"}
    # Without skills the same items reach the LLM, whose reply is judged wrong: the checks can fail.
    off = make_config(llm={"skills": False})
    assert not any(run_item(llm, off, item).right for item in items)


def test_spoken_mode_judges_what_the_loop_heard_and_said(fake_runtime: RuntimeFactory) -> None:
    (item,) = [i for i in load_items(SET) if i.id == "t-cancel"]
    audio = np.concatenate([silence(0.2), tone(0.6)])
    config = make_config(tts={"min_first_clause_words": 1})
    # The loop hears the earlier turn and the question right: the timer set in the first is cancelled.
    heard_right = fake_runtime(
        stt=FakeStt(texts=("Set a timer for five minutes.", "Cancel the timer."), latency_ms=1)
    )
    row = run_spoken_item(heard_right, config, SpokenItem(item, "test", (audio,), audio))
    assert row.transcript == "Cancel the timer." and row.turns == 1
    assert row.reply == "5 minute timer cancelled." and row.right and row.reply_audio_s > 0
    assert row.by == "skill"
    # The STT mishears the earlier turn: no timer was set, so the reply is wrong, and counted so.
    misheard = fake_runtime(stt=FakeStt(texts=("Set the table for five.", "Cancel the timer."), latency_ms=1))
    bad = run_spoken_item(misheard, config, SpokenItem(item, "test", (audio,), audio))
    assert bad.reply == "No timers are running." and not bad.right
    s = summarize_spoken([row, bad])
    assert s.judged.right_pct == 50.0 and s.judged.items == 2 and s.hit_cap == 0
    assert s.by_voice == {
        "test": VoiceSummary(
            items=2,
            right_pct=50.0,
            stt_wer_normalized=0.0,
            asked_again_pct=0.0,
            declined_pct=0.0,
            wrong_pct=50.0,
        )
    }
    assert row.earlier_heard == ("Set a timer for five minutes.",) and not row.asked_again


def test_the_spoken_user_hears_each_reply_out_before_asking_again(fake_runtime: RuntimeFactory) -> None:
    """The next question comes after the reply has played, so the history keeps all of it (speaking sooner
    would talk over it, and the session would keep only the part heard)."""
    (item,) = [i for i in load_items(SET) if i.id == "f-name"]
    audio = np.concatenate([silence(0.2), tone(0.6)])
    reply = "Nice to meet you, Sam. I will remember that. Ask me anything you like."
    llm = FakeLlm(replies=(reply,))
    stt = FakeStt(texts=("I like long walks.", "What do I like?"), latency_ms=1)
    run_spoken_item(fake_runtime(stt=stt, llm=llm), make_config(llm={"skills": False}),
                    SpokenItem(item, "test", (audio,), audio))  # fmt: skip
    said_before = [m.content for m in llm.prompts[-1] if m.role == "assistant"]
    assert said_before == [reply]


def test_an_item_asked_again_is_not_judged_right_and_is_counted_apart(fake_runtime: RuntimeFactory) -> None:
    (item,) = [i for i in load_items(SET) if i.id == "t-cancel"]
    audio = np.concatenate([silence(0.2), tone(0.6)])
    config = make_config(tts={"min_first_clause_words": 1}, stt={"ask_again": True})
    texts = ("Set a timer for five minutes.", "Cancel the timer.")
    # Sure of the earlier turn, unsure of the question (as misheard; an unsure "Cancel the timer." would be
    # taken, [stt] skills_take_unsure): the reply asks again, the timer stays set.
    misheard = (texts[0], "Can seal the timer.")
    unsure = fake_runtime(stt=FakeStt(texts=misheard, avg_logprobs=(-0.1, -0.9), latency_ms=1))
    row = run_spoken_item(unsure, config, SpokenItem(item, "test", (audio,), audio))
    assert row.asked_again and not row.right and row.by == "asked again"
    assert row.reply == config.stt.ask_again_reply and row.stt_avg_logprob == -0.9
    assert "asked to say it again" in row.failed
    sure = fake_runtime(stt=FakeStt(texts=texts, avg_logprobs=(-0.1, -0.2), latency_ms=1))
    right = run_spoken_item(sure, config, SpokenItem(item, "test", (audio,), audio))
    assert right.right and not right.asked_again and right.by == "skill"
    s = summarize_spoken([row, right])
    assert (s.judged.right_pct, s.asked_again_pct, s.right_or_asked_again_pct) == (50.0, 50.0, 100.0)
    assert s.by_voice["test"].asked_again_pct == 50.0
    # Unsure of the earlier turn: the reply asks again, the bench's user goes on to the question, which then
    # finds no timer. Wrong, and the row says why.
    earlier_unsure = fake_runtime(stt=FakeStt(texts=("Set a tamer for fife.", texts[1]), avg_logprobs=(-0.9, -0.1),
                                              latency_ms=1))  # fmt: skip
    lost = run_spoken_item(earlier_unsure, config, SpokenItem(item, "test", (audio,), audio))
    assert not lost.right and not lost.asked_again and lost.earlier_asked_again == (True,)
    assert "an earlier turn was asked again" in lost.failed and lost.reply == "No timers are running."
    assert SpokenRow.from_json(lost.to_json()) == lost and "earlier_asked_again" not in right.to_json()
    assert heard(lost) == "(earlier, asked again: Set a tamer for fife.) Cancel the timer."
    assert heard(right) == "(earlier: Set a timer for five minutes.) Cancel the timer."


def test_by_voice_groups_each_voice_each_engine_and_pools_the_recordings() -> None:
    def row(voice: str, question: str, heard: str, right: bool) -> SpokenRow:
        return SpokenRow("i", "knowledge", voice, question, heard, None, 1, ("ok",), "", 1, "llm", 1.0, right,
                         False, False, False, False, ())  # fmt: skip

    rows = [
        row("espeak-ng:en-us", "What is 12 plus 30?", "What is 12 plus 30?", True),
        row("espeak-ng:en-gb+f3", "Cancel the timer.", "Council the timer.", False),
        row("espeak-ng:en-gb+f3", "What time is it?", "What time is it?", True),
        row("recording:a.wav", "What time is it?", "what time is it", True),
        row("recording:b.wav", "Play the Beatles.", "Play the Beetles.", False),
        row("flite:slt", "Lock my front door.", "Lock my front door.", True),
    ]
    # the four outcomes' other three shares: no reply asked again or declined, so the rest is wrong
    all_right = {"asked_again_pct": 0.0, "declined_pct": 0.0, "wrong_pct": 0.0}
    half = {"asked_again_pct": 0.0, "declined_pct": 0.0, "wrong_pct": 50.0}
    assert {v: s.to_json() for v, s in by_voice(rows).items()} == {
        "espeak-ng:en-us": {"items": 1, "right_pct": 100.0, "stt_wer_normalized": 0.0, **all_right},
        "espeak-ng:en-gb+f3": {"items": 2, "right_pct": 50.0, "stt_wer_normalized": 0.143, **half},
        "recordings": {"items": 2, "right_pct": 50.0, "stt_wer_normalized": 0.143, **half},
        "flite:slt": {"items": 1, "right_pct": 100.0, "stt_wer_normalized": 0.0, **all_right},
        # two espeak-ng voices: their items together (1 wrong word of 12: "12" is scored as its two digits, and
        # Whisper's normalizer writes "plus 30" as "+30"); one flite voice: no such line
        "espeak-ng (all)": {
            "items": 3,
            "right_pct": 66.7,
            "stt_wer_normalized": 0.083,
            "asked_again_pct": 0.0,
            "declined_pct": 0.0,
            "wrong_pct": 33.3,
        },
    }


def test_as_transcribed_writes_each_question_as_the_stt_often_does() -> None:
    (item,) = [i for i in load_items(SET) if i.id == "f-color"]
    spelt = as_stt_writes(item)
    assert spelt.question == "what is my favourite colour." and spelt.previous == (
        "my favourite colour is green.",
    )
    assert (spelt.id, spelt.any_of) == (item.id, item.any_of)  # the checks stay


def test_as_transcribed_is_for_text_mode_only(capsys: pytest.CaptureFixture[str]) -> None:
    from voice.cli import main

    assert main(["bench", "quality", "--spoken", "--as-transcribed"]) == 2
    assert "--as-transcribed: only for text mode" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("question", "reply", "said"),
    [
        # The user's question said back: the server asks again (voice.conversation.echo.echoes).
        ("who composed the four seasons", "Composed the four seasons.", "ask again"),
        # A statement the user typed, said back: a read-back (voice.conversation.echo.tells).
        ("the plumber is coming on thursday", "The plumber is coming on Thursday.", "The plumber is coming on Thursday."),  # noqa: E501
        # A first sentence that claims what the system prompt denies: the server says what it can do.
        ("Turn on the lights.", "I'll turn on the lights for you. Done!", "what I can do"),
        # A later sentence that claims it: the reply ends before it.
        ("Can you help me?", "Of course. I can play music for you.", "Of course."),
        # Nothing to catch: the reply as written.
        ("What is the capital of France?", "The capital of France is Paris.", "The capital of France is Paris."),
    ],
)
def test_text_mode_judges_the_reply_the_servers_checks_let_through(question: str, reply: str, said: str) -> None:
    config = make_config(llm={"skills": False})
    expected = {"ask again": config.stt.ask_again_reply, "what I can do": WHAT_I_CAN_DO}.get(said, said)
    item = Item(id="x", category="test", question=question, any_of=("paris",))
    row = run_item(FakeLlm(replies=(reply,)), config, item)
    assert row.reply == expected
    assert row.asked_again is (said == "ask again")
